//! The touch points down now, by slot: whether each one's down went to the dialog or to a
//! client's surface, where it is, and the serial of its down. A point's focus is decided once,
//! at its own down; its motion and its up go to the same place, so a touch ends where it began —
//! one that began on a window lifts on that window even when it moved onto the dialog, and one
//! the dialog took never reaches a client. [`EachPointGrab`] makes Smithay's seat do the same
//! (its default grab sends every point of a sequence to the surface the first one touched).

use std::collections::HashMap;

use smithay::backend::input::TouchSlot;
use smithay::input::touch::{
    DownEvent, GrabStartData, MotionEvent, OrientationEvent, ShapeEvent, TouchGrab,
    TouchInnerHandle, UpEvent,
};
use smithay::utils::{Logical, Point, Serial};
use wayland_server::protocol::wl_surface::WlSurface;

use crate::state::State;

/// Where one touch point's events go, decided at its down.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TouchOwner {
    /// The dialog (or the haptic double tap) took its down.
    Dialog,
    /// The clients: the surface it went down on (`None`: no surface was under it).
    Client(Option<WlSurface>),
}

/// One touch point down.
#[derive(Debug, Clone, PartialEq)]
pub struct TouchPoint {
    pub owner: TouchOwner,
    /// Where it is now (global logical).
    pub at: Point<f64, Logical>,
    /// The serial of its down, as its client was given it (the dialog's: none given).
    pub serial: Option<Serial>,
}

/// The touch points down now.
#[derive(Debug, Default)]
pub struct TouchPoints {
    down: HashMap<TouchSlot, TouchPoint>,
}

impl TouchPoints {
    /// `slot` went down and belongs to `point.owner` until it lifts. Returns the point the slot
    /// had if it was already down (its up was lost): that one is over.
    pub(crate) fn went_down(&mut self, slot: TouchSlot, point: TouchPoint) -> Option<TouchPoint> {
        self.down.insert(slot, point)
    }

    /// Where `slot`'s events go (`None`: it is not down).
    pub fn owner(&self, slot: TouchSlot) -> Option<&TouchOwner> {
        self.down.get(&slot).map(|p| &p.owner)
    }

    /// `slot` moved to `at`.
    pub(crate) fn moved(&mut self, slot: TouchSlot, at: Point<f64, Logical>) {
        if let Some(point) = self.down.get_mut(&slot) {
            point.at = at;
        }
    }

    /// The client's point whose down had `serial`: its slot, surface and place.
    pub(crate) fn by_serial(
        &self,
        serial: Serial,
    ) -> Option<(TouchSlot, &WlSurface, Point<f64, Logical>)> {
        self.down.iter().find_map(|(slot, p)| match &p.owner {
            TouchOwner::Client(Some(surface)) if p.serial == Some(serial) => {
                Some((*slot, surface, p.at))
            }
            _ => None,
        })
    }

    /// `slot` lifted: where it was.
    pub(crate) fn lifted(&mut self, slot: TouchSlot) -> Option<TouchPoint> {
        self.down.remove(&slot)
    }

    /// Every point was cancelled: the clients' points, with where they were.
    pub(crate) fn cancel_all(&mut self) -> Vec<(TouchSlot, Point<f64, Logical>)> {
        let clients = self
            .down
            .iter()
            .filter(|(_, p)| matches!(p.owner, TouchOwner::Client(_)))
            .map(|(slot, p)| (*slot, p.at))
            .collect();
        self.down.clear();
        clients
    }

    /// The points down on `surface` (it is being destroyed), forgotten: each gets its up.
    pub(crate) fn take_on(&mut self, surface: &WlSurface) -> Vec<TouchSlot> {
        let slots: Vec<TouchSlot> = self
            .down
            .iter()
            .filter(|(_, p)| matches!(&p.owner, TouchOwner::Client(Some(s)) if s == surface))
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

/// The seat's touch grab when no move or resize holds it: each point goes to the surface that
/// was under it at its own down (the focus its down brings), so two hands can work on two
/// windows at once. Smithay's default instead hands every later point of a sequence to the
/// surface the first one went down on.
pub struct EachPointGrab {
    /// No grab started this one: what Smithay asks of every grab, never read for it.
    start: GrabStartData<State>,
}

impl Default for EachPointGrab {
    fn default() -> EachPointGrab {
        EachPointGrab {
            start: GrabStartData {
                focus: None,
                slot: TouchSlot::from(None),
                location: Point::from((0.0, 0.0)),
            },
        }
    }
}

impl TouchGrab<State> for EachPointGrab {
    fn down(
        &mut self,
        data: &mut State,
        handle: &mut TouchInnerHandle<'_, State>,
        focus: Option<(WlSurface, Point<f64, Logical>)>,
        event: &DownEvent,
        seq: Serial,
    ) {
        handle.down(data, focus, event, seq);
    }

    fn up(
        &mut self,
        data: &mut State,
        handle: &mut TouchInnerHandle<'_, State>,
        event: &UpEvent,
        seq: Serial,
    ) {
        handle.up(data, event, seq);
    }

    fn motion(
        &mut self,
        data: &mut State,
        handle: &mut TouchInnerHandle<'_, State>,
        focus: Option<(WlSurface, Point<f64, Logical>)>,
        event: &MotionEvent,
        seq: Serial,
    ) {
        handle.motion(data, focus, event, seq);
    }

    fn frame(&mut self, data: &mut State, handle: &mut TouchInnerHandle<'_, State>, seq: Serial) {
        handle.frame(data, seq);
    }

    fn cancel(&mut self, data: &mut State, handle: &mut TouchInnerHandle<'_, State>, seq: Serial) {
        handle.cancel(data, seq);
    }

    fn shape(
        &mut self,
        data: &mut State,
        handle: &mut TouchInnerHandle<'_, State>,
        event: &ShapeEvent,
        seq: Serial,
    ) {
        handle.shape(data, event, seq);
    }

    fn orientation(
        &mut self,
        data: &mut State,
        handle: &mut TouchInnerHandle<'_, State>,
        event: &OrientationEvent,
        seq: Serial,
    ) {
        handle.orientation(data, event, seq);
    }

    fn start_data(&self) -> &GrabStartData<State> {
        &self.start
    }

    fn unset(&mut self, _data: &mut State) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slot(n: u32) -> TouchSlot {
        Some(n).into()
    }

    fn point(owner: TouchOwner) -> TouchPoint {
        TouchPoint {
            owner,
            at: Point::from((1.0, 2.0)),
            serial: None,
        }
    }

    #[test]
    fn each_point_keeps_the_owner_of_its_down() {
        let mut points = TouchPoints::default();
        assert_eq!(points.went_down(slot(0), point(TouchOwner::Dialog)), None);
        assert_eq!(
            points.went_down(slot(1), point(TouchOwner::Client(None))),
            None
        );
        assert_eq!(points.owner(slot(0)), Some(&TouchOwner::Dialog));
        assert_eq!(points.owner(slot(1)), Some(&TouchOwner::Client(None)));
        points.moved(slot(1), Point::from((5.0, 6.0)));
        assert_eq!(
            points.lifted(slot(0)).map(|p| p.owner),
            Some(TouchOwner::Dialog)
        );
        assert_eq!(points.owner(slot(0)), None);
        assert_eq!(points.len(), 1);
        assert_eq!(
            points.cancel_all(),
            vec![(slot(1), Point::from((5.0, 6.0)))]
        );
        assert!(points.is_empty());
    }

    #[test]
    fn a_second_down_on_a_slot_replaces_the_lost_one() {
        let mut points = TouchPoints::default();
        points.went_down(slot(3), point(TouchOwner::Dialog));
        assert_eq!(
            points
                .went_down(slot(3), point(TouchOwner::Client(None)))
                .map(|p| p.owner),
            Some(TouchOwner::Dialog)
        );
        assert_eq!(points.cancel_all().len(), 1);
    }
}
