//! What an agent's own tools touch, rated by path: a read (`Read`, `Grep`, `Glob`, `LS`,
//! Gemini's `read_file`, …) is Safe inside the working folder, Moderate outside it (the CLI
//! itself would have asked there, and a hook's answer must not skip that), and High when it
//! reads a secret or a folder holding one; a deletion (a Codex patch's `*** Delete File:`) is
//! rated as `rm` of the same file would be.

use std::path::PathBuf;

use crate::glob::components;
use crate::paths::{self, Place};
use crate::phrases as say;
use crate::rules::destroys;
use crate::words::{Expander, Word};
use crate::{Assessment, Context, Reason, Risk};

/// How a read tool reads what it names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadKind {
    /// The contents of one file (`Read`, `read_file`).
    File,
    /// The contents of everything under a folder (`Grep`, `search_file_content`).
    Tree,
    /// Names only (`Glob`, `LS`, `list_directory`).
    Names,
}

impl ReadKind {
    /// `file`, `tree` or `names`.
    pub fn parse(text: &str) -> Option<ReadKind> {
        match text {
            "file" => Some(ReadKind::File),
            "tree" => Some(ReadKind::Tree),
            "names" => Some(ReadKind::Names),
            _ => None,
        }
    }
}

/// `~/x` as the home folder's `x`.
fn expand(path: &str, ctx: &Context) -> String {
    match (path.strip_prefix("~/"), &ctx.home) {
        (Some(rest), Some(home)) => home.join(rest).to_string_lossy().into_owned(),
        _ if path == "~" => ctx
            .home
            .as_ref()
            .map_or_else(|| path.to_string(), |h| h.to_string_lossy().into_owned()),
        _ => path.to_string(),
    }
}

fn one(risk: Risk, command: &str, why: impl Into<crate::Message>) -> Assessment {
    Assessment {
        risk,
        reasons: vec![Reason::new(risk, command.to_string(), why.into())],
    }
}

/// Rates a read of `path` (a file, a folder or a glob pattern) by a tool that reads it as
/// `kind`, from the working folder `ctx.cwd` (empty: unknown, so every path counts as outside).
pub fn classify_read(path: &str, kind: ReadKind, ctx: &Context) -> Assessment {
    if path.trim().is_empty() {
        return one(Risk::High, path, &say::NAMES_NO_FILE);
    }
    let expanded = expand(path, ctx);
    let has_cwd = !ctx.cwd.as_os_str().is_empty();
    let (base, glob) = paths::glob_base(&expanded);
    let resolve = |p: &str| -> Option<PathBuf> {
        if p.starts_with('/') {
            Some(paths::resolve(std::path::Path::new("/"), p))
        } else if has_cwd {
            Some(paths::resolve(&ctx.cwd, p))
        } else {
            None
        }
    };
    let home = ctx.home.as_deref();
    let secrets = &ctx.secrets;
    if kind != ReadKind::Names {
        if glob && let Some(full) = resolve(&expanded) {
            if let Some(pattern) = secrets.secret_in_glob(&components(&full), home) {
                let why = say::MAY_READ_SECRET
                    .with("path", full.display())
                    .with("pattern", pattern);
                return one(Risk::High, path, why);
            }
        } else if let Some(full) = resolve(&base) {
            if secrets.secret_at(&full, home).is_some() {
                return one(
                    Risk::High,
                    path,
                    say::READS_SECRET.with("path", full.display()),
                );
            }
            if kind == ReadKind::Tree
                && let Some(pattern) = secrets.secret_under(&full, home, false)
            {
                let why = say::READS_FOLDER_WITH_SECRETS
                    .with("path", full.display())
                    .with("pattern", pattern);
                return one(Risk::High, path, why);
            }
        }
    }
    match resolve(&base) {
        Some(full) if has_cwd => {
            let place = paths::place(&full, ctx);
            if matches!(place, Place::Inside | Place::WorkingFolder) && full.starts_with(&ctx.cwd) {
                one(
                    Risk::Safe,
                    path,
                    say::READS_INSIDE.with("path", full.display()),
                )
            } else {
                one(
                    Risk::Moderate,
                    path,
                    say::READS_OUTSIDE.with("path", full.display()),
                )
            }
        }
        Some(full) => one(
            Risk::Moderate,
            path,
            say::READS_UNKNOWN_FOLDER.with("path", full.display()),
        ),
        None => one(
            Risk::Moderate,
            path,
            say::READS_UNKNOWN_FOLDER.with("path", path),
        ),
    }
}

/// Rates the deletion of one file at `path` by an agent's tool as `rm` of it would be rated
/// from `ctx.cwd`: Moderate inside the working folder, High outside it, Critical for `/` and
/// the home folder. With no working folder every path counts as outside it.
pub fn classify_delete(path: &str, ctx: &Context) -> Assessment {
    if path.trim().is_empty() {
        return one(Risk::High, path, &say::NAMES_NO_FILE);
    }
    let expanded = expand(path, ctx);
    let has_cwd = !ctx.cwd.as_os_str().is_empty();
    let exp = Expander {
        src: "",
        ctx,
        cwd: has_cwd.then_some(ctx.cwd.as_path()),
    };
    let word = Word::Lit(expanded);
    let found = destroys(&[&word], &say::DELETES, false, false, &exp);
    let mut reasons: Vec<Reason> = found
        .findings
        .into_iter()
        .map(|(risk, why)| Reason::new(risk, path.to_string(), why))
        .collect();
    if !has_cwd && reasons.iter().all(|r| r.risk < Risk::High) {
        reasons.insert(
            0,
            Reason::new(
                Risk::High,
                path.to_string(),
                (&say::DELETE_UNKNOWN_FOLDER).into(),
            ),
        );
    }
    reasons.sort_by_key(|r| std::cmp::Reverse(r.risk));
    let risk = reasons.first().map_or(Risk::High, |r| r.risk);
    Assessment { risk, reasons }
}
