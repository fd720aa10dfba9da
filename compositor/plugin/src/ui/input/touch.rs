//! Touch with any number of fingers, each standing in for Smithay's own `TouchHandle` call.
//! Each touch point (by slot) belongs to whoever got it when it went down: one that went down
//! on the dialog is the dialog's until it lifts, wherever it moves; one that went down on a
//! window is the window's until it lifts, even over the dialog, and presses nothing there (its
//! motion there is withheld: no window learns where a finger is on the dialog). The
//! first touch on the dialog presses its controls; others meanwhile press nothing. While a
//! prompt waits for a haptic double tap, every touch is the double tap's (the first one down is
//! the tap it watches).

use pcp_haptics::TouchKind;
use smithay::backend::input::TouchSlot;
use smithay::input::SeatHandler;
use smithay::input::touch::{DownEvent, MotionEvent, TouchHandle, UpEvent};
use smithay::utils::{Logical, Point};

use super::{Contact, Down, Owner, Routed, event_ms, point, seat_at, settle, settle_moved};
use crate::PcpHandler;
use crate::ui::ConfirmUi;

/// Smithay's `TouchHandle::down`, with the dialog first: call it with the focus you found under
/// `event.location` (`under`). A touch on the dialog (or any touch while a prompt waits for a
/// haptic double tap) is the dialog's and reaches no window, to its end; one elsewhere goes to
/// `under`. The dialog follows the touch to its output either way. True when the dialog took
/// it.
pub fn touch_down<D: PcpHandler + SeatHandler>(
    state: &mut D,
    touch: &TouchHandle<D>,
    under: Option<(D::TouchFocus, Point<f64, Logical>)>,
    event: &DownEvent,
) -> bool {
    let now = state.now_ms();
    let happened = event_ms(now, event.time);
    let p = point(event.location);
    seat_at(state, p);
    let routed = state
        .pcp()
        .ui_mut()
        .touch_down(event.slot, p, now, happened);
    let taken = settle_moved(state, routed);
    if !taken {
        touch.down(state, under, event);
    }
    taken
}

/// Smithay's `TouchHandle::motion`: the touch point moves where it went down (the dialog, or
/// the window `under` was for then). True when it is the dialog's.
pub fn touch_motion<D: PcpHandler + SeatHandler>(
    state: &mut D,
    touch: &TouchHandle<D>,
    under: Option<(D::TouchFocus, Point<f64, Logical>)>,
    event: &MotionEvent,
) -> bool {
    let now = state.now_ms();
    let routed = state
        .pcp()
        .ui_mut()
        .touch_motion(event.slot, point(event.location), now);
    let taken = settle(state, routed);
    if !taken {
        touch.motion(state, under, event);
    }
    taken
}

/// Smithay's `TouchHandle::up`: the touch point lifts where it went down. Only the touch that
/// pressed a control of the dialog can complete that press, where it lifts. True when it was
/// the dialog's.
pub fn touch_up<D: PcpHandler + SeatHandler>(
    state: &mut D,
    touch: &TouchHandle<D>,
    event: &UpEvent,
) -> bool {
    let now = state.now_ms();
    let happened = event_ms(now, event.time);
    let routed = state.pcp().ui_mut().touch_up(event.slot, now, happened);
    let taken = settle(state, routed);
    if !taken {
        touch.up(state, event);
    }
    taken
}

/// Smithay's `TouchHandle::cancel`: every touch point is cancelled. The dialog's end without
/// a click (a press under way is dropped); the windows get the cancel when they had any. True
/// when the dialog had one.
pub fn touch_cancel<D: PcpHandler + SeatHandler>(state: &mut D, touch: &TouchHandle<D>) -> bool {
    let now = state.now_ms();
    let (dialog, clients) = state.pcp().ui_mut().touch_cancel(now);
    settle(state, Routed::Taken(Vec::new()));
    // A cancel for touches the dialog never saw goes to the windows too: it cancels nothing
    // of the dialog's.
    if clients || !dialog {
        touch.cancel(state);
    }
    dialog
}

impl ConfirmUi {
    /// Touch point `slot` went down at `p` (global logical), read at `now`; it happened at
    /// `happened` (the double tap is judged by when the touches happened, not by when a busy
    /// host read them).
    pub(crate) fn touch_down(
        &mut self,
        slot: TouchSlot,
        p: pcp_overlay::Point,
        now: i64,
        happened: i64,
    ) -> Routed {
        let contact = Contact::Touch(slot);
        if !self.haptic.active() {
            return self.contact_down(contact, p, now);
        }
        // A tap for the haptic answer: it must not press the dialog or reach a client.
        self.input.contacts.insert(
            contact,
            Down {
                owner: Owner::Dialog,
                at: p,
            },
        );
        if self.input.haptic_touch.is_some() {
            return Routed::Taken(Vec::new());
        }
        self.input.haptic_touch = Some(contact);
        Routed::Taken(self.haptic_touch(TouchKind::Down, p, happened))
    }

    /// Touch point `slot` moved to `p`.
    pub(crate) fn touch_motion(
        &mut self,
        slot: TouchSlot,
        p: pcp_overlay::Point,
        now: i64,
    ) -> Routed {
        self.contact_motion(Contact::Touch(slot), p, now)
    }

    /// Touch point `slot` lifted, read at `now`; it happened at `happened`.
    pub(crate) fn touch_up(&mut self, slot: TouchSlot, now: i64, happened: i64) -> Routed {
        let contact = Contact::Touch(slot);
        if self.input.haptic_touch != Some(contact) {
            return self.contact_up(contact, None, now);
        }
        self.input.haptic_touch = None;
        let Some(down) = self.input.contacts.remove(&contact) else {
            return Routed::Taken(Vec::new());
        };
        Routed::Taken(self.haptic_touch(TouchKind::Up, down.at, happened))
    }

    /// Every touch point was cancelled: a cancelled touch is no click and no tap. Returns
    /// whether the dialog had any, and whether the windows had any.
    pub(crate) fn touch_cancel(&mut self, now: i64) -> (bool, bool) {
        let touches: Vec<(Contact, pcp_overlay::Point)> = self
            .input
            .contacts
            .iter()
            .filter(|(c, _)| matches!(c, Contact::Touch(_)))
            .map(|(c, d)| (*c, d.at))
            .collect();
        let (mut dialog, mut clients) = (false, false);
        for (contact, at) in touches {
            if self.input.haptic_touch == Some(contact) {
                self.input.haptic_touch = None;
                // No tap can come of a cancelled touch: the detector forgets it, and an
                // approval it answered to a cancel (it never should) is dropped.
                let _ = self.haptic_touch(TouchKind::Cancel, at, now);
            }
            match self.contact_cancel(contact) {
                Some(Owner::Dialog) => dialog = true,
                Some(Owner::Clients) => clients = true,
                None => {}
            }
        }
        (dialog, clients)
    }

    /// One touch of the haptic double tap (none once the prompt no longer waits for it).
    fn haptic_touch(
        &mut self,
        kind: TouchKind,
        p: pcp_overlay::Point,
        at: i64,
    ) -> Vec<crate::PromptEvent> {
        if !self.haptic.active() {
            return Vec::new();
        }
        let touch_dpi = self.timing.touch_dpi;
        let events = self
            .haptic
            .touch(kind, p, touch_dpi, self.dialog.dialog_mut(), at);
        self.changes.damaged = true;
        events
    }
}
