//! The pcp-intent-v1 protocol, for both ends of the wire and without Smithay, audio or the gate:
//! the protocol XML ([`XML`], documented like wayland-protocols), the code wayland-scanner makes
//! from it ([`generated`]; the server side behind the `server` feature), the wire's types and
//! limits and the sealed-memfd helpers both sides use ([`wire`]), and the client side
//! ([`client::IntentClient`]) that `pcpctl`, agents written in Rust and the tests talk through.

pub mod client;
pub mod generated;
pub mod wire;

pub use client::{ClientError, Decision, Handle, IntentClient, IntentEvent, Submission};
pub use wire::{MAX_FD_BYTES, MAX_INLINE_BYTES, ParamsError, Step};

/// The protocol's XML, as wayland-scanner read it (the file `pcp-intent-v1.xml` of this crate).
pub const XML: &str = include_str!("../pcp-intent-v1.xml");

/// The protocol version this crate speaks.
pub const VERSION: u32 = 2;
