//! The polkit front end: turns the agent's events into engine commands (a request becomes a
//! `polkit.<action id>` intent, PAM's prompts and verdicts become entry news) and the engine's
//! answers into the agent's calls (the typed line to the helper, approve or deny to polkitd).
//! It never decides: the gate does, and PAM does. Any error on the way is a denial, logged.

use std::collections::{HashMap, VecDeque};

use pcp_gate::{ClientIdentity, Intent};
use pcp_plugin::{Command, Decided, Effect, EntryUpdate, FrontEndId, Ticket};
use pcp_polkit::{
    Agent, AgentEvent, Answer, AttemptEnd, AuthRequest, ClosedBy, Identity, Refusal, Reply, Secret,
};
use serde_json::{Map, Value, json};

use super::config::PolkitText;

/// The prefix of every polkit capability: `polkit.org.freedesktop.udisks2.filesystem-mount`.
pub const CAPABILITY_PREFIX: &str = "polkit.";

/// Longest command line of the requester kept for the dialog, in bytes.
const MAX_CMDLINE: usize = 1024;

/// One open polkit request.
struct Open {
    cookie: String,
    /// The accounts polkitd offered, in the agent's order: the session user's own, root, the
    /// others. Never empty.
    identities: Vec<Identity>,
    /// The one the password is asked for (an index into `identities`): the first, until the
    /// user asks for the next.
    chosen: usize,
    /// PAM accepted a password for it.
    authenticated: bool,
    /// Why the last try failed ("Authentication failed. 2 tries left."): the entry keeps
    /// saying it with the next try's prompt, until the user sends that try, so that a typo is
    /// told from a hang.
    failed: Option<String>,
}

impl Open {
    fn identity(&self) -> &Identity {
        &self.identities[self.chosen]
    }

    /// The account row's words when there is more than one account to choose from.
    fn account_line(&self, text: &PolkitText) -> Option<String> {
        let next = self
            .identities
            .get((self.chosen + 1) % self.identities.len())?;
        (self.identities.len() > 1).then(|| text.account(&self.identity().name, &next.name))
    }
}

/// The front end's state, shared by the agent's event source and the engine's deliveries.
pub(crate) struct Front {
    pub agent: Option<Agent>,
    pub id: FrontEndId,
    text: PolkitText,
    next: u64,
    open: HashMap<u64, Open>,
    /// The request in the engine, if any. polkit requests are weighed one at a time, as a
    /// Wayland client's intents wait in its backlog: a program's second request waits here for
    /// the first to be decided, instead of meeting the gate's limit on one program's prompts.
    current: Option<u64>,
    /// Requests waiting for the one in the engine, in the order polkitd asked.
    waiting: VecDeque<(u64, Intent)>,
    /// The session is locked: requests wait here until it is unlocked, so nobody at a locked
    /// screen is asked for an admin password (a request already shown stays until answered).
    held: bool,
}

impl Front {
    pub fn new(id: FrontEndId, text: PolkitText) -> Front {
        Front {
            agent: None,
            id,
            text,
            next: 1,
            open: HashMap::new(),
            current: None,
            waiting: VecDeque::new(),
            held: false,
        }
    }

    /// Whether the session is locked now: while it is, no waiting request goes to the engine;
    /// once it is not, the next one does (the commands returned).
    pub fn session_locked(&mut self, locked: bool) -> Vec<Command> {
        let was = std::mem::replace(&mut self.held, locked);
        if was && !locked && !self.waiting.is_empty() {
            tracing::info!(
                "the session is unlocked: {} held polkit request(s) go on",
                self.waiting.len()
            );
        }
        self.submit_next().into_iter().collect()
    }

    fn ticket(&self, number: u64) -> Ticket {
        Ticket {
            front: self.id,
            number,
        }
    }

    fn number_of(&self, cookie: &str) -> Option<u64> {
        self.open
            .iter()
            .find_map(|(n, o)| (o.cookie == cookie).then_some(*n))
    }

    fn answer(&self, cookie: &str, answer: Answer) {
        let Some(agent) = &self.agent else { return };
        if let Err(e) = agent.answer(cookie, answer) {
            tracing::warn!("polkit request {cookie}: {e}");
        }
    }

    /// What an agent event asks of the engine.
    pub fn event(&mut self, event: AgentEvent) -> Vec<Command> {
        match event {
            AgentEvent::Request(request) => self.request(request),
            AgentEvent::Prompt { cookie, prompt } => {
                // PAM's question, never an answer: the session test waits for this line.
                tracing::info!(
                    "polkit request {cookie}: PAM asks {:?} (echo {})",
                    prompt.text,
                    prompt.echo
                );
                let open = self.number_of(&cookie).and_then(|n| self.open.get_mut(&n));
                let failed = open.and_then(|o| o.failed.take());
                let mut updates = vec![
                    EntryUpdate::Ask {
                        label: prompt.text,
                        echo: prompt.echo,
                    },
                    EntryUpdate::Message(failed.unwrap_or_else(|| self.text.how_to_type.clone())),
                ];
                let account = self
                    .number_of(&cookie)
                    .and_then(|n| self.open.get(&n))
                    .and_then(|o| o.account_line(&self.text));
                updates.extend(account.map(EntryUpdate::Account));
                self.entry(&cookie, updates)
            }
            AgentEvent::PamMessage { cookie, text, .. } => {
                self.entry(&cookie, vec![EntryUpdate::Message(text)])
            }
            AgentEvent::AttemptEnded { cookie, end } => self.attempt_ended(&cookie, end),
            AgentEvent::Closed { cookie, reply, by } => self.closed(&cookie, reply, by),
            AgentEvent::Refused(refusal) => vec![self.refused(refusal)],
        }
    }

    fn entry(&self, cookie: &str, updates: Vec<EntryUpdate>) -> Vec<Command> {
        // An event for a request already closed is left over from its helper: ignored.
        let Some(number) = self.number_of(cookie) else {
            return Vec::new();
        };
        let ticket = self.ticket(number);
        updates
            .into_iter()
            .map(|update| Command::Entry { ticket, update })
            .collect()
    }

    fn request(&mut self, request: AuthRequest) -> Vec<Command> {
        let cookie = request.cookie.clone();
        let Some(first) = request.identities.first().cloned() else {
            // The crate never passes an empty list; fail closed all the same.
            self.answer(&cookie, Answer::Fail("no identity to authenticate".into()));
            return Vec::new();
        };
        let capability = match capability_of(&request.action_id) {
            Ok(c) => c,
            Err(why) => {
                tracing::warn!("polkit request {cookie} refused: {why}");
                self.answer(&cookie, Answer::Fail(why));
                return Vec::new();
            }
        };
        let number = self.next;
        self.next += 1;
        tracing::info!(
            "polkit request {cookie}: {} for {} (uid {}), subject pid {:?}, as ticket {number}",
            request.action_id,
            first.name,
            first.uid,
            request.subject_pid
        );
        if !request.skipped_identities.is_empty() {
            tracing::info!(
                "polkit request {cookie}: identities left out: {}",
                request.skipped_identities.join("; ")
            );
        }
        self.open.insert(
            number,
            Open {
                cookie,
                identities: request.identities.clone(),
                chosen: 0,
                authenticated: false,
                failed: None,
            },
        );
        let client = requester(request.subject_pid, request.caller_pid);
        let intent = Intent::new(&capability, params_of(&request, &self.text), client);
        self.waiting.push_back((number, intent));
        if self.current.is_some() {
            tracing::info!(
                "polkit request {}: waits for the one being decided",
                request.cookie
            );
        } else if self.held {
            tracing::info!(
                "polkit request {}: held while the session is locked",
                request.cookie
            );
        }
        self.submit_next().into_iter().collect()
    }

    /// Hands the engine the next waiting request when none is being decided and the session is
    /// not locked. Its entry is
    /// attached once the engine says it waits for the user (`Effect::Pending`).
    fn submit_next(&mut self) -> Option<Command> {
        if self.current.is_some() || self.held {
            return None;
        }
        let (number, intent) = self.waiting.pop_front()?;
        self.current = Some(number);
        Some(Command::Submit {
            ticket: self.ticket(number),
            intent,
        })
    }

    fn attempt_ended(&mut self, cookie: &str, end: AttemptEnd) -> Vec<Command> {
        let Some(number) = self.number_of(cookie) else {
            return Vec::new();
        };
        let (update, again) = match end {
            AttemptEnd::Success => {
                if let Some(open) = self.open.get_mut(&number) {
                    open.authenticated = true;
                    tracing::info!(
                        "polkit request {cookie}: PAM accepted the password of {} (uid {})",
                        open.identity().name,
                        open.identity().uid
                    );
                }
                (EntryUpdate::Accepted, false)
            }
            AttemptEnd::Failure { tries_left } => (
                EntryUpdate::Message(self.text.wrong(tries_left)),
                tries_left > 0,
            ),
            AttemptEnd::Broken { reason, tries_left } => (
                EntryUpdate::Message(self.text.broken(&reason, tries_left)),
                tries_left > 0,
            ),
        };
        if again {
            if let (EntryUpdate::Message(why), Some(open)) = (&update, self.open.get_mut(&number)) {
                open.failed = Some(why.clone());
            }
            self.authenticate(number);
        }
        let ticket = self.ticket(number);
        let accepted = update == EntryUpdate::Accepted;
        let mut commands = vec![Command::Entry { ticket, update }];
        if accepted {
            commands.push(Command::Entry {
                ticket,
                update: EntryUpdate::Message(self.text.accepted.clone()),
            });
        }
        commands
    }

    /// polkitd has its answer. A request still waiting in the engine (the requester went
    /// away, or the tries ran out) is cancelled there: its dialog closes at once, audited.
    fn closed(&mut self, cookie: &str, reply: Reply, by: ClosedBy) -> Vec<Command> {
        tracing::info!("polkit request {cookie} answered {reply:?} (closed by {by:?})");
        let Some(number) = self.number_of(cookie) else {
            return Vec::new();
        };
        self.open.remove(&number);
        if let Some(at) = self.waiting.iter().position(|(n, _)| *n == number) {
            // Never weighed: the gate hears of it as a request refused before it was, so the
            // audit keeps every request and its end.
            let (_, intent) = self.waiting.remove(at).expect("found above");
            return vec![Command::Refuse {
                ticket: self.ticket(number),
                intent,
                why: pcp_plugin::Refusal::Unreadable(format!(
                    "the polkit request was closed ({by:?}) while it waited for another"
                )),
            }];
        }
        let ticket = self.ticket(number);
        let mut commands = vec![match by {
            ClosedBy::TooManyFailures => Command::AuthenticationFailed {
                ticket,
                reason: match &reply {
                    Reply::Failed(why) => format!("PAM refused the password: {why}"),
                    other => format!("PAM refused the password ({other:?})"),
                },
            },
            _ => Command::Cancel(ticket),
        }];
        if self.current == Some(number) {
            self.current = None;
            commands.extend(self.submit_next());
        }
        commands
    }

    /// A call that did not come from polkitd: audited as a refused intent naming the sender.
    fn refused(&mut self, refusal: Refusal) -> Command {
        let sender = refusal.sender.clone().unwrap_or_else(|| "(none)".into());
        tracing::warn!(
            "polkit agent: {} from {sender} refused: {}",
            refusal.method,
            refusal.reason
        );
        let number = self.next;
        self.next += 1;
        let client = ClientIdentity {
            id: format!("dbus:{sender}"),
            ..ClientIdentity::default()
        };
        let intent = Intent::new(
            "polkit.agent-call",
            json!({"method": refusal.method, "sender": sender}),
            client,
        );
        Command::Refuse {
            ticket: self.ticket(number),
            intent,
            why: pcp_plugin::Refusal::Unreadable(format!(
                "a {} not from polkitd: {}",
                refusal.method, refusal.reason
            )),
        }
    }

    /// Starts a password attempt for request `number`.
    fn authenticate(&self, number: u64) -> Option<String> {
        let (Some(agent), Some(open)) = (&self.agent, self.open.get(&number)) else {
            return Some("the agent is not running".into());
        };
        agent
            .authenticate(&open.cookie, open.identity().uid)
            .err()
            .map(|e| {
                tracing::warn!(
                    "polkit request {}: cannot start a password try: {e}",
                    open.cookie
                );
                e.to_string()
            })
    }

    /// An engine answer for one of our tickets.
    pub fn deliver(&mut self, effect: Effect) -> Option<Command> {
        match effect {
            Effect::Pending { ticket, .. } => {
                let message = match self.authenticate(ticket.number) {
                    None => self.text.starting.clone(),
                    Some(why) => self.text.broken(&why, 0),
                };
                Some(Command::Entry {
                    ticket,
                    update: EntryUpdate::Message(message),
                })
            }
            Effect::Decided(decided) => self.decided(decided),
            Effect::EntryNextAccount { ticket } => self.next_account(ticket),
            Effect::EntrySubmitted { ticket, mut text } => {
                let open = self.open.get(&ticket.number)?;
                let agent = self.agent.as_ref()?;
                // The line moves into the secret (no copy is left behind) and on to the helper.
                let secret = Secret::new(std::mem::take(&mut *text.0));
                agent.respond(&open.cookie, secret).err().map(|e| {
                    tracing::warn!("polkit request {}: {e}", open.cookie);
                    Command::Entry {
                        ticket,
                        update: EntryUpdate::Message(e.to_string()),
                    }
                })
            }
            _ => None,
        }
    }

    /// The user asked for the next account: the attempt in progress (nothing typed into it was
    /// sent) stops without counting a try, and one for that account starts; its prompt brings
    /// the entry's next question and the account row's new words.
    fn next_account(&mut self, ticket: Ticket) -> Option<Command> {
        let agent = self.agent.as_ref()?;
        let open = self.open.get_mut(&ticket.number)?;
        let before = open.chosen;
        open.chosen = (open.chosen + 1) % open.identities.len();
        // A failure of the other account's password says nothing of this one's.
        open.failed = None;
        let identity = open.identity().clone();
        let message = match agent.switch_identity(&open.cookie, identity.uid) {
            Ok(()) => {
                tracing::info!(
                    "polkit request {}: the password is now asked for {} (uid {})",
                    open.cookie,
                    identity.name,
                    identity.uid
                );
                self.text.starting.clone()
            }
            Err(e) => {
                tracing::warn!(
                    "polkit request {}: cannot switch accounts: {e}",
                    open.cookie
                );
                open.chosen = before;
                e.to_string()
            }
        };
        Some(Command::Entry {
            ticket,
            update: EntryUpdate::Message(message),
        })
    }

    /// The engine's decision on a request: polkitd hears it, and the next waiting request
    /// goes to the engine.
    fn decided(&mut self, decided: Box<Decided>) -> Option<Command> {
        if self.current == Some(decided.ticket.number) {
            self.current = None;
        }
        // Gone already: polkitd closed it (its cancel was sent), or its approval could not be
        // delivered and this is the engine's answer to that.
        let Some(open) = self.open.remove(&decided.ticket.number) else {
            return self.submit_next();
        };
        let outcome = &decided.outcome;
        if !outcome.approved {
            // Denied, timed out, or refused by the gate: polkit hears "dismissed".
            self.answer(&open.cookie, Answer::Deny);
            return self.submit_next();
        }
        if open.authenticated {
            self.answer(&open.cookie, Answer::Approve);
            return self.submit_next();
        }
        // Approved without a dialog (the policy or history allowed it): the password step
        // cannot be skipped, so polkitd is told it failed and the log says why.
        let reason = "approved without the password step (polkit actions need a dialog: \
                      classify them privileged or higher)"
            .to_string();
        self.answer(&open.cookie, Answer::Fail(reason.clone()));
        Some(Command::Undeliverable { decided, reason })
    }
}

/// The capability of a polkit action: `polkit.` and the action id in lowercase. An action id
/// with anything but ASCII letters, digits, `.`, `-` and `_` is refused (polkit's own ids
/// never have them).
pub fn capability_of(action_id: &str) -> Result<String, String> {
    let ok = !action_id.is_empty()
        && action_id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'))
        && !action_id.starts_with('.')
        && !action_id.ends_with('.')
        && !action_id.contains("..");
    if !ok {
        return Err(format!(
            "the action id {action_id:?} is not a dotted name of letters, digits, - and _"
        ));
    }
    Ok(format!(
        "{CAPABILITY_PREFIX}{}",
        action_id.to_ascii_lowercase()
    ))
}

/// What the dialog shows of a request: polkit's message, the action id, the account asked for
/// (or, when polkitd offers several, all of them in the order they are offered: the entry's
/// account row says which one is asked now), and who asked polkitd when that is another
/// process than the subject (pkexec, with its command line).
fn params_of(request: &AuthRequest, text: &PolkitText) -> Value {
    let mut params = Map::new();
    params.insert("action_id".into(), json!(request.action_id));
    params.insert("message".into(), json!(request.message));
    let names: Vec<&str> = request.identities.iter().map(|i| i.name.as_str()).collect();
    match names.as_slice() {
        [one] => params.insert("identity".into(), json!(one)),
        many => params.insert("identities".into(), json!(many.join(", "))),
    };
    if let Some(caller) = request.caller_pid
        && request.caller_pid != request.subject_pid
    {
        let exe = pcp_plugin::identity::executable_of(caller)
            .unwrap_or_else(|| text.unreadable_program.clone());
        let mut line = format!("{exe} (pid {caller})");
        if let Some(cmdline) = command_line(caller) {
            line.push_str(": ");
            line.push_str(&cmdline);
        }
        params.insert("requested_by".into(), json!(line));
    }
    if let Some(cmdline) = &request.command_line {
        params.insert("command_line".into(), json!(cmdline));
    }
    Value::Object(params)
}

/// `/proc/PID/cmdline` with its NULs as spaces, capped.
fn command_line(pid: u32) -> Option<String> {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let raw = &raw[..raw.len().min(MAX_CMDLINE)];
    let text: String = String::from_utf8_lossy(raw)
        .split('\0')
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    (!text.is_empty()).then_some(text)
}

/// The requester as the kernel knows it: polkitd's `polkit.subject-pid` (the process the
/// authorization is for), its executable, uid and start time from `/proc`. Its key names the
/// caller too (pkcheck, pkexec, a daemon: who asked polkitd), as a connection names a Wayland
/// client: two callers asking for one subject queue one after the other, and the gate's limit
/// on open prompts per client still holds each caller to its own.
fn requester(pid: Option<u32>, caller: Option<u32>) -> ClientIdentity {
    let id = match (pid, caller) {
        (Some(p), Some(c)) => format!("polkit:{p}:{c}"),
        (Some(p), None) => format!("polkit:{p}"),
        (None, _) => "polkit:unknown".into(),
    };
    ClientIdentity {
        id,
        pid,
        uid: pid.and_then(pcp_polkit::real_uid),
        executable: pid.and_then(pcp_plugin::identity::executable_of),
        start_time: pid.and_then(pcp_plugin::identity::start_time_of),
        ..ClientIdentity::default()
    }
}

#[cfg(test)]
mod tests {
    use super::capability_of;

    #[test]
    fn action_ids_become_lowercase_capabilities_and_odd_ones_are_refused() {
        assert_eq!(
            capability_of("org.freedesktop.NetworkManager.settings.modify.system").unwrap(),
            "polkit.org.freedesktop.networkmanager.settings.modify.system"
        );
        assert_eq!(
            capability_of("org.freedesktop.udisks2.filesystem-mount").unwrap(),
            "polkit.org.freedesktop.udisks2.filesystem-mount"
        );
        for bad in ["", "a..b", ".a", "a.", "a b", "a/b", "ä.b"] {
            assert!(capability_of(bad).is_err(), "{bad:?}");
        }
    }
}
