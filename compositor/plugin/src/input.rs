//! Seat input for the host's input code: each function gives the event to the
//! [`ConfirmUi`](crate::ConfirmUi), applies what it answered through the one loop, and says
//! whether the event is the dialog's ([`Routed::Taken`]: the host sends it to no client) or the
//! clients' ([`Routed::Clients`]). Keys go through [`filter_key`] inside Smithay's keyboard
//! filter, and what it took through [`apply_key`] once `KeyboardHandle::input` has returned.

use smithay::input::keyboard::{FilterResult, Keysym, KeysymHandle, ModifiersState, keysyms};
use smithay::utils::{Logical, Point};

pub use crate::ui::Routed;
use crate::ui::ShortcutKeys;
use crate::{Command, PcpHandler, PromptEvent};

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

/// What a keysym types into the dialog's entry: a character (none with Ctrl, Alt or Super
/// held: those are shortcuts, not text), Backspace, Enter, or Down (the next account).
fn entry_key(sym: Keysym, modifiers: &ModifiersState) -> crate::ui::EntryKey {
    use crate::ui::EntryKey;
    match sym.raw() {
        keysyms::KEY_BackSpace => EntryKey::Backspace,
        keysyms::KEY_Return | keysyms::KEY_KP_Enter => EntryKey::Enter,
        keysyms::KEY_Down | keysyms::KEY_KP_Down => EntryKey::NextAccount,
        _ if modifiers.ctrl || modifiers.alt || modifiers.logo => EntryKey::Other,
        _ => sym.key_char().map_or(EntryKey::Other, EntryKey::Char),
    }
}

/// The dialog's name for a keysym.
fn dialog_key(sym: u32, shift: bool) -> pcp_overlay::Key {
    use pcp_overlay::Key;
    match sym {
        keysyms::KEY_Tab => Key::Tab { shift },
        keysyms::KEY_ISO_Left_Tab => Key::Tab { shift: true },
        keysyms::KEY_Return | keysyms::KEY_KP_Enter => Key::Enter,
        keysyms::KEY_space => Key::Space,
        keysyms::KEY_Escape => Key::Escape,
        keysyms::KEY_Up | keysyms::KEY_KP_Up => Key::Up,
        keysyms::KEY_Down | keysyms::KEY_KP_Down => Key::Down,
        keysyms::KEY_Page_Up | keysyms::KEY_KP_Page_Up => Key::PageUp,
        keysyms::KEY_Page_Down | keysyms::KEY_KP_Page_Down => Key::PageDown,
        keysyms::KEY_Home | keysyms::KEY_KP_Home => Key::Home,
        keysyms::KEY_End | keysyms::KEY_KP_End => Key::End,
        _ => Key::Other,
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
