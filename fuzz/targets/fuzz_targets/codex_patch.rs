//! Fuzz target `codex_patch`: see pcp_fuzz_checks::codex_patch for what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| pcp_fuzz_checks::codex_patch::check(data));
