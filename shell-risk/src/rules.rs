//! The rules for one simple command: which command it is (through wrappers like `sudo`, `env`,
//! `xargs`), and what its arguments make of it — deleting, writing, re-owning, formatting,
//! killing, stopping services, running code it was handed. Tables of names live in
//! [`crate::commands`].

use std::path::PathBuf;

use crate::message::Message;
use crate::paths::{self, Place};
use crate::phrases as say;
use crate::words::{Expander, Word};
use crate::{Assessment, Context, Reason, Risk};
use crate::{commands, files};

/// What the command gets on standard input from its own redirections.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Stdin {
    /// Whatever the pipeline or terminal gives it.
    Inherit,
    /// A here-document or here-string known now.
    Text(String),
    /// A here-document or here-string with expansions.
    Dynamic,
    /// A file (`< file`).
    File,
}

/// Something a command runs inside itself, judged in turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Inner {
    /// Shell code (`bash -c '…'`, `eval '…'`, a here-document fed to a shell).
    Code(String),
    /// Another simple command (`sudo rm …`, `xargs rm`, `find -exec rm {} +`).
    Words(Vec<Word>),
}

/// One simple command's judgement.
#[derive(Debug, Default)]
pub(crate) struct Verdict {
    pub findings: Vec<(Risk, Message)>,
    pub inner: Vec<Inner>,
    /// It downloads (`curl`, `wget`): its output is code nobody has read.
    pub downloads: bool,
    /// It runs what arrives on standard input as code (`sh`, `python3` without a script).
    pub runs_stdin: bool,
    /// It changes the shell's folder: to a known folder, or to one only known when it runs.
    pub cd: Option<Option<PathBuf>>,
}

impl Verdict {
    pub(crate) fn add(&mut self, risk: Risk, why: impl Into<Message>) {
        self.findings.push((risk, why.into()));
    }

    pub(crate) fn safe(why: &'static say::Phrase) -> Verdict {
        let mut v = Verdict::default();
        v.add(Risk::Safe, why);
        v
    }
}

/// Variables that change what every later program loads or runs.
pub(crate) const DANGEROUS_VARIABLES: &[&str] = &[
    "LD_PRELOAD",
    "LD_LIBRARY_PATH",
    "LD_AUDIT",
    "BASH_ENV",
    "ENV",
    "PROMPT_COMMAND",
    "GIT_SSH_COMMAND",
    "GIT_EXEC_PATH",
];

/// Judges the simple command `words` (never empty).
pub(crate) fn assess(words: &[Word], stdin: &Stdin, exp: &Expander<'_>) -> Verdict {
    let Some(first) = words.first() else {
        return Verdict::default();
    };
    let raw = match first {
        Word::Lit(s) => s.as_str(),
        Word::Fetched(_) => {
            let mut v = Verdict::default();
            v.add(Risk::Critical, &say::RUNS_DOWNLOADED_PROGRAM_NAME);
            return v;
        }
        Word::Dyn(_) => {
            let mut v = Verdict::default();
            v.add(Risk::High, &say::RUNS_DYNAMIC_COMMAND_NAME);
            return v;
        }
    };
    let name = raw.rsplit('/').next().unwrap_or(raw);
    if raw.contains('/') && !raw.starts_with('/') {
        let mut v = Verdict::default();
        v.add(
            Risk::Moderate,
            say::RUNS_PROGRAM_FROM_FOLDER.with("program", raw),
        );
        return v;
    }
    let args = &words[1..];
    if let Some(v) = commands::wrapper(name, args) {
        return v;
    }
    let mut v = match commands::interpreter(name, args, stdin, exp) {
        Some(v) => v,
        None => by_name(name, args, stdin, exp),
    };
    crate::exposure::add(&mut v, name, args, exp);
    v
}

/// The rules of the command `name` that is neither a wrapper nor an interpreter.
fn by_name(name: &str, args: &[Word], stdin: &Stdin, exp: &Expander<'_>) -> Verdict {
    match name {
        "rm" | "unlink" | "shred" | "srm" => deletion(name, args, exp),
        "rmdir" => {
            let mut v = Verdict::default();
            v.add(Risk::Moderate, &say::REMOVES_EMPTY_FOLDERS);
            v
        }
        "cd" | "pushd" => change_folder(args, exp),
        "popd" => Verdict {
            cd: Some(None),
            ..Verdict::safe(&say::CHANGES_SHELL_FOLDER)
        },
        "dd" => files::dd(args, exp),
        "chmod" | "chown" | "chgrp" | "chattr" | "setfacl" => files::permissions(name, args, exp),
        "cp" | "mv" | "install" | "ln" => files::copy_like(name, args, exp),
        "tee" => files::tee(args, exp),
        "find" => crate::readonly::find(args, exp),
        "kill" => files::kill(args),
        "eval" => eval(args),
        "source" | "." => source(args),
        "apply_patch" | "applypatch" => crate::patch::rate_command(args, stdin, exp),
        _ => crate::system::by_name(name, args, exp),
    }
}

/// `eval`: its arguments joined are shell code, judged when known now.
fn eval(args: &[Word]) -> Verdict {
    let mut v = Verdict::default();
    if args.iter().any(|a| matches!(a, Word::Fetched(_))) {
        v.add(Risk::Critical, &say::EVALUATES_DOWNLOADED_CODE);
    } else if args.iter().all(|a| a.lit().is_some()) {
        let code: Vec<&str> = args.iter().map(Word::text).collect();
        v.inner.push(Inner::Code(code.join(" ")));
    } else {
        v.add(Risk::High, &say::EVALUATES_DYNAMIC_CODE);
    }
    v
}

/// `source FILE` / `. FILE`: runs a script inside the current shell.
fn source(args: &[Word]) -> Verdict {
    let mut v = Verdict::default();
    match args.first() {
        Some(Word::Fetched(_)) => v.add(Risk::Critical, &say::SOURCES_DOWNLOADED_SCRIPT),
        Some(w) => v.add(Risk::Moderate, say::SOURCES_SCRIPT.with("script", w.text())),
        None => v.add(Risk::Moderate, &say::SOURCE_WITHOUT_FILE),
    }
    v
}

fn change_folder(args: &[Word], exp: &Expander<'_>) -> Verdict {
    let target = args
        .iter()
        .find(|a| a.lit().is_none_or(|s| !s.starts_with('-') || s == "-"));
    let cd = match target {
        None => exp.ctx.home.clone(),
        Some(Word::Lit(s)) if s != "-" => exp.resolve(s),
        Some(_) => None,
    };
    Verdict {
        cd: Some(cd),
        ..Verdict::safe(&say::CHANGES_SHELL_FOLDER)
    }
}

/// Splits arguments into option words and operands (after `--` everything is an operand).
pub(crate) fn operands(args: &[Word]) -> (Vec<&Word>, Vec<&str>) {
    let mut ops = Vec::new();
    let mut flags = Vec::new();
    let mut done = false;
    for a in args {
        match a.lit() {
            Some("--") if !done => done = true,
            Some(s) if !done && s.starts_with('-') && s.len() > 1 => flags.push(s),
            _ => ops.push(a),
        }
    }
    (ops, flags)
}

/// Whether `flags` hold the short option `short` (alone or in a cluster) or one of `long`.
pub(crate) fn has_flag(flags: &[&str], short: char, long: &[&str]) -> bool {
    flags.iter().any(|f| {
        if let Some(l) = f.strip_prefix("--") {
            let name = l.split('=').next().unwrap_or(l);
            long.contains(&name)
        } else {
            f.strip_prefix('-').is_some_and(|s| s.contains(short))
        }
    })
}

fn deletion(name: &str, args: &[Word], exp: &Expander<'_>) -> Verdict {
    let (targets, flags) = operands(args);
    let recursive =
        name == "rm" && (has_flag(&flags, 'r', &["recursive"]) || has_flag(&flags, 'R', &[]));
    let forced = has_flag(&flags, 'f', &["force"]);
    let shred = matches!(name, "shred" | "srm");
    let how = match (recursive, forced) {
        (true, true) => &say::DELETES_RECURSIVELY_WITHOUT_ASKING,
        (true, false) => &say::DELETES_RECURSIVELY,
        (false, true) => &say::DELETES_WITHOUT_ASKING,
        (false, false) => &say::DELETES,
    };
    let how = if shred { &say::SHREDS } else { how };
    destroys(&targets, how, recursive, shred, exp)
}

/// The findings for destroying `targets` (deleting, shredding, emptying): Moderate inside the
/// working folder, High outside it, Critical for `/`, the home folder and whole system folders.
/// `shred` makes even a file inside the working folder High.
pub(crate) fn destroys(
    targets: &[&Word],
    how: &'static say::Phrase,
    recursive: bool,
    shred: bool,
    exp: &Expander<'_>,
) -> Verdict {
    let mut v = Verdict::default();
    if targets.is_empty() {
        v.add(Risk::Moderate, &say::DELETES_NOTHING_NAMED);
    }
    for &t in targets {
        let Some(text) = t.lit() else {
            // Which files go is decided when it runs: nobody can review it now.
            v.add(
                Risk::High,
                say::DELETES_DYNAMIC_PATHS
                    .with_phrase("how", how)
                    .with("paths", t.text()),
            );
            continue;
        };
        let (base, glob) = paths::glob_base(text);
        let Some(path) = exp.resolve(&base) else {
            v.add(
                Risk::High,
                say::DELETES_AFTER_DYNAMIC_CD
                    .with_phrase("how", how)
                    .with("path", text),
            );
            continue;
        };
        if paths::is_block_device(&path) {
            v.add(
                Risk::Critical,
                say::DELETES_DISK_DEVICE
                    .with_phrase("how", how)
                    .with("path", path.display()),
            );
            continue;
        }
        let place = paths::place(&path, exp.ctx);
        let what = if glob {
            say::EVERYTHING_IN.with_phrase("place", place.describe())
        } else {
            place.describe().into()
        };
        let risk = match place {
            Place::Root | Place::Home => Risk::Critical,
            Place::System if recursive || glob => Risk::Critical,
            Place::System | Place::Startup | Place::Persistence => Risk::High,
            Place::WorkingFolder if glob => Risk::Moderate,
            Place::WorkingFolder | Place::Dotfile | Place::Outside => Risk::High,
            Place::Inside if shred => Risk::High,
            Place::Inside => Risk::Moderate,
        };
        // Each of these phrases starts with `{how}`, filled once below.
        let why = match place {
            Place::Inside | Place::WorkingFolder if risk == Risk::Moderate => {
                say::DELETES_INSIDE_WORKING_FOLDER.with("path", text)
            }
            Place::Outside if glob => say::DELETES_EVERYTHING_OUTSIDE.with("path", path.display()),
            Place::Outside => say::DELETES_OUTSIDE.with("path", path.display()),
            Place::Dotfile | Place::Startup | Place::Persistence => say::DELETES_PLACE_OUTSIDE
                .with_phrase("what", what)
                .with("path", path.display()),
            _ => say::DELETES_PLACE
                .with_phrase("what", what)
                .with("path", path.display()),
        }
        .with_phrase("how", how);
        v.add(risk, why);
    }
    v
}

/// The finding for a write to `word` (a redirection, `tee`, `cp`'s destination, `dd of=`), or
/// `None` when the write is harmless (`/dev/null`).
pub(crate) fn write_finding(
    word: &Word,
    append: bool,
    exp: &Expander<'_>,
) -> Option<(Risk, Message)> {
    let verb = if append {
        &say::APPENDS_TO
    } else {
        &say::OVERWRITES
    };
    let text = match word {
        Word::Lit(s) => s,
        _ => {
            return Some((
                Risk::Moderate,
                say::WRITES_DYNAMIC_FILE.with("file", word.text()),
            ));
        }
    };
    let Some(path) = exp.resolve(text) else {
        return Some((
            Risk::Moderate,
            say::WRITES_IN_DYNAMIC_FOLDER.with("file", text),
        ));
    };
    if paths::is_harmless_device(&path) {
        return None;
    }
    if paths::is_block_device(&path) {
        return Some((
            Risk::Critical,
            say::WRITES_DISK_DEVICE.with("path", path.display()),
        ));
    }
    let place = paths::place(&path, exp.ctx);
    let shown = path.display();
    Some(match place {
        Place::Root | Place::System => (
            Risk::Critical,
            say::WRITES_SYSTEM_FOLDER.with("path", shown),
        ),
        Place::Startup if !append => (
            Risk::Critical,
            say::WRITES_STARTUP_FILE
                .with_phrase("verb", verb)
                .with("path", shown),
        ),
        Place::Startup => (
            Risk::High,
            say::WRITES_STARTUP_FILE
                .with_phrase("verb", verb)
                .with("path", shown),
        ),
        Place::Persistence => (
            Risk::High,
            say::WRITES_PERSISTENCE
                .with_phrase("verb", verb)
                .with("path", shown),
        ),
        Place::Dotfile | Place::Home => (
            Risk::High,
            say::WRITES_DOTFILE_OUTSIDE
                .with_phrase("verb", verb)
                .with("path", shown),
        ),
        Place::Outside => (Risk::Moderate, say::WRITES_OUTSIDE.with("path", shown)),
        Place::Inside | Place::WorkingFolder => (
            Risk::Moderate,
            say::WRITES_IN_WORKING_FOLDER.with("path", text),
        ),
    })
}

/// An edit tool's write to `path`: Moderate inside the working folder (High for a dotfile
/// there), High outside it or for a dotfile or configuration file, Critical for a system folder,
/// a disk device or a shell start-up file.
pub(crate) fn classify_write_path(path: &str, ctx: &Context) -> Assessment {
    let has_cwd = !ctx.cwd.as_os_str().is_empty();
    let exp = Expander {
        src: "",
        ctx,
        cwd: has_cwd.then_some(ctx.cwd.as_path()),
    };
    let expanded = match (path.strip_prefix("~/"), &ctx.home) {
        (Some(rest), Some(home)) => home.join(rest).to_string_lossy().into_owned(),
        _ => path.to_string(),
    };
    let (mut risk, mut why) = write_finding(&Word::Lit(expanded.clone()), false, &exp)
        .unwrap_or((Risk::Moderate, Message::from(&say::WRITES_A_FILE)));
    let inside = |p: &std::path::Path| has_cwd && p.starts_with(&ctx.cwd);
    if path.trim().is_empty() {
        (risk, why) = (Risk::High, Message::from(&say::NAMES_NO_FILE));
    } else if !expanded.starts_with('/') && !has_cwd {
        (risk, why) = (
            Risk::High,
            say::WRITES_RELATIVE_TO_NOTHING.with("path", path),
        );
    } else if risk == Risk::Moderate {
        let resolved = paths::resolve(&ctx.cwd, &expanded);
        let dotted = resolved.strip_prefix(&ctx.cwd).is_ok_and(|rel| {
            rel.components()
                .any(|c| c.as_os_str().to_string_lossy().starts_with('.'))
        });
        if inside(&resolved) && dotted {
            (risk, why) = (Risk::High, say::WRITES_DOTFILE.with("path", path));
        } else if has_cwd && !inside(&resolved) {
            risk = Risk::High;
        }
    }
    Assessment {
        risk,
        reasons: vec![Reason::new(risk, path.to_string(), why)],
    }
}
