//! pcp-intent-v1 through the plugin: the [`PcpHandler`] the reference compositor implements —
//! its clock, its outputs and focal point, the app ids of toplevels, the built-in capabilities
//! it performs ([`builtins`](crate::builtins)), keyboard focus when the dialog takes it and
//! gives it back, the pointer when the dialog comes, moves and goes, a frame when the dialog
//! changes, and the sections of a policy when it applies (or a notice when it does not).

use pcp_plugin::{Pcp, PcpHandler, Surroundings};
use serde_json::Value;
use wayland_server::{Client, Resource};

use crate::handlers::xdg::app_id;
use crate::state::State;

impl PcpHandler for State {
    fn pcp(&mut self) -> &mut Pcp {
        &mut self.pcp
    }

    fn now_ms(&self) -> i64 {
        self.clock.now_ms()
    }

    fn surroundings(&self) -> Surroundings {
        State::surroundings(self)
    }

    fn app_id_of(&self, client: &Client) -> Option<String> {
        self.desktop.space.elements().find_map(|w| {
            let toplevel = w.toplevel()?;
            let owner = toplevel.wl_surface().client()?;
            (owner.id() == client.id()).then(|| app_id(w)).flatten()
        })
    }

    fn connection<'c>(
        &self,
        client: &'c Client,
    ) -> Option<&'c pcp_plugin::identity::ConnectionIdentity> {
        client
            .get_data::<crate::handlers::ClientState>()?
            .connection
            .as_ref()
    }

    fn execute_builtin(&mut self, capability: &str, params: &Value) -> Result<(), String> {
        crate::builtins::execute(self, capability, params)
    }

    fn dialog_shown(&mut self, _shown: bool) {
        self.pointer_after_dialog();
        self.frames.damage();
    }

    fn dialog_keyboard_focus(&mut self, focused: bool) {
        if focused {
            self.take_keyboard_focus();
        } else {
            self.restore_keyboard_focus();
        }
    }

    fn dialog_damaged(&mut self) {
        // It may have moved under the pointer.
        self.pointer_after_dialog();
        self.frames.damage();
    }

    fn policy_settled(&mut self, applied: bool, reason: &str) {
        if applied {
            self.apply_policy_sections();
            self.settings.notice.set(None);
        } else {
            let text = format!("{} {reason}", self.settings.config.policy_refused_notice);
            self.settings.notice.set(Some(text));
        }
        self.frames.damage();
    }
}

pcp_plugin::delegate_pcp!(State);
