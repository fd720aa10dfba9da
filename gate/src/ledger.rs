//! Owns the ledger: the state store (friction history, the hash-chained audit log and its
//! writer) and the token key. Every decision is written down here. A prompt's end moves the
//! friction history; an approval is committed together with its token, and becomes a denial if
//! it cannot be; a denial without a prompt is audited with its reason.

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use crate::audit::{AuditRecord, Resolution};
use crate::capability::Capability;
use crate::config::{AuditConfig, GateConfig};
use crate::decide::{Evaluation, deny_rule_for};
use crate::error::StoreError;
use crate::friction::{self, History};
use crate::identity::ClientIdentity;
use crate::intent::{Decision, Intent, IntentId, Outcome};
use crate::prompt::Prompt;
use crate::record::{RecordFacts, record, record_with_canonical};
use crate::registry::Registry;
use crate::rules::DenyRule;
use crate::store::{FrictionKey, FrictionUpdate, GroupCommit, Store};
use crate::token::{Expected, Grant, TokenClaims, TokenKey, TokenRejection};
use crate::trust::TrustRules;
use crate::types::Threshold;

/// An approval on its way out: audited and given its token, or turned into a denial.
struct Approval<'a> {
    outcome: Outcome,
    record: AuditRecord,
    friction_update: Option<FrictionUpdate>,
    /// Commit before returning (anything but `policy_allow`, which is group-committed).
    durable: bool,
    capability: &'a Capability,
    params: &'a Value,
    /// `canonical_json(params)`, as the record was built with: the token reuses it.
    canonical_params: String,
    /// `token::steps_digest` of a multi-step intent's steps; empty without steps.
    steps: &'a str,
    /// Who asked and under which profile, as the record names them: borrowed, so the record
    /// can be handed to the store whole and only a failed commit copies them.
    client: &'a ClientIdentity,
    profile: &'a str,
    now_ms: i64,
}

/// An approval the host could not carry out, for [`crate::Gate::record_execution_failed`].
pub struct FailedExecution<'a> {
    pub capability: &'a str,
    pub params: &'a Value,
    /// Who asked, as the approval named them.
    pub client: &'a crate::identity::ClientIdentity,
    /// The approval's audit record (`Outcome::audit_seq`).
    pub approval_seq: Option<u64>,
    /// What went wrong, as the client was told.
    pub reason: &'a str,
}

/// What a denial without a prompt records.
pub(crate) struct DenyContext<'a> {
    pub id: IntentId,
    pub intent: &'a Intent,
    pub profile: String,
    pub threshold: Option<Threshold>,
    /// The deny rule that forbids it, if one does.
    pub rule: Option<Arc<DenyRule>>,
}

impl<'a> DenyContext<'a> {
    pub fn bare(id: IntentId, intent: &'a Intent, profile: String) -> Self {
        DenyContext {
            id,
            intent,
            profile,
            threshold: None,
            rule: None,
        }
    }
}

/// The state store and the token key of one session: where decisions are written down, and
/// what signs the approvals.
pub(crate) struct Ledger {
    store: Store,
    key: TokenKey,
    /// Prompts are answered by a scripted user (the test harness): their records say so.
    /// Settable only with the `scripted-user` feature (see `Gate::attach_scripted_user`).
    scripted_user: bool,
}

impl Ledger {
    pub(crate) fn new(store: Store, key: TokenKey) -> Ledger {
        Ledger {
            store,
            key,
            scripted_user: false,
        }
    }

    /// Opens the store at the config's state path, with the config's group commit and writer
    /// queue, and the token key beside it.
    pub(crate) fn open(config: &GateConfig) -> Result<Ledger, StoreError> {
        let path = config.state_path();
        let group = GroupCommit {
            max_records: config.file.audit.group_commit_records,
            max_age_ms: i64::from(config.file.audit.group_commit_ms),
        };
        let store = Store::open_with_queue(
            &path,
            group,
            &TrustRules::default(),
            config.file.audit.writer_queue_batches,
        )?;
        let key = TokenKey::load_or_create(&TokenKey::path_beside(&path))?;
        Ok(Ledger::new(store, key))
    }

    /// A ledger that only looks: the store at `state` opened read-only, a throwaway token key.
    pub(crate) fn inspect(state: &Path) -> Result<Ledger, StoreError> {
        let store = Store::open_read_only(state)?;
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).map_err(|e| StoreError::File {
            path: state.to_path_buf(),
            message: format!("no randomness: {e}"),
        })?;
        Ok(Ledger::new(store, TokenKey::from_bytes(key)?))
    }

    pub(crate) fn store(&self) -> &Store {
        &self.store
    }

    pub(crate) fn store_mut(&mut self) -> &mut Store {
        &mut self.store
    }

    pub(crate) fn key(&self) -> &TokenKey {
        &self.key
    }

    pub(crate) fn scripted_user(&self) -> bool {
        self.scripted_user
    }

    #[cfg(feature = "scripted-user")]
    pub(crate) fn mark_scripted_user(&mut self) {
        self.scripted_user = true;
    }

    /// Notes every declared capability's version: a capability at a new version starts its
    /// history again.
    pub(crate) fn sync_capability_versions(
        &mut self,
        registry: &Registry,
    ) -> Result<(), StoreError> {
        let caps: Vec<(String, u32)> = registry
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

    /// Verifies `token` for what is `expected` and spends it.
    pub(crate) fn spend_token(
        &mut self,
        token: &str,
        expected: &Expected<'_>,
        now_ms: i64,
    ) -> Result<Result<TokenClaims, TokenRejection>, StoreError> {
        self.key.verify(&mut self.store, token, expected, now_ms)
    }

    /// Commits the group of buffered audit records when it is due; a failure is retried later.
    pub(crate) fn flush_if_due(&mut self, now_ms: i64) {
        if let Err(e) = self.store.flush_if_due(now_ms) {
            tracing::warn!("audit group commit failed, will retry: {e}");
        }
    }

    /// Appends a record with no friction change (`durable`: committed before this returns).
    pub(crate) fn append(&mut self, record: AuditRecord, durable: bool) -> Result<u64, StoreError> {
        self.store.append(record, None, durable)
    }

    /// Records the end of a prompt: friction history, audit (durable), and a token when
    /// approved. `config` is the policy in force now: a deny rule that arrived while the prompt
    /// was open (a reload) still wins, so nothing it forbids is approved.
    pub(crate) fn finish(
        &mut self,
        prompt: &Prompt,
        resolution: Resolution,
        reason: String,
        config: &GateConfig,
        now_ms: i64,
    ) -> Outcome {
        let rule = resolution
            .approves()
            .then(|| deny_rule_for(&config.registry, &prompt.intent))
            .flatten();
        let (resolution, reason) = match &rule {
            Some(rule) => (Resolution::PolicyDeny, rule.reason.clone()),
            None => (resolution, reason),
        };
        let history = match self.store.history(&prompt.friction_key) {
            Ok(h) => h,
            Err(e) => {
                tracing::warn!("friction history unreadable, treating as none: {e}");
                None
            }
        };
        let update = history_after(resolution, &prompt.friction_key, history, now_ms);
        let (mut record, canonical_params) = record_with_canonical(
            RecordFacts {
                intent: &prompt.intent,
                capability: Some(&prompt.capability),
                params: &prompt.params,
                steps: prompt
                    .intent
                    .steps
                    .iter()
                    .map(|s| s.capability.clone())
                    .collect(),
                thresholds: Some((prompt.threshold, prompt.effective)),
                plan: Some(&prompt.plan),
                results: &prompt.results,
                resolution,
                profile: &prompt.profile,
                rule: rule.as_deref(),
                note: Some(reason.clone()),
                now_ms,
            },
            &config.file.audit,
        );
        record.scripted = self.scripted_user;
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
            run: None,
        };
        if resolution.approves() {
            let plan = outcome.plan.clone();
            let approval = Approval {
                outcome,
                record,
                friction_update: update,
                durable: true,
                capability: &prompt.capability,
                params: &prompt.params,
                canonical_params,
                steps: &prompt.steps_digest,
                client: &prompt.intent.client,
                profile: &prompt.profile,
                now_ms,
            };
            let committed = self.commit_approval(approval, config);
            return Outcome { plan, ..committed };
        }
        tracing::info!(capability = %outcome.capability, %resolution, "denied: {}", outcome.reason);
        // Nothing runs on a denial: it waits for a disk sync only when it changes history.
        let audit_seq = self
            .store
            .append(record, update, false)
            .map_err(|e| tracing::error!("denial could not be audited: {e}"))
            .ok();
        Outcome {
            audit_seq,
            ..outcome
        }
    }

    /// Audits an approval and issues its token; on any failure the approval becomes a denial
    /// (the returned outcome is then not approved).
    fn commit_approval(&mut self, approval: Approval<'_>, config: &GateConfig) -> Outcome {
        let Approval {
            mut outcome,
            record,
            friction_update,
            durable,
            capability,
            params,
            canonical_params,
            steps,
            client,
            profile,
            now_ms,
        } = approval;
        let expires = now_ms + 1000 * i64::from(config.file.tokens.expiry_seconds);
        let app = client.app_key();
        let grant = Grant {
            capability: &capability.name,
            version: capability.version,
            params,
            steps,
            profile,
            app: &app,
        };
        let token = self.key.issue_canonical(&grant, &canonical_params, expires);
        let result = token.and_then(|token| {
            let seq = self.store.append(record, friction_update, durable)?;
            Ok((token, seq))
        });
        match result {
            Ok((token, seq)) => {
                outcome.token = Some(token);
                outcome.audit_seq = Some(seq);
                self.pin_mcp_definition(profile, &capability.name, params, now_ms);
                outcome
            }
            Err(e) => {
                tracing::error!(
                    "approval of {} could not be audited, denying: {e}",
                    outcome.capability
                );
                let intent = Intent::new(&outcome.capability, params.clone(), client.clone());
                let ctx = DenyContext {
                    id: outcome.id,
                    intent: &intent,
                    profile: profile.to_string(),
                    threshold: outcome.threshold,
                    rule: None,
                };
                let resolution = Resolution::StateUnavailable;
                self.deny_unprompted(ctx, resolution, e.to_string(), &config.file.audit, now_ms)
            }
        }
    }

    /// An approved MCP tool call pins the definition it was allowed with: a later call with
    /// another one is shown as changed. A pin that cannot be written leaves the old one, so the
    /// next call asks again (fail closed); it is logged.
    fn pin_mcp_definition(&mut self, profile: &str, capability: &str, params: &Value, now_ms: i64) {
        if !crate::mcp::is_mcp(capability) {
            return;
        }
        let Some(definition) = crate::mcp::definition(params) else {
            return;
        };
        if let Err(e) = self
            .store
            .set_mcp_pin(profile, capability, definition, now_ms)
        {
            tracing::warn!("the definition of {capability} could not be pinned: {e}");
        }
    }

    /// Audits a denial that asked nobody. It is group-committed like a routine approval: a
    /// flood of refused intents costs the dispatch thread no disk sync.
    pub(crate) fn deny_unprompted(
        &mut self,
        ctx: DenyContext<'_>,
        resolution: Resolution,
        reason: String,
        audit: &AuditConfig,
        now_ms: i64,
    ) -> Outcome {
        let facts = RecordFacts {
            intent: ctx.intent,
            capability: None,
            params: &ctx.intent.params,
            steps: Vec::new(),
            thresholds: ctx.threshold.map(|t| (t, t)),
            plan: None,
            results: &[],
            resolution,
            profile: &ctx.profile,
            rule: ctx.rule.as_deref(),
            note: Some(reason.clone()),
            now_ms,
        };
        let record = record(facts, audit);
        tracing::info!(capability = %ctx.intent.capability, %resolution, "denied: {reason}");
        let audit_seq = self
            .store
            .append(record, None, false)
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
            run: None,
        }
    }

    /// Runs an intent that needs no prompt: `policy_allow`, `user_approved_for_session`, or
    /// `confirmed_by_history` (which moves the friction history on and is committed before it
    /// returns). Executed, or denied when it cannot be audited.
    pub(crate) fn execute_unprompted(
        &mut self,
        id: IntentId,
        intent: Intent,
        ev: Evaluation,
        profile: &str,
        config: &GateConfig,
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
                    let ctx = DenyContext::bare(id, &intent, profile.to_string());
                    return Decision::Deny(self.deny_unprompted(
                        ctx,
                        Resolution::StateUnavailable,
                        e.to_string(),
                        &config.file.audit,
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
        let facts = RecordFacts {
            intent: &intent,
            capability: Some(&ev.capability),
            params: &ev.params,
            steps: ev.step_names(),
            thresholds: Some((ev.threshold, ev.effective)),
            plan: None,
            results: &[],
            resolution,
            profile,
            rule: None,
            note: None,
            now_ms,
        };
        let (record, canonical_params) = record_with_canonical(facts, &config.file.audit);
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
            run: None,
        };
        let approval = Approval {
            outcome,
            record,
            friction_update,
            durable: resolution != Resolution::PolicyAllow,
            capability: &ev.capability,
            params: &ev.params,
            canonical_params,
            // Only single intents run unprompted: multi-step ones are always shown.
            steps: "",
            client: &intent.client,
            profile,
            now_ms,
        };
        let mut outcome = self.commit_approval(approval, config);
        if outcome.approved {
            outcome.run = Some(intent.into_run(ev.params));
            Decision::Execute(outcome)
        } else {
            Decision::Deny(outcome)
        }
    }

    /// Audits an approval the host could not carry out (`failed`): an `execution_failed`
    /// record linked to the approval's own record, committed before this returns, so the log
    /// says what the client was told. Returns its sequence number; an error is logged and
    /// returned (the approval's record stands either way).
    pub(crate) fn execution_failed(
        &mut self,
        failed: FailedExecution<'_>,
        profile: &str,
        config: &GateConfig,
        now_ms: i64,
    ) -> Result<u64, StoreError> {
        let intent = Intent::new(
            failed.capability,
            failed.params.clone(),
            failed.client.clone(),
        );
        let capability = config.registry.get(failed.capability).map(|c| c.as_ref());
        let facts = RecordFacts {
            intent: &intent,
            capability,
            params: failed.params,
            steps: Vec::new(),
            thresholds: None,
            plan: None,
            results: &[],
            resolution: Resolution::ExecutionFailed,
            profile,
            rule: None,
            note: Some(failed.reason.to_string()),
            now_ms,
        };
        let mut record = record(facts, &config.file.audit);
        record.approval_seq = failed.approval_seq;
        tracing::warn!(
            capability = failed.capability,
            approval = ?failed.approval_seq,
            "approved but not carried out: {}",
            failed.reason
        );
        self.store
            .append(record, None, true)
            .inspect_err(|e| tracing::error!("execution failure could not be audited: {e}"))
    }
}

/// The friction change a prompt's end makes: an approval builds history, a denial or a timeout
/// clears it, anything else leaves it.
fn history_after(
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
        // A failed authentication may be somebody else at the keyboard: no earned friction
        // relief survives it.
        Resolution::UserDenied
        | Resolution::ConfirmationTimeout
        | Resolution::AuthenticationFailed => Some(FrictionUpdate::Clear(key.clone())),
        _ => None,
    }
}
