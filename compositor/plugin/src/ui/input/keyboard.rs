//! Keys: [`keyboard_input`] stands in for Smithay's `KeyboardHandle::input` and folds the
//! dialog's verdict into the host's own filter; [`keyboard_focus`] moves the keyboard focus to
//! and from the dialog when the engine says it changed.

use std::any::Any;

use pcp_overlay::{Key, KeyState as DialogKeyState};
use smithay::backend::input::KeyState;
use smithay::input::SeatHandler;
use smithay::input::keyboard::{
    FilterResult, KeyboardHandle, Keycode, KeysymHandle, ModifiersState,
};
use smithay::utils::{IsAlive, Serial};

use super::{KeyOwner, Routed};
use crate::ui::ConfirmUi;
use crate::ui::ShortcutKeys;
use crate::ui::entry::EntryKey;
use crate::ui::keys::{dialog_key, entry_key};
use crate::{PcpHandler, PromptEvent};

/// Smithay's `KeyboardHandle::input`, with the dialog first: call it wherever you call
/// `keyboard.input(…)`, with the same arguments (the keycode as Smithay gives it, an xkb
/// keycode) and your own filter. The dialog's keys (while it has the keyboard) and the focus
/// shortcut (while a dialog is up) go to the dialog and reach neither your filter nor a client,
/// and the release of a key whose press the dialog took follows it there even once the dialog
/// has gone. Every other key goes through `filter` as before; its result is what this returns
/// (`Some` when your filter intercepted the key, `None` when the key went to the client or to
/// the dialog).
pub fn keyboard_input<D, T, F>(
    state: &mut D,
    keyboard: &KeyboardHandle<D>,
    keycode: Keycode,
    key_state: KeyState,
    serial: Serial,
    time: u32,
    filter: F,
) -> Option<T>
where
    D: PcpHandler + SeatHandler,
    F: FnOnce(&mut D, &ModifiersState, KeysymHandle<'_>) -> FilterResult<T>,
{
    let mut taken = None;
    let result = keyboard.input(
        state,
        keycode,
        key_state,
        serial,
        time,
        |state, mods, sym| {
            if let Some(events) = verdict(state, keycode, key_state, mods, &sym) {
                taken = Some(events);
                return FilterResult::Intercept(None);
            }
            match filter(state, mods, sym) {
                FilterResult::Intercept(value) => FilterResult::Intercept(Some(value)),
                FilterResult::Forward => FilterResult::Forward,
            }
        },
    );
    // The keyboard was locked inside the filter: what the dialog answered runs now, when the
    // host may move the keyboard focus again.
    if let Some(events) = taken {
        crate::run_events(state, events);
    }
    result.flatten()
}

/// The dialog's verdict on one key: `Some` (with what it answered) when the key is the dialog's.
fn verdict<D: PcpHandler>(
    state: &mut D,
    keycode: Keycode,
    key_state: KeyState,
    modifiers: &ModifiersState,
    sym: &KeysymHandle<'_>,
) -> Option<Vec<PromptEvent>> {
    let pressed = key_state == KeyState::Pressed;
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
    match ui.key(keycode.raw(), pressed, key, shortcut, now) {
        Routed::Taken(events) => Some(events),
        Routed::Clients => None,
    }
}

/// Moves the keyboard focus as the dialog wants it: call it when the engine reports
/// [`Effect::KeyboardFocus`](crate::Effect::KeyboardFocus). When the dialog takes the keyboard
/// (a click or tap on it, the focus shortcut, a modal prompt), the client that had it loses it;
/// when the dialog gives it back, that client gets it again — unless the focus was given to
/// something else meanwhile, or the client is gone.
pub fn keyboard_focus<D>(state: &mut D, keyboard: &KeyboardHandle<D>, serial: Serial)
where
    D: PcpHandler + SeatHandler,
    D::KeyboardFocus: 'static,
{
    let wants = state.pcp().ui().wants_keyboard();
    let holding = state.pcp().keyboard_return.is_some();
    if wants == holding {
        return;
    }
    if wants {
        let had: Box<dyn Any> = Box::new(keyboard.current_focus());
        state.pcp().keyboard_return = Some(had);
        keyboard.set_focus(state, None, serial);
        return;
    }
    let back = state
        .pcp()
        .keyboard_return
        .take()
        .and_then(|had| had.downcast::<Option<D::KeyboardFocus>>().ok())
        .and_then(|had| *had)
        .filter(IsAlive::alive);
    if back.is_some() && keyboard.current_focus().is_none() {
        keyboard.set_focus(state, back, serial);
    }
}

impl ConfirmUi {
    /// A key (`code`, seen as `key` by the dialog) went down or up; `shortcut`: it is the
    /// `[overlay] focus_shortcut` with its modifiers. The dialog gets keys only while it has
    /// the keyboard; the shortcut gives it the keyboard (or gives it back) and reaches no one;
    /// Escape gives the keyboard back once the dialog has had it (after denying, past the
    /// guard). A key goes up where it went down. While the prompt's entry is focused and asks,
    /// `typed` (what the key types) goes into it instead: Enter submits the entry there, never
    /// Approve.
    pub(crate) fn key(
        &mut self,
        code: u32,
        pressed: bool,
        (key, typed): (Key, EntryKey),
        shortcut: bool,
        now: i64,
    ) -> Routed {
        if !pressed {
            return self.key_up(code, key, now);
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
            .key(key, DialogKeyState::Pressed, now.max(0) as u64);
        self.changes.damaged = true;
        Routed::Taken(match choice {
            Some(c) => self.answered(c),
            None => self.activity(now),
        })
    }

    /// A key went up: where its press went.
    fn key_up(&mut self, code: u32, key: Key, now: i64) -> Routed {
        match self.input.keys.remove(&code) {
            None => Routed::Clients,
            Some(KeyOwner::Shortcut) => Routed::Taken(Vec::new()),
            Some(KeyOwner::Dialog) if !self.dialog.is_open() => Routed::Taken(Vec::new()),
            Some(KeyOwner::Dialog) => {
                let choice =
                    self.dialog
                        .dialog_mut()
                        .key(key, DialogKeyState::Released, now.max(0) as u64);
                self.changes.damaged = true;
                if key == Key::Escape && !self.input.modal {
                    self.set_keyboard(false);
                }
                Routed::Taken(match choice {
                    Some(c) => self.answered(c),
                    None => Vec::new(),
                })
            }
        }
    }
}
