//! pcp-compositor: the reference compositor, built on the `pcp-plugin` crate exactly as any
//! Smithay compositor embeds it (`State` keeps a `pcp_plugin::Pcp`, implements
//! `pcp_plugin::PcpHandler` in [`handlers::pcp`], routes seat input through
//! `pcp_plugin::input` in [`input`], and draws the dialog's render elements in [`backend`]).
//!
//! [`state`] holds what the compositor knows and its event loop, grouped into the
//! [`desktop`] (windows, popups, grabs, the session lock), the [`pointer`](mod@pointer) (its
//! cursor and the focal point) and [`frames`] (frame pacing); [`handlers`] has one file per
//! protocol it serves; [`builtins`] performs the built-in capabilities after approval;
//! [`input`] and [`tablet_input`] route the seat's input; [`hotplug`] keeps outputs and input devices in line as
//! they come and go; [`backend`] is the outputs and the scene any renderer draws, with
//! [`headless`] (virtual outputs, pixman, PNG capture), `winit` (a nested window, cargo feature
//! `winit`) and `udev` (a real session on a VT, cargo feature `udev`); [`auto`] picks one for
//! `--backend auto`; [`notice`] shows a refused config reload on screen; [`config`] and
//! [`startup`] read the config file and the flags, and [`watch`] tells when it changed;
//! [`polkit`] is the session's polkit authentication agent, one more front end of the engine.

pub mod auto;
pub mod backend;
pub mod builtins;
pub mod clock;
pub mod config;
pub mod cursor;
pub mod desktop;
pub mod frames;
pub mod grabs;
pub mod handlers;
pub mod headless;
pub mod host;
pub mod hotplug;
pub mod input;
pub mod notice;
pub mod pointer;
pub mod polkit;
pub mod protocols;
mod reload;
pub mod startup;
pub mod state;
pub mod tablet_input;
#[cfg(feature = "test-harness")]
pub mod test_input;
pub mod touch;
#[cfg(feature = "udev")]
pub mod udev;
pub mod watch;
#[cfg(feature = "winit")]
pub mod winit;

/// `docs/embedding.md`: how another Smithay compositor embeds the plugin; its example is
/// `examples/embed.rs`.
#[doc = include_str!("../../docs/embedding.md")]
pub mod embedding {}
