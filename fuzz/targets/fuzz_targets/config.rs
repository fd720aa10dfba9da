//! Fuzz target `config`: see pcp_fuzz_checks::config for what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| pcp_fuzz_checks::config::check(data));
