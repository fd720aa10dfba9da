//! Double-tap detection: pure logic over [`TouchEvent`] timestamps (no clocks, no sleeping).
//! A tap is one short, nearly stationary, lone finger contact; a double tap is two taps whose
//! gap (first lift to second touch) and distance are within the configured limits.

use std::time::Duration;

use crate::config::TapConfig;
use crate::touch::{Position, TouchEvent, TouchKind};

/// Most simultaneous contacts tracked; more means the surface is being pressed flat.
const MAX_CONTACTS: usize = 16;

/// One completed tap.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tap {
    pub down: Duration,
    pub up: Duration,
    /// Where it touched down.
    pub position: Position,
}

/// Why a contact that ended was not a tap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotATap {
    /// Held longer than `max_tap_ms` (a press).
    TooLong,
    /// Moved farther than `max_movement_mm` (a drag).
    Moved,
    /// Another contact touched at the same time (two fingers, or a palm on the surface).
    MultiContact,
    /// The device classified the contact as a palm.
    Palm,
    /// It touched before the detector was armed (before the cue was felt).
    BeforeArmed,
    /// The source cancelled all contacts, or reported an impossible sequence.
    Cancelled,
    /// Time went backwards; everything pending is dropped.
    ClockWentBack,
}

/// Why a tap did not pair with the previous one; it stands as a new first tap instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unpaired {
    /// The gap exceeded `max_interval_ms`.
    TooSlow,
    /// The gap was under `min_interval_ms` (contact bounce).
    TooQuick,
    /// It landed farther than `max_distance_mm` from the first.
    TooFar,
}

/// What a contact ending meant.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Verdict {
    /// A tap with no pending partner: it may become the first of a pair.
    FirstTap(Tap),
    /// A tap that could not pair with the pending one; it is now the pending one.
    Unpaired(Unpaired, Tap),
    /// Two taps that make a double tap. The pending state is cleared.
    DoubleTap { first: Tap, second: Tap },
    /// Not a tap; any pending first tap is dropped.
    NotATap(NotATap),
}

#[derive(Debug, Clone, Copy)]
struct Contact {
    slot: u32,
    down: Duration,
    origin: Position,
    max_move_sq: f64,
    palm: bool,
    shared: bool,
}

/// Feeds on touch events and reports a [`Verdict`] whenever a contact ends.
#[derive(Debug, Clone)]
pub struct DoubleTapDetector {
    max_interval: Duration,
    min_interval: Duration,
    max_tap: Duration,
    max_move_sq: f64,
    max_distance_sq: f64,
    armed_from: Duration,
    contacts: Vec<Contact>,
    pending: Option<Tap>,
    last_time: Option<Duration>,
}

impl DoubleTapDetector {
    /// A detector with the configured thresholds, armed from the start of time.
    pub fn new(config: &TapConfig) -> DoubleTapDetector {
        DoubleTapDetector {
            max_interval: Duration::from_millis(config.max_interval_ms.into()),
            min_interval: Duration::from_millis(config.min_interval_ms.into()),
            max_tap: Duration::from_millis(config.max_tap_ms.into()),
            max_move_sq: config.max_movement_mm * config.max_movement_mm,
            max_distance_sq: config.max_distance_mm * config.max_distance_mm,
            armed_from: Duration::ZERO,
            contacts: Vec::new(),
            pending: None,
            last_time: None,
        }
    }

    /// Contacts that touch down before `t` (source clock) never count as taps.
    pub fn arm_from(&mut self, t: Duration) {
        self.armed_from = t;
    }

    /// Forgets every contact and any pending first tap.
    pub fn reset(&mut self) {
        self.contacts.clear();
        self.pending = None;
    }

    /// The pending first tap, if any.
    pub fn pending(&self) -> Option<Tap> {
        self.pending
    }

    /// Feeds one event; returns a verdict when it ended a contact (or invalidated state).
    pub fn feed(&mut self, ev: &TouchEvent) -> Option<Verdict> {
        if self.last_time.is_some_and(|last| ev.time < last) {
            self.last_time = Some(ev.time);
            self.reset();
            // A contact starting after the jump is measured on the new clock and may count.
            if ev.kind == TouchKind::Down {
                self.down(ev);
            }
            return Some(Verdict::NotATap(NotATap::ClockWentBack));
        }
        self.last_time = Some(ev.time);
        match ev.kind {
            TouchKind::Down => self.down(ev),
            TouchKind::Motion => {
                if let Some(c) = self.contacts.iter_mut().find(|c| c.slot == ev.slot) {
                    c.moved_to(ev.position);
                    c.palm |= ev.palm;
                }
                None
            }
            TouchKind::Up => self.up(ev),
            TouchKind::Cancel => {
                self.reset();
                Some(Verdict::NotATap(NotATap::Cancelled))
            }
        }
    }

    fn down(&mut self, ev: &TouchEvent) -> Option<Verdict> {
        if self.contacts.iter().any(|c| c.slot == ev.slot) || self.contacts.len() >= MAX_CONTACTS {
            // A slot touching twice without lifting is a broken sequence: trust nothing.
            self.reset();
            return Some(Verdict::NotATap(NotATap::Cancelled));
        }
        let shared = !self.contacts.is_empty();
        if shared {
            // Two contacts at once: none of them is a tap, and no pair can complete through them.
            for c in &mut self.contacts {
                c.shared = true;
            }
            self.pending = None;
        }
        self.contacts.push(Contact {
            slot: ev.slot,
            down: ev.time,
            origin: ev.position,
            max_move_sq: 0.0,
            palm: ev.palm,
            shared,
        });
        None
    }

    fn up(&mut self, ev: &TouchEvent) -> Option<Verdict> {
        // A lift for a contact we never saw touch (it began before we listened): ignore it.
        let i = self.contacts.iter().position(|c| c.slot == ev.slot)?;
        let mut c = self.contacts.swap_remove(i);
        c.moved_to(ev.position);
        c.palm |= ev.palm;
        let reason = if c.palm {
            Some(NotATap::Palm)
        } else if c.shared {
            Some(NotATap::MultiContact)
        } else if c.down < self.armed_from {
            Some(NotATap::BeforeArmed)
        } else if ev.time.saturating_sub(c.down) > self.max_tap {
            Some(NotATap::TooLong)
        } else if c.max_move_sq > self.max_move_sq {
            Some(NotATap::Moved)
        } else {
            None
        };
        if let Some(reason) = reason {
            self.pending = None;
            return Some(Verdict::NotATap(reason));
        }
        let tap = Tap {
            down: c.down,
            up: ev.time,
            position: c.origin,
        };
        let Some(first) = self.pending.take() else {
            self.pending = Some(tap);
            return Some(Verdict::FirstTap(tap));
        };
        let gap = tap.down.saturating_sub(first.up);
        let unpaired = if gap > self.max_interval {
            Some(Unpaired::TooSlow)
        } else if gap < self.min_interval {
            Some(Unpaired::TooQuick)
        } else if first.position.distance_sq(tap.position) > self.max_distance_sq {
            Some(Unpaired::TooFar)
        } else {
            None
        };
        match unpaired {
            Some(why) => {
                self.pending = Some(tap);
                Some(Verdict::Unpaired(why, tap))
            }
            None => Some(Verdict::DoubleTap { first, second: tap }),
        }
    }
}

impl Contact {
    fn moved_to(&mut self, p: Position) {
        self.max_move_sq = self.max_move_sq.max(self.origin.distance_sq(p));
    }
}
