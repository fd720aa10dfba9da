//! Fuzz target `strict_json`: see pcp_fuzz_checks::json for what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| pcp_fuzz_checks::json::check(data));
