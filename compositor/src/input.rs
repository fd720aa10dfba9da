//! Seat input routing, decided in one place: while the dialog is up, pointer, touch and keys go
//! to it and never to a client (hit-testing of windows is suspended, intercepted key releases are
//! suppressed); otherwise they go to the window under the point. The focal point follows the
//! pointer and the last touch.

// The harness (`test-harness`) and the nested window (`winit`) feed input here; a headless
// build with neither has no input source.
#![cfg_attr(
    not(any(feature = "test-harness", feature = "winit", feature = "udev")),
    allow(dead_code)
)]

use pcp_gate::Answer;
use pcp_haptics::TouchKind;
use pcp_overlay::{Choice, Key, KeyState as DialogKeyState};
use smithay::backend::input::{ButtonState, KeyState};
use smithay::desktop::WindowSurfaceType;
use smithay::input::keyboard::{FilterResult, Keysym};
use smithay::input::pointer::{ButtonEvent, MotionEvent};
use smithay::input::touch::{DownEvent, UpEvent};
use smithay::utils::{Logical, Point, SERIAL_COUNTER};
use wayland_server::protocol::wl_surface::WlSurface;

use crate::state::State;

impl State {
    fn surface_under(&self, p: Point<f64, Logical>) -> Option<(WlSurface, Point<f64, Logical>)> {
        let (window, loc) = self.space.element_under(p)?;
        let (surface, surface_loc) =
            window.surface_under(p - loc.to_f64(), WindowSurfaceType::ALL)?;
        Some((surface, (surface_loc + loc).to_f64()))
    }

    fn now_u(&self) -> u64 {
        self.clock.now_ms().max(0) as u64
    }

    /// The user did something with the dialog without answering: the inactivity timeout starts
    /// again (at most once a second, so pointer motion does not flood the gate).
    fn note_activity(&mut self) {
        let now = self.clock.now_ms();
        if now - self.last_activity_ms < 1000 {
            return;
        }
        self.last_activity_ms = now;
        crate::intent::respond(self, pcp_gate::ModalityEvent::Activity);
    }

    fn apply_choice(&mut self, choice: Option<Choice>) {
        let answer = match choice {
            Some(Choice::Approve) => Answer::Approve,
            Some(Choice::Deny) => Answer::Deny,
            None => return,
        };
        crate::intent::answer_visual(self, answer);
    }

    /// Moves the focal point (the overlay follows it across outputs).
    pub(crate) fn set_focal_point(&mut self, p: Point<f64, Logical>) {
        self.focus = p;
        if self.overlay.is_open() {
            self.sync_overlay();
        }
    }

    /// The pointer moved to `p` (global logical).
    pub(crate) fn pointer_motion(&mut self, p: Point<f64, Logical>, time: u32) {
        self.pointer = p;
        self.set_focal_point(p);
        let Some(pointer) = self.seat.get_pointer() else {
            return;
        };
        let focus = if self.overlay.is_open() {
            if let Some((x, y)) = self.overlay.local(p) {
                self.overlay.dialog_mut().pointer_motion(x, y);
                if self.overlay.dialog().control_at(x, y).is_some() {
                    self.note_activity();
                }
            }
            None
        } else {
            self.surface_under(p)
        };
        let serial = SERIAL_COUNTER.next_serial();
        pointer.motion(
            self,
            focus,
            &MotionEvent {
                location: p,
                serial,
                time,
            },
        );
        pointer.frame(self);
    }

    /// A pointer button (evdev code) went down or up at the pointer's position.
    pub(crate) fn pointer_button(&mut self, button: u32, pressed: bool, time: u32) {
        if self.overlay.is_open() {
            let now = self.now_u();
            let Some((x, y)) = self.overlay.local(self.pointer) else {
                return;
            };
            let dialog = self.overlay.dialog_mut();
            let choice = if pressed {
                dialog.pointer_down(x, y, now)
            } else {
                dialog.pointer_up(x, y, now)
            };
            self.dirty = true;
            if choice.is_none() {
                self.note_activity();
            }
            self.apply_choice(choice);
            return;
        }
        if pressed {
            self.focus_window_under(self.pointer);
        }
        let Some(pointer) = self.seat.get_pointer() else {
            return;
        };
        let state = if pressed {
            ButtonState::Pressed
        } else {
            ButtonState::Released
        };
        pointer.button(
            self,
            &ButtonEvent {
                serial: SERIAL_COUNTER.next_serial(),
                time,
                button,
                state,
            },
        );
        pointer.frame(self);
    }

    fn focus_window_under(&mut self, p: Point<f64, Logical>) {
        let window = self.space.element_under(p).map(|(w, _)| w.clone());
        if let Some(window) = window {
            self.space.raise_element(&window, true);
            let surface = window.toplevel().map(|t| t.wl_surface().clone());
            if let Some(keyboard) = self.seat.get_keyboard() {
                keyboard.set_focus(self, surface, SERIAL_COUNTER.next_serial());
            }
            self.dirty = true;
        }
    }

    /// A touch point went down at `p`: the focal point moves there.
    pub(crate) fn touch_down(&mut self, p: Point<f64, Logical>, time: u32) {
        self.set_focal_point(p);
        if self.haptic.active() {
            // A tap for the haptic answer: it must not press the dialog or reach a client.
            self.last_touch = Some(p);
            self.haptic_touch(TouchKind::Down, p, time);
            return;
        }
        if self.overlay.is_open() {
            let now = self.now_u();
            if let Some((x, y)) = self.overlay.local(p) {
                self.last_touch = Some(p);
                let choice = self.overlay.dialog_mut().pointer_down(x, y, now);
                self.dirty = true;
                self.apply_choice(choice);
            }
            return;
        }
        self.last_touch = Some(p);
        let focus = self.surface_under(p);
        if let Some(touch) = self.seat.get_touch() {
            touch.down(
                self,
                focus,
                &DownEvent {
                    slot: Some(0).into(),
                    location: p,
                    serial: SERIAL_COUNTER.next_serial(),
                    time,
                },
            );
            touch.frame(self);
        }
    }

    /// The touch source cancelled its contact: a cancelled touch is no click, so the dialog
    /// forgets it and a client gets a cancel.
    #[cfg_attr(not(any(feature = "winit", feature = "udev")), allow(dead_code))]
    pub(crate) fn touch_cancel(&mut self) {
        self.last_touch = None;
        if !self.overlay.is_open()
            && let Some(touch) = self.seat.get_touch()
        {
            touch.cancel(self);
        }
    }

    /// The touch point lifted.
    pub(crate) fn touch_up(&mut self, time: u32) {
        let p = self.last_touch.take();
        if self.haptic.active() {
            if let Some(p) = p {
                self.haptic_touch(TouchKind::Up, p, time);
            }
            return;
        }
        if self.overlay.is_open() {
            let now = self.now_u();
            if let Some((x, y)) = p.and_then(|p| self.overlay.local(p)) {
                let choice = self.overlay.dialog_mut().pointer_up(x, y, now);
                self.dirty = true;
                self.apply_choice(choice);
            }
            return;
        }
        if let Some(touch) = self.seat.get_touch() {
            touch.up(
                self,
                &UpEvent {
                    slot: Some(0).into(),
                    serial: SERIAL_COUNTER.next_serial(),
                    time,
                },
            );
            touch.frame(self);
        }
    }

    /// A key (evdev code) went down or up. While the dialog is up the key is the dialog's, and
    /// its release is kept from clients even if the dialog has gone by then.
    pub(crate) fn key(&mut self, code: u32, pressed: bool, time: u32) {
        let Some(keyboard) = self.seat.get_keyboard() else {
            return;
        };
        let state = if pressed {
            KeyState::Pressed
        } else {
            KeyState::Released
        };
        let serial = SERIAL_COUNTER.next_serial();
        let choice = keyboard.input(
            self,
            (code + 8).into(),
            state,
            serial,
            time,
            |state, mods, sym| {
                if !pressed && state.suppressed_keys.remove(&code) {
                    return FilterResult::Intercept(None);
                }
                if !state.overlay.is_open() {
                    return FilterResult::Forward;
                }
                if pressed {
                    state.suppressed_keys.insert(code);
                }
                let key = match sym.modified_sym() {
                    Keysym::Tab => Key::Tab { shift: mods.shift },
                    Keysym::ISO_Left_Tab => Key::Tab { shift: true },
                    Keysym::Return | Keysym::KP_Enter => Key::Enter,
                    Keysym::space => Key::Space,
                    Keysym::Escape => Key::Escape,
                    _ => Key::Other,
                };
                let ks = if pressed {
                    DialogKeyState::Pressed
                } else {
                    DialogKeyState::Released
                };
                let now = state.now_u();
                state.dirty = true;
                FilterResult::Intercept(state.overlay.dialog_mut().key(key, ks, now))
            },
        );
        let choice = choice.flatten();
        if choice.is_none() && self.overlay.is_open() {
            self.note_activity();
        }
        self.apply_choice(choice);
    }
}
