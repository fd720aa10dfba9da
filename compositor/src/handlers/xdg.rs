//! xdg-shell: toplevels become windows in the space, placed on the output nearest the focal
//! point (cascaded), fullscreen on that output when asked; the dialog stays above them all.

use smithay::delegate_xdg_shell;
use smithay::desktop::Window;
use smithay::reexports::wayland_protocols::xdg::shell::server::xdg_toplevel;
use smithay::utils::Serial;
use smithay::wayland::compositor::with_states;
use smithay::wayland::shell::xdg::{
    PopupSurface, PositionerState, ToplevelSurface, XdgShellHandler, XdgShellState,
    XdgToplevelSurfaceData,
};
use wayland_server::protocol::wl_output::WlOutput;
use wayland_server::protocol::wl_seat::WlSeat;

use crate::state::State;

/// How far each new window is moved down and right from the previous one, and after how many
/// it starts again at the corner.
const CASCADE_STEP: i32 = 32;
const CASCADE_LENGTH: usize = 8;

impl XdgShellHandler for State {
    fn xdg_shell_state(&mut self) -> &mut XdgShellState {
        &mut self.protocols.xdg_shell
    }

    fn new_toplevel(&mut self, surface: ToplevelSurface) {
        surface.with_pending_state(|state| {
            state.states.set(xdg_toplevel::State::Activated);
        });
        // It gets the keyboard with its first configure (see the compositor handler's commit).
        self.place_new_window(Window::new_wayland_window(surface));
    }

    fn toplevel_destroyed(&mut self, surface: ToplevelSurface) {
        let window = self
            .space
            .elements()
            .find(|w| w.toplevel().is_some_and(|t| t == &surface))
            .cloned();
        if let Some(window) = window {
            self.space.unmap_elem(&window);
            self.dirty = true;
        }
    }

    fn fullscreen_request(&mut self, surface: ToplevelSurface, _output: Option<WlOutput>) {
        // Fullscreen on the output nearest the focal point; the dialog still draws above it.
        let Some(index) = self.backend.nearest_output(self.focus) else {
            return;
        };
        let spec = self.backend.outputs[index].spec;
        let (w, h) = spec.logical_size();
        surface.with_pending_state(|state| {
            state.states.set(xdg_toplevel::State::Fullscreen);
            state.size = Some((w, h).into());
        });
        let window = self
            .space
            .elements()
            .find(|w| w.toplevel().is_some_and(|t| t == &surface))
            .cloned();
        if let Some(window) = window {
            self.space.map_element(window, (spec.x, spec.y), true);
        }
        let sent = with_states(surface.wl_surface(), |states| {
            states
                .data_map
                .get::<XdgToplevelSurfaceData>()
                .and_then(|d| d.lock().ok().map(|d| d.initial_configure_sent))
                .unwrap_or(false)
        });
        // Before the first commit the initial configure carries the state.
        if sent {
            surface.send_configure();
        }
        self.dirty = true;
    }

    fn new_popup(&mut self, _surface: PopupSurface, _positioner: PositionerState) {}

    fn grab(&mut self, _surface: PopupSurface, _seat: WlSeat, _serial: Serial) {}

    fn reposition_request(
        &mut self,
        _surface: PopupSurface,
        _positioner: PositionerState,
        _token: u32,
    ) {
    }
}

delegate_xdg_shell!(State);

/// The app id a toplevel declares (unverified: shown as secondary text, never trusted).
pub fn app_id(window: &Window) -> Option<String> {
    let toplevel = window.toplevel()?;
    with_states(toplevel.wl_surface(), |states| {
        states
            .data_map
            .get::<XdgToplevelSurfaceData>()
            .and_then(|d| d.lock().ok().and_then(|d| d.app_id.clone()))
    })
}

impl State {
    /// Where a new window goes: the output nearest the focal point, cascaded by the number of
    /// windows already there.
    fn place_new_window(&mut self, window: Window) {
        let index = self.backend.nearest_output(self.focus).unwrap_or(0);
        let (x, y) = self
            .backend
            .outputs
            .get(index)
            .map(|o| (o.spec.x, o.spec.y))
            .unwrap_or((0, 0));
        let step = CASCADE_STEP * (self.space.elements().count() % CASCADE_LENGTH) as i32;
        self.space.map_element(window, (x + step, y + step), true);
        self.dirty = true;
    }
}
