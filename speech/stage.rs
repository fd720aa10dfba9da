//! Copies the recognizers' native libraries (and the English model) from the setup cache into the
//! build's own profile folder, `<target>/<profile>/pcp-lib/`, which the binaries find through an
//! `$ORIGIN`-relative rpath ([`RPATH`]: binaries sit in the profile folder, tests in `deps/`,
//! examples in `examples/`). Shared by the build scripts of pcp-speech (libvosk) and
//! pcp-moonshine (libmoonshine, its ONNX Runtime beside it as its own `$ORIGIN` rpath expects,
//! and the model), so every recognizer lands in one folder and dependents get one rpath.
//!
//! An rpath into the setup cache would tie the binaries to whoever ran the setup: the cache is in
//! that user's home, which another user (the polkit agent runs as the session's user) may not
//! enter. The copies are the only files written outside `OUT_DIR`, because a dependent cannot
//! know a build script's `OUT_DIR`. Each is replaced by a rename, never rewritten in place under
//! a running binary. `cargo xtask package` replaces the rpath with the package's own folder.

use std::env;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The folder of the profile folder the libraries are copied into.
pub const STAGED: &str = "pcp-lib";
/// Where the built binaries look for them: beside them (the profile folder's own binaries) or one
/// folder up (`deps/`, `examples/`).
pub const RPATH: &str = "$ORIGIN/pcp-lib:$ORIGIN/../pcp-lib";

/// `<target>/<profile>/pcp-lib/`, from this build script's `OUT_DIR`.
pub fn staged_folder() -> Result<PathBuf, String> {
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
    Ok(profile.join(STAGED))
}

/// Copies `file` into `folder` (readable by everyone, as the binaries beside it are; `mode` is
/// its permission bits) unless the same bytes are there already.
pub fn stage(file: &Path, folder: &Path, mode: u32) -> Result<(), String> {
    let name = file
        .file_name()
        .ok_or_else(|| format!("{} has no file name", file.display()))?;
    let to = folder.join(name);
    let bytes = std::fs::read(file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    if std::fs::read(&to).is_ok_and(|old| old == bytes) {
        return Ok(());
    }
    std::fs::create_dir_all(folder)
        .map_err(|e| format!("cannot create {}: {e}", folder.display()))?;
    // Several builds (profiles, feature sets) may run this at once: each writes its own file
    // and renames it over the copy, which a running binary keeps mapped.
    let part = folder.join(format!(
        ".{}.{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    std::fs::write(&part, &bytes).map_err(|e| format!("cannot write {}: {e}", part.display()))?;
    std::fs::set_permissions(&part, std::fs::Permissions::from_mode(mode))
        .and_then(|()| std::fs::rename(&part, &to))
        .map_err(|e| format!("cannot put {} in place: {e}", to.display()))?;
    // The folders on the way must let every user in, whatever the umask of the build.
    std::fs::set_permissions(folder, std::fs::Permissions::from_mode(0o755))
        .map_err(|e| format!("cannot open {} to every user: {e}", folder.display()))
}
