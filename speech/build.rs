//! Finds libvosk (from the PyPI `vosk` 0.3.45 wheel, unpacked by `cargo xtask setup`), copies it
//! beside the build and links it with an rpath, so tests and binaries run without
//! `LD_LIBRARY_PATH`, whoever runs them.
//!
//! Search order: `$PCP_VOSK_LIB_DIR`, then `<cache>/vosk-0.3.45/` where `<cache>` is
//! `$PCP_CACHE_DIR`, else `$XDG_CACHE_HOME/pcp`, else `$HOME/.cache/pcp`.
//!
//! The library is copied into the build's own profile folder, `<target>/<profile>/pcp-lib/`, and
//! the binaries find it there through an `$ORIGIN`-relative rpath (see `stage.rs`, shared with
//! pcp-moonshine's build script, which puts libmoonshine and its ONNX Runtime in the same folder
//! when the feature `moonshine` is on). `cargo xtask package` replaces the rpath with the
//! package's own folder.
//!
//! `cargo:rustc-link-arg` only reaches this package's own targets. Because Cargo.toml declares
//! `links = "vosk"`, the `cargo:rpath=` and `cargo:libdir=` lines below reach the build scripts
//! of crates that depend on this one directly as `DEP_VOSK_RPATH` and `DEP_VOSK_LIBDIR` (the one
//! folder of every recognizer's libraries); they add the same rpath to their binaries, and the
//! folder as `-rpath-link` so the linker finds what the libraries need (libmoonshine's ONNX
//! Runtime).

use std::env;
use std::path::PathBuf;
use std::process::exit;

#[path = "stage.rs"]
mod stage;
use stage::RPATH;

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
    println!("cargo:rerun-if-changed=stage.rs");
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
    let staged = stage::staged_folder()
        .and_then(|folder| stage::stage(&dir.join(LIB_FILE), &folder, 0o755).map(|()| folder));
    let staged = match staged {
        Ok(staged) => staged,
        Err(e) => {
            eprintln!("error: pcp-speech cannot copy {LIB_FILE} beside the build: {e}");
            exit(1);
        }
    };
    // Linked against the copy the binaries will load.
    println!("cargo:rustc-link-search=native={}", staged.display());
    println!("cargo:rustc-link-lib=dylib=vosk");
    // This package's own tests, benches and examples; the linker finds libmoonshine's ONNX
    // Runtime in the same folder (pcp-moonshine staged it there before this script ran).
    println!("cargo:rustc-link-arg=-Wl,-rpath,{RPATH}");
    println!("cargo:rustc-link-arg=-Wl,-rpath-link,{}", staged.display());
    // For dependents: DEP_VOSK_RPATH, and DEP_VOSK_LIBDIR (the folder of the copies).
    println!("cargo:rpath={RPATH}");
    println!("cargo:libdir={}", staged.display());
}
