//! The cases: what the subject asks polkitd, what the scripted user does in the dialog, and what
//! must come of it (exit codes, and the decisions the harness printed from the audit log).

use std::time::Duration;

use crate::run::{Harness, Lines, Tools, finish, go, spawn_as, spawn_as_user, subject};
use crate::world::{ADMIN_PW, USER_PW, World};

const SELF: &str = "org.pcp.test.self";
const PKEXEC: &str = "pkexec";
/// An admin action for which polkitd offers two accounts: the subject's own and the admin's.
const CHOOSE: &str = "org.pcp.test.choose";

/// How long a subject may take: three wrong passwords cost PAM's failure delays, a timeout
/// case waits for the dialog's (shortened) timeout.
const SUBJECT_WAIT: Duration = Duration::from_secs(120);

pub struct Case {
    pub name: &'static str,
    /// The scripted user (pcp-harness `--user`).
    script: String,
    /// `false`: the compositor runs without its agent (`[polkit] enabled = false`).
    agent: bool,
    /// Extra config after `[polkit]`.
    config: &'static str,
    actions: &'static str,
    pkexec: bool,
    /// Expected exit codes by action (`pkexec` for pkexec).
    expect: &'static [(&'static str, i32)],
    /// Each a substring some harness or subject line must hold.
    must_see: Vec<String>,
    /// Each a substring no line may hold.
    must_not_see: Vec<String>,
    /// Kill the pkcheck once its dialog is up; the dialog must close, audited cancelled.
    kill_requester: bool,
    /// Two requests: each shown and answered in full, one after the other.
    one_after_the_other: bool,
    /// Call the agent as a `polkitd`-user process that is not polkitd: refused, audited.
    forge: bool,
    /// A second compositor for the same subject: it starts without an agent and says why.
    second: bool,
    /// The session is locked (swaylock) before the request: no dialog until it is unlocked.
    locked: bool,
    /// What the script's `capture` actions must show, in order: each a text the dialog drew in
    /// that capture (the harness's `capture` line carries the dialog's text as drawn).
    captures_show: &'static [&'static str],
}

fn case(name: &'static str, script: String) -> Case {
    Case {
        name,
        script,
        agent: true,
        config: "",
        actions: SELF,
        pkexec: false,
        expect: &[],
        must_see: Vec::new(),
        must_not_see: Vec::new(),
        kill_requester: false,
        one_after_the_other: false,
        forge: false,
        second: false,
        locked: false,
        captures_show: &[],
    }
}

/// A script answering every polkit prompt with `actions`, typing `typed`.
fn script(actions: &str, typed: &str) -> String {
    let mut s = format!("[[answer]]\ncapability = \"polkit.*\"\ndo = {actions}\ndelay_ms = 300\n");
    if !typed.is_empty() {
        s += &format!("type = {typed}\n");
    }
    s
}

pub fn all() -> Vec<Case> {
    let right = format!("{USER_PW:?}");
    vec![
        Case {
            agent: false,
            expect: &[(SELF, 2)],
            ..case(
                "without the agent: pkcheck finds no agent (2), no dialog",
                script(r#"["type", "approve"]"#, &right),
            )
        },
        Case {
            expect: &[(SELF, 0)],
            must_see: vec![
                "\"capability\":\"polkit.org.pcp.test.self\"".into(),
                "\"resolution\":\"user_approved\"".into(),
                "type (accepted)".into(),
                "\"identity\":\"pcptest\"".into(),
            ],
            ..case(
                "the right password typed, then Approve: 0",
                script(r#"["type", "approve"]"#, &right),
            )
        },
        Case {
            expect: &[(SELF, 0)],
            second: true,
            must_see: vec![
                "\"polkit_agent_error\":\"another polkit authentication agent is already registered"
                    .into(),
                "\"resolution\":\"user_approved\"".into(),
                // Said on the second harness's stderr too, as the compositor logs it.
                "polkit agent not started: another polkit authentication agent".into(),
            ],
            ..case(
                "a second compositor for the subject carries on without an agent; the first answers: 0",
                script(r#"["type", "approve"]"#, &right),
            )
        },
        Case {
            expect: &[(SELF, 1)],
            // The last failure ends the request: its dialog closes, audited as such. Every try
            // has its verdict, the last one too (its prompt ends with it).
            must_see: vec![
                "\"resolution\":\"authentication_failed\"".into(),
                "3 password attempts failed".into(),
                "\"user\":[\"type (not accepted)\",\"capture\",\"type (not accepted)\",\
                 \"capture\",\"type (not accepted)\"]"
                    .into(),
                // The compositor's own log lines reach the harness's stderr (RUST_LOG=info).
                "harness-log: ".into(),
                "PAM asks".into(),
            ],
            must_not_see: vec!["no verdict".into()],
            // Each capture is taken `delay_ms` (300 ms) after the try's verdict, which comes
            // with the next try's prompt: the wrong line is still there, with the tries left.
            captures_show: &[
                "Authentication failed. 2 tries left.",
                "Authentication failed. 1 tries left.",
            ],
            ..case(
                "three wrong passwords, each reported with the tries left: 1",
                script(
                    r#"["type", "capture", "type", "capture", "type"]"#,
                    r#"["nope-1", "nope-2", "nope-3"]"#,
                ),
            )
        },
        Case {
            expect: &[(SELF, 3)],
            must_see: vec!["\"resolution\":\"user_denied\"".into()],
            ..case("Deny: 3 (dismissed)", script(r#""deny""#, ""))
        },
        Case {
            expect: &[(SELF, 3)],
            must_see: vec!["\"resolution\":\"confirmation.timeout\"".into()],
            config: "[timeouts]\nvisual_seconds = 3\n",
            ..case(
                "the dialog's timeout: 3 (dismissed)",
                script(r#""nothing""#, ""),
            )
        },
        Case {
            expect: &[(SELF, 3)],
            must_see: vec![
                "\"resolution\":\"user_denied\"".into(),
                "\"user\":[\"approve (held)\",\"deny\"]".into(),
            ],
            must_not_see: vec!["user_approved".into()],
            ..case(
                "Approve before the password is ignored (then Deny: 3)",
                script(r#"["approve", "deny"]"#, ""),
            )
        },
        Case {
            actions: "",
            pkexec: true,
            expect: &[(PKEXEC, 0)],
            must_see: vec![
                "out pkexec 0".into(),
                "polkit.org.freedesktop.policykit.exec".into(),
            ],
            ..case(
                "pkexec id -u prints 0 after the admin's password and Approve",
                script(r#"["type", "approve"]"#, &format!("{ADMIN_PW:?}")),
            )
        },
        Case {
            actions: CHOOSE,
            expect: &[(CHOOSE, 0)],
            must_see: vec![
                "\"identities\":\"pcptest, pcpadmin\"".into(),
                "\"user\":[\"type (not accepted)\",\"next-account (For pcpadmin. Tap here or press \
                 Down to use pcptest.)\",\"type (accepted)\",\"approve (held)\"]"
                    .into(),
                "\"resolution\":\"user_approved\"".into(),
            ],
            ..case(
                "two accounts offered: the user's own is asked first (the admin's password fails \
                 there); the account row switches to the admin, whose password then works: 0",
                script(
                    r#"["type", "next-account", "type", "approve"]"#,
                    &format!("{ADMIN_PW:?}"),
                ),
            )
        },
        Case {
            actions: "",
            pkexec: true,
            expect: &[(PKEXEC, 126)],
            must_see: vec!["out pkexec ".into()],
            ..case("pkexec denied: 126", script(r#""deny""#, ""))
        },
        Case {
            actions: "",
            forge: true,
            must_see: vec![
                "FORGED BeginAuthentication org.freedesktop.PolicyKit1.Error.NotAuthorized".into(),
                "FORGED CancelAuthentication org.freedesktop.PolicyKit1.Error.NotAuthorized".into(),
                "\"capability\":\"polkit.agent-call\"".into(),
                "\"resolution\":\"invalid_params\"".into(),
            ],
            must_not_see: vec!["\"event\":\"prompt\"".into()],
            ..case(
                "a BeginAuthentication not from polkitd is refused and audited, no dialog",
                script(r#"["type", "approve"]"#, &format!("{USER_PW:?}")),
            )
        },
        Case {
            kill_requester: true,
            expect: &[],
            must_see: vec!["\"resolution\":\"cancelled\"".into()],
            ..case(
                "the requester killed: the dialog closes, audited cancelled",
                script(r#""nothing""#, ""),
            )
        },
        Case {
            locked: true,
            expect: &[(SELF, 0)],
            must_see: vec!["\"resolution\":\"user_approved\"".into()],
            ..case(
                "a request while the session is locked waits for the unlock, then: 0",
                script(r#"["type", "approve"]"#, &right),
            )
        },
        Case {
            actions: "org.pcp.test.self org.pcp.test.self",
            expect: &[(SELF, 0)],
            one_after_the_other: true,
            // Both are the same program's (the subject shell's), at the gate's default limit of
            // one open prompt per program: the second waits in the front end, as a Wayland
            // client's second intent waits in its backlog.
            ..case(
                "two requests at once are answered one after the other: 0, 0",
                script(r#"["type", "approve"]"#, &right),
            )
        },
    ]
}

/// Runs the real swaylock as the test user against the harness's display and waits until the
/// session is locked.
fn lock(harness: &Harness, lines: &mut Lines) -> Result<std::process::Child, String> {
    let env = |key: &str| harness.ready[key].as_str().unwrap_or_default().to_string();
    let (child, _stdin) = spawn_as_user(
        &["swaylock", "--no-unlock-indicator", "--color", "ff0000"],
        &[
            ("WAYLAND_DISPLAY", env("wayland_display")),
            ("XDG_RUNTIME_DIR", env("xdg_runtime_dir")),
            ("HOME", "/tmp".into()),
        ],
        "swaylock",
        &lines.tx,
    )?;
    lines.wait_for("harness", Duration::from_secs(30), |l| {
        l.contains("\"event\":\"locked\"")
    })?;
    Ok(child)
}

/// The request arrives while the session is locked: it must be held (no dialog) until the
/// locker unlocks (swaylock's documented SIGUSR1), and then be shown and answered.
fn held_until_unlocked(lines: &mut Lines) -> Result<(), String> {
    lines.wait_for("subject", Duration::from_secs(10), |l| l.starts_with("pk "))?;
    // Time enough for a dialog the agent failed to hold to show and be answered (an unheld
    // one is up and answered within about a second).
    std::thread::sleep(Duration::from_secs(3));
    lines.drain();
    if let Some(l) = lines
        .log
        .iter()
        .find(|l| l.contains("\"event\":\"prompt\"") || l.contains("\"event\":\"decision\""))
    {
        return Err(format!("a dialog came while the session was locked: {l}"));
    }
    let unlocked = std::process::Command::new("pkill")
        .args(["-USR1", "-u", crate::world::USER, "-x", "swaylock"])
        .status()
        .map_err(|e| format!("pkill: {e}"))?;
    if !unlocked.success() {
        return Err(format!("pkill swaylock: {unlocked}"));
    }
    lines.wait_for("harness", Duration::from_secs(30), |l| {
        l.contains("\"event\":\"unlocked\"")
    })?;
    Ok(())
}

/// A second harness for the subject the first one's agent holds: it must start (its ready line)
/// without an agent, saying why (`polkit_agent_error`).
fn second(
    tools: &Tools,
    dir: &std::path::Path,
    script: &str,
    config: &str,
    lines: &mut Lines,
) -> Result<(), String> {
    let (harness, agent) = Harness::start(tools, &dir.join("second"), script, config, lines)?;
    harness.stop();
    if let Some(name) = agent {
        return Err(format!(
            "a second agent registered for the subject as {name}"
        ));
    }
    Ok(())
}

/// Runs the forger as the `polkitd` user against the agent `name` and waits for both refusals
/// in the audit log.
fn forge(world: &World, name: &str, lines: &mut Lines) -> Result<(), String> {
    let exe = world.exe.to_string_lossy().into_owned();
    let (child, stdin) = spawn_as(
        "polkitd",
        &[&exe],
        &[
            ("PCP_POLKIT_ROLE", "forge".into()),
            ("PCP_TARGET", name.to_string()),
        ],
        "forger",
        &lines.tx,
    )?;
    for method in ["BeginAuthentication", "CancelAuthentication"] {
        lines.wait_for("forger", Duration::from_secs(30), |l| {
            l.starts_with(&format!("FORGED {method} ")) || l.starts_with("FORGE-ERROR")
        })?;
    }
    let refused = |log: &[String]| {
        log.iter()
            .filter(|l| l.starts_with("harness: {") && l.contains("polkit.agent-call"))
            .count()
    };
    while refused(&lines.log) < 2 {
        lines.wait_for("harness", Duration::from_secs(10), |l| {
            l.contains("polkit.agent-call")
        })?;
    }
    finish(child, stdin);
    Ok(())
}

impl Case {
    pub fn run(&self, world: &World, tools: &Tools) -> Result<(), String> {
        let mut lines = Lines::new();
        let result = self.run_with(world, tools, &mut lines);
        lines.drain();
        result?;
        self.check(&lines.log)
    }

    fn run_with(&self, world: &World, tools: &Tools, lines: &mut Lines) -> Result<(), String> {
        let (child, mut stdin, pid) = subject(self.actions, self.pkexec, lines)?;
        let config = format!(
            "[polkit]\nenabled = {}\nsubject = \"unix-process:{pid}\"\n{}",
            self.agent, self.config
        );
        let dir = world.dir.join(format!("case-{pid}"));
        let started = Harness::start(tools, &dir, &self.script, &config, lines);
        let (harness, agent) = match started {
            Ok(h) => h,
            Err(e) => {
                finish(child, stdin);
                return Err(e);
            }
        };
        let mut result = Ok(());
        let mut locker = None;
        if self.locked {
            match lock(&harness, lines) {
                Ok(child) => locker = Some(child),
                Err(e) => result = Err(e),
            }
        }
        if result.is_ok() && self.second {
            result = second(tools, &dir, &self.script, &config, lines);
        }
        if result.is_ok() {
            result = self.play(lines, &mut stdin, agent.is_some());
        }
        if result.is_ok()
            && self.forge
            && let Some(name) = agent
        {
            result = forge(world, &name, lines);
        }
        harness.stop();
        if let Some(mut locker) = locker {
            let _ = locker.kill();
            let _ = locker.wait();
        }
        finish(child, stdin);
        result
    }

    fn play(
        &self,
        lines: &mut Lines,
        stdin: &mut std::process::ChildStdin,
        registered: bool,
    ) -> Result<(), String> {
        if registered != self.agent {
            return Err(format!(
                "the harness's agent registered: {registered}, expected {}",
                self.agent
            ));
        }
        go(stdin)?;
        if self.locked {
            held_until_unlocked(lines)?;
        }
        if self.kill_requester {
            let pk =
                lines.wait_for("subject", Duration::from_secs(10), |l| l.starts_with("pk "))?;
            let pid: i32 = pk
                .rsplit(' ')
                .next()
                .and_then(|p| p.parse().ok())
                .ok_or_else(|| format!("no pid in {pk:?}"))?;
            lines.wait_for("harness", Duration::from_secs(30), |l| {
                l.contains("\"event\":\"prompt\"")
            })?;
            // SAFETY: kill has no memory preconditions; pkcheck belongs to our subject.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            lines.wait_for("harness", Duration::from_secs(30), |l| {
                l.contains("\"event\":\"decision\"") && l.contains("polkit.")
            })?;
            return Ok(());
        }
        lines.wait_for("subject", SUBJECT_WAIT, |l| l == "done")?;
        // Every request's decision, printed once the harness reads the audit log again (maybe
        // before the subject said `done`).
        let wanted = self.actions.split_whitespace().count() + usize::from(self.pkexec);
        let decisions = |log: &[String]| {
            log.iter()
                .filter(|l| l.starts_with("harness: {") && l.contains("\"event\":\"decision\""))
                .count()
        };
        if self.agent {
            while decisions(&lines.log) < wanted {
                lines.wait_for("harness", Duration::from_secs(10), |l| {
                    l.contains("\"event\":\"decision\"")
                })?;
            }
        }
        Ok(())
    }

    fn check(&self, log: &[String]) -> Result<(), String> {
        let shown = || format!("\n  {}", log.join("\n  "));
        for (action, code) in self.expect {
            let want = format!("subject: rc {action} {code}");
            let matching = log.iter().filter(|l| **l == want).count();
            let expected = self
                .actions
                .split_whitespace()
                .filter(|a| a == action)
                .count()
                .max(1);
            if matching != expected {
                return Err(format!("expected {expected}× `{want}`; seen:{}", shown()));
            }
        }
        for needle in &self.must_see {
            if !log.iter().any(|l| l.contains(needle.as_str())) {
                return Err(format!("no line holds {needle:?}; seen:{}", shown()));
            }
        }
        for needle in &self.must_not_see {
            if let Some(l) = log.iter().find(|l| l.contains(needle.as_str())) {
                return Err(format!("a line holds {needle:?}: {l}"));
            }
        }
        // The secret is never printed, logged or audited.
        for secret in [USER_PW, ADMIN_PW, "nope-1"] {
            if let Some(l) = log.iter().find(|l| l.contains(secret)) {
                return Err(format!("a line holds a password: {l}"));
            }
        }
        if !self.agent && log.iter().any(|l| l.contains("\"capability\":\"polkit.")) {
            return Err(format!("a polkit prompt without the agent?{}", shown()));
        }
        self.check_captures(log)?;
        if self.one_after_the_other {
            // The scripted user acts only on the dialog shown, one at a time: two decisions each
            // with its own whole performance (typed, accepted, approved) mean the second dialog
            // came once the first was decided.
            let played = log
                .iter()
                .filter(|l| l.starts_with("harness: {") && l.contains("\"event\":\"decision\""))
                .filter(|l| {
                    l.contains("\"resolution\":\"user_approved\"")
                        && l.contains("\"user\":[\"type (accepted)\",\"approve (held)\"]")
                })
                .count();
            if played != 2 {
                return Err(format!(
                    "{played} requests played in full, not 2{}",
                    shown()
                ));
            }
        }
        Ok(())
    }

    /// The script's own captures (`NNN-capture-output-I.png`, not those taken as each prompt
    /// appears), in order: each must have drawn its text of [`Case::captures_show`].
    fn check_captures(&self, log: &[String]) -> Result<(), String> {
        let captures: Vec<Vec<String>> = log
            .iter()
            .filter_map(|l| l.strip_prefix("harness: "))
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(|v| {
                v["event"] == "capture"
                    && v["path"]
                        .as_str()
                        .is_some_and(|p| p.contains("-capture-output-"))
            })
            .map(|v| {
                v["text"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|t| t.as_str().map(str::to_string))
                    .collect()
            })
            .collect();
        if captures.len() != self.captures_show.len() {
            return Err(format!(
                "{} captures taken by the script, expected {}",
                captures.len(),
                self.captures_show.len()
            ));
        }
        for (i, (drawn, want)) in captures.iter().zip(self.captures_show).enumerate() {
            if !drawn.iter().any(|t| t == want) {
                return Err(format!(
                    "capture {} does not show {want:?}: {drawn:?}",
                    i + 1
                ));
            }
        }
        Ok(())
    }
}
