//! Seat input routing, decided in one place: each event goes to the plugin first
//! (`pcp_plugin::input`), which says whether the dialog (or a haptic double tap) took it; only
//! what it did not take reaches the window under the point. A dialog that is not modal takes
//! only what lands on it or its margin, so the desktop stays usable while a prompt waits. The
//! focal point follows the pointer and the last touch.

// The harness (`test-harness`) and the nested window (`winit`) feed input here; a headless
// build with neither has no input source.
#![cfg_attr(
    not(any(feature = "test-harness", feature = "winit", feature = "udev")),
    allow(dead_code)
)]

use smithay::backend::input::TouchSlot;
use smithay::backend::input::{ButtonState, KeyState};
use smithay::desktop::{WindowSurfaceType, layer_map_for_output};
use smithay::input::pointer::{ButtonEvent, MotionEvent};
use smithay::input::touch::{DownEvent, MotionEvent as TouchMotionEvent, UpEvent};
use smithay::utils::{Logical, Point, SERIAL_COUNTER, Serial};
use smithay::wayland::shell::wlr_layer::Layer;
use wayland_server::protocol::wl_surface::WlSurface;

use crate::state::State;
use crate::touch::{TouchOwner, TouchPoint};

impl State {
    pub(crate) fn surface_under(
        &self,
        p: Point<f64, Logical>,
    ) -> Option<(WlSurface, Point<f64, Logical>)> {
        if self.desktop.is_locked() {
            // Only the lock surface of the output under the point (at its top-left corner).
            let vo = self.backend.outputs.iter().find(|o| {
                let (w, h) = o.spec.logical_size();
                let (x, y) = (f64::from(o.spec.x), f64::from(o.spec.y));
                p.x >= x && p.y >= y && p.x < x + f64::from(w) && p.y < y + f64::from(h)
            })?;
            let lock = self.desktop.lock_surface_of(&vo.output.name())?;
            let origin = Point::from((f64::from(vo.spec.x), f64::from(vo.spec.y)));
            return Some((lock.wl_surface().clone(), origin));
        }
        // Panels and overlays above the windows, backgrounds below them.
        let on_layers = |layers: &[Layer]| self.layer_surface_under(p, layers);
        on_layers(&[Layer::Overlay, Layer::Top])
            .or_else(|| {
                let (window, loc) = self.desktop.space.element_under(p)?;
                let (surface, surface_loc) =
                    window.surface_under(p - loc.to_f64(), WindowSurfaceType::ALL)?;
                Some((surface, (surface_loc + loc).to_f64()))
            })
            .or_else(|| on_layers(&[Layer::Bottom, Layer::Background]))
    }

    /// The surface of a layer surface (or of its popups) of `layers`, in that order, under `p`
    /// on the output it is on, and where that surface is (global logical).
    fn layer_surface_under(
        &self,
        p: Point<f64, Logical>,
        layers: &[Layer],
    ) -> Option<(WlSurface, Point<f64, Logical>)> {
        let vo = self.backend.outputs.iter().find(|o| {
            let (w, h) = o.spec.logical_size();
            let (x, y) = (f64::from(o.spec.x), f64::from(o.spec.y));
            p.x >= x && p.y >= y && p.x < x + f64::from(w) && p.y < y + f64::from(h)
        })?;
        let origin = Point::<i32, Logical>::from((vo.spec.x, vo.spec.y));
        let local = p - origin.to_f64();
        let map = layer_map_for_output(&vo.output);
        layers.iter().find_map(|&layer| {
            let surface = map.layer_under(layer, local)?;
            let at = map.layer_geometry(surface)?.loc;
            let (under, loc) =
                surface.surface_under(local - at.to_f64(), WindowSurfaceType::ALL)?;
            Some((under, (origin + at + loc).to_f64()))
        })
    }

    /// The pointer moved to `p` (global logical).
    pub(crate) fn pointer_motion(&mut self, p: Point<f64, Logical>, time: u32) {
        self.input_activity();
        // The cursor moves with it (drawn by the winit and udev backends only).
        if self.backend.kind() != crate::backend::BackendKind::Headless {
            self.frames.damage();
        }
        self.pointer.moved_to(p);
        let taken = pcp_plugin::input::pointer_motion(self, p)
            // The dialog followed the focal point and may now be under the pointer.
            || self.pcp.ui().takes_pointer_at(pcp_overlay::Point { x: p.x, y: p.y });
        if taken {
            self.pointer_to_dialog(time);
            return;
        }
        let Some(pointer) = self.seat.get_pointer() else {
            return;
        };
        let focus = self.surface_under(p);
        self.pointer.set_under(focus.clone());
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
        self.input_activity();
        if pcp_plugin::input::pointer_button(self, button, self.pointer.location(), pressed) {
            return;
        }
        if pressed {
            self.focus_window_under(self.pointer.location());
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

    /// The pointer is on the dialog (or its margin): no window is under it. A window that had
    /// it gets a leave; one holding a button (an implicit grab) gets no motion until the
    /// pointer is off the dialog again.
    pub(crate) fn pointer_to_dialog(&mut self, time: u32) {
        let Some(pointer) = self.seat.get_pointer() else {
            return;
        };
        if pointer.is_grabbed() {
            return;
        }
        let location = self.pointer.location();
        self.pointer.set_under(None);
        pointer.motion(
            self,
            None,
            &MotionEvent {
                location,
                serial: SERIAL_COUNTER.next_serial(),
                time,
            },
        );
        pointer.frame(self);
    }

    /// The dialog appeared, moved or went: the pointer leaves a window now under it, or enters
    /// the window it uncovered.
    pub(crate) fn pointer_after_dialog(&mut self) {
        let p = self.pointer.location();
        let here = pcp_overlay::Point { x: p.x, y: p.y };
        if self.pcp.ui().takes_pointer_at(here) {
            self.pointer_to_dialog(0);
            return;
        }
        let Some(pointer) = self.seat.get_pointer() else {
            return;
        };
        if pointer.is_grabbed() || pointer.current_focus().is_some() {
            return;
        }
        let focus = self.surface_under(p);
        if focus.is_none() {
            return;
        }
        self.pointer.set_under(focus.clone());
        pointer.motion(
            self,
            focus,
            &MotionEvent {
                location: p,
                serial: SERIAL_COUNTER.next_serial(),
                time: 0,
            },
        );
        pointer.frame(self);
    }

    fn focus_window_under(&mut self, p: Point<f64, Logical>) {
        if self.desktop.is_locked() {
            return;
        }
        let window = self.desktop.space.element_under(p).map(|(w, _)| w.clone());
        if let Some(window) = window {
            self.desktop.space.raise_element(&window, true);
            let surface = window.toplevel().map(|t| t.wl_surface().clone());
            if let Some(keyboard) = self.seat.get_keyboard() {
                keyboard.set_focus(self, surface, SERIAL_COUNTER.next_serial());
            }
            self.frames.damage();
        }
    }

    /// Touch point `slot` went down at `p`: the focal point moves there. The dialog is asked
    /// first; otherwise the surface under the point has it until it lifts (its focus is decided
    /// here, once).
    pub(crate) fn touch_down(&mut self, slot: TouchSlot, p: Point<f64, Logical>, time: u32) {
        self.input_activity();
        self.pointer.set_focal_point(p);
        if pcp_plugin::input::touch_down(self, p, time) {
            self.touch_went_down(slot, TouchOwner::Dialog, p, None, time);
            return;
        }
        let focus = self.surface_under(p);
        let owner = TouchOwner::Client(focus.as_ref().map(|(s, _)| s.clone()));
        let serial = SERIAL_COUNTER.next_serial();
        self.touch_went_down(slot, owner, p, Some(serial), time);
        if let Some(touch) = self.seat.get_touch() {
            touch.down(
                self,
                focus,
                &DownEvent {
                    slot,
                    location: p,
                    serial,
                    time,
                },
            );
            touch.frame(self);
        }
    }

    /// Remembers where `slot` went down; a slot already down lost its up, which its owner
    /// gets now.
    fn touch_went_down(
        &mut self,
        slot: TouchSlot,
        owner: TouchOwner,
        at: Point<f64, Logical>,
        serial: Option<Serial>,
        time: u32,
    ) {
        let point = TouchPoint { owner, at, serial };
        if let Some(TouchPoint {
            owner: TouchOwner::Client(_),
            ..
        }) = self.touch.went_down(slot, point)
            && let Some(touch) = self.seat.get_touch()
        {
            touch.up(
                self,
                &UpEvent {
                    slot,
                    serial: SERIAL_COUNTER.next_serial(),
                    time,
                },
            );
        }
    }

    /// Touch point `slot` moved to `p`: it stays with whoever had its down. A point that began
    /// on a window goes on to that window, except over the dialog: there no window learns where
    /// it is (as a held pointer button, see `pointer_to_dialog`).
    pub(crate) fn touch_motion(&mut self, slot: TouchSlot, p: Point<f64, Logical>, time: u32) {
        self.input_activity();
        self.pointer.set_focal_point(p);
        self.touch.moved(slot, p);
        let Some(TouchOwner::Client(_)) = self.touch.owner(slot) else {
            // The dialog's points press where they went down; an unknown point is no one's.
            return;
        };
        if self
            .pcp
            .ui()
            .takes_pointer_at(pcp_overlay::Point { x: p.x, y: p.y })
        {
            return;
        }
        if let Some(touch) = self.seat.get_touch() {
            touch.motion(
                self,
                None,
                &TouchMotionEvent {
                    slot,
                    location: p,
                    time,
                },
            );
            touch.frame(self);
        }
    }

    /// The touch source cancelled its contacts: a cancelled touch is no click, so the dialog
    /// forgets its points and clients get a cancel.
    pub(crate) fn touch_cancel(&mut self) {
        let (_, clients) = self.touch.cancel_all();
        pcp_plugin::input::touch_cancel(self);
        let Some(touch) = self.seat.get_touch() else {
            return;
        };
        if clients.is_empty() {
            return;
        }
        // Smithay 0.7 sends a cancel only for points with an event since their last frame: each
        // gets one (where it is), then the cancel reaches every client holding a point.
        let time = (self.clock.now_ms() & 0xffff_ffff) as u32;
        for (slot, location) in clients {
            touch.motion(
                self,
                None,
                &TouchMotionEvent {
                    slot,
                    location,
                    time,
                },
            );
        }
        touch.cancel(self);
    }

    /// Touch point `slot` lifted, where its down went.
    pub(crate) fn touch_up(&mut self, slot: TouchSlot, time: u32) {
        self.input_activity();
        match self.touch.lifted(slot).map(|p| p.owner) {
            Some(TouchOwner::Client(_)) => {}
            Some(TouchOwner::Dialog) => {
                pcp_plugin::input::touch_up(self, time);
                return;
            }
            // Its down was not seen (it began before this compositor ran): the dialog may
            // still claim it, or it goes nowhere.
            None => {
                pcp_plugin::input::touch_up(self, time);
                return;
            }
        }
        if let Some(touch) = self.seat.get_touch() {
            touch.up(
                self,
                &UpEvent {
                    slot,
                    serial: SERIAL_COUNTER.next_serial(),
                    time,
                },
            );
            touch.frame(self);
        }
    }

    /// `surface` is being destroyed: the touch points down on it lift there (a client is told
    /// each one ended, and none is left waiting for an up that cannot come).
    pub(crate) fn touch_surface_destroyed(&mut self, surface: &WlSurface) {
        let slots = self.touch.take_on(surface);
        if slots.is_empty() {
            return;
        }
        let Some(touch) = self.seat.get_touch() else {
            return;
        };
        let time = (self.clock.now_ms() & 0xffff_ffff) as u32;
        for slot in slots {
            touch.up(
                self,
                &UpEvent {
                    slot,
                    serial: SERIAL_COUNTER.next_serial(),
                    time,
                },
            );
        }
        touch.frame(self);
    }

    /// A key (evdev code) went down or up: the plugin's filter decides whether it is the
    /// dialog's or the focus shortcut (and keeps the release of a key it took from clients).
    pub(crate) fn key(&mut self, code: u32, pressed: bool, time: u32) {
        self.input_activity();
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
