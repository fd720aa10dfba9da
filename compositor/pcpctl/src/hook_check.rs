//! `pcpctl hook check [claude-code|codex|gemini] [--project DIR]`: reads every settings file the
//! CLI reads hooks from (system, user, project, Claude Code's local file) and refuses — exit 1,
//! each problem named by file and key — settings that would let the CLI run a tool call the
//! hook never answered: a CLI timeout that kills the hook before its deadline (the CLI then
//! runs the command, in all three), a matcher that keeps a mapped tool from the hook, a hook
//! program that does not exist or cannot run, hooks switched off, and for Codex a hook never
//! trusted (`codex exec` skips it without a word). [`cli_timeout`] is the same reading for the
//! hook itself, which keeps its deadline under the timeout it finds.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;
use serde_json::Value;

use crate::hook::Harness;
use crate::hook_entries::{self, FileHooks, HookEntry};
use crate::hook_settings::{self, Cli, Env, SettingsFile};

/// Seconds the hook keeps between its own deadline and the CLI's timeout by default: time to
/// print its answer and exit after a denial at the deadline, on a loaded machine.
pub const DEFAULT_TIMEOUT_MARGIN: f64 = 2.0;

#[derive(clap::Args)]
pub struct Args {
    /// The CLI to check; without one, every CLI whose settings run `pcpctl hook`.
    harness: Option<Harness>,
    /// Also read this project folder's settings (`.claude/settings.json` and
    /// `settings.local.json`, `.codex/`, `.gemini/settings.json`).
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
    /// Seconds the hook needs between its deadline and the CLI's timeout.
    #[arg(long, default_value_t = DEFAULT_TIMEOUT_MARGIN, value_name = "SECONDS")]
    timeout_margin: f64,
    /// Codex: accept a hook whose trust is not recorded, because every run of Codex passes
    /// `--dangerously-bypass-hook-trust` (tests).
    #[arg(long)]
    trust_bypassed: bool,
}

/// What the check found for one CLI.
#[derive(Debug, Default)]
pub struct Findings {
    /// Every hook that runs `pcpctl hook` for the CLI, with its file.
    pub ours: Vec<(SettingsFile, HookEntry)>,
    /// What is wrong, each naming its file and key.
    pub problems: Vec<String>,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let env = Env::from_process();
    let clis: Vec<&Cli> = match args.harness {
        Some(h) => vec![hook_settings::cli(h)],
        None => [Harness::ClaudeCode, Harness::Codex, Harness::Gemini]
            .into_iter()
            .map(hook_settings::cli)
            .collect(),
    };
    let options = Options {
        margin: args.timeout_margin,
        trust_bypassed: args.trust_bypassed,
    };
    let (mut checked, mut refused) = (0, 0);
    for cli in clis {
        let found = check(cli, &env, args.project.as_deref(), &options);
        if found.ours.is_empty() && args.harness.is_none() && found.problems.len() == 1 {
            pcp_cli::outln!("{}: no pcpctl hook installed", cli.name);
            continue;
        }
        checked += 1;
        for (file, entry) in &found.ours {
            let timeout = entry.timeout.unwrap_or(cli.default_timeout);
            let deadline = entry.ours.as_ref().map_or(0.0, |o| o.deadline);
            pcp_cli::outln!(
                "{}: {} {}: deadline {deadline} s, timeout {timeout} s",
                cli.name,
                file.path.display(),
                entry.place,
            );
        }
        for p in &found.problems {
            pcp_cli::outln!("{}: refused: {p}", cli.name);
        }
        if found.problems.is_empty() {
            pcp_cli::outln!("{}: ok", cli.name);
        } else {
            refused += 1;
        }
    }
    if checked == 0 {
        pcp_cli::outln!("no pcpctl hook is installed for any CLI: see `pcpctl hook install`");
        return Ok(ExitCode::from(1));
    }
    Ok(if refused == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// How strictly to check.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    pub margin: f64,
    pub trust_bypassed: bool,
}

/// Checks `cli`'s settings in every layer (with `project`'s).
pub fn check(cli: &Cli, env: &Env, project: Option<&Path>, options: &Options) -> Findings {
    let mut found = Findings::default();
    let mut files: Vec<(SettingsFile, FileHooks)> = Vec::new();
    for file in cli.files(env, project) {
        match hook_entries::read_file(cli, &file) {
            Ok(Some(hooks)) => files.push((file, hooks)),
            Ok(None) => {}
            Err(e) => found.problems.push(format!(
                "{e}: {} cannot read it, so its hooks may not run",
                cli.name
            )),
        }
    }
    let codex_state: serde_json::Map<String, Value> = files
        .iter()
        .flat_map(|(_, h)| h.codex_state.clone())
        .collect();
    for (file, hooks) in &files {
        for key in &hooks.switched_off {
            found.problems.push(format!(
                "{}: {key}: no hook runs, pcpctl's neither",
                file.path.display()
            ));
        }
        for entry in hooks.entries.iter().filter(|e| e.ours.is_some()) {
            check_entry(
                cli,
                file,
                hooks,
                entry,
                &codex_state,
                options,
                &mut found.problems,
            );
            found.ours.push((file.clone(), entry.clone()));
        }
    }
    if found.ours.is_empty() {
        let read: Vec<String> = cli
            .files(env, project)
            .iter()
            .map(|f| f.path.display().to_string())
            .collect();
        found.problems.push(format!(
            "no hook runs `pcpctl hook {}` in {}: install it with `pcpctl hook install {}`",
            cli.arg,
            read.join(", "),
            cli.arg
        ));
        return found;
    }
    check_coverage(cli, &found.ours.clone(), &mut found.problems);
    found
}

fn check_entry(
    cli: &Cli,
    file: &SettingsFile,
    hooks: &FileHooks,
    entry: &HookEntry,
    codex_state: &serde_json::Map<String, Value>,
    options: &Options,
    problems: &mut Vec<String>,
) {
    let Some(ours) = &entry.ours else {
        return;
    };
    let at = format!("{}: {}", file.path.display(), entry.place);
    let timeout = entry.timeout.unwrap_or(cli.default_timeout);
    let margin = ours.margin.unwrap_or(0.0).max(options.margin);
    if ours.deadline + margin > timeout {
        let written = match entry.timeout {
            Some(_) => format!("{timeout} s (timeout)"),
            None => format!("{timeout} s (its default: no timeout is given)"),
        };
        let unit = if cli.millis { "ms" } else { "s" };
        let needed = ours.deadline + margin;
        let needed = if cli.millis {
            needed * 1000.0
        } else {
            needed.ceil()
        };
        problems.push(format!(
            "{at}.timeout: {} kills the hook after {written} and then runs the command, but the \
             hook may wait {} s (--deadline) and needs {margin} s more to answer: set timeout \
             to at least {needed} {unit}, or lower --deadline",
            cli.name, ours.deadline
        ));
    }
    if let Err(e) = runnable(&ours.program) {
        problems.push(format!("{at}.command: {e}: the CLI cannot run the hook"));
    }
    let disabled = |n: &String| *n == entry.command || entry.name.as_ref() == Some(n);
    if hooks.disabled.iter().any(disabled) {
        problems.push(format!(
            "{at}: listed in hooksConfig.disabled: it never runs"
        ));
    }
    if cli.harness == Harness::Codex {
        let event = if entry.event == "PermissionRequest" {
            "permission_request"
        } else {
            "pre_tool_use"
        };
        let key = format!(
            "{}:{event}:{}:{}",
            file.path.display(),
            entry.group,
            entry.handler
        );
        let state = codex_state.get(&key);
        if state.and_then(|s| s.get("enabled")) == Some(&Value::Bool(false)) {
            problems.push(format!(
                "{at}: disabled in [hooks.state.\"{key}\"]: it never runs"
            ));
        }
        let trusted = state
            .and_then(|s| s.get("trusted_hash"))
            .is_some_and(Value::is_string);
        let managed = file.layer == "system";
        if !trusted && !managed && !options.trust_bypassed {
            problems.push(format!(
                "{at}: never trusted: `codex exec` skips it without a word; start `codex`, open \
                 /hooks and trust it (runs that pass --dangerously-bypass-hook-trust: check \
                 with --trust-bypassed)"
            ));
        }
    }
}

/// Every tool the hook maps must reach it through some hook of the CLI's first event.
fn check_coverage(cli: &Cli, ours: &[(SettingsFile, HookEntry)], problems: &mut Vec<String>) {
    let event = cli.events[0];
    let gating: Vec<&(SettingsFile, HookEntry)> =
        ours.iter().filter(|(_, e)| e.event == event).collect();
    for (file, entry) in &gating {
        if let Err(e) = cli.covers(entry.matcher.as_deref(), "") {
            problems.push(format!(
                "{}: {}.matcher: {e}",
                file.path.display(),
                entry.place
            ));
        }
    }
    let missed: Vec<&str> = cli
        .required
        .iter()
        .copied()
        .filter(|tool| {
            !gating
                .iter()
                .any(|(_, e)| cli.covers(e.matcher.as_deref(), tool) == Ok(true))
        })
        .map(|tool| {
            if tool.starts_with("mcp__") {
                "MCP tools (mcp__SERVER__TOOL)"
            } else {
                tool
            }
        })
        .collect();
    if !missed.is_empty() {
        let places: Vec<String> = gating
            .iter()
            .map(|(f, e)| format!("{} {}.matcher", f.path.display(), e.place))
            .collect();
        let places = if places.is_empty() {
            format!("no {event} hook runs pcpctl")
        } else {
            places.join(", ")
        };
        problems.push(format!(
            "{places}: {} runs {} without asking the hook; use the matcher {:?} (what `pcpctl \
             hook install` writes)",
            cli.name,
            missed.join(", "),
            cli.matcher
        ));
    }
}

/// Whether `program` names a file that can run: a path, or a name found on `PATH`.
fn runnable(program: &str) -> Result<PathBuf, String> {
    let path = if program.contains('/') {
        PathBuf::from(program)
    } else {
        let found = std::env::var_os("PATH").and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|d| d.join(program))
                .find(|p| p.is_file())
        });
        found.ok_or_else(|| format!("`{program}` is not found on PATH"))?
    };
    let meta = std::fs::metadata(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    if !meta.is_file() || meta.permissions().mode() & 0o111 == 0 {
        return Err(format!("{} is not an executable file", path.display()));
    }
    Ok(path)
}

/// For the hook itself: the shortest timeout, in seconds, of the CLI's hooks that run `pcpctl
/// hook` for `event` and `tool`, and the file that says it. `projects` are the project folders
/// whose settings count. Files that cannot be read are passed over (the hook then keeps its
/// deadline; `pcpctl hook check` is what refuses them).
pub fn cli_timeout(
    cli: &Cli,
    env: &Env,
    projects: &[PathBuf],
    event: &str,
    tool: &str,
) -> Option<(f64, PathBuf)> {
    let mut files: Vec<SettingsFile> = cli.files(env, None);
    for p in projects {
        for f in cli.files(env, Some(p)) {
            if !files.contains(&f) {
                files.push(f);
            }
        }
    }
    let mut best: Option<(f64, PathBuf)> = None;
    for file in files {
        let Ok(Some(hooks)) = hook_entries::read_file(cli, &file) else {
            continue;
        };
        for entry in hooks
            .entries
            .iter()
            .filter(|e| e.ours.is_some() && e.event == event)
        {
            // A matcher this reader cannot take may match: its timeout counts.
            if cli.covers(entry.matcher.as_deref(), tool) == Ok(false) {
                continue;
            }
            let t = entry.timeout.unwrap_or(cli.default_timeout);
            let t = if cli.harness == Harness::Codex {
                t.max(1.0)
            } else {
                t
            };
            if best.as_ref().is_none_or(|(b, _)| t < *b) {
                best = Some((t, file.path.clone()));
            }
        }
    }
    best
}
