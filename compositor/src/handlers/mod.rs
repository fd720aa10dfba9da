//! The Smithay protocol handlers of the reference compositor, one file per protocol: the
//! compositor and its buffers ([`compositor`]), shm ([`shm`]), xdg-shell windows and popups
//! ([`xdg`]), xdg-decoration ([`decoration`]), viewporter ([`viewporter`]), fractional scale
//! ([`fractional_scale`]), xdg-activation ([`activation`]), presentation-time
//! ([`presentation`]), idle notification and inhibition ([`idle`]), cursor shapes
//! ([`cursor_shape`]), the clipboard and drag and drop
//! ([`data_device`]), the primary selection ([`primary_selection`]), wlr-layer-shell
//! ([`layer`]), ext-session-lock-v1 for screen lockers ([`session_lock`]), the seat and
//! keyboard focus ([`seat`]), outputs ([`output`]), wp_security_context_v1 listeners for
//! sandboxes ([`security_context`]), and pcp-intent-v1 through the plugin ([`pcp`]).

pub mod activation;
pub mod compositor;
pub mod cursor_shape;
pub mod data_device;
pub mod decoration;
pub mod fractional_scale;
pub mod idle;
pub mod layer;
pub mod output;
pub mod pcp;
pub mod presentation;
pub mod primary_selection;
pub mod seat;
pub mod security_context;
pub mod session_lock;
pub mod shm;
pub mod viewporter;
pub mod xdg;

use std::os::unix::net::UnixStream;

use pcp_gate::SandboxIdentity;
use pcp_plugin::identity::{ConnectionIdentity, may_see_privileged_globals};
use smithay::wayland::compositor::CompositorClientState;
use wayland_server::Client;
use wayland_server::backend::{ClientData, ClientId, DisconnectReason};

/// Per-client data: what Smithay needs, and who connected (taken from the socket at connect).
#[derive(Default)]
pub struct ClientState {
    pub compositor: CompositorClientState,
    /// The connecting process and its sandbox; `None` for a client inserted without a socket.
    pub connection: Option<ConnectionIdentity>,
}

impl ClientState {
    /// The data of a client that just connected on `stream`, through the security context of
    /// `sandbox` or (`None`) the compositor's own socket.
    pub fn connected(stream: &UnixStream, sandbox: Option<SandboxIdentity>) -> ClientState {
        ClientState {
            compositor: CompositorClientState::default(),
            connection: Some(ConnectionIdentity::of_stream(stream, sandbox)),
        }
    }
}

/// The one place that decides who sees a privileged global: the layer shell, the
/// security-context manager, and any input-injection or screen-capture global added later must
/// be created with this filter. A client that connected through a security context (a
/// `pcpctl run` or Flatpak sandbox) never sees them.
pub fn may_see_privileged(client: &Client) -> bool {
    may_see_privileged_globals(
        client
            .get_data::<ClientState>()
            .and_then(|d| d.connection.as_ref()),
    )
}

impl ClientData for ClientState {
    fn initialized(&self, _client_id: ClientId) {}
    fn disconnected(&self, _client_id: ClientId, _reason: DisconnectReason) {}
}
