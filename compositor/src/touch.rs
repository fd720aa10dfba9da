//! The touch points down now, by slot: whether each one's down went to the dialog or to a
//! client's surface. A point's focus is decided once, at its down; its motion and its up go to
//! the same place, so a touch ends where it began — one that began on a window lifts on that
//! window even when it moved onto the dialog, and one the dialog took never reaches a client.

use std::collections::HashMap;

use smithay::backend::input::TouchSlot;
use wayland_server::protocol::wl_surface::WlSurface;

/// Where one touch point's events go, decided at its down.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TouchOwner {
    /// The dialog (or the haptic double tap) took its down.
    Dialog,
    /// The clients: the surface it went down on (`None`: no surface was under it).
    Client(Option<WlSurface>),
}

/// The touch points down now.
#[derive(Debug, Default)]
pub struct TouchPoints {
    down: HashMap<TouchSlot, TouchOwner>,
}

impl TouchPoints {
    /// `slot` went down and belongs to `owner` until it lifts. Returns the owner it had if the
    /// slot was already down (its up was lost): that one is over.
    pub(crate) fn went_down(&mut self, slot: TouchSlot, owner: TouchOwner) -> Option<TouchOwner> {
        self.down.insert(slot, owner)
    }

    /// Where `slot`'s events go (`None`: it is not down).
    pub fn owner(&self, slot: TouchSlot) -> Option<&TouchOwner> {
        self.down.get(&slot)
    }

    /// `slot` lifted: where it was.
    pub(crate) fn lifted(&mut self, slot: TouchSlot) -> Option<TouchOwner> {
        self.down.remove(&slot)
    }

    /// Every point was cancelled: whether any was the dialog's and whether any was the
    /// clients'.
    pub(crate) fn cancel_all(&mut self) -> (bool, bool) {
        let dialog = self.down.values().any(|o| *o == TouchOwner::Dialog);
        let clients = self
            .down
            .values()
            .any(|o| matches!(o, TouchOwner::Client(_)));
        self.down.clear();
        (dialog, clients)
    }

    /// The points down on `surface` (it is being destroyed), forgotten: each gets its up.
    pub(crate) fn take_on(&mut self, surface: &WlSurface) -> Vec<TouchSlot> {
        let slots: Vec<TouchSlot> = self
            .down
            .iter()
            .filter(|(_, o)| matches!(o, TouchOwner::Client(Some(s)) if s == surface))
            .map(|(slot, _)| *slot)
            .collect();
        for slot in &slots {
            self.down.remove(slot);
        }
        slots
    }

    /// How many points are down.
    pub fn len(&self) -> usize {
        self.down.len()
    }

    /// Whether no point is down.
    pub fn is_empty(&self) -> bool {
        self.down.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slot(n: u32) -> TouchSlot {
        Some(n).into()
    }

    #[test]
    fn each_point_keeps_the_owner_of_its_down() {
        let mut points = TouchPoints::default();
        assert_eq!(points.went_down(slot(0), TouchOwner::Dialog), None);
        assert_eq!(points.went_down(slot(1), TouchOwner::Client(None)), None);
        assert_eq!(points.owner(slot(0)), Some(&TouchOwner::Dialog));
        assert_eq!(points.owner(slot(1)), Some(&TouchOwner::Client(None)));
        assert_eq!(points.lifted(slot(0)), Some(TouchOwner::Dialog));
        assert_eq!(points.owner(slot(0)), None);
        assert_eq!(points.len(), 1);
        assert_eq!(points.cancel_all(), (false, true));
        assert!(points.is_empty());
    }

    #[test]
    fn a_second_down_on_a_slot_replaces_the_lost_one() {
        let mut points = TouchPoints::default();
        points.went_down(slot(3), TouchOwner::Dialog);
        assert_eq!(
            points.went_down(slot(3), TouchOwner::Client(None)),
            Some(TouchOwner::Dialog)
        );
        assert_eq!(points.cancel_all(), (false, true));
    }
}
