//! Fuzz target `codex_patch`: any bytes as a Codex patch (`pcp_shell_risk::patch`). No panic; a
//! patch that parses names every file it touches — each unpadded `*** Add File:`, `*** Delete
//! File:` and `*** Update File:` line between the markers is one of its files, in order, every
//! file it lists has such a header, and a move is the line right after its update — and counts
//! no more added or removed lines than the text holds; one that does not parse says a line inside
//! the text. Run as Codex sends it (`apply_patch <<'EOF' …`), the command is recognized with a
//! text that parses the same and is rated at least as high as a file write to each file it adds or updates, and
//! High when the patch cannot be read.

use std::path::PathBuf;

use pcp_shell_risk::patch::{Op, invocation, parse};
use pcp_shell_risk::{Context, Risk, classify, classify_path};

const HEADERS: [(&str, Op); 3] = [
    ("*** Add File: ", Op::Add),
    ("*** Delete File: ", Op::Delete),
    ("*** Update File: ", Op::Update),
];

pub fn check(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let lines: Vec<&str> = text.trim().lines().collect();
    let parsed = parse(&text);
    match &parsed {
        Ok(p) => {
            // The header lines between the markers (the lines of a here-document wrapper too).
            let headers: Vec<(Op, &str)> = lines
                .iter()
                .filter_map(|l| {
                    HEADERS
                        .iter()
                        .find_map(|(h, op)| l.strip_prefix(h).map(|rest| (*op, rest.trim_end())))
                })
                .collect();
            let files: Vec<(Op, &str)> = p.files.iter().map(|f| (f.op, f.path.as_str())).collect();
            let mut at = 0;
            for h in &headers {
                let found = files[at..].iter().position(|f| f == h);
                assert!(
                    found.is_some(),
                    "header {h:?} is no file of {files:?}: {text:?}"
                );
                at += found.unwrap_or(0) + 1;
            }
            for f in &p.files {
                let prefix = HEADERS
                    .iter()
                    .find(|(_, op)| *op == f.op)
                    .map_or("", |(h, _)| h);
                let header = format!("{prefix}{}", f.path);
                let at = lines.iter().position(|l| l.trim() == header);
                assert!(at.is_some(), "{f:?} has no header line: {text:?}");
                if let (Some(to), Some(at)) = (&f.move_to, at) {
                    assert!(
                        lines
                            .iter()
                            .skip(at)
                            .any(|l| *l == format!("*** Move to: {to}")),
                        "{f:?}: no move line"
                    );
                }
            }
            let plus = lines.iter().filter(|l| l.starts_with('+')).count();
            let minus = lines.iter().filter(|l| l.starts_with('-')).count();
            assert!(p.files.iter().map(|f| f.added).sum::<usize>() <= plus);
            assert!(p.files.iter().map(|f| f.removed).sum::<usize>() <= minus);
        }
        Err(e) => assert!(
            e.line >= 1 && e.line <= lines.len().max(1) + 2,
            "{e} is not a line of the patch"
        ),
    }
    as_command(&text, parsed.as_ref().ok());
}

/// The patch as Codex runs it: recognized, and rated by its files.
fn as_command(text: &str, parsed: Option<&pcp_shell_risk::patch::Patch>) {
    let body = text.trim_end_matches('\n');
    // A line `EOF` inside would end the here-document early; a `\r` changes what the shell reads.
    if body.lines().any(|l| l.trim() == "EOF") || body.contains('\r') || body.contains('\0') {
        return;
    }
    let command = format!("apply_patch <<'EOF'\n{body}\nEOF\n");
    let ctx = Context::new("/home/u/proj", Some(PathBuf::from("/home/u")));
    let rated = classify(&command, &ctx);
    let Some(inv) = invocation(&command) else {
        // tree-sitter-bash reads some bodies (a line of only `EOF` with spaces…) otherwise.
        return;
    };
    // The here-document's text, as tree-sitter-bash (and so Codex) reads it, means the same.
    assert_eq!(parse(&inv.patch), parse(body), "{command:?}");
    assert_eq!(inv.folder, None);
    match parsed {
        Some(p) if !p.files.is_empty() => {
            for f in p
                .files
                .iter()
                .filter(|f| f.op != Op::Delete && f.move_to.is_none())
            {
                let path = if f.path.starts_with('/') {
                    f.path.clone()
                } else {
                    format!("/home/u/proj/{}", f.path)
                };
                let write = classify_path(&path, &ctx);
                assert!(
                    rated.risk >= write.risk,
                    "{command:?} rated {} below its write of {path} ({})",
                    rated.risk,
                    write.risk
                );
            }
        }
        _ => assert!(rated.risk >= Risk::High, "{command:?}: {rated:?}"),
    }
}
