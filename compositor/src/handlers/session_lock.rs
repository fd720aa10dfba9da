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

/// The session while it is locked: the lock surface of each output (by output name).
#[derive(Default)]
pub struct SessionLock {
    pub surfaces: Vec<(String, LockSurface)>,
}

impl SessionLockHandler for State {
    fn lock_state(&mut self) -> &mut SessionLockManagerState {
        &mut self.protocols.session_lock
    }

    fn lock(&mut self, confirmation: SessionLocker) {
        // Nothing of the desktop is drawn from the next frame on, and no window keeps the
        // pointer, the keyboard or a grab: the session is locked at once.
        self.break_popup_grab();
        self.lock = Some(SessionLock::default());
        if let Some(keyboard) = self.seat.get_keyboard() {
            if self.pcp.ui().has_keyboard_focus() {
                self.keyboard_return = None;
            } else {
                keyboard.set_focus(self, None, SERIAL_COUNTER.next_serial());
            }
        }
        if let Some(pointer) = self.seat.get_pointer() {
            let location = self.pointer;
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
        self.dirty = true;
    }

    fn unlock(&mut self) {
        self.lock = None;
        tracing::info!("the session is unlocked");
        if !self.pcp.ui().has_keyboard_focus() {
            self.keyboard_return = None;
            self.restore_keyboard_focus();
        }
        self.pointer_after_dialog();
        self.dirty = true;
    }

    fn new_surface(&mut self, surface: LockSurface, output: WlOutput) {
        let Some(output) = Output::from_resource(&output) else {
            return;
        };
        let Some(lock) = self.lock.as_mut() else {
            return;
        };
        let Some(vo) = self.backend.outputs.iter().find(|o| o.output == output) else {
            return;
        };
        let (w, h) = vo.spec.logical_size();
        surface.with_pending_state(|state| {
            state.size = Some((w as u32, h as u32).into());
        });
        surface.send_configure();
        let focus = lock
            .surfaces
            .is_empty()
            .then(|| surface.wl_surface().clone());
        lock.surfaces.retain(|(name, _)| *name != output.name());
        lock.surfaces.push((output.name(), surface));
        // The first lock surface gets the keyboard (the dialog keeps it while it has it).
        if let Some(focus) = focus {
            self.give_lock_keyboard(focus);
        }
        self.dirty = true;
    }
}

delegate_session_lock!(State);

impl State {
    /// Whether the session is locked.
    pub fn is_locked(&self) -> bool {
        self.lock.is_some()
    }

    /// The lock surface shown on output `name`, while locked.
    pub(crate) fn lock_surface_of(&self, name: &str) -> Option<&LockSurface> {
        let lock = self.lock.as_ref()?;
        lock.surfaces
            .iter()
            .find(|(n, s)| n == name && s.alive())
            .map(|(_, s)| s)
    }

    /// Where the keyboard goes back to while locked: the first live lock surface.
    pub(crate) fn lock_keyboard_target(&self) -> Option<WlSurface> {
        let lock = self.lock.as_ref()?;
        lock.surfaces
            .iter()
            .find(|(_, s)| s.alive())
            .map(|(_, s)| s.wl_surface().clone())
    }

    fn give_lock_keyboard(&mut self, surface: WlSurface) {
        if self.pcp.ui().has_keyboard_focus() {
            self.keyboard_return = Some(surface);
        } else if let Some(keyboard) = self.seat.get_keyboard() {
            keyboard.set_focus(self, Some(surface), SERIAL_COUNTER.next_serial());
        }
    }
}
