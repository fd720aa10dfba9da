//! xdg-decoration: the reference compositor draws no window borders, so every toplevel is told
//! honestly to decorate itself (client-side), whichever mode it asks for. Clients such as foot
//! then draw their own title bar; GTK 3 does so anyway.

use smithay::delegate_xdg_decoration;
use smithay::reexports::wayland_protocols::xdg::decoration::zv1::server::zxdg_toplevel_decoration_v1::Mode;
use smithay::wayland::shell::xdg::ToplevelSurface;
use smithay::wayland::shell::xdg::decoration::XdgDecorationHandler;

use crate::state::State;

/// Tells `toplevel` to draw its own decorations, sending the configure now if it is mapped
/// (before its first commit the initial configure carries it).
fn client_side(toplevel: &ToplevelSurface) {
    toplevel.with_pending_state(|state| {
        state.decoration_mode = Some(Mode::ClientSide);
    });
    if toplevel.is_initial_configure_sent() {
        toplevel.send_pending_configure();
    }
}

impl XdgDecorationHandler for State {
    fn new_decoration(&mut self, toplevel: ToplevelSurface) {
        client_side(&toplevel);
    }

    fn request_mode(&mut self, toplevel: ToplevelSurface, _mode: Mode) {
        client_side(&toplevel);
    }

    fn unset_mode(&mut self, toplevel: ToplevelSurface) {
        client_side(&toplevel);
    }
}

delegate_xdg_decoration!(State);
