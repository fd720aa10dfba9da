//! wp_viewporter: a client crops and scales its buffer to a destination size (video players,
//! fractionally scaled apps). Smithay applies the viewport when it computes a surface's size
//! and source rectangle, so every renderer draws it.

use smithay::delegate_viewporter;

use crate::state::State;

delegate_viewporter!(State);
