//! The Smithay plugin and the reference compositor built on it.
//!
//! The embeddable part is [`intent`]: a state type ([`intent::IntentManagerState`]), a handler
//! trait ([`intent::IntentHandler`]) and a delegate macro ([`delegate_intent!`]) that put the
//! pcp-intent-v1 protocol (the `pcp-protocol` crate, whose client side `pcpctl` and agents use)
//! and the confirmation gate into any Smithay compositor; see [`embedding`]. The rest is the reference compositor: [`state`] and
//! [`handlers`] (Smithay protocol states, windows, built-in capabilities), [`layers`]
//! (wlr-layer-shell), [`backend`] (the outputs and the scene any renderer draws), [`headless`]
//! (virtual outputs, pixman rendering, PNG capture), `winit` (a nested window drawn with GLES,
//! cargo feature `winit`), `udev` (a real session on a VT: DRM/KMS, libinput, libseat; cargo
//! feature `udev`), [`overlay_ui`] (the dialog on the output nearest the focal point),
//! [`input`] (modal input routing), [`auto`] (the backend `--backend auto` picks), [`voice`] and [`haptic`] (the voice and haptic steps), [`notice`] (refused config reloads on screen), [`config`]
//! and [`startup`] (the `[compositor]` section and flags).

pub mod auto;
pub mod backend;
pub mod config;
pub mod data_device;
pub mod handlers;
pub mod haptic;
pub mod headless;
pub mod hotplug;
pub mod identity;
pub mod input;
pub mod intent;
pub mod layers;
pub mod notice;
pub mod overlay_ui;
pub mod startup;
pub mod state;
#[cfg(feature = "test-harness")]
pub mod test_input;
#[cfg(feature = "udev")]
pub mod udev;
pub mod voice;
#[cfg(feature = "winit")]
pub mod winit;

/// Crates the [`delegate_intent!`](crate::delegate_intent) macro expands to.
pub mod reexports {
    pub use {pcp_protocol, wayland_server};
}

/// `docs/embedding.md`: how another Smithay compositor embeds the gate; its example is compiled
/// as a doctest.
#[doc = include_str!("../../docs/embedding.md")]
pub mod embedding {}
