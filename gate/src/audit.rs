//! The audit record: what was asked, by whom, how it was decided, chained by SHA-256 so that an
//! edited, reordered or removed record is found by `verify`.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

pub use crate::identity::ClientIdentity;
use crate::types::{Modality, Threshold};

/// How a decision was reached (the authorizers' resolutions plus the gate's own).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Resolution {
    /// The threshold is none: executed with no prompt.
    #[serde(rename = "policy_allow")]
    PolicyAllow,
    /// Friction history stood in for an explicit prompt.
    #[serde(rename = "confirmed_by_history")]
    ConfirmedByHistory,
    /// Every required modality approved.
    #[serde(rename = "user_approved")]
    UserApproved,
    /// The user allowed this app the same action until logout, and this is one of them.
    #[serde(rename = "user_approved_for_session")]
    UserApprovedForSession,
    /// A modality answered deny.
    #[serde(rename = "user_denied")]
    UserDenied,
    /// A required modality did not answer in time.
    #[serde(rename = "confirmation.timeout")]
    ConfirmationTimeout,
    /// Nobody could answer (no output or no input): the denying authorizer.
    #[serde(rename = "confirmation_unavailable")]
    ConfirmationUnavailable,
    /// The capability is not in any trusted manifest.
    #[serde(rename = "unknown_capability")]
    UnknownCapability,
    /// An explicit deny rule forbids it (the record names the rule).
    #[serde(rename = "policy_deny")]
    PolicyDeny,
    /// The client already has an open prompt, or the queue is full.
    #[serde(rename = "rate_limited")]
    RateLimited,
    /// The client withdrew the intent.
    #[serde(rename = "cancelled")]
    Cancelled,
    /// The parameters are not a JSON object.
    #[serde(rename = "invalid_params")]
    InvalidParams,
    /// The state store failed on the way to a decision: fail closed.
    #[serde(rename = "state_unavailable")]
    StateUnavailable,
    /// Approved, but the approval could not be carried out (a built-in capability failed, or
    /// its token could not be delivered): the client was told so. Recorded after the approval
    /// and linked to it (`approval_seq`).
    #[serde(rename = "execution_failed")]
    ExecutionFailed,
    /// The client's connecting process is no longer the one that connected (it exited, its pid
    /// went to another process, or it ran another program): the identity the prompt would show
    /// and the audit would record is no longer true.
    #[serde(rename = "identity_changed")]
    IdentityChanged,
    /// A front end's own check of the user failed as often as it allows (polkit's password,
    /// refused by PAM on every try): the request ends there.
    #[serde(rename = "authentication_failed")]
    AuthenticationFailed,
}

impl Resolution {
    pub fn as_str(self) -> &'static str {
        match self {
            Resolution::PolicyAllow => "policy_allow",
            Resolution::ConfirmedByHistory => "confirmed_by_history",
            Resolution::UserApproved => "user_approved",
            Resolution::UserApprovedForSession => "user_approved_for_session",
            Resolution::UserDenied => "user_denied",
            Resolution::ConfirmationTimeout => "confirmation.timeout",
            Resolution::ConfirmationUnavailable => "confirmation_unavailable",
            Resolution::UnknownCapability => "unknown_capability",
            Resolution::PolicyDeny => "policy_deny",
            Resolution::RateLimited => "rate_limited",
            Resolution::Cancelled => "cancelled",
            Resolution::InvalidParams => "invalid_params",
            Resolution::StateUnavailable => "state_unavailable",
            Resolution::ExecutionFailed => "execution_failed",
            Resolution::IdentityChanged => "identity_changed",
            Resolution::AuthenticationFailed => "authentication_failed",
        }
    }

    pub fn approves(self) -> bool {
        matches!(
            self,
            Resolution::PolicyAllow
                | Resolution::ConfirmedByHistory
                | Resolution::UserApproved
                | Resolution::UserApprovedForSession
        )
    }
}

impl std::fmt::Display for Resolution {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What one modality said, and when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModalityResult {
    pub modality: Modality,
    /// `approve`, `deny`, `timeout`, `lost`, or `reasked` (a fallback asks this modality again).
    pub result: String,
    pub at_ms: i64,
    /// For a spoken answer: how many utterances the listener heard before it decided, the
    /// deciding one included (2 = one was missed and the user said it again).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub utterances: Option<u32>,
}

/// One audit record, as hashed and stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditRecord {
    pub seq: u64,
    pub time_ms: i64,
    pub profile: String,
    pub client: ClientIdentity,
    pub capability: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capability_version: Option<u32>,
    /// The deny rule that decided it (`policy_deny`), by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    pub params_digest: String,
    /// The parameters in full: absent when redacted, or when they were too big to keep whole.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
    /// The start of the canonical parameters, when they were too big to keep whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params_excerpt: Option<String>,
    /// The size in bytes of the canonical parameters, when only an excerpt is kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params_bytes: Option<usize>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threshold: Option<Threshold>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub effective_threshold: Option<Threshold>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub authorizer: Option<String>,
    pub plan: Vec<Modality>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub press_and_hold: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub modality_results: Vec<ModalityResult>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    pub outcome: String,
    pub resolution: Resolution,
    /// For `execution_failed`: the sequence number of the approval that was not carried out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_seq: Option<u64>,
    /// The prompt was answered (or left unanswered) by a scripted user in the test harness
    /// (`pcp-harness`), not by a person. Only a gate built with the `scripted-user` feature can
    /// set it, and no session binary is built with it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub scripted: bool,
    /// An MCP tool call: the server, the tool and its definition hash, kept here whatever
    /// `[audit]` keeps of the parameters (so `pcpctl audit --server` finds every call).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp: Option<McpCall>,
    pub prev_hash: String,
}

/// What an audit record says of an MCP tool call (`mcp.SERVER.TOOL`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpCall {
    /// The server's name in the client's settings (`pcpctl mcp --name`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// The tool as the server spells it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The SHA-256 of the tool's definition as the server listed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub definition: Option<String>,
}

impl McpCall {
    /// The facts `params` of MCP capability `capability` state; `None` for another capability.
    pub fn of(capability: &str, params: &Value) -> Option<McpCall> {
        if !crate::mcp::is_mcp(capability) {
            return None;
        }
        let text = |key: &str| params.get(key).and_then(Value::as_str).map(str::to_string);
        Some(McpCall {
            server: text("server"),
            tool: text("tool"),
            definition: text("definition"),
        })
    }

    /// Whether the call went to server `name`: the name the gateway gave, else the capability's
    /// own second part (`mcp.NAME.tool`, as the agent hooks name it).
    pub fn is_server(record: &AuditRecord, name: &str) -> bool {
        match record.mcp.as_ref().and_then(|m| m.server.as_deref()) {
            Some(server) => server == name,
            None => record
                .capability
                .strip_prefix(crate::mcp::PREFIX)
                .and_then(|rest| rest.split('.').next())
                .is_some_and(|server| server == crate::mcp::capability_part(name)),
        }
    }
}

/// The hash before the first record.
pub const GENESIS_HASH: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// The chain hash of a record's stored text.
pub fn chain_hash(text: &str) -> String {
    crate::capability::lower_hex(&Sha256::digest(text.as_bytes()))
}

/// The first record that breaks the chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainBreak {
    pub seq: u64,
    pub reason: String,
}

/// Checks stored `(seq, text, hash)` rows in order: each text hashes to its stored hash, names the
/// previous hash and carries its own sequence number, with no gaps.
pub fn verify_chain<'a>(
    rows: impl IntoIterator<Item = (u64, &'a str, &'a str)>,
) -> Result<u64, ChainBreak> {
    let mut prev = GENESIS_HASH.to_string();
    let mut count = 0;
    for (expected_seq, (seq, text, hash)) in (1u64..).zip(rows) {
        let fail = |reason: String| Err(ChainBreak { seq, reason });
        if seq != expected_seq {
            return fail(format!(
                "expected record {expected_seq}, found {seq}: records are missing"
            ));
        }
        if chain_hash(text) != hash {
            return fail("its contents do not match its hash: the record was edited".into());
        }
        let record: AuditRecord = match serde_json::from_str(text) {
            Ok(r) => r,
            Err(e) => return fail(format!("it is not a readable record: {e}")),
        };
        if record.seq != seq {
            return fail(format!("it says it is record {}", record.seq));
        }
        if record.prev_hash != prev {
            return fail("it does not follow the record before it: the chain was rewritten".into());
        }
        prev = hash.to_string();
        count += 1;
    }
    Ok(count)
}
