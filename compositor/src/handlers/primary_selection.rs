//! The primary selection (zwp_primary_selection_device_manager_v1): text selected in one app
//! is pasted with the middle button in another. Like the clipboard it is offered only to the
//! client with keyboard focus (the seat's focus changes call `focus_changed`), so while the
//! dialog holds the keyboard no client is offered it.

use smithay::delegate_primary_selection;
use smithay::input::Seat;
use smithay::wayland::selection::primary_selection::{
    PrimarySelectionHandler, PrimarySelectionState, set_primary_focus,
};
use wayland_server::Resource;
use wayland_server::protocol::wl_surface::WlSurface;

use crate::state::State;

impl PrimarySelectionHandler for State {
    fn primary_selection_state(&self) -> &PrimarySelectionState {
        &self.protocols.primary_selection
    }
}

delegate_primary_selection!(State);

/// The keyboard focus moved to `focused`: its client (and only it) may read the selection.
pub(crate) fn focus_changed(state: &State, seat: &Seat<State>, focused: Option<&WlSurface>) {
    let client = focused.and_then(|s| state.dh.get_client(s.id()).ok());
    set_primary_focus(&state.dh, seat, client);
}
