//! The `Haptics` trait every force-feedback backend implements (evdev on hardware, recording in
//! tests), and the availability state with the reason haptics cannot be used.

use std::fmt;
use std::time::Duration;

use crate::error::HapticsError;

/// Why haptic confirmation cannot be offered right now. Every variant means "fall back to visual".
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unavailable {
    /// `[haptics] enabled = false`.
    Disabled,
    /// No evdev device with `FF_RUMBLE` or `FF_PERIODIC` was found.
    NoDevice,
    /// No multitouch (protocol B) evdev device was found.
    NoTouchDevice,
    /// The configured device does not exist (or could not be opened: `error`).
    DeviceNotFound { wanted: String, error: String },
    /// The configured device exists but has neither `FF_RUMBLE` nor `FF_PERIODIC`.
    NoForceFeedback { device: String },
    /// The configured touch device is not a multitouch protocol B device.
    NotMultitouch { device: String },
    /// The device holds fewer effects at once than the cue has pulses.
    TooFewEffectSlots {
        device: String,
        needed: usize,
        max: usize,
    },
    /// The device went away (`ENODEV`); it is not retried until rediscovery.
    Disconnected { device: String },
}

impl Unavailable {
    /// A stable reason code for logs and the audit record (`no_device`, `disconnected`, …).
    pub fn code(&self) -> &'static str {
        match self {
            Unavailable::Disabled => "disabled",
            Unavailable::NoDevice => "no_device",
            Unavailable::NoTouchDevice => "no_touch_device",
            Unavailable::DeviceNotFound { .. } => "device_not_found",
            Unavailable::NoForceFeedback { .. } => "no_force_feedback",
            Unavailable::NotMultitouch { .. } => "not_multitouch",
            Unavailable::TooFewEffectSlots { .. } => "too_few_effect_slots",
            Unavailable::Disconnected { .. } => "disconnected",
        }
    }
}

impl fmt::Display for Unavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unavailable::Disabled => write!(f, "disabled in config"),
            Unavailable::NoDevice => write!(f, "no force-feedback input device found"),
            Unavailable::NoTouchDevice => write!(f, "no multitouch input device found"),
            Unavailable::DeviceNotFound { wanted, error } => {
                write!(f, "configured device {wanted:?} not found: {error}")
            }
            Unavailable::NoForceFeedback { device } => {
                write!(f, "{device} has neither FF_RUMBLE nor FF_PERIODIC")
            }
            Unavailable::NotMultitouch { device } => {
                write!(f, "{device} is not a multitouch (protocol B) device")
            }
            Unavailable::TooFewEffectSlots {
                device,
                needed,
                max,
            } => write!(f, "{device} holds {max} effects, the cue needs {needed}"),
            Unavailable::Disconnected { device } => write!(f, "{device} was disconnected"),
        }
    }
}

/// Whether a backend can play a cue now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Availability {
    /// Ready; `device` names it for logs.
    Available { device: String },
    /// Not usable, with the reason.
    Unavailable(Unavailable),
}

impl Availability {
    /// True when a cue can be played.
    pub fn is_available(&self) -> bool {
        matches!(self, Availability::Available { .. })
    }
}

/// A force-feedback backend that plays the "confirmation needed" cue.
pub trait Haptics {
    /// Whether a cue can be played, and why not.
    fn availability(&self) -> Availability;

    /// Uploads and starts the configured cue (stopping and erasing any earlier one first).
    /// Returns how long the cue lasts; the caller calls [`Haptics::stop_cue`] after that or when
    /// the prompt ends, whichever is first. A device that disappears makes the backend
    /// unavailable and the call fails with [`HapticsError::Unavailable`].
    fn start_cue(&mut self) -> Result<Duration, HapticsError>;

    /// Stops and erases the cue's effects; does nothing when no cue is loaded.
    fn stop_cue(&mut self) -> Result<(), HapticsError>;
}
