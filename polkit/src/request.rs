//! What the front end receives and answers: a polkit request, the PAM conversation's events and
//! the final reply to polkitd.

use std::collections::HashMap;

use crate::identity::Identity;

/// One `BeginAuthentication` from polkitd, checked: the front end shows it and answers it with
/// [`crate::Agent::answer`], naming it by `cookie`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuthRequest {
    /// polkitd's name for this request; unique while it is open.
    pub cookie: String,
    pub action_id: String,
    /// polkit's message for the action, already localised by polkitd.
    pub message: String,
    pub icon_name: String,
    /// Who may authenticate, in the order to offer them: the user's own identity first, then
    /// root, then the others. Never empty.
    pub identities: Vec<Identity>,
    /// The process the authorization is for (`polkit.subject-pid`), to verify and show.
    pub subject_pid: Option<u32>,
    /// The process that asked polkitd (`polkit.caller-pid`; pkexec or a daemon).
    pub caller_pid: Option<u32>,
    /// pkexec's program and full command line, when polkitd forwards them. Debian 12's polkitd
    /// (122) forwards only the two pids: the message names the program, and the caller's
    /// `/proc/PID/cmdline` holds pkexec's whole command line.
    pub program: Option<String>,
    pub command_line: Option<String>,
    /// Every detail polkitd passed, as given.
    pub details: HashMap<String, String>,
    /// Identities polkitd offered that cannot be used (groups, unknown uids), for the log.
    pub skipped_identities: Vec<String>,
}

/// How the front end ends a request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// The user approved (every modality the plan asked for). Becomes success only if PAM
    /// accepted a password for this request; otherwise polkitd is answered Failed.
    Approve,
    /// Denied, or the dialog timed out: `org.freedesktop.PolicyKit1.Error.Cancelled`
    /// (polkit reports "dismissed").
    Deny,
    /// The front end could not ask (no output, a broken dialog…):
    /// `org.freedesktop.PolicyKit1.Error.Failed` with this reason.
    Fail(String),
}

/// What polkitd was told, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    /// Success after PAM accepted a password (polkitd authorizes only then).
    Authenticated,
    /// `org.freedesktop.PolicyKit1.Error.Cancelled`.
    Cancelled,
    /// `org.freedesktop.PolicyKit1.Error.Failed` with a reason.
    Failed(String),
}

/// Who closed a request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClosedBy {
    /// The front end's [`Answer`].
    FrontEnd,
    /// polkitd's `CancelAuthentication` (the requester went away): close the dialog at once.
    Polkit,
    /// The last password attempt failed.
    TooManyFailures,
    /// The agent stopped (dropped) with the request open.
    Shutdown,
}

/// A PAM prompt: answer it with [`crate::Agent::respond`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Prompt {
    pub text: String,
    /// `false`: a password (`PAM_PROMPT_ECHO_OFF`), show a masked entry; `true`: a visible one.
    pub echo: bool,
}

/// PAM's non-prompt messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MessageKind {
    Error,
    Info,
}

/// How one password attempt (one run of the helper) ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AttemptEnd {
    /// PAM accepted: answer the request (Approve once the rest of the plan is done).
    Success,
    /// PAM refused; `tries_left` more attempts may be started (0: the request was failed).
    Failure { tries_left: u32 },
    /// The helper could not be run, died or printed something unexpected; counts as a failed
    /// try.
    Broken { reason: String, tries_left: u32 },
}

/// Everything the agent reports to the front end, in order per cookie, except that an event
/// from a helper may still follow the cookie's `Closed`: ignore events for closed cookies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AgentEvent {
    /// A new request: queue it like any intent.
    Request(AuthRequest),
    Prompt {
        cookie: String,
        prompt: Prompt,
    },
    PamMessage {
        cookie: String,
        kind: MessageKind,
        text: String,
    },
    AttemptEnded {
        cookie: String,
        end: AttemptEnd,
    },
    /// polkitd has been answered; the request is gone. Audit it.
    Closed {
        cookie: String,
        reply: Reply,
        by: ClosedBy,
    },
    /// A call that did not come from polkitd was refused. Audit it.
    Refused(Refusal),
}

/// A refused D-Bus call to the agent object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// `BeginAuthentication` or `CancelAuthentication`.
    pub method: &'static str,
    /// The caller's unique bus name, if the message had one.
    pub sender: Option<String>,
    pub reason: String,
}

impl AuthRequest {
    /// Reads the well-known details: pids as numbers (anything else is left as `None` and kept
    /// in `details`), pkexec's `program` and `command_line`.
    pub(crate) fn read_details(&mut self) {
        let pid = |key: &str| self.details.get(key).and_then(|v| v.parse::<u32>().ok());
        self.subject_pid = pid("polkit.subject-pid");
        self.caller_pid = pid("polkit.caller-pid");
        self.program = self.details.get("program").cloned();
        self.command_line = self.details.get("command_line").cloned();
    }
}
