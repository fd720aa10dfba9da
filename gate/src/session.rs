//! Owns the session approvals: "allow until logout". For an action whose threshold is at most
//! the overlay — never destructive, never system, never multi-step — a prompt can offer it when
//! `[gate] session_approvals = true`. The choice covers one verified app identity, one
//! capability at one version, and the same salient parameters, under the profile in force; it
//! lives in memory only and ends at logout (`Gate::end_session`), at a profile switch, and when
//! the capability changes. Later matching intents run `user_approved_for_session`. Deny rules
//! still come first.

use std::collections::HashMap;
use std::sync::Arc;

use crate::capability::Capability;
use crate::identity::IdentityKind;
use crate::intent::{Authorizer, Intent, Plan};
use crate::prompt::Prompt;
use crate::registry::Registry;
use crate::store::FrictionKey;
use crate::types::{RiskClass, Threshold};

/// The "allow until logout" choices in force, each with the capability as it was declared when
/// the user chose (so that a changed declaration ends the choice).
#[derive(Debug, Default)]
pub(crate) struct SessionApprovals {
    granted: HashMap<FrictionKey, Arc<Capability>>,
}

/// Whether a prompt for `intent` may offer "allow until logout": session approvals are on
/// (`enabled`), the full threshold is at most visual, the action is neither destructive nor
/// system nor multi-step, the person at this seat answers, and the app's identity is verified
/// (a connection alone ends with the connection, and is no app to remember).
pub(crate) fn offerable(
    enabled: bool,
    intent: &Intent,
    threshold: Threshold,
    risk: RiskClass,
    multi_step: bool,
    plan: &Plan,
) -> bool {
    enabled
        && threshold <= Threshold::Visual
        && risk.allows_haptic_alone()
        && !multi_step
        && plan.authorizer == Authorizer::LocalUser
        && intent.client.kind() != IdentityKind::Unknown
}

impl SessionApprovals {
    /// Whether the user allowed `key` (profile, app, capability, version, salient parameters)
    /// until logout, and the action may still be allowed so (session approvals still `enabled`).
    pub(crate) fn approved(
        &self,
        enabled: bool,
        key: &FrictionKey,
        threshold: Threshold,
        multi_step: bool,
    ) -> bool {
        enabled && threshold <= Threshold::Visual && !multi_step && self.granted.contains_key(key)
    }

    /// Remembers an approved prompt's choice of "allow until logout".
    pub(crate) fn grant(&mut self, prompt: &Prompt) {
        tracing::info!(
            capability = %prompt.capability.name,
            app = %prompt.app,
            "allowed until logout"
        );
        self.granted
            .insert(prompt.friction_key.clone(), Arc::clone(&prompt.capability));
    }

    /// Drops the choices for capabilities that `registry` no longer declares exactly as they
    /// were when the user chose (after a reload or a capability update).
    pub(crate) fn prune(&mut self, registry: &Registry) {
        self.granted.retain(|_, granted| {
            registry
                .lookup(&granted.name)
                .is_some_and(|c| *c == **granted)
        });
    }

    /// How many choices are in force.
    pub(crate) fn len(&self) -> usize {
        self.granted.len()
    }

    /// Every choice ends (a profile switch).
    pub(crate) fn clear(&mut self) {
        self.granted.clear();
    }

    /// The session ends (logout): every choice ends with it, and the log says how many did.
    pub(crate) fn end(&mut self) {
        if !self.granted.is_empty() {
            tracing::info!(
                "session ended: {} session approval(s) end with it",
                self.granted.len()
            );
        }
        self.granted.clear();
    }
}
