//! The engine's answers on the wire: `pending`, `approved` (with its token, inline or through a
//! sealed memfd) and `denied` on each intent's object, and the rate limit that ends a connection
//! which keeps being refused `rate_limited`. Nothing here touches the gate: an approval that
//! cannot be passed on goes back to the engine as a command.

use std::collections::{HashMap, VecDeque};
use std::os::fd::AsFd;

use pcp_gate::config::QueueConfig;
use pcp_gate::{Modality, Resolution, Threshold};
use pcp_protocol::generated::server::pcp_intent_manager_v1::{self, PcpIntentManagerV1};
use pcp_protocol::generated::server::pcp_intent_v1::{self, PcpIntentV1};
use pcp_protocol::wire::{self, MAX_INLINE_BYTES};
use wayland_server::Resource;
use wayland_server::backend::ClientId;

use super::{IntentData, ObjectState};
use crate::effects::{Command, Decided, Effect};

/// The wire side of one submitted intent, by its ticket number.
pub(crate) struct Open {
    pub object: PcpIntentV1,
    pub manager: PcpIntentManagerV1,
    pub client: ClientId,
}

/// When each connection was last refused `rate_limited`, newest last: at most
/// `[queue] disconnect_after` times per connection, and only connections refused within the
/// last `[queue] disconnect_window_seconds` are kept.
#[derive(Default)]
pub(crate) struct RateLimits {
    refused: HashMap<ClientId, VecDeque<i64>>,
}

impl RateLimits {
    /// Notes that `client` was refused `rate_limited` at `now_ms`; true when that makes
    /// `limit` refusals within the last `window_ms` (the client is then to be disconnected).
    pub fn note(&mut self, client: ClientId, now_ms: i64, limit: u32, window_ms: i64) -> bool {
        let since = now_ms.saturating_sub(window_ms);
        // Connections not refused within the window are forgotten (and gone ones with them).
        self.refused
            .retain(|_, times| times.back().is_some_and(|&t| t > since));
        let times = self.refused.entry(client.clone()).or_default();
        while times.front().is_some_and(|&t| t <= since) {
            times.pop_front();
        }
        times.push_back(now_ms);
        let limit = usize::try_from(limit.max(1)).unwrap_or(usize::MAX);
        while times.len() > limit {
            times.pop_front();
        }
        if times.len() >= limit {
            self.refused.remove(&client);
            return true;
        }
        false
    }
}

impl super::IntentManagerState {
    /// Puts one of the engine's effects for this front end on the wire. Returns a command for
    /// the engine when an approval could not be passed on.
    pub(crate) fn deliver(
        &mut self,
        effect: Effect,
        queue: &QueueConfig,
        now: i64,
    ) -> Option<Command> {
        match effect {
            Effect::Pending {
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
            Effect::Decided(decided) => {
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
    ) -> Option<Command> {
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
                        Some(Command::Undeliverable { decided, reason })
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
