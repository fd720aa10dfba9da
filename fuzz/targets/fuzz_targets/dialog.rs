//! Fuzz target `dialog`: see pcp_fuzz_checks::dialog for what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| pcp_fuzz_checks::dialog::check(data));
