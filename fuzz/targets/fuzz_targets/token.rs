//! Fuzz target `token`: see pcp_fuzz_checks::token for what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| pcp_fuzz_checks::token::check(data));
