//! The pure confirmation core: every intent is decided here. Capability manifests, the threshold
//! table, safety levels, friction adaptation, authorizers, the prompt state machine on an injected
//! clock, the hash-chained audit log, confirmation tokens and the SQLite state store; which files
//! it trusts, and how a changed policy is compared and asked about before it lowers protection.

pub mod audit;
pub mod capability;
pub mod classify;
pub mod config;
mod decide;
pub mod error;
pub mod explain;
pub mod fact;
pub mod family;
pub mod fields;
pub mod friction;
pub mod gate;
pub mod identity;
pub mod intent;
pub mod key_rule;
mod ledger;
pub mod lowering;
pub mod mcp;
pub mod plan;
pub mod policy;
pub mod policy_prompt;
pub mod prompt;
mod queue;
mod record;
pub mod registry;
pub mod replay;
pub mod rules;
mod session;
pub mod sources;
pub mod store;
pub mod threshold;
pub mod token;
pub mod trust;
pub mod types;
mod writer;

pub use audit::{AuditRecord, McpCall, Resolution};
pub use config::GateConfig;
pub use error::{ConfigError, StoreError};
pub use gate::{Gate, RespondError};
pub use identity::{ClientIdentity, IdentityKind, ProcessChange, SandboxIdentity};
pub use intent::{
    Authorizer, Availability, Decision, Intent, IntentId, ModalityEvent, Outcome, Plan, Run, Step,
};
pub use ledger::FailedExecution;
pub use policy::{Direction, KeyRule, Order, PolicyChange, ProtectionFact};
pub use policy_prompt::{ApprovedPolicy, POLICY_CAPABILITY, StartPolicy};
pub use prompt::Prompt;
pub use types::{Answer, AuthLevel, Modality, RiskClass, SafetyLevel, SideEffects, Threshold};
