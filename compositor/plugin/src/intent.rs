//! The pcp-intent-v1 server: the `pcp_intent_manager_v1` global, the wire object of each open
//! intent (by intent id — the gate owns the prompts themselves), the dispatch of requests and
//! the delivery of outcomes. Every request is decided here, at dispatch, before anything runs:
//! malformed ones are protocol errors, the rest go to `Gate::submit`; built-in capabilities run
//! in the host only after approval, other capabilities get a token their executor verifies.

use std::collections::{HashMap, VecDeque};
use std::os::fd::{AsFd, OwnedFd};
use std::sync::Mutex;

use pcp_gate::{
    ClientIdentity, Decision, Intent, IntentId, Modality, Outcome, Resolution, Step, Threshold,
};
use pcp_protocol::generated::server::pcp_intent_manager_v1::{self, PcpIntentManagerV1};
use pcp_protocol::generated::server::pcp_intent_v1::{self, PcpIntentV1};
use pcp_protocol::wire::{self, MAX_INLINE_BYTES, ParamsError};
use serde_json::Value;
use wayland_server::backend::{ClientId, GlobalId};
use wayland_server::{Client, DataInit, Dispatch, DisplayHandle, GlobalDispatch, New, Resource};

use crate::identity::client_identity;
use crate::{PcpHandler, drive};

/// The capabilities the reference compositor performs itself, only after approval.
pub const BUILTIN_CAPABILITIES: [&str; 4] = [
    "window.close",
    "window.move",
    "output.configure",
    "session.logout",
];

/// What a host state type must implement to serve pcp-intent-v1; [`delegate_pcp!`]
/// implements the dispatch traits.
///
/// [`delegate_pcp!`]: crate::delegate_pcp
pub trait IntentDispatch:
    GlobalDispatch<PcpIntentManagerV1, ()>
    + Dispatch<PcpIntentManagerV1, ()>
    + Dispatch<PcpIntentV1, IntentData>
    + PcpHandler
{
}

impl<D> IntentDispatch for D where
    D: GlobalDispatch<PcpIntentManagerV1, ()>
        + Dispatch<PcpIntentManagerV1, ()>
        + Dispatch<PcpIntentV1, IntentData>
        + PcpHandler
{
}

/// The `pcp_intent_manager_v1` global and the wire objects of intents still open.
pub struct IntentManagerState {
    global: GlobalId,
    objects: HashMap<IntentId, PcpIntentV1>,
    /// When each connection was last refused `rate_limited`, newest last: at most
    /// `[queue] disconnect_after` times per connection, and only connections refused within the
    /// last `[queue] disconnect_window_seconds` are kept.
    rate_limited: HashMap<ClientId, VecDeque<i64>>,
    /// Submissions read off the wire and not yet decided (see [`Backlog`]).
    backlog: Backlog,
    display: DisplayHandle,
}

/// Submissions beyond `[queue] intents_per_round` in one round of the event loop wait here, one
/// queue per connection served in turn, and are decided at most that many per round from an
/// idle callback: a flood of requests never keeps the loop (and with it the user's input) from
/// going round, and another client's intent waits for one turn, not for the whole flood.
#[derive(Default)]
struct Backlog {
    queues: HashMap<ClientId, VecDeque<Waiting>>,
    /// Connections with waiting submissions, in the order they are served.
    turns: VecDeque<ClientId>,
    /// Submissions this round may still decide at once.
    left_this_round: u32,
    /// Whether the idle callback that decides waiting submissions is scheduled.
    scheduled: bool,
    /// Schedules that callback on the host's event loop (none before `Pcp::use_event_loop`:
    /// then every submission is decided at once).
    schedule: Option<Box<dyn FnMut()>>,
}

/// One submission waiting for its turn: as it came off the wire, parsed only when decided.
struct Waiting {
    manager: PcpIntentManagerV1,
    object: PcpIntentV1,
    raw: RawSubmission,
}

/// A request's arguments, not yet checked.
struct RawSubmission {
    capability: String,
    target: Option<String>,
    body: RawBody,
}

enum RawBody {
    Inline {
        params: String,
        steps: Option<String>,
    },
    Fd {
        fd: OwnedFd,
        size: u32,
    },
}

impl RawSubmission {
    fn parse(self) -> Submission {
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

/// Submissions one connection may have waiting in the backlog; one more is the protocol error
/// `too_many_waiting`.
pub const MAX_WAITING_PER_CONNECTION: usize = 256;

/// The state of one `pcp_intent_v1` object, kept with it.
#[derive(Debug, Default)]
pub struct IntentData {
    state: Mutex<ObjectState>,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum ObjectState {
    /// Refused with a protocol error before reaching the gate.
    #[default]
    Refused,
    /// Waiting in the backlog for its turn to be decided.
    Waiting,
    Open(IntentId),
    Cancelled,
    Finished,
}

impl IntentData {
    fn get(&self) -> ObjectState {
        self.state
            .lock()
            .map(|s| *s)
            .unwrap_or(ObjectState::Finished)
    }

    fn set(&self, value: ObjectState) {
        if let Ok(mut s) = self.state.lock() {
            *s = value;
        }
    }
}

impl IntentManagerState {
    /// Advertises the `pcp_intent_manager_v1` global.
    pub fn new<D: IntentDispatch>(display: &DisplayHandle) -> IntentManagerState {
        let global = display.create_global::<D, PcpIntentManagerV1, ()>(pcp_protocol::VERSION, ());
        IntentManagerState {
            global,
            objects: HashMap::new(),
            rate_limited: HashMap::new(),
            backlog: Backlog::default(),
            display: display.clone(),
        }
    }

    /// The global's id (to disable it with `DisplayHandle::disable_global`).
    pub fn global(&self) -> GlobalId {
        self.global.clone()
    }

    /// How many intents wait for their decision on the wire.
    pub fn open(&self) -> usize {
        self.objects.len()
    }

    /// How many submissions wait in the backlog to be decided.
    pub fn waiting(&self) -> usize {
        self.backlog.queues.values().map(VecDeque::len).sum()
    }

    /// Decides waiting submissions from an idle callback on `handle`'s loop.
    pub(crate) fn use_event_loop<D: PcpHandler>(
        &mut self,
        handle: calloop::LoopHandle<'static, D>,
    ) {
        self.backlog.schedule = Some(Box::new(move || {
            handle.insert_idle(decide_waiting::<D>);
        }));
    }

    /// Notes that `client` was refused `rate_limited` at `now_ms`; true when that makes
    /// `limit` refusals within the last `window_ms` (the client is then to be disconnected).
    fn note_rate_limited(
        &mut self,
        client: ClientId,
        now_ms: i64,
        limit: u32,
        window_ms: i64,
    ) -> bool {
        let since = now_ms.saturating_sub(window_ms);
        // Connections not refused within the window are forgotten (and gone ones with them).
        self.rate_limited
            .retain(|_, times| times.back().is_some_and(|&t| t > since));
        let times = self.rate_limited.entry(client.clone()).or_default();
        while times.front().is_some_and(|&t| t <= since) {
            times.pop_front();
        }
        times.push_back(now_ms);
        let limit = usize::try_from(limit.max(1)).unwrap_or(usize::MAX);
        while times.len() > limit {
            times.pop_front();
        }
        if times.len() >= limit {
            self.rate_limited.remove(&client);
            return true;
        }
        false
    }
}

/// What an approved intent runs: its capability and parameters, taken from the gate's prompt
/// before the answer that approves it (the gate keeps no prompt once it is decided).
#[derive(Debug, Clone)]
pub(crate) struct Approved {
    pub capability: String,
    pub params: Value,
    /// Who asked, for the audit record of an approval that could not be carried out.
    pub client: ClientIdentity,
}

/// Sends an outcome to its intent's wire object (performing a built-in capability first when
/// `approved` names one). An outcome whose object is gone (its client left) is only audited.
pub(crate) fn deliver<D: PcpHandler>(state: &mut D, outcome: Outcome, approved: Option<Approved>) {
    // The policy-change prompt has no wire object: its outcome goes to the host.
    if state.pcp().policy.prompt == Some(outcome.id) {
        state.pcp().policy.prompt = None;
        state.policy_settled(outcome.approved, &outcome.reason);
        return;
    }
    let Some(object) = state.pcp().intents.objects.remove(&outcome.id) else {
        return;
    };
    // A cancelled object stays cancelled: a second cancel is still the protocol error.
    if let Some(data) = object.data::<IntentData>()
        && data.get() != ObjectState::Cancelled
    {
        data.set(ObjectState::Finished);
    }
    send_outcome(state, &object, outcome, approved.as_ref());
}

fn send_outcome<D: PcpHandler>(
    state: &mut D,
    object: &PcpIntentV1,
    outcome: Outcome,
    approved: Option<&Approved>,
) {
    if !outcome.approved {
        object.denied(
            resolution_wire(outcome.resolution, object.version()),
            outcome.reason,
        );
        return;
    }
    if let Some(run) = approved
        && state.is_builtin(&run.capability)
        && let Err(e) = state.execute_builtin(&run.capability, &run.params)
    {
        let reason = format!("approved, but the compositor could not perform it: {e}");
        not_carried_out(state, object, outcome.audit_seq, run, reason);
        return;
    }
    let resolution = resolution_wire(outcome.resolution, object.version());
    match outcome.token {
        // Tokens embed their params: a large one goes through a sealed memfd.
        Some(token) if token.len() > MAX_INLINE_BYTES => {
            match wire::sealed_bytes(token.as_bytes()) {
                Ok((fd, size)) => {
                    object.token_fd(fd.as_fd(), size);
                    object.approved(None, resolution);
                }
                Err(e) => {
                    tracing::error!("cannot pass a large token through a memfd: {e}");
                    let reason = format!("approved, but the token could not be delivered: {e}");
                    match approved {
                        Some(run) => not_carried_out(state, object, outcome.audit_seq, run, reason),
                        None => object.denied(pcp_intent_v1::Resolution::ExecutionFailed, reason),
                    }
                }
            }
        }
        token => object.approved(token, resolution),
    }
}

/// An approval that could not be carried out: audited as `execution_failed` (linked to the
/// approval's record) before the client is told, so the log says what the wire said.
fn not_carried_out<D: PcpHandler>(
    state: &mut D,
    object: &PcpIntentV1,
    approval_seq: Option<u64>,
    run: &Approved,
    reason: String,
) {
    let now = state.now_ms();
    let failed = pcp_gate::FailedExecution {
        capability: &run.capability,
        params: &run.params,
        client: &run.client,
        approval_seq,
        reason: &reason,
    };
    // An audit failure is logged by the gate; the client is told the same either way.
    let _ = state.pcp().gate.record_execution_failed(failed, now);
    object.denied(pcp_intent_v1::Resolution::ExecutionFailed, reason);
}

/// The wire value of a gate resolution for an object of `version` (resolutions added in
/// version 2 reach a version 1 object as the nearest it knows).
pub fn resolution_wire(r: Resolution, version: u32) -> pcp_intent_v1::Resolution {
    use pcp_intent_v1::Resolution as W;
    match r {
        Resolution::PolicyAllow => W::PolicyAllow,
        Resolution::ConfirmedByHistory => W::ConfirmedByHistory,
        Resolution::UserApproved => W::UserApproved,
        Resolution::UserApprovedForSession if version < 2 => W::UserApproved,
        Resolution::UserApprovedForSession => W::UserApprovedForSession,
        Resolution::PolicyDeny if version < 2 => W::UnknownCapability,
        Resolution::PolicyDeny => W::PolicyDeny,
        Resolution::UserDenied => W::UserDenied,
        Resolution::ConfirmationTimeout => W::ConfirmationTimeout,
        Resolution::ConfirmationUnavailable => W::ConfirmationUnavailable,
        Resolution::UnknownCapability => W::UnknownCapability,
        Resolution::RateLimited => W::RateLimited,
        Resolution::Cancelled => W::Cancelled,
        Resolution::InvalidParams => W::InvalidParams,
        Resolution::StateUnavailable => W::StateUnavailable,
        Resolution::ExecutionFailed => W::ExecutionFailed,
        // The wire has no code of its own for it: a policy denial, its reason says why (the
        // audit record says `identity_changed`).
        Resolution::IdentityChanged if version < 2 => W::UnknownCapability,
        Resolution::IdentityChanged => W::PolicyDeny,
    }
}

fn threshold_wire(t: Threshold) -> pcp_intent_v1::Threshold {
    match t {
        Threshold::None => pcp_intent_v1::Threshold::None,
        Threshold::Visual => pcp_intent_v1::Threshold::Visual,
        Threshold::VoiceVisual => pcp_intent_v1::Threshold::VoiceVisual,
    }
}

fn modality_wire(m: Modality) -> u32 {
    match m {
        Modality::Voice => pcp_intent_v1::Modality::Voice as u32,
        Modality::Visual => pcp_intent_v1::Modality::Visual as u32,
        Modality::Haptic => pcp_intent_v1::Modality::Haptic as u32,
    }
}

impl<D: IntentDispatch> GlobalDispatch<PcpIntentManagerV1, (), D> for IntentManagerState {
    fn bind(
        _state: &mut D,
        _dh: &DisplayHandle,
        _client: &Client,
        resource: New<PcpIntentManagerV1>,
        _data: &(),
        data_init: &mut DataInit<'_, D>,
    ) {
        data_init.init(resource, ());
    }
}

/// One submission, as read off the wire and not yet checked.
struct Submission {
    capability: String,
    target: Option<String>,
    body: Result<(Value, Vec<wire::Step>), ParamsError>,
}

impl<D: IntentDispatch> Dispatch<PcpIntentManagerV1, (), D> for IntentManagerState {
    fn request(
        state: &mut D,
        client: &Client,
        manager: &PcpIntentManagerV1,
        request: pcp_intent_manager_v1::Request,
        _data: &(),
        dh: &DisplayHandle,
        data_init: &mut DataInit<'_, D>,
    ) {
        let (id, raw) = match request {
            pcp_intent_manager_v1::Request::Submit {
                id,
                capability,
                params,
                target,
                steps,
            } => (
                id,
                RawSubmission {
                    capability,
                    target,
                    body: RawBody::Inline { params, steps },
                },
            ),
            pcp_intent_manager_v1::Request::SubmitFd {
                id,
                capability,
                fd,
                size,
                target,
            } => (
                id,
                RawSubmission {
                    capability,
                    target,
                    body: RawBody::Fd { fd, size },
                },
            ),
            // Destroy, and requests of later versions (the enum is open): nothing to submit.
            _ => return,
        };
        let object = data_init.init(id, IntentData::default());
        let backlog = &mut state.pcp().intents.backlog;
        let queued = backlog.queues.get(&client.id()).map_or(0, VecDeque::len);
        // Decided at once while this round has room and the connection has nothing waiting
        // (its intents are decided in the order it sent them).
        if backlog.schedule.is_none() || (queued == 0 && backlog.left_this_round > 0) {
            backlog.left_this_round = backlog.left_this_round.saturating_sub(1);
            submit(state, client, dh, manager, object, raw.parse());
            return;
        }
        if queued >= MAX_WAITING_PER_CONNECTION {
            tracing::warn!("a client has too many intents waiting, ending that client");
            manager.post_error(
                pcp_intent_manager_v1::Error::TooManyWaiting,
                format!("more than {MAX_WAITING_PER_CONNECTION} intents waiting to be decided"),
            );
            return;
        }
        if let Some(data) = object.data::<IntentData>() {
            data.set(ObjectState::Waiting);
        }
        let waiting = Waiting {
            manager: manager.clone(),
            object,
            raw,
        };
        let queue = backlog.queues.entry(client.id()).or_default();
        if queue.is_empty() {
            backlog.turns.push_back(client.id());
        }
        queue.push_back(waiting);
        if !backlog.scheduled {
            backlog.scheduled = true;
            if let Some(schedule) = &mut backlog.schedule {
                schedule();
            }
        }
    }
}

/// The idle callback: a new round begins (its budget is `[queue] intents_per_round`), and up to
/// that many waiting submissions are decided, one per connection in turn.
fn decide_waiting<D: PcpHandler>(state: &mut D) {
    let per_round = state
        .pcp()
        .gate
        .config()
        .file
        .queue
        .intents_per_round
        .max(1);
    let dh = state.pcp().intents.display.clone();
    let mut decided = 0;
    while decided < per_round {
        let backlog = &mut state.pcp().intents.backlog;
        let Some(client_id) = backlog.turns.pop_front() else {
            break;
        };
        let Some(queue) = backlog.queues.get_mut(&client_id) else {
            continue;
        };
        let Some(waiting) = queue.pop_front() else {
            backlog.queues.remove(&client_id);
            continue;
        };
        if queue.is_empty() {
            backlog.queues.remove(&client_id);
        } else {
            backlog.turns.push_back(client_id.clone());
        }
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
        submit(
            state,
            &client,
            &dh,
            &waiting.manager,
            waiting.object,
            waiting.raw.parse(),
        );
    }
    let backlog = &mut state.pcp().intents.backlog;
    backlog.left_this_round = per_round;
    backlog.scheduled = false;
    if !backlog.turns.is_empty() {
        backlog.scheduled = true;
        if let Some(schedule) = &mut backlog.schedule {
            schedule();
        }
    }
}

fn submit<D: PcpHandler>(
    state: &mut D,
    client: &Client,
    dh: &DisplayHandle,
    manager: &PcpIntentManagerV1,
    object: PcpIntentV1,
    submission: Submission,
) {
    use pcp_intent_manager_v1::Error as E;
    let checked = wire::check_capability(&submission.capability)
        .and_then(|()| wire::check_target(submission.target.as_deref()))
        .and(submission.body);
    let (params, steps, unreadable) = match checked {
        Ok((params, steps)) => (params, steps, None),
        // A bad fd ends only this request (a denial, audited): the client's other intents are
        // not its hostage.
        Err(ParamsError::BadFd(reason)) => {
            (Value::Object(Default::default()), Vec::new(), Some(reason))
        }
        Err(e) => {
            let code = match &e {
                ParamsError::InvalidCapability(_) => E::InvalidCapability,
                ParamsError::InlineTooLarge(_) => E::InlineTooLarge,
                ParamsError::InvalidJson(_) => E::InvalidJson,
                ParamsError::InvalidTarget(_) => E::InvalidTarget,
                ParamsError::BadFd(_) => E::BadFd,
                ParamsError::FdTooLarge(_) => E::FdTooLarge,
            };
            tracing::warn!("a client's intent was malformed, ending that client: {e}");
            manager.post_error(code, e.to_string());
            return;
        }
    };
    let declared = state.app_id_of(client);
    let connection = state.connection(client);
    let (identity, changed) = match connection {
        Some(conn) => (
            conn.for_submit(format!("wl-{:?}", client.id()), declared),
            conn.check().err(),
        ),
        None => (client_identity(dh, client, declared), None),
    };
    let asker = identity.clone();
    let intent = Intent {
        capability: submission.capability.clone(),
        params: params.clone(),
        target: submission.target,
        steps: steps
            .into_iter()
            .map(|s| Step {
                capability: s.capability,
                params: s.params,
            })
            .collect(),
        client: identity,
    };
    let now = state.now_ms();
    if let Some(reason) = unreadable {
        tracing::warn!("refusing {}: {reason}", intent.capability);
        let outcome = state.pcp().gate.refuse_unreadable(intent, &reason, now);
        if let Some(data) = object.data::<IntentData>() {
            data.set(ObjectState::Finished);
        }
        send_outcome(state, &object, outcome, None);
        drive::refresh(state);
        return;
    }
    if let Some(change) = changed {
        // The process that connected is not the one asking now: whatever the dialog would name,
        // it would not be who asks. Refused (not a protocol error: the client is told why, and
        // the audit log keeps the identity seen at connect and the change).
        tracing::warn!("refusing {}: {change}", intent.capability);
        let outcome = state
            .pcp()
            .gate
            .refuse_changed_identity(intent, &change, now);
        if let Some(data) = object.data::<IntentData>() {
            data.set(ObjectState::Finished);
        }
        send_outcome(state, &object, outcome, None);
        drive::refresh(state);
        return;
    }
    // The availability the UI last learned (probes and hotplug): no device is touched here.
    let pcp = state.pcp();
    let available = pcp.ui.availability();
    pcp.gate.set_available(available);
    let decision = pcp.gate.submit(intent, now);
    match decision {
        Decision::Execute(outcome) | Decision::Deny(outcome) => {
            if let Some(data) = object.data::<IntentData>() {
                data.set(ObjectState::Finished);
            }
            let flooding = outcome.resolution == Resolution::RateLimited && {
                let queue = &state.pcp().gate.config().file.queue;
                let (limit, window) = (queue.disconnect_after, queue.disconnect_window_seconds);
                state.pcp().intents.note_rate_limited(
                    client.id(),
                    now,
                    limit,
                    i64::from(window) * 1000,
                )
            };
            let approved = Approved {
                capability: submission.capability,
                params,
                client: asker,
            };
            send_outcome(state, &object, outcome, Some(&approved));
            if flooding {
                // It keeps asking while told to wait: each refusal still costs an audit record
                // and a dispatch, so the connection ends (its open prompts are withdrawn).
                tracing::warn!("a client kept being rate-limited, ending that client");
                let queue = &state.pcp().gate.config().file.queue;
                let message = format!(
                    "refused rate_limited {} times within {} s ([queue] disconnect_after)",
                    queue.disconnect_after, queue.disconnect_window_seconds
                );
                manager.post_error(E::RateLimited, message);
            }
            // Routine records wait for their group commit: the timer may be due sooner now.
            drive::refresh(state);
        }
        Decision::Confirm {
            id,
            threshold,
            plan,
        } => {
            if let Some(data) = object.data::<IntentData>() {
                data.set(ObjectState::Open(id));
            }
            let modalities: Vec<u8> = plan
                .modalities
                .iter()
                .flat_map(|m| modality_wire(*m).to_ne_bytes())
                .collect();
            object.pending(threshold_wire(threshold), modalities);
            state.pcp().intents.objects.insert(id, object);
            drive::refresh(state);
        }
    }
}

impl<D: IntentDispatch> Dispatch<PcpIntentV1, IntentData, D> for IntentManagerState {
    fn request(
        state: &mut D,
        _client: &Client,
        object: &PcpIntentV1,
        request: pcp_intent_v1::Request,
        data: &IntentData,
        _dh: &DisplayHandle,
        _init: &mut DataInit<'_, D>,
    ) {
        // Destroy needs nothing here: `destroyed` withdraws an open intent.
        if let pcp_intent_v1::Request::Cancel = request {
            match data.get() {
                ObjectState::Open(id) => {
                    data.set(ObjectState::Cancelled);
                    drive::cancel(state, id);
                }
                // Never decided: it leaves the backlog with `cancelled` (nobody was asked).
                ObjectState::Waiting => data.set(ObjectState::Cancelled),
                ObjectState::Cancelled => object.post_error(
                    pcp_intent_v1::Error::AlreadyCancelled,
                    "cancel was sent twice",
                ),
                // Decided before the cancel arrived: the final event is already on its way.
                ObjectState::Finished | ObjectState::Refused => {}
            }
        }
    }

    fn destroyed(state: &mut D, _client: ClientId, _object: &PcpIntentV1, data: &IntentData) {
        // A destroyed or disconnected intent is withdrawn: its prompt must not stay on screen.
        if let ObjectState::Open(id) = data.get() {
            data.set(ObjectState::Cancelled);
            drive::cancel(state, id);
        }
    }
}

/// Makes a compositor state type serve pcp-intent-v1 through the plugin; the type must
/// implement [`PcpHandler`](crate::PcpHandler).
#[macro_export]
macro_rules! delegate_pcp {
    ($ty:ty) => {
        $crate::reexports::wayland_server::delegate_global_dispatch!($ty: [
            $crate::reexports::pcp_protocol::generated::server::pcp_intent_manager_v1::PcpIntentManagerV1: ()
        ] => $crate::intent::IntentManagerState);
        $crate::reexports::wayland_server::delegate_dispatch!($ty: [
            $crate::reexports::pcp_protocol::generated::server::pcp_intent_manager_v1::PcpIntentManagerV1: ()
        ] => $crate::intent::IntentManagerState);
        $crate::reexports::wayland_server::delegate_dispatch!($ty: [
            $crate::reexports::pcp_protocol::generated::server::pcp_intent_v1::PcpIntentV1: $crate::intent::IntentData
        ] => $crate::intent::IntentManagerState);
    };
}
