//! Deciding: an intent is evaluated against the manifests, the threshold table and the friction
//! history, planned against what hardware can answer, and `submit` turns that into execute, deny
//! or a prompt in the queue.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::audit::Resolution;
use crate::capability::{Capability, digest};
use crate::classify::{Classified, strictly_refused};
use crate::error::StoreError;
use crate::friction::{self, FrictionReason};
use crate::gate::{Gate, app_of};
use crate::intent::{Authorizer, Decision, Intent, IntentId, Outcome, Plan};
use crate::plan::{self, PlanInput};
use crate::prompt::Prompt;
use crate::record::{Approval, DenyContext, RecordFacts};
use crate::rules::DenyRule;
use crate::store::{FrictionKey, FrictionUpdate};
use crate::types::{AuthLevel, RiskClass, SideEffects, Threshold};
use crate::{threshold, token};

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
    /// The user allowed this app this action until logout (see `session`): it runs unprompted,
    /// `user_approved_for_session`.
    pub session_approved: bool,
    /// The gate's own rating of the parameters, for a capability with `classify`.
    pub classified: Option<Classified>,
}

impl Evaluation {
    pub(crate) fn step_names(&self) -> Vec<String> {
        self.steps.iter().map(|(c, _)| c.name.clone()).collect()
    }
}

/// Why an intent cannot be evaluated at all.
#[derive(Debug)]
pub(crate) enum Refusal {
    /// An explicit deny rule forbids it.
    Rule(Arc<DenyRule>),
    Unknown(String),
    InvalidParams(String),
    /// The strict safety level refuses a Critical command outright.
    Strict(String),
    Store(StoreError),
}

impl Refusal {
    /// The deny rule behind this refusal, if one is.
    pub(crate) fn rule(&self) -> Option<Arc<DenyRule>> {
        match self {
            Refusal::Rule(rule) => Some(Arc::clone(rule)),
            _ => None,
        }
    }

    /// The resolution and the sentence a denial for this refusal records.
    pub(crate) fn resolution(self) -> (Resolution, String) {
        match self {
            Refusal::Rule(rule) => (Resolution::PolicyDeny, rule.reason.clone()),
            Refusal::Unknown(name) => (
                Resolution::UnknownCapability,
                format!("no trusted manifest declares capability `{name}`"),
            ),
            Refusal::InvalidParams(m) => (Resolution::InvalidParams, m),
            Refusal::Strict(m) => (Resolution::PolicyDeny, m),
            Refusal::Store(e) => (Resolution::StateUnavailable, e.to_string()),
        }
    }
}

impl Gate {
    /// Evaluates an intent without recording anything.
    pub fn evaluate(&self, intent: &Intent, now_ms: i64) -> Result<Evaluation, String> {
        self.evaluate_inner(intent, now_ms).map_err(|r| match r {
            Refusal::Rule(rule) => format!("denied by rule `{}`: {}", rule.name, rule.reason),
            Refusal::Unknown(name) => format!("unknown capability `{name}`"),
            Refusal::InvalidParams(m) | Refusal::Strict(m) => m,
            Refusal::Store(e) => e.to_string(),
        })
    }

    pub(crate) fn evaluate_inner(
        &self,
        intent: &Intent,
        now_ms: i64,
    ) -> Result<Evaluation, Refusal> {
        let registry = &self.config.registry;
        // Deny rules come before everything else: a forbidden capability is denied whether or
        // not it is declared, whatever its history or a session approval says.
        if let Some(rule) = self.deny_rule_for(intent) {
            return Err(Refusal::Rule(rule));
        }
        let capability = registry
            .lookup(&intent.capability)
            .ok_or_else(|| Refusal::Unknown(intent.capability.clone()))?;
        let params = object_params(&intent.params, "params")?;
        capability
            .check_params(&params)
            .map_err(Refusal::InvalidParams)?;
        let level = self.config.file.safety.level;
        let (se, auth, classified) = self.class_of(&capability, &params, "")?;
        let mut full = threshold::threshold(se, auth, level);
        let mut risk = RiskClass::of(se, auth);
        let mut side_effects = se;
        let mut steps = Vec::with_capacity(intent.steps.len());
        for (i, step) in intent.steps.iter().enumerate() {
            let cap = registry
                .lookup(&step.capability)
                .ok_or_else(|| Refusal::Unknown(step.capability.clone()))?;
            let p = object_params(&step.params, &format!("steps[{i}].params"))?;
            cap.check_params(&p)
                .map_err(|e| Refusal::InvalidParams(format!("steps[{i}]: {e}")))?;
            let (step_se, step_auth, _) = self.class_of(&cap, &p, &format!("steps[{i}]: "))?;
            full = full.max(threshold::threshold(step_se, step_auth, level));
            risk = risk.max(RiskClass::of(step_se, step_auth));
            side_effects = worst(side_effects, step_se);
            steps.push((cap, p));
        }
        let multi_step = !steps.is_empty();
        let key = FrictionKey {
            profile: self.profile.clone(),
            app: String::new(),
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
                session_approved: false,
                classified,
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
            app: intent.client.app_key(),
            fingerprint: digest(&salient),
            ..key
        };
        if self.session_approved(&key, full, multi_step) {
            return Ok(Evaluation {
                capability,
                params,
                steps,
                threshold: full,
                effective: Threshold::None,
                friction: FrictionReason::NeverDegrades,
                risk,
                side_effects,
                key,
                session_approved: true,
                classified,
            });
        }
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
            session_approved: false,
            classified,
        })
    }

    /// The first deny rule that forbids `intent` or one of its steps.
    pub(crate) fn deny_rule_for(&self, intent: &Intent) -> Option<Arc<DenyRule>> {
        let registry = &self.config.registry;
        std::iter::once((&intent.capability, &intent.params))
            .chain(intent.steps.iter().map(|s| (&s.capability, &s.params)))
            .find_map(|(capability, params)| registry.deny_rule(capability, params))
            .cloned()
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

    /// Refuses `intent` because its client's connecting process changed since it connected
    /// (see [`crate::ClientIdentity::process_change`]): denied `identity_changed` without asking
    /// anyone, audited with the identity seen at connect and the change as the note.
    pub fn refuse_changed_identity(
        &mut self,
        intent: Intent,
        change: &crate::ProcessChange,
        now_ms: i64,
    ) -> Outcome {
        let id = IntentId(self.next_id);
        self.next_id += 1;
        let ctx = DenyContext::bare(id, &intent, self.profile.clone());
        let reason = format!("refused: {change}");
        self.deny_unprompted(ctx, Resolution::IdentityChanged, reason, now_ms)
    }

    /// Refuses `intent` because its parameters could not be read (e.g. a `submit_fd` whose fd is
    /// not a sealed memfd of the announced size): denied `invalid_params` without asking anyone,
    /// audited with `reason`. Only this request ends; the client's other intents carry on.
    pub fn refuse_unreadable(&mut self, intent: Intent, reason: &str, now_ms: i64) -> Outcome {
        let id = IntentId(self.next_id);
        self.next_id += 1;
        let ctx = DenyContext::bare(id, &intent, self.profile.clone());
        let reason = format!("refused: {reason}");
        self.deny_unprompted(ctx, Resolution::InvalidParams, reason, now_ms)
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
                let rule = refusal.rule();
                let (resolution, reason) = refusal.resolution();
                let ctx = DenyContext {
                    rule,
                    ..DenyContext::bare(id, &intent, self.profile.clone())
                };
                return Decision::Deny(self.deny_unprompted(ctx, resolution, reason, now_ms));
            }
        };
        let multi_step = !ev.steps.is_empty();
        if ev.effective == Threshold::None && !multi_step {
            return self.execute_unprompted(id, intent, ev, now_ms);
        }
        let plan = self.plan_for(&ev);
        let limited = self.queue_refusal(&intent);
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
        self.enqueue(prompt, now_ms);
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
        let app = app_of(&intent.client);
        let session_eligible =
            self.session_eligible(&intent, ev.threshold, ev.risk, !ev.steps.is_empty(), &plan);
        let steps_digest = token::steps_digest(
            ev.steps
                .iter()
                .map(|(c, p)| (c.name.as_str(), c.version, p)),
        );
        let mut extra = ev.capability.unshown_params(&ev.params);
        if let Some(c) = &ev.classified {
            // The gate's own reasons, beside the command the description shows.
            let shown = c.summary_in(&self.config.file.shell_risk.wording());
            extra.insert(0, (self.config.file.gate.risk_label.clone(), shown));
        }
        for (i, (c, p)) in ev.steps.iter().enumerate() {
            extra.extend(
                c.unshown_params(p)
                    .into_iter()
                    .map(|(k, v)| (format!("steps[{i}].{k}"), v)),
            );
        }
        Prompt {
            id,
            params: ev.params,
            profile: self.profile.clone(),
            description,
            target,
            steps,
            steps_digest,
            extra,
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
            session_eligible,
            app,
            turn: 0,
            session_chosen: false,
        }
    }

    /// Runs an intent that needs no prompt: `policy_allow`, or `confirmed_by_history` (which
    /// moves the friction history on and is committed before it returns).
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
        } else if ev.session_approved {
            (
                Resolution::UserApprovedForSession,
                None,
                "the user allowed this app this action until logout".to_string(),
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
        let (record, canonical_params) = self.record_with_canonical(RecordFacts {
            intent: &intent,
            capability: Some(&ev.capability),
            params: &ev.params,
            steps: ev.step_names(),
            thresholds: Some((ev.threshold, ev.effective)),
            plan: None,
            results: &[],
            resolution,
            profile: &self.profile,
            rule: None,
            note: None,
            now_ms,
        });
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
        let outcome = self.commit_approval(Approval {
            outcome,
            record,
            friction_update,
            durable: resolution != Resolution::PolicyAllow,
            capability: &ev.capability,
            params: &ev.params,
            canonical_params,
            // Only single intents run unprompted: multi-step ones are always shown.
            steps: "",
            now_ms,
        });
        if outcome.approved {
            Decision::Execute(outcome)
        } else {
            Decision::Deny(outcome)
        }
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
/// A capability's class for these parameters: the declared one, or the gate's classification
/// of them when the manifest says `classify` (a Critical command under strict safety is refused).
impl Gate {
    fn class_of(
        &self,
        cap: &Capability,
        params: &Value,
        at: &str,
    ) -> Result<(SideEffects, AuthLevel, Option<Classified>), Refusal> {
        let Some(classifier) = &cap.classifier else {
            return Ok((cap.side_effects, cap.auth_level, None));
        };
        let c = classifier
            .classify(params)
            .map_err(|e| Refusal::InvalidParams(format!("{at}{e}")))?;
        if !strictly_refused(self.config.file.safety.level, &c) {
            return Ok((c.side_effects, c.auth_level, Some(c)));
        }
        // Worded as the prompt would be: the agent (and its user) read it. The audit records this
        // text as it was said; the phrase keys are not kept there, a reworded config being part
        // of the audited policy anyway.
        let wording = self.config.file.shell_risk.wording();
        Err(Refusal::Strict(format!(
            "{at}refused under strict safety: {}",
            c.summary_in(&wording)
        )))
    }
}

fn worst(a: SideEffects, b: SideEffects) -> SideEffects {
    let rank = |s| match s {
        SideEffects::System => 3,
        SideEffects::Destructive => 2,
        _ => 0,
    };
    if rank(b) > rank(a) { b } else { a }
}
