//! ext-session-lock-v1: a screen locker (swaylock) locks the session. While locked no window,
//! layer surface or popup is drawn or gets input: each output shows only its lock surface (the
//! background until the locker draws one), and the pointer, touch and keyboard go to lock
//! surfaces alone. The dialog is still drawn above the lock surfaces and still sees input
//! first. The manager is privileged: sandboxed clients never see it
//! ([`may_see_privileged`](crate::handlers::may_see_privileged)), so a sandboxed app can neither
//! lock the screen nor cover the desktop with a fake one. A locker that dies without unlocking
//! leaves the session locked (the protocol's rule); a new locker may take over.

use smithay::delegate_session_lock;
use smithay::output::Output;
use smithay::utils::SERIAL_COUNTER;
use smithay::wayland::session_lock::{
    LockSurface, SessionLockHandler, SessionLockManagerState, SessionLocker,
};
use wayland_server::protocol::wl_output::WlOutput;
use wayland_server::protocol::wl_surface::WlSurface;

use crate::state::State;

impl SessionLockHandler for State {
    fn lock_state(&mut self) -> &mut SessionLockManagerState {
        &mut self.protocols.session_lock
    }

    fn lock(&mut self, confirmation: SessionLocker) {
        // Nothing of the desktop is drawn from the next frame on, and no window keeps the
        // pointer, the keyboard or a grab: the session is locked at once.
        self.break_popup_grab();
        self.desktop.lock();
        if let Some(keyboard) = self.seat.get_keyboard() {
            if self.pcp.ui().wants_keyboard() {
                self.desktop.keyboard_return = None;
            } else {
                keyboard.set_focus(self, None, SERIAL_COUNTER.next_serial());
            }
        }
        if let Some(pointer) = self.seat.get_pointer() {
            let location = self.pointer.location();
            pointer.motion(
                self,
                None,
                &smithay::input::pointer::MotionEvent {
                    location,
                    serial: SERIAL_COUNTER.next_serial(),
                    time: 0,
                },
            );
            pointer.frame(self);
        }
        confirmation.lock();
        tracing::info!("the session is locked");
        self.frames.damage();
    }

    fn unlock(&mut self) {
        self.desktop.unlock();
        tracing::info!("the session is unlocked");
        if !self.pcp.ui().wants_keyboard() {
            self.desktop.keyboard_return = None;
            self.restore_keyboard_focus();
        }
        self.pointer_after_dialog();
        self.frames.damage();
    }

    fn new_surface(&mut self, surface: LockSurface, output: WlOutput) {
        let Some(output) = Output::from_resource(&output) else {
            return;
        };
        if !self.desktop.is_locked() {
            return;
        }
        let Some(vo) = self.backend.outputs.iter().find(|o| o.output == output) else {
            return;
        };
        let (w, h) = vo.spec.logical_size();
        surface.with_pending_state(|state| {
            state.size = Some((w as u32, h as u32).into());
        });
        surface.send_configure();
        let wl_surface = surface.wl_surface().clone();
        // The first lock surface gets the keyboard (the dialog keeps it while it has it).
        if self.desktop.add_lock_surface(output.name(), surface) == Some(true) {
            self.give_lock_keyboard(wl_surface);
        }
        self.frames.damage();
    }
}

delegate_session_lock!(State);

impl State {
    /// Whether the session is locked.
    pub fn is_locked(&self) -> bool {
        self.desktop.is_locked()
    }

    fn give_lock_keyboard(&mut self, surface: WlSurface) {
        if self.pcp.ui().wants_keyboard() {
            self.desktop.keyboard_return = Some(surface);
        } else if let Some(keyboard) = self.seat.get_keyboard() {
            keyboard.set_focus(self, Some(surface), SERIAL_COUNTER.next_serial());
        }
    }
}
