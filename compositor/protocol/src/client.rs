//! The client side of pcp-intent-v1, for `pcpctl submit`, agents written in Rust and the tests:
//! connect, submit (inline or through a sealed memfd when large), and wait for the decision.
//! It links wayland-client only: no Smithay, no audio, no gate.

use std::collections::VecDeque;
use std::os::fd::AsFd;
use std::path::Path;

use serde::Serialize;
use serde_json::Value;
use wayland_client::backend::WaylandError;
use wayland_client::globals::{GlobalListContents, registry_queue_init};
use wayland_client::protocol::wl_registry::WlRegistry;
use wayland_client::{Connection, Dispatch, EventQueue, Proxy, QueueHandle, WEnum};

use crate::generated::client::pcp_intent_manager_v1::PcpIntentManagerV1;
use crate::generated::client::pcp_intent_v1::{self, PcpIntentV1};
use crate::wire::{self, MAX_FD_BYTES, MAX_INLINE_BYTES, Step};

/// What can go wrong talking to the compositor.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("cannot connect to the compositor: {0}")]
    Connect(String),
    #[error("the compositor does not offer pcp_intent_manager_v1 (is it pcp-compositor?): {0}")]
    NoManager(String),
    #[error(
        "the compositor ended the connection with protocol error {code} on {interface}: {message}"
    )]
    Protocol {
        interface: String,
        code: u32,
        message: String,
    },
    #[error("the connection failed: {0}")]
    Io(String),
    #[error("the parameters are {0} bytes, over the {MAX_FD_BYTES}-byte limit")]
    TooLarge(usize),
    #[error("cannot pass the parameters through a memfd: {0}")]
    Memfd(std::io::Error),
    /// The intent breaks a rule the compositor would end the connection for; nothing was sent.
    #[error("the intent is malformed, not sent: {0}")]
    Invalid(wire::ParamsError),
}

/// An intent to submit.
#[derive(Debug, Clone, Default)]
pub struct Submission {
    pub capability: String,
    /// A JSON object.
    pub params: Value,
    pub target: Option<String>,
    pub steps: Vec<Step>,
}

/// Everything the compositor said about one intent, in order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Decision {
    /// Whether the action may go ahead.
    pub approved: bool,
    /// The audit resolution (`policy_allow`, `user_approved`, `confirmation.timeout`, …).
    pub resolution: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Set when the user was asked: the full threshold.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threshold: Option<String>,
    /// The modalities the user was asked through.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub modalities: Vec<String>,
}

/// One event about one intent, as it arrived.
#[derive(Debug, Clone, PartialEq)]
pub enum IntentEvent {
    Pending {
        intent: u32,
        threshold: String,
        modalities: Vec<String>,
    },
    Final {
        intent: u32,
        decision: Decision,
    },
}

/// A submitted intent, to wait on.
#[derive(Debug, Clone)]
pub struct Handle {
    object: PcpIntentV1,
}

impl Handle {
    /// The protocol object id (distinct among this connection's live intents).
    pub fn id(&self) -> u32 {
        self.object.id().protocol_id()
    }

    /// Withdraws the intent; `denied(cancelled)` follows unless it was already decided.
    pub fn cancel(&self) {
        self.object.cancel();
    }

    /// Destroys the object (cancelling it when still undecided).
    pub fn destroy(&self) {
        self.object.destroy();
    }
}

#[derive(Default)]
struct State {
    events: VecDeque<IntentEvent>,
    pending: Vec<(u32, String, Vec<String>)>,
    /// Tokens that came through `token_fd`, by intent, until their `approved`.
    tokens: Vec<(u32, String)>,
}

/// A connection to a compositor offering pcp-intent-v1.
pub struct IntentClient {
    conn: Connection,
    queue: EventQueue<State>,
    state: State,
    manager: PcpIntentManagerV1,
}

impl IntentClient {
    /// Connects to `$WAYLAND_DISPLAY` (in `$XDG_RUNTIME_DIR`).
    pub fn connect() -> Result<IntentClient, ClientError> {
        let conn = Connection::connect_to_env().map_err(|e| ClientError::Connect(e.to_string()))?;
        IntentClient::from_connection(conn)
    }

    /// Connects to the socket at `path`.
    pub fn connect_to(path: &Path) -> Result<IntentClient, ClientError> {
        let stream = std::os::unix::net::UnixStream::connect(path)
            .map_err(|e| ClientError::Connect(format!("{}: {e}", path.display())))?;
        let conn =
            Connection::from_socket(stream).map_err(|e| ClientError::Connect(e.to_string()))?;
        IntentClient::from_connection(conn)
    }

    /// Uses an established connection.
    pub fn from_connection(conn: Connection) -> Result<IntentClient, ClientError> {
        let (globals, queue) =
            registry_queue_init::<State>(&conn).map_err(|e| ClientError::Connect(e.to_string()))?;
        let qh = queue.handle();
        let manager: PcpIntentManagerV1 = globals
            .bind(&qh, 1..=crate::VERSION, ())
            .map_err(|e| ClientError::NoManager(e.to_string()))?;
        Ok(IntentClient {
            conn,
            queue,
            state: State::default(),
            manager,
        })
    }

    /// Submits an intent: inline when small, through a sealed memfd when larger.
    /// The intent is checked first against the compositor's own rules ([`wire::check_value`]):
    /// one that breaks them is [`ClientError::Invalid`], naming where, and costs no connection.
    pub fn submit(&mut self, s: &Submission) -> Result<Handle, ClientError> {
        wire::check_capability(&s.capability)
            .and_then(|()| wire::check_target(s.target.as_deref()))
            .and_then(|()| wire::check_value(&s.params, "params"))
            .and_then(|()| {
                s.steps.iter().enumerate().try_for_each(|(i, step)| {
                    wire::check_capability(&step.capability)?;
                    wire::check_value(&step.params, &format!("steps[{i}].params"))
                })
            })
            .map_err(ClientError::Invalid)?;
        let params =
            serde_json::to_string(&s.params).map_err(|e| ClientError::Io(e.to_string()))?;
        let steps = if s.steps.is_empty() {
            None
        } else {
            Some(serde_json::to_string(&s.steps).map_err(|e| ClientError::Io(e.to_string()))?)
        };
        let inline = params.len() + steps.as_ref().map_or(0, String::len);
        if inline <= MAX_INLINE_BYTES {
            return self.submit_raw(
                &s.capability,
                &params,
                s.target.as_deref(),
                steps.as_deref(),
            );
        }
        let (fd, size) = wire::sealed_memfd(&s.params, &s.steps).map_err(ClientError::Memfd)?;
        if size as usize > MAX_FD_BYTES {
            return Err(ClientError::TooLarge(size as usize));
        }
        let qh = self.queue.handle();
        let object = self.manager.submit_fd(
            s.capability.clone(),
            std::os::fd::AsFd::as_fd(&fd),
            size,
            s.target.clone(),
            &qh,
            (),
        );
        self.flush()?;
        Ok(Handle { object })
    }

    /// Sends `submit` with the given texts unchecked (tests use it to send malformed requests).
    pub fn submit_raw(
        &mut self,
        capability: &str,
        params: &str,
        target: Option<&str>,
        steps: Option<&str>,
    ) -> Result<Handle, ClientError> {
        let qh = self.queue.handle();
        let object = self.manager.submit(
            capability.to_string(),
            params.to_string(),
            target.map(str::to_string),
            steps.map(str::to_string),
            &qh,
            (),
        );
        self.flush()?;
        Ok(Handle { object })
    }

    /// Sends `submit_fd` with any descriptor and size, unchecked (tests send bad ones).
    pub fn submit_fd_raw(
        &mut self,
        capability: &str,
        fd: std::os::fd::BorrowedFd<'_>,
        size: u32,
    ) -> Result<Handle, ClientError> {
        let qh = self.queue.handle();
        let object = self
            .manager
            .submit_fd(capability.to_string(), fd, size, None, &qh, ());
        self.flush()?;
        Ok(Handle { object })
    }

    /// The connection's socket, to wait on with `poll(2)` beside other descriptors; then
    /// [`IntentClient::poll`] reads what arrived without blocking.
    pub fn poll_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.conn.as_fd()
    }

    fn flush(&self) -> Result<(), ClientError> {
        self.conn.flush().map_err(wayland_error)
    }

    /// Blocks until the next event about any intent.
    pub fn next_event(&mut self) -> Result<IntentEvent, ClientError> {
        loop {
            if let Some(e) = self.state.events.pop_front() {
                return Ok(e);
            }
            self.queue
                .blocking_dispatch(&mut self.state)
                .map_err(|e| match e {
                    wayland_client::DispatchError::Backend(e) => wayland_error(e),
                    other => ClientError::Io(other.to_string()),
                })?;
        }
    }

    /// Blocks until `handle` is decided; events about other intents are kept for later.
    pub fn wait(&mut self, handle: &Handle) -> Result<Decision, ClientError> {
        let id = handle.id();
        let mut others = Vec::new();
        let result = loop {
            match self.next_event() {
                Ok(IntentEvent::Final { intent, decision }) if intent == id => break Ok(decision),
                Ok(other) => others.push(other),
                Err(e) => break Err(e),
            }
        };
        for e in others.into_iter().rev() {
            self.state.events.push_front(e);
        }
        result
    }

    /// Reads whatever events have arrived, without blocking; returns how many were dispatched.
    pub fn poll(&mut self) -> Result<usize, ClientError> {
        self.flush()?;
        if let Some(guard) = self.queue.prepare_read() {
            match guard.read() {
                Ok(_) => {}
                Err(WaylandError::Io(e)) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(wayland_error(e)),
            }
        }
        self.queue
            .dispatch_pending(&mut self.state)
            .map_err(|e| match e {
                wayland_client::DispatchError::Backend(e) => wayland_error(e),
                other => ClientError::Io(other.to_string()),
            })
    }

    /// Takes the next event already received, if any (see [`IntentClient::poll`]).
    pub fn take_event(&mut self) -> Option<IntentEvent> {
        self.state.events.pop_front()
    }

    /// A round trip: every event the compositor sent before now has been received.
    pub fn roundtrip(&mut self) -> Result<(), ClientError> {
        self.queue
            .roundtrip(&mut self.state)
            .map(|_| ())
            .map_err(|e| match e {
                wayland_client::DispatchError::Backend(e) => wayland_error(e),
                other => ClientError::Io(other.to_string()),
            })
    }
}

fn wayland_error(e: WaylandError) -> ClientError {
    match e {
        WaylandError::Protocol(p) => ClientError::Protocol {
            interface: p.object_interface,
            code: p.code,
            message: p.message,
        },
        WaylandError::Io(e) => ClientError::Io(e.to_string()),
    }
}

/// The audit name of a wire resolution.
pub fn resolution_name(r: WEnum<pcp_intent_v1::Resolution>) -> String {
    use pcp_intent_v1::Resolution as R;
    match r {
        WEnum::Value(v) => match v {
            R::PolicyAllow => "policy_allow",
            R::ConfirmedByHistory => "confirmed_by_history",
            R::UserApproved => "user_approved",
            R::UserDenied => "user_denied",
            R::ConfirmationTimeout => "confirmation.timeout",
            R::ConfirmationUnavailable => "confirmation_unavailable",
            R::UnknownCapability => "unknown_capability",
            R::RateLimited => "rate_limited",
            R::Cancelled => "cancelled",
            R::InvalidParams => "invalid_params",
            R::StateUnavailable => "state_unavailable",
            R::ExecutionFailed => "execution_failed",
            R::PolicyDeny => "policy_deny",
            R::UserApprovedForSession => "user_approved_for_session",
        }
        .to_string(),
        WEnum::Unknown(n) => format!("unknown({n})"),
    }
}

fn threshold_name(t: WEnum<pcp_intent_v1::Threshold>) -> String {
    use pcp_intent_v1::Threshold as T;
    match t {
        WEnum::Value(T::None) => "none".into(),
        WEnum::Value(T::Visual) => "visual".into(),
        WEnum::Value(T::VoiceVisual) => "voice+visual".into(),
        other => format!("unknown({})", u32::from(other)),
    }
}

fn modality_names(bytes: &[u8]) -> Vec<String> {
    bytes
        .chunks_exact(4)
        .map(|c| match u32::from_ne_bytes([c[0], c[1], c[2], c[3]]) {
            0 => "voice".to_string(),
            1 => "visual".to_string(),
            2 => "haptic".to_string(),
            n => format!("unknown({n})"),
        })
        .collect()
}

impl Dispatch<WlRegistry, GlobalListContents> for State {
    fn event(
        _: &mut State,
        _: &WlRegistry,
        _: <WlRegistry as Proxy>::Event,
        _: &GlobalListContents,
        _: &Connection,
        _: &QueueHandle<State>,
    ) {
    }
}

impl Dispatch<PcpIntentManagerV1, ()> for State {
    fn event(
        _: &mut State,
        _: &PcpIntentManagerV1,
        _: <PcpIntentManagerV1 as Proxy>::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<State>,
    ) {
    }
}

impl Dispatch<PcpIntentV1, ()> for State {
    fn event(
        state: &mut State,
        object: &PcpIntentV1,
        event: pcp_intent_v1::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<State>,
    ) {
        let intent = object.id().protocol_id();
        if let pcp_intent_v1::Event::TokenFd { fd, size } = event {
            match wire::read_all(fd, size) {
                Ok(bytes) => state
                    .tokens
                    .push((intent, String::from_utf8_lossy(&bytes).into_owned())),
                Err(e) => tracing::warn!("cannot read the token the compositor sent: {e}"),
            }
            return;
        }
        let asked = state
            .pending
            .iter()
            .position(|(i, _, _)| *i == intent)
            .map(|at| state.pending.remove(at));
        let (threshold, modalities) = match asked {
            Some((_, t, m)) => (Some(t), m),
            None => (None, Vec::new()),
        };
        let decision = match event {
            pcp_intent_v1::Event::Pending {
                threshold,
                modalities,
            } => {
                let threshold = threshold_name(threshold);
                let modalities = modality_names(&modalities);
                state
                    .pending
                    .push((intent, threshold.clone(), modalities.clone()));
                state.events.push_back(IntentEvent::Pending {
                    intent,
                    threshold,
                    modalities,
                });
                return;
            }
            pcp_intent_v1::Event::Approved { token, resolution } => Decision {
                approved: true,
                resolution: resolution_name(resolution),
                token: token.or_else(|| {
                    let at = state.tokens.iter().position(|(i, _)| *i == intent)?;
                    Some(state.tokens.remove(at).1)
                }),
                reason: None,
                threshold,
                modalities,
            },
            // Handled above, before the pending entry is taken.
            pcp_intent_v1::Event::TokenFd { .. } => return,
            pcp_intent_v1::Event::Denied { resolution, reason } => Decision {
                approved: false,
                resolution: resolution_name(resolution),
                token: None,
                reason: Some(reason),
                threshold,
                modalities,
            },
        };
        state
            .events
            .push_back(IntentEvent::Final { intent, decision });
    }
}
