//! [`ConfirmUi`]: everything the user meets while a prompt waits, owned in one place — the
//! dialog (placement, rendering, input), the voice listener, the haptic prompt, the keys it
//! took from clients, the user's activity, and which devices can answer. Input and device events
//! go in; [`PromptEvent`]s come out. It never holds or calls the gate: `ConfirmUi::sync` reads
//! a [`GateView`] and *returns* what it needs the gate to hear (a step that cannot run), and the
//! [engine](crate::engine) applies those. Approvals come only from input ([`ConfirmUi::key`],
//! [`ConfirmUi::pointer_button`], [`ConfirmUi::touch_up`]), from the
//! microphone and touch surface (`ConfirmUi::device_events`, [`ConfirmUi::touch_down`]) and a
//! long enough press-and-hold (`ConfirmUi::timers`) — never from `ConfirmUi::sync`, which draws.

mod accessible;
mod devices;
mod dialog;
mod entry;
mod focus;
mod glyphs;
mod haptic;
pub mod input;
mod keys;
mod options;
mod voice;

use std::sync::Arc;
use std::time::{Duration, Instant};

use calloop::LoopHandle;
use calloop::ping::{PingSource, make_ping};
use pcp_gate::{Availability, IntentId, Modality, ModalityEvent};
use pcp_haptics::Haptics;
use pcp_overlay::{ConfirmDialog, OverlayError};
use pcp_speech::{Unavailable, Voice};
use smithay::backend::renderer::element::memory::MemoryRenderBufferRenderElement;
use smithay::backend::renderer::{ImportMem, Renderer, Texture};
use smithay::utils::{Logical, Point};

use self::devices::Devices;
pub use self::dialog::Placement;
use self::dialog::{DialogSync, DialogView, losses_to_end, next_countdown_change, risk_of};
pub use self::entry::{EntryKey, EntryState, EntryView};
use self::focus::Sharing;
pub use self::focus::{Shortcut, ShortcutKeys};
use self::haptic::HapticStep;
pub use self::input::Routed;
pub use self::options::{GateView, UiOptions, UiTiming};
use self::voice::{VoiceStep, wants_voice};
use crate::render::PlacedOverlay;
use crate::{PcpHandler, PromptEvent, Surroundings};

/// What changed for the host since it last asked.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Changes {
    /// The dialog appeared (`Some(true)`) or went (`Some(false)`).
    pub shown: Option<bool>,
    /// The dialog's pixels or place changed.
    pub damaged: bool,
    /// The dialog took the keyboard (`Some(true)`) or gave it back (`Some(false)`).
    pub keyboard: Option<bool>,
}

/// The confirmation UI; see the [module documentation](self).
pub struct ConfirmUi {
    dialog: DialogView,
    /// `[overlay]`'s modal risk classes, input margin and focus shortcut.
    sharing: Sharing,
    voice: VoiceStep,
    haptic: HapticStep,
    devices: Devices,
    input: input::ModalInput,
    /// The text entries front ends attached to their prompts (a password).
    entries: entry::Entries,
    timing: UiTiming,
    changes: Changes,
    /// The prompt waiting for a spoken answer, as last synced.
    waiting_voice: Option<IntentId>,
    /// The last prompt whose devices were re-checked when it was shown.
    rechecked: Option<IntentId>,
    /// Overlay settings from a reload, applied once no dialog is up.
    pending_overlay: Option<pcp_overlay::Config>,
    /// The `[overlay]` settings as configured, before the answer words of the speech engine's
    /// phrase pack are filled into their texts (they are filled again when the engine changes).
    overlay: pcp_overlay::Config,
    /// The desktop asks for high contrast (kept across new overlay settings).
    desktop_high_contrast: bool,
    /// When the listener is next polled and the haptic device next checked (wall time).
    next_voice_poll: Option<Instant>,
    next_haptic_check: Option<Instant>,
    /// Wakes the event loop when the probe thread has news; inserted by `use_event_loop`.
    probe_wakeups: Option<PingSource>,
    /// The accessibility tree's publisher and what it announced, once enabled.
    #[cfg(feature = "a11y")]
    accessibility: Option<accessible::Accessibility>,
}

impl ConfirmUi {
    /// A hidden UI. The speech model (if any) keeps loading in the background; the devices are
    /// probed on their own thread from now on.
    pub fn new(options: UiOptions) -> Result<ConfirmUi, OverlayError> {
        let sharing = Sharing::of(&options.overlay)?;
        let engine: Option<Arc<dyn Voice>> = options.speech.map(Arc::from);
        let dialog = DialogView::new(voice::with_answer_words(
            options.overlay.clone(),
            engine.as_ref(),
        ))?;
        let (ping, probe_wakeups) = make_ping().map_err(|e| {
            OverlayError::Layout(format!("cannot make the device probe's wake-up: {e}"))
        })?;
        let interval = Duration::from_millis(u64::from(options.timing.device_probe_ms));
        let devices = Devices::new(engine.as_ref(), interval, ping);
        let mut ui = ConfirmUi {
            dialog,
            sharing,
            voice: VoiceStep::new(engine),
            haptic: HapticStep::new(options.haptics, options.haptics_config),
            devices,
            input: input::ModalInput::default(),
            entries: entry::Entries::default(),
            timing: options.timing,
            changes: Changes::default(),
            waiting_voice: None,
            rechecked: None,
            pending_overlay: None,
            overlay: options.overlay,
            desktop_high_contrast: false,
            next_voice_poll: None,
            next_haptic_check: None,
            probe_wakeups: Some(probe_wakeups),
            #[cfg(feature = "a11y")]
            accessibility: None,
        };
        ui.check_pack_glyphs();
        Ok(ui)
    }

    /// Wakes `handle`'s loop when the device probe has news ([`crate::on_wakeup`] reads it).
    pub(crate) fn use_event_loop<D: PcpHandler>(&mut self, handle: LoopHandle<'static, D>) {
        let Some(source) = self.probe_wakeups.take() else {
            return;
        };
        let inserted = handle.insert_source(source, |_, _, state: &mut D| {
            crate::on_wakeup(state);
        });
        if let Err(e) = inserted {
            tracing::error!("device probe results will wait for the next timer: {e}");
        }
    }

    /// Whether the dialog is up.
    pub fn is_open(&self) -> bool {
        self.dialog.is_open()
    }

    /// The prompt the dialog shows.
    pub fn shown(&self) -> Option<IntentId> {
        self.dialog.shown()
    }

    /// Whether the dialog wants the keyboard (no client has it then): a host folds this into
    /// its keyboard focus on [`Effect::KeyboardFocus`](crate::Effect::KeyboardFocus).
    pub fn wants_keyboard(&self) -> bool {
        self.input.keyboard
    }

    /// Whether the dialog up is modal (its risk class is in `[overlay] modal_for`): it takes
    /// all pointer, touch and key input, and no client gets any.
    pub fn is_modal(&self) -> bool {
        self.dialog.is_open() && self.input.modal
    }

    /// The shortcut that gives the dialog the keyboard (`[overlay] focus_shortcut`).
    pub fn focus_shortcut(&self) -> &Shortcut {
        &self.sharing.shortcut
    }

    /// Where the dialog is, once placed.
    pub fn placement(&self) -> Option<Placement> {
        self.dialog.placement()
    }

    /// The number of waiting prompts the dialog's badge shows.
    pub fn queued(&self) -> u32 {
        self.dialog.queued()
    }

    /// The dialog itself, to read its live state and where its controls are.
    pub fn dialog(&self) -> &ConfirmDialog {
        self.dialog.dialog()
    }

    /// The keys whose press the dialog took: their release never reaches a client either.
    pub fn suppressed_keys(&self) -> impl Iterator<Item = u32> + '_ {
        self.input.suppressed_keys()
    }

    /// What can answer a prompt, as last learned (outputs at the last sync, input devices from
    /// the host, the microphone and model from the probe thread, the haptic device from its
    /// backend). Nothing is probed here.
    pub fn availability(&self) -> Availability {
        Availability {
            output: self.devices.output(),
            input: self.devices.input(),
            voice: self.devices.voice().is_ok(),
            haptic: self.haptic.available(),
        }
    }

    /// Why voice cannot run, as last probed (`Ok` when it can).
    pub fn voice_availability(&self) -> &pcp_speech::Availability {
        self.devices.voice()
    }

    /// Probes the microphone and model now, on the calling thread (device work: for
    /// diagnostics and tests, never on the decision path).
    pub fn probe_voice_now(&self) -> pcp_speech::Availability {
        match self.voice.engine() {
            Some(engine) => engine.available(),
            None => Err(Unavailable::Disabled),
        }
    }

    /// Asks the probe thread to look at the microphone and model now (a sound device was
    /// plugged in or out); its answer arrives through [`crate::on_wakeup`].
    pub fn devices_changed(&mut self) {
        self.devices.probe_voice();
    }

    /// The seat now has `answering` devices that can press the dialog's controls (keyboards,
    /// pointers, touch screens). With none nobody can answer: run [`crate::refresh`] after.
    pub fn set_input_devices(&mut self, answering: usize) {
        let available = answering > 0;
        if available != self.devices.input() {
            if available {
                tracing::info!("an input device can answer prompts again");
            } else {
                tracing::warn!("no input device can answer prompts: asks are denied");
            }
        }
        self.devices.set_input(available);
    }

    /// Replaces the speech engine (`None`: voice off); it is probed from now on.
    pub fn set_speech_engine(&mut self, engine: Option<Box<dyn Voice>>) {
        self.voice.stop();
        let engine: Option<Arc<dyn Voice>> = engine.map(Arc::from);
        self.devices.set_engine(engine.as_ref());
        self.voice = VoiceStep::new(engine);
        // The dialog names the new pack's answer words (and checks it can draw them).
        self.set_overlay_config(self.overlay.clone());
        self.check_pack_glyphs();
    }

    /// Replaces the haptic backend.
    pub fn set_haptics(&mut self, backend: Box<dyn Haptics>) {
        self.haptic.set_backend(backend);
    }

    /// New `[haptics]` settings and the backend found with them (any cue playing ends; a prompt
    /// shown falls back to the dialog at the next sync if the new device cannot play).
    pub fn set_haptics_config(&mut self, backend: Box<dyn Haptics>, config: pcp_haptics::Config) {
        self.haptic.set_backend(backend);
        self.haptic.set_config(config);
    }

    /// New `[overlay]` settings: applied now when no dialog is up, else when it goes.
    pub fn set_overlay_config(&mut self, config: pcp_overlay::Config) {
        if self.dialog.is_open() {
            tracing::info!("the overlay settings apply from the next prompt");
            self.pending_overlay = Some(config);
        } else {
            self.apply_overlay_config(config);
        }
    }

    fn apply_overlay_config(&mut self, config: pcp_overlay::Config) {
        let sharing = match Sharing::of(&config) {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!("the overlay settings were not applied: {e}");
                return;
            }
        };
        match DialogView::new(voice::with_answer_words(
            config.clone(),
            self.voice.engine(),
        )) {
            Ok(mut d) => {
                d.dialog_mut()
                    .set_desktop_high_contrast(self.desktop_high_contrast);
                self.dialog = d;
                self.sharing = sharing;
                self.overlay = config;
                self.check_pack_glyphs();
            }
            Err(e) => tracing::warn!("the overlay settings were not applied: {e}"),
        }
    }

    /// The desktop asks (`true`) or stops asking for high contrast (the settings portal's
    /// `contrast`, read by the plugin's `desktop` module): with `[overlay] follow_desktop_contrast` the dialog
    /// draws with the high-contrast palette. Run [`crate::refresh`] after.
    pub fn set_desktop_high_contrast(&mut self, high: bool) {
        if self.desktop_high_contrast != high {
            self.desktop_high_contrast = high;
            self.dialog.dialog_mut().set_desktop_high_contrast(high);
            self.changes.damaged = true;
        }
    }

    /// Whether the desktop asks for high contrast, as last heard.
    pub fn desktop_high_contrast(&self) -> bool {
        self.desktop_high_contrast
    }

    /// The dialog's pixels as drawn for its output (width, height, premultiplied RGBA), for
    /// screenshots and tests; `None` when it is not up.
    pub fn pixels(&mut self) -> Option<(u32, u32, Vec<u8>)> {
        self.dialog.pixels()
    }

    /// The dialog for the renderer, when it is up and drawn.
    pub fn placed(&self) -> Option<PlacedOverlay<'_>> {
        self.dialog.placed()
    }

    /// The dialog's render element for output `index` (of [`Surroundings::outputs`]), whose
    /// top-left corner is `origin` and whose scale is `scale`; empty when it is elsewhere.
    pub fn render_elements<R>(
        &self,
        renderer: &mut R,
        index: usize,
        origin: Point<i32, Logical>,
        scale: f64,
    ) -> Result<Vec<MemoryRenderBufferRenderElement<R>>, R::Error>
    where
        R: Renderer + ImportMem,
        R::TextureId: Send + Clone + Texture + 'static,
    {
        let placed: Vec<PlacedOverlay<'_>> = self.placed().into_iter().collect();
        crate::render::elements(renderer, &placed, index, origin, scale)
    }

    /// Whether the keyboard moved to or from the dialog since the host last heard.
    pub(crate) fn keyboard_changed(&self) -> bool {
        self.changes.keyboard.is_some()
    }

    /// What changed for the host since the last call.
    pub(crate) fn take_changes(&mut self) -> Changes {
        std::mem::take(&mut self.changes)
    }

    fn hide(&mut self) {
        if self.dialog.hide() {
            self.changes.shown = Some(false);
            self.changes.damaged = true;
        }
        self.closed();
        if let Some(config) = self.pending_overlay.take() {
            self.apply_overlay_config(config);
        }
    }

    /// No dialog is up: the keyboard goes back to the windows.
    fn closed(&mut self) {
        self.input.modal = false;
        self.set_keyboard(false);
    }

    /// Brings the UI in line with the gate: starts or stops the voice listener and the haptic
    /// cue, shows the active prompt (or hides), places it on the output nearest `around.focus`,
    /// counts down and redraws what changed. Returns what the gate must hear: a step that
    /// cannot run (no speech engine, a cue that cannot play) or a prompt that cannot be shown
    /// (no output, no input device, a dialog that cannot be drawn). Never an answer.
    pub(crate) fn sync(
        &mut self,
        gate: GateView<'_>,
        around: &Surroundings,
        now: i64,
    ) -> Vec<PromptEvent> {
        self.devices.set_output(!around.outputs.is_empty());
        let prompt = gate.active;
        self.waiting_voice = prompt.filter(|p| wants_voice(p)).map(|p| p.id);
        // The devices first: a step that cannot run falls back before the dialog shows it.
        let screen_reader = self.screen_reader_running();
        let mut events = self
            .voice
            .sync(prompt, self.dialog.dialog().config(), screen_reader);
        events.extend(self.haptic.sync(prompt, self.dialog.dialog_mut(), now));
        self.next_voice_poll = self.voice.is_listening().then(|| {
            self.next_voice_poll
                .unwrap_or_else(|| self.after(self.timing.voice_poll_ms))
        });
        self.next_haptic_check = self.haptic.active().then(|| {
            self.next_haptic_check
                .unwrap_or_else(|| self.after(self.timing.device_probe_ms))
        });
        if !events.is_empty() {
            return events;
        }
        let Some(prompt) = prompt else {
            self.hide();
            return events;
        };
        if !self.devices.output() || !self.devices.input() {
            let losses = losses_to_end(&prompt.plan, |m| prompt.answered(m));
            if !losses.is_empty() {
                tracing::warn!(
                    "no output can show a prompt or no input device can answer it: denied"
                );
            }
            // What is left needs no dialog (a parent's ask, or a spoken answer still due).
            self.hide();
            return tagged(prompt.id, losses);
        }
        let was_open = self.dialog.is_open();
        let was_shown = self.dialog.shown();
        let voice_note = self.voice_note(prompt);
        let entry = self
            .entries
            .has(prompt.id)
            .then(|| self.entry_has_account(prompt.id));
        let synced = self.dialog.sync(
            prompt,
            self.voice.challenge_of(prompt.id),
            (voice_note.as_deref(), entry),
            gate.queued,
            gate.timeouts,
            &around.outputs,
            around.focus,
            now,
        );
        match synced {
            DialogSync::Unshowable(losses) => {
                if was_open && !self.dialog.is_open() {
                    self.changes.shown = Some(false);
                    self.changes.damaged = true;
                }
                if !self.dialog.is_open() {
                    self.closed();
                }
                tagged(prompt.id, losses)
            }
            DialogSync::Shown { first, damaged } => {
                if first {
                    self.changes.shown = Some(true);
                }
                if was_shown != Some(prompt.id) {
                    // Another prompt: modal only if its risk class asks. A modal dialog has
                    // the keyboard at once; any other keeps the keyboard where it is.
                    self.input.modal = self.sharing.modal_for.contains(&risk_of(prompt.risk));
                    if self.input.modal {
                        self.set_keyboard(true);
                    }
                }
                let keyboard = self.input.keyboard;
                self.dialog.dialog_mut().set_keyboard_focus(keyboard);
                self.lock_approve(prompt.id);
                self.changes.damaged |= damaged || first;
                if self.rechecked != Some(prompt.id) {
                    self.rechecked = Some(prompt.id);
                    if wants_voice(prompt) {
                        // Re-checked on the probe thread; a loss comes back as a device event.
                        self.devices.probe_voice();
                    }
                }
                self.haptic.show_progress(self.dialog.dialog_mut(), now);
                Vec::new()
            }
        }
    }

    /// Why voice is not part of `prompt` when its class needed it, for the dialog.
    fn voice_note(&self, prompt: &pcp_gate::Prompt) -> Option<String> {
        prompt
            .plan
            .notes
            .contains(&pcp_gate::intent::PlanNote::VoiceUnavailable)
            .then(|| {
                voice::unavailable_line(
                    self.devices.voice(),
                    self.voice.engine().map(|e| e.config().language.as_str()),
                    &self.dialog.dialog().config().text,
                )
            })
    }

    /// The passing of time, at `now`: the guard arming, a press-and-hold filling up — and its
    /// completion, the one approval that comes from a timer (the hold timer) rather than an
    /// input event — and the haptic "tap again" hint going once its window has passed.
    pub(crate) fn timers(&mut self, now: i64) -> Vec<PromptEvent> {
        if self.dialog.shown().is_none() {
            return Vec::new();
        }
        let mut events = Vec::new();
        // A completed pointer or touch hold on Approve (or on "Allow until logout").
        if let Some(choice) = self.dialog.dialog_mut().advance(now.max(0) as u64) {
            events.extend(self.answered(choice));
        }
        self.haptic.show_progress(self.dialog.dialog_mut(), now);
        events
    }

    /// What the devices reported: the voice listener's events (an answer, a level, a lost
    /// microphone), the probe thread's results (a microphone or model gone while a prompt
    /// waits for voice) and the haptic device going away mid-prompt.
    pub(crate) fn device_events(&mut self) -> Vec<PromptEvent> {
        let mut events = Vec::new();
        let wall = Instant::now();
        if self.next_voice_poll.is_some_and(|at| at <= wall) {
            self.next_voice_poll = None;
        }
        let shown = self.dialog.shown();
        events.extend(self.voice.poll(shown, self.dialog.dialog_mut()));
        for report in self.devices.take_voice_reports() {
            match report {
                // Busy is the prompt's own listener; a model still loading is not gone.
                Ok(()) | Err(Unavailable::DeviceBusy(_)) | Err(Unavailable::ModelLoading) => {}
                Err(why) => {
                    if let Some(id) = self.waiting_voice.filter(|id| Some(*id) == shown) {
                        tracing::warn!("voice lost mid-prompt, falling back to visual: {why}");
                        events.push(self.voice.device_lost(id, self.dialog.dialog_mut()));
                        self.waiting_voice = None;
                    }
                }
            }
        }
        if self.next_haptic_check.is_some_and(|at| at <= wall) {
            self.next_haptic_check = None;
            events.extend(self.haptic.check_device());
        }
        events
    }

    /// How long until the UI next has something to do, from `now` on the host's clock: the
    /// guard arming, the next frame of a press-and-hold, the countdown's next second, the
    /// "tap again" hint going, the next listener poll or haptic check. `None`: nothing until an
    /// event comes.
    pub(crate) fn next_wakeup(&self, gate: GateView<'_>, now: i64) -> Option<Duration> {
        let mut at: Vec<i64> = Vec::new();
        if self.dialog.is_open() {
            let dialog = self.dialog.dialog();
            if let Some(ready) = dialog.next_deadline() {
                at.push(ready as i64);
            }
            if dialog.hold_done_at().is_some() {
                at.push(now + i64::from(self.timing.frame_interval_ms));
            }
            if let Some(p) = gate.active.filter(|p| Some(p.id) == self.dialog.shown())
                && let Some(next) = next_countdown_change(p, gate.timeouts, now)
            {
                at.push(next);
            }
        }
        if let Some(t) = self.haptic.next_change() {
            at.push(t);
        }
        let host = at
            .into_iter()
            .min()
            .map(|t| Duration::from_millis((t - now).max(0) as u64));
        let wall = Instant::now();
        [self.next_voice_poll, self.next_haptic_check]
            .into_iter()
            .flatten()
            .map(|i| i.saturating_duration_since(wall))
            .chain(host)
            .min()
    }

    fn after(&self, ms: u32) -> Instant {
        Instant::now() + Duration::from_millis(u64::from(ms))
    }
}

fn tagged(prompt: IntentId, losses: Vec<Modality>) -> Vec<PromptEvent> {
    losses
        .into_iter()
        .map(|m| PromptEvent {
            prompt,
            event: ModalityEvent::Lost(m),
        })
        .collect()
}
