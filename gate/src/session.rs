//! Session approvals: "allow until logout". For an action whose threshold is at most the
//! overlay — never destructive, never system, never multi-step — a prompt can offer it when
//! `[gate] session_approvals = true`. The choice covers one verified app identity, one
//! capability at one version, and the same salient parameters, under the profile in force; it
//! lives in memory only and ends at logout (`Gate::end_session`), at a profile switch, and when
//! the capability changes. Later matching intents run `user_approved_for_session`. Deny rules
//! still come first.

use std::sync::Arc;

use crate::error::StoreError;
use crate::gate::Gate;
use crate::identity::IdentityKind;
use crate::intent::{Authorizer, Intent, Plan};
use crate::prompt::Prompt;
use crate::store::FrictionKey;
use crate::types::{RiskClass, Threshold};

impl Gate {
    /// Whether a prompt for `intent` may offer "allow until logout": session approvals are on,
    /// the full threshold is at most visual, the action is neither destructive nor system nor
    /// multi-step, the person at this seat answers, and the app's identity is verified (a
    /// connection alone ends with the connection, and is no app to remember).
    pub(crate) fn session_eligible(
        &self,
        intent: &Intent,
        threshold: Threshold,
        risk: RiskClass,
        multi_step: bool,
        plan: &Plan,
    ) -> bool {
        self.config.file.gate.session_approvals
            && threshold <= Threshold::Visual
            && risk.allows_haptic_alone()
            && !multi_step
            && plan.authorizer == Authorizer::LocalUser
            && intent.client.kind() != IdentityKind::Unknown
    }

    /// Whether the user allowed `key` (profile, app, capability, version, salient parameters)
    /// until logout, and the action may still be allowed so.
    pub(crate) fn session_approved(
        &self,
        key: &FrictionKey,
        threshold: Threshold,
        multi_step: bool,
    ) -> bool {
        self.config.file.gate.session_approvals
            && threshold <= Threshold::Visual
            && !multi_step
            && self.session_approvals.contains_key(key)
    }

    /// Remembers an approved prompt's choice of "allow until logout".
    pub(crate) fn grant_session(&mut self, prompt: &Prompt) {
        tracing::info!(
            capability = %prompt.capability.name,
            app = %prompt.app,
            "allowed until logout"
        );
        self.session_approvals
            .insert(prompt.friction_key.clone(), Arc::clone(&prompt.capability));
    }

    /// Drops the session approvals of capabilities that are no longer declared exactly as they
    /// were when the user chose (after a reload or a capability update).
    pub(crate) fn prune_session_approvals(&mut self) {
        let registry = &self.config.registry;
        self.session_approvals.retain(|_, granted| {
            registry
                .lookup(&granted.name)
                .is_some_and(|c| *c == **granted)
        });
    }

    /// How many "allow until logout" choices are in force.
    pub fn session_approvals(&self) -> usize {
        self.session_approvals.len()
    }

    /// The session ends (logout): every "allow until logout" choice ends with it, and buffered
    /// audit records are committed.
    pub fn end_session(&mut self) -> Result<(), StoreError> {
        if !self.session_approvals.is_empty() {
            tracing::info!(
                "session ended: {} session approval(s) end with it",
                self.session_approvals.len()
            );
        }
        self.session_approvals.clear();
        self.store.flush()
    }
}
