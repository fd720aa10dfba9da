//! Evaluating, which owns no state: an intent is judged against the manifests, the deny rules,
//! the threshold table, the friction history and the session approvals, planned against what
//! hardware can answer, and made into a prompt. Nothing here records or queues anything: the gate
//! turns an evaluation into execute, deny or a prompt in the queue.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::audit::Resolution;
use crate::capability::{Capability, digest};
use crate::classify::{Classified, strictly_refused};
use crate::config::GateConfig;
use crate::error::StoreError;
use crate::friction::{self, FrictionReason};
use crate::intent::{Availability, Intent, IntentId, Plan};
use crate::plan::{self, PlanInput};
use crate::prompt::Prompt;
use crate::registry::Registry;
use crate::rules::DenyRule;
use crate::session::{self, SessionApprovals};
use crate::store::{FrictionKey, Store};
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

impl Refusal {
    /// How `Gate::evaluate` words this refusal.
    pub(crate) fn message(self) -> String {
        match self {
            Refusal::Rule(rule) => format!("denied by rule `{}`: {}", rule.name, rule.reason),
            Refusal::Unknown(name) => format!("unknown capability `{name}`"),
            Refusal::InvalidParams(m) | Refusal::Strict(m) => m,
            Refusal::Store(e) => e.to_string(),
        }
    }
}

/// What the gate evaluates an intent under: the policy in force, the profile, what hardware can
/// answer, the friction history and the session approvals. Borrowed, never changed.
pub(crate) struct Evaluator<'a> {
    pub config: &'a GateConfig,
    pub profile: &'a str,
    pub available: &'a Availability,
    pub store: &'a Store,
    pub sessions: &'a SessionApprovals,
}

/// An intent as checked against the manifests: its capability and steps with their parameters,
/// and the worst of their thresholds, risks and side effects.
struct Checked {
    capability: Arc<Capability>,
    params: Value,
    steps: Vec<(Arc<Capability>, Value)>,
    full: Threshold,
    risk: RiskClass,
    side_effects: SideEffects,
    classified: Option<Classified>,
}

impl Checked {
    fn evaluated(
        self,
        key: FrictionKey,
        effective: Threshold,
        friction: FrictionReason,
        session_approved: bool,
    ) -> Evaluation {
        Evaluation {
            capability: self.capability,
            params: self.params,
            steps: self.steps,
            threshold: self.full,
            effective,
            friction,
            risk: self.risk,
            side_effects: self.side_effects,
            key,
            session_approved,
            classified: self.classified,
        }
    }
}

impl Evaluator<'_> {
    /// Evaluates an intent without recording anything.
    pub(crate) fn evaluate(&self, intent: &Intent, now_ms: i64) -> Result<Evaluation, Refusal> {
        // Deny rules come before everything else: a forbidden capability is denied whether or
        // not it is declared, whatever its history or a session approval says.
        if let Some(rule) = deny_rule_for(&self.config.registry, intent) {
            return Err(Refusal::Rule(rule));
        }
        let checked = self.check(intent)?;
        let full = checked.full;
        let multi_step = !checked.steps.is_empty();
        let key = FrictionKey {
            profile: self.profile.to_string(),
            app: String::new(),
            capability: checked.capability.name.clone(),
            version: checked.capability.version,
            fingerprint: String::new(),
        };
        if full == Threshold::None && !multi_step {
            // Routine: no history to consult, nothing to fingerprint (the hot path).
            return Ok(checked.evaluated(key, full, FrictionReason::NeverDegrades, false));
        }
        let (capability, params) = (&checked.capability, &checked.params);
        let salient = if multi_step {
            json!({
                "params": capability.salient_params(params),
                "steps": checked.steps.iter().map(|(c, p)| json!([c.name, c.version, c.salient_params(p)])).collect::<Vec<_>>(),
            })
        } else {
            capability.salient_params(params)
        };
        let key = FrictionKey {
            app: intent.client.app_key(),
            fingerprint: digest(&salient),
            ..key
        };
        let enabled = self.config.file.gate.session_approvals;
        if self.sessions.approved(enabled, &key, full, multi_step) {
            let never = FrictionReason::NeverDegrades;
            return Ok(checked.evaluated(key, Threshold::None, never, true));
        }
        let history = self.store.history(&key).map_err(Refusal::Store)?;
        let (effective, reason) = friction::effective(
            full,
            checked.side_effects,
            multi_step,
            history.as_ref(),
            self.config.friction_rules(),
            now_ms,
        );
        Ok(checked.evaluated(key, effective, reason, false))
    }

    /// Checks an intent and its steps against the manifests: each is declared, its parameters
    /// are an object the manifest accepts, and its class is rated.
    fn check(&self, intent: &Intent) -> Result<Checked, Refusal> {
        let registry = &self.config.registry;
        let capability = registry
            .lookup(&intent.capability)
            .ok_or_else(|| Refusal::Unknown(intent.capability.clone()))?;
        let params = object_params(&intent.params, None)?;
        capability
            .check_params(&params)
            .map_err(Refusal::InvalidParams)?;
        let level = self.config.file.safety.level;
        let (se, auth, classified) = self.class_of(&capability, &params, None)?;
        let mut full = threshold::threshold(se, auth, level);
        let mut risk = RiskClass::of(se, auth);
        let mut side_effects = se;
        let mut steps = Vec::with_capacity(intent.steps.len());
        for (i, step) in intent.steps.iter().enumerate() {
            let cap = registry
                .lookup(&step.capability)
                .ok_or_else(|| Refusal::Unknown(step.capability.clone()))?;
            let p = object_params(&step.params, Some(i))?;
            cap.check_params(&p)
                .map_err(|e| Refusal::InvalidParams(format!("steps[{i}]: {e}")))?;
            let (step_se, step_auth, _) = self.class_of(&cap, &p, Some(i))?;
            full = full.max(threshold::threshold(step_se, step_auth, level));
            risk = risk.max(RiskClass::of(step_se, step_auth));
            side_effects = worst(side_effects, step_se);
            steps.push((cap, p));
        }
        Ok(Checked {
            capability,
            params,
            steps,
            full,
            risk,
            side_effects,
            classified,
        })
    }

    /// A capability's class for these parameters: the declared one, or the gate's
    /// classification of them when the manifest says `classify` (a Critical command under
    /// strict safety is refused). `step` is the step's index, for the refusal's wording.
    fn class_of(
        &self,
        cap: &Capability,
        params: &Value,
        step: Option<usize>,
    ) -> Result<(SideEffects, AuthLevel, Option<Classified>), Refusal> {
        // Worded only on a refusal: a step's label costs nothing on the way to a decision.
        let at = || step.map(|i| format!("steps[{i}]: ")).unwrap_or_default();
        let Some(classifier) = &cap.classifier else {
            return Ok((cap.side_effects, cap.auth_level, None));
        };
        let c = classifier
            .classify(params, &self.config.secrets)
            .map_err(|e| Refusal::InvalidParams(format!("{}{e}", at())))?;
        if !strictly_refused(self.config.file.safety.level, &c) {
            return Ok((c.side_effects, c.auth_level, Some(c)));
        }
        // Worded as the prompt would be: the agent (and its user) read it. The audit records
        // this text as it was said; the phrase keys are not kept there, a reworded config being
        // part of the audited policy anyway.
        let wording = self.config.file.shell_risk.wording();
        Err(Refusal::Strict(format!(
            "{}refused under strict safety: {}",
            at(),
            c.summary_in(&wording)
        )))
    }

    /// How an evaluated intent would be asked, given what hardware can answer now.
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
            self.available,
        )
    }

    /// Whether a prompt for `intent`, evaluated as `ev` and asked through `plan`, may offer
    /// "allow until logout" (see `session::offerable`).
    pub(crate) fn offers_session(&self, intent: &Intent, ev: &Evaluation, plan: &Plan) -> bool {
        let enabled = self.config.file.gate.session_approvals;
        let multi_step = !ev.steps.is_empty();
        session::offerable(enabled, intent, ev.threshold, ev.risk, multi_step, plan)
    }

    /// The prompt that asks about `intent` through `plan`: what it shows, and what its end
    /// records.
    pub(crate) fn make_prompt(
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
        let app = intent.client.app_key();
        let session_eligible = self.offers_session(&intent, &ev, &plan);
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
            profile: self.profile.to_string(),
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
}

/// The first deny rule in `registry` that forbids `intent` or one of its steps.
pub(crate) fn deny_rule_for(registry: &Registry, intent: &Intent) -> Option<Arc<DenyRule>> {
    std::iter::once((&intent.capability, &intent.params))
        .chain(intent.steps.iter().map(|s| (&s.capability, &s.params)))
        .find_map(|(capability, params)| registry.deny_rule(capability, params))
        .cloned()
}

/// The parameters as an object (`null` is an empty one); `step` is the step's index, for the
/// refusal's wording.
fn object_params(params: &Value, step: Option<usize>) -> Result<Value, Refusal> {
    match params {
        Value::Object(_) => Ok(params.clone()),
        Value::Null => Ok(Value::Object(Map::new())),
        other => {
            let what = match step {
                Some(i) => format!("steps[{i}].params"),
                None => "params".to_string(),
            };
            Err(Refusal::InvalidParams(format!(
                "{what} must be a JSON object, not {}",
                json_kind(other)
            )))
        }
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
