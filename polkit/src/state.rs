//! The open requests and their password attempts: the one place that decides what polkitd is
//! answered. Events are sent after the lock is released, so a front end may call the agent back
//! from inside its event sink.

use std::collections::HashMap;
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::error::AgentError;
use crate::helper::{self, HelperConfig, Step, Stopper};
use crate::identity::Identity;
use crate::request::{AgentEvent, Answer, AttemptEnd, AuthRequest, ClosedBy, Reply};
use crate::secret::Secret;

/// Where events go: a closure registered at start (a channel's sender, a calloop channel…).
pub type EventSink = Box<dyn Fn(AgentEvent) + Send + Sync>;

pub(crate) struct Shared {
    sink: EventSink,
    max_tries: u32,
    helper: HelperConfig,
    requests: Mutex<Requests>,
}

#[derive(Default)]
struct Requests {
    open: HashMap<String, Pending>,
    next_attempt: u64,
}

/// One request waiting for its answer. `reply` wakes the `BeginAuthentication` call that is
/// still open towards polkitd.
struct Pending {
    reply: async_channel::Sender<Reply>,
    identities: Vec<Identity>,
    failures: u32,
    authenticated: bool,
    attempt: Option<Attempt>,
}

struct Attempt {
    id: u64,
    /// Dropping it ends the helper's wait for an answer.
    secrets: mpsc::Sender<Secret>,
    stopper: Stopper,
    awaiting_answer: bool,
    /// A secret went to the helper in this attempt: PAM is weighing it, so the attempt may no
    /// longer be dropped for another identity (that would be a try PAM never counted).
    answered: bool,
}

impl Shared {
    pub(crate) fn new(sink: EventSink, max_tries: u32, helper: HelperConfig) -> Self {
        Self {
            sink,
            max_tries: max_tries.max(1),
            helper,
            requests: Mutex::default(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Requests> {
        // A panic while holding the lock leaves the map consistent (every change is one
        // insert or remove), so a poisoned lock is still usable.
        self.requests.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn emit(&self, event: AgentEvent) {
        (self.sink)(event);
    }

    /// Opens a request; its reply arrives on the returned channel. A cookie already open is
    /// refused (polkitd never reuses one while it waits).
    pub(crate) fn open(
        &self,
        request: AuthRequest,
    ) -> Result<async_channel::Receiver<Reply>, String> {
        let (tx, rx) = async_channel::bounded(1);
        {
            let mut requests = self.lock();
            if requests.open.contains_key(&request.cookie) {
                return Err(format!("cookie {:?} is already open", request.cookie));
            }
            let pending = Pending {
                reply: tx,
                identities: request.identities.clone(),
                failures: 0,
                authenticated: false,
                attempt: None,
            };
            requests.open.insert(request.cookie.clone(), pending);
        }
        self.emit(AgentEvent::Request(request));
        Ok(rx)
    }

    /// Answers polkitd for `cookie` and forgets it; `false` if it was not open.
    pub(crate) fn close(&self, cookie: &str, reply: Reply, by: ClosedBy) -> bool {
        let pending = self.lock().open.remove(cookie);
        let Some(pending) = pending else { return false };
        self.finish(cookie, pending, reply, by);
        true
    }

    fn finish(&self, cookie: &str, pending: Pending, reply: Reply, by: ClosedBy) {
        if let Some(attempt) = pending.attempt {
            attempt.stopper.stop();
        }
        // The receiver is gone only if polkitd's call is gone too: nothing left to answer.
        let _ = pending.reply.try_send(reply.clone());
        tracing::info!("polkit request {cookie} closed by {by:?}: {reply:?}");
        self.emit(AgentEvent::Closed {
            cookie: cookie.to_owned(),
            reply,
            by,
        });
    }

    /// Closes every open request with Cancelled (the agent is stopping).
    pub(crate) fn close_all(&self) {
        let open: Vec<(String, Pending)> = self.lock().open.drain().collect();
        for (cookie, pending) in open {
            self.finish(&cookie, pending, Reply::Cancelled, ClosedBy::Shutdown);
        }
    }

    pub(crate) fn answer(&self, cookie: &str, answer: Answer) -> Result<(), AgentError> {
        let pending = self.lock().open.remove(cookie);
        let pending = pending.ok_or_else(|| AgentError::UnknownCookie(cookie.to_owned()))?;
        let (reply, result) = match answer {
            Answer::Approve if pending.authenticated => (Reply::Authenticated, Ok(())),
            // Fail closed: polkitd would refuse anyway (only the helper's response counts),
            // but the front end's mistake is reported, not hidden.
            Answer::Approve => (
                Reply::Failed("approved before PAM accepted a password".into()),
                Err(AgentError::NotAuthenticated),
            ),
            Answer::Deny => (Reply::Cancelled, Ok(())),
            Answer::Fail(reason) => (Reply::Failed(reason), Ok(())),
        };
        self.finish(cookie, pending, reply, ClosedBy::FrontEnd);
        result
    }

    pub(crate) fn respond(&self, cookie: &str, secret: Secret) -> Result<(), AgentError> {
        secret.line().map_err(AgentError::BadSecret)?;
        let mut requests = self.lock();
        let pending = requests
            .open
            .get_mut(cookie)
            .ok_or_else(|| AgentError::UnknownCookie(cookie.to_owned()))?;
        let attempt = pending.attempt.as_mut().ok_or(AgentError::NoPrompt)?;
        if !attempt.awaiting_answer {
            return Err(AgentError::NoPrompt);
        }
        attempt.awaiting_answer = false;
        attempt.answered = true;
        // The helper thread holds the receiver until the attempt ends.
        attempt
            .secrets
            .send(secret)
            .map_err(|_| AgentError::NoPrompt)
    }

    /// Stops the running attempt when nothing was typed into it yet, so that another identity
    /// can be asked; no try is counted for it. An attempt whose secret PAM is weighing stays.
    /// `uid` must be one of the request's identities, checked first so a bad switch leaves the
    /// running attempt alone.
    pub(crate) fn drop_unanswered_attempt(&self, cookie: &str, uid: u32) -> Result<(), AgentError> {
        let mut requests = self.lock();
        let pending = requests
            .open
            .get_mut(cookie)
            .ok_or_else(|| AgentError::UnknownCookie(cookie.to_owned()))?;
        if !pending.identities.iter().any(|i| i.uid == uid) {
            return Err(AgentError::NoSuchIdentity { uid });
        }
        if pending.authenticated {
            return Err(AgentError::AlreadyAuthenticated);
        }
        if pending.attempt.as_ref().is_some_and(|a| a.answered) {
            return Err(AgentError::AttemptRunning);
        }
        if let Some(attempt) = pending.attempt.take() {
            // Its verdict, if any comes, names an attempt that is no longer current: ignored.
            attempt.stopper.stop();
        }
        Ok(())
    }

    /// Starts a password attempt for `uid` on a thread of its own.
    pub(crate) fn authenticate(self: &Arc<Self>, cookie: &str, uid: u32) -> Result<(), AgentError> {
        let mut requests = self.lock();
        let id = requests.next_attempt;
        requests.next_attempt += 1;
        let pending = requests
            .open
            .get_mut(cookie)
            .ok_or_else(|| AgentError::UnknownCookie(cookie.to_owned()))?;
        let identity = pending
            .identities
            .iter()
            .find(|i| i.uid == uid)
            .ok_or(AgentError::NoSuchIdentity { uid })?;
        if pending.authenticated {
            return Err(AgentError::AlreadyAuthenticated);
        }
        if pending.attempt.is_some() {
            return Err(AgentError::AttemptRunning);
        }
        if pending.failures >= self.max_tries {
            return Err(AgentError::TriesExhausted(self.max_tries));
        }
        let conversation = match helper::start(&self.helper, &identity.name, cookie) {
            Ok(c) => c,
            Err(reason) => {
                drop(requests);
                self.attempt_done(cookie, None, Err(reason));
                return Ok(());
            }
        };
        let (tx, rx) = mpsc::channel();
        pending.attempt = Some(Attempt {
            id,
            secrets: tx,
            stopper: conversation.stopper(),
            awaiting_answer: false,
            answered: false,
        });
        drop(requests);
        let shared = Arc::clone(self);
        let thread_cookie = cookie.to_owned();
        let spawned = std::thread::Builder::new()
            .name("pcp-polkit-helper".into())
            .spawn(move || {
                let c = thread_cookie.as_str();
                conversation.run_then(&rx, &mut |step| shared.step(c, id, step), &mut |verdict| {
                    shared.attempt_done(c, Some(id), verdict)
                });
            });
        if let Err(e) = spawned {
            // The closure (and the helper with it) was dropped; a stopped helper fails PAM.
            self.attempt_done(cookie, Some(id), Err(format!("cannot start a thread: {e}")));
        }
        Ok(())
    }

    fn step(&self, cookie: &str, id: u64, step: Step) {
        let event = match step {
            Step::Prompt(prompt) => {
                let mut requests = self.lock();
                let current = requests
                    .open
                    .get_mut(cookie)
                    .and_then(|p| p.attempt.as_mut());
                match current {
                    Some(a) if a.id == id => a.awaiting_answer = true,
                    _ => return,
                }
                AgentEvent::Prompt {
                    cookie: cookie.to_owned(),
                    prompt,
                }
            }
            Step::Message(kind, text) => AgentEvent::PamMessage {
                cookie: cookie.to_owned(),
                kind,
                text,
            },
        };
        self.emit(event);
    }

    /// Records how an attempt ended; the last failed try fails the request. `id` is `None` for
    /// an attempt whose helper never started.
    fn attempt_done(&self, cookie: &str, id: Option<u64>, verdict: helper::Verdict) {
        let mut requests = self.lock();
        let Some(pending) = requests.open.get_mut(cookie) else {
            return; // answered or cancelled meanwhile: its helper was stopped on purpose
        };
        if let Some(id) = id
            && pending.attempt.as_ref().map(|a| a.id) != Some(id)
        {
            return;
        }
        pending.attempt = None;
        let end = match verdict {
            Ok(true) => {
                pending.authenticated = true;
                AttemptEnd::Success
            }
            Ok(false) => {
                pending.failures += 1;
                AttemptEnd::Failure {
                    tries_left: self.max_tries.saturating_sub(pending.failures),
                }
            }
            Err(reason) => {
                tracing::warn!("polkit request {cookie}: the password attempt broke: {reason}");
                pending.failures += 1;
                AttemptEnd::Broken {
                    reason,
                    tries_left: self.max_tries.saturating_sub(pending.failures),
                }
            }
        };
        let exhausted = !pending.authenticated && pending.failures >= self.max_tries;
        let failures = pending.failures;
        let closed = if exhausted {
            requests.open.remove(cookie)
        } else {
            None
        };
        drop(requests);
        self.emit(AgentEvent::AttemptEnded {
            cookie: cookie.to_owned(),
            end,
        });
        if let Some(pending) = closed {
            let reply = Reply::Failed(format!("{failures} password attempts failed"));
            self.finish(cookie, pending, reply, ClosedBy::TooManyFailures);
        }
    }
}

#[cfg(test)]
mod tests;
