//! The cases: what each subject asks, how the scripted front end answers, what must happen.

use std::time::Duration;

use std::process::{Child, ChildStdin};
use std::sync::mpsc::{Receiver, Sender};

use crate::Line;
use crate::world::{ADMIN, USER, USER_PW, World};
use crate::{channel_pair, exit_codes, finish, go, passwords, spawn_as, wait_for};

const SELF: &str = "org.pcp.test.self";
const ADMIN_ACTION: &str = "org.pcp.test.admin";

/// The subject: prints its pid, waits for `go`; with PKEXEC=1 runs `pkexec id -u` in the
/// foreground (pkexec's subject is its parent, so it must be this shell itself); then runs one
/// pkcheck per action on itself at once; prints each pid, exit code and pkexec's output.
const SUBJECT: &str = r#"echo "pid $$"; read go; pids=""
if [ "$PKEXEC" = 1 ]; then
  out=$(mktemp) && err=$(mktemp) || echo "mktemp failed"
  pkexec --disable-internal-agent /usr/bin/id -u >"$out" 2>"$err"
  echo "rc pkexec $?"; echo "out pkexec $(cat "$out")"; sed 's/^/pkexec-stderr /' "$err"
  rm -f "$out" "$err"
fi
for a in $ACTIONS; do
  pkcheck --action-id "$a" --process $$ --allow-user-interaction >/dev/null 2>&1 &
  echo "pk $a $!"; pids="$pids $a:$!"
done
for p in $pids; do wait "${p#*:}"; echo "rc ${p%%:*} $?"; done; echo done"#;

pub struct Case {
    pub name: &'static str,
    /// The front end's mode and passwords; `None`: no agent at all.
    agent: Option<(&'static str, String)>,
    actions: &'static [&'static str],
    expect: &'static [(&'static str, i32)],
    /// Lines that must appear: each a substring of some line of the log, or with a leading `=`
    /// a whole line.
    must_see: Vec<String>,
    forge: bool,
    duplicate: bool,
    kill_requester: bool,
    pkexec: bool,
    /// Stops polkitd and sends malformed calls from the new owner of its name (last case).
    impostor: bool,
    /// The front end starts nothing until this many requests are open (proves overlap).
    hold_until: usize,
}

fn case(name: &'static str, mode: &'static str, pws: String) -> Case {
    Case {
        name,
        agent: Some((mode, pws)),
        actions: &[SELF],
        expect: &[],
        must_see: Vec::new(),
        forge: false,
        duplicate: false,
        kill_requester: false,
        pkexec: false,
        impostor: false,
        hold_until: 1,
    }
}

pub fn all() -> Vec<Case> {
    [passwords_cases(), answer_cases(), request_cases()]
        .into_iter()
        .flatten()
        .collect()
}

/// No agent; PAM with right and wrong passwords; registration and forged calls.
fn passwords_cases() -> Vec<Case> {
    let wrong = format!("{USER}=nope-1,nope-2,nope-3");
    vec![
        Case {
            agent: None,
            expect: &[(SELF, 2)],
            ..case("no agent: pkcheck says no agent (2)", "", String::new())
        },
        Case {
            expect: &[(SELF, 0)],
            forge: true,
            duplicate: true,
            must_see: vec![
                format!("ids={USER} "),
                "echo=false \"Password: \"".into(),
                "ATTEMPT".into(),
                "Success".into(),
                "Authenticated by=FrontEnd".into(),
                "DUPLICATE another polkit authentication agent is already registered".into(),
                "REREGISTERED after a drop".into(),
                "FORGED BeginAuthentication org.freedesktop.PolicyKit1.Error.NotAuthorized".into(),
                "FORGED CancelAuthentication org.freedesktop.PolicyKit1.Error.NotAuthorized".into(),
                "REFUSED BeginAuthentication".into(),
                "REFUSED CancelAuthentication".into(),
            ],
            ..case(
                "right password: 0; a second agent and forged calls are refused",
                "password",
                passwords(),
            )
        },
        Case {
            expect: &[(SELF, 1)],
            must_see: vec![
                "Failure { tries_left: 2 }".into(),
                "Failure { tries_left: 1 }".into(),
                "Failure { tries_left: 0 }".into(),
                "Failed(\"3 password attempts failed\") by=TooManyFailures".into(),
            ],
            ..case("three wrong passwords: 1", "password", wrong)
        },
        Case {
            expect: &[(SELF, 0)],
            must_see: vec!["Failure { tries_left: 2 }".into(), "Success".into()],
            ..case(
                "a wrong then the right password: 0",
                "password",
                format!("{USER}=nope,{USER_PW}"),
            )
        },
    ]
}

/// How the front end ends a request: deny, approve without PAM.
fn answer_cases() -> Vec<Case> {
    vec![
        Case {
            expect: &[(SELF, 3)],
            must_see: vec!["PROMPT".into(), "Cancelled by=FrontEnd".into()],
            ..case(
                "deny at the password prompt: 3 (dismissed)",
                "deny-at-prompt",
                passwords(),
            )
        },
        Case {
            expect: &[(SELF, 3)],
            must_see: vec!["Success".into(), "Cancelled by=FrontEnd".into()],
            ..case(
                "deny after PAM accepted the password: 3 (the agent's reply is the last word)",
                "deny-after-pam",
                passwords(),
            )
        },
        Case {
            expect: &[(SELF, 3)],
            must_see: vec!["Cancelled by=FrontEnd".into()],
            ..case("deny at once: 3 (dismissed)", "deny", passwords())
        },
        Case {
            expect: &[(SELF, 1)],
            must_see: vec![
                "CALL-ERROR answer: PAM has not accepted a password".into(),
                "Failed(\"approved before PAM accepted a password\")".into(),
            ],
            ..case(
                "approve without PAM: 1 (fails closed)",
                "approve-without-pam",
                passwords(),
            )
        },
    ]
}

/// Other requests: auth_admin, two at once, pkexec, a requester that goes away.
fn request_cases() -> Vec<Case> {
    vec![
        Case {
            actions: &[ADMIN_ACTION],
            expect: &[(ADMIN_ACTION, 0)],
            must_see: vec![format!("ids={ADMIN} ")],
            ..case(
                "auth_admin with the admin's password: 0",
                "password",
                passwords(),
            )
        },
        Case {
            actions: &[SELF, ADMIN_ACTION],
            expect: &[(SELF, 0), (ADMIN_ACTION, 0)],
            hold_until: 2,
            must_see: vec!["already_open=0".into(), "already_open=1".into()],
            ..case(
                "two requests at once: both answered, one after the other",
                "password",
                passwords(),
            )
        },
        Case {
            actions: &[],
            pkexec: true,
            expect: &[("pkexec", 0)],
            must_see: vec![
                "subject: out pkexec 0".into(),
                "org.freedesktop.policykit.exec ids=pcpadmin ".into(),
                // polkitd 122 forwards only the pids as details; pkexec's command line reaches
                // the agent inside polkit's message.
                "details=polkit.caller-pid,polkit.subject-pid".into(),
                "\"Authentication is needed to run `/usr/bin/id' as the super user\"".into(),
            ],
            ..case(
                "pkexec id -u, approved with the admin's password: prints 0",
                "password",
                passwords(),
            )
        },
        Case {
            actions: &[],
            pkexec: true,
            expect: &[("pkexec", 126)],
            must_see: vec!["=subject: out pkexec ".into()],
            ..case(
                "pkexec id -u, denied: 126, prints nothing",
                "deny",
                passwords(),
            )
        },
        Case {
            kill_requester: true,
            must_see: vec!["Cancelled by=Polkit".into()],
            ..case(
                "the requester killed: polkitd cancels, the request closes",
                "hold",
                passwords(),
            )
        },
        // Last: it stops polkitd.
        Case {
            actions: &[],
            impostor: true,
            must_see: vec![
                "OWNER cookie-with-space org.freedesktop.PolicyKit1.Error.Failed: the cookie holds bytes other than printable ASCII".into(),
                "OWNER cookie-with-newline org.freedesktop.PolicyKit1.Error.Failed: the cookie holds".into(),
                "OWNER uid-as-string org.freedesktop.PolicyKit1.Error.Failed: malformed identities: identity 0 (unix-user) has a uid of type s, not uint32".into(),
                "OWNER negative-uid org.freedesktop.PolicyKit1.Error.Failed: malformed identities: identity 0 (unix-user) has a negative uid -5".into(),
                "OWNER only-a-group org.freedesktop.PolicyKit1.Error.Failed: no identity the helper can authenticate (identity 0 is a \"unix-group\", not a unix-user)".into(),
                "OWNER no-identities org.freedesktop.PolicyKit1.Error.Failed: no identity the helper can authenticate ()".into(),
                "OWNER a-good-request org.freedesktop.PolicyKit1.Error.Cancelled".into(),
                "REQUEST 1-owner-5 org.pcp.test.self ids=root ".into(),
            ],
            ..case(
                "malformed calls from the owner of polkitd's name are refused with the reason",
                "deny",
                passwords(),
            )
        },
    ]
}

impl Case {
    pub fn run(&self, world: &World) -> Result<(), String> {
        let (tx, rx) = channel_pair();
        let mut log = Vec::new();
        let env = [
            ("ACTIONS", self.actions.join(" ")),
            ("PKEXEC", if self.pkexec { "1" } else { "0" }.to_string()),
        ];
        let (subject, mut subject_in) =
            spawn_as(USER, &["sh", "-c", SUBJECT], &env, "subject", &tx)?;
        let secs = Duration::from_secs;
        let pid = wait_for(&rx, &mut log, "subject", secs(10), |l| {
            l.starts_with("pid ")
        })?;
        let mut agent = None;
        let mut impostor = None;
        if let Some((mode, pws)) = &self.agent {
            let exe = world.exe.to_string_lossy().into_owned();
            let env = [
                ("PCP_POLKIT_ROLE", "agent".to_string()),
                (
                    "PCP_SUBJECT_PID",
                    pid.trim_start_matches("pid ").to_string(),
                ),
                ("PCP_MODE", mode.to_string()),
                ("PCP_PASSWORDS", pws.clone()),
                (
                    "PCP_DUPLICATE",
                    if self.duplicate { "1" } else { "0" }.to_string(),
                ),
                ("PCP_HOLD_UNTIL", self.hold_until.to_string()),
            ];
            agent = Some(spawn_as(USER, &[exe.as_str()], &env, "agent", &tx)?);
            let ready = wait_for(&rx, &mut log, "agent", secs(15), |l| {
                l.starts_with("READY") || l.starts_with("START-ERROR")
            })?;
            if !ready.starts_with("READY") {
                return Err(format!("the agent did not start: {ready}"));
            }
            if self.impostor {
                impostor = Some(start_impostor(world, &ready, &tx, &rx, &mut log)?);
            }
            if self.forge {
                self.forge(world, &ready, &mut log)?;
                wait_for(&rx, &mut log, "agent", secs(5), |l| {
                    l.starts_with("REFUSED Cancel")
                })?;
            }
        }
        go(&mut subject_in)?;
        if self.kill_requester {
            kill_requester(&rx, &mut log)?;
        }
        let done = if log.iter().any(|l| l == "subject: done") {
            Ok(String::new())
        } else {
            wait_for(&rx, &mut log, "subject", secs(60), |l| l == "done")
        };
        finish(subject, subject_in, secs(2));
        if let Some((child, stdin)) = agent {
            finish(child, stdin, secs(10));
        }
        if let Some((child, stdin)) = impostor {
            finish(child, stdin, secs(5));
        }
        drop(tx);
        log.extend(rx.try_iter().map(|l| format!("{}: {}", l.from, l.text)));
        done?;
        self.check(&log)
    }

    /// Calls the agent's object as a process that is not polkitd. The system bus's own policy
    /// already stops root and ordinary users (only the `polkitd` user may send on the agent
    /// interface), so the forger runs as the `polkitd` user: the bus lets it through and the
    /// agent's own check must refuse it.
    fn forge(&self, world: &World, ready: &str, log: &mut Vec<String>) -> Result<(), String> {
        let target = ready.trim_start_matches("READY ").to_string();
        let out = std::process::Command::new("setpriv")
            .args(["--reuid=polkitd", "--regid=polkitd", "--init-groups"])
            .arg(&world.exe)
            .env("PCP_POLKIT_ROLE", "forge")
            .env("PCP_TARGET", target)
            .output()
            .map_err(|e| format!("cannot run the forger: {e}"))?;
        let text = String::from_utf8_lossy(&out.stdout);
        log.extend(text.lines().map(|l| format!("forger: {l}")));
        Ok(())
    }

    fn check(&self, log: &[String]) -> Result<(), String> {
        let codes = exit_codes(log);
        let shown = || format!("\n  {}", log.join("\n  "));
        for (action, code) in self.expect {
            if codes.get(*action) != Some(code) {
                return Err(format!(
                    "pkcheck {action} exited {:?}, not {code}:{}",
                    codes.get(*action),
                    shown()
                ));
            }
        }
        for want in &self.must_see {
            let found = match want.strip_prefix('=') {
                Some(whole) => log.iter().any(|l| l == whole),
                None => log.iter().any(|l| l.contains(want.as_str())),
            };
            if !found {
                return Err(format!("no line with {want:?}:{}", shown()));
            }
        }
        if std::env::var("PCP_POLKIT_VERBOSE").as_deref() == Ok("1") {
            println!("  {}", log.join("\n  "));
        }
        if let Some(l) = log
            .iter()
            .find(|l| l.contains(USER_PW) || l.contains(crate::ADMIN_PW))
        {
            return Err(format!("a password was printed: {l}"));
        }
        Ok(())
    }
}

/// Stops polkitd and starts the `owner` role (owner.rs) as the `polkitd` user; returns once it
/// sent its calls. It keeps the name until its stdin closes.
fn start_impostor(
    world: &World,
    ready: &str,
    tx: &Sender<Line>,
    rx: &Receiver<Line>,
    log: &mut Vec<String>,
) -> Result<(Child, ChildStdin), String> {
    world.stop_polkitd()?;
    let target = ready.trim_start_matches("READY ").to_string();
    let env = [
        ("PCP_POLKIT_ROLE", "owner".to_string()),
        ("PCP_TARGET", target),
    ];
    let exe = world.exe.to_string_lossy().into_owned();
    let impostor = spawn_as("polkitd", &[exe.as_str()], &env, "owner", tx)?;
    wait_for(rx, log, "owner", Duration::from_secs(30), |l| {
        l.starts_with("OWNER done") || l.starts_with("OWNER-ERROR")
    })?;
    Ok(impostor)
}

/// Once the agent has the request, kills the subject's pkcheck and waits for the request to
/// close (polkitd's CancelAuthentication).
fn kill_requester(rx: &Receiver<Line>, log: &mut Vec<String>) -> Result<(), String> {
    let secs = Duration::from_secs;
    wait_for(rx, log, "agent", secs(15), |l| l.starts_with("REQUEST"))?;
    let pk = log
        .iter()
        .find_map(|l| l.strip_prefix("subject: pk "))
        .ok_or("no pkcheck pid")?;
    let pid: i32 = pk
        .rsplit(' ')
        .next()
        .and_then(|p| p.parse().ok())
        .ok_or("bad pid")?;
    // SAFETY: kill has no memory preconditions; pid is the subject's pkcheck.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    wait_for(rx, log, "agent", secs(15), |l| l.starts_with("CLOSED"))?;
    Ok(())
}
