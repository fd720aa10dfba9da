//! Fuzz target `replay`: see pcp_fuzz_checks::replay for what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| pcp_fuzz_checks::replay::check(data));
