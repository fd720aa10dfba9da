//! Our own touch event: the one shape both the evdev reader and the compositor's forwarded touch
//! events are turned into before they reach the double-tap detector.

use std::time::Duration;

/// A point on the touch surface in millimetres from the surface's origin. Millimetres, not
/// device units or pixels, so one set of thresholds holds for every surface.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Position {
    pub x: f64,
    pub y: f64,
}

impl Position {
    /// Squared distance in mm² (the detector compares squares to skip a square root).
    pub fn distance_sq(self, other: Position) -> f64 {
        let (dx, dy) = (self.x - other.x, self.y - other.y);
        dx * dx + dy * dy
    }
}

/// What happened to one contact.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TouchKind {
    /// A contact touched the surface.
    Down,
    /// A contact moved or changed (e.g. became a palm).
    Motion,
    /// A contact lifted.
    Up,
    /// The source lost track of all contacts (dropped events, session switch): forget them all.
    Cancel,
}

/// One contact change, stamped with the time of the frame it belongs to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TouchEvent {
    /// Time on the source's clock. Only differences between events of one source matter.
    pub time: Duration,
    /// The contact's slot; unique among contacts touching at the same time.
    pub slot: u32,
    pub kind: TouchKind,
    /// Where the contact is (for `Up`, where it was last seen; ignored for `Cancel`).
    pub position: Position,
    /// The device classified the contact as a palm (`MT_TOOL_PALM`).
    pub palm: bool,
}

impl TouchEvent {
    /// A finger event, for sources that do not classify palms (the compositor's touch events).
    pub fn finger(time: Duration, slot: u32, kind: TouchKind, position: Position) -> TouchEvent {
        TouchEvent {
            time,
            slot,
            kind,
            position,
            palm: false,
        }
    }
}

/// Device units per millimetre on each axis.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scale {
    pub x_units_per_mm: f64,
    pub y_units_per_mm: f64,
}

impl Scale {
    /// The scale from axis resolutions as evdev reports them (units/mm); a resolution of zero
    /// (many devices leave it unset) uses `fallback_units_per_mm`.
    pub fn from_resolution(x_res: i32, y_res: i32, fallback_units_per_mm: f64) -> Scale {
        let pick = |r: i32| {
            if r > 0 {
                f64::from(r)
            } else {
                fallback_units_per_mm
            }
        };
        Scale {
            x_units_per_mm: pick(x_res),
            y_units_per_mm: pick(y_res),
        }
    }

    /// Converts a device-unit position to millimetres.
    pub fn to_mm(self, x: i32, y: i32) -> Position {
        Position {
            x: f64::from(x) / self.x_units_per_mm,
            y: f64::from(y) / self.y_units_per_mm,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scale_uses_resolution_or_fallback() {
        let s = Scale::from_resolution(20, 0, 8.0);
        assert_eq!(s.to_mm(200, 80), Position { x: 10.0, y: 10.0 });
    }

    #[test]
    fn distance_is_squared_millimetres() {
        let a = Position { x: 0.0, y: 0.0 };
        assert_eq!(a.distance_sq(Position { x: 3.0, y: 4.0 }), 25.0);
    }
}
