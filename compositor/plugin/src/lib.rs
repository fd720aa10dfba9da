//! pcp-plugin: gated intents for any Smithay compositor.
//!
//! One intent goes from the wire to the decision through five files:
//! 1. [`intent`] reads a `pcp_intent_manager_v1.submit` off the wire (checked by
//!    `pcp_protocol::wire`), names the client from its socket credentials ([`identity`]) and asks
//!    the gate (`pcp_gate::Gate::submit`). A routine intent is answered there and then.
//! 2. An intent that needs the user becomes a prompt the gate owns; [`drive::apply`] runs the one
//!    loop: it brings [`ConfirmUi`] in line with the gate (`ConfirmUi::sync`, which shows the
//!    dialog, starts the voice listener and the haptic cue) and applies the events that come back.
//! 3. [`ui`] turns the seat's input, the microphone's answers, the haptic double tap and the
//!    passing of time (`ConfirmUi::timers`: the guard, a press-and-hold completing) into
//!    [`PromptEvent`]s; it never holds or calls the gate.
//! 4. [`drive`] hands each event to `Gate::respond` (and deadlines to `Gate::tick`), the only
//!    calls that decide a prompt.
//! 5. `intent::deliver` sends the outcome on the intent's wire object, after performing a
//!    built-in capability through [`PcpHandler::execute_builtin`].
//!
//! What the host compositor does: keep a [`Pcp`] in its state, implement [`PcpHandler`], call
//! [`delegate_pcp!`](crate::delegate_pcp), route seat input through [`input`] (which says
//! whether the dialog took it: the dialog shares the desktop unless its prompt is modal), draw
//! [`ConfirmUi::render_elements`] above everything, and call [`drive::refresh`] when outputs,
//! input devices or the focal point change; open the gate with `Gate::start` and hand it each
//! changed config through [`policy`], applying its own sections only when
//! [`PcpHandler::policy_settled`] says the policy applied. The reference
//! compositor (`pcp-compositor`) does exactly that and nothing more; see `docs/embedding.md`.

#[cfg(feature = "a11y")]
pub mod a11y;
pub mod config;
#[cfg(feature = "a11y")]
pub mod desktop;
pub mod drive;
pub mod identity;
pub mod input;
pub mod intent;
pub mod policy;
pub mod render;
pub mod ui;

use std::time::Duration;

use pcp_gate::{Gate, IntentId, ModalityEvent};
use serde_json::Value;
use wayland_server::{Client, DisplayHandle};

pub use drive::{apply, on_wakeup, refresh};
pub use intent::{BUILTIN_CAPABILITIES, IntentData, IntentManagerState};
pub use render::PlacedOverlay;
pub use ui::{ConfirmUi, Placement, UiOptions, UiTiming};

/// Crates the [`delegate_pcp!`](crate::delegate_pcp) macro expands to.
pub mod reexports {
    pub use {pcp_protocol, wayland_server};
}

/// What one modality (or the passing of time) reports about one prompt, for the gate. The prompt
/// is named so that an event about a prompt that has ended meanwhile is never applied to the
/// next one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PromptEvent {
    pub prompt: IntentId,
    pub event: ModalityEvent,
}

/// Where the dialog may go: the outputs in global logical coordinates (their order is the one
/// [`ConfirmUi::render_elements`] is asked by) and the user's focal point (the pointer, the last
/// touch, or a tracker's hint).
#[derive(Debug, Clone)]
pub struct Surroundings {
    pub outputs: Vec<pcp_overlay::Output>,
    pub focus: pcp_overlay::Point,
}

/// Everything the plugin keeps in the host's state: the gate that decides (and owns the open
/// prompts), the protocol's global and wire objects, the confirmation UI, and the plugin's one
/// timer.
pub struct Pcp {
    gate: Gate,
    intents: IntentManagerState,
    ui: ConfirmUi,
    wakeup: drive::Wakeup,
    policy: policy::PolicyTrack,
}

impl Pcp {
    /// Advertises `pcp_intent_manager_v1` on `display` and takes charge of `gate` and `ui`.
    /// Give it an event loop with [`Pcp::use_event_loop`] so its timer runs.
    pub fn new<D>(display: &DisplayHandle, gate: Gate, ui: ConfirmUi) -> Pcp
    where
        D: intent::IntentDispatch,
    {
        Pcp {
            gate,
            intents: IntentManagerState::new::<D>(display),
            ui,
            wakeup: drive::Wakeup::default(),
            policy: policy::PolicyTrack::default(),
        }
    }

    /// Runs the plugin's timer (the gate's deadlines, the dialog's guard and countdown, a
    /// press-and-hold, the voice listener, the device probe, the audit group commit) and its
    /// device reports on `handle`'s loop.
    pub fn use_event_loop<D: PcpHandler>(&mut self, handle: calloop::LoopHandle<'static, D>) {
        self.wakeup = drive::Wakeup::on_loop(handle.clone());
        self.intents.use_event_loop(handle.clone());
        self.ui.use_event_loop(handle);
    }

    /// The gate: its config, its prompts (read them, never answer them here), its store.
    pub fn gate(&self) -> &Gate {
        &self.gate
    }

    /// The gate, to `flush` its audit records at exit. A changed config goes through
    /// [`policy::propose`] (never `Gate::reload`, which asks nobody). Prompts are answered only
    /// through [`drive::apply`].
    pub fn gate_mut(&mut self) -> &mut Gate {
        &mut self.gate
    }

    /// The confirmation UI, to read (what is shown, where, and the devices it knows).
    pub fn ui(&self) -> &ConfirmUi {
        &self.ui
    }

    /// The confirmation UI, to change its devices or settings (then call [`drive::refresh`]).
    pub fn ui_mut(&mut self) -> &mut ConfirmUi {
        &mut self.ui
    }

    /// The protocol's global and wire objects.
    pub fn intents(&self) -> &IntentManagerState {
        &self.intents
    }

    /// When the plugin next needs its timer, from `now_ms` on the host's clock (`None`: asleep
    /// until something happens).
    pub fn next_wakeup(&self, now_ms: i64) -> Option<Duration> {
        drive::next_wakeup(self, now_ms)
    }
}

/// What the host compositor provides to the plugin. None of these methods may call back into
/// the plugin's [`drive`] functions: the plugin calls them from inside its one loop.
pub trait PcpHandler: Sized + 'static {
    /// The plugin inside the host's state.
    fn pcp(&mut self) -> &mut Pcp;

    /// Now, in Unix milliseconds, from the compositor's clock (tests inject it).
    fn now_ms(&self) -> i64;

    /// The outputs the dialog may be shown on and the focal point, now.
    fn surroundings(&self) -> Surroundings;

    /// The app id of the client's toplevel, when it has one (shown on the dialog, audited).
    fn app_id_of(&self, _client: &Client) -> Option<String> {
        None
    }

    /// The identity the client's connection was given when it connected
    /// ([`identity::ConnectionIdentity::of_stream`], kept in the client's data). With it, each
    /// submit checks that the connecting process is still the one that connected and refuses
    /// the intent (`identity_changed`, audited) when it exited or ran another program; a
    /// sandboxed client is named by its security context. Without it (`None`, the default) the
    /// identity is read from the socket credentials at each submit and an exec cannot be told.
    fn connection<'c>(&self, _client: &'c Client) -> Option<&'c identity::ConnectionIdentity> {
        None
    }

    /// Whether the host performs `capability` itself after approval.
    fn is_builtin(&self, capability: &str) -> bool {
        BUILTIN_CAPABILITIES.contains(&capability)
    }

    /// Performs an approved built-in capability. An error becomes `denied(execution_failed)`.
    fn execute_builtin(&mut self, capability: &str, _params: &Value) -> Result<(), String> {
        Err(format!("this compositor does not perform {capability}"))
    }

    /// The dialog appeared (`true`) or went away (`false`). It does not take the keyboard by
    /// appearing (see [`PcpHandler::dialog_keyboard_focus`]); a host takes the pointer from a
    /// window now under it ([`ConfirmUi::takes_pointer_at`]) and gives it back when it goes.
    fn dialog_shown(&mut self, _shown: bool) {}

    /// The dialog took the keyboard (`true`: a click or tap on it, the focus shortcut, or a
    /// modal prompt — take keyboard focus from clients and remember whose it was) or gave it
    /// back (`false`: return it to the window that had it).
    fn dialog_keyboard_focus(&mut self, _focused: bool) {}

    /// The dialog's pixels changed or it moved: draw a frame.
    fn dialog_damaged(&mut self) {}

    /// A proposed policy ([`policy::propose`], [`policy::start`]) was settled. `applied`: it is
    /// in force now — a raise at once, or a lowering the user approved — and the host applies
    /// its own sections as `pcp().gate().config()` now has them (the text of the file it
    /// approved). Otherwise the user denied it, it timed out, or nobody could answer: the policy
    /// in force stays, host sections included; `reason` says which (it is audited).
    fn policy_settled(&mut self, _applied: bool, _reason: &str) {}
}
