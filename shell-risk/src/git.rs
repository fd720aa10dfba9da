//! git by subcommand: read-only ones are Safe; force pushes, hard resets, cleans, discarding
//! checkouts and history rewrites are High; configuration that runs commands is High.

use crate::Risk;
use crate::rules::{Inner, Verdict, has_flag, operands};
use crate::words::Word;

/// Git configuration keys whose value git runs as a command.
#[rustfmt::skip]
const GIT_COMMAND_KEYS: &[&str] = &[
    "core.pager",
    "core.editor",
    "core.sshcommand",
    "core.hookspath",
    "core.fsmonitor",
    "core.gitproxy",
    "diff.external",
    "sequence.editor",
    "credential.helper",
    "alias.",
];

#[rustfmt::skip]
const GIT_READ_ONLY: &[&str] = &[
    "status",
    "diff",
    "log",
    "show",
    "blame",
    "annotate",
    "rev-parse",
    "describe",
    "ls-files",
    "ls-tree",
    "ls-remote",
    "shortlog",
    "grep",
    "cat-file",
    "merge-base",
    "rev-list",
    "whatchanged",
    "count-objects",
    "version",
    "help",
    "show-ref",
    "for-each-ref",
    "name-rev",
    "var",
    "check-ignore",
    "cherry",
    "diff-tree",
    "diff-index",
    "diff-files",
    "verify-commit",
    "show-branch",
    "range-diff",
];

pub(crate) fn git(args: &[Word]) -> Verdict {
    let mut v = Verdict::default();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        match a.lit() {
            Some("-C" | "--git-dir" | "--work-tree" | "--namespace") => i += 2,
            Some("-c") => {
                let key = args
                    .get(i + 1)
                    .map(Word::text)
                    .unwrap_or("")
                    .to_ascii_lowercase();
                if GIT_COMMAND_KEYS.iter().any(|k| key.starts_with(k)) {
                    v.add(Risk::High, "sets git configuration that runs a command");
                } else {
                    v.add(Risk::Moderate, "overrides git configuration");
                }
                i += 2;
            }
            Some(s) if s.starts_with('-') => i += 1,
            _ => break,
        }
    }
    let Some(sub) = args.get(i).and_then(Word::lit) else {
        v.add(
            Risk::Moderate,
            "runs git with a subcommand known only when it runs",
        );
        return v;
    };
    let rest = args.get(i + 1..).unwrap_or(&[]);
    let (risk, why) = subcommand(sub, rest, &mut v);
    v.add(risk, why);
    v
}

/// The level of `git SUB REST…`.
fn subcommand(sub: &str, rest: &[Word], v: &mut Verdict) -> (Risk, String) {
    let (ops, flags) = operands(rest);
    let lits: Vec<&str> = rest.iter().filter_map(Word::lit).collect();
    let high = |why: &str| (Risk::High, why.to_string());
    match sub {
        s if GIT_READ_ONLY.contains(&s) => {
            if flags
                .iter()
                .any(|f| f.starts_with("--output") || *f == "--ext-diff")
            {
                (
                    Risk::Moderate,
                    "writes git output to a file or runs an external diff".into(),
                )
            } else {
                (Risk::Safe, format!("only reads (git {s})"))
            }
        }
        "branch" => branch(&ops, &flags, &lits),
        "tag" | "remote" | "worktree" | "stash" | "reflog" | "submodule" | "notes" => {
            listing(sub, &ops, &flags, &lits, v)
        }
        "config" => config(&ops, &flags),
        "push" => push(&ops, &flags),
        "reset" if lits.contains(&"--hard") => {
            high("throws away uncommitted changes (git reset --hard)")
        }
        "clean" if has_flag(&flags, 'n', &["dry-run"]) => (
            Risk::Safe,
            "only lists what it would delete (git clean -n)".into(),
        ),
        "clean" if has_flag(&flags, 'f', &["force"]) => {
            high("deletes untracked files beyond recovery (git clean)")
        }
        "checkout"
            if lits.contains(&"--") || lits.contains(&".") || has_flag(&flags, 'f', &["force"]) =>
        {
            high("discards uncommitted changes (git checkout)")
        }
        "restore"
            if !(lits.contains(&"--staged")
                && flags.iter().all(|f| matches!(*f, "--staged" | "-S"))) =>
        {
            high("discards uncommitted changes (git restore)")
        }
        "switch"
            if lits
                .iter()
                .any(|l| matches!(*l, "--discard-changes" | "-f" | "--force")) =>
        {
            high("discards uncommitted changes (git switch)")
        }
        "filter-branch" | "filter-repo" => high("rewrites the repository's history"),
        "gc" if lits.iter().any(|l| l.starts_with("--prune")) => {
            high("destroys unreachable commits (git gc --prune)")
        }
        "update-ref" if lits.contains(&"-d") => high("deletes a reference"),
        _ => (
            Risk::Moderate,
            format!("changes the repository or talks to a remote (git {sub})"),
        ),
    }
}

fn branch(ops: &[&Word], flags: &[&str], lits: &[&str]) -> (Risk, String) {
    let deleting = has_flag(flags, 'd', &["delete"]);
    if has_flag(flags, 'D', &[]) || (deleting && has_flag(flags, 'f', &["force"])) {
        return (
            Risk::High,
            "deletes a branch even if it is not merged".into(),
        );
    }
    let changes = deleting
        || has_flag(flags, 'm', &["move"])
        || has_flag(flags, 'M', &[])
        || has_flag(flags, 'c', &["copy"]);
    let lists = ["--list", "-l", "--show-current", "--contains", "--merged"];
    if (ops.is_empty() && !changes) || lists.iter().any(|l| lits.contains(l)) {
        (Risk::Safe, "only reads (git branch)".into())
    } else {
        (Risk::Moderate, "changes branches".into())
    }
}

/// Subcommands that list by default and change things with a verb or a flag.
fn listing(
    sub: &str,
    ops: &[&Word],
    flags: &[&str],
    lits: &[&str],
    v: &mut Verdict,
) -> (Risk, String) {
    let first = ops.first().and_then(|w| w.lit());
    let reads = (Risk::Safe, format!("only reads (git {sub})"));
    match (sub, first) {
        ("stash", Some("clear" | "drop")) => (Risk::High, "throws away stashed changes".into()),
        ("reflog", Some("expire" | "delete")) => {
            (Risk::High, "destroys the record of past commits".into())
        }
        ("submodule", Some("foreach")) => {
            let code: Vec<&str> = ops.iter().skip(1).map(|w| w.text()).collect();
            v.inner.push(Inner::Code(code.join(" ")));
            (Risk::Moderate, "runs a command in every submodule".into())
        }
        ("tag", _)
            if flags
                .iter()
                .any(|f| matches!(*f, "-d" | "--delete" | "-a" | "-s" | "-f")) =>
        {
            (Risk::Moderate, "changes tags".into())
        }
        ("tag", _) if lits.contains(&"-l") || lits.contains(&"--list") => reads,
        ("tag" | "remote" | "reflog" | "submodule" | "notes", None)
        | ("stash", Some("list" | "show"))
        | ("reflog", Some("show"))
        | ("worktree", Some("list"))
        | ("submodule", Some("status"))
        | ("notes", Some("list" | "show"))
        | ("remote", Some("show" | "get-url")) => reads,
        _ => (
            Risk::Moderate,
            format!("changes the repository (git {sub})"),
        ),
    }
}

fn config(ops: &[&Word], flags: &[&str]) -> (Risk, String) {
    let reads = flags
        .iter()
        .any(|f| f.starts_with("--get") || matches!(*f, "--list" | "-l"))
        || matches!(ops.first().and_then(|w| w.lit()), Some("get" | "list"))
        || (ops.len() == 1
            && !flags
                .iter()
                .any(|f| f.starts_with("--unset") || *f == "--add"));
    let key = ops
        .first()
        .map(|w| w.text().to_ascii_lowercase())
        .unwrap_or_default();
    if reads {
        (Risk::Safe, "only reads (git config)".into())
    } else if GIT_COMMAND_KEYS.iter().any(|k| key.starts_with(k)) {
        (
            Risk::High,
            "sets git configuration that runs a command".into(),
        )
    } else {
        (Risk::Moderate, "changes git configuration".into())
    }
}

fn push(ops: &[&Word], flags: &[&str]) -> (Risk, String) {
    let forced = flags.iter().any(|f| {
        matches!(
            *f,
            "-f" | "--force" | "--mirror" | "--delete" | "-d" | "--prune" | "--force-if-includes"
        ) || f.starts_with("--force-with-lease")
            || (!f.starts_with("--") && f.contains('f'))
    }) || ops.iter().any(|o| {
        o.lit()
            .is_some_and(|s| s.starts_with('+') || s.starts_with(':'))
    });
    if forced {
        (
            Risk::High,
            "force-pushes or deletes on the remote: rewrites shared history".into(),
        )
    } else {
        (Risk::Moderate, "publishes commits to a remote".into())
    }
}
