//! A prompt: one intent waiting for the user, with its plan, its deadlines on the injected clock
//! and what each modality has said so far.

use std::sync::Arc;

use serde_json::Value;

use crate::audit::ModalityResult;
use crate::capability::Capability;
use crate::friction::FrictionReason;
use crate::intent::{Decision, Intent, IntentId, Plan};
use crate::store::FrictionKey;
use crate::types::{Modality, RiskClass, Threshold};

/// A modality's result when it approved.
pub(crate) const APPROVE: &str = "approve";
/// A modality's result when a fallback made its earlier approval insufficient: it is asked again.
pub(crate) const REASKED: &str = "reasked";

/// An intent the gate has asked about and not yet decided.
#[derive(Debug, Clone)]
pub struct Prompt {
    pub id: IntentId,
    pub intent: Intent,
    /// The params as checked (an object).
    pub params: Value,
    pub profile: String,
    pub capability: Arc<Capability>,
    /// The capability's description filled from the params.
    pub description: String,
    /// What the action acts on.
    pub target: Option<String>,
    /// Every step of a multi-step intent, described.
    pub steps: Vec<String>,
    /// What an approval's token says of the steps (`token::steps_digest`).
    pub(crate) steps_digest: String,
    /// Every parameter the description and target leave out, as (name, value) — a step's as
    /// `steps[i].name` — so the dialog can list all that the approval covers.
    pub extra: Vec<(String, String)>,
    pub risk: RiskClass,
    pub threshold: Threshold,
    pub effective: Threshold,
    pub friction: FrictionReason,
    pub plan: Plan,
    pub(crate) friction_key: FrictionKey,
    pub submitted_ms: i64,
    /// When it was first presented; `None` while it waits in the queue behind another.
    pub shown_ms: Option<i64>,
    pub(crate) deadlines: Vec<(Modality, i64)>,
    /// The parent authorizer's deadline, for nested sessions.
    pub(crate) parent_deadline: Option<i64>,
    pub(crate) results: Vec<ModalityResult>,
    /// The verified app identity that asked (`ClientIdentity::app_key`): its prompt slots,
    /// turns and token belong to it.
    pub(crate) app: String,
    /// Its place in the fair order of apps (see `Queue::enqueue`).
    pub(crate) turn: u64,
    /// The action may be allowed until logout (see `session`).
    pub(crate) session_eligible: bool,
    /// The user chose "allow until logout" on the overlay.
    pub(crate) session_chosen: bool,
}

impl Prompt {
    /// The deadline of `modality`, once the prompt is shown.
    pub fn deadline(&self, modality: Modality) -> Option<i64> {
        self.deadlines
            .iter()
            .find(|(m, _)| *m == modality)
            .map(|&(_, at)| at)
    }

    /// The earliest deadline still running: when the prompt times out unless answered.
    pub fn next_deadline(&self) -> Option<i64> {
        self.deadlines
            .iter()
            .filter(|(m, _)| !self.answered(*m))
            .map(|&(_, at)| at)
            .chain(self.parent_deadline)
            .min()
    }

    /// Whether `modality`'s approval stands: its latest result is an approval (a fallback can
    /// ask a modality again, e.g. for a press-and-hold after a plain click).
    pub fn answered(&self, modality: Modality) -> bool {
        self.results
            .iter()
            .rev()
            .find(|r| r.modality == modality)
            .is_some_and(|r| r.result == APPROVE)
    }

    /// Whether the dialog offers "allow until logout" (`ModalityEvent::ApproveForSession`):
    /// `[gate] session_approvals` is on, the action is at most as risky as a visual prompt,
    /// neither destructive, system nor multi-step, the app's identity is verified, and the
    /// overlay is part of the plan.
    pub fn offers_session(&self) -> bool {
        self.session_eligible && self.plan.modalities.contains(&Modality::Visual)
    }

    /// What each modality has said so far.
    pub fn results(&self) -> &[ModalityResult] {
        &self.results
    }

    /// The decision that says this prompt asks: its id, threshold and plan.
    pub(crate) fn confirm(&self) -> Decision {
        Decision::Confirm {
            id: self.id,
            threshold: self.threshold,
            plan: self.plan.clone(),
        }
    }

    pub(crate) fn all_approved(&self) -> bool {
        self.plan.modalities.iter().all(|m| self.answered(*m))
    }

    pub(crate) fn expired(&self, now_ms: i64) -> Option<Modality> {
        self.deadlines
            .iter()
            .find(|&&(m, at)| at <= now_ms && !self.answered(m))
            .map(|&(m, _)| m)
    }

    pub(crate) fn set_deadline(&mut self, modality: Modality, at: i64) {
        match self.deadlines.iter_mut().find(|(m, _)| *m == modality) {
            Some(entry) => entry.1 = at,
            None => self.deadlines.push((modality, at)),
        }
    }
}
