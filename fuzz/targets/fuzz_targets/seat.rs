//! Fuzz target `seat`: see pcp_fuzz_checks::seat for what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| pcp_fuzz_checks::seat::check(data));
