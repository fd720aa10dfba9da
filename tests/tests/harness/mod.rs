//! The headless virtual-output harness (a module each test and bench includes, so the
//! `test-harness` feature of `pcp-compositor` is a dev-dependency feature, compiled only for
//! tests): a real compositor (the `pcp-compositor` library with its
//! headless pixman backend) on this thread, chosen outputs and focal point, a private 0700
//! runtime folder and socket, real Wayland clients (our protocol client on threads,
//! `weston-simple-shm`, `wayland-info` as processes), seat input injected through the
//! compositor's test-only API, the gate's clock advanced on demand, and PNG captures per output.
//! Tests reach the compositor only through the [`Fixture`]'s methods, never its fields.

// Each test uses a different part of the harness.
#![allow(dead_code)]

pub mod apps;
pub mod audio;
pub mod client;
pub mod dbus;
pub mod voice;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use pcp_compositor::backend::BackendError;
use pcp_compositor::config::{OutputSpec, SpecError};
use pcp_compositor::headless::Capture;
use pcp_compositor::startup;
use pcp_compositor::state::{Clock, Compositor, Socket, State};
use pcp_gate::Gate;
use pcp_overlay::{Control, LiveState};
use pcp_plugin::PcpHandler;
use pcp_protocol::client::{ClientError, Decision, IntentClient, IntentEvent, Submission};
use serde_json::Value;

/// Evdev codes (linux/input-event-codes.h) of the keys tests press.
pub const KEY_ESC: u32 = 1;
pub const KEY_TAB: u32 = 15;
pub const KEY_ENTER: u32 = 28;
pub const KEY_A: u32 = 30;
pub const KEY_LEFTMETA: u32 = 125;

/// How long any wait in the harness may take before the test fails.
pub const WAIT: Duration = Duration::from_secs(20);

/// The compositor's background colour in the harness config (opaque RGB).
pub const BACKGROUND: [u8; 3] = [0x20, 0x20, 0x28];

/// A running compositor and its private folder.
pub struct Fixture {
    compositor: Compositor,
    dir: tempfile::TempDir,
    socket: PathBuf,
    config_text: String,
    /// The polkit agent's unique bus name, or why it did not start.
    polkit_agent: Result<String, String>,
}

/// The `assets/` folder of this checkout.
pub fn assets() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets")
}

/// Why a fixture's compositor did not start.
#[derive(Debug)]
pub enum StartFailure {
    /// An output spec (`WxH[*SCALE][@X,Y]`) was not understood: which, and why.
    Output(String),
    /// The config as written (the harness's tables and what was added) did not load.
    Config(String),
    /// The compositor refused to start with it (an output it cannot make, no socket).
    Compositor(String),
    /// The private folder or its config file could not be made.
    Io(String),
}

impl std::fmt::Display for StartFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StartFailure::Output(e)
            | StartFailure::Config(e)
            | StartFailure::Compositor(e)
            | StartFailure::Io(e) => f.write_str(e),
        }
    }
}

impl Fixture {
    /// A compositor with these outputs (`WxH[*S][@X,Y]`) and the shipped manifests.
    pub fn new(outputs: &[&str]) -> Fixture {
        Fixture::with_config(outputs, "")
    }

    /// Like [`Fixture::new`], with extra config text appended to the harness config. Voice is
    /// off (no model is loaded) and the haptic device is whatever evdev discovery finds; see
    /// [`Fixture::with_devices`].
    pub fn with_config(outputs: &[&str], extra: &str) -> Fixture {
        Fixture::with_devices(outputs, extra, None, None)
    }

    /// Like [`Fixture::with_config`], with this speech engine (e.g. over a model shared by
    /// every test of a binary) and this haptic backend (e.g. a recording one) put in through
    /// the compositor's test-only API. `None` keeps voice off and evdev discovery.
    pub fn with_devices(
        outputs: &[&str],
        extra: &str,
        speech: Option<pcp_speech::SpeechEngine>,
        haptics: Option<Box<dyn pcp_haptics::Haptics>>,
    ) -> Fixture {
        Fixture::build(outputs, extra, speech, haptics, None)
    }

    /// Like [`Fixture::with_devices`], keeping the gate's state (friction history, audit log,
    /// token key) in `state` instead of the private folder, so it outlives the fixture.
    pub fn build(
        outputs: &[&str],
        extra: &str,
        speech: Option<pcp_speech::SpeechEngine>,
        haptics: Option<Box<dyn pcp_haptics::Haptics>>,
        state: Option<&Path>,
    ) -> Fixture {
        Fixture::start(outputs, speech, haptics, state, |text| text + extra)
    }

    /// Like [`Fixture::new`], with `lines` added to the harness config's `[overlay]` table
    /// (e.g. `modal_for = ["system"]`).
    pub fn with_overlay(outputs: &[&str], lines: &str) -> Fixture {
        Fixture::with_edited_config(outputs, None, |text| {
            text.replacen("[overlay]\n", &format!("[overlay]\n{lines}\n"), 1)
        })
    }

    /// Like [`Fixture::with_devices`], with `lines` added to the harness config's `[overlay]`
    /// table (e.g. `extra_fonts = [...]`).
    pub fn with_devices_and_overlay(
        outputs: &[&str],
        lines: &str,
        speech: Option<pcp_speech::SpeechEngine>,
        haptics: Option<Box<dyn pcp_haptics::Haptics>>,
    ) -> Fixture {
        Fixture::start(outputs, speech, haptics, None, |text| {
            text.replacen("[overlay]\n", &format!("[overlay]\n{lines}\n"), 1)
        })
    }

    /// A compositor whose config file is the harness config (the shipped manifests, voice off)
    /// as `edit` changes it, keeping the gate's state in `state` when given (see
    /// [`Fixture::build`]).
    pub fn with_edited_config(
        outputs: &[&str],
        state: Option<&Path>,
        edit: impl FnOnce(String) -> String,
    ) -> Fixture {
        Fixture::start(outputs, None, None, state, edit)
    }

    /// The most general start: these outputs, speech engine and haptic backend (see
    /// [`Fixture::with_devices`]), the gate's state in `state` when given, and the harness config
    /// as `edit` changes it. Panics with [`Fixture::try_start`]'s error.
    pub fn start(
        outputs: &[&str],
        speech: Option<pcp_speech::SpeechEngine>,
        haptics: Option<Box<dyn pcp_haptics::Haptics>>,
        state: Option<&Path>,
        edit: impl FnOnce(String) -> String,
    ) -> Fixture {
        Fixture::try_start(outputs, speech, haptics, state, edit)
            .unwrap_or_else(|e| panic!("the fixture's compositor did not start: {e}"))
    }

    /// [`Fixture::start`], saying why the compositor could not start instead of panicking: for
    /// callers (`pcp-harness`) whose outputs and config come from a user.
    pub fn try_start(
        outputs: &[&str],
        speech: Option<pcp_speech::SpeechEngine>,
        haptics: Option<Box<dyn pcp_haptics::Haptics>>,
        state: Option<&Path>,
        edit: impl FnOnce(String) -> String,
    ) -> Result<Fixture, StartFailure> {
        let io = |what: &str, e: std::io::Error| StartFailure::Io(format!("{what}: {e}"));
        let dir = tempfile::tempdir().map_err(|e| io("cannot make a private folder", e))?;
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700))
            .map_err(|e| io("cannot make the private folder 0700", e))?;
        let config = dir.path().join("config.toml");
        let state = state.map_or_else(|| dir.path().join("state.sqlite3"), Path::to_path_buf);
        // With a speech engine the dialog names the (Korean) pack's words: a font with Hangul
        // beside the bundled one, which has none (the dialog turns voice off otherwise).
        let fonts = if speech.is_some() {
            format!("extra_fonts = [{HANGUL_FONT:?}]\n")
        } else {
            String::new()
        };
        let text = format!(
            "[manifests]\ndirs = [{:?}]\n[state]\npath = {:?}\n[overlay]\nsystem_fonts = false\n\
             {fonts}[speech]\nenabled = false\n[compositor]\nbackground = \"#202028\"\n",
            assets().join("capabilities.d"),
            state,
        );
        let text = edit(text);
        std::fs::write(&config, &text).map_err(|e| io("cannot write the config", e))?;
        let loaded =
            startup::load(Some(&config)).map_err(|e| StartFailure::Config(e.to_string()))?;
        let specs = outputs
            .iter()
            .map(|spec| {
                spec.parse()
                    .map_err(|e: SpecError| StartFailure::Output(e.to_string()))
            })
            .collect::<Result<_, _>>()?;
        let socket = dir.path().join("wayland-pcp");
        let mut options = startup::options(
            loaded,
            specs,
            Some(Socket::Path(socket.clone())),
            Some(config),
            true,
        )
        .map_err(|e| StartFailure::Config(e.to_string()))?;
        options.frame_timer = false;
        // Every harness compositor loading its own Vosk model would take seconds and gigabytes:
        // the harness config turns voice off (a test puts in a shared engine instead).
        if options.plugin.speech.enabled {
            return Err(StartFailure::Config(
                "[speech] enabled = true: the harness puts in a shared speech engine instead"
                    .into(),
            ));
        }
        let mut compositor =
            Compositor::new(options).map_err(|e| StartFailure::Compositor(e.to_string()))?;
        compositor.state.use_clock(Clock::frozen());
        // Headless: only a config with `[polkit] enabled = true` starts the agent.
        let polkit_agent = pcp_compositor::polkit::start(&mut compositor, false);
        let voice = speech.is_some();
        if voice {
            compositor.state.set_speech_engine(speech);
        }
        if let Some(h) = haptics {
            compositor.state.set_haptics(h);
        }
        let mut fx = Fixture {
            compositor,
            dir,
            socket,
            config_text: text,
            polkit_agent,
        };
        if voice {
            // The probe thread's first look at the microphone: until then voice is not offered.
            let start = Instant::now();
            while fx.voice_availability() == Err(pcp_speech::Unavailable::ModelLoading) {
                if start.elapsed() > WAIT {
                    return Err(StartFailure::Compositor(format!(
                        "voice was still loading its model after {} s",
                        WAIT.as_secs()
                    )));
                }
                fx.pump();
            }
        }
        Ok(fx)
    }

    fn state(&mut self) -> &mut State {
        &mut self.compositor.state
    }

    /// The compositor's clock runs on real time from now on (the demo's table is wall time).
    pub fn use_real_clock(&mut self) {
        self.state().use_clock(Clock::default());
    }

    /// Serves clients for one round of the event loop, waiting up to `timeout`.
    pub fn dispatch(&mut self, timeout: Duration) {
        self.compositor.dispatch(Some(timeout)).expect("event loop");
    }

    /// The gate: its prompts, its config, its audit log.
    pub fn gate(&mut self) -> &Gate {
        self.state().pcp().gate()
    }

    /// The plugin, to flush its audit log or verify a token.
    pub fn pcp_mut(&mut self) -> &mut pcp_plugin::Pcp {
        self.state().pcp()
    }

    /// Runs one command through the plugin's engine, as a front end does.
    pub fn run_command(&mut self, command: pcp_plugin::Command) {
        pcp_plugin::run(self.state(), command);
    }

    /// Whether the dialog is up.
    pub fn dialog_open(&mut self) -> bool {
        self.state().pcp().ui().is_open()
    }

    /// The output the dialog is on.
    pub fn dialog_output(&mut self) -> Option<usize> {
        self.state().pcp().ui().placement().map(|p| p.output)
    }

    /// Where the dialog is: its output and its global logical rectangle.
    pub fn dialog_placement(&mut self) -> Option<pcp_plugin::Placement> {
        self.state().pcp().ui().placement()
    }

    /// The dialog's global logical rectangle.
    pub fn dialog_rect(&mut self) -> Option<pcp_overlay::Rect> {
        self.state().pcp().ui().placement().map(|p| p.rect)
    }

    /// What the dialog shows live (voice, haptic, armed, countdown).
    /// The entry of the prompt shown (a polkit password field), as the dialog shows it.
    pub fn dialog_entry(&mut self) -> Option<pcp_plugin::ui::EntryView> {
        self.state().pcp().ui().entry()
    }

    /// The polkit agent's unique name on the system bus, when it was started (`[polkit]
    /// enabled = true`) and registered.
    pub fn polkit_agent(&self) -> Option<&str> {
        self.polkit_agent.as_deref().ok()
    }

    /// Why the polkit agent did not start (`[polkit] enabled` off, another agent…).
    pub fn polkit_agent_error(&self) -> Option<&str> {
        self.polkit_agent.as_ref().err().map(String::as_str)
    }

    pub fn dialog_live(&mut self) -> Option<LiveState> {
        self.state().pcp().ui().dialog().live().cloned()
    }

    /// Whether a screen reader has turned accessibility on for the compositor.
    pub fn screen_reader_running(&mut self) -> bool {
        self.state().pcp().ui().screen_reader_running()
    }

    /// The characters the dialog on screen draws as empty boxes.
    pub fn dialog_missing_glyphs(&mut self) -> Vec<char> {
        self.pcp_mut().ui_mut().drawn_missing_glyphs()
    }

    /// Every text the dialog on screen draws now (empty when none is up or drawn yet).
    pub fn dialog_texts(&mut self) -> Vec<String> {
        self.state().pcp().ui().dialog().drawn_texts()
    }

    /// The challenge word the dialog shows, if any.
    pub fn dialog_challenge(&mut self) -> Option<String> {
        self.state()
            .pcp()
            .ui()
            .dialog()
            .content()
            .and_then(|c| c.challenge.clone())
    }

    /// Whether the dialog has the keyboard.
    pub fn dialog_has_keyboard(&mut self) -> bool {
        self.state().pcp().ui().wants_keyboard()
    }

    /// How many actions assistive software asked for on the dialog and was refused, and how
    /// many times a stalled accessibility adapter was replaced.
    pub fn accessibility_counters(&mut self) -> (u64, u64) {
        self.state().pcp().ui().accessibility_counters()
    }

    /// What a screen reader reads now (`None`: the compositor's accessibility is off).
    pub fn accessible_reading(&mut self) -> Option<pcp_plugin::a11y::Reading> {
        self.state().pcp().ui().accessible_reading()
    }

    /// Whether the desktop asks for high contrast, as the compositor last heard from the
    /// settings portal.
    pub fn desktop_high_contrast(&mut self) -> bool {
        self.state().pcp().ui().desktop_high_contrast()
    }

    /// The palette the dialog draws with now.
    pub fn dialog_palette(&mut self) -> pcp_overlay::Palette {
        self.state().pcp().ui().dialog().palette().clone()
    }

    /// Whether the dialog up is modal.
    pub fn dialog_modal(&mut self) -> bool {
        self.state().pcp().ui().is_modal()
    }

    /// Whether the dialog shows its "Allow until logout" control.
    pub fn dialog_offers_session(&mut self) -> bool {
        pcp_plugin::refresh(self.state());
        let ui = self.compositor.state.pcp().ui();
        ui.dialog().content().is_some_and(|c| c.offer_session)
    }

    /// Whether a client's surface has the pointer (the seat's pointer focus).
    pub fn pointer_on_client(&mut self) -> bool {
        let pointer = self.state().seat().get_pointer();
        pointer.is_some_and(|p| p.current_focus().is_some())
    }

    /// Whether a client's surface has the keyboard (the seat's keyboard focus).
    pub fn keyboard_on_client(&mut self) -> bool {
        let keyboard = self.state().seat().get_keyboard();
        keyboard.is_some_and(|k| k.current_focus().is_some())
    }

    /// Presses and releases the default focus shortcut, Super+Return: the dialog takes the
    /// keyboard (or gives it back).
    pub fn press_focus_shortcut(&mut self) {
        self.inject_key(KEY_LEFTMETA, true);
        self.inject_key(KEY_ENTER, true);
        self.inject_key(KEY_ENTER, false);
        self.inject_key(KEY_LEFTMETA, false);
    }

    /// The number of waiting prompts the dialog's badge shows.
    pub fn queued(&mut self) -> u32 {
        self.state().pcp().ui().queued()
    }

    /// The keys whose release is being kept from clients.
    pub fn suppressed_keys(&mut self) -> Vec<u32> {
        self.state().pcp().ui().suppressed_keys().collect()
    }

    /// Voice as the compositor last learned it from its probe thread.
    pub fn voice_availability(&mut self) -> pcp_speech::Availability {
        self.state().pcp().ui().voice_availability().clone()
    }

    /// The capabilities of the last built-ins performed (at most
    /// `pcp_compositor::builtins::PERFORMED_KEPT`), oldest first.
    pub fn performed(&mut self) -> Vec<String> {
        self.state().performed().map(str::to_string).collect()
    }

    /// The text of the refused-reload notice on screen.
    pub fn notice_text(&mut self) -> Option<String> {
        self.state().notice_text().map(str::to_string)
    }

    /// How many windows are mapped.
    pub fn window_count(&mut self) -> usize {
        self.state().desktop().windows().count()
    }

    /// The top-left corner of the first window mapped.
    pub fn first_window_location(&mut self) -> Option<(i32, i32)> {
        let (_, at) = self.state().desktop().windows().next()?;
        Some((at.x, at.y))
    }

    /// The top-left corner of the window whose (declared) app id is `app_id`.
    pub fn window_location_of(&mut self, app_id: &str) -> Option<(i32, i32)> {
        let (_, at) = self
            .state()
            .desktop()
            .windows()
            .find(|(id, _)| id.as_deref() == Some(app_id))?;
        Some((at.x, at.y))
    }

    /// Draws every output now.
    pub fn render(&mut self) {
        self.state().render();
    }

    /// How many outputs there are.
    pub fn output_count(&mut self) -> usize {
        self.state().backend().outputs.len()
    }

    /// Output `index`'s size, scale and position.
    pub fn output_spec(&mut self, index: usize) -> OutputSpec {
        self.state().backend().outputs[index].spec
    }

    /// Output `index`'s name (`HEADLESS-n`).
    pub fn output_name(&mut self, index: usize) -> String {
        self.state().backend().outputs[index].output.name()
    }

    /// The focal point moves to (x, y) without the pointer (a tracker's hint).
    pub fn set_focus_hint(&mut self, x: f64, y: f64) {
        self.state().set_focus_hint(x, y);
    }

    /// The pointer moves to (x, y) in global logical coordinates.
    pub fn inject_pointer_motion(&mut self, x: f64, y: f64) {
        self.state().inject_pointer_motion(x, y);
    }

    /// The left button goes down or up where the pointer is.
    pub fn inject_pointer_button(&mut self, pressed: bool) {
        self.state().inject_pointer_button(pressed);
    }

    /// Moves the pointer to (x, y) and clicks there.
    pub fn inject_click(&mut self, x: f64, y: f64) {
        self.state().inject_click(x, y);
    }

    pub fn inject_touch_down(&mut self, x: f64, y: f64) {
        self.state().inject_touch_down(x, y);
    }

    pub fn inject_touch_up(&mut self) {
        self.state().inject_touch_up();
    }

    /// A key (evdev code) goes down or up.
    pub fn inject_key(&mut self, code: u32, pressed: bool) {
        self.state().inject_key(code, pressed);
    }

    /// Unplugs output `index`; later outputs move down one index. Returns its name.
    pub fn unplug_output(&mut self, index: usize) -> Result<String, BackendError> {
        self.state().unplug_output(index)
    }

    /// Unplugs the output named `name`.
    pub fn unplug_output_named(&mut self, name: &str) -> Result<String, BackendError> {
        self.state().unplug_output_named(name)
    }

    /// Plugs in a headless output of `spec`; returns its index.
    pub fn plug_output(&mut self, spec: &str) -> Result<usize, BackendError> {
        self.state().plug_output(spec)
    }

    /// Output `index` takes `mode` (`WxH`) at its place, as when its display's preferred mode
    /// changes.
    pub fn change_output_mode(&mut self, index: usize, mode: &str) -> Result<(), BackendError> {
        self.state().reconfigure_output(index, mode)
    }

    /// The seat now has `answering` devices that can press the dialog's controls.
    pub fn input_devices_changed(&mut self, answering: usize) {
        self.state().input_devices_changed(answering);
    }

    /// Reads the config file again, as the compositor does when it changes.
    pub fn reload_config(&mut self) {
        self.state().reload_config();
    }

    /// The private runtime folder (`XDG_RUNTIME_DIR` for child processes).
    pub fn runtime_dir(&self) -> &Path {
        self.dir.path()
    }

    /// The config file the compositor watches.
    pub fn config_path(&self) -> PathBuf {
        self.dir.path().join("config.toml")
    }

    /// The text the fixture wrote to the config file (to append changes to).
    pub fn config_text(&self) -> &str {
        &self.config_text
    }

    pub fn socket_path(&self) -> PathBuf {
        self.socket.clone()
    }

    /// One round of the event loop (up to 5 ms).
    pub fn pump(&mut self) {
        self.compositor
            .dispatch(Some(Duration::from_millis(5)))
            .expect("event loop");
    }

    /// Pumps until `cond` holds; panics after [`WAIT`].
    pub fn pump_until(&mut self, what: &str, mut cond: impl FnMut(&mut Fixture) -> bool) {
        let start = Instant::now();
        while !cond(self) {
            assert!(start.elapsed() < WAIT, "timed out waiting for {what}");
            self.pump();
        }
    }

    /// A command with this compositor's `WAYLAND_DISPLAY` and `XDG_RUNTIME_DIR`.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = Command::new(program);
        c.env("XDG_RUNTIME_DIR", self.dir.path())
            .env("WAYLAND_DISPLAY", &self.socket)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        c
    }

    /// Runs a client process to its end while the compositor serves it.
    pub fn run(&mut self, mut command: Command) -> Output {
        let mut child = command.spawn().expect("spawn client");
        self.pump_until("the client to exit", |_| {
            matches!(child.try_wait(), Ok(Some(_)))
        });
        child.wait_with_output().expect("client output")
    }

    /// Starts a client process that keeps running (e.g. `weston-simple-shm`).
    pub fn spawn(&mut self, mut command: Command) -> Child {
        command.stdout(Stdio::null()).stderr(Stdio::null());
        command.spawn().expect("spawn client")
    }

    /// Submits an intent from a new connection on its own thread; read its events with
    /// [`Fixture::next_event`]. The connection closes after the intent's final event.
    pub fn submit(&mut self, submission: Submission) -> AsyncIntent {
        let path = self.socket.clone();
        AsyncIntent::start(path, true, move |c| {
            let h = c.submit(&submission)?;
            Ok(vec![h])
        })
    }

    /// Runs `f` on a new connection on its own thread; events of every intent it submits arrive
    /// through [`Fixture::next_event`] until the connection ends.
    pub fn client(
        &mut self,
        f: impl FnOnce(&mut IntentClient) -> Result<Vec<pcp_protocol::client::Handle>, ClientError>
        + Send
        + 'static,
    ) -> AsyncIntent {
        AsyncIntent::start(self.socket.clone(), false, f)
    }

    /// Pumps until `client` reports its next event (or the end of its connection).
    pub fn next_event(&mut self, client: &AsyncIntent) -> Result<IntentEvent, ClientError> {
        let start = Instant::now();
        loop {
            match client.events.try_recv() {
                Ok((at, e)) => {
                    client.last_event_at.set(Some(at));
                    return e;
                }
                Err(TryRecvError::Empty) => {}
                Err(TryRecvError::Disconnected) => {
                    return Err(ClientError::Io("the client thread ended".into()));
                }
            }
            assert!(
                start.elapsed() < WAIT,
                "timed out waiting for a client event"
            );
            self.pump();
        }
    }

    /// Pumps until the next final decision of `client`.
    pub fn decision(&mut self, client: &AsyncIntent) -> Decision {
        loop {
            match self.next_event(client).expect("client event") {
                IntentEvent::Final { decision, .. } => return decision,
                IntentEvent::Pending { .. } => {}
            }
        }
    }

    /// Pumps until `client` reports `pending`; returns the threshold and modalities.
    pub fn pending(&mut self, client: &AsyncIntent) -> (String, Vec<String>) {
        match self.next_event(client).expect("client event") {
            IntentEvent::Pending {
                threshold,
                modalities,
                ..
            } => (threshold, modalities),
            other => panic!("expected pending, got {other:?}"),
        }
    }

    /// Draws every output now and returns output `index`'s pixels.
    pub fn capture(&mut self, index: usize) -> Capture {
        pcp_plugin::refresh(self.state());
        self.state().render();
        self.compositor
            .state
            .backend()
            .capture(index)
            .expect("capture")
    }

    /// Writes output `index` as `<target tmp>/captures/<name>.png` and returns the path.
    pub fn save_png(&mut self, index: usize, name: &str) -> PathBuf {
        let capture = self.capture(index);
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/pcp-captures");
        std::fs::create_dir_all(&dir).expect("capture dir");
        let path = dir.join(format!("{name}.png"));
        capture.write_png(&path).expect("write png");
        path
    }

    /// The centre of a dialog control in global logical coordinates, as last drawn.
    pub fn control_centre(&mut self, control: Control) -> (f64, f64) {
        pcp_plugin::refresh(self.state());
        let ui = self.compositor.state.pcp().ui();
        let placement = ui.placement().expect("the dialog is up");
        let [x, y, w, h] = ui
            .dialog()
            .control_bounds(control)
            .expect("the control is drawn");
        (
            f64::from(placement.rect.x) + x + w / 2.0,
            f64::from(placement.rect.y) + y + h / 2.0,
        )
    }

    /// The centre of a live row of the dialog in global logical coordinates, as last drawn
    /// (`None`: the dialog does not have that row).
    pub fn row_centre(&mut self, row: pcp_overlay::Row) -> Option<(f64, f64)> {
        pcp_plugin::refresh(self.state());
        let ui = self.compositor.state.pcp().ui();
        let placement = ui.placement()?;
        let [x, y, w, h] = ui.dialog().row_bounds(row)?;
        Some((
            f64::from(placement.rect.x) + x + w / 2.0,
            f64::from(placement.rect.y) + y + h / 2.0,
        ))
    }

    /// The dialog's own pixels as drawn for its output (premultiplied RGBA, physical size).
    pub fn dialog_pixels(&mut self) -> (u32, u32, Vec<u8>) {
        pcp_plugin::refresh(self.state());
        self.state()
            .pcp()
            .ui_mut()
            .pixels()
            .expect("the dialog is up")
    }

    /// Who the dialog says asks, as shown now.
    pub fn dialog_requester(&mut self) -> pcp_overlay::Requester {
        pcp_plugin::refresh(self.state());
        let ui = self.compositor.state.pcp().ui();
        ui.dialog()
            .content()
            .expect("the dialog is up")
            .requester
            .clone()
    }

    /// Everything the dialog shows now (what, on what, steps, extra parameters, who asks).
    pub fn dialog_content(&mut self) -> pcp_overlay::DialogContent {
        pcp_plugin::refresh(self.state());
        let ui = self.compositor.state.pcp().ui();
        ui.dialog().content().expect("the dialog is up").clone()
    }

    /// The seconds the dialog counts down from now (as last synced).
    pub fn seconds_left(&mut self) -> Option<u32> {
        pcp_plugin::refresh(self.state());
        self.dialog_live().and_then(|l| l.seconds_left)
    }

    /// Clicks a dialog control with the injected pointer.
    pub fn click(&mut self, control: Control) {
        let (x, y) = self.control_centre(control);
        self.state().inject_click(x, y);
    }

    /// Whether the shown prompt has an approving answer through `modality`.
    pub fn answered(&mut self, modality: pcp_gate::Modality) -> bool {
        self.gate().active().is_some_and(|p| p.answered(modality))
    }

    /// Holds a dialog control down with the injected pointer for `ms` on the compositor's clock,
    /// then lets go (a press-and-hold).
    pub fn hold(&mut self, control: Control, ms: i64) {
        let (x, y) = self.control_centre(control);
        self.state().inject_pointer_motion(x, y);
        self.state().inject_pointer_button(true);
        self.advance_clock(ms);
        self.state().inject_pointer_button(false);
    }

    /// Moves the compositor's (and so the gate's and the guard's) clock forward.
    pub fn advance_clock(&mut self, ms: i64) {
        self.state().advance_clock(ms);
    }

    /// Serves clients for `time` of wall time (for a compositor on the real clock).
    pub fn wait(&mut self, time: Duration) {
        let start = Instant::now();
        while start.elapsed() < time {
            self.pump();
        }
    }
}

/// A haptic backend the caller keeps a handle on (to read what was played, or to unplug it)
/// while the compositor owns it.
#[derive(Clone)]
pub struct SharedHaptics(pub std::rc::Rc<std::cell::RefCell<pcp_haptics::RecordingHaptics>>);

impl SharedHaptics {
    pub fn new(backend: pcp_haptics::RecordingHaptics) -> SharedHaptics {
        SharedHaptics(std::rc::Rc::new(std::cell::RefCell::new(backend)))
    }
}

impl pcp_haptics::Haptics for SharedHaptics {
    fn availability(&self) -> pcp_haptics::Availability {
        self.0.borrow().availability()
    }

    fn start_cue(&mut self) -> Result<Duration, pcp_haptics::HapticsError> {
        self.0.borrow_mut().start_cue()
    }

    fn stop_cue(&mut self) -> Result<(), pcp_haptics::HapticsError> {
        self.0.borrow_mut().stop_cue()
    }
}

/// A protocol client running on its own thread. One made by [`Fixture::submit`] closes its
/// connection after its intent's final event; one made by [`Fixture::client`] reads events until
/// the connection ends.
pub struct AsyncIntent {
    events: Receiver<(Instant, Result<IntentEvent, ClientError>)>,
    last_event_at: std::cell::Cell<Option<Instant>>,
    _thread: JoinHandle<()>,
}

impl AsyncIntent {
    fn start(
        path: PathBuf,
        close_after_finals: bool,
        f: impl FnOnce(&mut IntentClient) -> Result<Vec<pcp_protocol::client::Handle>, ClientError>
        + Send
        + 'static,
    ) -> AsyncIntent {
        let (tx, rx) = mpsc::channel();
        let thread = std::thread::spawn(move || {
            let send = |e| tx.send((Instant::now(), e)).is_ok();
            let mut client = match IntentClient::connect_to(&path) {
                Ok(c) => c,
                Err(e) => {
                    send(Err(e));
                    return;
                }
            };
            let mut open = match f(&mut client) {
                Ok(handles) if close_after_finals => handles.len(),
                Ok(_) => usize::MAX,
                Err(e) => {
                    send(Err(e));
                    return;
                }
            };
            while open > 0 {
                let event = client.next_event();
                let end = event.is_err();
                if matches!(event, Ok(IntentEvent::Final { .. })) {
                    open -= 1;
                }
                if !send(event) || end {
                    return;
                }
            }
        });
        AsyncIntent {
            events: rx,
            last_event_at: std::cell::Cell::new(None),
            _thread: thread,
        }
    }

    /// When the client received the event [`Fixture::next_event`] last returned.
    pub fn last_event_at(&self) -> Option<Instant> {
        self.last_event_at.get()
    }
}

/// A font with Hangul (Debian `fonts-nanum`, which `cargo xtask setup` installs), for the Korean
/// phrase pack's words.
pub const HANGUL_FONT: &str = "/usr/share/fonts/truetype/nanum/NanumGothic.ttf";

/// The environment that points ALSA's default PCM at files (assets/alsa/pcp-test.conf): capture
/// reads `capture` (raw samples), playback appends to `playback`. Pass it to a process with
/// `Command::envs`, or set it in this process (tests/voice.rs, under a lock) before the
/// compositor's speech engine probes or opens the device: ALSA reads it when a PCM opens.
pub fn alsa_file_env(capture: &Path, playback: &Path) -> Vec<(String, std::ffi::OsString)> {
    let mut config = std::ffi::OsString::from("/usr/share/alsa/alsa.conf:");
    config.push(assets().join("alsa/pcp-test.conf"));
    vec![
        ("ALSA_CONFIG_PATH".into(), config),
        ("PCP_ALSA_CAPTURE_FILE".into(), capture.into()),
        ("PCP_ALSA_PLAYBACK_FILE".into(), playback.into()),
    ]
}

/// A submission of `capability` with `params`.
pub fn intent(capability: &str, params: Value) -> Submission {
    Submission {
        capability: capability.to_string(),
        params,
        target: None,
        steps: Vec::new(),
    }
}

/// Whether a captured pixel is the background (within a small tolerance).
pub fn is_background(px: [u8; 4]) -> bool {
    px[..3]
        .iter()
        .zip(BACKGROUND)
        .all(|(a, b)| a.abs_diff(b) <= 2)
}
