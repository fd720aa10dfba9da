//! Finds libmoonshine (from the PyPI `moonshine-voice` 0.1.0 wheel, unpacked by `cargo xtask
//! setup` beside its ONNX Runtime), copies both beside the build and links libmoonshine with an
//! `$ORIGIN`-relative rpath, so tests and binaries run without `LD_LIBRARY_PATH`, whoever runs
//! them. libmoonshine finds its ONNX Runtime through its own `$ORIGIN` rpath, so the two stay in
//! one folder. The English model (`<cache>/models/moonshine-tiny-en/`), when the setup fetched
//! it, is copied to `pcp-lib/models/`, where pcp-speech's model search looks beside the program:
//! a user who cannot enter the setup user's cache still finds it.
//!
//! Search order: `$PCP_MOONSHINE_LIB_DIR`, then `<cache>/moonshine-voice-0.1.0/` where `<cache>`
//! is `$PCP_CACHE_DIR`, else `$XDG_CACHE_HOME/pcp`, else `$HOME/.cache/pcp`.
//!
//! The copies go to `<target>/<profile>/pcp-lib/` (`../stage.rs`, shared with pcp-speech's build
//! script, which tells its own dependents about the folder: one folder, one rpath, for every
//! recognizer). Because Cargo.toml declares `links = "moonshine"`, the `cargo:libdir=` line below
//! reaches a direct dependent's build script as `DEP_MOONSHINE_LIBDIR`.

use std::env;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::exit;

#[path = "../stage.rs"]
mod stage;
use stage::RPATH;

/// The release the project pins (the PyPI wheel `moonshine-voice==0.1.0`).
const DIR_NAME: &str = "moonshine-voice-0.1.0";
const LIB_FILE: &str = "libmoonshine.so";
/// The English model's folder under `<cache>/models/` (and under `pcp-lib/models/`).
const MODEL_DIR: &str = "moonshine-tiny-en";

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
    println!("cargo:rerun-if-changed=../stage.rs");
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
    let staged = match stage::staged_folder().and_then(|folder| stage_all(dir, &folder)) {
        Ok(staged) => staged,
        Err(e) => {
            eprintln!("error: pcp-moonshine cannot copy {LIB_FILE} beside the build: {e}");
            exit(1);
        }
    };
    println!("cargo:rustc-link-search=native={}", staged.display());
    println!("cargo:rustc-link-lib=dylib=moonshine");
    // This package's own tests; the linker also finds libmoonshine's ONNX Runtime there.
    println!("cargo:rustc-link-arg=-Wl,-rpath,{RPATH}");
    println!("cargo:rustc-link-arg=-Wl,-rpath-link,{}", staged.display());
    // For a direct dependent: DEP_MOONSHINE_LIBDIR.
    println!("cargo:libdir={}", staged.display());
}

/// Copies libmoonshine, its ONNX Runtime (`libonnxruntime-*.so.*`) and, if the setup fetched it,
/// the English model into `folder`: `folder`.
fn stage_all(dir: &Path, folder: &Path) -> Result<PathBuf, String> {
    let mut runtime = false;
    for entry in std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))? {
        let path = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if name.starts_with("libonnxruntime") && name.contains(".so") {
            println!("cargo:rerun-if-changed={}", path.display());
            stage::stage(&path, folder, 0o755)?;
            runtime = true;
        }
    }
    if !runtime {
        return Err(format!(
            "no ONNX Runtime (libonnxruntime-*.so.*) beside {}",
            dir.join(LIB_FILE).display()
        ));
    }
    stage::stage(&dir.join(LIB_FILE), folder, 0o755)?;
    let Some(model) = model_dir() else {
        return Ok(folder.to_path_buf());
    };
    println!("cargo:rerun-if-changed={}", model.display());
    let to = folder.join("models").join(MODEL_DIR);
    for entry in std::fs::read_dir(&model).map_err(|e| format!("{}: {e}", model.display()))? {
        let path = entry
            .map_err(|e| format!("{}: {e}", model.display()))?
            .path();
        if path.is_file() {
            println!("cargo:rerun-if-changed={}", path.display());
            stage::stage(&path, &to, 0o644)?;
        }
    }
    std::fs::set_permissions(
        folder.join("models"),
        std::fs::Permissions::from_mode(0o755),
    )
    .map_err(|e| format!("cannot open {}/models to every user: {e}", folder.display()))?;
    Ok(folder.to_path_buf())
}

/// The English model the setup unpacked, if it did (`<cache>/models/moonshine-tiny-en/`).
fn model_dir() -> Option<PathBuf> {
    let dir = cache_dir()?.join("models").join(MODEL_DIR);
    dir.join("encoder_model.ort").is_file().then_some(dir)
}
