//! wl_seat: pointer, keyboard and touch, and keyboard focus around the dialog — clients lose it
//! (and the pointer) while the dialog is up and the top window gets it back when it goes.

use smithay::delegate_seat;
use smithay::input::pointer::MotionEvent;
use smithay::input::{Seat, SeatHandler, SeatState};
use smithay::utils::SERIAL_COUNTER;
use wayland_server::protocol::wl_surface::WlSurface;

use crate::state::State;

impl SeatHandler for State {
    type KeyboardFocus = WlSurface;
    type PointerFocus = WlSurface;
    type TouchFocus = WlSurface;

    fn seat_state(&mut self) -> &mut SeatState<State> {
        &mut self.protocols.seat
    }

    fn focus_changed(&mut self, seat: &Seat<State>, focused: Option<&WlSurface>) {
        super::data_device::focus_changed(self, seat, focused);
    }
}

delegate_seat!(State);

impl State {
    /// Clients lose keyboard and pointer focus while the dialog is up.
    pub(crate) fn take_keyboard_focus(&mut self) {
        if let Some(keyboard) = self.seat.get_keyboard() {
            keyboard.set_focus(self, None, SERIAL_COUNTER.next_serial());
        }
        if let Some(pointer) = self.seat.get_pointer() {
            let location = self.pointer;
            pointer.motion(
                self,
                None,
                &MotionEvent {
                    location,
                    serial: SERIAL_COUNTER.next_serial(),
                    time: 0,
                },
            );
            pointer.frame(self);
        }
    }

    /// The top window gets the keyboard back when the dialog goes.
    pub(crate) fn restore_keyboard_focus(&mut self) {
        let top = self
            .space
            .elements()
            .last()
            .and_then(|w| w.toplevel().map(|t| t.wl_surface().clone()));
        if let Some(keyboard) = self.seat.get_keyboard() {
            keyboard.set_focus(self, top, SERIAL_COUNTER.next_serial());
        }
    }
}
