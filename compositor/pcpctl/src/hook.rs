//! `pcpctl hook claude-code|codex|gemini`: an agent harness's permission hook. It reads the
//! harness's hook JSON on stdin, submits the tool call as an intent to the running compositor
//! (like `pcpctl submit`; inside `pcpctl run` through the sandbox's socket), and answers in the
//! harness's format. It fails closed: bad input, no compositor, a protocol error, a panic, or no
//! decision before `--deadline` is a denial with a reason — never an allow, never silence.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::Result;
use clap::ValueEnum;
use pcp_protocol::IntentClient;
use serde_json::{Map, Value, json};

use crate::hook_tools;

/// Seconds the hook waits for a decision by default: under Claude Code's and Gemini CLI's own
/// 60-second hook timeout (which, when it fires, lets the tool run) and under the printed
/// config's `timeout`.
pub const DEFAULT_DEADLINE_SECONDS: f64 = 50.0;
/// The harness timeout `--print-config` writes, in seconds.
pub const HARNESS_TIMEOUT_SECONDS: u64 = 60;
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
    /// Which harness calls the hook: its input and answer formats.
    harness: Harness,
    /// Print the settings snippet that installs this hook, then exit.
    #[arg(long)]
    print_config: bool,
    /// Seconds to wait for the user before answering deny (the harness's own hook timeout must
    /// be longer: a Claude Code hook that times out lets the tool run).
    #[arg(long, default_value_t = DEFAULT_DEADLINE_SECONDS)]
    deadline: f64,
}

/// The hook's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Answer {
    Allow(String),
    Deny(String),
}

pub fn run(args: Args) -> Result<ExitCode> {
    let started = Instant::now();
    if args.print_config {
        pcp_cli::outln!("{}", print_config(args.harness)?);
        return Ok(ExitCode::SUCCESS);
    }
    let harness = args.harness;
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
    // The decision runs on its own thread so that the deadline holds whatever it blocks on.
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(decide(&event));
    });
    let left = deadline.saturating_sub(started.elapsed());
    let verdict = match rx.recv_timeout(left) {
        Ok(v) => v,
        Err(mpsc::RecvTimeoutError::Timeout) => Answer::Deny(format!(
            "no decision within the hook's deadline of {} s (pcpctl hook --deadline)",
            args.deadline
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
    let name = harness
        .to_possible_value()
        .map(|v| v.get_name().to_string());
    let command = format!(
        "{} hook {} --deadline {DEFAULT_DEADLINE_SECONDS}",
        exe.display(),
        name.unwrap_or_default()
    );
    let entry = |matcher: &str, timeout: u64| json!([{"matcher": matcher, "hooks": [{"type": "command", "command": command, "timeout": timeout}]}]);
    let snippet = match harness {
        Harness::ClaudeCode => json!({"hooks": {"PreToolUse": entry(
            "Bash|Write|Edit|MultiEdit|NotebookEdit|Read|Grep|Glob|LS|WebFetch|WebSearch|mcp__.*",
            HARNESS_TIMEOUT_SECONDS)}}),
        Harness::Codex => json!({"hooks": {
            "PreToolUse": entry("Bash", HARNESS_TIMEOUT_SECONDS),
            "PermissionRequest": entry("Bash", HARNESS_TIMEOUT_SECONDS)}}),
        Harness::Gemini => json!({"hooks": {"BeforeTool": entry(
            "run_shell_command|write_file|replace|web_fetch|google_web_search",
            HARNESS_TIMEOUT_SECONDS * 1000)}}),
    };
    Ok(serde_json::to_string_pretty(&snippet)?)
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
