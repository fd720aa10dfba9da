//! The pointer: motion, buttons and scrolling, each standing in for Smithay's own
//! `PointerHandle` call, and [`pointer_after_dialog`] for when the dialog appears or moves under
//! a pointer at rest. While the dialog has the pointer no window has pointer focus: a window
//! that had it gets a leave, and one holding a button (an implicit grab) gets no motion until
//! the pointer is off the dialog again.

use smithay::backend::input::ButtonState;
use smithay::input::SeatHandler;
use smithay::input::pointer::{
    AxisFrame, ButtonEvent, MotionEvent, PointerHandle, RelativeMotionEvent,
};
use smithay::utils::{Logical, Point, SERIAL_COUNTER};

use super::{Contact, Owner, Routed, point, seat_at, settle, settle_moved};
use crate::PcpHandler;
use crate::ui::ConfirmUi;

/// How far one wheel click (120 in `v120` units) scrolls the body when a frame carries only
/// discrete steps, in logical pixels: what Smithay's own compositors send for a click.
const PIXELS_PER_CLICK: f64 = 15.0;

/// Smithay's `PointerHandle::motion`, with the dialog first: call it wherever you move the
/// pointer (relative and absolute motion, a tablet moving the pointer, a warp), with the focus
/// you found under `event.location` (`under`). The dialog sees the motion first and may move
/// to follow the focal point; the pointer then goes to `under`, or to no window while the
/// dialog has it there. True when the dialog has the pointer.
pub fn pointer_motion<D: PcpHandler + SeatHandler>(
    state: &mut D,
    pointer: &PointerHandle<D>,
    under: Option<(D::PointerFocus, Point<f64, Logical>)>,
    event: &MotionEvent,
) -> bool {
    let p = point(event.location);
    seat_at(state, p);
    let now = state.now_ms();
    let routed = state.pcp().ui_mut().pointer_motion(p, now);
    let taken = settle_moved(state, routed)
        // The dialog followed the focal point and may now be under the pointer.
        || state.pcp().ui().takes_pointer_at(p);
    if !taken {
        pointer.motion(state, under, event);
    } else if pointer.is_grabbed() {
        // The grab's window hears nothing while the pointer is on the dialog, but the pointer
        // is here: a button pressed now is the dialog's.
        pointer.set_location(event.location);
    } else {
        pointer.motion(state, None, event);
    }
    taken
}

/// Smithay's `PointerHandle::relative_motion`, with the dialog first: a window gets relative
/// motion only while the dialog does not have the pointer. True when the dialog has it.
pub fn pointer_relative_motion<D: PcpHandler + SeatHandler>(
    state: &mut D,
    pointer: &PointerHandle<D>,
    under: Option<(D::PointerFocus, Point<f64, Logical>)>,
    event: &RelativeMotionEvent,
) -> bool {
    let taken = state
        .pcp()
        .ui()
        .takes_pointer_at(point(pointer.current_location()));
    if !taken {
        pointer.relative_motion(state, under, event);
    }
    taken
}

/// Smithay's `PointerHandle::button`, with the dialog first: a press where the dialog has the
/// pointer (at `pointer.current_location()`) is the dialog's and gives it the keyboard, and
/// its release follows it there; a press elsewhere goes to the window and gives the keyboard
/// back (the host hears both as [`Effect::KeyboardFocus`](crate::Effect::KeyboardFocus)).
/// True when the dialog took it: do nothing more for it (no window is raised or focused).
pub fn pointer_button<D: PcpHandler + SeatHandler>(
    state: &mut D,
    pointer: &PointerHandle<D>,
    event: &ButtonEvent,
) -> bool {
    let p = point(pointer.current_location());
    let now = state.now_ms();
    let contact = Contact::Button(event.button);
    let ui = state.pcp().ui_mut();
    let routed = match event.state {
        ButtonState::Pressed => ui.contact_down(contact, p, now),
        ButtonState::Released => ui.contact_up(contact, Some(p), now),
    };
    let taken = settle(state, routed);
    if !taken {
        pointer.button(state, event);
    }
    taken
}

/// Smithay's `PointerHandle::axis`, with the dialog first: scrolling (a wheel, two fingers on a
/// touchpad, a trackpoint) where the dialog has the pointer scrolls the dialog's body and
/// reaches no window. True when the dialog took it.
pub fn pointer_axis<D: PcpHandler + SeatHandler>(
    state: &mut D,
    pointer: &PointerHandle<D>,
    frame: AxisFrame,
) -> bool {
    let p = point(pointer.current_location());
    let now = state.now_ms();
    let routed = state.pcp().ui_mut().axis(p, &frame, now);
    let taken = settle(state, routed);
    if !taken {
        pointer.axis(state, frame);
    }
    taken
}

/// The dialog appeared, moved or went ([`Effect::DialogShown`](crate::Effect::DialogShown),
/// [`Effect::Damage`](crate::Effect::Damage)): a window now under the dialog loses the pointer,
/// and the window it uncovered (`under`, what you find under `pointer.current_location()`)
/// gets it back.
pub fn pointer_after_dialog<D: PcpHandler + SeatHandler>(
    state: &mut D,
    pointer: &PointerHandle<D>,
    under: Option<(D::PointerFocus, Point<f64, Logical>)>,
) {
    let location = pointer.current_location();
    let taken = state.pcp().ui().takes_pointer_at(point(location));
    if pointer.is_grabbed() || (!taken && (pointer.current_focus().is_some() || under.is_none())) {
        return;
    }
    let event = MotionEvent {
        location,
        serial: SERIAL_COUNTER.next_serial(),
        time: state.now_ms() as u32,
    };
    pointer.motion(state, if taken { None } else { under }, &event);
    pointer.frame(state);
}

impl ConfirmUi {
    /// The pointer moved to `p` (global logical). A button the dialog has keeps the pointer
    /// with the dialog; with no press under way the pointer hovers the dialog's controls.
    pub(crate) fn pointer_motion(&mut self, p: pcp_overlay::Point, now: i64) -> Routed {
        let held: Vec<Contact> = self
            .input
            .contacts
            .keys()
            .filter(|c| matches!(c, Contact::Button(_)))
            .copied()
            .collect();
        for contact in &held {
            if let Some(down) = self.input.contacts.get_mut(contact) {
                down.at = p;
            }
        }
        if let Some(presser) = self.input.presser
            && held.contains(&presser)
        {
            return self.contact_motion(presser, p, now);
        }
        if !self.takes_pointer_at(p) {
            return Routed::Clients;
        }
        let mut events = Vec::new();
        if self.input.presser.is_none()
            && let Some((x, y)) = self.dialog.local(p)
        {
            let dialog = self.dialog.dialog_mut();
            dialog.pointer_motion(x, y);
            if dialog.control_at(x, y).is_some() {
                events = self.activity(now);
            }
        }
        Routed::Taken(events)
    }

    /// A scroll frame with the pointer at `p`: the dialog's body scrolls when the dialog has
    /// the pointer there. Scrolling never answers.
    pub(crate) fn axis(&mut self, p: pcp_overlay::Point, frame: &AxisFrame, now: i64) -> Routed {
        if !self.takes_pointer_at(p) {
            return Routed::Clients;
        }
        let dy = match (frame.axis.1, frame.v120) {
            (dy, _) if dy != 0.0 => dy,
            (_, Some((_, v120))) => f64::from(v120) * PIXELS_PER_CLICK / 120.0,
            _ => 0.0,
        };
        if dy == 0.0 {
            return Routed::Taken(Vec::new());
        }
        self.dialog.dialog_mut().scroll(dy);
        self.changes.damaged = true;
        Routed::Taken(self.activity(now))
    }

    /// A pointer gesture (swipe, pinch, hold) began with the pointer at `p`: the dialog's when
    /// it has the pointer there (it does nothing with it), else the windows'. Its updates and
    /// its end go to the same place.
    pub(crate) fn gesture_begin(&mut self, p: pcp_overlay::Point) -> Owner {
        let owner = if self.takes_pointer_at(p) {
            Owner::Dialog
        } else {
            Owner::Clients
        };
        self.input.gesture = Some(owner);
        owner
    }

    /// Who has the gesture under way (`None`: its beginning was not seen; it goes where one
    /// beginning at `p` would). `end`: the gesture ends with this event.
    pub(crate) fn gesture_owner(&mut self, p: pcp_overlay::Point, end: bool) -> Owner {
        let owner = match self.input.gesture {
            Some(owner) => owner,
            None if self.takes_pointer_at(p) => Owner::Dialog,
            None => Owner::Clients,
        };
        if end {
            self.input.gesture = None;
        }
        owner
    }
}
