//! Seat input routing, decided in one place: each event goes to the plugin first
//! (`pcp_plugin::input`), which says whether the dialog (or a haptic double tap) took it; only
//! what it did not take reaches the window under the point. The focal point follows the pointer
//! and the last touch.

// The harness (`test-harness`) and the nested window (`winit`) feed input here; a headless
// build with neither has no input source.
#![cfg_attr(
    not(any(feature = "test-harness", feature = "winit", feature = "udev")),
    allow(dead_code)
)]

use smithay::backend::input::{ButtonState, KeyState};
use smithay::desktop::WindowSurfaceType;
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

    /// The pointer moved to `p` (global logical).
    pub(crate) fn pointer_motion(&mut self, p: Point<f64, Logical>, time: u32) {
        self.pointer = p;
        self.focus = p;
        let taken = pcp_plugin::input::pointer_motion(self, p);
        let Some(pointer) = self.seat.get_pointer() else {
            return;
        };
        // While the dialog has the pointer no client is under it.
        let focus = if taken { None } else { self.surface_under(p) };
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
        if pcp_plugin::input::pointer_button(self, self.pointer, pressed) {
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
        self.focus = p;
        if pcp_plugin::input::touch_down(self, p, time) {
            return;
        }
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
        if !pcp_plugin::input::touch_cancel(self)
            && let Some(touch) = self.seat.get_touch()
        {
            touch.cancel(self);
        }
    }

    /// The touch point lifted.
    pub(crate) fn touch_up(&mut self, time: u32) {
        if pcp_plugin::input::touch_up(self, time) {
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

    /// A key (evdev code) went down or up: the plugin's filter decides whether it is the
    /// dialog's (and keeps the release of a key it took from clients).
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
        let taken = keyboard.input(
            self,
            (code + 8).into(),
            state,
            serial,
            time,
            |state, mods, sym| pcp_plugin::input::filter_key(state, code, pressed, mods, sym),
        );
        pcp_plugin::input::apply_key(self, taken);
    }
}
