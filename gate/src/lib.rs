//! The pure confirmation core: every intent is decided here. Capability manifests, the threshold
//! table, safety levels, friction adaptation, authorizers, the prompt state machine on an injected
//! clock, the hash-chained audit log, confirmation tokens and the SQLite state store.

pub mod types;

pub use types::{Answer, AuthLevel, Modality, RiskClass, SideEffects, Threshold};
