//! cursor-shape-v1: a client names the pointer's shape (text, pointer, resize…) instead of
//! drawing a cursor surface; the shape is drawn from the configured xcursor theme
//! ([`crate::cursor`]). Smithay turns each request into the seat's cursor image, which the
//! seat handler stores.

use smithay::delegate_cursor_shape;
use smithay::wayland::tablet_manager::TabletSeatHandler;

use crate::state::State;

/// No tablet tools are served (no zwp_tablet_manager_v2), so no tool image is ever asked for.
impl TabletSeatHandler for State {}

delegate_cursor_shape!(State);
