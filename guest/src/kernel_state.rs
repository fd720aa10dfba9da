//! What the guest's kernel is doing with an unplugged card, for a person reading why QEMU did
//! not finish unplugging it: the PCI device and slot as sysfs shows them, who still holds the
//! card's device node, and the kernel stacks of tasks in the PCI, DRM or hotplug code.

use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

/// Kernel functions that mark a task as taking part in the unplug.
const INTERESTING: &[&str] = &[
    "pci",
    "qxl",
    "drm",
    "ttm",
    "fb",
    "console",
    "vt_",
    "dma_fence",
];

/// One snapshot, as text.
pub fn snapshot(pci: &str) -> String {
    let mut text = String::new();
    let dev = format!("/sys/bus/pci/devices/{pci}");
    let _ = writeln!(text, "{pci} in sysfs: {}", Path::new(&dev).exists());
    if let Ok(slots) = std::fs::read_dir("/sys/bus/pci/slots") {
        for slot in slots.flatten() {
            let read = |f: &str| {
                std::fs::read_to_string(slot.path().join(f))
                    .map(|s| s.trim().to_string())
                    .unwrap_or_else(|e| format!("({e})"))
            };
            let _ = writeln!(
                text,
                "slot {}: address {} power {}",
                slot.file_name().to_string_lossy(),
                read("address"),
                read("power")
            );
        }
    }
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return text;
    };
    for p in procs.flatten() {
        let pid = p.file_name().to_string_lossy().into_owned();
        if !pid.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let comm = std::fs::read_to_string(p.path().join("comm")).unwrap_or_default();
        let comm = comm.trim();
        if let Ok(fds) = std::fs::read_dir(p.path().join("fd")) {
            for fd in fds.flatten() {
                if let Ok(target) = std::fs::read_link(fd.path()) {
                    let t = target.to_string_lossy();
                    if t.contains("/dev/dri/") && t.contains("deleted") {
                        let _ = writeln!(
                            text,
                            "{pid} {comm}: fd {} -> {t}",
                            fd.file_name().to_string_lossy()
                        );
                    }
                }
            }
        }
        let stat = std::fs::read_to_string(p.path().join("stat")).unwrap_or_default();
        let state = stat
            .rsplit_once(") ")
            .and_then(|(_, r)| r.split_whitespace().next())
            .unwrap_or("?");
        let stack = std::fs::read_to_string(p.path().join("stack")).unwrap_or_default();
        let wanted = stack
            .lines()
            .any(|l| INTERESTING.iter().any(|w| l.contains(w)));
        if wanted && state != "R" {
            let _ = writeln!(text, "{pid} {comm} ({state}):\n{stack}");
        }
    }
    text
}

/// Takes snapshots at `at` after now into `file`, in a thread of its own.
pub fn watch(file: std::path::PathBuf, pci: &'static str, at: &'static [u64]) {
    std::thread::spawn(move || {
        let start = Instant::now();
        let mut all = String::new();
        for &s in at {
            let due = Duration::from_secs(s);
            if let Some(wait) = due.checked_sub(start.elapsed()) {
                std::thread::sleep(wait);
            }
            let _ = writeln!(
                all,
                "=== {:.1} s after the unplug (uptime {:.1} s)\n{}",
                start.elapsed().as_secs_f64(),
                crate::session::uptime(),
                snapshot(pci)
            );
            let _ = std::fs::write(&file, &all);
        }
    });
}
