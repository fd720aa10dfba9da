//! `explain`, which owns no state: what the gate would do with an intent now, and why, worked
//! out from the pieces evaluation reads, without recording anything.

use serde::Serialize;

use crate::decide::Evaluator;
use crate::intent::{Authorizer, Intent};
use crate::types::{AuthLevel, Modality, SideEffects, Threshold};

/// The gate's reasoning about one intent.
#[derive(Debug, Clone, Serialize)]
pub struct Explanation {
    pub capability: String,
    pub known: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub side_effects: Option<SideEffects>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auth_level: Option<AuthLevel>,
    pub safety_level: String,
    /// The gate's rating of the parameters, for a capability with `classify`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub risk: Option<pcp_shell_risk::Risk>,
    /// Why it got that rating, one entry per simple command at Moderate or above.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<pcp_shell_risk::Reason>,
    pub threshold: Threshold,
    pub effective_threshold: Threshold,
    /// `execute`, `confirm` or `deny`.
    pub would: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolution: Option<&'static str>,
    pub authorizer: Option<Authorizer>,
    pub plan: Vec<Modality>,
    pub press_and_hold: bool,
    /// The deny rule that decides it, when one does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<ExplainedRule>,
    /// The prompt would offer "allow until logout".
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub offers_session: bool,
    pub why: Vec<String>,
}

impl Explanation {
    /// Shows the gate's rating of a classified intent; returns the class it picked.
    /// Reasons are shown in the config's wording, like the prompt shows them; each keeps its
    /// phrase key and arguments (`message`) beside.
    fn classified(
        &mut self,
        c: &crate::classify::Classified,
        wording: &pcp_shell_risk::Wording,
    ) -> (SideEffects, AuthLevel) {
        self.side_effects = Some(c.side_effects);
        self.auth_level = Some(c.auth_level);
        self.risk = Some(c.risk);
        self.reasons = c.assessment.reasons.clone();
        for r in &mut self.reasons {
            r.why = r.message.render(wording);
        }
        self.why
            .push(format!("the gate rates it {}", c.summary_in(wording)));
        (c.side_effects, c.auth_level)
    }
}

/// A deny rule as `explain` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct ExplainedRule {
    pub name: String,
    /// The glob on capability names.
    pub capability: String,
    /// Globs on parameter values.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub params: Vec<(String, String)>,
    pub reason: String,
    /// Where it is written: `file:line:column`.
    pub declared_at: String,
}

/// Explains how `intent` would be decided at `now_ms` under what `evaluator` sees (the policy in
/// force, the current availability, the history).
pub(crate) fn explain(evaluator: &Evaluator<'_>, intent: &Intent, now_ms: i64) -> Explanation {
    let config = evaluator.config;
    let safety_level = format!("{:?}", config.file.safety.level).to_lowercase();
    let cap = config.registry.get(&intent.capability);
    let mut ex = Explanation {
        capability: intent.capability.clone(),
        known: cap.is_some(),
        version: cap.map(|c| c.version),
        side_effects: cap.map(|c| c.side_effects),
        auth_level: cap.map(|c| c.auth_level),
        safety_level,
        risk: None,
        reasons: Vec::new(),
        threshold: Threshold::None,
        effective_threshold: Threshold::None,
        would: "deny",
        resolution: None,
        authorizer: None,
        plan: Vec::new(),
        press_and_hold: false,
        rule: None,
        offers_session: false,
        why: Vec::new(),
    };
    let ev = match evaluator.evaluate(intent, now_ms) {
        Ok(ev) => ev,
        Err(refusal) => {
            ex.rule = refusal.rule().map(|rule| ExplainedRule {
                name: rule.name.clone(),
                capability: rule.capability.as_str().to_string(),
                params: rule
                    .params
                    .iter()
                    .map(|(k, g)| (k.clone(), g.as_str().to_string()))
                    .collect(),
                reason: rule.reason.clone(),
                declared_at: rule.declared_at.to_string(),
            });
            if let Some(rule) = &ex.rule {
                ex.why.push(format!(
                    "deny rule `{}` ({}) forbids it",
                    rule.name, rule.declared_at
                ));
            }
            let (resolution, reason) = refusal.resolution();
            ex.resolution = Some(resolution.as_str());
            ex.why.push(reason);
            return ex;
        }
    };
    ex.threshold = ev.threshold;
    ex.effective_threshold = ev.effective;
    let class = match &ev.classified {
        Some(c) => ex.classified(c, &config.file.shell_risk.wording()),
        None => (ev.capability.side_effects, ev.capability.auth_level),
    };
    let (se, auth, level) = (class.0, class.1, &ex.safety_level);
    let line = format!("{se:?} side effects at {auth:?} auth level under {level} safety: ");
    ex.why
        .push(format!("{line}{}", ev.threshold).to_lowercase());
    if ev.session_approved {
        ex.why
            .push("the user allowed this app this action until logout".into());
    } else if ev.threshold != Threshold::None {
        ex.why.push(ev.friction.describe());
    }
    if ev.effective == Threshold::None && ev.steps.is_empty() {
        ex.would = "execute";
        ex.resolution = Some(if ev.threshold == Threshold::None {
            "policy_allow"
        } else if ev.session_approved {
            "user_approved_for_session"
        } else {
            "confirmed_by_history"
        });
        return ex;
    }
    let plan = evaluator.plan_for(&ev);
    ex.authorizer = Some(plan.authorizer);
    ex.press_and_hold = plan.press_and_hold;
    for note in &plan.notes {
        ex.why.push(crate::record::note_str(*note).to_string());
    }
    if plan.authorizer == Authorizer::Denying {
        ex.resolution = Some("confirmation_unavailable");
        ex.why
            .push("no output or no input device: nobody can answer".into());
        return ex;
    }
    ex.would = "confirm";
    ex.offers_session =
        plan.modalities.contains(&Modality::Visual) && evaluator.offers_session(intent, &ev, &plan);
    if ex.offers_session {
        ex.why
            .push("the prompt offers \"allow until logout\"".into());
    }
    ex.plan = plan.modalities;
    ex
}
