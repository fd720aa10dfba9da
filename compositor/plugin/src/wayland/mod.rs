//! The pcp-intent-v1 front end: the `pcp_intent_manager_v1` global, the dispatch of its
//! requests, the wire object of each open intent and the engine's answers on it. It turns
//! requests into engine [`Request`]s (malformed ones are protocol errors, before anything is
//! weighed) and the engine's effects into events: `pending`, `approved` (with its token, inline
//! or through a sealed memfd) and `denied`. Submissions beyond a round's budget wait in the
//! per-connection [`backlog`]; a connection that keeps being refused `rate_limited` is ended
//! (`rate_limit`). It never touches the gate: an approval that cannot be passed on goes back
//! to the engine as a command.

pub mod backlog;
mod rate_limit;

use std::collections::HashMap;
use std::os::fd::AsFd;
use std::sync::Mutex;

use pcp_gate::config::QueueConfig;
use pcp_gate::{Intent, Modality, Resolution, Step, Threshold};
use pcp_protocol::generated::server::pcp_intent_manager_v1::{self, PcpIntentManagerV1};
use pcp_protocol::generated::server::pcp_intent_v1::{self, PcpIntentV1};
use pcp_protocol::wire::{self, MAX_INLINE_BYTES, ParamsError};
use serde_json::Value;
use wayland_server::backend::{ClientId, GlobalId};
use wayland_server::{Client, DataInit, Dispatch, DisplayHandle, GlobalDispatch, New, Resource};

pub use self::backlog::MAX_WAITING_PER_CONNECTION;
use self::backlog::{Admission, Backlog, RawBody, RawSubmission, Submission, Waiting};
use self::rate_limit::RateLimits;
use crate::PcpHandler;
use crate::effects::{Decided, Delivery, FrontEndId, Refusal, Request, Ticket};
use crate::identity::client_identity;

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
    /// The wire side of each submitted intent not yet decided, by ticket number.
    objects: HashMap<u64, Open>,
    next_ticket: u64,
    limits: RateLimits,
    backlog: Backlog,
    display: DisplayHandle,
}

/// The wire side of one submitted intent, by its ticket number.
pub(crate) struct Open {
    pub object: PcpIntentV1,
    pub manager: PcpIntentManagerV1,
    pub client: ClientId,
}

/// The state of one `pcp_intent_v1` object, kept with it.
#[derive(Debug, Default)]
pub struct IntentData {
    state: Mutex<ObjectState>,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum ObjectState {
    /// Refused with a protocol error before reaching the engine.
    #[default]
    Refused,
    /// Waiting in the backlog for its turn to be decided.
    Waiting,
    /// Submitted to the engine under this ticket number.
    Open(u64),
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
            next_ticket: 0,
            limits: RateLimits::default(),
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
        self.backlog.len()
    }

    /// Decides waiting submissions from an idle callback on `handle`'s loop.
    pub(crate) fn use_event_loop<D: PcpHandler>(
        &mut self,
        handle: calloop::LoopHandle<'static, D>,
    ) {
        self.backlog.schedule = Some(Box::new(move || {
            handle.insert_idle(backlog::decide_waiting::<D>);
        }));
    }

    fn ticket(&mut self) -> Ticket {
        self.next_ticket += 1;
        Ticket {
            front: FrontEndId::WAYLAND,
            number: self.next_ticket,
        }
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

impl<D: IntentDispatch> Dispatch<PcpIntentManagerV1, (), D> for IntentManagerState {
    fn request(
        state: &mut D,
        client: &Client,
        manager: &PcpIntentManagerV1,
        request: pcp_intent_manager_v1::Request,
        _data: &(),
        _dh: &DisplayHandle,
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
        let waiting = Waiting {
            manager: manager.clone(),
            object: object.clone(),
            raw,
        };
        match state.pcp().wayland.backlog.admit(client.id(), waiting) {
            Admission::Now(raw) => submit(state, client, manager, object, raw.parse()),
            Admission::Queued => {}
            Admission::TooMany => {
                tracing::warn!("a client has too many intents waiting, ending that client");
                manager.post_error(
                    pcp_intent_manager_v1::Error::TooManyWaiting,
                    format!("more than {MAX_WAITING_PER_CONNECTION} intents waiting to be decided"),
                );
            }
        }
    }
}

/// Checks one submission and hands it to the engine: a malformed one is a protocol error, an
/// unreadable one or one from a process that changed is refused (audited), the rest submitted.
fn submit<D: PcpHandler>(
    state: &mut D,
    client: &Client,
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
    let (identity, changed) = match state.connection(client) {
        Some(conn) => (
            conn.for_submit(format!("wl-{:?}", client.id()), declared),
            conn.check().err(),
        ),
        None => {
            let dh = state.pcp().wayland.display.clone();
            (client_identity(&dh, client, declared), None)
        }
    };
    let intent = Intent {
        capability: submission.capability,
        params,
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
    let wayland = &mut state.pcp().wayland;
    let ticket = wayland.ticket();
    if let Some(data) = object.data::<IntentData>() {
        data.set(ObjectState::Open(ticket.number));
    }
    let open = Open {
        object,
        manager: manager.clone(),
        client: client.id(),
    };
    wayland.objects.insert(ticket.number, open);
    let why = match (unreadable, changed) {
        (Some(reason), _) => Some(Refusal::Unreadable(reason)),
        // The process that connected is not the one asking now: whatever the dialog would
        // name, it would not be who asks. Refused (not a protocol error: the client is told
        // why, and the audit log keeps the identity seen at connect and the change).
        (None, Some(change)) => Some(Refusal::IdentityChanged(change)),
        (None, None) => None,
    };
    let request = match why {
        Some(why) => {
            tracing::warn!("refusing {}: {why:?}", intent.capability);
            Request::Refuse {
                ticket,
                intent,
                why,
            }
        }
        None => Request::Submit { ticket, intent },
    };
    crate::run(state, request);
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
                ObjectState::Open(number) => {
                    data.set(ObjectState::Cancelled);
                    let front = FrontEndId::WAYLAND;
                    crate::run(state, Request::Cancel(Ticket { front, number }));
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
        if let ObjectState::Open(number) = data.get() {
            data.set(ObjectState::Cancelled);
            let front = FrontEndId::WAYLAND;
            crate::run(state, Request::Cancel(Ticket { front, number }));
        }
    }
}

/// Makes a compositor state type serve pcp-intent-v1 through the plugin; the type must
/// implement [`PcpHandler`](crate::PcpHandler). A generic state is named as Smithay's own
/// `delegate_*!` macros name it: `delegate_pcp!(@<B: Backend + 'static> State<B>);`.
#[macro_export]
macro_rules! delegate_pcp {
    ($(@< $( $lt:tt $( : $clt:tt $(+ $dlt:tt )* )? ),+ >)? $ty:ty) => {
        $crate::reexports::wayland_server::delegate_global_dispatch!($(@< $( $lt $( : $clt $(+ $dlt )* )? ),+ >)? $ty: [
            $crate::reexports::pcp_protocol::generated::server::pcp_intent_manager_v1::PcpIntentManagerV1: ()
        ] => $crate::wayland::IntentManagerState);
        $crate::reexports::wayland_server::delegate_dispatch!($(@< $( $lt $( : $clt $(+ $dlt )* )? ),+ >)? $ty: [
            $crate::reexports::pcp_protocol::generated::server::pcp_intent_manager_v1::PcpIntentManagerV1: ()
        ] => $crate::wayland::IntentManagerState);
        $crate::reexports::wayland_server::delegate_dispatch!($(@< $( $lt $( : $clt $(+ $dlt )* )? ),+ >)? $ty: [
            $crate::reexports::pcp_protocol::generated::server::pcp_intent_v1::PcpIntentV1: $crate::wayland::IntentData
        ] => $crate::wayland::IntentManagerState);
    };
}

impl IntentManagerState {
    /// Puts one of the engine's deliveries for this front end on the wire. Returns a request
    /// for the engine when an approval could not be passed on.
    pub(crate) fn deliver(
        &mut self,
        delivery: Delivery,
        queue: &QueueConfig,
        now: i64,
    ) -> Option<Request> {
        match delivery {
            Delivery::Pending {
                ticket,
                threshold,
                modalities,
                ..
            } => {
                let open = self.objects.get(&ticket.number)?;
                let modalities: Vec<u8> = modalities
                    .iter()
                    .flat_map(|m| modality_wire(*m).to_ne_bytes())
                    .collect();
                open.object.pending(threshold_wire(threshold), modalities);
                None
            }
            Delivery::Decided(decided) => {
                let open = self.objects.remove(&decided.ticket.number)?;
                // A cancelled object stays cancelled: a second cancel is still the protocol error.
                if let Some(data) = open.object.data::<IntentData>()
                    && data.get() != ObjectState::Cancelled
                {
                    data.set(ObjectState::Finished);
                }
                self.decided(open, decided, queue, now)
            }
            _ => None,
        }
    }

    fn decided(
        &mut self,
        open: Open,
        decided: Box<Decided>,
        queue: &QueueConfig,
        now: i64,
    ) -> Option<Request> {
        let object = &open.object;
        let outcome = &decided.outcome;
        let resolution = resolution_wire(outcome.resolution, object.version());
        if !outcome.approved {
            object.denied(resolution, outcome.reason.clone());
            if outcome.resolution == Resolution::RateLimited {
                let window = i64::from(queue.disconnect_window_seconds) * 1000;
                if self
                    .limits
                    .note(open.client.clone(), now, queue.disconnect_after, window)
                {
                    // It keeps asking while told to wait: each refusal still costs an audit
                    // record and a dispatch, so the connection ends (its prompts are withdrawn).
                    tracing::warn!("a client kept being rate-limited, ending that client");
                    let message = format!(
                        "refused rate_limited {} times within {} s ([queue] disconnect_after)",
                        queue.disconnect_after, queue.disconnect_window_seconds
                    );
                    open.manager
                        .post_error(pcp_intent_manager_v1::Error::RateLimited, message);
                }
            }
            return None;
        }
        match &outcome.token {
            // Tokens embed their params: a large one goes through a sealed memfd.
            Some(token) if token.len() > MAX_INLINE_BYTES => {
                match wire::sealed_bytes(token.as_bytes()) {
                    Ok((fd, size)) => {
                        object.token_fd(fd.as_fd(), size);
                        object.approved(None, resolution);
                        None
                    }
                    Err(e) => {
                        tracing::error!("cannot pass a large token through a memfd: {e}");
                        let reason = format!("approved, but the token could not be delivered: {e}");
                        // The object waits for the denial the engine audits first.
                        self.objects.insert(decided.ticket.number, open);
                        Some(Request::Undeliverable { decided, reason })
                    }
                }
            }
            token => {
                object.approved(token.clone(), resolution);
                None
            }
        }
    }
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
        // Only front ends with a check of their own (polkit's password) end a prompt so; were
        // one a Wayland client's, the nearest the wire knows is the user's denial.
        Resolution::AuthenticationFailed => W::UserDenied,
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
