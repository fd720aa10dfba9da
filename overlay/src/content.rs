//! What the dialog shows: [`DialogContent`] (fixed for one prompt: who asks, for what, on what,
//! the steps, the risk, the modalities) and [`LiveState`] (what changes while it is up: seconds
//! left, voice level, haptic taps, hold progress, focus). Both load from JSON for the renderer
//! binary, with errors that name the file, line and column.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::OverlayError;

/// The risk class shown (wording and colour), mapped by the compositor from the gate's class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Risk {
    Routine,
    Privileged,
    Destructive,
    System,
}

/// A modality in play for this prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Modality {
    Visual,
    Voice,
    Haptic,
}

/// The requesting app's icon, drawn scaled into the header's icon square.
#[derive(Debug, Clone, PartialEq)]
pub struct Icon {
    /// Premultiplied RGBA pixels.
    pub pixels: tiny_skia::Pixmap,
}

/// Everything fixed about one prompt. A change of content is a new prompt: the guard re-arms.
#[derive(Debug, Clone, PartialEq)]
pub struct DialogContent {
    /// The requesting app's name (from the socket's credentials, never from the client's say-so).
    pub app: String,
    /// The app's icon, when known.
    pub icon: Option<Icon>,
    /// The action: the capability's description filled from the parameters.
    pub action: String,
    /// What the action acts on.
    pub target: String,
    /// Every step of a multi-step intent (empty for a single action).
    pub steps: Vec<String>,
    pub risk: Risk,
    pub modalities: Vec<Modality>,
    /// Seconds until the prompt times out (and is denied).
    pub seconds_left: u32,
    /// The whole timeout, for the countdown bar.
    pub timeout_seconds: u32,
    /// Other prompts waiting behind this one.
    pub queued: u32,
    /// The plan asks for a press-and-hold on Approve: the stronger gesture the gate requires
    /// when voice was needed but is unavailable.
    pub press_and_hold: bool,
}

impl DialogContent {
    /// Whether Approve must be held: the plan says so, or the config asks it for this risk.
    pub fn needs_hold(&self, config: &crate::Config) -> bool {
        config.hold_to_approve_ms > 0
            && (self.press_and_hold || config.hold_risks.contains(&self.risk))
    }

    /// Checks the rules a prompt must hold before it can be shown. An `Err` is a denial.
    pub fn validate(&self, max_steps: u32) -> Result<(), OverlayError> {
        let bad = |m: String| Err(OverlayError::InvalidContent(m));
        if self.app.trim().is_empty() {
            return bad("`app` is empty: the requester must be named".into());
        }
        if self.action.trim().is_empty() {
            return bad("`action` is empty".into());
        }
        if self.steps.len() > max_steps as usize {
            return bad(format!(
                "{} steps, more than the {max_steps} the dialog can list (max_steps)",
                self.steps.len()
            ));
        }
        if let Some(i) = self.steps.iter().position(|s| s.trim().is_empty()) {
            return bad(format!("step {} is empty", i + 1));
        }
        if self.timeout_seconds == 0 {
            return bad("`timeout_seconds` is 0".into());
        }
        Ok(())
    }
}

/// The JSON form of [`DialogContent`] read by `pcp-overlay-render`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ContentFile {
    app: String,
    /// Path of a PNG icon, relative to the content file.
    #[serde(default)]
    icon: Option<PathBuf>,
    action: String,
    #[serde(default)]
    target: String,
    #[serde(default)]
    steps: Vec<String>,
    risk: Risk,
    #[serde(default = "default_modalities")]
    modalities: Vec<Modality>,
    #[serde(default = "default_timeout")]
    seconds_left: u32,
    #[serde(default = "default_timeout")]
    timeout_seconds: u32,
    #[serde(default)]
    queued: u32,
    #[serde(default)]
    press_and_hold: bool,
}

fn default_modalities() -> Vec<Modality> {
    vec![Modality::Visual]
}

fn default_timeout() -> u32 {
    30
}

/// What changes while the dialog is up.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LiveState {
    /// Overrides the content's seconds left.
    pub seconds_left: Option<u32>,
    pub voice: VoiceState,
    /// Microphone level, 0.0–1.0.
    pub voice_level: f32,
    pub haptic: HapticState,
    /// Progress of a press-and-hold on Approve, 0.0–1.0.
    pub hold_progress: f32,
    /// The control with the keyboard focus ring.
    pub focus: Option<Control>,
    /// Whether the clickjacking guard has armed (controls are drawn disabled before).
    pub armed: bool,
}

impl Default for LiveState {
    fn default() -> Self {
        LiveState {
            seconds_left: None,
            voice: VoiceState::Listening,
            voice_level: 0.0,
            haptic: HapticState::Waiting,
            hold_progress: 0.0,
            focus: None,
            armed: true,
        }
    }
}

/// Live state of the voice modality.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VoiceState {
    Listening,
    Heard,
    Unavailable,
}

/// Live state of the haptic modality.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HapticState {
    Waiting,
    FirstTap,
}

/// A control of the dialog.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Control {
    Approve,
    Deny,
}

fn read(path: &Path) -> Result<String, OverlayError> {
    std::fs::read_to_string(path).map_err(|source| OverlayError::Read {
        path: path.to_owned(),
        source,
    })
}

fn json_error(path: &Path, e: serde_json::Error) -> OverlayError {
    OverlayError::Json {
        path: path.to_owned(),
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    }
}

/// Reads a content JSON file (see the crate README for the schema), loads its icon and validates
/// it against `max_steps`.
pub fn load_content(path: &Path, max_steps: u32) -> Result<DialogContent, OverlayError> {
    let file: ContentFile = serde_json::from_str(&read(path)?).map_err(|e| json_error(path, e))?;
    let icon = match file.icon {
        None => None,
        Some(rel) => {
            let icon_path = path.parent().unwrap_or(Path::new(".")).join(rel);
            let bytes = std::fs::read(&icon_path).map_err(|source| OverlayError::Read {
                path: icon_path.clone(),
                source,
            })?;
            let pixels = tiny_skia::Pixmap::decode_png(&bytes).map_err(|e| OverlayError::Icon {
                path: icon_path.clone(),
                message: e.to_string(),
            })?;
            Some(Icon { pixels })
        }
    };
    let content = DialogContent {
        app: file.app,
        icon,
        action: file.action,
        target: file.target,
        steps: file.steps,
        risk: file.risk,
        modalities: file.modalities,
        seconds_left: file.seconds_left,
        timeout_seconds: file.timeout_seconds,
        queued: file.queued,
        press_and_hold: file.press_and_hold,
    };
    content.validate(max_steps)?;
    Ok(content)
}

/// Reads a live-state JSON file.
pub fn load_state(path: &Path) -> Result<LiveState, OverlayError> {
    let state: LiveState = serde_json::from_str(&read(path)?).map_err(|e| json_error(path, e))?;
    if !(0.0..=1.0).contains(&state.voice_level) || !(0.0..=1.0).contains(&state.hold_progress) {
        return Err(OverlayError::InvalidContent(format!(
            "{}: voice_level and hold_progress must be within 0.0–1.0",
            path.display()
        )));
    }
    Ok(state)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    fn tmpdir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("pcp-overlay-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn the_issue_example_loads() {
        let d = tmpdir("ok");
        let p = write(
            &d,
            "c.json",
            r#"{"app": "Files", "action": "Delete report.pdf", "target": "/home/u/report.pdf",
               "steps": ["Move to trash", "Empty trash"], "risk": "destructive",
               "modalities": ["visual", "voice", "haptic"], "seconds_left": 27, "queued": 2}"#,
        );
        let c = load_content(&p, 12).unwrap();
        assert_eq!(c.app, "Files");
        assert_eq!(c.risk, Risk::Destructive);
        assert_eq!(c.modalities.len(), 3);
        assert_eq!((c.seconds_left, c.timeout_seconds, c.queued), (27, 30, 2));
    }

    #[test]
    fn malformed_and_unknown_input_names_file_and_place() {
        let d = tmpdir("bad");
        let p = write(&d, "c.json", "{\"app\": \"Files\",\n \"colour\": 1}");
        let e = load_content(&p, 12).unwrap_err().to_string();
        assert!(
            e.contains("c.json:2:") && e.contains("unknown field `colour`"),
            "{e}"
        );
        let p = write(&d, "r.json", r#"{"app":"A","action":"x","risk":"scary"}"#);
        let e = load_content(&p, 12).unwrap_err().to_string();
        assert!(e.contains("unknown variant `scary`"), "{e}");
        let p = write(&d, "s.json", r#"{"app":" ","action":"x","risk":"routine"}"#);
        let e = load_content(&p, 12).unwrap_err().to_string();
        assert!(e.contains("`app` is empty"), "{e}");
        let e = load_content(&d.join("missing.json"), 12)
            .unwrap_err()
            .to_string();
        assert!(e.contains("missing.json"), "{e}");
    }

    #[test]
    fn too_many_steps_is_refused() {
        let d = tmpdir("steps");
        let steps: Vec<String> = (0..13).map(|i| format!("\"s{i}\"")).collect();
        let p = write(
            &d,
            "c.json",
            &format!(
                r#"{{"app":"A","action":"x","risk":"system","steps":[{}]}}"#,
                steps.join(",")
            ),
        );
        let e = load_content(&p, 12).unwrap_err().to_string();
        assert!(e.contains("13 steps"), "{e}");
    }

    #[test]
    fn state_levels_are_range_checked() {
        let d = tmpdir("state");
        let p = write(&d, "s.json", r#"{"voice_level": 1.5}"#);
        assert!(load_state(&p).is_err());
        let p = write(&d, "t.json", r#"{"voice": "heard", "focus": "deny"}"#);
        let s = load_state(&p).unwrap();
        assert_eq!((s.voice, s.focus), (VoiceState::Heard, Some(Control::Deny)));
    }
}
