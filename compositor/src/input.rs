//! Seat input routing, decided in one place: each event goes through the plugin's stand-in for
//! Smithay's own call (`pcp_plugin::input`), which lets the dialog (or a haptic double tap) see
//! it first and passes to the window under the point only what the dialog did not take. A
//! dialog that is not modal takes only what lands on it or its margin, so the desktop stays
//! usable while a prompt waits; a touch point, a button or a gesture ends where it began, and
//! each touch point goes to the surface under its own down ([`crate::touch`]). Layer surfaces
//! take input above and below the windows by their layer. The focal point follows the pointer
//! and the last touch. Tablet tools are in `tablet_input`.

// The harness (`test-harness`) and the nested window (`winit`) feed input here; a headless
// build with neither has no input source.
#![cfg_attr(
    not(any(feature = "test-harness", feature = "winit", feature = "udev")),
    allow(dead_code)
)]

#[cfg(any(feature = "winit", feature = "udev"))]
use smithay::backend::input::{Axis, AxisSource, Event, InputBackend, PointerAxisEvent};
use smithay::backend::input::{ButtonState, KeyState, TouchSlot};
use smithay::desktop::{WindowSurfaceType, layer_map_for_output};
use smithay::input::keyboard::{FilterResult, Keycode};
use smithay::input::pointer::{
    AxisFrame, ButtonEvent, GestureHoldBeginEvent, GestureHoldEndEvent, GesturePinchBeginEvent,
    GesturePinchEndEvent, GesturePinchUpdateEvent, GestureSwipeBeginEvent, GestureSwipeEndEvent,
    GestureSwipeUpdateEvent, MotionEvent,
};
use smithay::input::touch::{self, DownEvent, UpEvent};
use smithay::utils::{Logical, Point, SERIAL_COUNTER};
use smithay::wayland::shell::wlr_layer::Layer;
use wayland_server::protocol::wl_surface::WlSurface;

use crate::state::State;
use crate::touch::{TouchOwner, TouchPoint};

/// One touchpad gesture event, as the backend read it.
#[derive(Debug, Clone)]
#[cfg_attr(not(feature = "udev"), allow(dead_code))]
pub(crate) enum Gesture {
    SwipeBegin(GestureSwipeBeginEvent),
    SwipeUpdate(GestureSwipeUpdateEvent),
    SwipeEnd(GestureSwipeEndEvent),
    PinchBegin(GesturePinchBeginEvent),
    PinchUpdate(GesturePinchUpdateEvent),
    PinchEnd(GesturePinchEndEvent),
    HoldBegin(GestureHoldBeginEvent),
    HoldEnd(GestureHoldEndEvent),
}

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

    /// The seat's pointer is where the compositor's is (a hint for Smithay, which sends
    /// nothing): at the start, and when a display moved the pointer with it.
    pub(crate) fn sync_seat_pointer(&self) {
        if let Some(pointer) = self.seat.get_pointer() {
            pointer.set_location(self.pointer.location());
        }
    }

    /// The pointer moved to `p` (global logical).
    pub(crate) fn pointer_motion(&mut self, p: Point<f64, Logical>, time: u32) {
        self.input_activity();
        // The cursor moves with it (drawn by the winit and udev backends only).
        if self.backend.kind() != crate::backend::BackendKind::Headless {
            self.frames.damage();
        }
        self.pointer.moved_to(p);
        let Some(pointer) = self.seat.get_pointer() else {
            return;
        };
        let under = self.surface_under(p);
        self.pointer.set_under(under.clone());
        let event = MotionEvent {
            location: p,
            serial: SERIAL_COUNTER.next_serial(),
            time,
        };
        pcp_plugin::input::pointer_motion(self, &pointer, under, &event);
        pointer.frame(self);
    }

    /// A pointer button (evdev code) went down or up at the pointer's position.
    pub(crate) fn pointer_button(&mut self, button: u32, pressed: bool, time: u32) {
        self.input_activity();
        let Some(pointer) = self.seat.get_pointer() else {
            return;
        };
        let location = pointer.current_location();
        let here = pcp_overlay::Point {
            x: location.x,
            y: location.y,
        };
        // A press the dialog does not take raises and focuses the window under it first.
        if pressed && !self.pcp.ui().takes_pointer_at(here) {
            self.focus_window_under(location);
        }
        let event = ButtonEvent {
            serial: SERIAL_COUNTER.next_serial(),
            time,
            button,
            state: if pressed {
                ButtonState::Pressed
            } else {
                ButtonState::Released
            },
        };
        pcp_plugin::input::pointer_button(self, &pointer, &event);
        pointer.frame(self);
    }

    /// A scroll frame (a wheel, two fingers, a trackpoint) at the pointer's position.
    pub(crate) fn pointer_axis(&mut self, frame: AxisFrame) {
        self.input_activity();
        let Some(pointer) = self.seat.get_pointer() else {
            return;
        };
        pcp_plugin::input::pointer_axis(self, &pointer, frame);
        pointer.frame(self);
    }

    /// A touchpad gesture event at the pointer's position.
    #[cfg_attr(not(any(feature = "udev", feature = "test-harness")), allow(dead_code))]
    pub(crate) fn gesture(&mut self, gesture: Gesture) {
        use pcp_plugin::input as pi;
        self.input_activity();
        let Some(p) = self.seat.get_pointer() else {
            return;
        };
        match &gesture {
            Gesture::SwipeBegin(e) => pi::gesture_swipe_begin(self, &p, e),
            Gesture::SwipeUpdate(e) => pi::gesture_swipe_update(self, &p, e),
            Gesture::SwipeEnd(e) => pi::gesture_swipe_end(self, &p, e),
            Gesture::PinchBegin(e) => pi::gesture_pinch_begin(self, &p, e),
            Gesture::PinchUpdate(e) => pi::gesture_pinch_update(self, &p, e),
            Gesture::PinchEnd(e) => pi::gesture_pinch_end(self, &p, e),
            Gesture::HoldBegin(e) => pi::gesture_hold_begin(self, &p, e),
            Gesture::HoldEnd(e) => pi::gesture_hold_end(self, &p, e),
        };
    }

    /// The dialog appeared, moved or went: the pointer leaves a window now under it, or enters
    /// the window it uncovered.
    pub(crate) fn pointer_after_dialog(&mut self) {
        let Some(pointer) = self.seat.get_pointer() else {
            return;
        };
        let under = self.surface_under(pointer.current_location());
        pcp_plugin::input::pointer_after_dialog(self, &pointer, under);
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

    /// Touch point `slot` went down at `p`: the focal point moves there. The dialog sees it
    /// first; otherwise the surface under the point has it until it lifts (its focus is decided
    /// here, once: [`crate::touch::EachPointGrab`]).
    pub(crate) fn touch_down(&mut self, slot: TouchSlot, p: Point<f64, Logical>, time: u32) {
        self.input_activity();
        self.pointer.set_focal_point(p);
        let Some(touch) = self.seat.get_touch() else {
            return;
        };
        let under = self.surface_under(p);
        let surface = under.as_ref().map(|(s, _)| s.clone());
        let serial = SERIAL_COUNTER.next_serial();
        let event = DownEvent {
            slot,
            location: p,
            serial,
            time,
        };
        let taken = pcp_plugin::input::touch_down(self, &touch, under, &event);
        let point = if taken {
            TouchPoint {
                owner: TouchOwner::Dialog,
                at: p,
                serial: None,
            }
        } else {
            TouchPoint {
                owner: TouchOwner::Client(surface),
                at: p,
                serial: Some(serial),
            }
        };
        self.touch.went_down(slot, point);
        touch.frame(self);
    }

    /// Touch point `slot` moved to `p`: it stays with whoever it went down on. A window's point
    /// over the dialog (or its margin) is withheld by the plugin: no window learns where a
    /// finger is on the dialog, as with a held pointer button.
    pub(crate) fn touch_motion(&mut self, slot: TouchSlot, p: Point<f64, Logical>, time: u32) {
        self.input_activity();
        self.touch.moved(slot, p);
        let Some(touch) = self.seat.get_touch() else {
            return;
        };
        let under = self.surface_under(p);
        let event = touch::MotionEvent {
            slot,
            location: p,
            time,
        };
        pcp_plugin::input::touch_motion(self, &touch, under, &event);
        touch.frame(self);
    }

    /// Touch point `slot` lifted.
    pub(crate) fn touch_up(&mut self, slot: TouchSlot, time: u32) {
        self.input_activity();
        self.touch.lifted(slot);
        let Some(touch) = self.seat.get_touch() else {
            return;
        };
        let event = UpEvent {
            slot,
            serial: SERIAL_COUNTER.next_serial(),
            time,
        };
        pcp_plugin::input::touch_up(self, &touch, &event);
        touch.frame(self);
    }

    /// The touch source cancelled its contacts: a cancelled touch is no click, so the dialog
    /// forgets its own and the windows get a cancel for theirs.
    pub(crate) fn touch_cancel(&mut self) {
        let clients = self.touch.cancel_all();
        let Some(touch) = self.seat.get_touch() else {
            return;
        };
        // Smithay 0.7 cancels only points with an event since their last frame: each window's
        // point gets one (where it is) first, so its window hears the cancel.
        let time = (self.clock.now_ms() & 0xffff_ffff) as u32;
        for (slot, location) in clients {
            let event = touch::MotionEvent {
                slot,
                location,
                time,
            };
            touch.motion(self, None, &event);
        }
        pcp_plugin::input::touch_cancel(self, &touch);
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

    /// A key (`keycode` as Smithay's backends give it, an xkb keycode) went down or up: the
    /// plugin decides whether it is the dialog's or the focus shortcut (and keeps the release
    /// of a key it took from clients); every other key goes to the focused window.
    pub(crate) fn key(&mut self, keycode: Keycode, key_state: KeyState, time: u32) {
        self.input_activity();
        let Some(keyboard) = self.seat.get_keyboard() else {
            return;
        };
        let serial = SERIAL_COUNTER.next_serial();
        pcp_plugin::input::keyboard_input::<_, (), _>(
            self,
            &keyboard,
            keycode,
            key_state,
            serial,
            time,
            |_, _, _| FilterResult::Forward,
        );
    }
}

#[cfg(any(feature = "winit", feature = "udev"))]
/// A backend's scroll event as Smithay's frame: the amounts in logical pixels (a wheel's
/// discrete steps at 15 pixels a click when the device gives no amount), its source and
/// direction, and a finger scroll's stop.
pub(crate) fn axis_frame<B: InputBackend>(event: &B::PointerAxisEvent) -> AxisFrame {
    let mut frame = AxisFrame::new(event.time_msec()).source(event.source());
    for axis in [Axis::Horizontal, Axis::Vertical] {
        let v120 = event.amount_v120(axis);
        let amount = event
            .amount(axis)
            .unwrap_or_else(|| v120.unwrap_or(0.0) * 15.0 / 120.0);
        if amount != 0.0 {
            frame = frame
                .relative_direction(axis, event.relative_direction(axis))
                .value(axis, amount);
            if let Some(discrete) = v120 {
                frame = frame.v120(axis, discrete as i32);
            }
        } else if event.source() == AxisSource::Finger && event.amount(axis) == Some(0.0) {
            frame = frame.stop(axis);
        }
    }
    frame
}
