//! Fuzz target `multitouch`: see pcp_fuzz_checks::multitouch for what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| pcp_fuzz_checks::multitouch::check(data));
