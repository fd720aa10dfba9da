//! Fuzz target `inline_code`: see pcp_fuzz_checks::inline_code for what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| pcp_fuzz_checks::inline_code::check(data));
