//! Fuzz target `phrases`: see pcp_fuzz_checks::phrases for what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| pcp_fuzz_checks::phrases::check(data));
