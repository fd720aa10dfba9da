//! The real force-feedback backend: finds an evdev device with `FF_RUMBLE` or `FF_PERIODIC`
//! (or the one the config names), sets its gain, uploads and plays the cue's effects, stops and
//! erases them, and turns a vanished device (`ENODEV`) into a lasting "unavailable" state.

use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use evdev::{Device, FFEffect, FFEffectCode};
use tracing::{debug, info, warn};

use crate::config::Config;
use crate::cue::{FfKind, cue_effects, gain_value};
use crate::error::HapticsError;
use crate::haptics::{Availability, Haptics, Unavailable};

/// Why no device was chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Miss {
    /// Auto-discovery found no device that fits.
    NoDevice,
    /// The named device does not exist or could not be opened (the reason).
    NotFound(String),
    /// The named device exists but does not fit (its description).
    Mismatch(String),
}

/// Picks a device from `candidates`: the first that `fits` when `wanted` is empty, otherwise the
/// one whose name is exactly `wanted`.
pub fn choose<T>(
    wanted: &str,
    candidates: impl IntoIterator<Item = (PathBuf, T)>,
    name: impl Fn(&T) -> Option<&str>,
    fits: impl Fn(&T) -> bool,
) -> Result<(PathBuf, T), Miss> {
    if wanted.is_empty() {
        return candidates
            .into_iter()
            .find(|(_, d)| fits(d))
            .ok_or(Miss::NoDevice);
    }
    let (path, dev) = candidates
        .into_iter()
        .find(|(_, d)| name(d) == Some(wanted))
        .ok_or_else(|| Miss::NotFound("no input device has that name".to_owned()))?;
    if fits(&dev) {
        Ok((path, dev))
    } else {
        Err(Miss::Mismatch(format!("{wanted} ({})", path.display())))
    }
}

/// Finds a device through `evdev::enumerate()`, or opens `wanted` directly when it is a path.
pub fn find_device(
    wanted: &str,
    fits: impl Fn(&Device) -> bool,
) -> Result<(PathBuf, Device), Miss> {
    if wanted.starts_with('/') {
        let path = PathBuf::from(wanted);
        let device = Device::open(&path).map_err(|e| Miss::NotFound(e.to_string()))?;
        return if fits(&device) {
            Ok((path, device))
        } else {
            Err(Miss::Mismatch(describe(&path, &device)))
        };
    }
    choose(wanted, evdev::enumerate(), |d| d.name(), fits)
}

/// Whether an I/O error means the device is gone (unplugged, or revoked by logind).
pub fn is_disconnect(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::ENODEV)
}

/// `EVIOCGVERSION`: `_IOR('E', 0x01, int)`.
const EVIOCGVERSION: libc::c_ulong = 0x8004_4501;

/// Whether the kernel still has `device`: once it is unplugged every ioctl on its open node
/// fails with `ENODEV` (a cheap one is asked; any other answer counts as present).
fn still_there(device: &Device) -> bool {
    use std::os::fd::AsRawFd;
    let mut version: libc::c_int = 0;
    // SAFETY: EVIOCGVERSION writes one int through the pointer, which points at `version`.
    let r = unsafe { libc::ioctl(device.as_raw_fd(), EVIOCGVERSION, &mut version) };
    r >= 0 || !is_disconnect(&io::Error::last_os_error())
}

/// Which effect kind a device can play, preferring rumble (what vibration motors expose).
pub fn ff_kind(has_rumble: bool, has_periodic: bool) -> Option<FfKind> {
    match (has_rumble, has_periodic) {
        (true, _) => Some(FfKind::Rumble),
        (false, true) => Some(FfKind::Periodic),
        (false, false) => None,
    }
}

fn device_ff_kind(device: &Device) -> Option<FfKind> {
    let ff = device.supported_ff()?;
    ff_kind(
        ff.contains(FFEffectCode::FF_RUMBLE),
        ff.contains(FFEffectCode::FF_PERIODIC),
    )
}

fn describe(path: &Path, device: &Device) -> String {
    format!(
        "{} ({})",
        device.name().unwrap_or("unnamed"),
        path.display()
    )
}

struct Ready {
    name: String,
    device: Device,
    kind: FfKind,
    has_gain: bool,
    /// The current cue's uploaded effects; dropping one erases it from the device.
    effects: Vec<FFEffect>,
}

enum State {
    Ready(Box<Ready>),
    Unavailable(Unavailable),
}

/// Force feedback through an evdev device.
pub struct EvdevHaptics {
    config: Config,
    state: State,
}

impl EvdevHaptics {
    /// Finds a device as the config says. Never fails: without a usable device the backend is
    /// [`Availability::Unavailable`] with the reason (`no_device` when there is none at all).
    pub fn discover(config: &Config) -> EvdevHaptics {
        let state = if !config.enabled {
            State::Unavailable(Unavailable::Disabled)
        } else {
            match find_device(&config.device, |d| device_ff_kind(d).is_some()) {
                Ok((path, device)) => Self::ready(config, &path, device),
                Err(Miss::NoDevice) => State::Unavailable(Unavailable::NoDevice),
                Err(Miss::NotFound(error)) => State::Unavailable(Unavailable::DeviceNotFound {
                    wanted: config.device.clone(),
                    error,
                }),
                Err(Miss::Mismatch(device)) => {
                    State::Unavailable(Unavailable::NoForceFeedback { device })
                }
            }
        };
        match &state {
            State::Ready(r) => info!(device = %r.name, kind = ?r.kind, "haptics available"),
            State::Unavailable(why) => {
                info!(
                    reason = why.code(),
                    "haptics unavailable ({why}); visual fallback"
                )
            }
        }
        EvdevHaptics {
            config: config.clone(),
            state,
        }
    }

    fn ready(config: &Config, path: &Path, device: Device) -> State {
        let name = describe(path, &device);
        let Some(kind) = device_ff_kind(&device) else {
            return State::Unavailable(Unavailable::NoForceFeedback { device: name });
        };
        let needed = config.cue.pulses as usize;
        let max = device.max_ff_effects();
        if max < needed {
            return State::Unavailable(Unavailable::TooFewEffectSlots {
                device: name,
                needed,
                max,
            });
        }
        let has_gain = device
            .supported_ff()
            .is_some_and(|ff| ff.contains(FFEffectCode::FF_GAIN));
        State::Ready(Box::new(Ready {
            name,
            device,
            kind,
            has_gain,
            effects: Vec::new(),
        }))
    }

    /// Looks for a device again (after a hotplug): the only way out of `Disconnected`.
    pub fn rediscover(&mut self) {
        let _ = self.stop_cue();
        *self = EvdevHaptics::discover(&self.config);
    }

    /// Maps a device error: `ENODEV` makes the backend unavailable for good (until
    /// [`EvdevHaptics::rediscover`]), anything else is reported as it is.
    fn fail(&mut self, op: &'static str, source: io::Error) -> HapticsError {
        let device = match &self.state {
            State::Ready(r) => r.name.clone(),
            State::Unavailable(why) => return HapticsError::Unavailable(why.clone()),
        };
        if is_disconnect(&source) {
            warn!(%device, "force-feedback device disconnected; visual fallback");
            let why = Unavailable::Disconnected { device };
            self.state = State::Unavailable(why.clone());
            HapticsError::Unavailable(why)
        } else {
            warn!(%device, "force feedback: {op} failed: {source}");
            HapticsError::Device { device, op, source }
        }
    }

    fn play(&mut self) -> Result<(), (&'static str, io::Error)> {
        let State::Ready(r) = &mut self.state else {
            return Ok(());
        };
        if r.has_gain {
            r.device
                .set_ff_gain(gain_value(self.config.gain))
                .map_err(|e| ("set gain", e))?;
        }
        for data in cue_effects(&self.config.cue, r.kind) {
            let effect = r
                .device
                .upload_ff_effect(data)
                .map_err(|e| ("upload effect", e))?;
            r.effects.push(effect);
        }
        for effect in &mut r.effects {
            effect.play(1).map_err(|e| ("play effect", e))?;
        }
        debug!(device = %r.name, effects = r.effects.len(), "cue started");
        Ok(())
    }
}

impl Haptics for EvdevHaptics {
    fn availability(&self) -> Availability {
        match &self.state {
            // Unplugged while idle: no write has failed yet, but the kernel already says so.
            State::Ready(r) if !still_there(&r.device) => {
                Availability::Unavailable(Unavailable::Disconnected {
                    device: r.name.clone(),
                })
            }
            State::Ready(r) => Availability::Available {
                device: r.name.clone(),
            },
            State::Unavailable(why) => Availability::Unavailable(why.clone()),
        }
    }

    fn start_cue(&mut self) -> Result<Duration, HapticsError> {
        // Stop and erase any earlier cue first; a vanished device shows up as unavailable below.
        self.stop_cue()?;
        if let State::Unavailable(why) = &self.state {
            return Err(HapticsError::Unavailable(why.clone()));
        }
        match self.play() {
            Ok(()) => Ok(self.config.cue.duration()),
            Err((op, e)) => {
                // Fail closed: no half-uploaded cue is left on the device.
                if let State::Ready(r) = &mut self.state {
                    r.effects.clear();
                }
                Err(self.fail(op, e))
            }
        }
    }

    fn stop_cue(&mut self) -> Result<(), HapticsError> {
        let State::Ready(r) = &mut self.state else {
            return Ok(());
        };
        let mut first_error = None;
        for effect in &mut r.effects {
            if let Err(e) = effect.stop() {
                first_error.get_or_insert(e);
            }
        }
        // Erase even when stopping failed: the effects must not outlive the prompt.
        r.effects.clear();
        match first_error {
            None => Ok(()),
            Some(e) => match self.fail("stop effect", e) {
                // The device is gone and its effects with it: nothing left to stop.
                HapticsError::Unavailable(_) => Ok(()),
                other => Err(other),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fake {
        name: &'static str,
        ff: bool,
    }

    fn candidates() -> Vec<(PathBuf, Fake)> {
        vec![
            (
                "/dev/input/event0".into(),
                Fake {
                    name: "Power Button",
                    ff: false,
                },
            ),
            (
                "/dev/input/event3".into(),
                Fake {
                    name: "vibrator",
                    ff: true,
                },
            ),
            (
                "/dev/input/event5".into(),
                Fake {
                    name: "gamepad",
                    ff: true,
                },
            ),
        ]
    }

    fn pick(wanted: &str) -> Result<PathBuf, Miss> {
        choose(wanted, candidates(), |f| Some(f.name), |f| f.ff).map(|(p, _)| p)
    }

    #[test]
    fn auto_discovery_takes_the_first_capable_device() {
        assert_eq!(pick(""), Ok("/dev/input/event3".into()));
        let none: Vec<(PathBuf, Fake)> = Vec::new();
        assert_eq!(
            choose("", none, |f| Some(f.name), |f| f.ff).map(|(p, _)| p),
            Err(Miss::NoDevice)
        );
    }

    #[test]
    fn a_named_device_is_taken_only_if_it_fits() {
        assert_eq!(pick("gamepad"), Ok("/dev/input/event5".into()));
        assert!(matches!(pick("Power Button"), Err(Miss::Mismatch(d)) if d.contains("event0")));
        assert!(matches!(pick("nothing"), Err(Miss::NotFound(_))));
    }

    #[test]
    fn rumble_is_preferred_and_periodic_is_a_fallback() {
        assert_eq!(ff_kind(true, true), Some(FfKind::Rumble));
        assert_eq!(ff_kind(false, true), Some(FfKind::Periodic));
        assert_eq!(ff_kind(false, false), None);
    }

    #[test]
    fn only_enodev_counts_as_disconnect() {
        assert!(is_disconnect(&io::Error::from_raw_os_error(libc::ENODEV)));
        assert!(!is_disconnect(&io::Error::from_raw_os_error(libc::EIO)));
        assert!(!is_disconnect(&io::Error::from_raw_os_error(libc::EACCES)));
    }

    /// This machine has no /dev/input at all: the real enumeration must find nothing and the
    /// backend must say `no_device`, not fail.
    #[test]
    fn no_device_on_this_machine_is_unavailable_not_an_error() {
        if evdev::enumerate().next().is_some() {
            eprintln!("skipped: this machine has evdev devices");
            return;
        }
        let mut h = EvdevHaptics::discover(&Config::default());
        assert_eq!(
            h.availability(),
            Availability::Unavailable(Unavailable::NoDevice)
        );
        assert_eq!(Unavailable::NoDevice.code(), "no_device");
        match h.start_cue() {
            Err(HapticsError::Unavailable(Unavailable::NoDevice)) => {}
            other => panic!("expected Unavailable(no_device), got {other:?}"),
        }
        assert!(h.stop_cue().is_ok());
    }

    #[test]
    fn disabled_and_missing_configured_device_are_reasons() {
        let off = Config {
            enabled: false,
            ..Config::default()
        };
        assert_eq!(
            EvdevHaptics::discover(&off).availability(),
            Availability::Unavailable(Unavailable::Disabled)
        );
        let named = Config {
            device: "/nonexistent/event9".into(),
            ..Config::default()
        };
        match EvdevHaptics::discover(&named).availability() {
            Availability::Unavailable(Unavailable::DeviceNotFound { wanted, error }) => {
                assert_eq!(wanted, "/nonexistent/event9");
                assert!(!error.is_empty());
            }
            other => panic!("expected device_not_found, got {other:?}"),
        }
    }
}
