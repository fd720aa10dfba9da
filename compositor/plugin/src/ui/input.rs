//! Input while a dialog is up, decided in one place. A non-modal dialog shares the desktop:
//! pointer and touch go to the dialog only inside its area grown by `[overlay] input_margin`
//! (a window under it never receives them there), everywhere else to the windows; keys go to
//! the dialog only while it has the keyboard (see the `focus` module). A modal dialog
//! takes everything, as a prompt whose risk class is in `modal_for` asks. Every press is
//! followed by its release to the same place: a key, button or touch that began on a window
//! ends there, and one the dialog took ends on the dialog even if it has gone by then. While a
//! prompt waits for a double tap, touches are the haptic answer's. The user's activity on the
//! dialog restarts its inactivity timeout, at most once a second.
//!
//! The host's input code calls the free functions here (`pcp_plugin::input`): each gives the
//! event to the [`ConfirmUi`], runs what it answered through the one loop, and says whether the
//! event is the dialog's ([`Routed::Taken`]: the host sends it to no client) or the clients'
//! ([`Routed::Clients`]). Keys go through [`filter_key`] inside Smithay's keyboard filter, and
//! what it took through [`apply_key`] once `KeyboardHandle::input` has returned.

use std::collections::{HashMap, HashSet};

use pcp_gate::{Answer, Modality, ModalityEvent};
use pcp_haptics::TouchKind;
use pcp_overlay::{Choice, Key, KeyState};
use smithay::input::keyboard::{FilterResult, KeysymHandle, ModifiersState};
use smithay::utils::{Logical, Point};

use super::ConfirmUi;
use super::ShortcutKeys;
use super::entry::EntryKey;
use super::focus::within;
use super::keys::{dialog_key, entry_key};
use crate::{Command, PcpHandler, PromptEvent};

/// Activity is reported to the gate at most this often (pointer motion must not flood it).
const ACTIVITY_INTERVAL_MS: i64 = 1000;

/// Where one input event goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Routed {
    /// The dialog (or the haptic double tap) took it: it must not reach any client. The events
    /// are for the gate (run them as [`Command::Events`]).
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

/// The input state the UI keeps.
#[derive(Debug, Default)]
pub(crate) struct ModalInput {
    /// Keys whose press no client got: their release is not sent to clients either.
    keys: HashMap<u32, KeyOwner>,
    /// Pointer buttons whose press the dialog took, and those whose press went to a client.
    dialog_buttons: HashSet<u32>,
    client_buttons: HashSet<u32>,
    /// When the user last did something on the dialog without answering (host clock, ms).
    last_activity_ms: Option<i64>,
    /// Where the current touch point went down, while the dialog or the double tap has it.
    touch: Option<pcp_overlay::Point>,
    /// The current touch point went down on a window: it lifts there.
    client_touch: bool,
    /// The dialog has the keyboard.
    pub keyboard: bool,
    /// The dialog shown is modal.
    pub modal: bool,
}

impl ModalInput {
    pub fn suppressed_keys(&self) -> impl Iterator<Item = u32> + '_ {
        self.keys.keys().copied()
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

/// Like [`settle`], for an event that moved the focal point: the dialog follows it even when the
/// event is the clients' (using a window on another output moves the dialog there).
fn settle_moved<D: PcpHandler>(state: &mut D, routed: Routed) -> bool {
    let taken = settle(state, routed);
    if !taken && state.pcp().ui_mut().is_open() {
        crate::refresh(state);
    }
    taken
}

fn settle<D: PcpHandler>(state: &mut D, routed: Routed) -> bool {
    match routed {
        Routed::Taken(events) => {
            crate::run(state, Command::Events(events));
            true
        }
        Routed::Clients => {
            // A press on a window gave the keyboard back: the host hears it now.
            if state.pcp().ui_mut().keyboard_changed() {
                crate::refresh(state);
            }
            false
        }
    }
}

/// The pointer moved to `p` (global logical; the host has already moved its focal point
/// there, and the dialog follows it). True when the dialog took it: clients get no motion (send
/// them a leave). The dialog may have moved under `p` meanwhile: a host asks
/// [`ConfirmUi::takes_pointer_at`](crate::ConfirmUi::takes_pointer_at) again.
pub fn pointer_motion<D: PcpHandler>(state: &mut D, p: Point<f64, Logical>) -> bool {
    let now = state.now_ms();
    let routed = state.pcp().ui_mut().pointer_motion(point(p), now);
    settle_moved(state, routed)
}

/// Pointer button `button` (evdev code) went down or up with the pointer at `at`. True when
/// the dialog took it. A press on the dialog gives it the keyboard, a press elsewhere gives the
/// keyboard back (the host hears both as [`Effect::KeyboardFocus`](crate::Effect::KeyboardFocus)).
pub fn pointer_button<D: PcpHandler>(
    state: &mut D,
    button: u32,
    at: Point<f64, Logical>,
    pressed: bool,
) -> bool {
    let now = state.now_ms();
    let routed = state
        .pcp()
        .ui_mut()
        .pointer_button(button, point(at), pressed, now);
    settle(state, routed)
}

/// A touch point went down at `p` at event time `time` (the low 32 bits of the host clock's
/// milliseconds, as Smithay's backends pass event times). True when the dialog or the haptic
/// double tap took it.
pub fn touch_down<D: PcpHandler>(state: &mut D, p: Point<f64, Logical>, time: u32) -> bool {
    let now = state.now_ms();
    let at = event_ms(now, time);
    let routed = state.pcp().ui_mut().touch_down(point(p), now, at);
    settle_moved(state, routed)
}

/// The touch point lifted at event time `time` (see [`touch_down`]). True when the dialog or
/// the haptic double tap took it.
pub fn touch_up<D: PcpHandler>(state: &mut D, time: u32) -> bool {
    let now = state.now_ms();
    let at = event_ms(now, time);
    let routed = state.pcp().ui_mut().touch_up(now, at);
    settle(state, routed)
}

/// The touch source cancelled its contact. True when the dialog had it.
pub fn touch_cancel<D: PcpHandler>(state: &mut D) -> bool {
    let routed = state.pcp().ui_mut().touch_cancel();
    settle(state, routed)
}

/// The keyboard filter: call it from the closure of `KeyboardHandle::input` with the key's
/// evdev `code`. The dialog's keys (while it has the keyboard) and the focus shortcut (while a
/// dialog is up) are intercepted — the events they carry come back from `input`; hand them to
/// [`apply_key`] after it returns, the keyboard is locked meanwhile — every other key is
/// forwarded.
pub fn filter_key<D: PcpHandler>(
    state: &mut D,
    code: u32,
    pressed: bool,
    modifiers: &ModifiersState,
    sym: KeysymHandle<'_>,
) -> FilterResult<Vec<PromptEvent>> {
    let modified = sym.modified_sym();
    let key = (
        dialog_key(modified.raw(), modifiers.shift),
        entry_key(modified, modifiers),
    );
    let now = state.now_ms();
    let ui = state.pcp().ui_mut();
    let shortcut = pressed
        && ui
            .focus_shortcut()
            .matches(modifiers, &sym.raw_syms(), modified);
    match ui.key(code, pressed, key, shortcut, now) {
        Routed::Taken(events) => FilterResult::Intercept(events),
        Routed::Clients => FilterResult::Forward,
    }
}

/// Applies what [`filter_key`] intercepted (`None`: it forwarded the key).
pub fn apply_key<D: PcpHandler>(state: &mut D, taken: Option<Vec<PromptEvent>>) {
    if let Some(events) = taken {
        crate::run(state, Command::Events(events));
    }
}

impl ConfirmUi {
    /// The user did something on the dialog without answering: its inactivity timeout restarts.
    fn activity(&mut self, now: i64) -> Vec<PromptEvent> {
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

    pub(super) fn answered(&mut self, choice: Choice) -> Vec<PromptEvent> {
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

    /// Whether the dialog takes pointer and touch input at `p` (global logical): it is up and
    /// modal, or `p` is on it or within `[overlay] input_margin` of it, or a button pressed on
    /// it is still down. A host asks this when the dialog appears or moves, to take the
    /// pointer from a window now under it.
    pub fn takes_pointer_at(&self, p: pcp_overlay::Point) -> bool {
        if !self.dialog.is_open() {
            return false;
        }
        self.input.modal
            || !self.input.dialog_buttons.is_empty()
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
    fn explicit_keyboard(&mut self, focused: bool) {
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
    pub(super) fn set_keyboard(&mut self, focused: bool) {
        if self.input.keyboard != focused {
            self.input.keyboard = focused;
            self.changes.keyboard = Some(focused);
            self.changes.damaged = true;
        }
        // The dialog acts on keys (and draws its keyboard outline) only while it has them.
        self.dialog.dialog_mut().set_keyboard_focus(focused);
    }

    /// The pointer moved to `p` (global logical).
    pub fn pointer_motion(&mut self, p: pcp_overlay::Point, now: i64) -> Routed {
        if !self.takes_pointer_at(p) {
            return Routed::Clients;
        }
        let mut events = Vec::new();
        if let Some((x, y)) = self.dialog.local(p) {
            let dialog = self.dialog.dialog_mut();
            dialog.pointer_motion(x, y);
            if dialog.control_at(x, y).is_some() {
                events = self.activity(now);
            }
        }
        Routed::Taken(events)
    }

    /// Pointer button `button` went down or up with the pointer at `at`. A press on the dialog
    /// gives it the keyboard; a press on a window gives the keyboard back.
    pub fn pointer_button(
        &mut self,
        button: u32,
        at: pcp_overlay::Point,
        pressed: bool,
        now: i64,
    ) -> Routed {
        if !pressed {
            if self.input.client_buttons.remove(&button) {
                return Routed::Clients;
            }
            let ours = self.input.dialog_buttons.remove(&button);
            if !self.dialog.is_open() {
                return if ours {
                    Routed::Taken(Vec::new())
                } else {
                    Routed::Clients
                };
            }
            if !ours {
                // Pressed before anything was tracked: it ends where it would have gone.
                return if self.takes_pointer_at(at) {
                    Routed::Taken(Vec::new())
                } else {
                    Routed::Clients
                };
            }
        } else if !self.takes_pointer_at(at) {
            self.input.client_buttons.insert(button);
            if self.dialog.is_open() {
                self.explicit_keyboard(false);
            }
            return Routed::Clients;
        } else {
            self.input.dialog_buttons.insert(button);
            if self.on_dialog(at) {
                self.explicit_keyboard(true);
            }
        }
        let Some((x, y)) = self.dialog.local(at) else {
            return Routed::Taken(Vec::new());
        };
        if pressed
            && self.dialog.dialog().row_at(x, y) == Some(pcp_overlay::Row::EntryAccount)
            && self.next_account()
        {
            return Routed::Taken(self.activity(now));
        }
        let now_u = now.max(0) as u64;
        let dialog = self.dialog.dialog_mut();
        let choice = if pressed {
            dialog.pointer_down(x, y, now_u)
        } else {
            dialog.pointer_up(x, y, now_u)
        };
        self.changes.damaged = true;
        Routed::Taken(match choice {
            Some(c) => self.answered(c),
            None => self.activity(now),
        })
    }

    /// A touch point went down at `p` (global logical), read at `now`; it happened at `at` (the
    /// double tap is judged by when the touches happened, not by when a busy host read them).
    pub fn touch_down(&mut self, p: pcp_overlay::Point, now: i64, at: i64) -> Routed {
        if self.haptic.active() {
            // A tap for the haptic answer: it must not press the dialog or reach a client.
            self.input.touch = Some(p);
            self.input.client_touch = false;
            let touch_dpi = self.timing.touch_dpi;
            let events =
                self.haptic
                    .touch(TouchKind::Down, p, touch_dpi, self.dialog.dialog_mut(), at);
            self.changes.damaged = true;
            return Routed::Taken(events);
        }
        if !self.takes_pointer_at(p) {
            self.input.touch = None;
            self.input.client_touch = true;
            if self.dialog.is_open() {
                self.explicit_keyboard(false);
            }
            return Routed::Clients;
        }
        self.input.client_touch = false;
        if self.on_dialog(p) {
            self.explicit_keyboard(true);
        }
        let Some((x, y)) = self.dialog.local(p) else {
            return Routed::Taken(Vec::new());
        };
        self.input.touch = Some(p);
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
        Routed::Taken(choice.map(|c| self.answered(c)).unwrap_or_default())
    }

    /// The touch point lifted, read at `now`; it happened at `happened` (see `touch_down`).
    pub fn touch_up(&mut self, now: i64, happened: i64) -> Routed {
        let at = self.input.touch.take();
        if std::mem::take(&mut self.input.client_touch) {
            return Routed::Clients;
        }
        if self.haptic.active() {
            let Some(p) = at else {
                return Routed::Taken(Vec::new());
            };
            let touch_dpi = self.timing.touch_dpi;
            let events = self.haptic.touch(
                TouchKind::Up,
                p,
                touch_dpi,
                self.dialog.dialog_mut(),
                happened,
            );
            self.changes.damaged = true;
            return Routed::Taken(events);
        }
        let Some(p) = at else {
            // Its down was not tracked (before a dialog or a double tap): a modal dialog keeps
            // it, else it goes where downs go.
            return if self.dialog.is_open() && self.input.modal {
                Routed::Taken(Vec::new())
            } else {
                Routed::Clients
            };
        };
        if !self.dialog.is_open() {
            return Routed::Taken(Vec::new());
        }
        let Some((x, y)) = self.dialog.local(p) else {
            return Routed::Taken(Vec::new());
        };
        let choice = self.dialog.dialog_mut().pointer_up(x, y, now.max(0) as u64);
        self.changes.damaged = true;
        Routed::Taken(choice.map(|c| self.answered(c)).unwrap_or_default())
    }

    /// The touch source cancelled its contact: a cancelled touch is no click.
    pub fn touch_cancel(&mut self) -> Routed {
        let ours = self.input.touch.take().is_some();
        if std::mem::take(&mut self.input.client_touch) {
            return Routed::Clients;
        }
        if ours || self.dialog.is_open() || self.haptic.active() {
            Routed::Taken(Vec::new())
        } else {
            Routed::Clients
        }
    }

    /// A key (evdev `code`, seen as `key` by the dialog) went down or up; `shortcut`: it is the
    /// `[overlay] focus_shortcut` with its modifiers. The dialog gets keys only while it has
    /// the keyboard; the shortcut gives it the keyboard (or gives it back) and reaches no one;
    /// Escape gives the keyboard back once the dialog has had it (after denying, past the
    /// guard). A key goes up where it went down. While the prompt's entry is focused and asks,
    /// `typed` (what the key types) goes into it instead: Enter submits the entry there, never
    /// Approve.
    pub fn key(
        &mut self,
        code: u32,
        pressed: bool,
        (key, typed): (Key, EntryKey),
        shortcut: bool,
        now: i64,
    ) -> Routed {
        if !pressed {
            return match self.input.keys.remove(&code) {
                None => Routed::Clients,
                Some(KeyOwner::Shortcut) => Routed::Taken(Vec::new()),
                Some(KeyOwner::Dialog) if !self.dialog.is_open() => Routed::Taken(Vec::new()),
                Some(KeyOwner::Dialog) => {
                    let choice =
                        self.dialog
                            .dialog_mut()
                            .key(key, KeyState::Released, now.max(0) as u64);
                    self.changes.damaged = true;
                    if key == Key::Escape && !self.input.modal {
                        self.set_keyboard(false);
                    }
                    Routed::Taken(match choice {
                        Some(c) => self.answered(c),
                        None => Vec::new(),
                    })
                }
            };
        }
        if !self.dialog.is_open() {
            return Routed::Clients;
        }
        if shortcut {
            self.input.keys.insert(code, KeyOwner::Shortcut);
            let prompt = self.dialog.shown();
            let entry_focused = prompt.is_some_and(|p| self.entries.takes_keys(p));
            let has_entry = prompt.is_some_and(|p| self.entries.has(p));
            if !self.input.modal {
                // With an entry that is not focused yet, the shortcut focuses it first.
                let give_back = self.input.keyboard && (!has_entry || entry_focused);
                self.explicit_keyboard(!give_back);
            } else if let Some(p) = prompt
                && self.entries.focus(p, !entry_focused)
            {
                // Modal: the dialog keeps the keyboard; the shortcut still focuses its entry.
                self.lock_approve(p);
                self.changes.damaged = true;
            }
            return Routed::Taken(self.activity(now));
        }
        if !self.input.keyboard {
            return Routed::Clients;
        }
        if let Some(prompt) = self.dialog.shown()
            && self.entries.takes_keys(prompt)
            && self.entries.key(prompt, typed)
        {
            // The release goes nowhere: the entry took the press.
            self.input.keys.insert(code, KeyOwner::Shortcut);
            self.lock_approve(prompt);
            self.changes.damaged = true;
            return Routed::Taken(self.activity(now));
        }
        self.input.keys.insert(code, KeyOwner::Dialog);
        let choice = self
            .dialog
            .dialog_mut()
            .key(key, KeyState::Pressed, now.max(0) as u64);
        self.changes.damaged = true;
        Routed::Taken(match choice {
            Some(c) => self.answered(c),
            None => self.activity(now),
        })
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
