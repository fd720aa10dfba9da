//! wl_seat: pointer, keyboard and touch, and keyboard focus around the dialog — the window
//! that had the keyboard loses it while the dialog has it, and gets it back after. The window
//! with the keyboard is the activated one.

use smithay::delegate_seat;
use smithay::desktop::find_popup_root_surface;
use smithay::input::pointer::CursorImageStatus;
use smithay::input::{Seat, SeatHandler, SeatState};
use smithay::reexports::wayland_protocols::xdg::shell::server::xdg_toplevel;
use smithay::utils::SERIAL_COUNTER;
use smithay::wayland::compositor::get_parent;
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
        self.activate_focused(focused);
    }
}

delegate_seat!(State);

impl State {
    /// Only the window with the keyboard (on itself, a subsurface or one of its popups) is
    /// activated; each window whose state changed is told.
    fn activate_focused(&mut self, focused: Option<&WlSurface>) {
        let root = focused.map(|s| {
            let s = match self.desktop.popups.find_popup(s) {
                Some(popup) => find_popup_root_surface(&popup).unwrap_or_else(|_| s.clone()),
                None => s.clone(),
            };
            let mut root = s;
            while let Some(parent) = get_parent(&root) {
                root = parent;
            }
            root
        });
        for window in self.desktop.space.elements() {
            let Some(toplevel) = window.toplevel() else {
                continue;
            };
            let active = root.as_ref() == Some(toplevel.wl_surface());
            toplevel.with_pending_state(|state| {
                if active {
                    state.states.set(xdg_toplevel::State::Activated);
                } else {
                    state.states.unset(xdg_toplevel::State::Activated);
                }
            });
            // The space may have changed the pending state already (raising a window
            // activates it there): what counts is what the client was last told, and
            // `send_pending_configure` sends only a difference from it.
            if toplevel.is_initial_configure_sent() {
                toplevel.send_pending_configure();
            }
        }
    }

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
