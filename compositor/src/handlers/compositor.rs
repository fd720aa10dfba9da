//! wl_compositor and buffers: commits map windows' new contents (and send a toplevel or popup
//! its first configure, and a toplevel another once it shows its first buffer), follow an
//! interactive resize, lay layer surfaces out again, and ask for a frame; a destroyed surface's
//! touch points lift.

use smithay::backend::renderer::utils::{on_commit_buffer_handler, with_renderer_surface_state};
use smithay::delegate_compositor;
use smithay::desktop::{PopupKind, Window};
use smithay::utils::SERIAL_COUNTER;
use smithay::wayland::buffer::BufferHandler;
use smithay::wayland::compositor::{
    CompositorClientState, CompositorHandler, CompositorState, get_parent, is_sync_subsurface,
    with_states,
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
        if is_sync_subsurface(surface) {
            // Smithay 0.7 applies a synchronized subsurface's state (its buffer, its place) after
            // its parent's commit walked the tree, and skips the walk for the subsurface itself:
            // walk it again from the root, so the new buffer and place count now, not at the
            // parent's next commit.
            let mut root = surface.clone();
            while let Some(parent) = get_parent(&root) {
                root = parent;
            }
            on_commit_buffer_handler::<Self>(&root);
        }
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
            self.follow_resize(surface);
            configure_when_first_mapped(&window, surface);
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
        // Before the client's next request is answered (its round trip's `done` must come
        // after what the commit changed under the pointer).
        self.refocus_pointer();
    }

    fn destroyed(&mut self, surface: &WlSurface) {
        self.touch_surface_destroyed(surface);
        self.refocus_pointer();
    }
}

/// A toplevel that shows its first buffer is configured again (as Mir and GNOME do): the
/// client learns the state it is mapped in, activated with the keyboard, without waiting for
/// the next change.
fn configure_when_first_mapped(window: &Window, surface: &WlSurface) {
    let Some(toplevel) = window.toplevel() else {
        return;
    };
    let has_buffer =
        with_renderer_surface_state(surface, |s| s.buffer().is_some()).unwrap_or(false);
    if !has_buffer {
        return;
    }
    let first = with_states(surface, |states| {
        states
            .data_map
            .insert_if_missing(|| Mapped(std::cell::Cell::new(false)));
        states
            .data_map
            .get::<Mapped>()
            .is_some_and(|m| !m.0.replace(true))
    });
    if first && toplevel.is_initial_configure_sent() {
        toplevel.send_configure();
    }
}

/// Set on a toplevel's surface once it has shown a buffer.
struct Mapped(std::cell::Cell<bool>);

impl BufferHandler for State {
    fn buffer_destroyed(&mut self, _buffer: &WlBuffer) {}
}

delegate_compositor!(State);
