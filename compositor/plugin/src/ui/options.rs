//! What a [`super::ConfirmUi`] is made of and reads: its options, its polling timing, and the
//! read-only view of the gate it draws from.

use pcp_gate::Gate;
use pcp_gate::Prompt;
use pcp_gate::config::TimeoutConfig;
use pcp_haptics::Haptics;
use pcp_speech::Voice;

/// How often the UI looks at things while it has something to look at.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UiTiming {
    /// How often the voice listener's events are read while a prompt listens (ms).
    pub voice_poll_ms: u32,
    /// How often the microphone and the speech model are probed (ms, on the probe thread), and
    /// the haptic device checked while a prompt waits for a double tap.
    pub device_probe_ms: u32,
    /// Logical pixels per inch of touch input, to turn touch points into the millimetres
    /// `[haptics.tap]` distances are in.
    pub touch_dpi: f64,
    /// The interval of animation frames (a press-and-hold filling up), in ms.
    pub frame_interval_ms: u32,
}

impl Default for UiTiming {
    fn default() -> Self {
        UiTiming {
            voice_poll_ms: 20,
            device_probe_ms: 2000,
            touch_dpi: 96.0,
            frame_interval_ms: 16,
        }
    }
}

/// What a [`ConfirmUi`](super::ConfirmUi) is made of.
pub struct UiOptions {
    /// `[overlay]`: the dialog's strings, colours, fonts and delays.
    pub overlay: pcp_overlay::Config,
    /// The speech engine (`None`: voice is off and never planned).
    pub speech: Option<Box<dyn Voice>>,
    /// The force-feedback backend (`pcp_haptics::EvdevHaptics::discover` on real hardware).
    pub haptics: Box<dyn Haptics>,
    /// `[haptics]`: the cue and the double tap.
    pub haptics_config: pcp_haptics::Config,
    pub timing: UiTiming,
}

/// What the UI reads from the gate: the prompt on screen, how many wait behind it, and the
/// timeouts its countdown shows. Read-only: the UI cannot answer anything through it.
#[derive(Clone, Copy)]
pub struct GateView<'a> {
    pub active: Option<&'a Prompt>,
    pub queued: u32,
    pub timeouts: &'a TimeoutConfig,
}

impl<'a> GateView<'a> {
    /// The view of `gate` now.
    pub fn of(gate: &'a Gate) -> GateView<'a> {
        GateView {
            active: gate.active(),
            queued: gate.prompts().count().saturating_sub(1) as u32,
            timeouts: &gate.config().file.timeouts,
        }
    }
}
