//! Finds libmoonshine (from the PyPI `moonshine-voice` 0.1.0 wheel, unpacked by `cargo xtask
//! setup` beside its ONNX Runtime) and links it with an rpath, so tests and binaries run without
//! `LD_LIBRARY_PATH`. libmoonshine finds its ONNX Runtime through its own `$ORIGIN` rpath.
//!
//! Search order: `$PCP_MOONSHINE_LIB_DIR`, then `<cache>/moonshine-voice-0.1.0/` where `<cache>`
//! is `$PCP_CACHE_DIR`, else `$XDG_CACHE_HOME/pcp`, else `$HOME/.cache/pcp`.
//!
//! `cargo:rustc-link-arg` only reaches this package's own targets. Because Cargo.toml declares
//! `links = "moonshine"`, the `cargo:libdir=` line below reaches the build scripts of crates that
//! depend on this one directly as `DEP_MOONSHINE_LIBDIR` (pcp-speech hands it on).

use std::env;
use std::path::PathBuf;
use std::process::exit;

/// The release the project pins (the PyPI wheel `moonshine-voice==0.1.0`).
const DIR_NAME: &str = "moonshine-voice-0.1.0";
const LIB_FILE: &str = "libmoonshine.so";

fn cache_dir() -> Option<PathBuf> {
    let non_empty = |name: &str| {
        env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    non_empty("PCP_CACHE_DIR")
        .or_else(|| non_empty("XDG_CACHE_HOME").map(|d| d.join("pcp")))
        .or_else(|| non_empty("HOME").map(|d| d.join(".cache").join("pcp")))
}

fn main() {
    for var in [
        "PCP_MOONSHINE_LIB_DIR",
        "PCP_CACHE_DIR",
        "XDG_CACHE_HOME",
        "HOME",
    ] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    println!("cargo:rerun-if-changed=build.rs");
    let candidates: Vec<PathBuf> = env::var_os("PCP_MOONSHINE_LIB_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .into_iter()
        .chain(cache_dir().map(|c| c.join(DIR_NAME)))
        .collect();
    let Some(dir) = candidates.iter().find(|d| d.join(LIB_FILE).is_file()) else {
        let looked: Vec<String> = candidates
            .iter()
            .map(|d| d.join(LIB_FILE).display().to_string())
            .collect();
        eprintln!(
            "error: pcp-moonshine needs {LIB_FILE} (moonshine-voice 0.1.0) and did not find it at: \
             {}\nrun `cargo xtask setup` to fetch and unpack it into the project cache (or set \
             PCP_MOONSHINE_LIB_DIR to the directory holding {LIB_FILE} and its ONNX Runtime)",
            if looked.is_empty() {
                "(no cache dir: HOME is unset)".to_string()
            } else {
                looked.join(", ")
            }
        );
        exit(1);
    };
    println!("cargo:rerun-if-changed={}", dir.join(LIB_FILE).display());
    println!("cargo:rustc-link-search=native={}", dir.display());
    println!("cargo:rustc-link-lib=dylib=moonshine");
    // This package's own tests; the linker also finds libmoonshine's ONNX Runtime there.
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir.display());
    println!("cargo:rustc-link-arg=-Wl,-rpath-link,{}", dir.display());
    // For dependents: DEP_MOONSHINE_LIBDIR.
    println!("cargo:libdir={}", dir.display());
}
