//! The end-to-end tests of pcp-confirm: a real compositor with virtual outputs and real Wayland
//! clients. The harness is `tests/harness/mod.rs` (included by every test and bench, so that
//! `pcp-compositor`'s `test-harness` feature, the seat-input injection path, is enabled only as a
//! dev-dependency: never in a normal build); the tests are `tests/*.rs` and the benchmarks
//! `benches/e2e.rs`.
