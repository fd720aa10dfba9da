//! The code wayland-scanner generates from `pcp-intent-v1.xml`: the interfaces, the client side
//! (requests out, events in) and, with the `server` feature, the compositor's side.

#![allow(
    missing_docs,
    clippy::all,
    non_upper_case_globals,
    non_camel_case_types
)]

/// The interface descriptions both sides share.
pub mod interfaces {
    wayland_scanner::generate_interfaces!("pcp-intent-v1.xml");
}

/// The compositor's side: requests in, events out.
#[cfg(feature = "server")]
pub mod server {
    use wayland_server;

    use super::interfaces::*;

    wayland_scanner::generate_server_code!("pcp-intent-v1.xml");
}

/// The client's side: requests out, events in.
pub mod client {
    use wayland_client;

    use super::interfaces::*;

    wayland_scanner::generate_client_code!("pcp-intent-v1.xml");
}
