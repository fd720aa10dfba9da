//! Finds libvosk (from the PyPI `vosk` 0.3.45 wheel, unpacked by `cargo xtask setup`) and links it
//! with an rpath, so tests and binaries run without `LD_LIBRARY_PATH`.
//!
//! Search order: `$PCP_VOSK_LIB_DIR`, then `<cache>/vosk-0.3.45/` where `<cache>` is
//! `$PCP_CACHE_DIR`, else `$XDG_CACHE_HOME/pcp`, else `$HOME/.cache/pcp`.
//!
//! With the feature `moonshine`, libmoonshine (found by pcp-moonshine's build script) gets the
//! same treatment, handed on as `DEP_VOSK_MOONSHINE_LIBDIR`.
//!
//! `cargo:rustc-link-arg` only reaches this package's own targets. Because Cargo.toml declares
//! `links = "vosk"`, the `cargo:libdir=` line below reaches the build scripts of crates that
//! depend on this one directly as `DEP_VOSK_LIBDIR`; they add the same rpath to their binaries.

use std::env;
use std::path::PathBuf;
use std::process::exit;

/// The libvosk release the project pins (the PyPI wheel `vosk==0.3.45`).
const VOSK_DIR_NAME: &str = "vosk-0.3.45";
const LIB_FILE: &str = "libvosk.so";

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
        "PCP_VOSK_LIB_DIR",
        "PCP_CACHE_DIR",
        "XDG_CACHE_HOME",
        "HOME",
    ] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=csrc/alsa_log.c");
    // Without the recognizer (feature `vosk` off) nothing native is built or linked.
    if env::var_os("CARGO_FEATURE_VOSK").is_none() {
        return;
    }
    // ALSA's variadic error handler (see src/alsa_log.rs); links against libasound like cpal.
    cc::Build::new()
        .file("csrc/alsa_log.c")
        .warnings(true)
        .compile("pcp_speech_alsa_log");

    let candidates: Vec<PathBuf> = env::var_os("PCP_VOSK_LIB_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .into_iter()
        .chain(cache_dir().map(|c| c.join(VOSK_DIR_NAME)))
        .collect();

    let Some(dir) = candidates.iter().find(|d| d.join(LIB_FILE).is_file()) else {
        let looked: Vec<String> = candidates
            .iter()
            .map(|d| d.join(LIB_FILE).display().to_string())
            .collect();
        eprintln!(
            "error: pcp-speech needs {LIB_FILE} (vosk 0.3.45) and did not find it at: {}\n\
             run `cargo xtask setup` to fetch and unpack it into the project cache \
             (or set PCP_VOSK_LIB_DIR to the directory holding {LIB_FILE})",
            if looked.is_empty() {
                "(no cache dir: HOME is unset)".to_string()
            } else {
                looked.join(", ")
            }
        );
        exit(1);
    };

    // Tell Cargo to rebuild if the library appears, moves or is replaced.
    println!("cargo:rerun-if-changed={}", dir.join(LIB_FILE).display());
    println!("cargo:rustc-link-search=native={}", dir.display());
    println!("cargo:rustc-link-lib=dylib=vosk");
    // This package's own tests, benches and examples.
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir.display());
    // For dependents: DEP_VOSK_LIBDIR.
    println!("cargo:libdir={}", dir.display());
    moonshine();
}

/// With the feature `moonshine`: libmoonshine's folder (from pcp-moonshine's build script, as
/// `DEP_MOONSHINE_LIBDIR`) as an rpath of this package's own tests, benches and examples, and
/// handed on to dependents as `DEP_VOSK_MOONSHINE_LIBDIR`.
fn moonshine() {
    println!("cargo:rerun-if-env-changed=DEP_MOONSHINE_LIBDIR");
    if env::var_os("CARGO_FEATURE_MOONSHINE").is_none() {
        return;
    }
    let Some(dir) = env::var_os("DEP_MOONSHINE_LIBDIR") else {
        return;
    };
    let dir = PathBuf::from(dir);
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir.display());
    // The linker reads libmoonshine's own needs (its ONNX Runtime) from the same folder.
    println!("cargo:rustc-link-arg=-Wl,-rpath-link,{}", dir.display());
    println!("cargo:moonshine_libdir={}", dir.display());
}
