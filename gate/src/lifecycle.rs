//! A prompt's life after submission: answers, fallbacks when hardware goes, timeouts on the
//! injected clock, cancellation, and the audited outcome that ends it.

use serde_json::Value;

use crate::audit::{AuditRecord, ModalityResult, Resolution};
use crate::capability::{Capability, digest};
use crate::gate::{Gate, RespondError, answer_str, client_of, history_after, note_str, result};
use crate::intent::{Authorizer, Intent, IntentId, ModalityEvent, Outcome, Plan, PlanNote};
use crate::prompt::Prompt;
use crate::types::{Answer, Modality, Threshold};

impl Gate {
    /// Applies one modality's event to the shown prompt. `Ok(Some(outcome))` when it decided
    /// the prompt; `Ok(None)` when more answers are needed.
    pub fn respond(
        &mut self,
        id: IntentId,
        event: ModalityEvent,
        now_ms: i64,
    ) -> Result<Option<Outcome>, RespondError> {
        let Some(index) = self.prompts.iter().position(|p| p.id == id) else {
            return Err(RespondError::UnknownPrompt(id));
        };
        if index != 0 || self.prompts[0].shown_ms.is_none() {
            return Err(RespondError::NotShown(id));
        }
        // An answer that arrives after a deadline does not count: the deadline decided first.
        if let Some(outcome) = self.expire_front(now_ms) {
            return Ok(Some(outcome));
        }
        let visual_timeout = self.timeout_ms(Modality::Visual);
        let prompt = &mut self.prompts[0];
        match event {
            ModalityEvent::Answer(modality, answer) => {
                if !prompt.plan.modalities.contains(&modality) {
                    return Err(RespondError::NotInPlan(modality));
                }
                if prompt.answered(modality) {
                    return Err(RespondError::AlreadyAnswered(modality));
                }
                prompt
                    .results
                    .push(result(modality, answer_str(answer), now_ms));
                if answer == Answer::Deny {
                    let reason = format!("the user denied through {modality}");
                    return Ok(Some(self.finish_front(
                        Resolution::UserDenied,
                        reason,
                        now_ms,
                    )));
                }
                if prompt.all_approved() {
                    let reason = format!(
                        "approved through {}",
                        join(&prompt.plan.modalities, " and ")
                    );
                    return Ok(Some(self.finish_front(
                        Resolution::UserApproved,
                        reason,
                        now_ms,
                    )));
                }
                Ok(None)
            }
            ModalityEvent::Lost(modality) => {
                if !prompt.plan.modalities.contains(&modality) || prompt.answered(modality) {
                    return Ok(None);
                }
                prompt.results.push(result(modality, "lost", now_ms));
                prompt.plan.modalities.retain(|m| *m != modality);
                prompt.deadlines.retain(|(m, _)| *m != modality);
                prompt.plan.notes.push(PlanNote::ModalityLost);
                match modality {
                    Modality::Visual => {
                        let reason = "the overlay can no longer be shown".to_string();
                        return Ok(Some(self.finish_front(
                            Resolution::ConfirmationUnavailable,
                            reason,
                            now_ms,
                        )));
                    }
                    Modality::Voice => {
                        prompt.plan.press_and_hold = true;
                        prompt.plan.notes.push(PlanNote::VoiceUnavailable);
                    }
                    Modality::Haptic => prompt.plan.notes.push(PlanNote::HapticUnavailable),
                }
                if !prompt.plan.modalities.contains(&Modality::Visual) {
                    prompt.plan.modalities.push(Modality::Visual);
                    prompt.set_deadline(Modality::Visual, now_ms + visual_timeout);
                }
                Ok(None)
            }
            ModalityEvent::Activity => {
                if prompt.plan.modalities.contains(&Modality::Visual)
                    && !prompt.answered(Modality::Visual)
                {
                    prompt.set_deadline(Modality::Visual, now_ms + visual_timeout);
                }
                Ok(None)
            }
            ModalityEvent::Parent(answer) => {
                if prompt.plan.authorizer != Authorizer::Parent {
                    return Err(RespondError::NotParent);
                }
                let (resolution, reason) = match answer {
                    Answer::Approve => (Resolution::UserApproved, "the parent session approved"),
                    Answer::Deny => (Resolution::UserDenied, "the parent session denied"),
                };
                Ok(Some(self.finish_front(
                    resolution,
                    reason.to_string(),
                    now_ms,
                )))
            }
        }
    }

    /// Advances the clock: times out the shown prompt when a deadline has passed (and the next
    /// ones, each shown from `now_ms`), and commits buffered audit records that are due.
    pub fn tick(&mut self, now_ms: i64) -> Vec<Outcome> {
        let mut outcomes = Vec::new();
        while let Some(outcome) = self.expire_front(now_ms) {
            outcomes.push(outcome);
        }
        if let Err(e) = self.store.flush_if_due(now_ms) {
            tracing::warn!("audit group commit failed, will retry: {e}");
        }
        outcomes
    }

    /// Commits every buffered audit record (call at shutdown or when idle).
    pub fn flush(&mut self) -> Result<(), crate::error::StoreError> {
        self.store.flush()
    }

    /// The client withdrew its intent.
    pub fn cancel(&mut self, id: IntentId, now_ms: i64) -> Option<Outcome> {
        let index = self.prompts.iter().position(|p| p.id == id)?;
        let prompt = self.prompts.remove(index)?;
        let outcome = self.finish(
            prompt,
            Resolution::Cancelled,
            "the client cancelled".into(),
            now_ms,
        );
        if index == 0 {
            self.show_front(now_ms);
        }
        Some(outcome)
    }

    fn expire_front(&mut self, now_ms: i64) -> Option<Outcome> {
        let prompt = self.prompts.front_mut()?;
        prompt.shown_ms?;
        let reason = if let Some(modality) = prompt.expired(now_ms) {
            prompt.results.push(result(modality, "timeout", now_ms));
            format!("{modality} was not answered in time")
        } else if prompt.parent_deadline.is_some_and(|at| at <= now_ms) {
            "the parent session did not answer in time".to_string()
        } else {
            return None;
        };
        Some(self.finish_front(Resolution::ConfirmationTimeout, reason, now_ms))
    }

    fn finish_front(&mut self, resolution: Resolution, reason: String, now_ms: i64) -> Outcome {
        let Some(prompt) = self.prompts.pop_front() else {
            unreachable!("finish_front is only called with a shown prompt");
        };
        let outcome = self.finish(prompt, resolution, reason, now_ms);
        self.show_front(now_ms);
        outcome
    }

    /// Ends a prompt: friction history, audit (durable), and a token when approved.
    pub(crate) fn finish(
        &mut self,
        prompt: Prompt,
        resolution: Resolution,
        reason: String,
        now_ms: i64,
    ) -> Outcome {
        let history = match self.store.history(&prompt.friction_key) {
            Ok(h) => h,
            Err(e) => {
                tracing::warn!("friction history unreadable, treating as none: {e}");
                None
            }
        };
        let update = history_after(resolution, &prompt.friction_key, history, now_ms);
        let steps: Vec<String> = prompt
            .intent
            .steps
            .iter()
            .map(|s| s.capability.clone())
            .collect();
        let mut record = self.record(
            &prompt.intent,
            Some(&prompt.capability),
            &prompt.params,
            &steps,
            prompt.threshold,
            prompt.effective,
            Some(&prompt.plan),
            &prompt.results,
            resolution,
            now_ms,
        );
        record.profile = prompt.profile.clone();
        record.notes.push(reason.clone());
        let outcome = Outcome {
            id: prompt.id,
            capability: prompt.capability.name.clone(),
            approved: resolution.approves(),
            resolution,
            token: None,
            threshold: Some(prompt.threshold),
            plan: prompt.plan.modalities.clone(),
            audit_seq: None,
            reason,
        };
        if resolution.approves() {
            let plan = outcome.plan.clone();
            let committed = self.commit_approval(
                outcome,
                record,
                update,
                true,
                &prompt.capability,
                &prompt.params,
                now_ms,
            );
            return Outcome { plan, ..committed };
        }
        tracing::info!(capability = %outcome.capability, %resolution, "denied: {}", outcome.reason);
        let audit_seq = self
            .store
            .append(record, update, true)
            .map_err(|e| tracing::error!("denial could not be audited: {e}"))
            .ok();
        Outcome {
            audit_seq,
            ..outcome
        }
    }

    /// Builds an audit record (sequence and chain hash are filled by the store).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn record(
        &self,
        intent: &Intent,
        capability: Option<&Capability>,
        params: &Value,
        steps: &[String],
        threshold: Threshold,
        effective: Threshold,
        plan: Option<&Plan>,
        results: &[ModalityResult],
        resolution: Resolution,
        now_ms: i64,
    ) -> AuditRecord {
        let redact = self.config.file.audit.redact_params;
        AuditRecord {
            seq: 0,
            time_ms: now_ms,
            profile: self.profile.clone(),
            client: client_of(intent).clone(),
            capability: intent.capability.clone(),
            capability_version: capability.map(|c| c.version),
            params_digest: digest(params),
            params: (!redact).then(|| params.clone()),
            steps: steps.to_vec(),
            threshold: Some(threshold),
            effective_threshold: Some(effective),
            authorizer: plan.map(|p| p.authorizer.as_str().to_string()),
            plan: plan.map(|p| p.modalities.clone()).unwrap_or_default(),
            press_and_hold: plan.is_some_and(|p| p.press_and_hold),
            modality_results: results.to_vec(),
            notes: plan
                .map(|p| p.notes.iter().map(|n| note_str(*n).to_string()).collect())
                .unwrap_or_default(),
            outcome: if resolution.approves() {
                "approved"
            } else {
                "denied"
            }
            .to_string(),
            resolution,
            prev_hash: String::new(),
        }
    }
}

fn join(modalities: &[Modality], sep: &str) -> String {
    modalities
        .iter()
        .map(|m| m.as_str())
        .collect::<Vec<_>>()
        .join(sep)
}
