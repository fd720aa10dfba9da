//! What the dialog shows: [`DialogContent`] (fixed for one prompt: who asks as verified, for
//! what, on what, the steps and extra parameters, the challenge word, the risk, the modalities)
//! and [`LiveState`] (what changes while it is up: seconds left, queue, voice level, haptic taps,
//! hold progress, focus, scrolling). Both load from JSON for the renderer binary, with errors
//! that name the file, line and column.

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

/// Who asks, as the kernel and the sandbox know it: never the client's say-so.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Requester {
    /// A client that connected through a sandbox's security context (`wp_security_context_v1`):
    /// the engine (e.g. `flatpak`; empty when the sandbox did not name itself) vouches for the
    /// app id. Shown as verified.
    Sandboxed { engine: String, app_id: String },
    /// A client outside any sandbox: the full path of its executable and its pid, from the
    /// kernel. Shown as not sandboxed.
    Unconfined { executable: String, pid: u32 },
    /// Nothing verified is known (the socket had no credentials): shown as unverified, with the
    /// compositor's name for the connection.
    Unknown { connection: String },
}

impl Requester {
    /// The identity itself: the app id, the executable path, or the connection name.
    pub fn name(&self) -> &str {
        match self {
            Requester::Sandboxed { app_id, .. } => app_id,
            Requester::Unconfined { executable, .. } => executable,
            Requester::Unknown { connection } => connection,
        }
    }

    /// The letter shown in place of an icon: the first letter of the app id's last segment
    /// (`org.gnome.Files` → `F`) or of the executable's file name (`/usr/bin/python3.12` →
    /// `P`), else its first digit, else `?`.
    pub fn monogram(&self) -> char {
        let name = self.name();
        let last = match self {
            Requester::Sandboxed { .. } => name.rsplit('.').find(|s| !s.trim().is_empty()),
            _ => name.rsplit('/').find(|s| !s.trim().is_empty()),
        }
        .unwrap_or(name);
        let shown = |c: &char| !crate::visible::is_hidden(*c);
        last.chars()
            .filter(shown)
            .find(|c| c.is_alphabetic())
            .or_else(|| last.chars().filter(shown).find(|c| c.is_alphanumeric()))
            .and_then(|c| c.to_uppercase().next())
            .unwrap_or('?')
    }
}

/// Everything fixed about one prompt. A change of content is a new prompt: the guard re-arms.
/// Every client string is made visible and capped when the dialog lays it out (see
/// [`crate::visible`]); the verified identity is never cut, so an identity too long to show in
/// full is refused ([`DialogContent::validate`]).
#[derive(Debug, Clone, PartialEq)]
pub struct DialogContent {
    /// Who asks, as verified.
    pub requester: Requester,
    /// The app id the client declared about itself (`xdg_toplevel.set_app_id`): shown only as
    /// secondary text, capped, never as who asks.
    pub declared_app_id: Option<String>,
    /// The app's icon, when known.
    pub icon: Option<Icon>,
    /// The action: the capability's description filled from the parameters.
    pub action: String,
    /// What the action acts on.
    pub target: String,
    /// Every step of a multi-step intent (empty for a single action).
    pub steps: Vec<String>,
    /// Parameters the description does not show (`extra_params = "show"` manifests), as
    /// (name, value); listed as `name = value`.
    pub extra_params: Vec<(String, String)>,
    /// The word a spoken approval must contain, shown prominently (destructive and system
    /// prompts with a voice step).
    pub challenge: Option<String>,
    pub risk: Risk,
    pub modalities: Vec<Modality>,
    /// Seconds until the prompt times out (and is denied).
    pub seconds_left: u32,
    /// The whole timeout, for the countdown bar.
    pub timeout_seconds: u32,
    /// Other prompts waiting behind this one when it is shown; later changes go through
    /// [`crate::ConfirmDialog::set_queued`], which does not re-arm the guard.
    pub queued: u32,
    /// The plan asks for a press-and-hold on Approve: the stronger gesture the gate requires
    /// when voice was needed but is unavailable.
    pub press_and_hold: bool,
    /// Why voice is not part of this prompt when its class needed it (no speech model for the
    /// language, no microphone): the line shown above the hold hint. Host text from
    /// `[overlay.text]`, not the client's.
    pub voice_unavailable: Option<String>,
    /// Offer "Allow until logout" (a session approval): guarded like Approve, never focused by
    /// default. The gate offers it only where its rules allow one.
    pub offer_session: bool,
    /// The prompt has a text entry (a password its front end asks for): two live rows, the
    /// entry and its message, filled from [`LiveState::entry`].
    pub entry: bool,
    /// The entry can be answered as another account (polkit's `auth_admin` offers several): a
    /// third row names the account asked for, and a press on it asks for the next one.
    pub entry_account: bool,
}

/// Longest verified identity, in characters once made visible, the dialog shows. A longer one
/// is refused rather than cut (the kernel's paths are at most 4096 bytes).
pub const MAX_IDENTITY_CHARS: usize = 8192;

impl DialogContent {
    /// Whether Approve must be held: the plan says so, or the config asks it for this risk.
    pub fn needs_hold(&self, config: &crate::Config) -> bool {
        config.hold_to_approve_ms > 0
            && (self.press_and_hold || config.hold_risks.contains(&self.risk))
    }

    /// Checks the rules a prompt must hold before it can be shown. An `Err` is a denial.
    pub fn validate(&self, config: &crate::Config) -> Result<(), OverlayError> {
        let bad = |m: String| Err(OverlayError::InvalidContent(m));
        let name = self.requester.name();
        if name.trim().is_empty() {
            return bad("the requester's identity is empty: who asks must be named".into());
        }
        if crate::visible::shown(name, MAX_IDENTITY_CHARS).cut > 0 {
            return bad(format!(
                "the requester's identity is longer than the {MAX_IDENTITY_CHARS} characters \
                 the dialog shows in full"
            ));
        }
        if self.action.trim().is_empty() {
            return bad("`action` is empty".into());
        }
        if self.steps.len() > config.max_steps as usize {
            return bad(format!(
                "{} steps, more than the {} the dialog can list (max_steps)",
                self.steps.len(),
                config.max_steps
            ));
        }
        if let Some(i) = self.steps.iter().position(|s| s.trim().is_empty()) {
            return bad(format!("step {} is empty", i + 1));
        }
        if self.extra_params.len() > config.max_extra_params as usize {
            return bad(format!(
                "{} extra parameters, more than the {} the dialog can list (max_extra_params)",
                self.extra_params.len(),
                config.max_extra_params
            ));
        }
        if self
            .challenge
            .as_deref()
            .is_some_and(|w| w.trim().is_empty())
        {
            return bad("the challenge word is empty".into());
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
    requester: Requester,
    #[serde(default)]
    declared_app_id: Option<String>,
    /// Path of a PNG icon, relative to the content file.
    #[serde(default)]
    icon: Option<PathBuf>,
    action: String,
    #[serde(default)]
    target: String,
    #[serde(default)]
    steps: Vec<String>,
    /// `[["name", "value"], …]`
    #[serde(default)]
    extra_params: Vec<(String, String)>,
    #[serde(default)]
    challenge: Option<String>,
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
    #[serde(default)]
    voice_unavailable: Option<String>,
    #[serde(default)]
    offer_session: bool,
    #[serde(default)]
    entry: bool,
    #[serde(default)]
    entry_account: bool,
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
    /// Progress of a press-and-hold, 0.0–1.0, on `held`.
    pub hold_progress: f32,
    /// The control being held (Approve or Allow until logout).
    pub held: Control,
    /// The control with the keyboard focus ring.
    pub focus: Option<Control>,
    /// Whether the clickjacking guard has armed (controls are drawn disabled before).
    pub armed: bool,
    /// Overrides the content's queue count (the badge).
    pub queued: Option<u32>,
    /// How far the scrolling part (action, target, steps, parameters) is scrolled, in logical
    /// pixels from its top; clamped to what the layout can scroll.
    pub scroll: f32,
    /// Whether the scrolling part has been seen to its end in the layout on screen: Approve
    /// stays disabled until it has (or until everything fits).
    pub read_all: bool,
    /// Whether the dialog has the keyboard: keys act only then, and the card shows it.
    pub keyboard: bool,
    /// What the entry shows, when the content has one.
    pub entry: Option<EntryLine>,
    /// Approve waits for a step outside the dialog's buttons (a password its front end has not
    /// accepted yet): drawn disabled, and a press on it is ignored. Deny always works.
    pub approve_locked: bool,
}

impl Default for LiveState {
    fn default() -> Self {
        LiveState {
            seconds_left: None,
            voice: VoiceState::Listening,
            voice_level: 0.0,
            haptic: HapticState::Waiting,
            hold_progress: 0.0,
            held: Control::Approve,
            focus: None,
            armed: true,
            queued: None,
            scroll: 0.0,
            read_all: false,
            keyboard: false,
            entry: None,
            approve_locked: false,
        }
    }
}

/// A text entry as drawn: never the text of a password, only one dot a character.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EntryLine {
    /// What it asks (PAM's prompt, e.g. "Password: ").
    pub label: String,
    /// What the field shows: the text of an echoing entry, one `•` a character of a masked one.
    pub shown: String,
    /// A password (PAM's `ECHO_OFF`): `shown` is dots, and screen readers are told so.
    pub masked: bool,
    /// A line under it (a failed try, PAM's info or error text).
    pub message: Option<String>,
    /// The user gave it the keyboard: keys go into it, and a caret shows it.
    pub focused: bool,
    /// The account row's words (which account is asked, how to ask for another), when the
    /// content has that row.
    pub account: Option<String>,
}

/// Live state of the voice modality.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VoiceState {
    Listening,
    Heard,
    /// Something was said that decided nothing; still listening.
    Missed,
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
    /// "Allow until logout", when the prompt offers it.
    Session,
}

fn read(path: &Path) -> Result<String, OverlayError> {
    std::fs::read_to_string(path).map_err(|reason| OverlayError::Read {
        path: path.to_owned(),
        reason,
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

/// Reads a content JSON file (see docs/dialog.md for the schema), loads its icon and validates it
/// against `config`'s limits.
pub fn load_content(path: &Path, config: &crate::Config) -> Result<DialogContent, OverlayError> {
    let file: ContentFile = serde_json::from_str(&read(path)?).map_err(|e| json_error(path, e))?;
    let icon = match file.icon {
        None => None,
        Some(rel) => {
            let icon_path = path.parent().unwrap_or(Path::new(".")).join(rel);
            let bytes = std::fs::read(&icon_path).map_err(|reason| OverlayError::Read {
                path: icon_path.clone(),
                reason,
            })?;
            let pixels = tiny_skia::Pixmap::decode_png(&bytes).map_err(|e| OverlayError::Icon {
                path: icon_path.clone(),
                message: e.to_string(),
            })?;
            Some(Icon { pixels })
        }
    };
    let content = DialogContent {
        requester: file.requester,
        declared_app_id: file.declared_app_id,
        icon,
        action: file.action,
        target: file.target,
        steps: file.steps,
        extra_params: file.extra_params,
        challenge: file.challenge,
        risk: file.risk,
        modalities: file.modalities,
        seconds_left: file.seconds_left,
        timeout_seconds: file.timeout_seconds,
        queued: file.queued,
        press_and_hold: file.press_and_hold,
        voice_unavailable: file.voice_unavailable,
        offer_session: file.offer_session,
        entry: file.entry,
        entry_account: file.entry_account,
    };
    content.validate(config)?;
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
    if !(state.scroll.is_finite() && state.scroll >= 0.0) {
        return Err(OverlayError::InvalidContent(format!(
            "{}: scroll must be a number of pixels, 0 or more",
            path.display()
        )));
    }
    Ok(state)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Config;

    const WHO: &str = r#""requester": {"unconfined": {"executable": "/usr/bin/a", "pid": 7}}"#;

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
            r#"{"requester": {"sandboxed": {"engine": "flatpak", "app_id": "org.gnome.Files"}},
               "declared_app_id": "Files", "action": "Delete report.pdf",
               "target": "/home/u/report.pdf", "steps": ["Move to trash", "Empty trash"],
               "extra_params": [["recursive", "true"]], "challenge": "바다",
               "risk": "destructive", "modalities": ["visual", "voice", "haptic"],
               "seconds_left": 27, "queued": 2}"#,
        );
        let c = load_content(&p, &Config::default()).unwrap();
        assert_eq!(c.requester.name(), "org.gnome.Files");
        assert_eq!(c.requester.monogram(), 'F');
        for (exe, mono) in [
            ("/usr/bin/python3.12", 'P'),
            ("/opt/x/7zip", 'Z'),
            ("/opt/x/123", '1'),
            ("/\u{200f}", '?'),
        ] {
            let r = Requester::Unconfined {
                executable: exe.into(),
                pid: 1,
            };
            assert_eq!(r.monogram(), mono, "{exe}");
        }
        assert_eq!(c.extra_params, [("recursive".into(), "true".into())]);
        assert_eq!(c.challenge.as_deref(), Some("바다"));
        assert_eq!(c.risk, Risk::Destructive);
        assert_eq!(c.modalities.len(), 3);
        assert_eq!((c.seconds_left, c.timeout_seconds, c.queued), (27, 30, 2));
    }

    #[test]
    fn malformed_and_unknown_input_names_file_and_place() {
        let d = tmpdir("bad");
        let p = write(&d, "c.json", &format!("{{{WHO},\n \"colour\": 1}}"));
        let e = load_content(&p, &Config::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("c.json:2:") && e.contains("unknown field `colour`"),
            "{e}"
        );
        let p = write(
            &d,
            "r.json",
            &format!(r#"{{{WHO},"action":"x","risk":"scary"}}"#),
        );
        let e = load_content(&p, &Config::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown variant `scary`"), "{e}");
        let p = write(
            &d,
            "s.json",
            r#"{"requester": {"unknown": {"connection": " "}},"action":"x","risk":"routine"}"#,
        );
        let e = load_content(&p, &Config::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("identity is empty"), "{e}");
        let e = load_content(&d.join("missing.json"), &Config::default())
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
                r#"{{{WHO},"action":"x","risk":"system","steps":[{}]}}"#,
                steps.join(",")
            ),
        );
        let config = Config {
            max_steps: 12,
            ..Config::default()
        };
        let e = load_content(&p, &config).unwrap_err().to_string();
        assert!(e.contains("13 steps"), "{e}");
        let params: Vec<String> = (0..3).map(|i| format!("[\"p{i}\", \"v\"]")).collect();
        let p = write(
            &d,
            "p.json",
            &format!(
                r#"{{{WHO},"action":"x","risk":"system","extra_params":[{}]}}"#,
                params.join(",")
            ),
        );
        let config = Config {
            max_extra_params: 2,
            ..Config::default()
        };
        let e = load_content(&p, &config).unwrap_err().to_string();
        assert!(e.contains("3 extra parameters"), "{e}");
    }

    #[test]
    fn an_identity_too_long_to_show_in_full_is_refused_not_cut() {
        let mut c = DialogContent {
            requester: Requester::Unconfined {
                executable: format!("/{}", "\u{200b}x".repeat(MAX_IDENTITY_CHARS / 8)),
                pid: 1,
            },
            declared_app_id: None,
            icon: None,
            action: "x".into(),
            target: String::new(),
            steps: vec![],
            extra_params: vec![],
            challenge: None,
            risk: Risk::Routine,
            modalities: vec![Modality::Visual],
            seconds_left: 30,
            timeout_seconds: 30,
            queued: 0,
            press_and_hold: false,
            voice_unavailable: None,
            offer_session: false,
            entry: false,
            entry_account: false,
        };
        let e = c.validate(&Config::default()).unwrap_err().to_string();
        assert!(e.contains("shows in full"), "{e}");
        c.requester = Requester::Unconfined {
            executable: format!("/{}", "x".repeat(4095)),
            pid: 1,
        };
        c.validate(&Config::default()).unwrap();
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
