//! Fuzz target `shell_risk`: any bytes as a shell command (and as an edit tool's path) get a
//! level without panicking; the level is the highest of the reasons, every level above Safe has
//! one, the same input rated twice gets the same answer (the per-thread parser keeps no state
//! between commands), and the first byte picks the working folder so paths resolve
//! differently.

use std::path::PathBuf;

use pcp_shell_risk::{Context, Risk, classify, classify_path};

const FOLDERS: &[&str] = &["/home/u/proj", "/", "/home/u", "/tmp/a/b", ""];

pub fn check(data: &[u8]) {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let cwd = FOLDERS[usize::from(first) % FOLDERS.len()];
    let ctx = Context::new(cwd, Some(PathBuf::from("/home/u")));
    let text = String::from_utf8_lossy(rest);
    let a = classify(&text, &ctx);
    let top = a.reasons.iter().map(|r| r.risk).max().unwrap_or(Risk::Safe);
    assert_eq!(a.risk, top, "the level is the highest reason's: {text:?}");
    assert!(!a.summary().is_empty());
    assert_eq!(
        classify(&text, &ctx),
        a,
        "rated twice, rated the same: {text:?}"
    );
    let p = classify_path(&text, &ctx);
    assert!(p.risk >= Risk::Moderate, "a write is never Safe: {text:?}");
    assert_eq!(p.reasons.len(), 1);
}
