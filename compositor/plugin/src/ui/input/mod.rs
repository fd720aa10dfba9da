//! Seat input while a dialog is up, decided in one place. The host hands every seat event to
//! the function here that stands in for Smithay's own call (`pcp_plugin::input`): each takes
//! the same handle and event the host would have given Smithay, lets the dialog see the event
//! first, and passes it on to the clients only when the dialog did not take it (it returns
//! `true` when the dialog took it, so the host can skip what it does for a client's press).
//! The same calls are methods of Smithay's handles too ([`PcpPointer`], [`PcpTouch`],
//! [`PcpKeyboard`], [`PcpTabletTool`]): `pointer.pcp_motion(…)` where a host had
//! `pointer.motion(…)`.
//!
//! - **Where input goes.** A non-modal dialog shares the desktop: pointer, touch, tablet tools,
//!   scrolling and gestures go to the dialog only inside its area grown by
//!   `[overlay] input_margin` (a window under it never receives them there), everywhere else
//!   to the windows; keys go to the dialog only while it has the keyboard (see the `focus`
//!   module). A modal dialog takes everything, as a prompt whose risk class is in `modal_for`
//!   asks. While a prompt waits for a double tap, touches are the haptic answer's.
//! - **A contact ends where it began.** Each pointer button, touch point (by slot), tablet tool
//!   tip and gesture belongs to whoever got its press: a touch that began on a window stays the
//!   window's when it slides over the dialog and never presses a control, and one that began on
//!   the dialog stays the dialog's wherever it goes. A key goes up where it went down.
//! - **One press at a time.** At most one contact presses the dialog's controls; another on the
//!   dialog meanwhile is taken from the clients but presses nothing, so a second finger can
//!   neither start nor complete the first one's press. A cancelled contact (a touch cancel, a
//!   tool leaving proximity) cancels its press.
//! - **The guard and the rules of the dialog hold for every kind.** Every press goes through the
//!   dialog's own press and release (`pcp_overlay::ConfirmDialog`): nothing counts inside the
//!   clickjacking guard, a click needs its press and release on the same control, Approve waits
//!   for the body to be read, and there is no default button.
//!
//! The user's activity on the dialog restarts its inactivity timeout, at most once a second.

mod ext;
mod gesture;
mod keyboard;
mod pointer;
mod tablet;
mod touch;

use std::collections::HashMap;

use pcp_gate::{Answer, Modality, ModalityEvent};
use pcp_overlay::Choice;
use smithay::backend::input::TouchSlot;
use smithay::input::keyboard::Keycode;
use smithay::utils::{Logical, Point};

pub use self::ext::{PcpKeyboard, PcpPointer, PcpTabletTool, PcpTouch};
pub use self::gesture::{
    gesture_hold_begin, gesture_hold_end, gesture_pinch_begin, gesture_pinch_end,
    gesture_pinch_update, gesture_swipe_begin, gesture_swipe_end, gesture_swipe_update,
};
pub use self::keyboard::{keyboard_focus, keyboard_input};
pub use self::pointer::{
    pointer_after_dialog, pointer_axis, pointer_button, pointer_motion, pointer_relative_motion,
};
pub use self::tablet::{
    tablet_button, tablet_motion, tablet_proximity_in, tablet_proximity_out, tablet_tip_down,
    tablet_tip_up,
};
pub use self::touch::{touch_cancel, touch_down, touch_motion, touch_up};
use super::ConfirmUi;
use super::focus::within;
use crate::effects::Command;
use crate::{PcpHandler, PromptEvent};

/// Activity is reported to the gate at most this often (pointer motion must not flood it).
const ACTIVITY_INTERVAL_MS: i64 = 1000;

/// Where one input event goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Routed {
    /// The dialog (or the haptic double tap) took it: it must not reach any client. The events
    /// are for the gate.
    Taken(Vec<PromptEvent>),
    /// Not the dialog's: route it to the clients as usual.
    Clients,
}

/// Who got the press of a key a client did not get.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum KeyOwner {
    /// The dialog: its release goes to the dialog too.
    Dialog,
    /// The focus shortcut: its release goes nowhere.
    Shortcut,
}

/// One thing that goes down and up: a pointer button, a touch point, a tablet tool's tip (these
/// can press the dialog's controls), or a button on a tablet tool (which never does).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Contact {
    Button(u32),
    Touch(TouchSlot),
    Tool,
    ToolButton(u32),
}

/// Who got a contact's press: every later event of the contact goes there too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Owner {
    /// The dialog or the haptic double tap: no client sees the contact.
    Dialog,
    /// The clients: the contact never presses the dialog.
    Clients,
}

/// A contact that is down: who has it and where it is now (global logical).
#[derive(Debug, Clone, Copy)]
struct Down {
    owner: Owner,
    at: pcp_overlay::Point,
}

/// The input state the UI keeps.
#[derive(Debug, Default)]
pub(crate) struct ModalInput {
    /// Keys (xkb keycodes) whose press no client got: their release is not sent to clients
    /// either.
    keys: HashMap<u32, KeyOwner>,
    /// Every contact that is down, the clients' included.
    contacts: HashMap<Contact, Down>,
    /// The one contact pressing the dialog's controls.
    presser: Option<Contact>,
    /// The touch point the haptic double tap watches.
    haptic_touch: Option<Contact>,
    /// Who has the pointer gesture under way (swipe, pinch, hold).
    gesture: Option<Owner>,
    /// Where the tablet tool is, while it is in proximity.
    tool_at: Option<pcp_overlay::Point>,
    /// When the user last did something on the dialog without answering (host clock, ms).
    last_activity_ms: Option<i64>,
    /// The dialog has the keyboard.
    pub keyboard: bool,
    /// The dialog shown is modal.
    pub modal: bool,
}

impl ModalInput {
    pub fn suppressed_keys(&self) -> impl Iterator<Item = Keycode> + '_ {
        self.keys.keys().map(|k| Keycode::new(*k))
    }

    /// The dialog went: its press went with it (contacts stay with whoever had them).
    pub fn dialog_closed(&mut self) {
        self.presser = None;
        self.modal = false;
    }
}

fn point(p: Point<f64, Logical>) -> pcp_overlay::Point {
    pcp_overlay::Point { x: p.x, y: p.y }
}

/// The longest an input event may have waited to be read and still be dated by its own time;
/// an older (or future) one is from another clock and is dated now.
const MAX_EVENT_AGE_MS: i64 = 10_000;

/// The clock time in milliseconds of an event whose time is `event` (the low 32 bits of the
/// same clock's milliseconds), read at `now`.
fn event_ms(now: i64, event: u32) -> i64 {
    let age = i64::from((now as u32).wrapping_sub(event));
    if age <= MAX_EVENT_AGE_MS {
        now - age
    } else {
        now
    }
}

/// The seat's input is at `p` now: the focal point, when the host keeps none of its own.
fn seat_at<D: PcpHandler>(state: &mut D, p: pcp_overlay::Point) {
    state.pcp().seat_focus = Some(p);
}

/// Like [`settle`], for an event that moved the focal point: the dialog follows it even when the
/// event is the clients' (using a window on another output moves the dialog there).
fn settle_moved<D: PcpHandler>(state: &mut D, routed: Routed) -> bool {
    let taken = settle(state, routed);
    if !taken && state.pcp().ui().is_open() {
        crate::run_command(state, Command::Refresh);
    }
    taken
}

/// Runs what the dialog answered through the one loop; true when the event is the dialog's.
fn settle<D: PcpHandler>(state: &mut D, routed: Routed) -> bool {
    match routed {
        Routed::Taken(events) => {
            crate::run_events(state, events);
            true
        }
        Routed::Clients => {
            // A press on a window gave the keyboard back: the host hears it now.
            if state.pcp().ui().keyboard_changed() {
                crate::run_command(state, Command::Refresh);
            }
            false
        }
    }
}

impl ConfirmUi {
    /// The user did something on the dialog without answering: its inactivity timeout restarts.
    pub(super) fn activity(&mut self, now: i64) -> Vec<PromptEvent> {
        let Some(prompt) = self.dialog.shown() else {
            return Vec::new();
        };
        if self
            .input
            .last_activity_ms
            .is_some_and(|t| now - t < ACTIVITY_INTERVAL_MS)
        {
            return Vec::new();
        }
        self.input.last_activity_ms = Some(now);
        vec![PromptEvent {
            prompt,
            event: ModalityEvent::Activity,
        }]
    }

    pub(in crate::ui) fn answered(&mut self, choice: Choice) -> Vec<PromptEvent> {
        self.changes.damaged = true;
        let Some(prompt) = self.dialog.shown() else {
            return Vec::new();
        };
        // A prompt with an entry (a password) is approved only after its front end accepted
        // what was typed: no click, hold or key may skip that step.
        if choice != Choice::Deny && !self.entries.approvable(prompt) {
            tracing::debug!(
                "approve on prompt {} ignored: its entry is not accepted",
                prompt.0
            );
            return Vec::new();
        }
        let event = match choice {
            Choice::Approve => ModalityEvent::Answer(Modality::Visual, Answer::Approve),
            Choice::Deny => ModalityEvent::Answer(Modality::Visual, Answer::Deny),
            // Offered only when the prompt allows it; the gate checks that again.
            Choice::ApproveForSession => ModalityEvent::ApproveForSession,
        };
        vec![PromptEvent { prompt, event }]
    }

    /// Whether the dialog takes pointer, touch and tablet input at `p` (global logical): it is
    /// up and modal, or `p` is on it or within `[overlay] input_margin` of it, or a button
    /// pressed on it is still down. A host asks this when the dialog appears or moves, to take
    /// the pointer from a window now under it.
    pub fn takes_pointer_at(&self, p: pcp_overlay::Point) -> bool {
        if !self.dialog.is_open() {
            return false;
        }
        let button_held = self
            .input
            .contacts
            .iter()
            .any(|(c, d)| matches!(c, Contact::Button(_)) && d.owner == Owner::Dialog);
        self.input.modal
            || button_held
            || self
                .dialog
                .placement()
                .is_some_and(|pl| within(pl.rect, self.sharing.margin, p))
    }

    /// Whether `p` is on the dialog itself (not its margin).
    fn on_dialog(&self, p: pcp_overlay::Point) -> bool {
        self.dialog
            .placement()
            .is_some_and(|pl| within(pl.rect, 0.0, p))
    }

    /// The user's explicit act gives the dialog the keyboard (`true`: a press on it, the
    /// shortcut) or takes it back: the entry of the prompt shown is focused only this way.
    pub(super) fn explicit_keyboard(&mut self, focused: bool) {
        self.set_keyboard(focused);
        if let Some(prompt) = self.dialog.shown()
            && self.entries.focus(prompt, focused)
        {
            self.lock_approve(prompt);
            self.changes.damaged = true;
        }
    }

    /// Gives the dialog the keyboard (`true`) or gives it back (`false`); the host hears it
    /// as [`Effect::KeyboardFocus`](crate::Effect::KeyboardFocus).
    pub(in crate::ui) fn set_keyboard(&mut self, focused: bool) {
        if self.input.keyboard != focused {
            self.input.keyboard = focused;
            self.changes.keyboard = Some(focused);
            self.changes.damaged = true;
        }
        // The dialog acts on keys (and draws its keyboard outline) only while it has them.
        self.dialog.dialog_mut().set_keyboard_focus(focused);
    }

    /// Who has `contact` now (`None`: it is not down, as far as the dialog saw).
    pub(crate) fn owner_of(&self, contact: Contact) -> Option<Owner> {
        self.input.contacts.get(&contact).map(|d| d.owner)
    }

    /// `contact` went down at `p` (global logical), read at `now`. A contact on the dialog is
    /// the dialog's; the first of them presses its controls, the others press nothing. A press
    /// on a window gives the keyboard back, one on the dialog gives the dialog the keyboard.
    pub(crate) fn contact_down(
        &mut self,
        contact: Contact,
        p: pcp_overlay::Point,
        now: i64,
    ) -> Routed {
        if !self.takes_pointer_at(p) {
            self.input.contacts.insert(
                contact,
                Down {
                    owner: Owner::Clients,
                    at: p,
                },
            );
            if self.dialog.is_open() {
                self.explicit_keyboard(false);
            }
            return Routed::Clients;
        }
        self.input.contacts.insert(
            contact,
            Down {
                owner: Owner::Dialog,
                at: p,
            },
        );
        if self.on_dialog(p) {
            self.explicit_keyboard(true);
        }
        if self.input.presser.is_some() {
            // A second contact on the dialog: taken from the clients, presses nothing.
            return Routed::Taken(Vec::new());
        }
        let Some((x, y)) = self.dialog.local(p) else {
            return Routed::Taken(Vec::new());
        };
        self.input.presser = Some(contact);
        if self.dialog.dialog().row_at(x, y) == Some(pcp_overlay::Row::EntryAccount)
            && self.next_account()
        {
            return Routed::Taken(self.activity(now));
        }
        let choice = self
            .dialog
            .dialog_mut()
            .pointer_down(x, y, now.max(0) as u64);
        self.changes.damaged = true;
        Routed::Taken(match choice {
            Some(c) => self.answered(c),
            None => self.activity(now),
        })
    }

    /// `contact` moved to `p`: it stays with whoever has it. The dialog's presser slides over
    /// its controls (off the pressed one cancels the press; on the body it drags it).
    pub(crate) fn contact_motion(
        &mut self,
        contact: Contact,
        p: pcp_overlay::Point,
        now: i64,
    ) -> Routed {
        let Some(down) = self.input.contacts.get_mut(&contact) else {
            // Not seen going down (it began before the plugin saw input): where downs go.
            return self.untracked(Some(p));
        };
        down.at = p;
        if down.owner == Owner::Clients {
            // A window's finger stays the window's, but over the dialog (or its margin) its
            // motion is withheld, as a held pointer button's is: no window learns where a
            // finger is on the dialog. Its lift still goes to the window. (A pen's stroke goes
            // on whole: Smithay's tablet tool has no motion that is neither sent nor a leave.)
            if matches!(contact, Contact::Touch(_)) && self.takes_pointer_at(p) {
                return Routed::Taken(Vec::new());
            }
            return Routed::Clients;
        }
        let mut events = Vec::new();
        if self.input.presser == Some(contact)
            && let Some((x, y)) = self.dialog.local(p)
        {
            let dialog = self.dialog.dialog_mut();
            dialog.pointer_motion(x, y);
            if dialog.control_at(x, y).is_some() {
                events = self.activity(now);
            }
            self.changes.damaged = true;
        }
        Routed::Taken(events)
    }

    /// `contact` lifted, at `p` when the event says where (else where it last was). Only the
    /// presser's release can complete a press, and only on the control it pressed.
    pub(crate) fn contact_up(
        &mut self,
        contact: Contact,
        p: Option<pcp_overlay::Point>,
        now: i64,
    ) -> Routed {
        let Some(down) = self.input.contacts.remove(&contact) else {
            return self.untracked(p);
        };
        if down.owner == Owner::Clients {
            return Routed::Clients;
        }
        if self.input.presser != Some(contact) {
            return Routed::Taken(Vec::new());
        }
        self.input.presser = None;
        if !self.dialog.is_open() {
            return Routed::Taken(Vec::new());
        }
        let Some((x, y)) = self.dialog.local(p.unwrap_or(down.at)) else {
            return Routed::Taken(Vec::new());
        };
        let choice = self.dialog.dialog_mut().pointer_up(x, y, now.max(0) as u64);
        self.changes.damaged = true;
        Routed::Taken(match choice {
            Some(c) => self.answered(c),
            None => self.activity(now),
        })
    }

    /// `contact` was cancelled: no click. Returns who had it (`None`: nobody the dialog saw).
    pub(crate) fn contact_cancel(&mut self, contact: Contact) -> Option<Owner> {
        let down = self.input.contacts.remove(&contact)?;
        if self.input.presser == Some(contact) {
            self.input.presser = None;
            self.dialog.dialog_mut().pointer_cancel();
            self.changes.damaged = true;
        }
        Some(down.owner)
    }

    /// A contact whose press the dialog never saw (pressed before it tracked input): a modal
    /// dialog keeps it, else it goes where a press there would go.
    fn untracked(&self, p: Option<pcp_overlay::Point>) -> Routed {
        let dialogs = self.dialog.is_open()
            && (self.input.modal || p.is_some_and(|p| self.takes_pointer_at(p)));
        if dialogs {
            Routed::Taken(Vec::new())
        } else {
            Routed::Clients
        }
    }
}

#[cfg(test)]
mod tests {
    use super::event_ms;

    #[test]
    fn an_event_is_dated_by_its_own_time_when_it_is_recent() {
        let now = 1_700_000_123_456_i64;
        // Read 300 ms late.
        assert_eq!(event_ms(now, (now - 300) as u32), now - 300);
        // Across the 32-bit wrap of the low bits.
        let wrap = 0x1_0000_0010_i64;
        assert_eq!(event_ms(wrap, (wrap - 0x20) as u32), wrap - 0x20);
        // From another clock (or the future): dated now.
        assert_eq!(event_ms(now, (now + 5) as u32), now);
        assert_eq!(event_ms(now, 7), now);
    }
}
