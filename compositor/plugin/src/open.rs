//! The plugin opened the usual way, in one call: the gate with the policy last approved, the
//! confirmation UI made from the plugin's sections in force (the dialog, voice when the `voice`
//! feature and `[speech]` say so, the evdev haptic device), and the protocol's global. A host
//! that wants its own UI timing or devices makes them itself and calls [`Pcp::new`].

use std::time::{SystemTime, UNIX_EPOCH};

use pcp_config::{Config, Proposed, SectionGroup};
use wayland_server::DisplayHandle;

use crate::{ConfirmUi, Pcp, UiOptions, UiTiming, wayland};

/// What [`Pcp::open`] gives the host.
#[derive(Debug)]
pub struct Opened<H> {
    /// The plugin, to keep in the host's state.
    pub pcp: Pcp,
    /// The host's own sections of the policy in force.
    pub host: H,
    /// The files' policy when it differs from the one last approved: hand it to
    /// [`policy::start`](crate::policy::start) once the state exists (it waits, proposed again,
    /// until an output and an input device can show and answer its prompt).
    pub proposal: Option<Proposed>,
}

/// Why the plugin could not open.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The state store (SQLite, the token key) could not be opened or is not trusted.
    #[error("the plugin's state: {0}")]
    Store(#[from] pcp_gate::StoreError),
    /// The dialog's settings or fonts could not be used.
    #[error("the dialog: {0}")]
    Dialog(#[from] pcp_overlay::OverlayError),
}

impl Pcp {
    /// Opens the plugin from `config` (read with `pcp_config::Config::<H>::load`, the plugin's
    /// and the gate's sections and the host's `H`) and advertises `pcp_intent_manager_v1` on
    /// `display`. Give the result's `pcp` an event loop with [`Pcp::use_event_loop`].
    pub fn open<D, H>(display: &DisplayHandle, config: Config<H>) -> Result<Opened<H>, OpenError>
    where
        D: wayland::IntentDispatch,
        H: SectionGroup,
    {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
        let started = pcp_config::start(config, now)?;
        let plugin = started.plugin;
        let ui = ConfirmUi::new(UiOptions {
            overlay: plugin.overlay.clone(),
            speech: crate::start_voice(plugin.speech.clone()),
            haptics: Box::new(pcp_haptics::EvdevHaptics::discover(&plugin.haptics)),
            haptics_config: plugin.haptics.clone(),
            timing: UiTiming::default(),
        })?;
        Ok(Opened {
            pcp: Pcp::new::<D>(display, started.gate, ui, plugin),
            host: started.host,
            proposal: started.proposal,
        })
    }
}
