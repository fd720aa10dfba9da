//! wp_security_context_v1: a sandbox engine (`pcpctl run`, Flatpak) hands the compositor a
//! listening socket with its engine, app id and instance id; every client that connects on it
//! is named by that sandbox (verified: the client inside cannot change it) and sees no
//! privileged global ([`may_see_privileged`](crate::handlers::may_see_privileged)). The
//! listener stops when the engine closes its close fd.

use std::sync::Arc;

use smithay::delegate_security_context;
use smithay::wayland::security_context::{
    SecurityContext, SecurityContextHandler, SecurityContextListenerSource,
};

use crate::handlers::ClientState;
use crate::state::State;

impl SecurityContextHandler for State {
    fn context_created(&mut self, source: SecurityContextListenerSource, context: SecurityContext) {
        let sandbox = pcp_plugin::identity::sandbox_of(&context);
        tracing::info!(
            "security context created: engine {:?}, app id {:?}, instance {:?}",
            sandbox.engine,
            sandbox.app_id,
            sandbox.instance_id
        );
        let inserted =
            self.loop_handle
                .insert_source(source, move |stream, _, state: &mut State| {
                    let data = Arc::new(ClientState::connected(&stream, Some(sandbox.clone())));
                    if let Err(e) = state.dh.insert_client(stream, data) {
                        tracing::warn!("a sandboxed client could not be added: {e}");
                    }
                });
        if let Err(e) = inserted {
            tracing::warn!("a security context's listener could not be watched: {e}");
        }
    }
}

delegate_security_context!(State);
