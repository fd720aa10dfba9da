//! The gate: `submit`, `respond`, `tick` and `cancel` on an injected clock. Every path ends in an
//! outcome that is audited; any error on the way to a decision is a denial (fail closed).

use std::collections::VecDeque;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::audit::{AuditRecord, ClientIdentity, ModalityResult, Resolution};
use crate::capability::{Capability, digest};
use crate::config::GateConfig;
use crate::error::StoreError;
use crate::friction::{self, FrictionReason, History};
use crate::intent::{
    Authorizer, Availability, Decision, Intent, IntentId, Outcome, Plan, PlanNote,
};
use crate::plan::{self, PlanInput};
use crate::prompt::Prompt;
use crate::store::{FrictionKey, FrictionUpdate, GroupCommit, Store};
use crate::threshold;
use crate::token::TokenKey;
use crate::types::{Answer, Modality, RiskClass, SideEffects, Threshold};

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
}

/// The result of evaluating an intent against the manifests, the table and the history.
#[derive(Debug, Clone)]
pub struct Evaluation {
    pub capability: Arc<Capability>,
    pub params: Value,
    pub steps: Vec<(Arc<Capability>, Value)>,
    pub threshold: Threshold,
    pub effective: Threshold,
    pub friction: FrictionReason,
    pub risk: RiskClass,
    pub side_effects: SideEffects,
    pub key: FrictionKey,
}

#[derive(Debug)]
enum Refusal {
    Unknown(String),
    InvalidParams(String),
    Store(StoreError),
}

/// The confirmation gate for one session.
pub struct Gate {
    pub(crate) config: GateConfig,
    pub(crate) store: Store,
    pub(crate) key: TokenKey,
    pub(crate) profile: String,
    pub(crate) available: Availability,
    pub(crate) prompts: VecDeque<Prompt>,
    pub(crate) next_id: u64,
}

impl Gate {
    /// A gate over `config`, its history and audit in `store`, its tokens signed with `key`.
    pub fn new(config: GateConfig, store: Store, key: TokenKey) -> Result<Gate, StoreError> {
        let profile = config.file.session.profile.clone();
        let mut gate = Gate {
            config,
            store,
            key,
            profile,
            available: Availability::default(),
            prompts: VecDeque::new(),
            next_id: 1,
        };
        gate.sync_capability_versions()?;
        Ok(gate)
    }

    /// A gate that only looks: the store opened read-only, capability versions not synced, a
    /// throwaway token key. For `explain`.
    pub fn inspect(config: GateConfig, state: &std::path::Path) -> Result<Gate, StoreError> {
        let store = Store::open_read_only(state)?;
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).map_err(|e| StoreError::File {
            path: state.to_path_buf(),
            message: format!("no randomness: {e}"),
        })?;
        let profile = config.file.session.profile.clone();
        Ok(Gate {
            config,
            store,
            key: TokenKey::from_bytes(key)?,
            profile,
            available: Availability::default(),
            prompts: VecDeque::new(),
            next_id: 1,
        })
    }

    /// Opens the store and token key at the config's state path.
    pub fn open(config: GateConfig) -> Result<Gate, StoreError> {
        let path = config.state_path();
        let group = GroupCommit {
            max_records: config.file.audit.group_commit_records,
            max_age_ms: i64::from(config.file.audit.group_commit_ms),
        };
        let store = Store::open(&path, group)?;
        let key = TokenKey::load_or_create(&TokenKey::path_beside(&path))?;
        Gate::new(config, store, key)
    }

    fn sync_capability_versions(&mut self) -> Result<(), StoreError> {
        let caps: Vec<(String, u32)> = self
            .config
            .registry
            .iter()
            .map(|c| (c.name.clone(), c.version))
            .collect();
        for (name, version) in caps {
            if self.store.note_capability_version(&name, version)? {
                tracing::info!("capability {name} is now version {version}: its history is reset");
            }
        }
        Ok(())
    }

    pub fn config(&self) -> &GateConfig {
        &self.config
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    pub fn store_mut(&mut self) -> &mut Store {
        &mut self.store
    }

    pub fn token_key(&self) -> &TokenKey {
        &self.key
    }

    /// Replaces the config (a reload); open prompts keep their plans.
    pub fn reload(&mut self, config: GateConfig) -> Result<(), StoreError> {
        self.config = config;
        self.sync_capability_versions()
    }

    /// Switches the user profile: the new profile's own history applies from now on.
    pub fn set_profile(&mut self, profile: &str) {
        self.profile = profile.to_string();
    }

    pub fn profile(&self) -> &str {
        &self.profile
    }

    /// Tells the gate what can answer prompts now.
    pub fn set_available(&mut self, available: Availability) {
        self.available = available;
    }

    pub fn available(&self) -> Availability {
        self.available
    }

    /// A capability was updated to `version`: its history is reset. False when it is unknown.
    pub fn update_capability(&mut self, name: &str, version: u32) -> Result<bool, StoreError> {
        if !self.config.registry.set_version(name, version) {
            return Ok(false);
        }
        self.store.note_capability_version(name, version)?;
        Ok(true)
    }

    /// The prompt being shown, if any.
    pub fn active(&self) -> Option<&Prompt> {
        self.prompts.front().filter(|p| p.shown_ms.is_some())
    }

    /// Every open prompt, the shown one first.
    pub fn prompts(&self) -> impl Iterator<Item = &Prompt> {
        self.prompts.iter()
    }

    pub fn prompt(&self, id: IntentId) -> Option<&Prompt> {
        self.prompts.iter().find(|p| p.id == id)
    }

    /// The earliest time `tick` has work to do: a prompt deadline or a group commit.
    pub fn next_deadline(&self) -> Option<i64> {
        self.active().and_then(Prompt::next_deadline)
    }

    /// Evaluates an intent without recording anything.
    pub fn evaluate(&self, intent: &Intent, now_ms: i64) -> Result<Evaluation, String> {
        self.evaluate_inner(intent, now_ms).map_err(|r| match r {
            Refusal::Unknown(name) => format!("unknown capability `{name}`"),
            Refusal::InvalidParams(m) => m,
            Refusal::Store(e) => e.to_string(),
        })
    }

    fn evaluate_inner(&self, intent: &Intent, now_ms: i64) -> Result<Evaluation, Refusal> {
        let registry = &self.config.registry;
        let capability = registry
            .get(&intent.capability)
            .ok_or_else(|| Refusal::Unknown(intent.capability.clone()))?
            .clone();
        let params = object_params(&intent.params, "params")?;
        let level = self.config.file.safety.level;
        let mut full = threshold::threshold(capability.side_effects, capability.auth_level, level);
        let mut risk = capability.risk();
        let mut side_effects = capability.side_effects;
        let mut steps = Vec::with_capacity(intent.steps.len());
        for (i, step) in intent.steps.iter().enumerate() {
            let cap = registry
                .get(&step.capability)
                .ok_or_else(|| Refusal::Unknown(step.capability.clone()))?
                .clone();
            let p = object_params(&step.params, &format!("steps[{i}].params"))?;
            full = full.max(threshold::threshold(
                cap.side_effects,
                cap.auth_level,
                level,
            ));
            risk = risk.max(cap.risk());
            side_effects = worst(side_effects, cap.side_effects);
            steps.push((cap, p));
        }
        let multi_step = !steps.is_empty();
        let key = FrictionKey {
            profile: self.profile.clone(),
            capability: capability.name.clone(),
            version: capability.version,
            fingerprint: String::new(),
        };
        if full == Threshold::None && !multi_step {
            // Routine: no history to consult, nothing to fingerprint (the hot path).
            return Ok(Evaluation {
                capability,
                params,
                steps,
                threshold: full,
                effective: full,
                friction: FrictionReason::NeverDegrades,
                risk,
                side_effects,
                key,
            });
        }
        let salient = if multi_step {
            json!({
                "params": capability.salient_params(&params),
                "steps": steps.iter().map(|(c, p)| json!([c.name, c.version, c.salient_params(p)])).collect::<Vec<_>>(),
            })
        } else {
            capability.salient_params(&params)
        };
        let key = FrictionKey {
            fingerprint: digest(&salient),
            ..key
        };
        let history = self.store.history(&key).map_err(Refusal::Store)?;
        let (effective, reason) = friction::effective(
            full,
            side_effects,
            multi_step,
            history.as_ref(),
            self.config.friction_rules(),
            now_ms,
        );
        Ok(Evaluation {
            capability,
            params,
            steps,
            threshold: full,
            effective,
            friction: reason,
            risk,
            side_effects,
            key,
        })
    }

    pub(crate) fn plan_for(&self, ev: &Evaluation) -> Plan {
        plan::plan(
            PlanInput {
                effective: ev.effective,
                full: ev.threshold,
                risk: ev.risk,
                haptic_eligible: ev.capability.haptic,
                multi_step: !ev.steps.is_empty(),
                parent_authorizer: self.config.file.session.parent_authorizer,
            },
            &self.available,
        )
    }

    /// Decides an intent at `now_ms`: execute, deny, or ask through a plan.
    pub fn submit(&mut self, intent: Intent, now_ms: i64) -> Decision {
        let id = IntentId(self.next_id);
        self.next_id += 1;
        if let Err(e) = self.store.flush_if_due(now_ms) {
            tracing::warn!("audit group commit failed, will retry: {e}");
        }
        let ev = match self.evaluate_inner(&intent, now_ms) {
            Ok(ev) => ev,
            Err(refusal) => {
                let (resolution, reason) = match refusal {
                    Refusal::Unknown(name) => (
                        Resolution::UnknownCapability,
                        format!("no trusted manifest declares capability `{name}`"),
                    ),
                    Refusal::InvalidParams(m) => (Resolution::InvalidParams, m),
                    Refusal::Store(e) => (Resolution::StateUnavailable, e.to_string()),
                };
                let ctx = DenyContext::bare(id, &intent, self.profile.clone());
                return Decision::Deny(self.deny_unprompted(ctx, resolution, reason, now_ms));
            }
        };
        let multi_step = !ev.steps.is_empty();
        if ev.effective == Threshold::None && !multi_step {
            return self.execute_unprompted(id, intent, ev, now_ms);
        }
        let plan = self.plan_for(&ev);
        let open_for_client = self
            .prompts
            .iter()
            .filter(|p| p.intent.client.id == intent.client.id)
            .count();
        let queue = &self.config.file.queue;
        let limited = if open_for_client >= queue.per_client {
            Some(format!(
                "the client already has {open_for_client} open prompt(s)"
            ))
        } else if self.prompts.len() >= queue.max_pending {
            Some(format!(
                "{} prompts are already waiting",
                self.prompts.len()
            ))
        } else {
            None
        };
        let prompt = self.make_prompt(id, intent, ev, plan, now_ms);
        // Neither denial below asked anyone: the outcome's plan is empty (audit keeps the plan).
        if let Some(reason) = limited {
            let outcome = self.finish(prompt, Resolution::RateLimited, reason, now_ms);
            return Decision::Deny(Outcome {
                plan: Vec::new(),
                ..outcome
            });
        }
        if prompt.plan.authorizer == Authorizer::Denying {
            let reason = "no output or no input device can show and answer a prompt".to_string();
            return Decision::Deny(self.finish(
                prompt,
                Resolution::ConfirmationUnavailable,
                reason,
                now_ms,
            ));
        }
        let decision = Decision::Confirm {
            id,
            threshold: prompt.threshold,
            plan: prompt.plan.clone(),
        };
        self.prompts.push_back(prompt);
        if self.prompts.len() == 1 {
            self.show_front(now_ms);
        }
        decision
    }

    fn make_prompt(
        &self,
        id: IntentId,
        intent: Intent,
        ev: Evaluation,
        plan: Plan,
        now_ms: i64,
    ) -> Prompt {
        let description = ev.capability.description.render(&ev.params);
        let target = match &ev.capability.target {
            Some(t) => Some(t.render(&ev.params)),
            None => intent.target.clone(),
        };
        let steps = ev
            .steps
            .iter()
            .map(|(c, p)| c.description.render(p))
            .collect();
        Prompt {
            id,
            params: ev.params,
            profile: self.profile.clone(),
            description,
            target,
            steps,
            risk: ev.risk,
            threshold: ev.threshold,
            effective: ev.effective,
            friction: ev.friction,
            plan,
            friction_key: ev.key,
            capability: ev.capability,
            intent,
            submitted_ms: now_ms,
            shown_ms: None,
            deadlines: Vec::new(),
            parent_deadline: None,
            results: Vec::new(),
        }
    }

    pub(crate) fn timeout_ms(&self, modality: Modality) -> i64 {
        let t = &self.config.file.timeouts;
        1000 * i64::from(match modality {
            Modality::Voice => t.voice_seconds,
            Modality::Visual => t.visual_seconds,
            Modality::Haptic => t.haptic_seconds,
        })
    }

    /// Presents the prompt at the front of the queue: its timers start now.
    pub(crate) fn show_front(&mut self, now_ms: i64) {
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

    fn execute_unprompted(
        &mut self,
        id: IntentId,
        intent: Intent,
        ev: Evaluation,
        now_ms: i64,
    ) -> Decision {
        let (resolution, friction_update, reason) = if ev.threshold == Threshold::None {
            (
                Resolution::PolicyAllow,
                None,
                "routine: the threshold is none".to_string(),
            )
        } else {
            // Read the history again at decision time: `evaluate` saw it a moment ago.
            let history = match self.store.history(&ev.key) {
                Ok(h) => h.unwrap_or_default(),
                Err(e) => {
                    let ctx = DenyContext::bare(id, &intent, self.profile.clone());
                    return Decision::Deny(self.deny_unprompted(
                        ctx,
                        Resolution::StateUnavailable,
                        e.to_string(),
                        now_ms,
                    ));
                }
            };
            (
                Resolution::ConfirmedByHistory,
                Some(FrictionUpdate::Set(
                    ev.key.clone(),
                    friction::after_implicit_pass(history, now_ms),
                )),
                ev.friction.describe(),
            )
        };
        let record = self.record(
            &intent,
            Some(&ev.capability),
            &ev.params,
            &ev.steps_names(),
            ev.threshold,
            ev.effective,
            None,
            &[],
            resolution,
            now_ms,
        );
        let durable = resolution != Resolution::PolicyAllow;
        let outcome = Outcome {
            id,
            capability: intent.capability.clone(),
            approved: true,
            resolution,
            token: None,
            threshold: Some(ev.threshold),
            plan: Vec::new(),
            audit_seq: None,
            reason,
        };
        let outcome = self.commit_approval(
            outcome,
            record,
            friction_update,
            durable,
            &ev.capability,
            &ev.params,
            now_ms,
        );
        if outcome.approved {
            Decision::Execute(outcome)
        } else {
            Decision::Deny(outcome)
        }
    }

    /// Audits an approval and issues its token; on any failure the approval becomes a denial
    /// (the returned outcome is then not approved).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn commit_approval(
        &mut self,
        mut outcome: Outcome,
        record: AuditRecord,
        friction_update: Option<FrictionUpdate>,
        durable: bool,
        capability: &Capability,
        params: &Value,
        now_ms: i64,
    ) -> Outcome {
        let expires = now_ms + 1000 * i64::from(self.config.file.tokens.expiry_seconds);
        let profile = record.profile.clone();
        let client = record.client.clone();
        let token = self.key.issue(
            &capability.name,
            capability.version,
            params,
            &profile,
            expires,
        );
        let result = token.and_then(|token| {
            let seq = self.store.append(record, friction_update, durable)?;
            Ok((token, seq))
        });
        match result {
            Ok((token, seq)) => {
                outcome.token = Some(token);
                outcome.audit_seq = Some(seq);
                outcome
            }
            Err(e) => {
                tracing::error!(
                    "approval of {} could not be audited, denying: {e}",
                    outcome.capability
                );
                let intent = Intent::new(&outcome.capability, params.clone(), client);
                let ctx = DenyContext {
                    id: outcome.id,
                    intent: &intent,
                    profile,
                    threshold: outcome.threshold,
                };
                self.deny_unprompted(ctx, Resolution::StateUnavailable, e.to_string(), now_ms)
            }
        }
    }

    fn deny_unprompted(
        &mut self,
        ctx: DenyContext<'_>,
        resolution: Resolution,
        reason: String,
        now_ms: i64,
    ) -> Outcome {
        let mut record = self.record(
            ctx.intent,
            None,
            &ctx.intent.params,
            &[],
            ctx.threshold.unwrap_or(Threshold::None),
            ctx.threshold.unwrap_or(Threshold::None),
            None,
            &[],
            resolution,
            now_ms,
        );
        if ctx.threshold.is_none() {
            record.threshold = None;
            record.effective_threshold = None;
        }
        record.profile = ctx.profile.clone();
        record.notes.push(reason.clone());
        tracing::info!(capability = %ctx.intent.capability, %resolution, "denied: {reason}");
        let audit_seq = self
            .store
            .append(record, None, true)
            .map_err(|e| tracing::error!("denial could not be audited: {e}"))
            .ok();
        Outcome {
            id: ctx.id,
            capability: ctx.intent.capability.clone(),
            approved: false,
            resolution,
            token: None,
            threshold: ctx.threshold,
            plan: Vec::new(),
            audit_seq,
            reason,
        }
    }
}

/// What a denial without a prompt records.
struct DenyContext<'a> {
    id: IntentId,
    intent: &'a Intent,
    profile: String,
    threshold: Option<Threshold>,
}

impl<'a> DenyContext<'a> {
    fn bare(id: IntentId, intent: &'a Intent, profile: String) -> Self {
        DenyContext {
            id,
            intent,
            profile,
            threshold: None,
        }
    }
}

impl Evaluation {
    fn steps_names(&self) -> Vec<String> {
        self.steps.iter().map(|(c, _)| c.name.clone()).collect()
    }
}

fn object_params(params: &Value, what: &str) -> Result<Value, Refusal> {
    match params {
        Value::Object(_) => Ok(params.clone()),
        Value::Null => Ok(Value::Object(Map::new())),
        other => Err(Refusal::InvalidParams(format!(
            "{what} must be a JSON object, not {}",
            json_kind(other)
        ))),
    }
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The side effects that decide friction floors for a multi-step intent: the worst step.
fn worst(a: SideEffects, b: SideEffects) -> SideEffects {
    let rank = |s| match s {
        SideEffects::System => 3,
        SideEffects::Destructive => 2,
        _ => 0,
    };
    if rank(b) > rank(a) { b } else { a }
}

pub(crate) fn history_after(
    resolution: Resolution,
    key: &FrictionKey,
    history: Option<History>,
    now_ms: i64,
) -> Option<FrictionUpdate> {
    match resolution {
        Resolution::UserApproved => Some(FrictionUpdate::Set(
            key.clone(),
            friction::after_explicit_approval(history, now_ms),
        )),
        Resolution::UserDenied | Resolution::ConfirmationTimeout => {
            Some(FrictionUpdate::Clear(key.clone()))
        }
        _ => None,
    }
}

pub(crate) fn answer_str(answer: Answer) -> &'static str {
    match answer {
        Answer::Approve => "approve",
        Answer::Deny => "deny",
    }
}

pub(crate) fn result(modality: Modality, result: &str, at_ms: i64) -> ModalityResult {
    ModalityResult {
        modality,
        result: result.to_string(),
        at_ms,
    }
}

pub(crate) fn note_str(note: PlanNote) -> &'static str {
    match note {
        PlanNote::VoiceUnavailable => "voice_unavailable: visual with press-and-hold",
        PlanNote::HapticUnavailable => "haptic_unavailable: visual instead",
        PlanNote::MultiStep => "multi_step: every step shown",
        PlanNote::VoiceDroppedByHistory => "voice dropped after repeated identical approvals",
        PlanNote::ModalityLost => "a modality was lost mid-prompt",
    }
}

pub(crate) fn client_of(intent: &Intent) -> &ClientIdentity {
    &intent.client
}
