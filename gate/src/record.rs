//! How a decision becomes an audit record, which owns no state (the ledger writes what is built
//! here): the facts it states, its parameters kept as the `[audit]` settings say, and the
//! wording of a plan's notes.

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::audit::{AuditRecord, McpCall, ModalityResult, Resolution};
use crate::capability::{Capability, canonical_json, lower_hex};
use crate::config::AuditConfig;
use crate::intent::{Intent, Plan, PlanNote};
use crate::rules::DenyRule;
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

/// Builds an audit record from the facts of a decision, as the `[audit]` settings keep
/// parameters.
pub(crate) fn record(facts: RecordFacts<'_>, audit: &AuditConfig) -> AuditRecord {
    record_with_canonical(facts, audit).0
}

/// [`record`], and the canonical JSON of the params it digested (an approval's token carries
/// it: written once).
pub(crate) fn record_with_canonical(
    facts: RecordFacts<'_>,
    audit: &AuditConfig,
) -> (AuditRecord, String) {
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
        mcp: McpCall::of(&facts.intent.capability, facts.params),
        prev_hash: String::new(),
    };
    (record, canonical)
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
