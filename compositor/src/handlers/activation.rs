//! xdg-activation-v1: an app hands another app a token so that it may raise its window (a link
//! opened in a browser). A token counts only when it was made with the serial of a recent
//! input event of a client that has the keyboard (so no app raises itself at will), and is used
//! within [`TOKEN_LIFETIME`]. Activation raises and focuses the window, but never takes the
//! keyboard from the dialog: while the dialog has it, the window gets it when the dialog gives
//! it back.

use std::time::Duration;

use smithay::delegate_xdg_activation;
use smithay::input::Seat;
use smithay::utils::SERIAL_COUNTER;
use smithay::wayland::xdg_activation::{
    XdgActivationHandler, XdgActivationState, XdgActivationToken, XdgActivationTokenData,
};
use wayland_server::Resource;
use wayland_server::protocol::wl_surface::WlSurface;

use crate::state::State;

/// How long a token may be used after it was made.
pub const TOKEN_LIFETIME: Duration = Duration::from_secs(10);

impl XdgActivationHandler for State {
    fn activation_state(&mut self) -> &mut XdgActivationState {
        &mut self.protocols.activation
    }

    fn token_created(&mut self, _token: XdgActivationToken, data: XdgActivationTokenData) -> bool {
        // Valid only with the serial of the seat's keyboard's last enter or key, from the
        // client that has the keyboard.
        let Some((serial, seat)) = data.serial else {
            return false;
        };
        let Some(seat) = Seat::<State>::from_resource(&seat) else {
            return false;
        };
        let Some(keyboard) = seat.get_keyboard() else {
            return false;
        };
        let focused_client = keyboard
            .current_focus()
            .and_then(|s| s.client())
            .map(|c| c.id());
        let same_client = focused_client.is_some() && focused_client == data.client_id;
        same_client
            && keyboard
                .last_enter()
                .is_some_and(|enter| serial.is_no_older_than(&enter))
    }

    fn request_activation(
        &mut self,
        token: XdgActivationToken,
        token_data: XdgActivationTokenData,
        surface: WlSurface,
    ) {
        self.protocols.activation.remove_token(&token);
        if token_data.timestamp.elapsed() > TOKEN_LIFETIME {
            tracing::debug!("an activation token was used too late");
            return;
        }
        let window = self.desktop.window_of(&surface);
        let Some(window) = window else {
            return;
        };
        if self.desktop.is_locked() {
            return;
        }
        self.desktop.space.raise_element(&window, true);
        if self.pcp.ui().wants_keyboard() {
            self.desktop.keyboard_return = Some(surface);
        } else if let Some(keyboard) = self.seat.get_keyboard() {
            keyboard.set_focus(self, Some(surface), SERIAL_COUNTER.next_serial());
        }
        self.frames.damage();
    }
}

delegate_xdg_activation!(State);
