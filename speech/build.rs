//! Finds libvosk (from the PyPI `vosk` 0.3.45 wheel, unpacked by `cargo xtask setup`) and links it
//! so that tests and binaries run without `LD_LIBRARY_PATH`, whoever runs them.
//!
//! Search order: `$PCP_VOSK_LIB_DIR`, then `<cache>/vosk-0.3.45/` where `<cache>` is
//! `$PCP_CACHE_DIR`, else `$XDG_CACHE_HOME/pcp`, else `$HOME/.cache/pcp`.
//!
//! The library is copied into the build's own profile folder, `<target>/<profile>/pcp-lib/`, and
//! the binaries find it there through an `$ORIGIN`-relative rpath ([`RPATH`]: binaries sit in the
//! profile folder, tests in `deps/`, examples in `examples/`). An rpath into the setup cache would
//! tie them to whoever ran the setup: the cache is in that user's home, which another user (the
//! polkit agent runs as the session's user) may not enter. The copy is the one file written
//! outside `OUT_DIR`, because a dependent cannot know this script's `OUT_DIR`; it is replaced
//! by a rename, never rewritten in place under a running binary. `cargo xtask package` replaces
//! the rpath with the package's own folder.
//!
//! `cargo:rustc-link-arg` only reaches this package's own targets. Because Cargo.toml declares
//! `links = "vosk"`, the `cargo:rpath=` and `cargo:libdir=` lines below reach the build scripts
//! of crates that depend on this one directly as `DEP_VOSK_RPATH` and `DEP_VOSK_LIBDIR`; they
//! add the same rpath to their binaries.

use std::env;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::exit;

/// The libvosk release the project pins (the PyPI wheel `vosk==0.3.45`).
const VOSK_DIR_NAME: &str = "vosk-0.3.45";
const LIB_FILE: &str = "libvosk.so";
/// The folder of the profile folder the library is copied into.
const STAGED: &str = "pcp-lib";
/// Where the built binaries look for it: beside them (the profile folder's own binaries) or one
/// folder up (`deps/`, `examples/`).
const RPATH: &str = "$ORIGIN/pcp-lib:$ORIGIN/../pcp-lib";

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
    let staged = match stage(&dir.join(LIB_FILE)) {
        Ok(staged) => staged,
        Err(e) => {
            eprintln!("error: pcp-speech cannot copy {LIB_FILE} beside the build: {e}");
            exit(1);
        }
    };
    // This package's own tests, benches and examples.
    println!("cargo:rustc-link-arg=-Wl,-rpath,{RPATH}");
    // For dependents: DEP_VOSK_RPATH, and DEP_VOSK_LIBDIR (the folder of the copy).
    println!("cargo:rpath={RPATH}");
    println!("cargo:libdir={}", staged.display());
}

/// Copies `lib` into `<target>/<profile>/pcp-lib/` (readable by everyone, as the binaries
/// beside it are) unless the same bytes are there already: the folder of the copy.
fn stage(lib: &Path) -> Result<PathBuf, String> {
    let out = env::var_os("OUT_DIR").ok_or("OUT_DIR is not set")?;
    // OUT_DIR is <target>/<profile>/build/<package>-<hash>/out.
    let out = Path::new(&out);
    let build = out
        .ancestors()
        .nth(2)
        .filter(|b| b.file_name() == Some("build".as_ref()));
    let profile = build
        .and_then(Path::parent)
        .ok_or_else(|| format!("OUT_DIR {} is not inside a profile folder", out.display()))?;
    let folder = profile.join(STAGED);
    let to = folder.join(lib.file_name().ok_or("the library has no file name")?);
    let bytes = std::fs::read(lib).map_err(|e| format!("cannot read {}: {e}", lib.display()))?;
    if std::fs::read(&to).is_ok_and(|old| old == bytes) {
        return Ok(folder);
    }
    std::fs::create_dir_all(&folder)
        .map_err(|e| format!("cannot create {}: {e}", folder.display()))?;
    // Several builds (profiles, feature sets) may run this at once: each writes its own file
    // and renames it over the copy, which a running binary keeps mapped.
    let part = folder.join(format!(".{LIB_FILE}.{}", std::process::id()));
    std::fs::write(&part, &bytes).map_err(|e| format!("cannot write {}: {e}", part.display()))?;
    std::fs::set_permissions(&part, std::fs::Permissions::from_mode(0o755))
        .and_then(|()| std::fs::rename(&part, &to))
        .map_err(|e| format!("cannot put {} in place: {e}", to.display()))?;
    Ok(folder)
}
