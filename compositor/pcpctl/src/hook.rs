//! `pcpctl hook claude-code|codex|gemini`: an agent harness's permission hook. It reads the
//! harness's hook JSON on stdin, submits the tool call as an intent to the running compositor
//! (like `pcpctl submit`; inside `pcpctl run` through the sandbox's socket), and answers in the
//! harness's format. It fails closed: bad input, no compositor, a protocol error, a panic, or no
//! decision before `--deadline` is a denial with a reason — never an allow, never silence.
//! Where it can read the CLI's settings, it keeps its deadline under the CLI's own hook timeout
//! (the CLI runs the command when that kills the hook). `pcpctl hook install` and `pcpctl hook
//! check` write and check those settings ([`hook_install`], [`hook_check`]).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::Result;
use clap::ValueEnum;
use pcp_protocol::IntentClient;
use serde_json::{Map, Value, json};

use crate::hook_check::DEFAULT_TIMEOUT_MARGIN;
use crate::hook_entries;
use crate::hook_settings::{self, Env};
use crate::{hook_check, hook_install, hook_tools};

/// Seconds the hook waits for a decision by default: under the one-minute timeout `pcpctl hook
/// install` writes and under Gemini CLI's own default (60 s; Claude Code's and Codex's are
/// 600 s), with room for the margin.
pub const DEFAULT_DEADLINE_SECONDS: f64 = 50.0;
/// Largest hook input read; a tool call with a larger input is denied.
const MAX_INPUT_BYTES: u64 = 16 * 1024 * 1024;
/// What every denial's reason starts with, so the agent (and its user) sees who said no.
const DENY_PREFIX: &str = "pcp-confirm denied this tool call";

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Harness {
    /// Claude Code (`PreToolUse`, `PermissionRequest`).
    ClaudeCode,
    /// Codex CLI (`PreToolUse`, `PermissionRequest`).
    Codex,
    /// Gemini CLI (`BeforeTool`).
    Gemini,
}

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Claude Code's hook (`PreToolUse`, `PermissionRequest`): reads its hook JSON on stdin.
    #[command(name = "claude-code")]
    ClaudeCode(RunArgs),
    /// Codex CLI's hook (`PreToolUse`, `PermissionRequest`).
    Codex(RunArgs),
    /// Gemini CLI's hook (`BeforeTool`).
    Gemini(RunArgs),
    /// Merge the hook into a CLI's settings file, keeping everything else; a second run
    /// changes nothing.
    Install(hook_install::Args),
    /// Refuse installed settings that would let the CLI run a tool call the hook never
    /// answered: a timeout shorter than the deadline, a matcher missing a tool, a hook program
    /// that cannot run.
    Check(hook_check::Args),
}

#[derive(clap::Args)]
pub struct RunArgs {
    /// Print the settings snippet that installs this hook, then exit (`pcpctl hook install`
    /// merges it for you).
    #[arg(long)]
    print_config: bool,
    /// Seconds to wait for the user before answering deny. The CLI's own hook timeout must be
    /// longer (when it kills the hook, the CLI runs the command): where the hook can read the
    /// CLI's settings it waits at most that timeout less --timeout-margin.
    #[arg(long, default_value_t = DEFAULT_DEADLINE_SECONDS)]
    deadline: f64,
    /// Seconds kept between the hook's deadline and the CLI's timeout (to answer and exit).
    #[arg(long, default_value_t = DEFAULT_TIMEOUT_MARGIN, value_name = "SECONDS")]
    timeout_margin: f64,
}

/// The hook's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Answer {
    Allow(String),
    Deny(String),
}

pub fn run(args: Args) -> Result<ExitCode> {
    let (harness, args) = match args.command {
        Command::ClaudeCode(a) => (Harness::ClaudeCode, a),
        Command::Codex(a) => (Harness::Codex, a),
        Command::Gemini(a) => (Harness::Gemini, a),
        Command::Install(a) => return hook_install::run(a),
        Command::Check(a) => return hook_check::run(a),
    };
    answer_hook(harness, args)
}

fn answer_hook(harness: Harness, args: RunArgs) -> Result<ExitCode> {
    let started = Instant::now();
    if args.print_config {
        pcp_cli::outln!("{}", print_config(harness)?);
        return Ok(ExitCode::SUCCESS);
    }
    // A panic anywhere is a denial: exit 2 blocks the tool in all three harnesses, whatever
    // was (or was not) printed.
    std::panic::set_hook(Box::new(|info| {
        let _ = writeln!(
            std::io::stderr(),
            "{DENY_PREFIX}: pcpctl hook failed: {info}"
        );
        std::process::exit(2);
    }));
    let deadline = Duration::try_from_secs_f64(args.deadline)
        .ok()
        .filter(|d| !d.is_zero());
    let Some(deadline) = deadline else {
        let reason = format!(
            "--deadline {} is not a positive number of seconds",
            args.deadline
        );
        return Ok(answer(harness, "", &Answer::Deny(reason)));
    };
    let mut input = String::new();
    let read = std::io::stdin()
        .take(MAX_INPUT_BYTES + 1)
        .read_to_string(&mut input);
    let event = match read {
        Err(e) => Err(format!("cannot read the hook input: {e}")),
        Ok(n) if n as u64 > MAX_INPUT_BYTES => {
            Err(format!("the hook input is over {MAX_INPUT_BYTES} bytes"))
        }
        Ok(_) => parse_event(&input),
    };
    let event = match event {
        Ok(e) => e,
        Err(reason) => return Ok(answer(harness, "", &Answer::Deny(reason))),
    };
    let event_name = event
        .get("hook_event_name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let deadline = match within_cli_timeout(harness, deadline, args.timeout_margin, &event) {
        Ok(d) => d,
        Err(reason) => return Ok(answer(harness, &event_name, &Answer::Deny(reason))),
    };
    // The decision runs on its own thread so that the deadline holds whatever it blocks on.
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(decide(&event));
    });
    let left = deadline.saturating_sub(started.elapsed());
    let verdict = match rx.recv_timeout(left) {
        Ok(v) => v,
        Err(mpsc::RecvTimeoutError::Timeout) => Answer::Deny(format!(
            "no decision within the hook's deadline of {} s",
            deadline.as_secs_f64()
        )),
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            Answer::Deny("the decision thread ended without an answer".into())
        }
    };
    Ok(answer(harness, &event_name, &verdict))
}

fn parse_event(input: &str) -> Result<Map<String, Value>, String> {
    match serde_json::from_str::<Value>(input) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err("the hook input is not a JSON object".into()),
        Err(e) => Err(format!("the hook input is not JSON: {e}")),
    }
}

/// Submits the tool call's intents in order; every one must be approved.
fn decide(event: &Map<String, Value>) -> Answer {
    let (tool, input) = match hook_tools::tool_call(event) {
        Ok(t) => t,
        Err(e) => return Answer::Deny(e),
    };
    let cwd = match working_folder(event) {
        Ok(c) => c,
        Err(e) => return Answer::Deny(e),
    };
    let intents = match hook_tools::intents(&tool, &input, cwd.as_deref()) {
        Ok(i) => i,
        Err(e) => return Answer::Deny(e),
    };
    let mut client = match IntentClient::connect() {
        Ok(c) => c,
        Err(e) => return Answer::Deny(format!("no compositor to ask: {e}")),
    };
    let mut reasons = Vec::new();
    for submission in &intents {
        let decided = client
            .submit(submission)
            .and_then(|handle| client.wait(&handle));
        match decided {
            Ok(d) if d.approved => {
                reasons.push(format!("{}: {}", submission.capability, d.resolution))
            }
            Ok(d) => {
                let why = d.reason.unwrap_or_else(|| d.resolution.clone());
                return Answer::Deny(format!(
                    "{} ({}): {why}",
                    submission.capability, d.resolution
                ));
            }
            Err(e) => return Answer::Deny(format!("asking the compositor failed: {e}")),
        }
    }
    Answer::Allow(format!("approved by pcp-confirm ({})", reasons.join(", ")))
}

/// `deadline`, shortened to the CLI's own hook timeout less `margin` where the CLI's settings
/// say one for this event and tool (a warning on stderr says so); an error (a denial) when that
/// timeout leaves no time at all.
fn within_cli_timeout(
    harness: Harness,
    deadline: Duration,
    margin: f64,
    event: &Map<String, Value>,
) -> Result<Duration, String> {
    let cli = hook_settings::cli(harness);
    let text = |k: &str| event.get(k).and_then(Value::as_str).unwrap_or("");
    let (event_name, tool) = (text("hook_event_name"), text("tool_name"));
    let projects = project_folders(harness, working_folder(event).ok().flatten());
    let env = Env::from_process();
    let Some((timeout, file)) = hook_check::cli_timeout(cli, &env, &projects, event_name, tool)
    else {
        return Ok(deadline);
    };
    let margin = if margin.is_finite() && margin >= 0.0 {
        margin
    } else {
        DEFAULT_TIMEOUT_MARGIN
    };
    let room = timeout - margin;
    if room <= 0.0 {
        return Err(format!(
            "{}'s hook timeout of {timeout} s ({}) leaves no time to ask (the hook needs              {margin} s to answer): raise it, see `pcpctl hook check`",
            cli.name,
            file.display()
        ));
    }
    let room = Duration::from_secs_f64(room);
    if room < deadline {
        let _ = writeln!(
            std::io::stderr(),
            "pcpctl hook: waiting {} s, not {} s (--deadline): {}'s hook timeout in {} is {timeout}              s, and the hook keeps {margin} s to answer",
            room.as_secs_f64(),
            deadline.as_secs_f64(),
            cli.name,
            file.display()
        );
        return Ok(room);
    }
    Ok(deadline)
}

/// The project folders whose settings the CLI reads: Claude Code's and Gemini CLI's project
/// (they tell the hook, else the working folder); for Codex the working folder and each folder
/// above it up to the repository's root.
fn project_folders(harness: Harness, cwd: Option<PathBuf>) -> Vec<PathBuf> {
    let told = match harness {
        Harness::ClaudeCode => std::env::var_os("CLAUDE_PROJECT_DIR"),
        Harness::Gemini => std::env::var_os("GEMINI_PROJECT_DIR"),
        Harness::Codex => None,
    };
    if let Some(dir) = told.filter(|d| !d.is_empty()) {
        return vec![PathBuf::from(dir)];
    }
    let Some(cwd) = cwd else {
        return Vec::new();
    };
    if harness != Harness::Codex {
        return vec![cwd];
    }
    let mut out = Vec::new();
    for dir in cwd.ancestors() {
        out.push(dir.to_path_buf());
        if dir.join(".git").exists() {
            return out;
        }
    }
    // No repository: Codex's project is the working folder alone.
    out.truncate(1);
    out
}

/// The harness's `cwd`; `None` when the input has none. The hook's own folder is not taken for
/// it: nothing says the harness started the hook in the project, so an unknown working folder
/// stays unknown and the gate counts every write as outside it (fail closed).
fn working_folder(event: &Map<String, Value>) -> Result<Option<PathBuf>, String> {
    match event.get("cwd") {
        Some(Value::String(s)) if Path::new(s).is_absolute() => Ok(Some(PathBuf::from(s))),
        Some(Value::String(s)) => Err(format!("the hook input's cwd `{s}` is not absolute")),
        None | Some(Value::Null) => Ok(None),
        Some(_) => Err("the hook input's cwd is not a string".into()),
    }
}

/// Prints the answer in the harness's format and gives the exit code: 0 for an allow, 2 for a
/// deny (which every harness treats as a block, even if it cannot read the JSON).
fn answer(harness: Harness, event: &str, verdict: &Answer) -> ExitCode {
    let out = render(harness, event, verdict);
    if let Some(json) = out {
        // A harness that stopped reading still gets the exit status, which alone blocks a
        // denied call: a write that fails changes nothing here.
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(stdout, "{json}").and_then(|()| stdout.flush());
    }
    match verdict {
        Answer::Allow(_) => ExitCode::SUCCESS,
        Answer::Deny(reason) => {
            let _ = writeln!(std::io::stderr(), "{DENY_PREFIX}: {reason}");
            ExitCode::from(2)
        }
    }
}

/// The JSON a harness reads for `verdict` on `event`; `None` for "no objection" (Codex's
/// `PreToolUse` cannot approve, Gemini's `BeforeTool` can only deny or pass).
fn render(harness: Harness, event: &str, verdict: &Answer) -> Option<Value> {
    let (allow, reason) = match verdict {
        Answer::Allow(r) => (true, r.clone()),
        Answer::Deny(r) => (false, format!("{DENY_PREFIX}: {r}")),
    };
    let decision = if allow { "allow" } else { "deny" };
    match (harness, event) {
        (Harness::Gemini, _) if allow => None,
        (Harness::Gemini, _) => Some(json!({"decision": "deny", "reason": reason})),
        (_, "PermissionRequest") => {
            let mut d = json!({"behavior": decision});
            if !allow {
                d["message"] = Value::from(reason);
            }
            Some(json!({"hookSpecificOutput": {
                "hookEventName": "PermissionRequest", "decision": d}}))
        }
        (Harness::Codex, _) if allow => None,
        _ => Some(json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": decision,
            "permissionDecisionReason": reason}})),
    }
}

/// The settings snippet that installs the hook for `harness`.
fn print_config(harness: Harness) -> Result<String> {
    let exe = std::env::current_exe()?;
    let cli = hook_settings::cli(harness);
    let command = format!(
        "{} hook {} --deadline {DEFAULT_DEADLINE_SECONDS}",
        hook_entries::shell_quote(&exe.to_string_lossy()),
        cli.arg
    );
    let timeout = cli.install_timeout(DEFAULT_DEADLINE_SECONDS);
    let group = json!([{"matcher": cli.matcher, "hooks": [
        {"type": "command", "command": command, "timeout": timeout}]}]);
    let events: Map<String, Value> = cli
        .events
        .iter()
        .map(|e| (e.to_string(), group.clone()))
        .collect();
    Ok(serde_json::to_string_pretty(&json!({ "hooks": events }))?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_follow_each_harness_s_format() {
        let deny = Answer::Deny("no".into());
        let allow = Answer::Allow("yes".into());
        let c = render(Harness::ClaudeCode, "PreToolUse", &deny).unwrap();
        assert_eq!(c["hookSpecificOutput"]["permissionDecision"], "deny");
        assert!(
            c["hookSpecificOutput"]["permissionDecisionReason"]
                .as_str()
                .unwrap()
                .ends_with(": no")
        );
        let c = render(Harness::ClaudeCode, "PreToolUse", &allow).unwrap();
        assert_eq!(c["hookSpecificOutput"]["permissionDecision"], "allow");
        let p = render(Harness::Codex, "PermissionRequest", &allow).unwrap();
        assert_eq!(p["hookSpecificOutput"]["decision"]["behavior"], "allow");
        let p = render(Harness::Codex, "PermissionRequest", &deny).unwrap();
        assert_eq!(p["hookSpecificOutput"]["decision"]["behavior"], "deny");
        assert!(render(Harness::Codex, "PreToolUse", &allow).is_none());
        assert!(render(Harness::Gemini, "BeforeTool", &allow).is_none());
        let g = render(Harness::Gemini, "BeforeTool", &deny).unwrap();
        assert_eq!(g["decision"], "deny");
    }

    #[test]
    fn the_printed_config_runs_this_binary_with_the_deadline() {
        for h in [Harness::ClaudeCode, Harness::Codex, Harness::Gemini] {
            let text = print_config(h).unwrap();
            let v: Value = serde_json::from_str(&text).unwrap();
            assert!(text.contains("--deadline 50"), "{text}");
            assert!(v["hooks"].is_object());
        }
    }
}
