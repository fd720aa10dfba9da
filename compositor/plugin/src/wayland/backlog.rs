//! The per-connection backlog: submissions beyond `[queue] intents_per_round` in one round of
//! the event loop wait here, one queue per connection served in turn, and are decided at most
//! that many per round from an idle callback. A flood of requests never keeps the loop (and
//! with it the user's input) from going round, and another client's intent waits for one turn,
//! not for the whole flood.

use std::collections::{HashMap, VecDeque};
use std::os::fd::OwnedFd;

use pcp_protocol::generated::server::pcp_intent_manager_v1::PcpIntentManagerV1;
use pcp_protocol::generated::server::pcp_intent_v1::{self, PcpIntentV1};
use pcp_protocol::wire::{self, ParamsError};
use serde_json::Value;
use wayland_server::Resource;
use wayland_server::backend::ClientId;

use super::{IntentData, ObjectState};
use crate::PcpHandler;

/// Submissions one connection may have waiting in the backlog; one more is the protocol error
/// `too_many_waiting`.
pub const MAX_WAITING_PER_CONNECTION: usize = 256;

/// The waiting submissions; see the [module documentation](self).
#[derive(Default)]
pub(crate) struct Backlog {
    queues: HashMap<ClientId, VecDeque<Waiting>>,
    /// Connections with waiting submissions, in the order they are served.
    turns: VecDeque<ClientId>,
    /// Submissions this round may still decide at once.
    left_this_round: u32,
    /// Whether the idle callback that decides waiting submissions is scheduled.
    scheduled: bool,
    /// Schedules that callback on the host's event loop (none before `Pcp::use_event_loop`:
    /// then every submission is decided at once).
    pub(crate) schedule: Option<Box<dyn FnMut()>>,
}

/// One submission waiting for its turn: as it came off the wire, parsed only when decided.
pub(crate) struct Waiting {
    pub manager: PcpIntentManagerV1,
    pub object: PcpIntentV1,
    pub raw: RawSubmission,
}

/// A request's arguments, not yet checked.
pub(crate) struct RawSubmission {
    pub capability: String,
    pub target: Option<String>,
    pub body: RawBody,
}

pub(crate) enum RawBody {
    Inline {
        params: String,
        steps: Option<String>,
    },
    Fd {
        fd: OwnedFd,
        size: u32,
    },
}

/// One submission, as read off the wire and not yet checked.
pub(crate) struct Submission {
    pub capability: String,
    pub target: Option<String>,
    pub body: Result<(Value, Vec<wire::Step>), ParamsError>,
}

impl RawSubmission {
    pub fn parse(self) -> Submission {
        let body = match self.body {
            RawBody::Inline { params, steps } => wire::parse_inline(&params, steps.as_deref()),
            RawBody::Fd { fd, size } => wire::read_fd(fd, size),
        };
        Submission {
            capability: self.capability,
            target: self.target,
            body,
        }
    }
}

/// What to do with a submission just read off the wire.
pub(crate) enum Admission {
    /// Decide it now.
    Now(RawSubmission),
    /// It waits for its turn.
    Queued,
    /// The connection has too many waiting: a protocol error.
    TooMany,
}

impl Backlog {
    /// How many submissions wait.
    pub fn len(&self) -> usize {
        self.queues.values().map(VecDeque::len).sum()
    }

    /// Decided at once while this round has room and the connection has nothing waiting (its
    /// intents are decided in the order it sent them); otherwise queued behind its others.
    pub fn admit(&mut self, client: ClientId, waiting: Waiting) -> Admission {
        let queued = self.queues.get(&client).map_or(0, VecDeque::len);
        if self.schedule.is_none() || (queued == 0 && self.left_this_round > 0) {
            self.left_this_round = self.left_this_round.saturating_sub(1);
            return Admission::Now(waiting.raw);
        }
        if queued >= MAX_WAITING_PER_CONNECTION {
            return Admission::TooMany;
        }
        if let Some(data) = waiting.object.data::<IntentData>() {
            data.set(ObjectState::Waiting);
        }
        let queue = self.queues.entry(client.clone()).or_default();
        if queue.is_empty() {
            self.turns.push_back(client);
        }
        queue.push_back(waiting);
        self.schedule_once();
        Admission::Queued
    }

    fn schedule_once(&mut self) {
        if !self.scheduled {
            self.scheduled = true;
            if let Some(schedule) = &mut self.schedule {
                schedule();
            }
        }
    }

    /// The next waiting submission still to decide, one connection per turn.
    fn next(&mut self) -> Option<Waiting> {
        loop {
            let client_id = self.turns.pop_front()?;
            let Some(queue) = self.queues.get_mut(&client_id) else {
                continue;
            };
            let Some(waiting) = queue.pop_front() else {
                self.queues.remove(&client_id);
                continue;
            };
            if queue.is_empty() {
                self.queues.remove(&client_id);
            } else {
                self.turns.push_back(client_id);
            }
            return Some(waiting);
        }
    }

    /// A new round begins with `per_round` submissions to decide at once.
    fn new_round(&mut self, per_round: u32) {
        self.left_this_round = per_round;
        self.scheduled = false;
        if !self.turns.is_empty() {
            self.schedule_once();
        }
    }
}

/// The idle callback: a new round begins (its budget is `[queue] intents_per_round`), and up to
/// that many waiting submissions are decided, one per connection in turn.
pub(crate) fn decide_waiting<D: PcpHandler>(state: &mut D) {
    let per_round = state.pcp().queue_limits().intents_per_round.max(1);
    let dh = state.pcp().wayland.display.clone();
    let mut decided = 0;
    while decided < per_round {
        let Some(waiting) = state.pcp().wayland.backlog.next() else {
            break;
        };
        // Gone with its client, or destroyed or cancelled while it waited: nothing to decide.
        let Ok(client) = dh.get_client(waiting.object.id()) else {
            continue;
        };
        let cancelled = waiting
            .object
            .data::<IntentData>()
            .is_none_or(|d| d.get() != ObjectState::Waiting);
        if cancelled || !waiting.object.is_alive() {
            if waiting.object.is_alive() {
                waiting.object.denied(
                    pcp_intent_v1::Resolution::Cancelled,
                    "cancelled before it was decided".into(),
                );
            }
            continue;
        }
        decided += 1;
        super::submit(
            state,
            &client,
            &waiting.manager,
            waiting.object,
            waiting.raw.parse(),
        );
    }
    state.pcp().wayland.backlog.new_round(per_round);
}
