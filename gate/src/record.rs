//! Recording: how every decision becomes an audit record. A prompt's end moves the friction
//! history; an approval is committed together with its token, and becomes a denial if it cannot
//! be; a denial without a prompt is audited with its reason.

use std::sync::Arc;

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::audit::{AuditRecord, ModalityResult, Resolution};
use crate::capability::{Capability, canonical_json, lower_hex};
use crate::friction::{self, History};
use crate::gate::{Gate, app_of};
use crate::intent::{Intent, IntentId, Outcome, Plan, PlanNote};
use crate::prompt::Prompt;
use crate::rules::DenyRule;
use crate::store::{FrictionKey, FrictionUpdate};
use crate::token::Grant;
use crate::types::Threshold;

/// Everything an audit record says about one decision (its sequence and chain hash are filled
/// by the store).
pub(crate) struct RecordFacts<'a> {
    pub intent: &'a Intent,
    /// The capability as declared, when it is known.
    pub capability: Option<&'a Capability>,
    /// The params as checked (the client's own when they could not be checked).
    pub params: &'a Value,
    /// A multi-step intent's step capabilities.
    pub steps: Vec<String>,
    /// The full and the effective threshold, when the capability was evaluated.
    pub thresholds: Option<(Threshold, Threshold)>,
    /// The plan that was asked, when one was made.
    pub plan: Option<&'a Plan>,
    pub results: &'a [ModalityResult],
    pub resolution: Resolution,
    /// The profile whose history the decision used.
    pub profile: &'a str,
    /// The deny rule that decided it, if one did.
    pub rule: Option<&'a DenyRule>,
    /// The decision's sentence, after the plan's notes.
    pub note: Option<String>,
    pub now_ms: i64,
}

/// An approval on its way out: audited and given its token, or turned into a denial.
pub(crate) struct Approval<'a> {
    pub outcome: Outcome,
    pub record: AuditRecord,
    pub friction_update: Option<FrictionUpdate>,
    /// Commit before returning (anything but `policy_allow`, which is group-committed).
    pub durable: bool,
    pub capability: &'a Capability,
    pub params: &'a Value,
    /// `canonical_json(params)`, as the record was built with: the token reuses it.
    pub canonical_params: String,
    /// `token::steps_digest` of a multi-step intent's steps; empty without steps.
    pub steps: &'a str,
    pub now_ms: i64,
}

/// An approval the host could not carry out, for [`Gate::record_execution_failed`].
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

impl Gate {
    /// Ends a prompt: friction history, audit (durable), and a token when approved; a policy
    /// change's prompt then applies its policy or drops it.
    pub(crate) fn finish(
        &mut self,
        prompt: Prompt,
        resolution: Resolution,
        reason: String,
        now_ms: i64,
    ) -> Outcome {
        let reason = self.policy_reason(prompt.id, resolution.approves(), reason);
        let outcome = self.finish_recorded(prompt, resolution, reason, now_ms);
        self.settle_policy(&outcome, now_ms);
        outcome
    }

    fn finish_recorded(
        &mut self,
        prompt: Prompt,
        resolution: Resolution,
        reason: String,
        now_ms: i64,
    ) -> Outcome {
        // A deny rule that arrived while the prompt was open (a reload) still wins: nothing it
        // forbids is approved.
        let rule = resolution
            .approves()
            .then(|| self.deny_rule_for(&prompt.intent))
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
        let (mut record, canonical_params) = self.record_with_canonical(RecordFacts {
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
        });
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
        };
        if resolution.approves() {
            let plan = outcome.plan.clone();
            let committed = self.commit_approval(Approval {
                outcome,
                record,
                friction_update: update,
                durable: true,
                capability: &prompt.capability,
                params: &prompt.params,
                canonical_params,
                steps: &prompt.steps_digest,
                now_ms,
            });
            if committed.approved && prompt.session_chosen {
                self.grant_session(&prompt);
            }
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
    pub(crate) fn commit_approval(&mut self, approval: Approval<'_>) -> Outcome {
        let Approval {
            mut outcome,
            record,
            friction_update,
            durable,
            capability,
            params,
            canonical_params,
            steps,
            now_ms,
        } = approval;
        let expires = now_ms + 1000 * i64::from(self.config.file.tokens.expiry_seconds);
        let profile = record.profile.clone();
        let client = record.client.clone();
        let app = app_of(&client);
        let grant = Grant {
            capability: &capability.name,
            version: capability.version,
            params,
            steps,
            profile: &profile,
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
                    rule: None,
                };
                self.deny_unprompted(ctx, Resolution::StateUnavailable, e.to_string(), now_ms)
            }
        }
    }

    /// Audits a denial that asked nobody. It is group-committed like a routine approval: a
    /// flood of refused intents costs the dispatch thread no disk sync.
    pub(crate) fn deny_unprompted(
        &mut self,
        ctx: DenyContext<'_>,
        resolution: Resolution,
        reason: String,
        now_ms: i64,
    ) -> Outcome {
        let record = self.record(RecordFacts {
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
        });
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
        }
    }

    /// Audits an approval the host could not carry out (`failed`): an `execution_failed`
    /// record linked to the approval's own record, committed before this returns, so the log
    /// says what the client was told. Returns its sequence number; an error is logged and
    /// returned (the approval's record stands either way).
    pub fn record_execution_failed(
        &mut self,
        failed: FailedExecution<'_>,
        now_ms: i64,
    ) -> Result<u64, crate::error::StoreError> {
        let intent = Intent::new(
            failed.capability,
            failed.params.clone(),
            failed.client.clone(),
        );
        let capability = self
            .config
            .registry
            .get(failed.capability)
            .map(|c| c.as_ref());
        let profile = self.profile.clone();
        let mut record = self.record(RecordFacts {
            intent: &intent,
            capability,
            params: failed.params,
            steps: Vec::new(),
            thresholds: None,
            plan: None,
            results: &[],
            resolution: Resolution::ExecutionFailed,
            profile: &profile,
            rule: None,
            note: Some(failed.reason.to_string()),
            now_ms,
        });
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

    /// Builds an audit record from the facts of a decision.
    pub(crate) fn record(&self, facts: RecordFacts<'_>) -> AuditRecord {
        self.record_with_canonical(facts).0
    }

    /// [`Gate::record`], and the canonical JSON of the params it digested (an approval's token
    /// carries it: written once).
    pub(crate) fn record_with_canonical(&self, facts: RecordFacts<'_>) -> (AuditRecord, String) {
        let audit = &self.config.file.audit;
        let canonical = canonical_json(facts.params);
        let params_digest = lower_hex(&Sha256::digest(canonical.as_bytes()));
        let (params, params_excerpt, params_bytes) = if audit.redact_params {
            (None, None, None)
        } else if audit.full_params || canonical.len() <= audit.params_excerpt_bytes {
            (Some(facts.params.clone()), None, None)
        } else {
            let excerpt = prefix_at_char(&canonical, audit.params_excerpt_bytes);
            (None, Some(excerpt.to_string()), Some(canonical.len()))
        };
        let plan = facts.plan;
        let mut notes: Vec<String> = plan
            .map(|p| p.notes.iter().map(|n| note_str(*n).to_string()).collect())
            .unwrap_or_default();
        notes.extend(facts.note);
        if let Some(rule) = facts.rule {
            notes.push(format!("deny rule `{}` at {}", rule.name, rule.declared_at));
        }
        let record = AuditRecord {
            seq: 0,
            time_ms: facts.now_ms,
            profile: facts.profile.to_string(),
            client: facts.intent.client.clone(),
            capability: facts.intent.capability.clone(),
            capability_version: facts.capability.map(|c| c.version),
            rule: facts.rule.map(|r| r.name.clone()),
            params_digest,
            params,
            params_excerpt,
            params_bytes,
            steps: facts.steps,
            threshold: facts.thresholds.map(|(full, _)| full),
            effective_threshold: facts.thresholds.map(|(_, effective)| effective),
            authorizer: plan.map(|p| p.authorizer.as_str().to_string()),
            plan: plan.map(|p| p.modalities.clone()).unwrap_or_default(),
            press_and_hold: plan.is_some_and(|p| p.press_and_hold),
            modality_results: facts.results.to_vec(),
            notes,
            outcome: if facts.resolution.approves() {
                "approved"
            } else {
                "denied"
            }
            .to_string(),
            resolution: facts.resolution,
            approval_seq: None,
            scripted: false,
            prev_hash: String::new(),
        };
        (record, canonical)
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

/// The longest prefix of `text` of at most `max` bytes that ends on a character boundary.
fn prefix_at_char(text: &str, max: usize) -> &str {
    let mut end = max.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The audit and `explain` wording of a plan note.
pub(crate) fn note_str(note: PlanNote) -> &'static str {
    match note {
        PlanNote::VoiceUnavailable => "voice_unavailable: visual with press-and-hold",
        PlanNote::HapticUnavailable => "haptic_unavailable: visual instead",
        PlanNote::MultiStep => "multi_step: every step shown",
        PlanNote::VoiceDroppedByHistory => "voice dropped after repeated identical approvals",
        PlanNote::ModalityLost => "a modality was lost mid-prompt",
    }
}
