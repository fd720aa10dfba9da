//! `wl_data_device_manager`: the clipboard and drag and drop between clients. Apps such as foot
//! refuse to start without it. The selection is offered to the client with keyboard focus only
//! (the seat's focus changes call `focus_changed`); while the dialog holds the keyboard no
//! client has focus, so none is offered anything. Drags run as Smithay's pointer grabs, which
//! see only the input the dialog did not take. A drag's icon is drawn at the pointer, above
//! the windows and below the dialog (the icon's own hotspot offset is not applied).

use smithay::delegate_data_device;
use smithay::input::Seat;
use smithay::wayland::selection::SelectionHandler;
use smithay::wayland::selection::data_device::{
    ClientDndGrabHandler, DataDeviceHandler, DataDeviceState, ServerDndGrabHandler,
    set_data_device_focus,
};
use wayland_server::Resource;
use wayland_server::protocol::wl_data_source::WlDataSource;
use wayland_server::protocol::wl_surface::WlSurface;

use crate::state::State;

impl SelectionHandler for State {
    type SelectionUserData = ();
}

impl DataDeviceHandler for State {
    fn data_device_state(&self) -> &DataDeviceState {
        &self.protocols.data_device
    }
}

impl ClientDndGrabHandler for State {
    fn started(
        &mut self,
        _source: Option<WlDataSource>,
        icon: Option<WlSurface>,
        _seat: Seat<Self>,
    ) {
        self.desktop.set_drag_icon(icon);
        self.frames.damage();
    }

    fn dropped(&mut self, _target: Option<WlSurface>, _validated: bool, _seat: Seat<Self>) {
        self.desktop.set_drag_icon(None);
        self.frames.damage();
    }
}
impl ServerDndGrabHandler for State {}

delegate_data_device!(State);

/// The keyboard focus moved to `focused`: its client (and only it) may read the selection.
pub(crate) fn focus_changed(state: &State, seat: &Seat<State>, focused: Option<&WlSurface>) {
    let client = focused.and_then(|s| state.dh.get_client(s.id()).ok());
    set_data_device_focus(&state.dh, seat, client);
}
