//! pcp-intent-v1 through the plugin: the [`PcpHandler`] the reference compositor implements —
//! its clock, its outputs and focal point, the app ids of toplevels, the built-in capabilities
//! it performs ([`builtins`](crate::builtins)), keyboard focus as the dialog wants it, the pointer when the dialog comes, moves and goes, a frame when the dialog
//! changes, and the sections of a policy when it applies (or a notice when it does not).

use pcp_plugin::{Effect, Pcp, PcpHandler, Run, Surroundings};
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

    fn execute(&mut self, run: &Run) -> Result<(), String> {
        crate::builtins::execute(self, &run.capability, &run.params)
    }

    fn effect(&mut self, effect: Effect) {
        match effect {
            // It appeared, moved or went: the pointer may be over it, or over a window again.
            Effect::DialogShown(_) | Effect::Damage => {
                self.pointer_after_dialog();
                self.frames.damage();
            }
            Effect::KeyboardFocus => self.update_keyboard_focus(),
            Effect::PolicySettled { applied, reason } => {
                if applied {
                    self.apply_policy_sections();
                    self.settings.notice.set(None);
                } else {
                    let text = format!("{} {reason}", self.settings.config.policy_refused_notice);
                    self.settings.notice.set(Some(text));
                }
                self.frames.damage();
            }
            // Whatever the process does next (an embedder may keep running to show a greeter),
            // the session's approvals have ended with it.
            Effect::EndSession => self.running = false,
        }
    }
}

pcp_plugin::delegate_pcp!(State);
