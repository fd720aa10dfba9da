//! The pure confirmation core: every intent is decided here. Capability manifests, the threshold
//! table, safety levels, friction adaptation, authorizers, the prompt state machine on an injected
//! clock, the hash-chained audit log, confirmation tokens and the SQLite state store.

pub mod audit;
pub mod capability;
pub mod config;
mod decide;
pub mod error;
pub mod explain;
pub mod friction;
pub mod gate;
pub mod identity;
pub mod intent;
pub mod plan;
pub mod prompt;
mod prompting;
mod record;
pub mod replay;
pub mod store;
pub mod threshold;
pub mod token;
pub mod types;
mod writer;

pub use audit::{AuditRecord, Resolution};
pub use config::{GateConfig, SafetyLevel};
pub use error::{ConfigError, StoreError};
pub use gate::{Gate, RespondError};
pub use identity::{ClientIdentity, IdentityKind, ProcessChange, SandboxIdentity};
pub use intent::{
    Authorizer, Availability, Decision, Intent, IntentId, ModalityEvent, Outcome, Plan, Step,
};
pub use prompt::Prompt;
pub use types::{Answer, AuthLevel, Modality, RiskClass, SideEffects, Threshold};
