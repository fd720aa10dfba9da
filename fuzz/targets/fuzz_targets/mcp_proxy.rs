//! Fuzz target `mcp_proxy`: see pcp_fuzz_checks::mcp_proxy for what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| pcp_fuzz_checks::mcp_proxy::check(data));
