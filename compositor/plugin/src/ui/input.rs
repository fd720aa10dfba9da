//! Modal input, decided in one place: while the dialog is up, pointer, touch and keys are the
//! dialog's and never a client's (hit-testing of windows is suspended, and the release of a key
//! whose press the dialog took is kept from clients even after the dialog has gone); while a
//! prompt waits for a double tap, touches are the haptic answer's. The user's activity on the
//! dialog restarts its inactivity timeout, at most once a second.

use std::collections::HashSet;

use pcp_gate::{Answer, Modality, ModalityEvent};
use pcp_haptics::TouchKind;
use pcp_overlay::{Choice, Key, KeyState};

use super::ConfirmUi;
use crate::PromptEvent;

/// Activity is reported to the gate at most this often (pointer motion must not flood it).
const ACTIVITY_INTERVAL_MS: i64 = 1000;

/// Where one input event goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Routed {
    /// The dialog (or the haptic double tap) took it: it must not reach any client. The events
    /// are for the gate (apply them with [`crate::apply`]).
    Taken(Vec<PromptEvent>),
    /// Not the dialog's: route it to the clients as usual.
    Clients,
}

/// The input state the UI keeps.
#[derive(Debug, Default)]
pub(crate) struct ModalInput {
    /// Keys whose press the dialog took: their release is not sent to clients either.
    suppressed_keys: HashSet<u32>,
    /// When the user last did something on the dialog without answering (host clock, ms).
    last_activity_ms: Option<i64>,
    /// Where the current touch point went down, while the dialog or the double tap has it.
    touch: Option<pcp_overlay::Point>,
}

impl ModalInput {
    pub fn suppressed_keys(&self) -> impl Iterator<Item = u32> + '_ {
        self.suppressed_keys.iter().copied()
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
        let event = match choice {
            Choice::Approve => ModalityEvent::Answer(Modality::Visual, Answer::Approve),
            Choice::Deny => ModalityEvent::Answer(Modality::Visual, Answer::Deny),
            // Offered only when the prompt allows it; the gate checks that again.
            Choice::ApproveForSession => ModalityEvent::ApproveForSession,
        };
        vec![PromptEvent { prompt, event }]
    }

    /// The pointer moved to `p` (global logical).
    pub fn pointer_motion(&mut self, p: pcp_overlay::Point, now: i64) -> Routed {
        if !self.dialog.is_open() {
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

    /// A pointer button went down or up with the pointer at `at`.
    pub fn pointer_button(&mut self, at: pcp_overlay::Point, pressed: bool, now: i64) -> Routed {
        if !self.dialog.is_open() {
            return Routed::Clients;
        }
        let Some((x, y)) = self.dialog.local(at) else {
            return Routed::Taken(Vec::new());
        };
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
            let touch_dpi = self.timing.touch_dpi;
            let events =
                self.haptic
                    .touch(TouchKind::Down, p, touch_dpi, self.dialog.dialog_mut(), at);
            self.changes.damaged = true;
            return Routed::Taken(events);
        }
        if !self.dialog.is_open() {
            return Routed::Clients;
        }
        let Some((x, y)) = self.dialog.local(p) else {
            return Routed::Taken(Vec::new());
        };
        self.input.touch = Some(p);
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
        if !self.dialog.is_open() {
            return Routed::Clients;
        }
        let Some((x, y)) = at.and_then(|p| self.dialog.local(p)) else {
            return Routed::Taken(Vec::new());
        };
        let choice = self.dialog.dialog_mut().pointer_up(x, y, now.max(0) as u64);
        self.changes.damaged = true;
        Routed::Taken(choice.map(|c| self.answered(c)).unwrap_or_default())
    }

    /// The touch source cancelled its contact: a cancelled touch is no click.
    pub fn touch_cancel(&mut self) -> Routed {
        self.input.touch = None;
        if self.dialog.is_open() || self.haptic.active() {
            Routed::Taken(Vec::new())
        } else {
            Routed::Clients
        }
    }

    /// A key (evdev `code`, seen as `key` by the dialog) went down or up. While the dialog is
    /// up the key is the dialog's, and its release is kept from clients even if the dialog has
    /// gone by then.
    pub fn key(&mut self, code: u32, pressed: bool, key: Key, now: i64) -> Routed {
        let released_ours = !pressed && self.input.suppressed_keys.remove(&code);
        if !self.dialog.is_open() {
            return if released_ours {
                Routed::Taken(Vec::new())
            } else {
                Routed::Clients
            };
        }
        if pressed {
            self.input.suppressed_keys.insert(code);
        } else if !released_ours {
            // Its press went to a client before the dialog came up: the client gets its
            // release, and the dialog never sees half a key.
            return Routed::Clients;
        }
        let state = if pressed {
            KeyState::Pressed
        } else {
            KeyState::Released
        };
        let choice = self.dialog.dialog_mut().key(key, state, now.max(0) as u64);
        self.changes.damaged = true;
        Routed::Taken(match choice {
            Some(c) => self.answered(c),
            None => self.activity(now),
        })
    }
}
