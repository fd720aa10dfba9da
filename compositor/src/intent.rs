//! The embeddable part: [`IntentManagerState`] (the pcp-intent-v1 global and the gate),
//! [`IntentHandler`] (what the host compositor provides) and [`delegate_intent!`](crate::delegate_intent). Every request
//! is decided here, at dispatch, before anything runs: built-in capabilities run in the host only
//! after approval; other capabilities get a token their executor verifies.

use std::collections::HashMap;
use std::os::fd::AsFd;
use std::sync::Mutex;

use pcp_gate::{
    Answer, Decision, Gate, Intent, IntentId, Modality, ModalityEvent, Outcome, Resolution, Step,
    Threshold,
};
use serde_json::Value;
use wayland_server::backend::{ClientId, GlobalId};
use wayland_server::{Client, DataInit, Dispatch, DisplayHandle, GlobalDispatch, New, Resource};

use pcp_protocol::generated::server::pcp_intent_manager_v1::{self, PcpIntentManagerV1};
use pcp_protocol::generated::server::pcp_intent_v1::{self, PcpIntentV1};
use pcp_protocol::wire::{self as params, MAX_INLINE_BYTES, ParamsError};

use crate::identity::client_identity;

/// The capabilities the compositor performs itself, only after approval.
pub const BUILTIN_CAPABILITIES: [&str; 4] = [
    "window.close",
    "window.move",
    "output.configure",
    "session.logout",
];

/// The protocol version this crate implements.
pub const VERSION: u32 = pcp_protocol::VERSION;

/// What the host compositor provides to the intent manager.
pub trait IntentHandler {
    /// The manager inside the host's state.
    fn intent_state(&mut self) -> &mut IntentManagerState;

    /// Now, in Unix milliseconds, from the compositor's clock (tests inject it).
    fn now_ms(&self) -> i64;

    /// The app id of the client's toplevel, when it has one (shown on the dialog, audited).
    fn app_id_of(&self, _client: &Client) -> Option<String> {
        None
    }

    /// Whether the host performs `capability` itself after approval.
    fn is_builtin(&self, capability: &str) -> bool {
        BUILTIN_CAPABILITIES.contains(&capability)
    }

    /// Performs an approved built-in capability. An error becomes `denied(execution_failed)`.
    fn execute_builtin(&mut self, capability: &str, _params: &Value) -> Result<(), String> {
        Err(format!("this compositor does not perform {capability}"))
    }

    /// The open prompts changed (one was shown, answered, timed out or queued): redraw the
    /// overlay and re-arm the timer for [`IntentManagerState::next_deadline`].
    fn prompts_changed(&mut self) {}

    /// An intent is about to be decided: update the gate's availability (`set_available`) so
    /// its plan uses only the hardware present now.
    fn before_decision(&mut self) {}
}

/// The pcp-intent-v1 global, the gate that decides, and the intents still waiting.
pub struct IntentManagerState {
    global: GlobalId,
    gate: Gate,
    open: HashMap<IntentId, OpenIntent>,
}

struct OpenIntent {
    object: PcpIntentV1,
    capability: String,
    params: Value,
}

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
    /// Advertises the `pcp_intent_manager_v1` global and takes charge of `gate`.
    pub fn new<D>(display: &DisplayHandle, gate: Gate) -> IntentManagerState
    where
        D: GlobalDispatch<PcpIntentManagerV1, ()>
            + Dispatch<PcpIntentManagerV1, ()>
            + Dispatch<PcpIntentV1, IntentData>
            + IntentHandler
            + 'static,
    {
        let global = display.create_global::<D, PcpIntentManagerV1, ()>(VERSION, ());
        IntentManagerState {
            global,
            gate,
            open: HashMap::new(),
        }
    }

    /// The global's id (to disable it with `DisplayHandle::disable_global`).
    pub fn global(&self) -> GlobalId {
        self.global.clone()
    }

    pub fn gate(&self) -> &Gate {
        &self.gate
    }

    /// The gate, for `set_available`, `reload` and reading prompts.
    pub fn gate_mut(&mut self) -> &mut Gate {
        &mut self.gate
    }

    /// When [`tick`] next has work to do (Unix ms).
    pub fn next_deadline(&self) -> Option<i64> {
        self.gate.next_deadline()
    }
}

/// The user answered the shown prompt through the overlay (seat input only: no request of this
/// protocol reaches here). `None` when no prompt is shown or more answers are needed.
pub fn answer_visual<D: IntentHandler>(state: &mut D, answer: Answer) -> Option<Outcome> {
    respond(state, ModalityEvent::Answer(Modality::Visual, answer))
}

/// Feeds one modality's event to the shown prompt and delivers the outcome if it decided it.
pub fn respond<D: IntentHandler>(state: &mut D, event: ModalityEvent) -> Option<Outcome> {
    let now = state.now_ms();
    let id = state.intent_state().gate.active()?.id;
    let result = state.intent_state().gate.respond(id, event, now);
    let outcome = match result {
        Ok(Some(outcome)) => outcome,
        Ok(None) => {
            state.prompts_changed();
            return None;
        }
        Err(e) => {
            tracing::warn!("an answer was not applied: {e}");
            return None;
        }
    };
    deliver(state, outcome.clone());
    state.prompts_changed();
    Some(outcome)
}

/// Advances the gate's clock: delivers every prompt that timed out. Call it at
/// [`IntentManagerState::next_deadline`].
pub fn tick<D: IntentHandler>(state: &mut D) -> Vec<Outcome> {
    let now = state.now_ms();
    let outcomes = state.intent_state().gate.tick(now);
    for outcome in &outcomes {
        deliver(state, outcome.clone());
    }
    if !outcomes.is_empty() {
        state.prompts_changed();
    }
    outcomes
}

/// Sends an outcome to its intent object, performing a built-in capability first.
fn deliver<D: IntentHandler>(state: &mut D, outcome: Outcome) {
    let Some(open) = state.intent_state().open.remove(&outcome.id) else {
        return;
    };
    // A cancelled object stays cancelled: a second cancel is still the protocol error.
    if let Some(data) = open.object.data::<IntentData>()
        && data.get() != ObjectState::Cancelled
    {
        data.set(ObjectState::Finished);
    }
    send_outcome(state, &open.object, &open.capability, &open.params, outcome);
}

fn send_outcome<D: IntentHandler>(
    state: &mut D,
    object: &PcpIntentV1,
    capability: &str,
    params: &Value,
    outcome: Outcome,
) {
    if !outcome.approved {
        object.denied(
            resolution_wire(outcome.resolution, object.version()),
            outcome.reason,
        );
        return;
    }
    if state.is_builtin(capability)
        && let Err(e) = state.execute_builtin(capability, params)
    {
        tracing::warn!("approved {capability} could not be performed: {e}");
        object.denied(
            pcp_intent_v1::Resolution::ExecutionFailed,
            format!("approved, but the compositor could not perform it: {e}"),
        );
        return;
    }
    let resolution = resolution_wire(outcome.resolution, object.version());
    match outcome.token {
        // Tokens embed their params: a large one goes through a sealed memfd.
        Some(token) if token.len() > MAX_INLINE_BYTES => {
            match params::sealed_bytes(token.as_bytes()) {
                Ok((fd, size)) => {
                    object.token_fd(fd.as_fd(), size);
                    object.approved(None, resolution);
                }
                Err(e) => {
                    tracing::error!("cannot pass a large token through a memfd: {e}");
                    object.denied(
                        pcp_intent_v1::Resolution::StateUnavailable,
                        format!("approved, but the token could not be delivered: {e}"),
                    );
                }
            }
        }
        token => object.approved(token, resolution),
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

impl<D> GlobalDispatch<PcpIntentManagerV1, (), D> for IntentManagerState
where
    D: GlobalDispatch<PcpIntentManagerV1, ()>
        + Dispatch<PcpIntentManagerV1, ()>
        + Dispatch<PcpIntentV1, IntentData>
        + IntentHandler
        + 'static,
{
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
    body: Result<(Value, Vec<params::Step>), ParamsError>,
}

impl<D> Dispatch<PcpIntentManagerV1, (), D> for IntentManagerState
where
    D: Dispatch<PcpIntentManagerV1, ()>
        + Dispatch<PcpIntentV1, IntentData>
        + IntentHandler
        + 'static,
{
    fn request(
        state: &mut D,
        client: &Client,
        manager: &PcpIntentManagerV1,
        request: pcp_intent_manager_v1::Request,
        _data: &(),
        dh: &DisplayHandle,
        data_init: &mut DataInit<'_, D>,
    ) {
        let (id, submission) = match request {
            pcp_intent_manager_v1::Request::Submit {
                id,
                capability,
                params,
                target,
                steps,
            } => (
                id,
                Submission {
                    body: params::parse_inline(&params, steps.as_deref()),
                    capability,
                    target,
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
                Submission {
                    body: params::read_fd(fd, size),
                    capability,
                    target,
                },
            ),
            // Destroy, and requests of later versions (the enum is open): nothing to submit.
            _ => return,
        };
        let object = data_init.init(id, IntentData::default());
        submit(state, client, dh, manager, object, submission);
    }
}

fn submit<D: IntentHandler>(
    state: &mut D,
    client: &Client,
    dh: &DisplayHandle,
    manager: &PcpIntentManagerV1,
    object: PcpIntentV1,
    submission: Submission,
) {
    use pcp_intent_manager_v1::Error as E;
    let checked = params::check_capability(&submission.capability).and(submission.body);
    let (params, steps) = match checked {
        Ok(body) => body,
        Err(e) => {
            let code = match &e {
                ParamsError::InvalidCapability(_) => E::InvalidCapability,
                ParamsError::InlineTooLarge(_) => E::InlineTooLarge,
                ParamsError::InvalidJson(_) => E::InvalidJson,
                ParamsError::BadFd(_) => E::BadFd,
                ParamsError::FdTooLarge(_) => E::FdTooLarge,
            };
            tracing::warn!("a client's intent was malformed, ending that client: {e}");
            manager.post_error(code, e.to_string());
            return;
        }
    };
    let identity = client_identity(dh, client, state.app_id_of(client));
    let steps = steps
        .into_iter()
        .map(|s| Step {
            capability: s.capability,
            params: s.params,
        })
        .collect();
    let intent = Intent {
        capability: submission.capability.clone(),
        params: params.clone(),
        target: submission.target,
        steps,
        client: identity,
    };
    state.before_decision();
    let now = state.now_ms();
    let decision = state.intent_state().gate.submit(intent, now);
    let capability = submission.capability;
    match decision {
        Decision::Execute(outcome) | Decision::Deny(outcome) => {
            if let Some(data) = object.data::<IntentData>() {
                data.set(ObjectState::Finished);
            }
            send_outcome(state, &object, &capability, &params, outcome);
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
            state.intent_state().open.insert(
                id,
                OpenIntent {
                    object,
                    capability,
                    params,
                },
            );
            state.prompts_changed();
        }
    }
}

impl<D> Dispatch<PcpIntentV1, IntentData, D> for IntentManagerState
where
    D: Dispatch<PcpIntentV1, IntentData> + IntentHandler + 'static,
{
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
                    cancel(state, id);
                }
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
            cancel(state, id);
        }
    }
}

fn cancel<D: IntentHandler>(state: &mut D, id: IntentId) {
    let now = state.now_ms();
    let outcome = state.intent_state().gate.cancel(id, now);
    if let Some(outcome) = outcome {
        deliver(state, outcome);
    }
    state.prompts_changed();
}

/// Makes a compositor state type dispatch pcp-intent-v1 through [`IntentManagerState`]; the type
/// must implement [`IntentHandler`].
#[macro_export]
macro_rules! delegate_intent {
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
