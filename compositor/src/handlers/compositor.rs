//! wl_compositor and buffers: commits map windows' new contents (and send a toplevel or popup
//! its first configure), layer surfaces are laid out again, and every commit asks for a frame.

use smithay::backend::renderer::utils::on_commit_buffer_handler;
use smithay::delegate_compositor;
use smithay::desktop::PopupKind;
use smithay::utils::SERIAL_COUNTER;
use smithay::wayland::buffer::BufferHandler;
use smithay::wayland::compositor::{
    CompositorClientState, CompositorHandler, CompositorState, with_states,
};
use smithay::wayland::shell::xdg::XdgToplevelSurfaceData;
use wayland_server::Client;
use wayland_server::protocol::wl_buffer::WlBuffer;
use wayland_server::protocol::wl_surface::WlSurface;

use crate::handlers::ClientState;
use crate::state::State;

impl CompositorHandler for State {
    fn compositor_state(&mut self) -> &mut CompositorState {
        &mut self.protocols.compositor
    }

    fn client_compositor_state<'a>(&self, client: &'a Client) -> &'a CompositorClientState {
        match client.get_data::<ClientState>() {
            Some(data) => &data.compositor,
            None => {
                // Every client is inserted with ClientState; anything else is a bug.
                tracing::error!("a client without ClientState");
                static FALLBACK: std::sync::OnceLock<CompositorClientState> =
                    std::sync::OnceLock::new();
                FALLBACK.get_or_init(CompositorClientState::default)
            }
        }
    }

    fn commit(&mut self, surface: &WlSurface) {
        on_commit_buffer_handler::<Self>(surface);
        self.desktop.popups.commit(surface);
        if let Some(PopupKind::Xdg(popup)) = self.desktop.popups.find_popup(surface) {
            if !popup.is_initial_configure_sent()
                && let Err(e) = popup.send_configure()
            {
                tracing::debug!("a popup's first configure was refused: {e:?}");
            }
            self.frames.damage();
            return;
        }
        let window = self.desktop.window_of(surface);
        if let Some(window) = window {
            window.on_commit();
            let sent = with_states(surface, |states| {
                states
                    .data_map
                    .get::<XdgToplevelSurfaceData>()
                    .and_then(|d| d.lock().ok().map(|d| d.initial_configure_sent))
                    .unwrap_or(true)
            });
            if !sent && let Some(toplevel) = window.toplevel() {
                toplevel.send_configure();
                // Focus only after the first configure: a keyboard enter before it crashed
                // foot (it handles input for a window it has not set up yet). While the dialog
                // has the keyboard, the window gets it when the dialog gives it back.
                if self.pcp.ui().wants_keyboard() {
                    self.desktop.keyboard_return = Some(surface.clone());
                } else if let Some(keyboard) = self.seat.get_keyboard() {
                    keyboard.set_focus(self, Some(surface.clone()), SERIAL_COUNTER.next_serial());
                }
            }
        } else {
            self.layer_commit(surface);
        }
        self.frames.damage();
    }
}

impl BufferHandler for State {
    fn buffer_destroyed(&mut self, _buffer: &WlBuffer) {}
}

delegate_compositor!(State);
