//! Touch input read straight from an evdev multitouch device: the protocol B decoder (slots,
//! tracking ids, positions, tool type, `BTN_TOUCH`, `SYN_REPORT`/`SYN_DROPPED`) that turns kernel
//! frames into our [`TouchEvent`]s, and a reader that finds and drains such a device.

use std::io;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use evdev::{AbsoluteAxisCode, Device, EventSummary, InputEvent, KeyCode, SynchronizationCode};
use tracing::{debug, warn};

use crate::config::Config;
use crate::error::HapticsError;
use crate::evdev_ff::Miss;
use crate::haptics::Unavailable;
use crate::touch::{Position, Scale, TouchEvent, TouchKind};

/// `ABS_MT_TOOL_TYPE` value of a palm (linux/input.h `MT_TOOL_PALM`).
pub const MT_TOOL_PALM: i32 = 2;
/// Most slots tracked; real panels have 10 or fewer, and this bounds memory on a hostile device.
pub const MAX_SLOTS: usize = 64;

/// An event that breaks the multitouch protocol.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("ABS_MT_SLOT {slot} is outside 0..{max}")]
    SlotOutOfRange { slot: i32, max: usize },
    #[error("event timestamp is before 1970")]
    TimeBeforeEpoch,
}

#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    /// Tracking id of the contact in this slot, if one is down.
    id: Option<i32>,
    x: i32,
    y: i32,
    palm: bool,
    /// A new contact began in this frame.
    began: bool,
    /// The contact's position or tool changed in this frame.
    changed: bool,
    /// A contact ended in this frame, with where it was and whether it was a palm.
    ended: Option<(i32, i32, bool)>,
}

/// Multitouch protocol B decoder: feed it every event of a device in order; each `SYN_REPORT`
/// emits that frame's contact changes (ups first, then downs, then motions), stamped with the
/// report's time.
#[derive(Debug, Clone)]
pub struct MtDecoder {
    scale: Scale,
    slots: Vec<Slot>,
    /// `None` after an out-of-range slot: events are ignored until a valid `ABS_MT_SLOT`.
    current: Option<usize>,
    /// `BTN_TOUCH 0` seen in this frame: every contact must be gone by its end.
    all_released: bool,
    /// `SYN_DROPPED` seen: discard until the next `SYN_REPORT`, then cancel everything.
    dropped: bool,
}

impl MtDecoder {
    /// A decoder for a device whose current slot is `initial_slot` (its `ABS_MT_SLOT` value).
    pub fn new(scale: Scale, initial_slot: i32) -> MtDecoder {
        MtDecoder {
            scale,
            slots: Vec::new(),
            current: usize::try_from(initial_slot)
                .ok()
                .filter(|s| *s < MAX_SLOTS),
            all_released: false,
            dropped: false,
        }
    }

    fn slot_mut(&mut self) -> Option<&mut Slot> {
        let i = self.current?;
        if self.slots.len() <= i {
            self.slots.resize(i + 1, Slot::default());
        }
        self.slots.get_mut(i)
    }

    /// Feeds one kernel event; appends any finished frame's events to `out`.
    pub fn feed(&mut self, ev: &InputEvent, out: &mut Vec<TouchEvent>) -> Result<(), DecodeError> {
        if self.dropped && !is_report(ev) {
            return Ok(());
        }
        match ev.destructure() {
            EventSummary::Synchronization(_, SynchronizationCode::SYN_REPORT, _) => {
                let time = ev
                    .timestamp()
                    .duration_since(SystemTime::UNIX_EPOCH)
                    .map_err(|_| DecodeError::TimeBeforeEpoch)?;
                self.end_frame(time, out);
            }
            EventSummary::Synchronization(_, SynchronizationCode::SYN_DROPPED, _) => {
                self.dropped = true;
            }
            EventSummary::AbsoluteAxis(_, AbsoluteAxisCode::ABS_MT_SLOT, v) => {
                match usize::try_from(v).ok().filter(|s| *s < MAX_SLOTS) {
                    Some(s) => self.current = Some(s),
                    None => {
                        self.current = None;
                        return Err(DecodeError::SlotOutOfRange {
                            slot: v,
                            max: MAX_SLOTS,
                        });
                    }
                }
            }
            EventSummary::AbsoluteAxis(_, AbsoluteAxisCode::ABS_MT_TRACKING_ID, v) => {
                if let Some(slot) = self.slot_mut() {
                    tracking_id(slot, v);
                }
            }
            EventSummary::AbsoluteAxis(_, AbsoluteAxisCode::ABS_MT_POSITION_X, v) => {
                if let Some(slot) = self.slot_mut() {
                    slot.x = v;
                    slot.changed = true;
                }
            }
            EventSummary::AbsoluteAxis(_, AbsoluteAxisCode::ABS_MT_POSITION_Y, v) => {
                if let Some(slot) = self.slot_mut() {
                    slot.y = v;
                    slot.changed = true;
                }
            }
            EventSummary::AbsoluteAxis(_, AbsoluteAxisCode::ABS_MT_TOOL_TYPE, v) => {
                if let Some(slot) = self.slot_mut() {
                    slot.palm = v == MT_TOOL_PALM;
                    slot.changed = true;
                }
            }
            EventSummary::Key(_, KeyCode::BTN_TOUCH, 0) => self.all_released = true,
            _ => {}
        }
        Ok(())
    }

    fn end_frame(&mut self, time: Duration, out: &mut Vec<TouchEvent>) {
        let scale = self.scale;
        let event = |slot: usize, kind, position, palm| TouchEvent {
            time,
            slot: slot as u32,
            kind,
            position,
            palm,
        };
        if std::mem::take(&mut self.dropped) {
            // The kernel lost events: we no longer know which contacts are down.
            out.push(event(0, TouchKind::Cancel, Position::default(), false));
            self.slots.clear();
            self.all_released = false;
            return;
        }
        if std::mem::take(&mut self.all_released) {
            for s in self.slots.iter_mut() {
                if s.id.take().is_some() && !s.began {
                    s.ended = Some((s.x, s.y, s.palm));
                }
                s.began = false;
            }
        }
        for (i, s) in self.slots.iter_mut().enumerate() {
            if let Some((x, y, palm)) = s.ended.take() {
                out.push(event(i, TouchKind::Up, scale.to_mm(x, y), palm));
            }
        }
        for (i, s) in self.slots.iter_mut().enumerate() {
            if std::mem::take(&mut s.began) && s.id.is_some() {
                s.changed = false;
                out.push(event(i, TouchKind::Down, scale.to_mm(s.x, s.y), s.palm));
            }
        }
        for (i, s) in self.slots.iter_mut().enumerate() {
            if std::mem::take(&mut s.changed) && s.id.is_some() {
                out.push(event(i, TouchKind::Motion, scale.to_mm(s.x, s.y), s.palm));
            }
        }
    }
}

fn is_report(ev: &InputEvent) -> bool {
    matches!(
        ev.destructure(),
        EventSummary::Synchronization(_, SynchronizationCode::SYN_REPORT, _)
    )
}

fn tracking_id(slot: &mut Slot, v: i32) {
    if v < 0 {
        if slot.id.take().is_some() {
            if slot.began {
                // Touched and lifted within one frame: no duration, never reported.
                slot.began = false;
            } else {
                slot.ended = Some((slot.x, slot.y, slot.palm));
            }
        }
        return;
    }
    match slot.id {
        Some(id) if id == v => {}
        Some(_) => {
            // A new contact replaced the old one without a lift in between.
            if !slot.began {
                slot.ended = Some((slot.x, slot.y, slot.palm));
            }
            slot.id = Some(v);
            slot.began = true;
            slot.palm = false;
        }
        None => {
            slot.id = Some(v);
            slot.began = true;
            slot.palm = false;
        }
    }
}

/// Whether a device speaks multitouch protocol B with positions.
pub fn is_protocol_b(device: &Device) -> bool {
    device.supported_absolute_axes().is_some_and(|axes| {
        [
            AbsoluteAxisCode::ABS_MT_SLOT,
            AbsoluteAxisCode::ABS_MT_TRACKING_ID,
            AbsoluteAxisCode::ABS_MT_POSITION_X,
            AbsoluteAxisCode::ABS_MT_POSITION_Y,
        ]
        .into_iter()
        .all(|a| axes.contains(a))
    })
}

/// A touch device read directly through evdev (when the compositor does not forward touch).
pub struct EvdevTouchReader {
    name: String,
    device: Option<Device>,
    decoder: MtDecoder,
}

impl EvdevTouchReader {
    /// Opens the configured touch device, or the first protocol B device. `Err(Unavailable)`
    /// when there is none.
    pub fn discover(config: &Config) -> Result<EvdevTouchReader, Unavailable> {
        if !config.enabled {
            return Err(Unavailable::Disabled);
        }
        let wanted = config.touch_device.as_str();
        let (path, device) =
            crate::evdev_ff::find_device(wanted, is_protocol_b).map_err(|miss| match miss {
                Miss::NoDevice => Unavailable::NoTouchDevice,
                Miss::NotFound(error) => Unavailable::DeviceNotFound {
                    wanted: wanted.to_owned(),
                    error,
                },
                Miss::Mismatch(device) => Unavailable::NotMultitouch { device },
            })?;
        Self::from_device(path, device, config.tap.fallback_units_per_mm).map_err(|e| {
            Unavailable::DeviceNotFound {
                wanted: wanted.to_owned(),
                error: e.to_string(),
            }
        })
    }

    fn from_device(
        path: PathBuf,
        device: Device,
        fallback_units_per_mm: f64,
    ) -> io::Result<EvdevTouchReader> {
        let mut res = (0, 0);
        let mut slot = 0;
        for (axis, info) in device.get_absinfo()? {
            match axis {
                AbsoluteAxisCode::ABS_MT_POSITION_X => res.0 = info.resolution(),
                AbsoluteAxisCode::ABS_MT_POSITION_Y => res.1 = info.resolution(),
                AbsoluteAxisCode::ABS_MT_SLOT => slot = info.value(),
                _ => {}
            }
        }
        // Non-blocking so the compositor can drain it from its event loop on readiness.
        device.set_nonblocking(true)?;
        let name = format!(
            "{} ({})",
            device.name().unwrap_or("unnamed"),
            path.display()
        );
        debug!(device = %name, "touch device opened");
        Ok(EvdevTouchReader {
            name,
            device: Some(device),
            decoder: MtDecoder::new(
                Scale::from_resolution(res.0, res.1, fallback_units_per_mm),
                slot,
            ),
        })
    }

    /// The device, for registering its fd with an event loop; `None` once it has gone.
    pub fn device(&self) -> Option<&Device> {
        self.device.as_ref()
    }

    /// Reads every pending event and appends the resulting touch events to `out`. A vanished
    /// device closes the reader and reports `Unavailable(Disconnected)`; a malformed event is
    /// logged and skipped.
    pub fn read(&mut self, out: &mut Vec<TouchEvent>) -> Result<(), HapticsError> {
        let Some(device) = self.device.as_mut() else {
            return Err(HapticsError::Unavailable(Unavailable::Disconnected {
                device: self.name.clone(),
            }));
        };
        let fetched = device
            .fetch_events()
            .map(|events| events.collect::<Vec<_>>());
        let events = match fetched {
            Ok(events) => events,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
            Err(e) if crate::evdev_ff::is_disconnect(&e) => {
                warn!(device = %self.name, "touch device disconnected");
                self.device = None;
                return Err(HapticsError::Unavailable(Unavailable::Disconnected {
                    device: self.name.clone(),
                }));
            }
            Err(source) => {
                return Err(HapticsError::Device {
                    device: self.name.clone(),
                    op: "read touch events",
                    source,
                });
            }
        };
        for ev in &events {
            if let Err(e) = self.decoder.feed(ev, out) {
                warn!(device = %self.name, "bad touch event skipped: {e}");
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This machine has no /dev/input: no touch device, reported as a reason, not a failure.
    #[test]
    fn no_touch_device_on_this_machine_is_a_reason() {
        if evdev::enumerate().next().is_some() {
            eprintln!("skipped: this machine has evdev devices");
            return;
        }
        match EvdevTouchReader::discover(&Config::default()) {
            Err(why) => assert_eq!(why, Unavailable::NoTouchDevice),
            Ok(_) => panic!("found a touch device on a machine without /dev/input"),
        }
        let off = Config {
            enabled: false,
            ..Config::default()
        };
        assert!(matches!(
            EvdevTouchReader::discover(&off),
            Err(Unavailable::Disabled)
        ));
    }
}
