//! Fuzz target `shell_risk`: see pcp_fuzz_checks::shell_risk for what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| pcp_fuzz_checks::shell_risk::check(data));
