//! The code wayland-scanner generates from `protocols/pcp-intent-v1.xml`: the interfaces, the
//! server side (for the compositor) and the client side (for `pcpctl` and the tests).

#![allow(
    missing_docs,
    clippy::all,
    non_upper_case_globals,
    non_camel_case_types
)]

/// The interface descriptions both sides share.
pub mod interfaces {
    wayland_scanner::generate_interfaces!("protocols/pcp-intent-v1.xml");
}

/// The compositor's side: requests in, events out.
pub mod server {
    use wayland_server;

    use super::interfaces::*;

    wayland_scanner::generate_server_code!("protocols/pcp-intent-v1.xml");
}

/// The client's side: requests out, events in.
pub mod client {
    use wayland_client;

    use super::interfaces::*;

    wayland_scanner::generate_client_code!("protocols/pcp-intent-v1.xml");
}

/// Inline params and steps together may be at most this many bytes (the server drops a client
/// whose message exceeds its 4 KiB buffer; the rest of the message needs room too).
pub const MAX_INLINE_BYTES: usize = 3072;

/// `submit_fd` carries at most this many bytes.
pub const MAX_FD_BYTES: usize = 1024 * 1024;
