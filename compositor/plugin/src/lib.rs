//! pcp-plugin: gated intents for any Smithay compositor.
//!
//! One engine decides; front ends only translate. One intent goes from the wire to the
//! decision through these files (`docs/architecture.md` follows a `window.move`):
//! 1. [`wayland`] reads a `pcp_intent_manager_v1.submit` off the wire (checked by
//!    `pcp_protocol::wire`), names the client ([`identity`]) and turns it into a
//!    [`Request::Submit`]; [`run`] hands it to the engine.
//! 2. `engine`, the only code that holds the gate mutably, asks the gate
//!    (`pcp_gate::Gate::submit`). A routine intent is decided there and then; one that needs the
//!    user becomes a prompt, and the engine brings [`ConfirmUi`] in line with the gate
//!    (`ConfirmUi::sync`: the dialog, the voice listener, the haptic cue).
//! 3. [`ui`] turns the seat's input, the microphone's answers, the haptic double tap and the
//!    passing of time into [`PromptEvent`]s (the host hands seat input to [`input`], which
//!    passes what the dialog took on to the engine); it never holds or calls the gate. The
//!    engine hands each to `Gate::respond` (and deadlines to `Gate::tick`), the only calls that
//!    decide a prompt. Nothing a host or a front end calls carries an answer: an answer comes
//!    only from input the dialog took.
//! 4. The engine returns what it caused. [`run`], the loop (here, beside the inbox it queues
//!    commands in), drains it once the engine has returned: an approval the host performs to
//!    [`PcpHandler::execute`] (answered `Ok` or `Err`), [`Delivery`]s to the front end that
//!    asked ([`wayland`] puts them on the wire), [`Effect`]s to the host
//!    ([`PcpHandler::effect`]).
//!
//! What the host compositor does: keep a [`Pcp`] in its state, implement [`PcpHandler`], call
//! [`delegate_pcp!`](crate::delegate_pcp), hand seat input to [`input`] in place of Smithay's
//! own calls, draw [`ConfirmUi::render_elements`] above everything, follow [`Effect`]s (a frame,
//! the keyboard focus), and call [`refresh`] once per event-loop iteration (outputs, input
//! devices and the focal point reach the plugin there); open the gate with
//! `pcp_config::start` and hand it each changed config through [`policy`]. The reference
//! compositor (`pcp-compositor`) does exactly that and nothing more; see `docs/embedding.md`.

#[cfg(feature = "a11y")]
pub mod a11y;
/// The config file as one typed document (the `pcp-config` crate): `Config<H>`, the plugin's
/// sections, and `start`.
pub use pcp_config as config;
#[cfg(feature = "a11y")]
pub mod desktop;
pub mod effects;
mod engine;
pub mod identity;
mod open;
pub use ui::input;
pub mod policy;
pub mod render;
mod timer;
pub mod ui;
pub mod wayland;

use std::collections::VecDeque;
use std::time::Duration;

use pcp_gate::{Gate, IntentId, ModalityEvent};
use wayland_server::{Client, DisplayHandle};

use effects::{Command, Out};
pub use effects::{
    Decided, Delivery, Effect, EntryUpdate, FrontEnd, FrontEndId, Refusal, Request, SecretText,
    Ticket,
};
pub use engine::BUILTIN_CAPABILITIES;
use engine::{Engine, World};
pub use open::{OpenError, Opened};
pub use pcp_gate::Run;
pub use render::PlacedOverlay;
pub use ui::{ConfirmUi, Placement, UiOptions, UiTiming};
pub use wayland::{IntentData, IntentManagerState};

/// Crates the [`delegate_pcp!`](crate::delegate_pcp) macro expands to.
pub mod reexports {
    pub use {pcp_protocol, wayland_server};
}

/// The plugin's own crates a host may name (its dialog's geometry, the haptic and speech
/// devices), so a host depends on `pcp-plugin` alone.
pub use {pcp_gate as gate, pcp_haptics as haptics, pcp_overlay as overlay, pcp_speech as speech};

/// What one modality (or the passing of time) reports about one prompt, for the gate. The prompt
/// is named so that an event about a prompt that has ended meanwhile is never applied to the
/// next one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PromptEvent {
    pub prompt: IntentId,
    pub event: ModalityEvent,
}

/// What the host knows of the world around the dialog, read by [`PcpHandler::surroundings`] at
/// every run and compared by [`refresh`] once per loop iteration: the one place outputs, input
/// devices and the focal point reach the plugin.
#[derive(Debug, Clone, PartialEq)]
pub struct Surroundings {
    /// The outputs in global logical coordinates; their order is the index
    /// [`ConfirmUi::render_elements`] is asked by.
    pub outputs: Vec<pcp_overlay::Output>,
    /// The user's focal point when the host keeps one (a tracker's hint, its own pointer);
    /// `None`: where the seat's input last was, as the plugin saw it (the pointer, the last
    /// touch, the tablet tool). The dialog goes to the output nearest it.
    pub focus: Option<pcp_overlay::Point>,
    /// How many of the seat's input devices can press the dialog's controls (keyboards,
    /// pointers, touch screens, tablets), when the host counts them; `None`: the host does not
    /// count them, and input is taken to be there. With `Some(0)` nobody can answer: prompts
    /// are denied `confirmation_unavailable` until one returns.
    pub input_devices: Option<usize>,
}

impl Surroundings {
    /// The outputs of a Smithay [`Space`](smithay::desktop::Space), each with its place and
    /// scale (in the space's order), the focal point left to the plugin, input devices
    /// uncounted.
    pub fn of_space<E: smithay::desktop::space::SpaceElement + PartialEq>(
        space: &smithay::desktop::Space<E>,
    ) -> Surroundings {
        let outputs = space
            .outputs()
            .filter_map(|o| {
                let r = space.output_geometry(o)?;
                Some(pcp_overlay::Output {
                    rect: pcp_overlay::Rect {
                        x: r.loc.x,
                        y: r.loc.y,
                        w: r.size.w,
                        h: r.size.h,
                    },
                    scale: o.current_scale().fractional_scale(),
                })
            })
            .collect();
        Surroundings {
            outputs,
            focus: None,
            input_devices: None,
        }
    }
}

/// Everything the plugin keeps in the host's state: the engine (which owns the gate and the
/// confirmation UI), the Wayland front end, other front ends, the commands waiting to run, and
/// the plugin's one timer.
pub struct Pcp {
    engine: Engine,
    wayland: IntentManagerState,
    fronts: Vec<Box<dyn FrontEnd>>,
    /// Commands waiting to run: a command that arrives while effects are drained (from a host
    /// callback or a front end) waits here for the drain to finish, so no run is ever nested.
    inbox: VecDeque<Command>,
    draining: bool,
    wakeup: timer::Wakeup,
    /// While the dialog has the keyboard: the host's keyboard focus it took, to give back
    /// (`input::keyboard_focus`; an `Option<D::KeyboardFocus>` of the host's seat).
    keyboard_return: Option<Box<dyn std::any::Any>>,
    /// Where the seat's input last was (the focal point when the host keeps none).
    seat_focus: Option<pcp_overlay::Point>,
    /// What the host reported at the last run, for [`refresh`] to compare with.
    last_seen: Option<Surroundings>,
}

impl std::fmt::Debug for Pcp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ui = self.engine.ui();
        f.debug_struct("Pcp")
            .field("shown", &ui.shown())
            .field("placement", &ui.placement())
            .field("queued", &ui.queued())
            .field("front_ends", &(self.fronts.len() + 1))
            .field("waiting_commands", &self.inbox.len())
            .field("draining", &self.draining)
            .finish_non_exhaustive()
    }
}

impl Pcp {
    /// Advertises `pcp_intent_manager_v1` on `display` and takes charge of `gate` and `ui`, the
    /// UI made from `sections`, the plugin's sections of the policy in force (so that a new
    /// policy restarts only what it changes). Give it an event loop with [`Pcp::use_event_loop`]
    /// so its timer runs.
    pub fn new<D>(
        display: &DisplayHandle,
        gate: Gate,
        ui: ConfirmUi,
        sections: pcp_config::PluginSections,
    ) -> Pcp
    where
        D: wayland::IntentDispatch,
    {
        Pcp {
            engine: Engine::new(gate, ui, sections),
            wayland: IntentManagerState::new::<D>(display),
            fronts: Vec::new(),
            inbox: VecDeque::new(),
            draining: false,
            wakeup: timer::Wakeup::default(),
            keyboard_return: None,
            seat_focus: None,
            last_seen: None,
        }
    }

    /// The capabilities the host performs itself after approval (each approval of one goes to
    /// [`PcpHandler::execute`] first); [`BUILTIN_CAPABILITIES`] unless set here.
    pub fn performs(&mut self, capabilities: &[&str]) {
        self.engine
            .set_performs(capabilities.iter().map(|c| c.to_string()).collect());
    }

    /// The host's own sections of the policy that last took effect, as the host proposed them
    /// (after an [`Effect::PolicySettled`] that says `applied`): `None` once taken, or when they
    /// are not an `H`.
    pub fn take_applied_sections<H: 'static>(&mut self) -> Option<H> {
        match self.engine.take_applied_host()?.downcast::<H>() {
            Ok(host) => Some(*host),
            Err(_) => {
                tracing::error!(
                    "the applied host sections are not a {}",
                    std::any::type_name::<H>()
                );
                None
            }
        }
    }

    /// Runs the plugin's timer (the gate's deadlines, the dialog's guard and countdown, a
    /// press-and-hold, the voice listener, the device probe, the audit group commit) and its
    /// device reports on `handle`'s loop.
    pub fn use_event_loop<D: PcpHandler>(&mut self, handle: calloop::LoopHandle<'static, D>) {
        self.wakeup = timer::Wakeup::on_loop(handle.clone());
        self.wayland.use_event_loop(handle.clone());
        self.engine.ui_mut().use_event_loop(handle);
    }

    /// Adds a front end other than the Wayland protocol: it submits with tickets of the
    /// returned id through [`run`] and hears their answers through [`FrontEnd::deliver`].
    pub fn add_front_end(&mut self, front: Box<dyn FrontEnd>) -> FrontEndId {
        self.fronts.push(front);
        FrontEndId(self.fronts.len() as u32)
    }

    /// The gate: its config, its prompts (read them, never answer them here), its store.
    pub fn gate(&self) -> &Gate {
        self.engine.gate()
    }

    /// Commits buffered audit records (at exit, or before reading the audit log).
    pub fn flush(&mut self) -> Result<(), pcp_gate::StoreError> {
        self.engine.flush()
    }

    /// Verifies a confirmation token for an executor (`Gate::verify_token`; it spends the
    /// token's nonce).
    pub fn verify_token(
        &mut self,
        token: &str,
        capability: &str,
        params: &serde_json::Value,
        steps: &[pcp_gate::Step],
        app: Option<&str>,
        now_ms: i64,
    ) -> Result<
        Result<pcp_gate::token::TokenClaims, pcp_gate::token::TokenRejection>,
        pcp_gate::StoreError,
    > {
        self.engine
            .gate_for_tokens()
            .verify_token(token, capability, params, steps, app, now_ms)
    }

    /// From now on every prompt is answered by a scripted user (the test harness only).
    #[cfg(feature = "scripted-user")]
    pub fn attach_scripted_user(&mut self) {
        self.engine.gate_for_tokens().attach_scripted_user();
    }

    /// The confirmation UI, to read (what is shown, where, and the devices it knows).
    pub fn ui(&self) -> &ConfirmUi {
        self.engine.ui()
    }

    /// The confirmation UI, to change it (inside the plugin only: a host reads it through
    /// [`Pcp::ui`] and reaches it only through seat input).
    pub(crate) fn ui_mut(&mut self) -> &mut ConfirmUi {
        self.engine.ui_mut()
    }

    /// The protocol's global and wire objects.
    pub fn intents(&self) -> &IntentManagerState {
        &self.wayland
    }

    /// When the plugin next needs its timer, from `now_ms` on the host's clock (`None`: asleep
    /// until something happens).
    pub fn next_wakeup(&self, now_ms: i64) -> Option<Duration> {
        self.engine.next_wakeup(now_ms)
    }

    pub(crate) fn queue_limits(&self) -> &pcp_gate::config::QueueConfig {
        &self.engine.gate().config().file.queue
    }
}

/// What the host compositor provides to the plugin. Every method is a leaf: the plugin calls
/// them after the engine has returned, while it drains effects; a command a callback starts
/// (through [`run`]) waits until the drain is done.
pub trait PcpHandler: Sized + 'static {
    /// The plugin inside the host's state.
    fn pcp(&mut self) -> &mut Pcp;

    /// Now, in Unix milliseconds, from the compositor's clock (tests inject it).
    fn now_ms(&self) -> i64;

    /// The outputs the dialog may be shown on, the focal point and the input devices, now
    /// ([`Surroundings::of_space`] for a host with a Smithay `Space`).
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

    /// Performs an approved capability the host performs ([`Pcp::performs`]). An error
    /// becomes `denied(execution_failed)`, audited.
    fn execute(&mut self, run: &Run) -> Result<(), String> {
        Err(format!(
            "this compositor does not perform {}",
            run.capability
        ))
    }

    /// One of the engine's effects for the host: see [`Effect`].
    fn effect(&mut self, _effect: Effect) {}
}

/// Runs a front end's `request` through the engine and drains what it caused: see the
/// [crate documentation](crate). Called while effects are drained, it queues the request,
/// which runs once the drain is done.
pub fn run<D: PcpHandler>(state: &mut D, request: Request) {
    run_command(state, Command::Request(Box::new(request)));
}

/// Runs `command` through the engine and drains what it caused (queued while a drain is under
/// way).
pub(crate) fn run_command<D: PcpHandler>(state: &mut D, command: Command) {
    let pcp = state.pcp();
    pcp.inbox.push_back(command);
    if pcp.draining {
        return;
    }
    pcp.draining = true;
    while let Some(command) = state.pcp().inbox.pop_front() {
        let world = World::now(state);
        tracing::trace!(command = command.kind(), "engine run");
        let effects = state.pcp().engine.run(command, &world);
        for out in effects {
            tracing::trace!(effect = out.kind(), "drained");
            drain(state, out, world.now_ms);
        }
    }
    let now = state.now_ms();
    let pcp = state.pcp();
    pcp.draining = false;
    let wait = pcp.engine.next_wakeup(now);
    pcp.wakeup.set(wait);
}

/// Hands one of the engine's effects on: `Execute` to the host (its result back to the engine),
/// `Pending`/`Decided` to the front end that asked, the rest to the host.
fn drain<D: PcpHandler>(state: &mut D, out: Out, now: i64) {
    let next = match out {
        Out::Execute(decided) => {
            let result = match &decided.outcome.run {
                Some(run) => state.execute(run),
                // Fail closed: an approval that names nothing to run is not performed.
                None => Err("the approval names nothing to run".to_string()),
            };
            Some(Command::Executed { decided, result })
        }
        Out::Front(delivery) => {
            deliver(state.pcp(), delivery, now).map(|r| Command::Request(Box::new(r)))
        }
        Out::Host(effect) => {
            state.effect(effect);
            None
        }
    };
    if let Some(command) = next {
        state.pcp().inbox.push_back(command);
    }
}

/// Hands a front end's delivery to that front end.
fn deliver(pcp: &mut Pcp, delivery: Delivery, now: i64) -> Option<Request> {
    let front = delivery.ticket().front;
    if front == FrontEndId::WAYLAND {
        let queue = &pcp.engine.gate().config().file.queue;
        return pcp.wayland.deliver(delivery, queue, now);
    }
    let index = (front.0 as usize).checked_sub(1)?;
    match pcp.fronts.get_mut(index) {
        Some(f) => f.deliver(delivery),
        None => {
            tracing::error!("an answer for an unknown front end {front:?} was dropped");
            None
        }
    }
}

/// The voice `[speech]` asks for: the Vosk engine (its model loading in the background) when
/// `enabled` and the plugin is built with its `voice` feature; `None` (voice off, never
/// planned) otherwise.
pub fn start_voice(config: pcp_speech::Config) -> Option<Box<dyn pcp_speech::Voice>> {
    if !config.enabled {
        return None;
    }
    #[cfg(feature = "voice")]
    {
        Some(Box::new(pcp_speech::SpeechEngine::start(config)))
    }
    #[cfg(not(feature = "voice"))]
    {
        tracing::warn!(
            "[speech] enabled = true, but this build has no recognizer (pcp-plugin's feature \
             `voice`): voice is off"
        );
        None
    }
}

/// Once per iteration of the host's event loop (where it flushes its clients): the plugin reads
/// [`PcpHandler::surroundings`] and, when the outputs or the input devices changed since it
/// last looked (or the focal point, while a dialog is up), brings itself in line — the dialog
/// moves off an output that went, a prompt nobody can answer now is denied, a policy proposal
/// that waited for an output is asked. Nothing runs when nothing changed.
pub fn refresh<D: PcpHandler>(state: &mut D) {
    let around = state.surroundings();
    let pcp = state.pcp();
    let changed = match &pcp.last_seen {
        None => true,
        Some(seen) => {
            seen.outputs != around.outputs
                || seen.input_devices != around.input_devices
                || (seen.focus != around.focus && pcp.ui().is_open())
        }
    };
    if changed {
        run_command(state, Command::Refresh);
    }
}

/// Hands what the seat, the microphone or the haptic device said about prompts to the engine.
pub(crate) fn run_events<D: PcpHandler>(state: &mut D, events: Vec<PromptEvent>) {
    run_command(state, Command::Events(events));
}

/// The plugin's timer fired or a device has news: time-driven and device events go to the
/// engine (the plugin's own timer calls it; a test that moves its clock calls it after).
pub fn on_wakeup<D: PcpHandler>(state: &mut D) {
    run_command(state, Command::Wakeup);
}

/// The host could not draw the dialog (a render error): the prompt shown cannot be seen, so its
/// visual step is lost and the prompt is denied (fail closed), audited with that reason.
pub fn render_failed<D: PcpHandler>(state: &mut D) {
    let Some(prompt) = state.pcp().ui().shown() else {
        return;
    };
    tracing::warn!("the dialog could not be drawn: its prompt loses its visual step");
    let lost = PromptEvent {
        prompt,
        event: ModalityEvent::Lost(pcp_gate::Modality::Visual),
    };
    run_events(state, vec![lost]);
}

/// The desktop asks (`true`) or stops asking for high contrast (the settings portal's
/// `contrast`): with `[overlay] follow_desktop_contrast` the dialog draws with the
/// high-contrast palette. `desktop::follow_contrast` (feature `a11y`) calls it for you.
pub fn set_desktop_high_contrast<D: PcpHandler>(state: &mut D, high: bool) {
    state.pcp().ui_mut().set_desktop_high_contrast(high);
    run_command(state, Command::Refresh);
}

/// What tests and the test harness reach that a host never does (cargo feature `testing`, which
/// no compositor enables): replacing the devices under a running plugin and reading the dialog's
/// pixels.
#[cfg(feature = "testing")]
pub mod testing {
    use crate::effects::Command;
    use crate::{PcpHandler, run_command};

    /// Replaces the speech engine (`None`: voice off), as a changed `[speech]` would.
    pub fn set_speech_engine<D: PcpHandler>(
        state: &mut D,
        engine: Option<Box<dyn pcp_speech::Voice>>,
    ) {
        state.pcp().ui_mut().set_speech_engine(engine);
        run_command(state, Command::Refresh);
    }

    /// Replaces the haptic backend (a recording one).
    pub fn set_haptics<D: PcpHandler>(state: &mut D, backend: Box<dyn pcp_haptics::Haptics>) {
        state.pcp().ui_mut().set_haptics(backend);
        run_command(state, Command::Refresh);
    }

    /// The dialog's pixels as drawn for its output (width, height, premultiplied RGBA); `None`
    /// when it is not up.
    pub fn dialog_pixels(pcp: &mut crate::Pcp) -> Option<(u32, u32, Vec<u8>)> {
        pcp.ui_mut().pixels()
    }

    /// The characters the dialog on screen draws as empty boxes (none when every text on it is
    /// legible), for tools that report what a capture shows.
    pub fn dialog_missing_glyphs(pcp: &mut crate::Pcp) -> Vec<char> {
        pcp.ui_mut().drawn_missing_glyphs()
    }
}
