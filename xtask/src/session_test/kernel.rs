//! The guest's kernel: Debian's `linux-image-*-amd64` package fetched with `apt-get download`
//! into the cache outside the checkout, checked against a pinned SHA-256 and unpacked there;
//! and the modules the guest loads, found in it with their dependencies (read from each
//! module's `.modinfo` section) in the order they must be loaded.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

/// The kernel package the session runs on. Debian replaces a kernel package in its archive at
/// each point release: when `apt-get download` can no longer find this version, the error
/// names the version the archive has now and its SHA-256 (from `apt-cache show`, whose index
/// apt has verified), to pin here after a look.
pub const PACKAGE: &str = "linux-image-6.1.0-50-amd64";
pub const VERSION: &str = "6.1.176-1";
const SHA256: &str = "7b5597492a0a65aee61985a492e6bcc3f2cde830072a0e3b3d8c7e1b90279bd3";
/// `uname -r` of that kernel: the folder under `lib/modules/`.
pub const RELEASE: &str = "6.1.0-50-amd64";

/// The unpacked kernel: its image and its modules folder.
pub struct Kernel {
    pub vmlinuz: PathBuf,
    pub modules: PathBuf,
}

/// Fetches (or reuses) and unpacks the pinned kernel package under `cache/vm/`.
pub fn fetch(cache: &Path) -> Result<Kernel> {
    let dir = cache.join("vm");
    let unpacked = dir.join(format!("{PACKAGE}_{VERSION}"));
    let kernel = Kernel {
        vmlinuz: unpacked.join(format!("boot/vmlinuz-{RELEASE}")),
        modules: unpacked.join(format!("lib/modules/{RELEASE}")),
    };
    if kernel.vmlinuz.is_file() && kernel.modules.join("modules.order").is_file() {
        return Ok(kernel);
    }
    let downloads = dir.join("downloads");
    std::fs::create_dir_all(&downloads)
        .with_context(|| format!("cannot create {}", downloads.display()))?;
    let deb = downloads.join(format!("{PACKAGE}_{VERSION}_amd64.deb"));
    if !deb.is_file() || crate::setup::sha256_file(&deb)? != SHA256 {
        let _ = std::fs::remove_file(&deb);
        eprintln!("xtask: downloading {PACKAGE} {VERSION} with apt-get");
        let status = Command::new("apt-get")
            .args(["download", "-q"])
            .arg(format!("{PACKAGE}={VERSION}"))
            .current_dir(&downloads)
            .status()
            .context("cannot run apt-get (Debian's package tool)")?;
        if !status.success() || !deb.is_file() {
            bail!(
                "apt-get could not download {PACKAGE} {VERSION} ({status}); the archive now \
                 has: {}. Pin that in xtask/src/session_test/kernel.rs after checking it",
                candidate()
            );
        }
        let got = crate::setup::sha256_file(&deb)?;
        if got != SHA256 {
            let _ = std::fs::remove_file(&deb);
            bail!(
                "{} has SHA-256 {got}, expected {SHA256}: refusing it",
                deb.display()
            );
        }
    }
    let tmp = dir.join(format!(".unpack-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let status = Command::new("dpkg-deb")
        .arg("-x")
        .arg(&deb)
        .arg(&tmp)
        .status()
        .context("cannot run dpkg-deb")?;
    if !status.success() {
        bail!("dpkg-deb could not unpack {} ({status})", deb.display());
    }
    let _ = std::fs::remove_dir_all(&unpacked);
    std::fs::rename(&tmp, &unpacked)
        .with_context(|| format!("cannot move the unpacked kernel to {}", unpacked.display()))?;
    eprintln!("xtask: unpacked {}", unpacked.display());
    Ok(kernel)
}

/// What the archive offers now for the kernel meta package, for the error message.
fn candidate() -> String {
    let show = |pkg: &str| {
        Command::new("apt-cache")
            .args(["show", "--no-all-versions", pkg])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default()
    };
    let meta = show("linux-image-amd64");
    let Some(dep) = meta
        .lines()
        .find_map(|l| l.strip_prefix("Depends: "))
        .and_then(|d| d.split_whitespace().next())
    else {
        return "nothing (run apt-get update)".into();
    };
    let info = show(dep);
    let field = |name: &str| {
        info.lines()
            .find_map(|l| l.strip_prefix(name))
            .unwrap_or("?")
            .to_string()
    };
    format!(
        "{dep} {} (SHA-256 {})",
        field("Version: "),
        field("SHA256: ")
    )
}

/// A module's name as the kernel knows it (`snd-aloop.ko` → `snd_aloop`).
fn canonical(name: &str) -> String {
    name.trim_end_matches(".ko").replace('-', "_")
}

/// Every `.ko` file under `modules/kernel`, by canonical name.
fn index(modules: &Path) -> Result<HashMap<String, PathBuf>> {
    let mut found = HashMap::new();
    let mut stack = vec![modules.join("kernel")];
    while let Some(dir) = stack.pop() {
        let entries =
            std::fs::read_dir(&dir).with_context(|| format!("cannot list {}", dir.display()))?;
        for entry in entries {
            let path = entry?.path();
            if path.is_dir() {
                stack.push(path);
            } else if let Some(name) = path.file_name().and_then(|n| n.to_str())
                && name.ends_with(".ko")
            {
                found.insert(canonical(name), path);
            }
        }
    }
    Ok(found)
}

/// The `depends=` list of a module, read from its ELF `.modinfo` section (modules built into
/// the kernel are not listed there).
fn depends(path: &Path) -> Result<Vec<String>> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let modinfo = elf_section(&bytes, ".modinfo")
        .with_context(|| format!("{} has no readable .modinfo section", path.display()))?;
    Ok(modinfo
        .split(|b| *b == 0)
        .filter_map(|entry| entry.strip_prefix(b"depends="))
        .flat_map(|list| list.split(|b| *b == b','))
        .filter(|d| !d.is_empty())
        .map(|d| canonical(&String::from_utf8_lossy(d)))
        .collect())
}

/// The contents of section `name` of a 64-bit little-endian ELF file.
fn elf_section<'a>(elf: &'a [u8], name: &str) -> Option<&'a [u8]> {
    let u16_at = |o: usize| Some(u16::from_le_bytes(elf.get(o..o + 2)?.try_into().ok()?));
    let u32_at = |o: usize| Some(u32::from_le_bytes(elf.get(o..o + 4)?.try_into().ok()?));
    let u64_at = |o: usize| Some(u64::from_le_bytes(elf.get(o..o + 8)?.try_into().ok()?));
    if elf.get(..5)? != b"\x7fELF\x02" {
        return None;
    }
    let shoff = usize::try_from(u64_at(0x28)?).ok()?;
    let shentsize = usize::from(u16_at(0x3A)?);
    let shnum = usize::from(u16_at(0x3C)?);
    let shstrndx = usize::from(u16_at(0x3E)?);
    let section = |i: usize| -> Option<(u32, usize, usize)> {
        let h = shoff + i * shentsize;
        Some((
            u32_at(h)?,
            usize::try_from(u64_at(h + 0x18)?).ok()?,
            usize::try_from(u64_at(h + 0x20)?).ok()?,
        ))
    };
    let (_, names_at, names_len) = section(shstrndx)?;
    let names = elf.get(names_at..names_at + names_len)?;
    (0..shnum).find_map(|i| {
        let (name_off, at, len) = section(i)?;
        let rest = names.get(name_off as usize..)?;
        let end = rest.iter().position(|b| *b == 0)?;
        (&rest[..end] == name.as_bytes())
            .then(|| elf.get(at..at + len))
            .flatten()
    })
}

/// The `.ko` files for `wanted` and everything they depend on, each after its dependencies
/// (the order `insmod` needs).
pub fn load_order(modules: &Path, wanted: &[&str]) -> Result<Vec<PathBuf>> {
    let all = index(modules)?;
    let mut order: Vec<String> = Vec::new();
    // Depth-first, post-order; `visiting` catches a dependency cycle instead of looping.
    fn visit(
        name: &str,
        all: &HashMap<String, PathBuf>,
        order: &mut Vec<String>,
        visiting: &mut Vec<String>,
    ) -> Result<()> {
        if order.iter().any(|n| n == name) {
            return Ok(());
        }
        if visiting.iter().any(|n| n == name) {
            bail!("the modules depend on each other in a cycle: {visiting:?}");
        }
        let path = all
            .get(name)
            .with_context(|| format!("the kernel package has no module {name}"))?;
        visiting.push(name.to_string());
        for dep in depends(path)? {
            visit(&dep, all, order, visiting)?;
        }
        visiting.pop();
        order.push(name.to_string());
        Ok(())
    }
    for name in wanted {
        visit(&canonical(name), &all, &mut order, &mut Vec::new())?;
    }
    Ok(order.iter().filter_map(|n| all.get(n).cloned()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal ELF64 with a section-name table and one `.modinfo` section.
    fn elf_with_modinfo(modinfo: &[u8]) -> Vec<u8> {
        let names = b"\0.shstrtab\0.modinfo\0";
        let mut elf = vec![0u8; 0x40];
        elf[..5].copy_from_slice(b"\x7fELF\x02");
        let names_at = elf.len();
        elf.extend_from_slice(names);
        let info_at = elf.len();
        elf.extend_from_slice(modinfo);
        let shoff = elf.len();
        let header = |name: u32, at: usize, len: usize| {
            let mut h = vec![0u8; 64];
            h[..4].copy_from_slice(&name.to_le_bytes());
            h[0x18..0x20].copy_from_slice(&(at as u64).to_le_bytes());
            h[0x20..0x28].copy_from_slice(&(len as u64).to_le_bytes());
            h
        };
        elf.extend(header(0, 0, 0));
        elf.extend(header(1, names_at, names.len()));
        elf.extend(header(11, info_at, modinfo.len()));
        elf[0x28..0x30].copy_from_slice(&(shoff as u64).to_le_bytes());
        elf[0x3A..0x3C].copy_from_slice(&64u16.to_le_bytes());
        elf[0x3C..0x3E].copy_from_slice(&3u16.to_le_bytes());
        elf[0x3E..0x40].copy_from_slice(&1u16.to_le_bytes());
        elf
    }

    #[test]
    fn dependencies_come_from_the_modinfo_section() {
        let dir = tempfile::tempdir().unwrap();
        let kernel = dir.path().join("kernel/sub");
        std::fs::create_dir_all(&kernel).unwrap();
        let write = |name: &str, deps: &str| {
            let info = format!("license=GPL\0depends={deps}\0name={name}\0");
            std::fs::write(kernel.join(name), elf_with_modinfo(info.as_bytes())).unwrap();
        };
        write("snd-aloop.ko", "snd-pcm,snd");
        write("snd-pcm.ko", "snd,snd-timer");
        write("snd-timer.ko", "snd");
        write("snd.ko", "");
        let order = load_order(dir.path(), &["snd-aloop"]).unwrap();
        let names: Vec<String> = order
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names,
            ["snd.ko", "snd-timer.ko", "snd-pcm.ko", "snd-aloop.ko"]
        );
        let missing = load_order(dir.path(), &["virtio_gpu"]).unwrap_err();
        assert!(missing.to_string().contains("no module virtio_gpu"));
    }

    #[test]
    fn a_file_that_is_not_elf_has_no_sections() {
        assert!(elf_section(b"not an elf file at all", ".modinfo").is_none());
        assert!(elf_section(&elf_with_modinfo(b"a=b\0"), ".modinfo").is_some());
        assert!(elf_section(&elf_with_modinfo(b"a=b\0"), ".text").is_none());
    }
}
