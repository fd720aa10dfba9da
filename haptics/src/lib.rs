//! Haptic confirmation: evdev force-feedback discovery and playback of the "confirmation needed"
//! cue, double-tap detection over multitouch input, and the rule that haptics alone never
//! confirms a destructive or system capability. Without hardware, everything reports
//! [`Availability::Unavailable`] with a reason and callers fall back to visual ([`FALLBACK`]).

pub mod config;
pub mod cue;
pub mod error;
pub mod evdev_ff;
pub mod evdev_touch;
pub mod haptics;
pub mod prompt;
pub mod recording;
pub mod tap;
pub mod touch;

pub use config::{Config, CueConfig, TapConfig, Waveform};
pub use cue::{FfKind, cue_effects};
pub use error::{ConfigError, HapticsError};
pub use evdev_ff::EvdevHaptics;
pub use evdev_touch::{EvdevTouchReader, MtDecoder};
pub use haptics::{Availability, Haptics, Unavailable};
pub use prompt::{FALLBACK, HapticAsk, HapticPrompt, check_haptic_allowed};
pub use recording::{Recorded, RecordingHaptics};
pub use tap::{DoubleTapDetector, NotATap, Tap, Unpaired, Verdict};
pub use touch::{Position, Scale, TouchEvent, TouchKind};
