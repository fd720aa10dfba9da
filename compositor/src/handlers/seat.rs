//! wl_seat: pointer, keyboard and touch, and keyboard focus around the dialog — the window
//! that had the keyboard loses it while the dialog has it, and gets it back after.

use smithay::delegate_seat;
use smithay::input::pointer::CursorImageStatus;
use smithay::input::{Seat, SeatHandler, SeatState};
use smithay::utils::SERIAL_COUNTER;
use wayland_server::Resource;
use wayland_server::protocol::wl_surface::WlSurface;

use crate::state::State;

impl SeatHandler for State {
    type KeyboardFocus = WlSurface;
    type PointerFocus = WlSurface;
    type TouchFocus = WlSurface;

    fn seat_state(&mut self) -> &mut SeatState<State> {
        &mut self.protocols.seat
    }

    fn cursor_image(&mut self, _seat: &Seat<State>, image: CursorImageStatus) {
        self.pointer.set_cursor_image(image);
        self.frames.damage();
    }

    fn focus_changed(&mut self, seat: &Seat<State>, focused: Option<&WlSurface>) {
        super::data_device::focus_changed(self, seat, focused);
        super::primary_selection::focus_changed(self, seat, focused);
    }
}

delegate_seat!(State);

impl State {
    /// Keyboard focus as the dialog wants it ([`pcp_plugin::ConfirmUi::wants_keyboard`]): when
    /// it starts wanting the keyboard, the window that had it gets a leave and is remembered;
    /// when it stops, that window gets it back.
    pub(crate) fn update_keyboard_focus(&mut self) {
        let wants = self.pcp.ui().wants_keyboard();
        if wants == self.desktop.dialog_has_keyboard {
            return;
        }
        self.desktop.dialog_has_keyboard = wants;
        if wants {
            self.take_keyboard_focus();
        } else {
            self.restore_keyboard_focus();
        }
    }

    /// The dialog took the keyboard: the window that had it gets a leave and is remembered.
    fn take_keyboard_focus(&mut self) {
        // An open menu's grab would keep the keyboard (and the pointer) from the dialog.
        self.break_popup_grab();
        let Some(keyboard) = self.seat.get_keyboard() else {
            return;
        };
        if let Some(had) = keyboard.current_focus() {
            self.desktop.keyboard_return = Some(had);
        }
        keyboard.set_focus(self, None, SERIAL_COUNTER.next_serial());
    }

    /// The dialog gave the keyboard back: to the window that had it when it still exists, else
    /// to the top window.
    pub(crate) fn restore_keyboard_focus(&mut self) {
        let had = self.desktop.keyboard_return.take().filter(|s| s.is_alive());
        // While locked only a lock surface may have it.
        let target = if self.desktop.is_locked() {
            had.filter(|s| self.desktop.lock_keyboard_target().as_ref() == Some(s))
                .or_else(|| self.desktop.lock_keyboard_target())
        } else {
            had
        };
        let target = target.or_else(|| {
            if self.desktop.is_locked() {
                return None;
            }
            self.desktop
                .space
                .elements()
                .last()
                .and_then(|w| w.toplevel().map(|t| t.wl_surface().clone()))
        });
        if let Some(keyboard) = self.seat.get_keyboard() {
            keyboard.set_focus(self, target, SERIAL_COUNTER.next_serial());
        }
    }
}
