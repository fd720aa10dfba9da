//! ext-idle-notify-v1 and idle-inhibit: an idle daemon (swayidle) is told when nobody has
//! touched any input device for its timeout, and when someone does again; a client showing a
//! video holds an idle inhibitor on its surface and no idle is reported while one exists. All
//! seat input counts as activity, the dialog's included. The idle notifier is privileged —
//! hidden from sandboxed clients ([`may_see_privileged`](crate::handlers::may_see_privileged)):
//! when the user is away is not something a confined agent needs to learn. An inhibitor counts
//! as long as its surface exists, whether or not it is shown.

use smithay::delegate_idle_inhibit;
use smithay::reexports::wayland_protocols::ext::idle_notify::v1::server::ext_idle_notification_v1::ExtIdleNotificationV1;
use smithay::reexports::wayland_protocols::ext::idle_notify::v1::server::ext_idle_notifier_v1::ExtIdleNotifierV1;
use smithay::wayland::idle_inhibit::IdleInhibitHandler;
use smithay::wayland::idle_notify::{
    IdleNotificationUserData, IdleNotifierHandler, IdleNotifierState,
};
use wayland_server::protocol::wl_surface::WlSurface;
use wayland_server::{Client, DataInit, DisplayHandle, GlobalDispatch, New};

use crate::state::State;

impl IdleNotifierHandler for State {
    fn idle_notifier_state(&mut self) -> &mut IdleNotifierState<Self> {
        &mut self.protocols.idle_notifier
    }
}

impl GlobalDispatch<ExtIdleNotifierV1, ()> for State {
    fn bind(
        state: &mut Self,
        handle: &DisplayHandle,
        client: &Client,
        resource: New<ExtIdleNotifierV1>,
        global_data: &(),
        data_init: &mut DataInit<'_, Self>,
    ) {
        <IdleNotifierState<State> as GlobalDispatch<ExtIdleNotifierV1, (), State>>::bind(
            state,
            handle,
            client,
            resource,
            global_data,
            data_init,
        );
    }

    fn can_view(client: Client, _global_data: &()) -> bool {
        crate::handlers::may_see_privileged(&client)
    }
}

wayland_server::delegate_dispatch!(State: [ExtIdleNotifierV1: ()] => IdleNotifierState<State>);
wayland_server::delegate_dispatch!(
    State: [ExtIdleNotificationV1: IdleNotificationUserData] => IdleNotifierState<State>
);

impl IdleInhibitHandler for State {
    fn inhibit(&mut self, surface: WlSurface) {
        let inhibited = self.desktop.inhibit_idle(surface);
        self.protocols.idle_notifier.set_is_inhibited(inhibited);
    }

    fn uninhibit(&mut self, surface: WlSurface) {
        let inhibited = self.desktop.uninhibit_idle(&surface);
        self.protocols.idle_notifier.set_is_inhibited(inhibited);
    }
}

delegate_idle_inhibit!(State);

impl State {
    /// Someone used an input device: idle timers start again.
    pub(crate) fn input_activity(&mut self) {
        let seat = self.seat.clone();
        self.protocols.idle_notifier.notify_activity(&seat);
    }
}
