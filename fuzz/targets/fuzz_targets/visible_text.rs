//! Fuzz target `visible_text`: see pcp_fuzz_checks::visible for what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| pcp_fuzz_checks::visible::check(data));
