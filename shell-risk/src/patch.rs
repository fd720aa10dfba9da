//! Codex's `apply_patch` format, read the way Codex CLI reads it (its grammar:
//! `*** Begin Patch`, then per file `*** Add File: PATH` with `+` lines, `*** Delete File: PATH`,
//! or `*** Update File: PATH` with an optional `*** Move to: PATH` and `@@` hunks of ` `, `-` and
//! `+` lines, ended by an optional `*** End of File`; then `*** End Patch`; markers may carry
//! padding, and a patch wrapped in `<<'EOF'` … `EOF` is unwrapped). [`parse`] gives each file's
//! path, operation, move target and a hunk summary; [`invocation`] recognizes the shell commands
//! Codex runs a patch with (`apply_patch <<'EOF' …`, `cd DIR && apply_patch <<'EOF' …`,
//! `apply_patch 'PATCH'`). As a shell command a patch is rated by the files it writes and
//! deletes, each the way a file write or `rm` of that path is; one that cannot be read is High.

use std::fmt;

use tree_sitter::Node;

use crate::phrases as say;
use crate::rules::{Stdin, Verdict, classify_write_path, destroys};
use crate::words::{Expander, Word};
use crate::{Context, Risk};

/// What a patch does to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Add,
    Update,
    Delete,
}

impl Op {
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Add => "add",
            Op::Update => "update",
            Op::Delete => "delete",
        }
    }
}

/// One file a patch touches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// The path as the patch names it (relative to the folder the patch applies in, or
    /// absolute).
    pub path: String,
    pub op: Op,
    /// Where an update moves the file (`*** Move to:`).
    pub move_to: Option<String>,
    /// `@@` hunks of an update (an added file counts as one).
    pub hunks: usize,
    pub added: usize,
    pub removed: usize,
}

/// A parsed patch: the files in the order it names them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Patch {
    pub files: Vec<FileChange>,
}

/// Why a patch cannot be read: the line (1-based, in the patch text) and what is wrong there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchError {
    pub line: usize,
    pub message: &'static str,
}

impl fmt::Display for PatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for PatchError {}

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File: ";
const DELETE: &str = "*** Delete File: ";
const UPDATE: &str = "*** Update File: ";
const MOVE: &str = "*** Move to: ";
const EOF_MARK: &str = "*** End of File";

/// Parses a patch as Codex does.
pub fn parse(text: &str) -> Result<Patch, PatchError> {
    let all: Vec<&str> = text.trim().lines().collect();
    let (body, first_line) = boundaries(&all)?;
    let mut patch = Patch::default();
    let mut at = 0;
    while at < body.len() {
        let line_no = first_line + at;
        let (change, used) = one_file(&body[at..], line_no)?;
        if change.path.trim().is_empty() {
            return Err(PatchError {
                line: line_no,
                message: "a file header names no path",
            });
        }
        patch.files.push(change);
        at += used;
    }
    Ok(patch)
}

/// The lines between the markers, and the line number of the first of them.
fn boundaries<'a>(all: &'a [&'a str]) -> Result<(&'a [&'a str], usize), PatchError> {
    let strict = |lines: &'a [&'a str]| -> Result<&'a [&'a str], PatchError> {
        match lines {
            [first, .., last] if first.trim() == BEGIN && last.trim() == END => {
                Ok(&lines[1..lines.len() - 1])
            }
            [first, ..] if first.trim() != BEGIN => Err(PatchError {
                line: 1,
                message: "the first line is not `*** Begin Patch`",
            }),
            _ => Err(PatchError {
                line: lines.len().max(1),
                message: "the last line is not `*** End Patch`",
            }),
        }
    };
    match strict(all) {
        Ok(body) => Ok((body, 2)),
        Err(e) => match all {
            [first, .., last]
                if matches!(*first, "<<EOF" | "<<'EOF'" | "<<\"EOF\"")
                    && last.ends_with("EOF")
                    && all.len() >= 4 =>
            {
                strict(&all[1..all.len() - 1]).map(|b| (b, 3))
            }
            _ => Err(e),
        },
    }
}

/// One file's section at the start of `lines`: the change and how many lines it used.
fn one_file(lines: &[&str], line_no: usize) -> Result<(FileChange, usize), PatchError> {
    let header = lines[0].trim();
    let change = |path: &str, op| FileChange {
        path: path.to_string(),
        op,
        move_to: None,
        hunks: 0,
        added: 0,
        removed: 0,
    };
    if let Some(path) = header.strip_prefix(ADD) {
        let added = lines[1..].iter().take_while(|l| l.starts_with('+')).count();
        let mut c = change(path, Op::Add);
        c.added = added;
        c.hunks = 1;
        return Ok((c, 1 + added));
    }
    if let Some(path) = header.strip_prefix(DELETE) {
        return Ok((change(path, Op::Delete), 1));
    }
    let Some(path) = header.strip_prefix(UPDATE) else {
        return Err(PatchError {
            line: line_no,
            message: "expected `*** Add File:`, `*** Delete File:` or `*** Update File:`",
        });
    };
    let mut c = change(path, Op::Update);
    let mut used = 1;
    if let Some(to) = lines.get(1).and_then(|l| l.strip_prefix(MOVE)) {
        c.move_to = Some(to.to_string());
        used += 1;
    }
    while used < lines.len() {
        let line = lines[used];
        if line.trim().is_empty() {
            used += 1;
            continue;
        }
        if line.starts_with('*') {
            break;
        }
        used += hunk(&lines[used..], line_no + used, c.hunks == 0, &mut c)?;
        c.hunks += 1;
    }
    if c.hunks == 0 {
        return Err(PatchError {
            line: line_no,
            message: "an update has no hunk",
        });
    }
    Ok((c, used))
}

/// One `@@` hunk at the start of `lines` (the first may omit `@@`): how many lines it used.
fn hunk(
    lines: &[&str],
    line_no: usize,
    first: bool,
    c: &mut FileChange,
) -> Result<usize, PatchError> {
    let start = if lines[0] == "@@" || lines[0].starts_with("@@ ") {
        1
    } else if first {
        0
    } else {
        return Err(PatchError {
            line: line_no,
            message: "a hunk does not start with `@@`",
        });
    };
    let mut used = 0;
    for line in &lines[start..] {
        if *line == EOF_MARK {
            if used == 0 {
                break;
            }
            used += 1;
            return Ok(start + used);
        }
        match line.chars().next() {
            None | Some(' ') => {}
            Some('+') => c.added += 1,
            Some('-') => c.removed += 1,
            Some(_) if used == 0 => {
                return Err(PatchError {
                    line: line_no + start,
                    message: "a hunk line starts with neither ` `, `+` nor `-`",
                });
            }
            Some(_) => break,
        }
        used += 1;
    }
    if used == 0 {
        return Err(PatchError {
            line: line_no + start,
            message: "a hunk has no lines",
        });
    }
    Ok(start + used)
}

/// A shell command that runs `apply_patch` and nothing else, as Codex sends it: the patch text,
/// and the folder it applies in when the command changes to one first (`cd DIR &&`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    pub patch: String,
    pub folder: Option<String>,
}

const NAMES: &[&str] = &["apply_patch", "applypatch"];

/// Recognizes `apply_patch <<'EOF' … EOF`, `cd DIR && apply_patch <<'EOF' … EOF` (the only
/// statement, as Codex requires) and `apply_patch 'PATCH'`. A here-document whose text the
/// shell would expand (`<<EOF` holding `$…`) is not recognized: what would run is not known now.
pub fn invocation(command: &str) -> Option<Invocation> {
    let source = crate::walk::terminated(command);
    let tree = crate::walk::parse(&source)?;
    let root = tree.root_node();
    if root.has_error() {
        return None;
    }
    let mut cursor = root.walk();
    let statements: Vec<Node<'_>> = root
        .named_children(&mut cursor)
        .filter(|n| n.kind() != "comment")
        .collect();
    let [statement] = statements.as_slice() else {
        return None;
    };
    let src = source.as_ref();
    let text = |n: Node<'_>| src.get(n.byte_range()).unwrap_or("");
    match statement.kind() {
        "command" => {
            let words = simple_words(*statement, src)?;
            match words.as_slice() {
                [name, patch] if NAMES.contains(&name.as_str()) => Some(Invocation {
                    patch: patch.clone(),
                    folder: None,
                }),
                _ => None,
            }
        }
        "redirected_statement" => {
            let body = statement.child_by_field_name("body")?;
            let mut c = statement.walk();
            let redirects: Vec<Node<'_>> = statement
                .children_by_field_name("redirect", &mut c)
                .collect();
            let [heredoc] = redirects.as_slice() else {
                return None;
            };
            if heredoc.kind() != "heredoc_redirect" {
                return None;
            }
            let mut hc = heredoc.walk();
            let parts: Vec<Node<'_>> = heredoc.named_children(&mut hc).collect();
            let [start, body_node, end] = parts.as_slice() else {
                return None;
            };
            if start.kind() != "heredoc_start"
                || body_node.kind() != "heredoc_body"
                || end.kind() != "heredoc_end"
            {
                return None;
            }
            let mut bc = body_node.walk();
            if body_node
                .named_children(&mut bc)
                .any(|n| n.kind() != "heredoc_content")
            {
                return None;
            }
            let patch = text(*body_node).trim_end_matches('\n').to_string();
            let folder = match body.kind() {
                "command" => {
                    let words = simple_words(body, src)?;
                    (words.len() == 1 && NAMES.contains(&words[0].as_str())).then_some(None)?
                }
                "list" => cd_then_apply(body, src)?,
                _ => return None,
            };
            Some(Invocation { patch, folder })
        }
        _ => None,
    }
}

/// `cd DIR && apply_patch`: the folder.
fn cd_then_apply(list: Node<'_>, src: &str) -> Option<Option<String>> {
    let mut c = list.walk();
    let children: Vec<Node<'_>> = list.children(&mut c).collect();
    let [cd, op, apply] = children.as_slice() else {
        return None;
    };
    if op.kind() != "&&" || cd.kind() != "command" || apply.kind() != "command" {
        return None;
    }
    let cd_words = simple_words(*cd, src)?;
    let apply_words = simple_words(*apply, src)?;
    match (cd_words.as_slice(), apply_words.as_slice()) {
        ([c, dir], [a]) if c == "cd" && NAMES.contains(&a.as_str()) => Some(Some(dir.clone())),
        _ => None,
    }
}

/// The words of a simple command when every one is known now (no assignments, no
/// redirections inside).
fn simple_words(node: Node<'_>, src: &str) -> Option<Vec<String>> {
    let ctx = Context::new("", None);
    let exp = Expander {
        src,
        ctx: &ctx,
        cwd: None,
    };
    let mut c = node.walk();
    let mut out = Vec::new();
    for child in node.named_children(&mut c) {
        let n = match child.kind() {
            "command_name" => child.named_child(0)?,
            "comment" => continue,
            "variable_assignment"
            | "file_redirect"
            | "heredoc_redirect"
            | "herestring_redirect" => return None,
            _ => child,
        };
        match exp.word(n) {
            Word::Lit(s) => out.push(s),
            _ => return None,
        }
    }
    Some(out)
}

/// `apply_patch` as a shell command: the highest rating of the writes and deletes of its files,
/// each rated as a file write (or `rm`) of that path from the shell's current folder.
pub(crate) fn rate_command(args: &[Word], stdin: &Stdin, exp: &Expander<'_>) -> Verdict {
    let mut v = Verdict::default();
    let text = match (args, stdin) {
        ([Word::Lit(p)], _) => p.as_str(),
        ([], Stdin::Text(t)) => t.as_str(),
        _ => {
            v.add(Risk::High, &say::PATCH_UNKNOWN);
            return v;
        }
    };
    let patch = match parse(text) {
        Ok(p) if !p.files.is_empty() => p,
        Ok(_) => {
            v.add(Risk::High, &say::PATCH_CHANGES_NOTHING);
            return v;
        }
        Err(e) => {
            v.add(Risk::High, say::PATCH_UNPARSABLE.with("line", e.line));
            return v;
        }
    };
    v.add(
        Risk::Moderate,
        say::APPLIES_PATCH.with("files", patch.files.len()),
    );
    // A path with no folder to resolve it against (after `cd "$X"`) is rated as relative to
    // none.
    let unanchored = Context {
        cwd: Default::default(),
        ..exp.ctx.clone()
    };
    for f in &patch.files {
        let (delete, write) = match (f.op, &f.move_to) {
            (Op::Delete, _) => (Some(&f.path), None),
            (Op::Update, Some(to)) => (Some(&f.path), Some(to)),
            (Op::Add | Op::Update, None) => (None, Some(&f.path)),
            (Op::Add, Some(_)) => (None, Some(&f.path)),
        };
        if let Some(p) = delete {
            let word = Word::Lit(p.clone());
            let found = destroys(&[&word], &say::DELETES, false, false, exp);
            v.findings.extend(found.findings);
        }
        if let Some(p) = write {
            let rated = match exp.resolve(p) {
                Some(abs) => classify_write_path(&abs.to_string_lossy(), exp.ctx),
                None => classify_write_path(p, &unanchored),
            };
            for r in rated.reasons {
                v.findings.push((r.risk, r.message));
            }
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    const FULL: &str = "*** Begin Patch\n*** Add File: docs/a.md\n+one\n+two\n*** Delete File: old.txt\n\
                        *** Update File: src/x.rs\n*** Move to: src/y.rs\n@@ fn f()\n-a\n+b\n+c\n \
                        ctx\n@@\n-d\n*** End of File\n*** Update File: z.txt\n only\n+added\n\
                        *** End Patch";

    #[test]
    fn every_file_with_its_operation_move_and_hunk_summary() {
        let p = parse(FULL).unwrap();
        type Row<'a> = (&'a str, Op, Option<&'a str>, usize, usize, usize);
        let summary: Vec<Row<'_>> = p
            .files
            .iter()
            .map(|f| {
                (
                    f.path.as_str(),
                    f.op,
                    f.move_to.as_deref(),
                    f.hunks,
                    f.added,
                    f.removed,
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                ("docs/a.md", Op::Add, None, 1, 2, 0),
                ("old.txt", Op::Delete, None, 0, 0, 0),
                ("src/x.rs", Op::Update, Some("src/y.rs"), 2, 2, 2),
                ("z.txt", Op::Update, None, 1, 1, 0),
            ]
        );
    }

    #[test]
    fn markers_may_be_padded_and_a_here_document_unwrapped() {
        let padded = "  *** Begin Patch \n*** Add File: a\n+x\n *** End Patch  \n";
        assert_eq!(parse(padded).unwrap().files.len(), 1);
        let wrapped = "<<'EOF'\n*** Begin Patch\n*** Delete File: a\n*** End Patch\nEOF\n";
        assert_eq!(parse(wrapped).unwrap().files[0].op, Op::Delete);
        assert!(
            parse("*** Begin Patch\n*** End Patch")
                .unwrap()
                .files
                .is_empty()
        );
    }

    #[test]
    fn what_codex_refuses_is_refused_with_its_line() {
        for (text, line) in [
            ("bad", 1),
            ("*** Begin Patch\n*** Add File: a\n+x", 3),
            ("*** Begin Patch\n*** Frobnicate File: a\n*** End Patch", 2),
            ("*** Begin Patch\n*** Update File: a\n*** End Patch", 2),
            ("*** Begin Patch\n*** Update File: a\n@@\n*** End Patch", 4),
            (
                "*** Begin Patch\n*** Update File: a\n@@\n-x\nbad\n@@\n*** End Patch",
                5,
            ),
            ("*** Begin Patch\n*** Update File: a\nbad\n*** End Patch", 3),
            ("*** Begin Patch\n*** Add File: \n+x\n*** End Patch", 2),
        ] {
            let e = parse(text).unwrap_err();
            assert_eq!(e.line, line, "{text:?}: {e}");
        }
    }

    #[test]
    fn codex_s_shell_forms_are_recognized() {
        let body = "*** Begin Patch\n*** Add File: a\n+x\n*** End Patch";
        let inv = invocation(&format!("apply_patch <<'EOF'\n{body}\nEOF\n")).unwrap();
        assert_eq!(
            inv,
            Invocation {
                patch: body.into(),
                folder: None
            }
        );
        let inv = invocation(&format!("cd sub/dir && apply_patch <<'EOF'\n{body}\nEOF")).unwrap();
        assert_eq!(inv.folder.as_deref(), Some("sub/dir"));
        let inv = invocation(&format!("cd 'a b' && applypatch <<\"EOF\"\n{body}\nEOF")).unwrap();
        assert_eq!(inv.folder.as_deref(), Some("a b"));
        let inv = invocation(&format!("apply_patch '{body}'")).unwrap();
        assert_eq!(inv.patch, body);
        for other in [
            format!("echo hi; apply_patch <<'EOF'\n{body}\nEOF"),
            format!("apply_patch <<'EOF' && rm -rf ~\n{body}\nEOF"),
            format!("cd a || apply_patch <<'EOF'\n{body}\nEOF"),
            format!("cd $D && apply_patch <<'EOF'\n{body}\nEOF"),
            "apply_patch <<EOF\n*** Begin Patch\n*** Add File: $HOME/x\n+x\n*** End Patch\nEOF"
                .to_string(),
            "apply_patch \"$(cat p)\"".to_string(),
            "git status".to_string(),
        ] {
            assert_eq!(invocation(&other), None, "{other}");
        }
    }
}
