//! A Codex patch as the files it touches: a shell call that only runs `apply_patch` (as Codex
//! sends every edit: `apply_patch <<'EOF' …`, maybe after `cd DIR &&`), or Codex's own
//! `apply_patch` tool, becomes one intent per file — `file.write` for an added or updated file,
//! `agent.file.delete` for a deleted one, both for a move — each rated by the gate by its path,
//! with what the patch does to the file (`patch`) for the dialog. A patch that cannot be read
//! stays a shell command, which the gate rates High.

use std::path::{Component, Path, PathBuf};

use pcp_protocol::Submission;
use pcp_shell_risk::patch::{self, FileChange, Op, Patch};
use serde_json::{Value, json};

/// The intents of the patch `command` runs in the folder `start`, when it is a shell command
/// that runs a patch and nothing else and the patch can be read; `None` otherwise (it is then
/// rated as a command). `cwd` is the harness's working folder (`None`: unknown), which the gate
/// rates each path against.
pub fn from_command(command: &str, cwd: Option<&Path>, start: &Path) -> Option<Vec<Submission>> {
    // Only a command that names the program is parsed again.
    if !command.contains("apply_patch") && !command.contains("applypatch") {
        return None;
    }
    let invocation = patch::invocation(command)?;
    let parsed = patch::parse(&invocation.patch).ok()?;
    let base = match invocation.folder {
        Some(f) => start.join(f),
        None => start.to_path_buf(),
    };
    intents(&parsed, cwd, &base)
}

/// The intents of the patch text `text` applied in the folder `start`, or `None` when it cannot
/// be read; `cwd` as [`from_command`] takes it.
pub fn from_text(text: &str, cwd: Option<&Path>, start: &Path) -> Option<Vec<Submission>> {
    let parsed = patch::parse(text).ok()?;
    intents(&parsed, cwd, start)
}

/// One intent per file the patch touches, its paths resolved in `base`; `None` for a patch that
/// touches none.
fn intents(p: &Patch, cwd: Option<&Path>, base: &Path) -> Option<Vec<Submission>> {
    if p.files.is_empty() {
        return None;
    }
    let cwd_value = cwd.map_or(Value::Null, |c| Value::from(c.to_string_lossy()));
    let path_of = |p: &str| -> String { normalize(&base.join(p)).to_string_lossy().into_owned() };
    let mut out = Vec::new();
    for f in &p.files {
        let delete = |path: &str| {
            submission(
                "agent.file.delete",
                json!({"path": path_of(path), "cwd": cwd_value.clone()}),
            )
        };
        let write = |path: &str, summary: String| {
            submission(
                "file.write",
                json!({"path": path_of(path), "cwd": cwd_value.clone(), "patch": summary}),
            )
        };
        match (f.op, &f.move_to) {
            (Op::Delete, _) => out.push(delete(&f.path)),
            (Op::Update, Some(to)) => {
                out.push(delete(&f.path));
                out.push(write(to, summary(f)));
            }
            (Op::Add | Op::Update, _) => out.push(write(&f.path, summary(f))),
        }
    }
    Some(out)
}

/// What the patch does to one file, for the dialog: `add: 12 lines`, `update: 2 hunks, +5 -3`,
/// `move from src/a.rs: 1 hunk, +1 -1`.
pub fn summary(f: &FileChange) -> String {
    let lines = |n: usize| {
        if n == 1 {
            "1 line".to_string()
        } else {
            format!("{n} lines")
        }
    };
    let hunks = |n: usize| {
        if n == 1 {
            "1 hunk".to_string()
        } else {
            format!("{n} hunks")
        }
    };
    match (f.op, &f.move_to) {
        (Op::Add, _) => format!("add: {}", lines(f.added)),
        (Op::Update, Some(_)) => format!(
            "move from {}: {}, +{} -{}",
            f.path,
            hunks(f.hunks),
            f.added,
            f.removed
        ),
        (Op::Update, None) => format!("update: {}, +{} -{}", hunks(f.hunks), f.added, f.removed),
        (Op::Delete, _) => "delete".to_string(),
    }
}

fn submission(capability: &str, params: Value) -> Submission {
    Submission {
        capability: capability.to_string(),
        params,
        target: None,
        steps: Vec::new(),
    }
}

/// Folds `.` and `..` lexically (nothing is read from disk), keeping a relative path relative.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                if !out.pop() && !path.is_absolute() {
                    out.push("..");
                }
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caps_and_paths(subs: &[Submission]) -> Vec<(String, String)> {
        subs.iter()
            .map(|s| {
                (
                    s.capability.clone(),
                    s.params["path"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect()
    }

    const PATCH: &str = "*** Begin Patch\n*** Update File: src/a.rs\n@@\n-x\n+y\n+z\n*** Add File: \
                         b.txt\n+1\n*** Delete File: old.txt\n*** Update File: m.rs\n*** Move to: \
                         n.rs\n@@\n-a\n+b\n*** End Patch";

    #[test]
    fn one_intent_per_file_with_its_summary() {
        let command = format!("apply_patch <<'EOF'\n{PATCH}\nEOF\n");
        let subs = from_command(&command, Some(Path::new("/p")), Path::new("/p")).unwrap();
        assert_eq!(
            caps_and_paths(&subs),
            [
                ("file.write".into(), "/p/src/a.rs".into()),
                ("file.write".into(), "/p/b.txt".into()),
                ("agent.file.delete".into(), "/p/old.txt".into()),
                ("agent.file.delete".into(), "/p/m.rs".into()),
                ("file.write".into(), "/p/n.rs".into()),
            ]
        );
        assert_eq!(subs[0].params["patch"], "update: 1 hunk, +2 -1");
        assert_eq!(subs[1].params["patch"], "add: 1 line");
        assert_eq!(subs[4].params["patch"], "move from m.rs: 1 hunk, +1 -1");
        assert_eq!(subs[0].params["cwd"], "/p");
    }

    #[test]
    fn the_folder_a_patch_applies_in_moves_its_paths_not_the_working_folder() {
        let body = "*** Begin Patch\n*** Update File: x.txt\n@@\n-a\n+b\n*** End Patch";
        let project = Path::new("/p/proj");
        let subs = from_command(
            &format!("cd ../other && apply_patch <<'EOF'\n{body}\nEOF"),
            Some(project),
            project,
        )
        .unwrap();
        assert_eq!(subs[0].params["path"], "/p/other/x.txt");
        assert_eq!(subs[0].params["cwd"], "/p/proj");
        // A call that starts elsewhere (Codex's workdir) moves the paths, not the working folder.
        let command = format!("apply_patch <<'EOF'\n{body}\nEOF");
        let subs = from_command(&command, Some(project), Path::new("/")).unwrap();
        assert_eq!(subs[0].params["path"], "/x.txt");
        assert_eq!(subs[0].params["cwd"], "/p/proj");
        let unknown = from_command(&command, None, Path::new("/q")).unwrap();
        assert_eq!(unknown[0].params["cwd"], Value::Null);
        assert_eq!(unknown[0].params["path"], "/q/x.txt");
    }

    #[test]
    fn anything_else_is_left_to_the_shell_rater() {
        for command in [
            "apply_patch <<'EOF'\nnot a patch\nEOF",
            "apply_patch <<'EOF'\n*** Begin Patch\n*** End Patch\nEOF",
            "apply_patch <<'EOF' && rm -rf ~\n*** Begin Patch\n*** Delete File: a\n*** End Patch\nEOF",
            "echo apply_patch",
            "git status",
        ] {
            let p = Path::new("/p");
            assert!(from_command(command, Some(p), p).is_none(), "{command}");
        }
    }
}
