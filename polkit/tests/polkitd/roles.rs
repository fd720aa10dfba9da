//! The processes the test runs as the test users: the scripted front end (`agent`), which
//! drives the real `pcp_polkit::Agent` and prints what it sees, one line per event (never a
//! password); and the forger, which calls the agent's object without being polkitd.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::RecvTimeoutError;
use std::time::Duration;

use pcp_polkit::{
    Agent, AgentConfig, AgentEvent, Answer, AttemptEnd, AuthRequest, Secret, Subject, SubjectChoice,
};

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_default()
}

/// How the scripted front end answers.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    /// Types the user's next scripted password at each prompt; approves after PAM accepts.
    Password,
    /// Denies as soon as the request arrives.
    Deny,
    /// Starts the attempt and denies at the password prompt (the user's Deny, or the timeout).
    DenyAtPrompt,
    /// Approves without any password: the agent must fail it.
    ApproveWithoutPam,
    /// Never answers (the requester is killed instead).
    Hold,
    /// Types the right password, then denies once PAM accepted it (a later modality said no).
    DenyAfterPam,
}

struct FrontEnd {
    agent: Agent,
    mode: Mode,
    /// Per user name: the passwords to type, in order.
    passwords: HashMap<String, VecDeque<String>>,
    queue: VecDeque<AuthRequest>,
    current: Option<AuthRequest>,
    /// Starts nothing until this many requests arrived (to prove several are open at once).
    hold_until: usize,
    seen: usize,
}

/// `agent` role: PCP_SUBJECT_PID, PCP_MODE, PCP_PASSWORDS (`user=pw1,pw2;user2=pw`),
/// PCP_DUPLICATE=1 to also try a second agent for the same subject. Runs until stdin closes.
pub fn agent() -> i32 {
    let pid: u32 = env("PCP_SUBJECT_PID").parse().unwrap_or(0);
    let subject = match Subject::process(pid) {
        Ok(s) => s,
        Err(e) => return fail(&format!("START-ERROR {e}")),
    };
    let config = AgentConfig {
        subject: SubjectChoice::Fixed(subject),
        ..AgentConfig::default()
    };
    let (mut agent, mut events) = match Agent::start_with_channel(config.clone()) {
        Ok(a) => a,
        Err(e) => return fail(&format!("START-ERROR {e}")),
    };
    if env("PCP_DUPLICATE") == "1" {
        let second = AgentConfig {
            object_path: "/org/pcp/confirm/SecondAgent".into(),
            ..config.clone()
        };
        match Agent::start_with_channel(second) {
            Ok(_) => println!("DUPLICATE registered"),
            Err(e) => println!("DUPLICATE {e}"),
        }
        // Dropping the agent unregisters it, so the subject is free again at once.
        drop(agent);
        (agent, events) = match Agent::start_with_channel(config) {
            Ok(a) => a,
            Err(e) => return fail(&format!("START-ERROR after a drop: {e}")),
        };
        println!("REREGISTERED after a drop");
    }
    let mode = match env("PCP_MODE").as_str() {
        "deny" => Mode::Deny,
        "deny-at-prompt" => Mode::DenyAtPrompt,
        "approve-without-pam" => Mode::ApproveWithoutPam,
        "hold" => Mode::Hold,
        "deny-after-pam" => Mode::DenyAfterPam,
        _ => Mode::Password,
    };
    let passwords = env("PCP_PASSWORDS")
        .split(';')
        .filter_map(|e| e.split_once('='))
        .map(|(u, pws)| (u.to_owned(), pws.split(',').map(str::to_owned).collect()))
        .collect();
    println!("READY {}", agent.bus_name().unwrap_or_default());
    let stop = Arc::new(AtomicBool::new(false));
    let stop_reader = Arc::clone(&stop);
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut std::io::stdin(), &mut std::io::sink());
        stop_reader.store(true, Ordering::SeqCst);
    });
    let mut front = FrontEnd {
        agent,
        mode,
        passwords,
        queue: VecDeque::new(),
        current: None,
        hold_until: env("PCP_HOLD_UNTIL").parse().unwrap_or(1),
        seen: 0,
    };
    while !stop.load(Ordering::SeqCst) {
        match events.recv_timeout(Duration::from_millis(100)) {
            Ok(event) => front.handle(event),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    drop(front);
    println!("STOPPED");
    0
}

fn fail(line: &str) -> i32 {
    println!("{line}");
    2
}

impl FrontEnd {
    fn handle(&mut self, event: AgentEvent) {
        match event {
            AgentEvent::Request(r) => {
                let ids: Vec<&str> = r.identities.iter().map(|i| i.name.as_str()).collect();
                let mut keys: Vec<&str> = r.details.keys().map(String::as_str).collect();
                keys.sort_unstable();
                println!(
                    "MESSAGE {} {:?} details={}",
                    r.cookie,
                    r.message,
                    keys.join(",")
                );
                println!(
                    "REQUEST {} {} ids={} subject={:?} caller={:?} program={:?} cmd={:?} already_open={}",
                    r.cookie,
                    r.action_id,
                    ids.join(","),
                    r.subject_pid,
                    r.caller_pid,
                    r.program,
                    r.command_line,
                    self.queue.len() + usize::from(self.current.is_some())
                );
                self.queue.push_back(r);
                self.seen += 1;
                self.next();
            }
            AgentEvent::Prompt { cookie, prompt } => {
                println!("PROMPT {cookie} echo={} {:?}", prompt.echo, prompt.text);
                self.on_prompt(&cookie);
            }
            AgentEvent::PamMessage { cookie, kind, text } => {
                println!("PAM {cookie} {kind:?} {text:?}")
            }
            AgentEvent::AttemptEnded { cookie, end } => {
                println!("ATTEMPT {cookie} {end:?}");
                let again = matches!(end, AttemptEnd::Failure { tries_left } | AttemptEnd::Broken { tries_left, .. } if tries_left > 0);
                if end == AttemptEnd::Success {
                    let answer = match self.mode {
                        Mode::DenyAfterPam => Answer::Deny,
                        _ => Answer::Approve,
                    };
                    self.call("answer", self.agent.answer(&cookie, answer));
                } else if again {
                    self.start_attempt();
                }
            }
            AgentEvent::Closed { cookie, reply, by } => {
                println!("CLOSED {cookie} {reply:?} by={by:?}");
                self.queue.retain(|r| r.cookie != cookie);
                if self.current.as_ref().is_some_and(|r| r.cookie == cookie) {
                    self.current = None;
                    self.next();
                }
            }
            AgentEvent::Refused(r) => {
                println!("REFUSED {} from {:?}: {}", r.method, r.sender, r.reason)
            }
        }
    }

    /// Takes the next queued request when none is shown: one dialog at a time.
    fn next(&mut self) {
        if self.current.is_some() || self.seen < self.hold_until {
            return;
        }
        let Some(request) = self.queue.pop_front() else {
            return;
        };
        let cookie = request.cookie.clone();
        self.current = Some(request);
        match self.mode {
            Mode::Deny => self.call("answer", self.agent.answer(&cookie, Answer::Deny)),
            Mode::ApproveWithoutPam => {
                self.call("answer", self.agent.answer(&cookie, Answer::Approve))
            }
            Mode::Hold => {}
            Mode::Password | Mode::DenyAtPrompt | Mode::DenyAfterPam => self.start_attempt(),
        }
    }

    fn start_attempt(&mut self) {
        let Some(r) = &self.current else { return };
        let result = self.agent.authenticate(&r.cookie, r.identities[0].uid);
        self.call("authenticate", result);
    }

    fn on_prompt(&mut self, cookie: &str) {
        let Some(r) = &self.current else { return };
        if self.mode == Mode::DenyAtPrompt {
            self.call("answer", self.agent.answer(cookie, Answer::Deny));
            return;
        }
        let user = &r.identities[0].name;
        match self.passwords.get_mut(user).and_then(VecDeque::pop_front) {
            Some(pw) => self.call("respond", self.agent.respond(cookie, Secret::new(pw))),
            None => self.call("answer", self.agent.answer(cookie, Answer::Deny)),
        }
    }

    fn call(&self, what: &str, result: Result<(), pcp_polkit::AgentError>) {
        if let Err(e) = result {
            println!("CALL-ERROR {what}: {e}");
        }
    }
}

/// `forge` role: PCP_TARGET (the agent's unique name). Calls BeginAuthentication and
/// CancelAuthentication as this (non-polkitd) process and prints each D-Bus error name.
pub fn forge() -> i32 {
    let target = env("PCP_TARGET");
    let result = zbus::block_on(async {
        let bus = zbus::Connection::system().await?;
        let uid = unsafe { libc::getuid() };
        let ids = vec![(
            "unix-user",
            HashMap::from([("uid", zbus::zvariant::Value::from(uid))]),
        )];
        let details: HashMap<&str, &str> = HashMap::from([("polkit.subject-pid", "1")]);
        let iface = "org.freedesktop.PolicyKit1.AuthenticationAgent";
        let path = "/org/pcp/confirm/PolkitAgent";
        let args = (
            "org.pcp.test.self",
            "Type your password",
            "",
            details,
            "1-forged-1-x",
            ids,
        );
        let begin = bus
            .call_method(
                Some(target.as_str()),
                path,
                Some(iface),
                "BeginAuthentication",
                &args,
            )
            .await;
        let cancel = bus
            .call_method(
                Some(target.as_str()),
                path,
                Some(iface),
                "CancelAuthentication",
                &("1-forged-1-x",),
            )
            .await;
        Ok::<_, zbus::Error>((begin.err(), cancel.err()))
    });
    let name = |e: Option<zbus::Error>| match e {
        None => "ok".to_string(),
        Some(zbus::Error::MethodError(name, _, _)) => name.to_string(),
        Some(other) => format!("{other}"),
    };
    match result {
        Ok((begin, cancel)) => {
            println!("FORGED BeginAuthentication {}", name(begin));
            println!("FORGED CancelAuthentication {}", name(cancel));
            0
        }
        Err(e) => fail(&format!("FORGE-ERROR {e}")),
    }
}
