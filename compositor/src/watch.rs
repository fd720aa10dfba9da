//! Noticing a changed config file without waking up to look: an inotify watch on the file's
//! folder (editors replace a file by renaming a new one over it, which a watch on the file
//! itself would miss), readable as an event source on the compositor's loop.

use std::ffi::{CString, OsStr};
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// What in the folder counts as a change of the file: written and closed, renamed over or
/// away, created, deleted, or its mode or owner changed (the trust checks read those).
const MASK: u32 = libc::IN_CLOSE_WRITE
    | libc::IN_MOVED_TO
    | libc::IN_MOVED_FROM
    | libc::IN_CREATE
    | libc::IN_DELETE
    | libc::IN_ATTRIB
    | libc::IN_DELETE_SELF
    | libc::IN_MOVE_SELF;

/// The fixed part of a `struct inotify_event` (wd, mask, cookie, len), before the name.
const HEADER: usize = 16;

/// What one read of a watch's events found.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Changes {
    /// Something happened to the file, or events were lost: look at it.
    pub file: bool,
    /// The folder was deleted or moved away: nothing more comes from this watch (the kernel
    /// dropped it, or it follows the folder to where the file no longer is).
    pub watch_gone: bool,
}

/// An inotify watch on the folder of one file.
pub struct FileWatch {
    fd: OwnedFd,
    name: Vec<u8>,
}

impl FileWatch {
    /// Watches `path`'s folder for changes to `path`.
    pub fn new(path: &Path) -> io::Result<FileWatch> {
        let name = path
            .file_name()
            .ok_or_else(|| io::Error::other(format!("{} names no file", path.display())))?;
        let folder = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        // SAFETY: inotify_init1 takes flags only; a non-negative result is a new fd we own.
        let raw = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `raw` was just returned by inotify_init1 and is owned by nothing else.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let c_folder = CString::new(folder.as_os_str().as_bytes())
            .map_err(|_| io::Error::other(format!("{} has a NUL byte", folder.display())))?;
        // SAFETY: a valid inotify fd and a NUL-terminated path that outlives the call.
        let wd = unsafe { libc::inotify_add_watch(fd.as_raw_fd(), c_folder.as_ptr(), MASK) };
        if wd < 0 {
            let e = io::Error::last_os_error();
            return Err(io::Error::new(
                e.kind(),
                format!("cannot watch {}: {e}", folder.display()),
            ));
        }
        Ok(FileWatch {
            fd,
            name: name.as_bytes().to_vec(),
        })
    }

    /// Reads every waiting event: whether one is about the file (or events were lost), and
    /// whether the watch itself is gone with its folder (the caller then looks at the file by
    /// other means until a watch can be set again).
    pub fn changes(&self) -> Changes {
        let mut buf = [0u8; 4096];
        let mut changes = Changes::default();
        loop {
            // SAFETY: reading into a buffer we own, at most its length.
            let n = unsafe {
                libc::read(
                    self.fd.as_raw_fd(),
                    buf.as_mut_ptr().cast::<libc::c_void>(),
                    buf.len(),
                )
            };
            if n <= 0 {
                // EAGAIN (nothing more), or an error: what was read so far is the answer.
                return changes;
            }
            let found = read_events(&buf[..n as usize], &self.name);
            changes.file |= found.file;
            changes.watch_gone |= found.watch_gone;
        }
    }
}

impl AsFd for FileWatch {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

/// Whether the packed inotify events in `buf` concern `name` (or say events were lost), and
/// whether they say the watched folder went away.
fn read_events(buf: &[u8], name: &[u8]) -> Changes {
    let mut at = 0;
    let mut changes = Changes::default();
    while at + HEADER <= buf.len() {
        let word = |i: usize| {
            let b = &buf[at + i..at + i + 4];
            u32::from_ne_bytes([b[0], b[1], b[2], b[3]])
        };
        let mask = word(4);
        let len = word(12) as usize;
        let end = (at + HEADER + len).min(buf.len());
        let raw = &buf[at + HEADER..end];
        // The name is NUL-padded to an alignment.
        let event_name = &raw[..raw.iter().position(|&b| b == 0).unwrap_or(raw.len())];
        let folder_gone =
            mask & (libc::IN_DELETE_SELF | libc::IN_MOVE_SELF | libc::IN_IGNORED) != 0;
        if mask & libc::IN_Q_OVERFLOW != 0
            || folder_gone
            || OsStr::from_bytes(event_name) == OsStr::from_bytes(name)
        {
            changes.file = true;
        }
        changes.watch_gone |= folder_gone;
        at += HEADER + len;
    }
    changes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_a_rename_over_and_a_chmod_of_the_file_are_seen_and_a_neighbour_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pcp.toml");
        std::fs::write(&path, "a").unwrap();
        let watch = FileWatch::new(&path).unwrap();
        assert!(!watch.changes().file, "nothing happened yet");

        std::fs::write(dir.path().join("other.toml"), "x").unwrap();
        assert!(!watch.changes().file, "another file in the folder");

        std::fs::write(&path, "b").unwrap();
        assert!(watch.changes().file, "written in place");
        assert!(!watch.changes().file, "read once");

        let new = dir.path().join(".pcp.toml.swp");
        std::fs::write(&new, "c").unwrap();
        std::fs::rename(&new, &path).unwrap();
        assert!(watch.changes().file, "renamed over, as editors save");

        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
        assert!(watch.changes().file, "its mode changed");
    }

    #[test]
    fn a_deleted_folder_ends_the_watch_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("pcp");
        std::fs::create_dir(&folder).unwrap();
        let path = folder.join("pcp.toml");
        std::fs::write(&path, "a").unwrap();
        let watch = FileWatch::new(&path).unwrap();
        std::fs::remove_dir_all(&folder).unwrap();
        let changes = watch.changes();
        assert!(changes.file, "the file went with it: {changes:?}");
        assert!(changes.watch_gone, "{changes:?}");

        // A folder made again under the same name is not watched by the old watch.
        std::fs::create_dir(&folder).unwrap();
        std::fs::write(&path, "b").unwrap();
        assert_eq!(watch.changes(), Changes::default());
    }

    #[test]
    fn a_path_without_a_file_name_is_a_clear_error() {
        let e = FileWatch::new(Path::new("/")).err().unwrap();
        assert!(e.to_string().contains("names no file"), "{e}");
    }
}
