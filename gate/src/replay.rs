//! Trace replay: runs a JSON Lines trace of intents, answers and session events through the real
//! gate on a virtual clock and reports one line per intent. This is how policy authors test a
//! config (`pcpctl replay`).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::audit::ClientIdentity;
use crate::gate::Gate;
use crate::intent::{Availability, Decision, Intent, ModalityEvent, Outcome, Step};
use crate::types::{Answer, Modality, Threshold};

/// One line of a trace.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum TraceLine {
    Event(TraceEvent),
    Intent(TraceIntent),
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceIntent {
    pub at_ms: i64,
    pub capability: String,
    #[serde(default)]
    pub params: Value,
    #[serde(default)]
    pub target: Option<String>,
    #[serde(default)]
    pub steps: Vec<Step>,
    #[serde(default = "default_client")]
    pub client: String,
    #[serde(default)]
    pub profile: Option<String>,
    #[serde(default = "default_available")]
    pub available: Vec<TraceModality>,
    #[serde(default)]
    pub answers: Vec<TraceAnswer>,
}

/// `visual` in a trace's `available` means an output and an input device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TraceModality {
    Visual,
    Voice,
    Haptic,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceAnswer {
    pub modality: Modality,
    pub answer: Answer,
    pub after_ms: i64,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case", deny_unknown_fields)]
pub enum TraceEventKind {
    SwitchProfile { profile: String },
    UpdateCapability { capability: String, version: u32 },
}

#[derive(Debug, Clone, Deserialize)]
pub struct TraceEvent {
    pub at_ms: i64,
    #[serde(flatten)]
    pub kind: TraceEventKind,
}

fn default_client() -> String {
    "trace".into()
}

fn default_available() -> Vec<TraceModality> {
    vec![TraceModality::Visual, TraceModality::Voice]
}

/// One output line per intent.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReplayResult {
    pub capability: String,
    /// The full threshold before friction (`none` for an unknown capability).
    pub threshold: Threshold,
    pub effective_threshold: Threshold,
    /// What was actually asked; empty when nothing was.
    pub plan: Vec<Modality>,
    pub prompted: bool,
    pub outcome: &'static str,
    pub resolution: String,
    pub decided_at_ms: i64,
}

/// A trace line that cannot be read.
#[derive(Debug, thiserror::Error)]
#[error("trace line {line}: {message}")]
pub struct TraceError {
    pub line: usize,
    pub message: String,
}

/// Parses a whole trace; blank lines and lines starting with `#` are skipped.
pub fn parse_trace(text: &str) -> Result<Vec<(usize, TraceLine)>, TraceError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let value: Value = serde_json::from_str(trimmed).map_err(|e| TraceError {
            line: i + 1,
            message: format!("not JSON: {e}"),
        })?;
        let parsed = if value.get("event").is_some() {
            serde_json::from_value::<TraceEvent>(value).map(TraceLine::Event)
        } else {
            serde_json::from_value::<TraceIntent>(value).map(TraceLine::Intent)
        };
        let parsed = parsed.map_err(|e| TraceError {
            line: i + 1,
            message: e.to_string(),
        })?;
        out.push((i + 1, parsed));
    }
    Ok(out)
}

/// Replays a parsed trace. Each intent is decided before the next line: its answers arrive at
/// `at_ms + after_ms`; with no decisive answer the clock runs on until its timeout.
pub fn replay(gate: &mut Gate, trace: &[(usize, TraceLine)]) -> Vec<ReplayResult> {
    let mut now = 0i64;
    let mut results = Vec::new();
    for (_, line) in trace {
        match line {
            TraceLine::Event(event) => {
                now = now.max(event.at_ms);
                match &event.kind {
                    TraceEventKind::SwitchProfile { profile } => gate.set_profile(profile),
                    TraceEventKind::UpdateCapability {
                        capability,
                        version,
                    } => {
                        if let Err(e) = gate.update_capability(capability, *version) {
                            tracing::warn!("update_capability {capability}: {e}");
                        }
                    }
                }
            }
            TraceLine::Intent(t) => {
                now = now.max(t.at_ms);
                let (result, decided_at) = run_intent(gate, t, now);
                now = decided_at;
                results.push(result);
            }
        }
    }
    if let Err(e) = gate.flush() {
        tracing::error!("audit flush after replay failed: {e}");
    }
    results
}

fn run_intent(gate: &mut Gate, t: &TraceIntent, start: i64) -> (ReplayResult, i64) {
    if let Some(profile) = &t.profile {
        gate.set_profile(profile);
    }
    let has = |m| t.available.contains(&m);
    gate.set_available(Availability {
        output: has(TraceModality::Visual),
        input: has(TraceModality::Visual),
        voice: has(TraceModality::Voice),
        haptic: has(TraceModality::Haptic),
    });
    let mut intent = Intent::new(
        &t.capability,
        t.params.clone(),
        ClientIdentity::named(&t.client),
    );
    intent.target = t.target.clone();
    intent.steps = t.steps.clone();
    let effective = gate.evaluate(&intent, start).ok().map(|e| e.effective);
    let id = match gate.submit(intent, start) {
        Decision::Execute(o) | Decision::Deny(o) => return report(o, effective, false, start),
        Decision::Confirm { id, .. } => id,
    };
    let mut answers: Vec<&TraceAnswer> = t.answers.iter().collect();
    answers.sort_by_key(|a| a.after_ms);
    for answer in answers {
        let at = start + answer.after_ms.max(0);
        if let Some(outcome) = gate.tick(at).into_iter().find(|o| o.id == id) {
            return report(outcome, effective, true, at);
        }
        match gate.respond(
            id,
            ModalityEvent::Answer(answer.modality, answer.answer),
            at,
        ) {
            Ok(Some(outcome)) => return report(outcome, effective, true, at),
            Ok(None) => {}
            Err(e) => tracing::debug!("trace answer ignored: {e}"),
        }
    }
    // Nobody answers further: run the clock to the prompt's deadlines. A shown prompt always
    // has one, so the loop ends; without one it is cancelled rather than left open.
    while let Some(deadline) = gate.prompt(id).and_then(|p| p.next_deadline()) {
        if let Some(outcome) = gate.tick(deadline).into_iter().find(|o| o.id == id) {
            return report(outcome, effective, true, deadline);
        }
    }
    match gate.cancel(id, start) {
        Some(outcome) => report(outcome, effective, true, start),
        None => {
            let outcome = Outcome {
                id,
                capability: t.capability.clone(),
                approved: false,
                resolution: crate::audit::Resolution::Cancelled,
                token: None,
                threshold: None,
                plan: Vec::new(),
                audit_seq: None,
                reason: "the prompt vanished".into(),
                run: None,
            };
            report(outcome, effective, true, start)
        }
    }
}

fn report(
    o: Outcome,
    effective: Option<Threshold>,
    prompted: bool,
    at: i64,
) -> (ReplayResult, i64) {
    let threshold = o.threshold.unwrap_or(Threshold::None);
    let result = ReplayResult {
        capability: o.capability,
        threshold,
        effective_threshold: effective.unwrap_or(threshold),
        prompted: prompted && !o.plan.is_empty(),
        plan: if prompted { o.plan } else { Vec::new() },
        outcome: if o.approved { "approved" } else { "denied" },
        resolution: o.resolution.as_str().to_string(),
        decided_at_ms: at,
    };
    (result, at)
}
