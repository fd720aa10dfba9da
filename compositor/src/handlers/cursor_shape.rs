//! cursor-shape-v1: a client names the pointer's shape (text, pointer, resize…) instead of
//! drawing a cursor surface; the shape is drawn from the configured xcursor theme
//! ([`crate::cursor`]). Smithay turns each request into the seat's cursor image, which the
//! seat handler stores. Also the tablet manager and pointer gestures, whose input is routed in
//! `tablet_input` and `input`.

use smithay::wayland::tablet_manager::TabletSeatHandler;
use smithay::{delegate_cursor_shape, delegate_pointer_gestures, delegate_tablet_manager};

use crate::state::State;

/// A tool's own cursor image is not drawn: the pointer's is (tools move the pointer's focal
/// point, not the pointer).
impl TabletSeatHandler for State {}

delegate_cursor_shape!(State);
delegate_tablet_manager!(State);
delegate_pointer_gestures!(State);
