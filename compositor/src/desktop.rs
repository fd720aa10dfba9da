//! The desktop the reference compositor shows under the dialog: the window space, the xdg
//! popups and the popup grab in force, the session lock while a screen locker holds it, the
//! icon of a drag in progress, the surface the keyboard goes back to when the dialog lets it
//! go, the surfaces holding an idle inhibitor, who waits for the session to unlock, and the
//! interactive resize in progress.

use smithay::desktop::{PopupGrab, PopupManager, Space, Window};
use smithay::utils::{Logical, Point};
use smithay::wayland::session_lock::LockSurface;
use wayland_server::Resource;
use wayland_server::protocol::wl_surface::WlSurface;

use crate::state::State;

/// The session while it is locked: the lock surface of each output (by output name).
#[derive(Default)]
pub struct SessionLock {
    surfaces: Vec<(String, LockSurface)>,
}

/// The windows, popups, grabs and lock of the desktop.
pub struct Desktop {
    /// The windows and where they are.
    pub(crate) space: Space<Window>,
    /// Every xdg popup (menus, tooltips), drawn with the window they belong to.
    pub(crate) popups: PopupManager,
    /// The popup grab in force (an open menu), broken when the dialog takes the keyboard.
    popup_grab: Option<PopupGrab<State>>,
    /// The session lock, while a screen locker holds it.
    lock: Option<SessionLock>,
    /// The surface that had the keyboard when the dialog took it: it gets it back.
    pub(crate) keyboard_return: Option<WlSurface>,
    /// Whether the dialog has the keyboard, as last applied (`State::update_keyboard_focus`).
    pub(crate) dialog_has_keyboard: bool,
    /// The icon of the drag in progress (drawn at the pointer, below the dialog).
    drag_icon: Option<WlSurface>,
    /// Surfaces holding an idle inhibitor.
    idle_inhibitors: Vec<WlSurface>,
    /// Woken when the session unlocks: front ends that hold requests while it is locked.
    unlock_waiters: Vec<calloop::ping::Ping>,
    /// The interactive resize in progress, until its window drew its last size.
    pub(crate) resize: Option<crate::grabs::ResizeTrack>,
}

impl Desktop {
    /// A desktop of the windows in `space` (outputs mapped, no window yet).
    pub(crate) fn new(space: Space<Window>) -> Desktop {
        Desktop {
            space,
            popups: PopupManager::default(),
            popup_grab: None,
            lock: None,
            keyboard_return: None,
            dialog_has_keyboard: false,
            drag_icon: None,
            idle_inhibitors: Vec::new(),
            unlock_waiters: Vec::new(),
            resize: None,
        }
    }

    /// The window whose toplevel is `surface`.
    pub(crate) fn window_of(&self, surface: &WlSurface) -> Option<Window> {
        self.space
            .elements()
            .find(|w| w.toplevel().is_some_and(|t| t.wl_surface() == surface))
            .cloned()
    }

    /// Each mapped window's declared app id and the top-left corner of its geometry (global
    /// logical), bottom of the stack first.
    pub fn windows(&self) -> impl Iterator<Item = (Option<String>, Point<i32, Logical>)> + '_ {
        self.space.elements().filter_map(|w| {
            let at = self.space.element_location(w)?;
            Some((crate::handlers::xdg::app_id(w), at))
        })
    }

    /// The popup grab now in force.
    pub(crate) fn set_popup_grab(&mut self, grab: PopupGrab<State>) {
        self.popup_grab = Some(grab);
    }

    /// Takes the popup grab in force away, to break it.
    pub(crate) fn take_popup_grab(&mut self) -> Option<PopupGrab<State>> {
        self.popup_grab.take()
    }

    /// Whether the session is locked.
    pub fn is_locked(&self) -> bool {
        self.lock.is_some()
    }

    /// The session is locked from now on, with no lock surface yet.
    pub(crate) fn lock(&mut self) {
        self.lock = Some(SessionLock::default());
    }

    /// The session is unlocked: its lock surfaces are forgotten, and whoever waits for it
    /// is woken (from the event loop, after this handler returns).
    pub(crate) fn unlock(&mut self) {
        self.lock = None;
        for waiter in &self.unlock_waiters {
            waiter.ping();
        }
    }

    /// `ping` is woken at every unlock from now on.
    pub(crate) fn wake_on_unlock(&mut self, ping: calloop::ping::Ping) {
        self.unlock_waiters.push(ping);
    }

    /// Output `name` shows `surface` while locked (replacing the one it had). Returns whether
    /// it is the session's first lock surface (the one that gets the keyboard); `None` when the
    /// session is not locked.
    pub(crate) fn add_lock_surface(&mut self, name: String, surface: LockSurface) -> Option<bool> {
        let lock = self.lock.as_mut()?;
        let first = lock.surfaces.is_empty();
        lock.surfaces.retain(|(n, _)| *n != name);
        lock.surfaces.push((name, surface));
        Some(first)
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

    /// The drag in progress has `icon` (`None`: no drag, or one without an icon).
    pub(crate) fn set_drag_icon(&mut self, icon: Option<WlSurface>) {
        self.drag_icon = icon;
    }

    /// The icon of the drag in progress, while its surface lives.
    pub(crate) fn drag_icon(&self) -> Option<WlSurface> {
        self.drag_icon.clone().filter(Resource::is_alive)
    }

    /// `surface` holds an idle inhibitor. Returns whether idle is inhibited now.
    pub(crate) fn inhibit_idle(&mut self, surface: WlSurface) -> bool {
        self.idle_inhibitors.push(surface);
        self.idle_inhibited()
    }

    /// `surface` let its idle inhibitor go. Returns whether idle is still inhibited.
    pub(crate) fn uninhibit_idle(&mut self, surface: &WlSurface) -> bool {
        self.idle_inhibitors.retain(|s| s != surface);
        self.idle_inhibited()
    }

    /// Whether a live surface holds an idle inhibitor (dead ones are forgotten).
    fn idle_inhibited(&mut self) -> bool {
        self.idle_inhibitors.retain(Resource::is_alive);
        !self.idle_inhibitors.is_empty()
    }
}
