//! What crosses into and out of the gate: intents, what hardware can answer now, decisions,
//! plans, modality events and outcomes.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::audit::{ClientIdentity, Resolution};
use crate::types::{Answer, Modality, Threshold};

/// One step of a multi-step intent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    pub capability: String,
    #[serde(default)]
    pub params: Value,
}

/// An action a client asks the desktop to perform.
#[derive(Debug, Clone, PartialEq)]
pub struct Intent {
    pub capability: String,
    /// A JSON object (`null` counts as `{}`).
    pub params: Value,
    /// The client's hint of the action's target, shown when the manifest has no target template.
    pub target: Option<String>,
    /// A multi-step intent's steps, each a capability of its own; shown in full on the overlay.
    pub steps: Vec<Step>,
    pub client: ClientIdentity,
}

impl Intent {
    pub fn new(capability: &str, params: Value, client: ClientIdentity) -> Intent {
        Intent {
            capability: capability.to_string(),
            params,
            target: None,
            steps: Vec::new(),
            client,
        }
    }

    /// What this intent runs once approved, with `params` as the gate checked them (an
    /// object): its capability and client are moved, not copied.
    pub(crate) fn into_run(self, params: Value) -> Run {
        Run {
            capability: self.capability,
            params,
            client: self.client,
        }
    }
}

/// What can answer a prompt right now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Availability {
    /// An output the overlay can be drawn on.
    pub output: bool,
    /// A seat input device that can press the overlay's controls.
    pub input: bool,
    /// A microphone and a loaded speech model.
    pub voice: bool,
    /// A force-feedback device with a touch surface.
    pub haptic: bool,
}

impl Default for Availability {
    fn default() -> Self {
        Availability {
            output: true,
            input: true,
            voice: false,
            haptic: false,
        }
    }
}

impl Availability {
    pub fn visual(&self) -> bool {
        self.output && self.input
    }
}

/// Who answers an ask (the local user, a parent session, or nobody): exactly one is selected
/// per prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Authorizer {
    /// The person at this seat, through the plan's modalities.
    LocalUser,
    /// A parent compositor, for a nested session.
    Parent,
    /// Nobody can answer: every ask is denied `confirmation_unavailable`.
    Denying,
}

impl Authorizer {
    pub fn as_str(self) -> &'static str {
        match self {
            Authorizer::LocalUser => "local_user",
            Authorizer::Parent => "parent",
            Authorizer::Denying => "denying",
        }
    }
}

/// Why a plan differs from the plain threshold; written to audit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanNote {
    /// Voice was required but is unavailable: visual with press-and-hold instead.
    VoiceUnavailable,
    /// A haptic double-tap would do but there is no device: visual instead.
    HapticUnavailable,
    /// Multi-step intents are always shown, every step listed.
    MultiStep,
    /// Voice was dropped after repeated identical approvals.
    VoiceDroppedByHistory,
    /// A modality was lost mid-prompt and replaced.
    ModalityLost,
}

/// The modalities the user must answer through, all of them approving.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    pub authorizer: Authorizer,
    pub modalities: Vec<Modality>,
    /// The overlay's approve control needs a press-and-hold, not a click (voice fallback).
    pub press_and_hold: bool,
    pub notes: Vec<PlanNote>,
}

/// Identifies one intent from submission to outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct IntentId(pub u64);

/// What the gate decided at submission.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Run it now (`policy_allow` or `confirmed_by_history`).
    Execute(Outcome),
    /// Ask: the compositor presents the plan and feeds answers to `respond`.
    Confirm {
        id: IntentId,
        threshold: Threshold,
        plan: Plan,
    },
    /// Refused with a reason.
    Deny(Outcome),
}

/// Something one modality reports about the active prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModalityEvent {
    /// The user answered through this modality.
    Answer(Modality, Answer),
    /// The user answered by voice after `utterances` utterances, the deciding one included:
    /// `Answer(Voice, answer)` whose audit record also says how often the user had to speak.
    Spoken { answer: Answer, utterances: u32 },
    /// The hardware behind this modality is gone; the prompt falls back.
    Lost(Modality),
    /// The user interacted with the overlay without answering: the inactivity timeout restarts.
    Activity,
    /// The parent compositor answered (nested sessions).
    Parent(Answer),
    /// The user chose "allow until logout" on the overlay: an approval through the overlay
    /// that also lets this app run the same action unprompted until the session ends. Only
    /// when the prompt offers it (`Prompt::offers_session`).
    ApproveForSession,
}

/// How an intent ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outcome {
    pub id: IntentId,
    pub capability: String,
    pub approved: bool,
    pub resolution: Resolution,
    /// The confirmation token for an approved intent, for the client's executor.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// The full threshold (before friction), when the capability is known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threshold: Option<Threshold>,
    /// The modalities that were asked (empty when nothing was).
    pub plan: Vec<Modality>,
    /// The audit record's sequence number.
    pub audit_seq: Option<u64>,
    /// A sentence for logs and for the client.
    pub reason: String,
    /// What an approval runs: moved out of the submission when it is approved (never on a
    /// denial), so the host performs what the user approved and nothing is copied before.
    #[serde(skip)]
    pub run: Option<Run>,
}

/// What an approved intent runs, and who asked: the capability, the parameters as the gate
/// checked them (an object) and the verified client.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    pub capability: String,
    pub params: Value,
    pub client: ClientIdentity,
}
