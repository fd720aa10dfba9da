//! `pcpctl` itself never links libvosk; its `submit` tests do, through the reference compositor
//! they serve from, and so does its `hook` bench. This gives the test and bench binaries — and
//! only them — an rpath to the folder where pcp-speech's build script finds libvosk
//! (`$PCP_VOSK_LIB_DIR`, else the setup cache's `vosk-0.3.45/`), so they run without
//! `LD_LIBRARY_PATH`.

use std::env;
use std::path::PathBuf;

fn main() {
    for var in [
        "PCP_VOSK_LIB_DIR",
        "PCP_CACHE_DIR",
        "XDG_CACHE_HOME",
        "HOME",
    ] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    let non_empty = |name: &str| {
        env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let cache = non_empty("PCP_CACHE_DIR")
        .or_else(|| non_empty("XDG_CACHE_HOME").map(|d| d.join("pcp")))
        .or_else(|| non_empty("HOME").map(|d| d.join(".cache").join("pcp")));
    let found = non_empty("PCP_VOSK_LIB_DIR")
        .into_iter()
        .chain(cache.map(|c| c.join("vosk-0.3.45")))
        .find(|d| d.join("libvosk.so").is_file());
    if let Some(dir) = found {
        println!("cargo:rustc-link-arg-tests=-Wl,-rpath,{}", dir.display());
        // `-tests` does not reach `[[bench]]` targets: without this the bench cannot start.
        println!("cargo:rustc-link-arg-benches=-Wl,-rpath,{}", dir.display());
    }
}
