//! A [`Haptics`] backend that records what it was asked to do instead of touching hardware,
//! for tests here and in the compositor. It builds the same effects the evdev backend uploads.

use std::time::Duration;

use evdev::FFEffectData;

use crate::config::Config;
use crate::cue::{FfKind, cue_effects, gain_value};
use crate::error::HapticsError;
use crate::haptics::{Availability, Haptics, Unavailable};

/// One thing the backend was asked to do.
#[derive(Debug, Clone, PartialEq)]
pub enum Recorded {
    /// A cue was uploaded with this gain and these effects, and played.
    Started {
        gain: u16,
        effects: Vec<FFEffectData>,
    },
    /// The loaded cue was stopped and erased.
    Stopped,
}

/// Records cues; can be made unavailable or disconnected to test the fallback paths.
#[derive(Debug, Clone)]
pub struct RecordingHaptics {
    config: Config,
    kind: FfKind,
    state: Availability,
    loaded: bool,
    calls: Vec<Recorded>,
}

/// The device name a recording backend reports.
pub const RECORDING_DEVICE: &str = "recording";

impl RecordingHaptics {
    /// An available backend that plays `kind` effects for `config`'s cue.
    pub fn new(config: &Config, kind: FfKind) -> RecordingHaptics {
        RecordingHaptics {
            config: config.clone(),
            kind,
            state: Availability::Available {
                device: RECORDING_DEVICE.to_owned(),
            },
            loaded: false,
            calls: Vec::new(),
        }
    }

    /// A backend that is unavailable for `why`.
    pub fn unavailable(config: &Config, why: Unavailable) -> RecordingHaptics {
        RecordingHaptics {
            state: Availability::Unavailable(why),
            ..RecordingHaptics::new(config, FfKind::Rumble)
        }
    }

    /// Behaves as if the device were unplugged: its effects vanish and it becomes unavailable.
    pub fn disconnect(&mut self) {
        self.loaded = false;
        self.state = Availability::Unavailable(Unavailable::Disconnected {
            device: RECORDING_DEVICE.to_owned(),
        });
    }

    /// Everything recorded so far, oldest first.
    pub fn calls(&self) -> &[Recorded] {
        &self.calls
    }

    /// Whether a cue's effects are on the (pretend) device now.
    pub fn cue_loaded(&self) -> bool {
        self.loaded
    }
}

impl Haptics for RecordingHaptics {
    fn availability(&self) -> Availability {
        self.state.clone()
    }

    fn start_cue(&mut self) -> Result<Duration, HapticsError> {
        if let Availability::Unavailable(why) = &self.state {
            return Err(HapticsError::Unavailable(why.clone()));
        }
        self.stop_cue()?;
        self.calls.push(Recorded::Started {
            gain: gain_value(self.config.gain),
            effects: cue_effects(&self.config.cue, self.kind),
        });
        self.loaded = true;
        Ok(self.config.cue.duration())
    }

    fn stop_cue(&mut self) -> Result<(), HapticsError> {
        if std::mem::take(&mut self.loaded) {
            self.calls.push(Recorded::Stopped);
        }
        Ok(())
    }
}
