//! Owns the policy-change prompt (`PolicyGate`): the proposal waiting for the user, and the host's
//! facts and key rules of the policy in force. A new policy (a reload, or a start after the
//! files changed) that lowers protection anywhere does not apply by itself. It becomes a system
//! prompt (voice + visual, never lowered by friction, never answered by history) that lists
//! every change; the policy in force stays until the user approves, and a denial or a timeout
//! keeps it and says so in the audit log. A policy that only raises protection applies at once.
//! A mixed one waits whole: its raises apply with the rest when it is approved, so nothing is
//! ever weaker than the policy in force while it waits. The last approved policy is kept in the
//! state store.

use std::sync::Arc;

use serde_json::json;

use crate::audit::{AuditRecord, Resolution};
use crate::capability::{Capability, ExtraParams, Origin, Template};
use crate::config::GateConfig;
use crate::error::{ConfigError, Location};
use crate::friction::FrictionReason;
use crate::identity::ClientIdentity;
use crate::intent::{Availability, Intent, IntentId, Outcome};
use crate::ledger::Ledger;
use crate::plan::{self, PlanInput};
use crate::policy::{self, KeyRule, PolicyChange, PolicyView, ProtectionFact};
use crate::prompt::Prompt;
use crate::record::{RecordFacts, record};
use crate::sources::PolicySources;
use crate::store::FrictionKey;
use crate::types::{AuthLevel, RiskClass, SideEffects, Threshold};

// Kept by the state store; named here too, beside the prompt that approves it.
pub use crate::store::ApprovedPolicy;

/// The capability name of the policy-change prompt in the audit log (reserved: no manifest can
/// declare it).
pub const POLICY_CAPABILITY: &str = "pcp.policy.change";

/// The host's facts and rules for the policy in force, and the policy change waiting for the
/// user, if any.
#[derive(Debug, Default)]
pub(crate) struct PolicyGate {
    facts: Vec<ProtectionFact>,
    host_rules: Vec<KeyRule>,
    pending: Option<Proposal>,
}

/// A policy proposed to replace the one in force, with the prompt that asks about it.
#[derive(Debug)]
pub(crate) struct Proposal {
    pub id: IntentId,
    pub config: GateConfig,
    pub facts: Vec<ProtectionFact>,
    pub digest: String,
    pub changes: Vec<PolicyChange>,
}

/// What a start found in the files, compared with the last approved policy.
#[derive(Debug)]
pub enum StartPolicy {
    /// The policy in the files is in force: recorded at a first start, or unchanged since it
    /// was approved.
    InForce,
    /// The files differ from the approved policy, which is in force (or, if it can no longer
    /// be built, no policy: every capability is denied). Propose this one with
    /// [`crate::Gate::propose_policy`] once the gate knows what can answer a prompt: a raise applies at
    /// once, a lowering is asked about.
    Changed(Box<GateConfig>, Vec<ProtectionFact>),
}

impl PolicyGate {
    /// The policy in force has the host's `facts`; `host_rules` order the host's own sections.
    pub(crate) fn in_force(facts: Vec<ProtectionFact>, host_rules: Vec<KeyRule>) -> PolicyGate {
        PolicyGate {
            facts,
            host_rules,
            pending: None,
        }
    }

    pub(crate) fn set_host_rules(&mut self, rules: Vec<KeyRule>) {
        self.host_rules = rules;
    }

    pub(crate) fn facts(&self) -> &[ProtectionFact] {
        &self.facts
    }

    /// The policy-change prompt waiting for the user and the changes it lists, if any.
    pub(crate) fn pending(&self) -> Option<(IntentId, &[PolicyChange])> {
        self.pending.as_ref().map(|p| (p.id, p.changes.as_slice()))
    }

    /// The waiting prompt's id, and whether it asks about the policy with `digest`.
    pub(crate) fn waiting(&self, digest: &str) -> Option<(IntentId, bool)> {
        self.pending.as_ref().map(|p| (p.id, p.digest == digest))
    }

    /// The waiting proposal is dropped (a newer one replaces it; its prompt is cancelled).
    pub(crate) fn withdraw(&mut self) {
        self.pending = None;
    }

    /// `proposal` waits for the user's answer to its prompt.
    pub(crate) fn wait_for(&mut self, proposal: Proposal) {
        self.pending = Some(proposal);
    }

    /// Every change from the policy in force (`in_force`, with these facts) to `new` with
    /// `facts`.
    pub(crate) fn changes(
        &self,
        in_force: &GateConfig,
        new: &GateConfig,
        facts: &[ProtectionFact],
    ) -> Vec<PolicyChange> {
        policy::compare(
            PolicyView {
                config: in_force,
                facts: &self.facts,
            },
            PolicyView { config: new, facts },
            &self.host_rules,
        )
    }

    /// The reason a prompt's record gives: a policy prompt's says whether its policy applies.
    /// Asked for every prompt that ends, before its record is written.
    pub(crate) fn reason(&self, id: IntentId, approves: bool, reason: String) -> String {
        match &self.pending {
            Some(p) if p.id == id && approves => format!("{reason}; the new policy applies"),
            Some(p) if p.id == id => {
                format!("{reason}; the new policy is not applied: the policy in force stays")
            }
            _ => reason,
        }
    }

    /// After a prompt's outcome is recorded: the proposal it approved, to be installed; a
    /// refused one is dropped (the policy in force stays).
    pub(crate) fn settle(&mut self, outcome: &Outcome) -> Option<Proposal> {
        if self.pending.as_ref().map(|p| p.id) != Some(outcome.id) {
            return None;
        }
        let pending = self.pending.take()?;
        if !outcome.approved {
            tracing::info!("policy change not approved: the policy in force stays");
            return None;
        }
        tracing::info!(
            "policy change approved: {} changes apply",
            pending.changes.len()
        );
        Some(pending)
    }

    /// The policy now in force has the host's `facts`, and is recorded in the ledger's store as
    /// the approved one (built again from `sources` at the next start).
    pub(crate) fn approve(
        &mut self,
        facts: Vec<ProtectionFact>,
        sources: &PolicySources,
        digest: &str,
        ledger: &mut Ledger,
        now_ms: i64,
    ) {
        self.facts = facts;
        let approved = ApprovedPolicy {
            digest: digest.to_string(),
            sources: sources.clone(),
            facts: self.facts.clone(),
            approved_ms: now_ms,
        };
        if let Err(e) = ledger.store_mut().set_approved_policy(&approved) {
            // The policy is in force; the next start will ask about it again.
            tracing::error!("the approved policy could not be recorded: {e}");
        }
    }
}

/// The policy that is in force at a start when the files differ from the last `approved` one:
/// that one, built again by `rebuild`; if it no longer can be, no policy (every capability is
/// denied until the files' policy is approved).
pub(crate) fn rebuild_approved(
    approved: &ApprovedPolicy,
    rebuild: impl FnOnce(PolicySources) -> Result<GateConfig, ConfigError>,
) -> GateConfig {
    match rebuild(approved.sources.clone()) {
        Ok(c) => c,
        Err(e) => {
            tracing::warn!(
                "the last approved policy cannot be built again ({e}): every capability is \
                 denied until the policy in the files is approved"
            );
            GateConfig::deny_all(approved.sources.clone())
        }
    }
}

/// The lines the audit record of an applied policy lists: each change, in the wording in force
/// before it applies.
pub(crate) fn change_lines(changes: &[PolicyChange], in_force: &GateConfig) -> Vec<String> {
    changes
        .iter()
        .map(|c| c.line(&in_force.file.policy_change))
        .collect()
}

/// The `policy_allow` record of a policy applied without a prompt (`config` is the one now in
/// force), with its change `lines` and `reason`.
pub(crate) fn applied_record(
    config: &GateConfig,
    profile: &str,
    digest: &str,
    lines: &[String],
    reason: &str,
    now_ms: i64,
) -> AuditRecord {
    let path = config
        .path
        .as_ref()
        .map_or_else(String::new, |p| p.display().to_string());
    let intent = policy_intent(path, digest, lines);
    let facts = RecordFacts {
        intent: &intent,
        capability: None,
        params: &intent.params,
        steps: Vec::new(),
        thresholds: None,
        plan: None,
        results: &[],
        resolution: Resolution::PolicyAllow,
        profile,
        rule: None,
        note: Some(reason.to_string()),
        now_ms,
    };
    record(facts, &config.file.audit)
}

/// The outcome of a policy applied without a prompt.
pub(crate) fn applied_outcome(id: IntentId, audit_seq: Option<u64>, reason: String) -> Outcome {
    Outcome {
        id,
        capability: POLICY_CAPABILITY.to_string(),
        approved: true,
        resolution: Resolution::PolicyAllow,
        token: None,
        threshold: None,
        plan: Vec::new(),
        audit_seq,
        reason,
        run: None,
    }
}

impl Proposal {
    /// The system prompt that asks about this policy: its changes as the steps, worded as the
    /// policy `in_force` says, planned against what hardware can answer (`available`).
    pub(crate) fn prompt(
        &self,
        in_force: &GateConfig,
        profile: &str,
        available: &Availability,
        now_ms: i64,
    ) -> Prompt {
        let (id, new, changes, digest) = (self.id, &self.config, &self.changes, &self.digest);
        // The wording in force describes the change: a new policy cannot reword its own prompt.
        let wording = &in_force.file.policy_change;
        // Every change in the audit record; on the dialog, those that lower protection first.
        let lines: Vec<String> = changes.iter().map(|c| c.line(wording)).collect();
        let shown = policy::prompt_lines(changes, wording);
        let config = new
            .path
            .as_ref()
            .map_or_else(String::new, |p| p.display().to_string());
        let intent = policy_intent(config.clone(), digest, &lines);
        let description = policy::description(wording, &config);
        let capability = Arc::new(Capability {
            name: POLICY_CAPABILITY.to_string(),
            version: 1,
            side_effects: SideEffects::System,
            auth_level: AuthLevel::Privileged,
            description: Template::parse(&wording.description)
                .or_else(|_| Template::parse("{config}"))
                .unwrap_or_else(|_| unreachable!("a constant template parses")),
            target: None,
            salient: None,
            haptic: false,
            params: ["changes", "config", "digest"].map(String::from).to_vec(),
            classifier: None,
            extra_params: ExtraParams::Refuse,
            declared_at: Location {
                file: "<gate>".into(),
                line: 0,
                column: 0,
            },
            origin: Origin::System,
        });
        let plan = plan::plan(
            PlanInput {
                effective: Threshold::VoiceVisual,
                full: Threshold::VoiceVisual,
                risk: RiskClass::System,
                haptic_eligible: false,
                multi_step: true,
                parent_authorizer: in_force.file.session.parent_authorizer,
            },
            available,
        );
        let app = intent.client.app_key();
        Prompt {
            id,
            params: intent.params.clone(),
            profile: profile.to_string(),
            capability,
            description,
            target: Some(config),
            steps: shown,
            steps_digest: String::new(),
            // The changes are the steps and the file the target; the digest only names the
            // policy for the audit log.
            extra: Vec::new(),
            risk: RiskClass::System,
            threshold: Threshold::VoiceVisual,
            effective: Threshold::VoiceVisual,
            friction: FrictionReason::NeverDegrades,
            plan,
            friction_key: FrictionKey {
                profile: profile.to_string(),
                app: intent.client.app_key(),
                capability: POLICY_CAPABILITY.to_string(),
                version: 1,
                fingerprint: String::new(),
            },
            intent,
            submitted_ms: now_ms,
            shown_ms: None,
            deadlines: Vec::new(),
            parent_deadline: None,
            results: Vec::new(),
            app,
            turn: 0,
            session_eligible: false,
            session_chosen: false,
        }
    }
}

/// The intent a policy change is recorded as: asked by the config file itself.
fn policy_intent(config: String, digest: &str, lines: &[String]) -> Intent {
    let params = json!({ "config": config, "digest": digest, "changes": lines });
    let mut intent = Intent::new(
        POLICY_CAPABILITY,
        params,
        ClientIdentity::named(&format!("policy:{config}")),
    );
    intent.target = Some(config);
    intent
}
