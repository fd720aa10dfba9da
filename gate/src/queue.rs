//! Owns the queue of open prompts: which one is shown, the apps' turns, the intent ids, the
//! answers each modality gives, fallbacks when hardware goes, and deadlines on the injected
//! clock. A prompt the queue decides leaves it as an [`Ended`]: the gate records its outcome
//! (the queue knows nothing of the audit log) and then shows the next one.

use std::collections::{HashMap, VecDeque};

use crate::audit::{ModalityResult, Resolution};
use crate::config::{QueueConfig, TimeoutConfig};
use crate::intent::{Authorizer, Intent, IntentId, ModalityEvent, PlanNote};
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

/// The open prompts, fairly ordered by app, and the ids of intents.
#[derive(Debug)]
pub(crate) struct Queue {
    /// Open prompts; the front one is shown once its `shown_ms` is set.
    prompts: VecDeque<Prompt>,
    next_id: u64,
    /// For each app with a prompt waiting, the turn after its last one (see `enqueue`).
    turns: HashMap<String, u64>,
    /// The turn of the prompt shown last.
    served_turn: u64,
}

/// A prompt taken out of the queue because it is decided, and how: the gate records it.
pub(crate) struct Ended {
    pub prompt: Prompt,
    pub resolution: Resolution,
    pub reason: String,
}

/// How a prompt's answer decided it, when it did.
type Decided = Option<(Resolution, String)>;

impl Default for Queue {
    fn default() -> Self {
        Queue {
            prompts: VecDeque::new(),
            next_id: 1,
            turns: HashMap::new(),
            served_turn: 0,
        }
    }
}

impl Queue {
    /// The id of the next intent (a prompt's, or one decided without asking).
    pub(crate) fn allocate_id(&mut self) -> IntentId {
        let id = IntentId(self.next_id);
        self.next_id += 1;
        id
    }

    /// The prompt being shown, if any.
    pub(crate) fn active(&self) -> Option<&Prompt> {
        self.prompts.front().filter(|p| p.shown_ms.is_some())
    }

    /// Every open prompt, the shown one first.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &Prompt> {
        self.prompts.iter()
    }

    pub(crate) fn get(&self, id: IntentId) -> Option<&Prompt> {
        self.prompts.iter().find(|p| p.id == id)
    }

    /// Why the queue has no room for another prompt from `intent`'s app, if it has none. Slots
    /// belong to the app's identity, not to its connection: more connections earn no more slots.
    pub(crate) fn refusal(&self, intent: &Intent, limits: &QueueConfig) -> Option<String> {
        let app = intent.client.app_key();
        let open_for_app = self.prompts.iter().filter(|p| p.app == app).count();
        if open_for_app >= limits.per_client {
            Some(format!("the app already has {open_for_app} open prompt(s)"))
        } else if self.prompts.len() >= limits.max_pending {
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
    pub(crate) fn enqueue(&mut self, mut prompt: Prompt, timeouts: &TimeoutConfig, now_ms: i64) {
        let after_last = self.turns.get(&prompt.app).copied().unwrap_or(0);
        prompt.turn = after_last.max(self.served_turn);
        self.turns.insert(prompt.app.clone(), prompt.turn + 1);
        self.prompts.push_back(prompt);
        if self.prompts.len() == 1 {
            self.show_front(timeouts, now_ms);
        }
    }

    /// Applies one modality's event to the shown prompt. `Ok(Some(ended))` when it decided
    /// the prompt (taken out of the queue); `Ok(None)` when more answers are needed.
    pub(crate) fn respond(
        &mut self,
        id: IntentId,
        event: ModalityEvent,
        timeouts: &TimeoutConfig,
        now_ms: i64,
    ) -> Result<Option<Ended>, RespondError> {
        let Some(index) = self.prompts.iter().position(|p| p.id == id) else {
            return Err(RespondError::UnknownPrompt(id));
        };
        if index != 0 || self.prompts[0].shown_ms.is_none() {
            return Err(RespondError::NotShown(id));
        }
        // An answer that arrives after a deadline does not count: the deadline decided first.
        if let Some(ended) = self.expire_front(now_ms) {
            return Ok(Some(ended));
        }
        let visual_timeout = timeout_ms(timeouts, Modality::Visual);
        let prompt = &mut self.prompts[0];
        let decided = match event {
            ModalityEvent::Answer(modality, answer) => {
                answer_with(prompt, modality, answer, None, now_ms)?
            }
            ModalityEvent::Spoken { answer, utterances } => {
                answer_with(prompt, Modality::Voice, answer, Some(utterances), now_ms)?
            }
            ModalityEvent::Lost(modality) => lose(prompt, modality, visual_timeout, now_ms),
            ModalityEvent::Activity => {
                if prompt.plan.modalities.contains(&Modality::Visual)
                    && !prompt.answered(Modality::Visual)
                {
                    prompt.set_deadline(Modality::Visual, now_ms + visual_timeout);
                }
                None
            }
            ModalityEvent::ApproveForSession => approve_for_session(prompt, now_ms)?,
            ModalityEvent::Parent(answer) => Some(parent_answer(prompt, answer)?),
        };
        Ok(decided.map(|(resolution, reason)| self.end_front(resolution, reason)))
    }

    /// Takes the shown prompt out when one of its deadlines has passed at `now_ms`.
    pub(crate) fn expire_front(&mut self, now_ms: i64) -> Option<Ended> {
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
        Some(self.end_front(Resolution::ConfirmationTimeout, reason))
    }

    /// Takes open prompt `id` out of the queue (ended from outside the user's answers), and
    /// whether it was at the front (then the next one is to be shown).
    pub(crate) fn take(&mut self, id: IntentId) -> Option<(Prompt, bool)> {
        let index = self.prompts.iter().position(|p| p.id == id)?;
        let prompt = self.prompts.remove(index)?;
        Some((prompt, index == 0))
    }

    /// Presents the next prompt, the one whose turn comes first: its timers start now.
    pub(crate) fn show_front(&mut self, timeouts: &TimeoutConfig, now_ms: i64) {
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
        let parent_ms = 1000 * i64::from(timeouts.parent_seconds);
        if let Some(p) = self.prompts.front_mut() {
            p.shown_ms = Some(now_ms);
            p.deadlines = p
                .plan
                .modalities
                .iter()
                .map(|&m| (m, now_ms + timeout_ms(timeouts, m)))
                .collect();
            if p.plan.authorizer == Authorizer::Parent {
                p.parent_deadline = Some(now_ms + parent_ms);
            }
        }
    }

    /// Takes the shown prompt out, decided: the gate records it and shows the next one.
    fn end_front(&mut self, resolution: Resolution, reason: String) -> Ended {
        let Some(prompt) = self.prompts.pop_front() else {
            unreachable!("end_front is only called with a shown prompt");
        };
        Ended {
            prompt,
            resolution,
            reason,
        }
    }
}

/// How long `modality` has to answer.
fn timeout_ms(timeouts: &TimeoutConfig, modality: Modality) -> i64 {
    1000 * i64::from(match modality {
        Modality::Voice => timeouts.voice_seconds,
        Modality::Visual => timeouts.visual_seconds,
        Modality::Haptic => timeouts.haptic_seconds,
    })
}

/// One modality's answer to the shown prompt; `utterances` is how many the voice listener
/// heard before it decided, kept in the audit record.
fn answer_with(
    prompt: &mut Prompt,
    modality: Modality,
    answer: Answer,
    utterances: Option<u32>,
    now_ms: i64,
) -> Result<Decided, RespondError> {
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
        return Ok(Some((Resolution::UserDenied, reason)));
    }
    if prompt.all_approved() {
        let reason = format!(
            "approved through {}",
            join(&prompt.plan.modalities, " and ")
        );
        return Ok(Some((Resolution::UserApproved, reason)));
    }
    Ok(None)
}

/// A modality of the plan can no longer answer: the plan falls back to the overlay, or the
/// prompt ends when nothing is left to answer it.
fn lose(prompt: &mut Prompt, modality: Modality, visual_timeout: i64, now_ms: i64) -> Decided {
    if !prompt.plan.modalities.contains(&modality) || prompt.answered(modality) {
        return None;
    }
    prompt.results.push(result(modality, "lost", now_ms));
    prompt.plan.modalities.retain(|m| *m != modality);
    prompt.deadlines.retain(|(m, _)| *m != modality);
    prompt.plan.notes.push(PlanNote::ModalityLost);
    match modality {
        Modality::Visual => {
            let reason = "the overlay can no longer be shown".to_string();
            return Some((Resolution::ConfirmationUnavailable, reason));
        }
        Modality::Voice => {
            // Voice's fallback is a press-and-hold on the overlay. A plain click given before
            // the loss is less than that: the overlay asks again, with a fresh deadline, rather
            // than approving on less than the plan.
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
        return Some((Resolution::ConfirmationUnavailable, reason));
    }
    None
}

/// The overlay's "allow until logout": a visual approval that the gate remembers.
fn approve_for_session(prompt: &mut Prompt, now_ms: i64) -> Result<Decided, RespondError> {
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
        return Ok(Some((Resolution::UserApproved, reason)));
    }
    Ok(None)
}

/// The parent compositor's answer, for a prompt it authorizes.
fn parent_answer(prompt: &Prompt, answer: Answer) -> Result<(Resolution, String), RespondError> {
    if prompt.plan.authorizer != Authorizer::Parent {
        return Err(RespondError::NotParent);
    }
    let (resolution, reason) = match answer {
        Answer::Approve => (Resolution::UserApproved, "the parent session approved"),
        Answer::Deny => (Resolution::UserDenied, "the parent session denied"),
    };
    Ok((resolution, reason.to_string()))
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
