//! Which files the gate may trust, as ssh decides for its own: a config file, a manifest or a
//! state file is used only when it, and every folder above it, is owned by the user running the
//! gate or by root and cannot be written by anyone else. A folder that others may write but
//! that has the sticky bit (`/tmp`) is accepted: nobody else can rename or replace what is in it.
//! A folder the gate keeps secrets in is stricter: its user's own and shared with nobody, and
//! narrowed only when pcp made it or it is the default state folder, never taken over.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Who the gate trusts besides root: the effective user it runs as.
pub fn current_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Whether [`TrustRules::secret_folder`] may narrow a folder others can look into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Narrow {
    /// pcp made the folder, or it is the default folder in the user's own state home.
    Allowed,
    /// Someone named it: it is checked, never changed.
    Never,
}

/// Why a file or folder is not trusted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {reason}", path.display())]
pub struct Untrusted {
    /// The file or folder that failed the check (a folder above the file when it was one).
    pub path: PathBuf,
    pub reason: String,
}

/// What is checked: who may own the file and which of its mode bits nobody else may have.
#[derive(Debug, Clone, Copy)]
pub struct TrustRules {
    /// The user whose files are trusted (besides root's).
    pub uid: u32,
}

impl Default for TrustRules {
    fn default() -> Self {
        TrustRules { uid: current_uid() }
    }
}

impl TrustRules {
    /// Checks a file the gate is about to read, and every folder above it. Returns the path
    /// with symbolic links resolved: read that one, it is the one that was checked.
    pub fn check_file(&self, path: &Path) -> Result<PathBuf, Untrusted> {
        let real = resolve(path)?;
        let meta = metadata(&real)?;
        if !meta.is_file() {
            return Err(untrusted(&real, "it is not a regular file".into()));
        }
        self.check_entry(&real, &meta, false)?;
        self.check_ancestors(&real)?;
        Ok(real)
    }

    /// Checks a folder the gate reads files from, and every folder above it.
    pub fn check_dir(&self, path: &Path) -> Result<PathBuf, Untrusted> {
        let real = resolve(path)?;
        let meta = metadata(&real)?;
        if !meta.is_dir() {
            return Err(untrusted(&real, "it is not a folder".into()));
        }
        self.check_entry(&real, &meta, true)?;
        self.check_ancestors(&real)?;
        Ok(real)
    }

    /// Checks a secret the gate keeps (the state database, the token key): it must be the
    /// user's own and nobody else may read or write it. Not fixed here: whoever could read it
    /// may already have (a token key read by another can mint approvals).
    pub fn check_secret(&self, path: &Path) -> Result<(), Untrusted> {
        let meta = metadata(path)?;
        self.check_own(path, &meta)?;
        let mode = meta.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            return Err(untrusted(
                path,
                format!(
                    "mode {mode:04o} lets {} read or write it; it must be readable and writable \
                     by its owner only (mode 0600)",
                    who_may(mode, 0o077)
                ),
            ));
        }
        Ok(())
    }

    /// Makes a file of the user's that sits beside secrets (SQLite's `-wal` and `-shm` files)
    /// private: `mode` (0600) when it is wider. Refused when someone else owns it. Never for a
    /// folder: [`TrustRules::secret_folder`] decides those.
    pub fn make_private(&self, path: &Path, mode: u32) -> Result<(), Untrusted> {
        let meta = metadata(path)?;
        if meta.is_dir() {
            return Err(untrusted(path, "it is a folder, not a file".into()));
        }
        self.check_own(path, &meta)?;
        let current = meta.permissions().mode() & 0o777;
        if current & 0o077 != 0 {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).map_err(|e| {
                untrusted(
                    path,
                    format!("mode {current:04o} lets others in and cannot be changed: {e}"),
                )
            })?;
            tracing::info!(
                "{}: mode {current:04o} narrowed to {mode:04o}",
                path.display()
            );
        }
        Ok(())
    }

    /// Checks a folder the gate keeps secrets in (the state folder, the token key's): it must
    /// be the user's own and nobody else may write in it. A shared folder (`/tmp`: sticky, or
    /// writable by its group or others) or someone else's is refused, naming it, and never
    /// changed: pcp must not take over a folder others use. One others may only read or enter
    /// is narrowed to 0700 when `narrow` says pcp may (it made the folder, or it is the default
    /// folder in the user's own state home); else it is left as it is (the files in it are
    /// 0600 and checked on their own).
    pub fn secret_folder(&self, dir: &Path, narrow: Narrow) -> Result<(), Untrusted> {
        let meta = metadata(dir)?;
        if !meta.is_dir() {
            return Err(untrusted(dir, "it is not a folder".into()));
        }
        let owner = meta.uid();
        if owner != self.uid {
            let who = |uid: u32| match user_name(uid) {
                Some(name) => format!("{name} (uid {uid})"),
                None => format!("uid {uid}"),
            };
            let run_as = user_name(owner).unwrap_or_else(|| format!("uid {owner}"));
            return Err(untrusted(
                dir,
                format!(
                    "it is owned by {}, not by the user running pcp, {}: pcp keeps its state \
                     only in folders of the user it runs as. Run this as {run_as}, or name a \
                     folder of your own",
                    who(owner),
                    who(self.uid),
                ),
            ));
        }
        let mode = meta.permissions().mode() & 0o7777;
        if mode & 0o1000 != 0 || mode & 0o022 != 0 {
            let how = if mode & 0o022 != 0 {
                format!("{} may write in it", who_may(mode, 0o022))
            } else {
                "it has the sticky bit, as folders others share do".to_string()
            };
            return Err(untrusted(
                dir,
                format!(
                    "it is a shared folder (mode {mode:04o}: {how}); pcp keeps its state and \
                     key only in a folder of their own and never changes a shared one: name a \
                     file in a folder only you can write (mkdir -m 700 DIR)"
                ),
            ));
        }
        if mode & 0o077 == 0 {
            return Ok(());
        }
        if narrow == Narrow::Never {
            tracing::info!(
                "{}: mode {mode:04o} lets others look in; left as it is (pcp narrows only a \
                 folder it made or the default one), the files in it are private",
                dir.display()
            );
            return Ok(());
        }
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).map_err(|e| {
            untrusted(
                dir,
                format!("mode {mode:04o} lets others in and cannot be changed: {e}"),
            )
        })?;
        tracing::info!("{}: mode {mode:04o} narrowed to 0700", dir.display());
        Ok(())
    }

    /// The user's own: not even root's will do for a secret the gate writes.
    fn check_own(&self, path: &Path, meta: &std::fs::Metadata) -> Result<(), Untrusted> {
        let owner = meta.uid();
        if owner != self.uid {
            return Err(untrusted(
                path,
                format!(
                    "it is owned by uid {owner}; it must be owned by the user running pcp \
                     (uid {})",
                    self.uid
                ),
            ));
        }
        Ok(())
    }

    fn check_ancestors(&self, real: &Path) -> Result<(), Untrusted> {
        for folder in real.ancestors().skip(1) {
            let meta = metadata(folder)?;
            self.check_entry(folder, &meta, true)?;
        }
        Ok(())
    }

    fn check_owner(&self, path: &Path, meta: &std::fs::Metadata) -> Result<(), Untrusted> {
        let owner = meta.uid();
        if owner != self.uid && owner != 0 {
            return Err(untrusted(
                path,
                format!(
                    "it is owned by uid {owner}; pcp trusts only files owned by you (uid {}) \
                     or root",
                    self.uid
                ),
            ));
        }
        Ok(())
    }

    fn check_entry(
        &self,
        path: &Path,
        meta: &std::fs::Metadata,
        folder: bool,
    ) -> Result<(), Untrusted> {
        self.check_owner(path, meta)?;
        let mode = meta.permissions().mode();
        let sticky = mode & 0o1000 != 0;
        if mode & 0o022 != 0 && !(folder && sticky) {
            let what = if folder { "folder" } else { "file" };
            return Err(untrusted(
                path,
                format!(
                    "mode {:04o} lets {} write it; a {what} pcp trusts must be writable by its \
                     owner only (chmod go-w)",
                    mode & 0o7777,
                    who_may(mode, 0o022)
                ),
            ));
        }
        Ok(())
    }
}

/// "its group", "others" or "its group and others", for the bits of `mask` set in `mode`.
fn who_may(mode: u32, mask: u32) -> &'static str {
    let group = mode & mask & 0o070 != 0;
    let others = mode & mask & 0o007 != 0;
    match (group, others) {
        (true, true) => "its group and others",
        (true, false) => "its group",
        _ => "others",
    }
}

/// The login name of `uid` from the passwd database (NSS), or `None`.
pub fn user_name(uid: u32) -> Option<String> {
    let mut buf = vec![0u8; 4096];
    loop {
        // SAFETY: all-zero is a valid `passwd` (null pointers, zero ids); it is only read after
        // getpwuid_r filled it.
        let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
        let mut result: *mut libc::passwd = std::ptr::null_mut();
        // SAFETY: every pointer is valid for the call and `buf.len()` is the buffer's size.
        let rc = unsafe {
            libc::getpwuid_r(
                uid,
                &mut pwd,
                buf.as_mut_ptr().cast(),
                buf.len(),
                &mut result,
            )
        };
        if rc == libc::ERANGE && buf.len() < 1 << 20 {
            buf.resize(buf.len() * 2, 0);
            continue;
        }
        if rc != 0 || result.is_null() || pwd.pw_name.is_null() {
            return None;
        }
        // SAFETY: on success pw_name points to a NUL-terminated string inside `buf`.
        let name = unsafe { std::ffi::CStr::from_ptr(pwd.pw_name) };
        return name.to_str().ok().map(str::to_owned);
    }
}

fn resolve(path: &Path) -> Result<PathBuf, Untrusted> {
    std::fs::canonicalize(path).map_err(|e| untrusted(path, format!("cannot resolve it: {e}")))
}

fn metadata(path: &Path) -> Result<std::fs::Metadata, Untrusted> {
    std::fs::metadata(path).map_err(|e| untrusted(path, format!("cannot read its owner: {e}")))
}

fn untrusted(path: &Path, reason: String) -> Untrusted {
    Untrusted {
        path: path.to_path_buf(),
        reason,
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn chmod(path: &Path, mode: u32) {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn a_file_writable_only_by_its_owner_is_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config.toml");
        std::fs::write(&file, "").unwrap();
        chmod(&file, 0o644);
        let rules = TrustRules::default();
        assert!(rules.check_file(&file).is_ok());
        chmod(&file, 0o600);
        assert!(rules.check_file(&file).is_ok());
    }

    #[test]
    fn group_or_world_writable_files_are_refused_by_name_and_mode() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config.toml");
        std::fs::write(&file, "").unwrap();
        let rules = TrustRules::default();
        chmod(&file, 0o664);
        let err = rules.check_file(&file).unwrap_err();
        assert_eq!(err.path, file.canonicalize().unwrap());
        assert!(err.reason.contains("mode 0664"), "{err}");
        assert!(err.reason.contains("its group"), "{err}");
        chmod(&file, 0o646);
        let err = rules.check_file(&file).unwrap_err().to_string();
        assert!(err.contains("lets others write"), "{err}");
    }

    #[test]
    fn a_writable_folder_above_the_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("pcp");
        std::fs::create_dir(&sub).unwrap();
        let file = sub.join("config.toml");
        std::fs::write(&file, "").unwrap();
        chmod(&file, 0o600);
        chmod(&sub, 0o775);
        let err = TrustRules::default().check_file(&file).unwrap_err();
        assert_eq!(err.path, sub.canonicalize().unwrap());
        assert!(err.reason.contains("folder"), "{err}");
        // The sticky bit keeps others from replacing entries: such a folder (like /tmp) is fine.
        chmod(&sub, 0o1777);
        assert!(TrustRules::default().check_file(&file).is_ok());
    }

    #[test]
    fn another_users_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("manifest.toml");
        std::fs::write(&file, "").unwrap();
        chmod(&file, 0o644);
        // The file belongs to someone else: given away when we are root (whose files are
        // trusted), else we check on behalf of a user who is not us.
        let rules = if current_uid() == 0 {
            std::os::unix::fs::chown(&file, Some(4242), None).unwrap();
            TrustRules { uid: 0 }
        } else {
            TrustRules { uid: 4242 }
        };
        let owner = std::fs::metadata(&file).unwrap().uid();
        let err = rules.check_file(&file).unwrap_err();
        assert_eq!(err.path, file.canonicalize().unwrap());
        assert!(
            err.reason.contains(&format!("owned by uid {owner}")),
            "{err}"
        );
    }

    #[test]
    fn a_symlink_is_checked_where_it_points() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("real.toml");
        std::fs::write(&target, "").unwrap();
        chmod(&target, 0o666);
        let link = dir.path().join("config.toml");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let err = TrustRules::default().check_file(&link).unwrap_err();
        assert_eq!(err.path, target.canonicalize().unwrap());
    }

    #[test]
    fn a_secret_readable_by_others_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let key = dir.path().join("token.key");
        std::fs::write(&key, "k").unwrap();
        chmod(&key, 0o600);
        let rules = TrustRules::default();
        assert!(rules.check_secret(&key).is_ok());
        chmod(&key, 0o644);
        let err = rules.check_secret(&key).unwrap_err().to_string();
        assert!(err.starts_with(&key.display().to_string()), "{err}");
        assert!(err.contains("mode 0644 lets its group and others"), "{err}");
        assert!(
            TrustRules { uid: 4242 }
                .check_secret(&key)
                .unwrap_err()
                .reason
                .contains("owned by uid")
        );
    }

    fn mode_of(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
    }

    #[test]
    fn a_secret_folder_is_narrowed_only_when_pcp_may_and_a_shared_one_is_never_changed() {
        let dir = tempfile::tempdir().unwrap();
        let rules = TrustRules::default();
        let state = dir.path().join("pcp");
        std::fs::create_dir(&state).unwrap();
        chmod(&state, 0o755);
        rules.secret_folder(&state, Narrow::Never).unwrap();
        assert_eq!(
            mode_of(&state),
            0o755,
            "a folder someone named is left as it is"
        );
        rules.secret_folder(&state, Narrow::Allowed).unwrap();
        assert_eq!(mode_of(&state), 0o700);

        for shared in [0o1777, 0o777, 0o775, 0o1770, 0o1700] {
            chmod(&state, shared);
            let err = rules.secret_folder(&state, Narrow::Allowed).unwrap_err();
            assert_eq!(err.path, state);
            assert!(err.reason.contains("shared folder"), "{shared:o}: {err}");
            assert!(err.reason.contains(&format!("mode {shared:04o}")), "{err}");
            assert_eq!(mode_of(&state), shared, "never changed");
        }
        chmod(&state, 0o700);
        let err = TrustRules { uid: 4242 }
            .secret_folder(&state, Narrow::Allowed)
            .unwrap_err();
        assert!(err.reason.contains("Run this as"), "{err}");
        let file = dir.path().join("f");
        std::fs::write(&file, "").unwrap();
        assert!(rules.secret_folder(&file, Narrow::Allowed).is_err());
        assert!(rules.make_private(&state, 0o600).is_err(), "files only");
    }
}
