//! The Smithay protocol handlers of the reference compositor, one file per protocol: the
//! compositor and its buffers ([`compositor`]), shm ([`shm`]), xdg-shell windows ([`xdg`]),
//! the clipboard and drag and drop ([`data_device`]),
//! wlr-layer-shell ([`layer`]), the seat and keyboard focus ([`seat`]), outputs ([`output`]),
//! and pcp-intent-v1 through the plugin ([`pcp`]).

pub mod compositor;
pub mod data_device;
pub mod layer;
pub mod output;
pub mod pcp;
pub mod seat;
pub mod shm;
pub mod xdg;

use smithay::wayland::compositor::CompositorClientState;
use wayland_server::backend::{ClientData, ClientId, DisconnectReason};

/// Per-client data Smithay needs.
#[derive(Default)]
pub struct ClientState {
    pub compositor: CompositorClientState,
}

impl ClientData for ClientState {
    fn initialized(&self, _client_id: ClientId) {}
    fn disconnected(&self, _client_id: ClientId, _reason: DisconnectReason) {}
}
