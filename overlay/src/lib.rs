//! The confirmation dialog: layout, drawing into a premultiplied RGBA buffer, hit-testing, the
//! clickjacking guard, scrolling, the countdown and the choice of output, and client text made
//! visible and bounded before it is shown or spoken. Knows nothing of Smithay: the compositor
//! fills a [`DialogContent`], feeds input and clock readings to a [`ConfirmDialog`], and puts
//! the returned pixels on screen.
//!
//! Coordinates: *logical* values are compositor logical pixels (surface-local for input);
//! *physical* values are buffer pixels (`logical × scale`, rounded so every edge is crisp).

pub mod config;
pub mod content;
pub mod dialog;
pub mod draw;
pub mod guard;
pub mod layout;
pub mod placement;
pub mod strings;
pub mod text;
pub mod visible;

use std::path::PathBuf;

pub use config::{Config, Palette, Rgba, TextScale, ThemeName};
pub use content::{
    Control, DialogContent, EntryLine, HapticState, LiveState, Modality, Requester, Risk,
    VoiceState, load_content, load_state,
};
pub use dialog::{Choice, ConfirmDialog, Key, KeyState, RenderedDialog};
pub use guard::ClickGuard;
pub use layout::{IRect, Layout, Row};
pub use placement::{Output, Point, Rect, nearest_output, place_dialog};
pub use text::Fonts;

/// Everything that can go wrong in this crate. Every error names what was wrong and where; the
/// compositor treats any of them while a prompt is up as a denial (fail closed).
#[derive(Debug, thiserror::Error)]
pub enum OverlayError {
    /// A file could not be read. The I/O error is part of the message, not a cause of its own,
    /// so that a cause chain (`{:#}`) does not say it twice.
    #[error("cannot read {path}: {reason}")]
    Read {
        path: PathBuf,
        reason: std::io::Error,
    },
    /// A content or state file is not valid JSON for its schema.
    #[error("{path}:{line}:{column}: {message}")]
    Json {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    /// Content passed validation of its syntax but breaks a rule (empty app name, too many steps…).
    #[error("invalid dialog content: {0}")]
    InvalidContent(String),
    /// An icon file is not a PNG we can decode.
    #[error("cannot decode icon {path}: {message}")]
    Icon { path: PathBuf, message: String },
    /// A font file could not be loaded.
    #[error("cannot load font {path}: {message}")]
    Font { path: PathBuf, message: String },
    /// The output is too small or the scale is out of range to draw a dialog.
    #[error("cannot lay out the dialog: {0}")]
    Layout(String),
    /// The pixel buffer could not be allocated.
    #[error("cannot allocate a {width}x{height} pixel buffer")]
    Buffer { width: u32, height: u32 },
    /// An `[overlay]` setting the host reads (e.g. `focus_shortcut`) does not parse.
    #[error("[overlay] {0}")]
    Setting(String),
}
