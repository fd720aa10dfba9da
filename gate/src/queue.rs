//! Prompting: the queue of open prompts, the answers each modality gives, fallbacks when hardware
//! goes, deadlines on the injected clock, and cancellation. A prompt leaves the queue only
//! through `record::finish`, which audits its outcome.

use crate::audit::{ModalityResult, Resolution};
use crate::gate::{Gate, app_of};
use crate::intent::{Authorizer, Intent, IntentId, ModalityEvent, Outcome, PlanNote};
use crate::prompt::{APPROVE, Prompt, REASKED};
use crate::types::{Answer, Modality};

/// Why `respond` did not apply an event.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RespondError {
    #[error("no open prompt {0:?}")]
    UnknownPrompt(IntentId),
    #[error("prompt {0:?} is queued behind another and not shown yet")]
    NotShown(IntentId),
    #[error("{0} is not part of this prompt's plan")]
    NotInPlan(Modality),
    #[error("{0} has already answered")]
    AlreadyAnswered(Modality),
    #[error("this prompt is not answered by a parent compositor")]
    NotParent,
    #[error("this prompt does not offer \"allow until logout\"")]
    SessionNotOffered,
}

impl Gate {
    /// Why the queue has no room for another prompt from `intent`'s app, if it has none. Slots
    /// belong to the app's identity, not to its connection: more connections earn no more slots.
    pub(crate) fn queue_refusal(&self, intent: &Intent) -> Option<String> {
        let app = app_of(&intent.client);
        let open_for_app = self.prompts.iter().filter(|p| p.app == app).count();
        let queue = &self.config.file.queue;
        if open_for_app >= queue.per_client {
            Some(format!("the app already has {open_for_app} open prompt(s)"))
        } else if self.prompts.len() >= queue.max_pending {
            Some(format!(
                "{} prompts are already waiting",
                self.prompts.len()
            ))
        } else {
            None
        }
    }

    /// Queues a prompt; it is shown at once when nothing else is. Its turn comes after every
    /// prompt its app already has waiting, so apps are served in turn (start-time fair queueing
    /// over app identities): an app with many prompts cannot keep another's off the screen.
    pub(crate) fn enqueue(&mut self, mut prompt: Prompt, now_ms: i64) {
        let after_last = self.turns.get(&prompt.app).copied().unwrap_or(0);
        prompt.turn = after_last.max(self.served_turn);
        self.turns.insert(prompt.app.clone(), prompt.turn + 1);
        self.prompts.push_back(prompt);
        if self.prompts.len() == 1 {
            self.show_front(now_ms);
        }
    }

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
            ModalityEvent::Answer(modality, answer) => self.answer(modality, answer, None, now_ms),
            ModalityEvent::Spoken { answer, utterances } => {
                self.answer(Modality::Voice, answer, Some(utterances), now_ms)
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
                        // Voice's fallback is a press-and-hold on the overlay. A plain click
                        // given before the loss is less than that: the overlay asks again, with
                        // a fresh deadline, rather than approving on less than the plan.
                        if !prompt.plan.press_and_hold && prompt.answered(Modality::Visual) {
                            prompt
                                .results
                                .push(result(Modality::Visual, REASKED, now_ms));
                            prompt.set_deadline(Modality::Visual, now_ms + visual_timeout);
                        }
                        prompt.plan.press_and_hold = true;
                        prompt.plan.notes.push(PlanNote::VoiceUnavailable);
                    }
                    Modality::Haptic => prompt.plan.notes.push(PlanNote::HapticUnavailable),
                }
                if !prompt.plan.modalities.contains(&Modality::Visual) {
                    prompt.plan.modalities.push(Modality::Visual);
                    prompt.set_deadline(Modality::Visual, now_ms + visual_timeout);
                }
                if prompt.next_deadline().is_none() {
                    // Every prompt ends: one that nothing can answer any more is not left open.
                    let reason = "no modality of the plan is left to answer".to_string();
                    return Ok(Some(self.finish_front(
                        Resolution::ConfirmationUnavailable,
                        reason,
                        now_ms,
                    )));
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
            ModalityEvent::ApproveForSession => {
                if !prompt.offers_session() {
                    return Err(RespondError::SessionNotOffered);
                }
                if prompt.answered(Modality::Visual) {
                    return Err(RespondError::AlreadyAnswered(Modality::Visual));
                }
                prompt
                    .results
                    .push(result(Modality::Visual, APPROVE, now_ms));
                prompt.session_chosen = true;
                if prompt.all_approved() {
                    let reason = format!(
                        "approved through {}, and allowed until logout",
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

    /// One modality's answer to the shown prompt; `utterances` is how many the voice listener
    /// heard before it decided, kept in the audit record.
    fn answer(
        &mut self,
        modality: Modality,
        answer: Answer,
        utterances: Option<u32>,
        now_ms: i64,
    ) -> Result<Option<Outcome>, RespondError> {
        let prompt = &mut self.prompts[0];
        if !prompt.plan.modalities.contains(&modality) {
            return Err(RespondError::NotInPlan(modality));
        }
        if prompt.answered(modality) {
            return Err(RespondError::AlreadyAnswered(modality));
        }
        let mut said = result(modality, answer_str(answer), now_ms);
        said.utterances = utterances;
        prompt.results.push(said);
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

    /// The client withdrew its intent.
    pub fn cancel(&mut self, id: IntentId, now_ms: i64) -> Option<Outcome> {
        self.end_open(
            id,
            Resolution::Cancelled,
            "the client cancelled".into(),
            now_ms,
        )
    }

    /// The front end's own check of the user failed for good (polkit: PAM refused every
    /// password try): denied `authentication_failed` with `reason`, and, like a denial, the
    /// friction history of the action is cleared.
    pub fn authentication_failed(
        &mut self,
        id: IntentId,
        reason: String,
        now_ms: i64,
    ) -> Option<Outcome> {
        self.end_open(id, Resolution::AuthenticationFailed, reason, now_ms)
    }

    /// Ends an open prompt from outside the user's answers, and shows the next one.
    fn end_open(
        &mut self,
        id: IntentId,
        resolution: Resolution,
        reason: String,
        now_ms: i64,
    ) -> Option<Outcome> {
        let index = self.prompts.iter().position(|p| p.id == id)?;
        let prompt = self.prompts.remove(index)?;
        let outcome = self.finish(prompt, resolution, reason, now_ms);
        if index == 0 {
            self.show_front(now_ms);
        }
        Some(outcome)
    }

    pub(crate) fn timeout_ms(&self, modality: Modality) -> i64 {
        let t = &self.config.file.timeouts;
        1000 * i64::from(match modality {
            Modality::Voice => t.voice_seconds,
            Modality::Visual => t.visual_seconds,
            Modality::Haptic => t.haptic_seconds,
        })
    }

    /// Presents the next prompt, the one whose turn comes first: its timers start now.
    pub(crate) fn show_front(&mut self, now_ms: i64) {
        if self.prompts.front().is_none_or(|p| p.shown_ms.is_some()) {
            return;
        }
        let next = self
            .prompts
            .iter()
            .enumerate()
            .min_by_key(|(i, p)| (p.turn, *i))
            .map(|(i, _)| i);
        if let Some(i) = next.filter(|&i| i != 0)
            && let Some(p) = self.prompts.remove(i)
        {
            self.prompts.push_front(p);
        }
        if let Some(p) = self.prompts.front() {
            self.served_turn = self.served_turn.max(p.turn);
        }
        // An app whose next turn is not after the one served is no different from a new app.
        let served = self.served_turn;
        self.turns.retain(|_, next| *next > served);
        let parent_ms = 1000 * i64::from(self.config.file.timeouts.parent_seconds);
        let timeouts: Vec<(Modality, i64)> = match self.prompts.front() {
            Some(p) => p
                .plan
                .modalities
                .iter()
                .map(|&m| (m, now_ms + self.timeout_ms(m)))
                .collect(),
            None => return,
        };
        if let Some(p) = self.prompts.front_mut() {
            p.shown_ms = Some(now_ms);
            p.deadlines = timeouts;
            if p.plan.authorizer == Authorizer::Parent {
                p.parent_deadline = Some(now_ms + parent_ms);
            }
        }
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

    /// Ends the shown prompt and shows the next one.
    fn finish_front(&mut self, resolution: Resolution, reason: String, now_ms: i64) -> Outcome {
        let Some(prompt) = self.prompts.pop_front() else {
            unreachable!("finish_front is only called with a shown prompt");
        };
        let outcome = self.finish(prompt, resolution, reason, now_ms);
        self.show_front(now_ms);
        outcome
    }
}

fn answer_str(answer: Answer) -> &'static str {
    match answer {
        Answer::Approve => APPROVE,
        Answer::Deny => "deny",
    }
}

fn result(modality: Modality, result: &str, at_ms: i64) -> ModalityResult {
    ModalityResult {
        modality,
        result: result.to_string(),
        at_ms,
        utterances: None,
    }
}

fn join(modalities: &[Modality], sep: &str) -> String {
    modalities
        .iter()
        .map(|m| m.as_str())
        .collect::<Vec<_>>()
        .join(sep)
}
