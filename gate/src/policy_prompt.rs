//! The policy-change prompt: a new policy (a reload, or a start after the files changed) that
//! lowers protection anywhere does not apply by itself. It becomes a system prompt (voice +
//! visual, never lowered by friction, never answered by history) that lists every change; the
//! policy in force stays until the user approves, and a denial or a timeout keeps it and says
//! so in the audit log. A policy that only raises protection applies at once. A mixed one waits
//! whole: its raises apply with the rest when it is approved, so nothing is ever weaker than the
//! policy in force while it waits. The last approved policy is kept in the state store.

use std::sync::Arc;

use serde_json::json;

use crate::audit::Resolution;
use crate::capability::{Capability, ExtraParams, Origin, Template};
use crate::config::GateConfig;
use crate::error::{ConfigError, Location, StoreError};
use crate::friction::FrictionReason;
use crate::gate::Gate;
use crate::identity::ClientIdentity;
use crate::intent::{Authorizer, Decision, Intent, IntentId, Outcome};
use crate::plan::{self, PlanInput};
use crate::policy::{self, KeyRule, PolicyChange, PolicyView, ProtectionFact};
use crate::prompt::Prompt;
use crate::record::RecordFacts;
use crate::sources::PolicySources;
use crate::store::{FrictionKey, GroupCommit, Store};
use crate::token::TokenKey;
use crate::trust::TrustRules;
use crate::types::{AuthLevel, RiskClass, SideEffects, Threshold};

// Kept by the state store; named here too, beside the prompt that approves it.
pub use crate::store::ApprovedPolicy;

/// The capability name of the policy-change prompt in the audit log (reserved: no manifest can
/// declare it).
pub const POLICY_CAPABILITY: &str = "pcp.policy.change";

/// The gate's view of policies: the host's facts and rules for the policy in force, and the
/// policy waiting for the user, if any.
#[derive(Debug, Default)]
pub(crate) struct PolicyState {
    facts: Vec<ProtectionFact>,
    host_rules: Vec<KeyRule>,
    pending: Option<PendingPolicy>,
}

#[derive(Debug)]
struct PendingPolicy {
    id: IntentId,
    config: GateConfig,
    facts: Vec<ProtectionFact>,
    digest: String,
    changes: Vec<PolicyChange>,
}

/// What a start found in the files, compared with the last approved policy.
#[derive(Debug)]
pub enum StartPolicy {
    /// The policy in the files is in force: recorded at a first start, or unchanged since it
    /// was approved.
    InForce,
    /// The files differ from the approved policy, which is in force (or, if it can no longer
    /// be built, no policy: every capability is denied). Propose this one with
    /// [`Gate::propose_policy`] once the gate knows what can answer a prompt: a raise applies at
    /// once, a lowering is asked about.
    Changed(Box<GateConfig>, Vec<ProtectionFact>),
}

impl Gate {
    /// Opens the gate at a session start with the policy loaded from the files (`config`, with
    /// the host's `facts` and `host_rules`), checked against the last approved policy in the
    /// state store at the config's state path.
    pub fn start(
        config: GateConfig,
        facts: Vec<ProtectionFact>,
        host_rules: Vec<KeyRule>,
        now_ms: i64,
    ) -> Result<(Gate, StartPolicy), StoreError> {
        Gate::start_with(config, facts, host_rules, now_ms, GateConfig::from_sources)
    }

    /// [`Gate::start`], the approved policy built again by `rebuild` when the files differ from
    /// it (the owner of the whole document reads its other sections in the same pass).
    pub fn start_with(
        config: GateConfig,
        facts: Vec<ProtectionFact>,
        host_rules: Vec<KeyRule>,
        now_ms: i64,
        rebuild: impl FnOnce(PolicySources) -> Result<GateConfig, ConfigError>,
    ) -> Result<(Gate, StartPolicy), StoreError> {
        let path = config.state_path();
        let group = GroupCommit {
            max_records: config.file.audit.group_commit_records,
            max_age_ms: i64::from(config.file.audit.group_commit_ms),
        };
        // As `Gate::open`: the writer's queue is the config's.
        let store = Store::open_with_queue(
            &path,
            group,
            &TrustRules::default(),
            config.file.audit.writer_queue_batches,
        )?;
        let key = TokenKey::load_or_create(&TokenKey::path_beside(&path))?;
        let digest = policy::policy_digest(&config.sources, &facts);
        let Some(approved) = store.approved_policy()? else {
            let mut gate = Gate::new(config, store, key)?;
            gate.policy.host_rules = host_rules;
            gate.apply_policy(None, facts, digest, "first start: recorded", now_ms);
            return Ok((gate, StartPolicy::InForce));
        };
        if approved.digest == digest {
            let mut gate = Gate::new(config, store, key)?;
            gate.policy.host_rules = host_rules;
            gate.policy.facts = facts;
            return Ok((gate, StartPolicy::InForce));
        }
        let in_force = match rebuild(approved.sources.clone()) {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!(
                    "the last approved policy cannot be built again ({e}): every capability is \
                     denied until the policy in the files is approved"
                );
                GateConfig::deny_all(approved.sources.clone())
            }
        };
        let mut gate = Gate::new(in_force, store, key)?;
        gate.policy.host_rules = host_rules;
        gate.policy.facts = approved.facts;
        Ok((gate, StartPolicy::Changed(Box::new(config), facts)))
    }

    /// Rules for the host's own config sections (`[overlay]`, `[speech]`, …): how their keys
    /// order protection. Keys no rule names count as lowering when they change.
    pub fn set_policy_rules(&mut self, rules: Vec<KeyRule>) {
        self.policy.host_rules = rules;
    }

    /// The host's facts of the policy in force.
    pub fn policy_facts(&self) -> &[ProtectionFact] {
        &self.policy.facts
    }

    /// The policy-change prompt waiting for the user and the changes it lists, if any.
    pub fn pending_policy(&self) -> Option<(IntentId, &[PolicyChange])> {
        self.policy
            .pending
            .as_ref()
            .map(|p| (p.id, p.changes.as_slice()))
    }

    /// Every change from the policy in force to `new` with `facts`.
    pub fn policy_changes(&self, new: &GateConfig, facts: &[ProtectionFact]) -> Vec<PolicyChange> {
        policy::compare(
            PolicyView {
                config: &self.config,
                facts: &self.policy.facts,
            },
            PolicyView { config: new, facts },
            &self.policy.host_rules,
        )
    }

    /// Proposes `new` (with the host's `facts`) to replace the policy in force:
    ///
    /// - nothing lowers protection (only raises, or changes the host calls unrelated): it
    ///   applies now and is recorded as approved (`Execute`,
    ///   `policy_allow`, audited with its changes);
    /// - something does: a system prompt lists every change (`Confirm`); the policy in force
    ///   stays until it is approved, when `new` applies; a denial or a timeout keeps it;
    /// - nobody can answer (no output or input): refused, the policy in force stays (`Deny`).
    ///
    /// A proposal identical to the one already waiting changes nothing; another one replaces it
    /// (the waiting prompt is cancelled).
    pub fn propose_policy(
        &mut self,
        new: GateConfig,
        facts: Vec<ProtectionFact>,
        now_ms: i64,
    ) -> Decision {
        let digest = policy::policy_digest(&new.sources, &facts);
        if let Some(pending) = &self.policy.pending {
            if pending.digest == digest
                && let Some(prompt) = self.prompt(pending.id)
            {
                return Decision::Confirm {
                    id: prompt.id,
                    threshold: prompt.threshold,
                    plan: prompt.plan.clone(),
                };
            }
            let id = pending.id;
            self.policy.pending = None;
            self.cancel_with(id, "a newer policy replaces this one".into(), now_ms);
        }
        let changes = self.policy_changes(&new, &facts);
        if !policy::lowers(&changes) {
            let reason = if changes.is_empty() {
                "applied: nothing the gate enforces changed"
            } else {
                "applied: no change lowers protection"
            };
            return self.apply_policy(Some(new), facts, digest, reason, now_ms);
        }
        let id = IntentId(self.next_id);
        self.next_id += 1;
        let prompt = self.policy_prompt(id, &new, &changes, &digest, now_ms);
        if prompt.plan.authorizer == Authorizer::Denying {
            let reason = "no output or no input device can show and answer the policy change: \
                          the policy in force stays"
                .to_string();
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
        self.policy.pending = Some(PendingPolicy {
            id,
            config: new,
            facts,
            digest,
            changes,
        });
        // A system prompt is never refused for room: it waits behind the prompts before it.
        self.enqueue(prompt, now_ms);
        decision
    }

    /// The reason a policy prompt's record gives, and whether its policy applies: called for
    /// every prompt that ends (see `record::finish`), before its record is written.
    pub(crate) fn policy_reason(&self, id: IntentId, approves: bool, reason: String) -> String {
        match &self.policy.pending {
            Some(p) if p.id == id && approves => format!("{reason}; the new policy applies"),
            Some(p) if p.id == id => {
                format!("{reason}; the new policy is not applied: the policy in force stays")
            }
            _ => reason,
        }
    }

    /// After a prompt's outcome is recorded: an approved policy prompt applies its policy; a
    /// refused one is dropped (the policy in force stays).
    pub(crate) fn settle_policy(&mut self, outcome: &Outcome, now_ms: i64) {
        if self.policy.pending.as_ref().map(|p| p.id) != Some(outcome.id) {
            return;
        }
        let Some(pending) = self.policy.pending.take() else {
            return;
        };
        if !outcome.approved {
            tracing::info!("policy change not approved: the policy in force stays");
            return;
        }
        tracing::info!(
            "policy change approved: {} changes apply",
            pending.changes.len()
        );
        self.install_policy(pending.config, pending.facts, &pending.digest, now_ms);
    }

    fn cancel_with(&mut self, id: IntentId, reason: String, now_ms: i64) {
        let Some(index) = self.prompts.iter().position(|p| p.id == id) else {
            return;
        };
        if let Some(prompt) = self.prompts.remove(index) {
            self.finish(prompt, Resolution::Cancelled, reason, now_ms);
            if index == 0 {
                self.show_front(now_ms);
            }
        }
    }

    /// Puts `config` (or keeps the one in force when `None`) in force with `facts` and records
    /// it as the approved policy; audited `policy_allow` with `reason`.
    fn apply_policy(
        &mut self,
        config: Option<GateConfig>,
        facts: Vec<ProtectionFact>,
        digest: String,
        reason: &str,
        now_ms: i64,
    ) -> Decision {
        let changes = match &config {
            Some(new) => self.policy_changes(new, &facts),
            None => Vec::new(),
        };
        let lines: Vec<String> = changes
            .iter()
            .map(|c| c.line(&self.config.file.policy_change))
            .collect();
        match config {
            Some(config) => self.install_policy(config, facts, &digest, now_ms),
            None => {
                self.policy.facts = facts;
                self.record_approved(&digest, now_ms);
            }
        }
        let intent = policy_intent(self.config_path_text(), &digest, &lines);
        let record = self.record(RecordFacts {
            intent: &intent,
            capability: None,
            params: &intent.params,
            steps: Vec::new(),
            thresholds: None,
            plan: None,
            results: &[],
            resolution: Resolution::PolicyAllow,
            profile: &self.profile,
            rule: None,
            note: Some(reason.to_string()),
            now_ms,
        });
        let audit_seq = self
            .store
            .append(record, None, true)
            .map_err(|e| tracing::error!("the policy change could not be audited: {e}"))
            .ok();
        let id = IntentId(self.next_id);
        self.next_id += 1;
        Decision::Execute(self.policy_outcome(id, true, audit_seq, reason.to_string()))
    }

    fn install_policy(
        &mut self,
        config: GateConfig,
        facts: Vec<ProtectionFact>,
        digest: &str,
        now_ms: i64,
    ) {
        if let Err(e) = self.reload(config) {
            tracing::error!("capability versions could not be synced: {e}");
        }
        self.policy.facts = facts;
        self.record_approved(digest, now_ms);
    }

    fn record_approved(&mut self, digest: &str, now_ms: i64) {
        let approved = ApprovedPolicy {
            digest: digest.to_string(),
            sources: self.config.sources.clone(),
            facts: self.policy.facts.clone(),
            approved_ms: now_ms,
        };
        if let Err(e) = self.store.set_approved_policy(&approved) {
            // The policy is in force; the next start will ask about it again.
            tracing::error!("the approved policy could not be recorded: {e}");
        }
    }

    fn policy_outcome(
        &self,
        id: IntentId,
        approved: bool,
        audit_seq: Option<u64>,
        reason: String,
    ) -> Outcome {
        Outcome {
            id,
            capability: POLICY_CAPABILITY.to_string(),
            approved,
            resolution: Resolution::PolicyAllow,
            token: None,
            threshold: None,
            plan: Vec::new(),
            audit_seq,
            reason,
        }
    }

    fn config_path_text(&self) -> String {
        self.config
            .path
            .as_ref()
            .map_or_else(String::new, |p| p.display().to_string())
    }

    fn policy_prompt(
        &self,
        id: IntentId,
        new: &GateConfig,
        changes: &[PolicyChange],
        digest: &str,
        now_ms: i64,
    ) -> Prompt {
        // The wording in force describes the change: a new policy cannot reword its own prompt.
        let wording = &self.config.file.policy_change;
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
                parent_authorizer: self.config.file.session.parent_authorizer,
            },
            &self.available,
        );
        let app = crate::gate::app_of(&intent.client);
        Prompt {
            id,
            params: intent.params.clone(),
            profile: self.profile.clone(),
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
                profile: self.profile.clone(),
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
