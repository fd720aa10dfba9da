//! git by subcommand: read-only ones are Safe; force pushes, hard resets, cleans, discarding
//! checkouts and history rewrites are High; configuration that runs commands is High.

use crate::Risk;
use crate::message::Message;
use crate::phrases as say;
use crate::rules::{Inner, Verdict, has_flag, operands};
use crate::words::Word;

/// Git configuration keys whose value git runs as a command.
#[rustfmt::skip]
const GIT_COMMAND_KEYS: &[&str] = &[
    "core.pager",
    "core.editor",
    "core.sshcommand",
    "core.hookspath",
    "init.templatedir",
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
                    v.add(Risk::High, &say::SETS_GIT_COMMAND_CONFIG);
                } else {
                    v.add(Risk::Moderate, &say::OVERRIDES_GIT_CONFIG);
                }
                i += 2;
            }
            Some(s) if s.starts_with('-') => i += 1,
            _ => break,
        }
    }
    let Some(sub) = args.get(i).and_then(Word::lit) else {
        v.add(Risk::Moderate, &say::RUNS_DYNAMIC_GIT);
        return v;
    };
    let rest = args.get(i + 1..).unwrap_or(&[]);
    let (risk, why) = subcommand(sub, rest, &mut v);
    v.add(risk, why);
    v
}

/// The level of `git SUB REST…`.
fn subcommand(sub: &str, rest: &[Word], v: &mut Verdict) -> (Risk, Message) {
    let (ops, flags) = operands(rest);
    let lits: Vec<&str> = rest.iter().filter_map(Word::lit).collect();
    let high = |why: Message| (Risk::High, why);
    match sub {
        s if GIT_READ_ONLY.contains(&s) => {
            if flags
                .iter()
                .any(|f| f.starts_with("--output") || *f == "--ext-diff")
            {
                (Risk::Moderate, (&say::WRITES_GIT_OUTPUT).into())
            } else {
                (
                    Risk::Safe,
                    say::ONLY_READS_COMMAND.with("command", format!("git {s}")),
                )
            }
        }
        "branch" => branch(&ops, &flags, &lits),
        "tag" | "remote" | "worktree" | "stash" | "reflog" | "submodule" | "notes" => {
            listing(sub, &ops, &flags, &lits, v)
        }
        "config" => config(&ops, &flags),
        "push" => push(&ops, &flags),
        "reset" if lits.contains(&"--hard") => {
            high(say::THROWS_AWAY_CHANGES.with("command", "git reset --hard"))
        }
        "clean" if has_flag(&flags, 'n', &["dry-run"]) => (
            Risk::Safe,
            say::LISTS_WHAT_CLEAN_DELETES.with("command", "git clean -n"),
        ),
        "clean" if has_flag(&flags, 'f', &["force"]) => {
            high(say::DELETES_UNTRACKED.with("command", "git clean"))
        }
        "checkout"
            if lits.contains(&"--") || lits.contains(&".") || has_flag(&flags, 'f', &["force"]) =>
        {
            high(say::DISCARDS_CHANGES.with("command", "git checkout"))
        }
        "restore"
            if !(lits.contains(&"--staged")
                && flags.iter().all(|f| matches!(*f, "--staged" | "-S"))) =>
        {
            high(say::DISCARDS_CHANGES.with("command", "git restore"))
        }
        "switch"
            if lits
                .iter()
                .any(|l| matches!(*l, "--discard-changes" | "-f" | "--force")) =>
        {
            high(say::DISCARDS_CHANGES.with("command", "git switch"))
        }
        "filter-branch" | "filter-repo" => high((&say::REWRITES_HISTORY).into()),
        "gc" if lits.iter().any(|l| l.starts_with("--prune")) => {
            high(say::DESTROYS_UNREACHABLE.with("command", "git gc --prune"))
        }
        "update-ref" if lits.contains(&"-d") => high((&say::DELETES_REFERENCE).into()),
        _ => (
            Risk::Moderate,
            say::CHANGES_REPOSITORY_OR_REMOTE.with("command", format!("git {sub}")),
        ),
    }
}

fn branch(ops: &[&Word], flags: &[&str], lits: &[&str]) -> (Risk, Message) {
    let deleting = has_flag(flags, 'd', &["delete"]);
    if has_flag(flags, 'D', &[]) || (deleting && has_flag(flags, 'f', &["force"])) {
        return (Risk::High, (&say::DELETES_UNMERGED_BRANCH).into());
    }
    let changes = deleting
        || has_flag(flags, 'm', &["move"])
        || has_flag(flags, 'M', &[])
        || has_flag(flags, 'c', &["copy"]);
    let lists = ["--list", "-l", "--show-current", "--contains", "--merged"];
    if (ops.is_empty() && !changes) || lists.iter().any(|l| lits.contains(l)) {
        (
            Risk::Safe,
            say::ONLY_READS_COMMAND.with("command", "git branch"),
        )
    } else {
        (Risk::Moderate, (&say::CHANGES_BRANCHES).into())
    }
}

/// Subcommands that list by default and change things with a verb or a flag.
fn listing(
    sub: &str,
    ops: &[&Word],
    flags: &[&str],
    lits: &[&str],
    v: &mut Verdict,
) -> (Risk, Message) {
    let first = ops.first().and_then(|w| w.lit());
    let reads = (
        Risk::Safe,
        say::ONLY_READS_COMMAND.with("command", format!("git {sub}")),
    );
    match (sub, first) {
        ("stash", Some("clear" | "drop")) => (Risk::High, (&say::THROWS_AWAY_STASH).into()),
        ("reflog", Some("expire" | "delete")) => (Risk::High, (&say::DESTROYS_REFLOG).into()),
        ("submodule", Some("foreach")) => {
            let code: Vec<&str> = ops.iter().skip(1).map(|w| w.text()).collect();
            v.inner.push(Inner::Code(code.join(" ")));
            (Risk::Moderate, (&say::RUNS_IN_SUBMODULES).into())
        }
        ("tag", _)
            if flags
                .iter()
                .any(|f| matches!(*f, "-d" | "--delete" | "-a" | "-s" | "-f")) =>
        {
            (Risk::Moderate, (&say::CHANGES_TAGS).into())
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
            say::CHANGES_REPOSITORY.with("command", format!("git {sub}")),
        ),
    }
}

fn config(ops: &[&Word], flags: &[&str]) -> (Risk, Message) {
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
        (
            Risk::Safe,
            say::ONLY_READS_COMMAND.with("command", "git config"),
        )
    } else if GIT_COMMAND_KEYS.iter().any(|k| key.starts_with(k)) {
        (Risk::High, (&say::SETS_GIT_COMMAND_CONFIG).into())
    } else {
        (Risk::Moderate, (&say::CHANGES_GIT_CONFIG).into())
    }
}

fn push(ops: &[&Word], flags: &[&str]) -> (Risk, Message) {
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
        (Risk::High, (&say::FORCE_PUSHES).into())
    } else {
        (Risk::Moderate, (&say::PUBLISHES_COMMITS).into())
    }
}
