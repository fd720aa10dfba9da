//! The compositor run as a library by a program of its own (a conformance suite's module, a
//! launcher): clients it connected itself over a socket pair, windows placed where it says, and
//! the events of input devices it drives. Each device event takes the same routing as a
//! backend's, the dialog first ([`crate::input`]); nothing here is reachable from a Wayland
//! client.

use std::os::unix::net::UnixStream;
use std::sync::Arc;

use smithay::input::pointer::MotionEvent;
use smithay::utils::{Logical, Point, SERIAL_COUNTER};
use wayland_server::backend::ClientId;
use wayland_server::{Client, Resource};

use crate::handlers::ClientState;
use crate::state::State;

/// One event of an input device the host drives. Positions are global logical coordinates;
/// each touch point is a slot of its own, down until its up.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DeviceEvent {
    /// The pointer moved to (x, y).
    PointerMotion { x: f64, y: f64 },
    /// The pointer moved by (dx, dy).
    PointerMotionRelative { dx: f64, dy: f64 },
    /// Pointer button `code` (evdev, e.g. `BTN_LEFT` 0x110) went down or up.
    PointerButton { code: u32, pressed: bool },
    /// Touch point `slot` went down at (x, y).
    TouchDown { slot: u32, x: f64, y: f64 },
    /// Touch point `slot` moved to (x, y).
    TouchMotion { slot: u32, x: f64, y: f64 },
    /// Touch point `slot` lifted.
    TouchUp { slot: u32 },
    /// The touch source cancelled every point.
    TouchCancel,
}

/// Why a client could not be added.
#[derive(Debug, thiserror::Error)]
#[error("cannot add the client: {0}")]
pub struct InsertClientError(String);

impl State {
    /// Adds the client at the other end of `stream` (one half of a socket pair the host made),
    /// named by the credentials of the socket as a client of the listening socket is.
    pub fn insert_client(&mut self, stream: UnixStream) -> Result<Client, InsertClientError> {
        let data = Arc::new(ClientState::connected(&stream, None));
        self.dh
            .insert_client(stream, data)
            .map_err(|e| InsertClientError(e.to_string()))
    }

    /// Moves the window whose toplevel surface is object `surface_id` of `client` so its
    /// top-left corner is at `at` (global logical). Returns whether there is such a window.
    /// The pointer enters whatever is under it now.
    pub fn place_window(
        &mut self,
        client: &ClientId,
        surface_id: u32,
        at: Point<i32, Logical>,
    ) -> bool {
        let window = self
            .desktop
            .space
            .elements()
            .find(|w| {
                w.toplevel().is_some_and(|t| {
                    let id = t.wl_surface().id();
                    id.protocol_id() == surface_id
                        && self.dh.get_client(id).is_ok_and(|c| c.id() == *client)
                })
            })
            .cloned();
        let Some(window) = window else {
            return false;
        };
        self.desktop.space.map_element(window, at, false);
        self.frames.damage();
        self.refocus_pointer();
        true
    }

    /// One event of a device the host drives, dated now by the compositor's clock.
    pub fn device_input(&mut self, event: DeviceEvent) {
        let time = (self.clock.now_ms() & 0xffff_ffff) as u32;
        match event {
            DeviceEvent::PointerMotion { x, y } => self.pointer_motion(Point::from((x, y)), time),
            DeviceEvent::PointerMotionRelative { dx, dy } => {
                let p = self.pointer.location() + Point::from((dx, dy));
                self.pointer_motion(p, time);
            }
            DeviceEvent::PointerButton { code, pressed } => {
                self.pointer_button(code, pressed, time);
            }
            DeviceEvent::TouchDown { slot, x, y } => {
                self.touch_down(Some(slot).into(), Point::from((x, y)), time);
            }
            DeviceEvent::TouchMotion { slot, x, y } => {
                self.touch_motion(Some(slot).into(), Point::from((x, y)), time);
            }
            DeviceEvent::TouchUp { slot } => self.touch_up(Some(slot).into(), time),
            DeviceEvent::TouchCancel => self.touch_cancel(),
        }
    }

    /// What is under the pointer may have changed without it moving (a window was placed, went,
    /// or committed a new size, input region or subsurface stack): when the surface under it, or
    /// that surface's place, is not what the pointer has, the pointer enters what is there now.
    /// Not while a grab holds it, nor on the dialog; nothing is sent when nothing changed, so a
    /// client redrawing on motion is not made to redraw forever.
    pub(crate) fn refocus_pointer(&mut self) {
        let Some(pointer) = self.seat.get_pointer() else {
            return;
        };
        if pointer.is_grabbed() {
            return;
        }
        let p = self.pointer.location();
        if self
            .pcp
            .ui()
            .takes_pointer_at(pcp_overlay::Point { x: p.x, y: p.y })
        {
            return;
        }
        let focus = self.surface_under(p);
        if focus.as_ref() == self.pointer.under() {
            return;
        }
        self.pointer.set_under(focus.clone());
        pointer.motion(
            self,
            focus,
            &MotionEvent {
                location: p,
                serial: SERIAL_COUNTER.next_serial(),
                time: (self.clock.now_ms() & 0xffff_ffff) as u32,
            },
        );
        pointer.frame(self);
    }
}
