//! Fuzz target `params`: see pcp_fuzz_checks::params for what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| pcp_fuzz_checks::params::check(data));
