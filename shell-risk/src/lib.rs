//! Shell-command risk assessment (caro's Safe / Moderate / High / Critical). A command is parsed
//! with tree-sitter-bash; every simple command inside it — in pipelines, lists, subshells,
//! `$(…)`, backticks, `bash -c '…'`, `xargs`, `find -exec`, behind `env`, `nice`, `sudo` and the
//! like — gets a level with reasons in words, and the command's level is the highest of them.
//! Safe is a short allow-list of read-only commands with read-only flags; what the parser cannot
//! read is High. Paths are resolved against the working folder and the home folder, so "outside
//! the working folder" is decided on resolved paths, never on how the command spells them.
//! Secrets ([`secrets`]) read, printed or sent by any command are High; inline code for Python,
//! JavaScript, Perl, Ruby and PHP is read and rated by what it does; a Codex patch
//! ([`patch`]) is rated by the files it writes. [`classify_read`] and [`classify_delete`] rate
//! an agent tool's own reads and deletions by path.

mod commands;
mod exposure;
mod files;
mod git;
mod glob;
mod inline;
mod interp;
mod message;
pub mod patch;
mod paths;
mod persist;
pub mod phrases;
mod readonly;
mod reads;
mod rules;
pub mod secrets;
mod sed;
mod stages;
mod system;
mod tools;
mod walk;
mod words;

use std::fmt;

use serde::Serialize;

pub use glob::{GlobError, PathGlob};
pub use message::{Arg, Message, Wording, WordingError, phrase_by_key};
pub use paths::{Context, Place};
pub use phrases::Phrase;
pub use reads::{ReadKind, classify_delete, classify_read};
pub use secrets::{Secrets, SecretsError};

/// A command's risk, lowest first (caro's levels).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Risk {
    /// Only reads: on the allow-list, with read-only flags.
    Safe,
    /// Not known to be safe, not known to be dangerous.
    Moderate,
    /// Destroys data, hides what it runs, or cannot be read.
    High,
    /// Changes the system: root, disks, firewall, start-up files, whole folders like `/` or home.
    Critical,
}

impl Risk {
    pub fn as_str(self) -> &'static str {
        match self {
            Risk::Safe => "safe",
            Risk::Moderate => "moderate",
            Risk::High => "high",
            Risk::Critical => "critical",
        }
    }

    /// Parses `safe`, `moderate`, `high` or `critical` (any case).
    pub fn parse(text: &str) -> Option<Risk> {
        match text.to_ascii_lowercase().as_str() {
            "safe" => Some(Risk::Safe),
            "moderate" => Some(Risk::Moderate),
            "high" => Some(Risk::High),
            "critical" => Some(Risk::Critical),
            _ => None,
        }
    }
}

impl fmt::Display for Risk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why one simple command got its level.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Reason {
    pub risk: Risk,
    /// The simple command as written (shortened when long).
    pub command: String,
    /// What it does, in English ("deletes recursively outside the working folder"): `message`
    /// rendered in the catalogue's own wording.
    pub why: String,
    /// What it does, as a phrase and its arguments: for rendering in another [`Wording`].
    pub message: Message,
}

impl Reason {
    pub(crate) fn new(risk: Risk, command: String, message: Message) -> Reason {
        Reason {
            risk,
            command,
            why: message.english(),
            message,
        }
    }
}

/// A command's level and the reason for every simple command in it, highest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Assessment {
    pub risk: Risk,
    pub reasons: Vec<Reason>,
}

impl Assessment {
    /// The reasons at the command's own level, as one line: what a prompt shows.
    pub fn summary(&self) -> String {
        self.summary_in(&Wording::default())
    }

    /// [`Assessment::summary`] in `wording`.
    pub fn summary_in(&self, wording: &Wording) -> String {
        let mut seen: Vec<String> = Vec::new();
        for r in self.reasons.iter().filter(|r| r.risk == self.risk) {
            let why = r.message.render(wording);
            if !seen.contains(&why) {
                seen.push(why);
            }
        }
        if seen.is_empty() {
            return wording.template(&phrases::ONLY_READS).to_string();
        }
        seen.join("; ")
    }
}

/// Longest command classified at all: anything longer is High without being parsed.
pub const MAX_COMMAND_BYTES: usize = 64 * 1024;

/// How deep `bash -c`, `eval`, `xargs` and wrappers may nest before the rest counts as High.
pub const MAX_NESTING: usize = 8;

/// Classifies `command` as run in `ctx`: its level and the reasons.
pub fn classify(command: &str, ctx: &Context) -> Assessment {
    walk::classify(command, ctx, 0)
}

/// Classifies `command` as started in the folder `start` (absolute; a tool call's own working
/// directory), while "inside the working folder" is still decided against `ctx.cwd`: a command
/// started elsewhere is no more trusted than one that changes there with `cd`.
pub fn classify_from(command: &str, ctx: &Context, start: &std::path::Path) -> Assessment {
    walk::classify_from(command, ctx, start)
}

/// Classifies a file write to `path` (an edit tool's target) as seen from `ctx`: Moderate inside
/// the working folder, High outside it or for a dotfile or configuration file, Critical for a
/// system folder or a shell start-up file. With no working folder (an empty `ctx.cwd`) only the
/// home folder, dotfiles, start-up files, system folders and devices raise it; a relative path
/// is then High.
pub fn classify_path(path: &str, ctx: &Context) -> Assessment {
    rules::classify_write_path(path, ctx)
}

/// Classifies a file write whose client says it does not know the working folder (an agent's
/// hook input without `cwd`). Fail closed: the path counts as outside the working folder, so it
/// is High at least; what [`classify_path`] makes Critical stays Critical. `ctx.cwd` is ignored.
pub fn classify_path_outside(path: &str, ctx: &Context) -> Assessment {
    let unanchored = Context {
        cwd: Default::default(),
        ..ctx.clone()
    };
    let mut a = rules::classify_write_path(path, &unanchored);
    if a.risk < Risk::High {
        a.risk = Risk::High;
        a.reasons.insert(
            0,
            Reason::new(
                Risk::High,
                path.to_string(),
                Message::from(&phrases::WRITE_UNKNOWN_FOLDER),
            ),
        );
    }
    a
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_rules;
