//! The guest's initramfs, written as a `newc` cpio archive (the format the kernel unpacks):
//! busybox, the `/init` script and the kernel modules it loads before it can reach the host's
//! root over 9p.

use std::path::Path;

use anyhow::{Context, Result};

/// A `newc` archive being built in memory.
#[derive(Default)]
pub struct Cpio {
    bytes: Vec<u8>,
    next_inode: u32,
}

const DIR: u32 = 0o040_000;
const FILE: u32 = 0o100_000;
const SYMLINK: u32 = 0o120_000;
const CHAR_DEVICE: u32 = 0o020_000;

impl Cpio {
    fn pad(&mut self) {
        while !self.bytes.len().is_multiple_of(4) {
            self.bytes.push(0);
        }
    }

    /// One entry: `name` without a leading `/`, its mode (type and permissions), its data and,
    /// for a device node, its (major, minor).
    fn entry(&mut self, name: &str, mode: u32, data: &[u8], rdev: (u32, u32)) {
        self.next_inode += 1;
        let fields = [
            self.next_inode,
            mode,
            0, // uid
            0, // gid
            if mode & DIR == DIR { 2 } else { 1 },
            0, // mtime: the archive is the same every run
            data.len() as u32,
            0,
            0,
            rdev.0,
            rdev.1,
            name.len() as u32 + 1,
            0, // check (only for the crc format)
        ];
        self.bytes.extend_from_slice(b"070701");
        for f in fields {
            self.bytes.extend_from_slice(format!("{f:08X}").as_bytes());
        }
        self.bytes.extend_from_slice(name.as_bytes());
        self.bytes.push(0);
        self.pad();
        self.bytes.extend_from_slice(data);
        self.pad();
    }

    pub fn dir(&mut self, name: &str) {
        self.entry(name, DIR | 0o755, &[], (0, 0));
    }

    pub fn file(&mut self, name: &str, perm: u32, data: &[u8]) {
        self.entry(name, FILE | perm, data, (0, 0));
    }

    pub fn symlink(&mut self, name: &str, target: &str) {
        self.entry(name, SYMLINK | 0o777, target.as_bytes(), (0, 0));
    }

    pub fn char_device(&mut self, name: &str, major: u32, minor: u32) {
        self.entry(name, CHAR_DEVICE | 0o600, &[], (major, minor));
    }

    /// The archive with its trailer.
    pub fn finish(mut self) -> Vec<u8> {
        self.entry("TRAILER!!!", 0, &[], (0, 0));
        // The kernel reads the archive in 512-byte blocks.
        while !self.bytes.len().is_multiple_of(512) {
            self.bytes.push(0);
        }
        self.bytes
    }
}

/// Writes the initramfs to `out`: busybox (its applets linked by `/init`), the `modules` (in
/// load order, as `/modules/NN-name.ko`) and `init` as `/init`.
pub fn write(out: &Path, busybox: &Path, modules: &[std::path::PathBuf], init: &str) -> Result<()> {
    let mut cpio = Cpio::default();
    for dir in ["bin", "dev", "proc", "sys", "host", "modules"] {
        cpio.dir(dir);
    }
    // The kernel opens /dev/console for init's output before anything is mounted.
    cpio.char_device("dev/console", 5, 1);
    let bb =
        std::fs::read(busybox).with_context(|| format!("cannot read {}", busybox.display()))?;
    cpio.file("bin/busybox", 0o755, &bb);
    cpio.symlink("bin/sh", "busybox");
    for (i, path) in modules.iter().enumerate() {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .with_context(|| format!("bad module path {}", path.display()))?;
        let data =
            std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
        cpio.file(&format!("modules/{i:02}-{name}"), 0o644, &data);
    }
    cpio.file("init", 0o755, init.as_bytes());
    std::fs::write(out, cpio.finish()).with_context(|| format!("cannot write {}", out.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_newc_headers_padded_to_four_bytes() {
        let mut cpio = Cpio::default();
        cpio.file("init", 0o755, b"#!/bin/sh\n");
        let bytes = cpio.finish();
        assert_eq!(&bytes[..6], b"070701");
        let field = |i: usize| {
            let at = 6 + i * 8;
            u32::from_str_radix(std::str::from_utf8(&bytes[at..at + 8]).unwrap(), 16).unwrap()
        };
        assert_eq!(field(1), FILE | 0o755);
        assert_eq!(field(6), 10, "file size");
        assert_eq!(field(11), 5, "name size with its NUL");
        // 110-byte header + "init\0" = 115, padded to 116; then the data.
        assert_eq!(&bytes[110..115], b"init\0");
        assert_eq!(&bytes[116..126], b"#!/bin/sh\n");
        let trailer = bytes
            .windows(10)
            .position(|w| w == b"TRAILER!!!")
            .expect("trailer");
        assert_eq!((trailer - 110) % 4, 0);
        assert_eq!(bytes.len() % 512, 0);
    }
}
