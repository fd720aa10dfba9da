//! The reference compositor's state: the Smithay protocol states (compositor, xdg-shell, shm,
//! seat, outputs), the window space, the intent manager, the backend (headless or nested), the
//! focal point and the injected clock, and the event loop that drives them.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use calloop::generic::Generic;
use calloop::timer::{TimeoutAction, Timer};
use calloop::{EventLoop, Interest, LoopHandle, Mode, PostAction, RegistrationToken};
use pcp_gate::{Availability, Gate};
use smithay::desktop::{Space, Window};
use smithay::input::{Seat, SeatState};
use smithay::utils::{Logical, Point};
use smithay::wayland::compositor::{CompositorClientState, CompositorState};
use smithay::wayland::output::OutputManagerState;
use smithay::wayland::shell::wlr_layer::WlrLayerShellState;
use smithay::wayland::shell::xdg::XdgShellState;
use smithay::wayland::shm::ShmState;
use wayland_server::backend::{ClientData, ClientId, DisconnectReason};
use wayland_server::{Display, DisplayHandle, ListeningSocket};

use crate::backend::{Backend, BackendKind};
use crate::config::{CompositorConfig, OutputSpec};
use crate::intent::IntentManagerState;
use crate::notice::Notice;
use crate::overlay_ui::{OverlayUi, PlacedOverlay};

/// Why the compositor could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("cannot create the Wayland display: {0}")]
    Display(String),
    #[error("cannot create the event loop: {0}")]
    EventLoop(String),
    #[error("cannot listen on socket `{name}`: {message}")]
    Socket { name: String, message: String },
    #[error("cannot set up the seat: {0}")]
    Seat(String),
    #[error("cannot set up the backend: {0}")]
    Backend(String),
    #[error("cannot set up the overlay: {0}")]
    Overlay(String),
    #[error("at least one output is needed")]
    NoOutputs,
}

/// Per-client data Smithay needs.
#[derive(Default)]
pub struct ClientState {
    pub compositor: CompositorClientState,
}

impl ClientData for ClientState {
    fn initialized(&self, _client_id: ClientId) {}
    fn disconnected(&self, _client_id: ClientId, _reason: DisconnectReason) {}
}

/// The compositor's clock: Unix milliseconds, plus an offset tests can advance. A frozen clock
/// (harness only) stands still between advances, so guard and timeout tests never race real time.
#[derive(Debug, Clone, Copy, Default)]
pub struct Clock {
    offset_ms: i64,
    frozen_at: Option<i64>,
}

fn real_now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

impl Clock {
    pub fn now_ms(&self) -> i64 {
        self.frozen_at.unwrap_or_else(real_now_ms) + self.offset_ms
    }

    /// A clock stopped at the present moment; only [`Clock::advance`] moves it.
    #[cfg(feature = "test-harness")]
    pub fn frozen() -> Clock {
        Clock {
            offset_ms: 0,
            frozen_at: Some(real_now_ms()),
        }
    }

    /// Moves the clock forward (the harness uses it to reach timeouts without waiting).
    #[cfg(feature = "test-harness")]
    pub fn advance(&mut self, ms: i64) {
        self.offset_ms += ms.max(0);
    }
}

/// Where the listening socket is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Socket {
    /// A name in `$XDG_RUNTIME_DIR` (what `WAYLAND_DISPLAY` holds).
    Name(String),
    /// An absolute path (the harness uses its own private folder).
    Path(PathBuf),
}

impl std::fmt::Display for Socket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Socket::Name(n) => f.write_str(n),
            Socket::Path(p) => write!(f, "{}", p.display()),
        }
    }
}

/// How to start the compositor.
pub struct Options {
    pub outputs: Vec<OutputSpec>,
    /// Where clients connect; `None` for no socket (clients are inserted directly).
    pub socket: Option<Socket>,
    pub gate: Gate,
    pub config: CompositorConfig,
    pub overlay: pcp_overlay::Config,
    /// Whether a seat input device can answer prompts (false: every ask is denied
    /// `confirmation_unavailable`, fail closed).
    pub input_available: bool,
    /// Draw on a timer (the binary); the harness draws when it asks.
    pub frame_timer: bool,
    /// The config file to watch for changes.
    pub config_path: Option<PathBuf>,
    /// `[speech]`: voice confirmation (disabled: no model is loaded).
    pub speech: pcp_speech::Config,
    /// `[haptics]`: the force-feedback device and the double tap.
    pub haptics: pcp_haptics::Config,
}

/// The event loop and the state it drives.
pub struct Compositor {
    pub event_loop: EventLoop<'static, State>,
    pub state: State,
}

/// Everything the compositor knows.
pub struct State {
    pub dh: DisplayHandle,
    pub loop_handle: LoopHandle<'static, State>,
    pub clock: Clock,
    pub compositor_state: CompositorState,
    pub xdg_shell_state: XdgShellState,
    pub layer_shell_state: WlrLayerShellState,
    pub shm_state: ShmState,
    pub data_device_state: smithay::wayland::selection::data_device::DataDeviceState,
    pub seat_state: SeatState<State>,
    pub output_manager_state: OutputManagerState,
    pub space: Space<Window>,
    pub seat: Seat<State>,
    pub intents: IntentManagerState,
    pub backend: Backend,
    pub overlay: OverlayUi,
    /// The voice step: speech engine and the shown prompt's listener.
    pub voice: crate::voice::Voice,
    /// The haptic step: force-feedback backend and the shown prompt's cue.
    pub haptic: crate::haptic::HapticFlow,
    /// Whether a seat input device can answer prompts now (see
    /// [`State::input_devices_changed`]).
    pub input_available: bool,
    /// The notice of a refused config reload.
    pub notice: Notice,
    pub config: CompositorConfig,
    pub config_path: Option<PathBuf>,
    /// The focal point: the pointer, or the last touch, or the hint set for tests and spatial
    /// hardware. The overlay goes to the output nearest it.
    pub focus: Point<f64, Logical>,
    pub pointer: Point<f64, Logical>,
    /// Where the current touch point went down.
    pub last_touch: Option<Point<f64, Logical>>,
    /// Keys whose press the overlay took: their release is not sent to clients either.
    pub suppressed_keys: HashSet<u32>,
    /// When the user last interacted with the dialog without answering (Unix ms).
    pub last_activity_ms: i64,
    /// Set when the rendered picture may have changed.
    pub dirty: bool,
    pub running: bool,
    /// Built-in capabilities performed, in order (capability, params), for logs and tests.
    pub performed: Vec<(String, serde_json::Value)>,
    pub socket_name: Option<String>,
    deadline_timer: Option<RegistrationToken>,
    placed_windows: u32,
}

impl Compositor {
    /// Creates the display, the globals, the headless virtual outputs and the event loop.
    pub fn new(options: Options) -> Result<Compositor, StartError> {
        Compositor::with_backend(options, BackendKind::Headless)
    }

    /// Creates the display, the globals, the outputs of backend `kind` and the event loop.
    pub fn with_backend(options: Options, kind: BackendKind) -> Result<Compositor, StartError> {
        if options.outputs.is_empty() {
            return Err(StartError::NoOutputs);
        }
        let event_loop: EventLoop<'static, State> =
            EventLoop::try_new().map_err(|e| StartError::EventLoop(e.to_string()))?;
        let display: Display<State> =
            Display::new().map_err(|e| StartError::Display(e.to_string()))?;
        let dh = display.handle();
        let loop_handle = event_loop.handle();

        let socket_name = match &options.socket {
            Some(socket) => {
                let bound = match socket {
                    Socket::Name(name) => ListeningSocket::bind(name),
                    Socket::Path(path) => ListeningSocket::bind_absolute(path.clone()),
                }
                .map_err(|e| StartError::Socket {
                    name: socket.to_string(),
                    message: e.to_string(),
                })?;
                let name = socket.to_string();
                loop_handle
                    .insert_source(
                        Generic::new(bound, Interest::READ, Mode::Level),
                        |_, socket, state: &mut State| {
                            loop {
                                match socket.accept() {
                                    Ok(Some(stream)) => {
                                        if let Err(e) = state
                                            .dh
                                            .insert_client(stream, Arc::new(ClientState::default()))
                                        {
                                            tracing::warn!("a client could not be added: {e}");
                                        }
                                    }
                                    Ok(None) => break,
                                    Err(e) => {
                                        tracing::warn!("accepting a client failed: {e}");
                                        break;
                                    }
                                }
                            }
                            Ok(PostAction::Continue)
                        },
                    )
                    .map_err(|e| StartError::EventLoop(e.to_string()))?;
                Some(name)
            }
            None => None,
        };
        loop_handle
            .insert_source(
                Generic::new(display, Interest::READ, Mode::Level),
                |_, display, state: &mut State| {
                    // SAFETY: the display is not dropped while the loop holds it.
                    let display = unsafe { display.get_mut() };
                    if let Err(e) = display.dispatch_clients(state) {
                        tracing::error!("dispatching clients failed: {e}");
                    }
                    Ok(PostAction::Continue)
                },
            )
            .map_err(|e| StartError::EventLoop(e.to_string()))?;

        let mut seat_state = SeatState::new();
        let mut seat = seat_state.new_wl_seat(&dh, "seat0");
        seat.add_keyboard(Default::default(), 400, 25)
            .map_err(|e| StartError::Seat(e.to_string()))?;
        seat.add_pointer();
        seat.add_touch();

        let mut space = Space::default();
        let backend = match kind {
            BackendKind::Headless => Backend::headless::<State>(&dh, &options.outputs, &mut space),
            #[cfg(feature = "winit")]
            BackendKind::Winit => {
                let title = match &socket_name {
                    Some(name) => format!("pcp-compositor (WAYLAND_DISPLAY={name})"),
                    None => "pcp-compositor".to_string(),
                };
                crate::winit::start(&dh, &options.outputs, &mut space, &loop_handle, &title)
            }
            #[cfg(not(feature = "winit"))]
            BackendKind::Winit => Err(crate::backend::BackendError::WinitNotBuilt),
            #[cfg(feature = "udev")]
            BackendKind::Udev => crate::udev::start(&dh, &mut space, &loop_handle),
            #[cfg(not(feature = "udev"))]
            BackendKind::Udev => Err(crate::backend::BackendError::UdevNotBuilt),
        }
        .map_err(|e| StartError::Backend(e.to_string()))?;
        let mut gate = options.gate;
        gate.set_available(Availability {
            output: !backend.outputs.is_empty(),
            input: options.input_available,
            voice: false,
            haptic: false,
        });
        let voice = crate::voice::Voice::start(options.speech);
        let haptic = crate::haptic::HapticFlow::new(
            Box::new(pcp_haptics::EvdevHaptics::discover(&options.haptics)),
            options.haptics,
        );
        let overlay =
            OverlayUi::new(options.overlay).map_err(|e| StartError::Overlay(e.to_string()))?;
        // The udev backend's outputs are the connected displays, not the specs.
        let first = backend
            .outputs
            .first()
            .map_or(options.outputs[0], |o| o.spec);
        let (w, h) = first.logical_size();
        let centre = Point::from((
            f64::from(first.x) + f64::from(w) / 2.0,
            f64::from(first.y) + f64::from(h) / 2.0,
        ));
        let state = State {
            compositor_state: CompositorState::new::<State>(&dh),
            xdg_shell_state: XdgShellState::new::<State>(&dh),
            layer_shell_state: WlrLayerShellState::new::<State>(&dh),
            shm_state: ShmState::new::<State>(&dh, vec![]),
            data_device_state: smithay::wayland::selection::data_device::DataDeviceState::new::<
                State,
            >(&dh),
            output_manager_state: OutputManagerState::new_with_xdg_output::<State>(&dh),
            intents: IntentManagerState::new::<State>(&dh, gate),
            seat_state,
            seat,
            space,
            backend,
            overlay,
            voice,
            haptic,
            notice: Notice::new().map_err(|e| StartError::Overlay(e.to_string()))?,
            config: options.config,
            config_path: options.config_path,
            clock: Clock::default(),
            focus: centre,
            pointer: centre,
            last_touch: None,
            suppressed_keys: HashSet::new(),
            last_activity_ms: 0,
            dirty: true,
            running: true,
            input_available: options.input_available,
            performed: Vec::new(),
            socket_name,
            deadline_timer: None,
            placed_windows: 0,
            dh,
            loop_handle,
        };
        let mut compositor = Compositor { event_loop, state };
        compositor.state.refresh_availability();
        // Real (not gate-clock) time: listener events and device probes are about the hardware.
        let mut last_probe = real_now_ms();
        let poll = |state: &State| Duration::from_millis(u64::from(state.config.voice_poll_ms));
        compositor
            .event_loop
            .handle()
            .insert_source(
                Timer::from_duration(poll(&compositor.state)),
                move |_, _, state| {
                    state.poll_voice();
                    state.show_haptic_progress();
                    let now = real_now_ms();
                    if now - last_probe >= i64::from(state.config.device_probe_ms) {
                        last_probe = now;
                        state.refresh_availability();
                        state.check_voice_device();
                        state.check_haptic_device();
                    }
                    TimeoutAction::ToDuration(poll(state))
                },
            )
            .map_err(|e| StartError::EventLoop(e.to_string()))?;
        if options.frame_timer {
            let interval =
                Duration::from_millis(u64::from(compositor.state.config.frame_interval_ms));
            compositor
                .event_loop
                .handle()
                .insert_source(Timer::from_duration(interval), move |_, _, state| {
                    state.refresh();
                    TimeoutAction::ToDuration(interval)
                })
                .map_err(|e| StartError::EventLoop(e.to_string()))?;
        }
        let reload = compositor.state.config.reload_check_ms;
        if options.frame_timer && reload > 0 && compositor.state.config_path.is_some() {
            let interval = Duration::from_millis(u64::from(reload));
            let mut seen = compositor.state.config_stamp();
            compositor
                .event_loop
                .handle()
                .insert_source(Timer::from_duration(interval), move |_, _, state| {
                    let now = state.config_stamp();
                    if now != seen {
                        seen = now;
                        state.reload_config();
                    }
                    TimeoutAction::ToDuration(interval)
                })
                .map_err(|e| StartError::EventLoop(e.to_string()))?;
        }
        Ok(compositor)
    }

    /// Runs one round of the event loop: client requests, timers, then flushes replies.
    pub fn dispatch(&mut self, timeout: Option<Duration>) -> std::io::Result<()> {
        self.event_loop
            .dispatch(timeout, &mut self.state)
            .map_err(std::io::Error::other)?;
        self.state.dh.flush_clients().map_err(std::io::Error::other)
    }
}

impl State {
    /// Updates the overlay (countdown, guard, placement) and draws every output if needed.
    pub fn refresh(&mut self) {
        // Timeouts are also armed on their own timer; this commits buffered audit records that
        // are due even when nothing else happens.
        crate::intent::tick(self);
        self.sync_overlay();
        if self.dirty {
            self.dirty = false;
            self.render();
        }
    }

    /// Draws every output now and sends frame callbacks.
    pub fn render(&mut self) {
        let bg = self.config.background_rgb().unwrap_or([0.12, 0.12, 0.15]);
        for vo in &self.backend.outputs {
            self.notice.prepare(vo.spec.logical_size().0, vo.spec.scale);
        }
        // Front first: the dialog above everything, the notice above the windows.
        let mut layers: Vec<PlacedOverlay<'_>> = self.overlay.placed().into_iter().collect();
        for (i, vo) in self.backend.outputs.iter().enumerate() {
            if let Some(n) = self.notice.get(vo.spec.logical_size().0, vo.spec.scale) {
                layers.push(PlacedOverlay {
                    output: i,
                    location: (vo.spec.x, vo.spec.y).into(),
                    logical_size: n.logical,
                    buffer_size: n.size,
                    buffer: &n.buffer,
                });
            }
        }
        if let Err(e) = self.backend.render(&self.space, &layers, bg) {
            // A frame that cannot be drawn cannot show a prompt: fail closed.
            tracing::error!("rendering failed: {e}");
            if self.overlay.is_open() {
                crate::intent::respond(
                    self,
                    pcp_gate::ModalityEvent::Lost(pcp_gate::Modality::Visual),
                );
            }
        }
        let now = Duration::from_millis(self.clock.now_ms() as u64);
        for vo in &self.backend.outputs {
            for window in self.space.elements() {
                window.send_frame(&vo.output, now, Some(Duration::ZERO), |_, _| {
                    Some(vo.output.clone())
                });
            }
        }
    }

    /// The config file's modification time and length, to notice changes.
    fn config_stamp(&self) -> Option<(SystemTime, u64)> {
        let meta = std::fs::metadata(self.config_path.as_ref()?).ok()?;
        Some((meta.modified().ok()?, meta.len()))
    }

    /// Reads the config file again. A file that does not load is refused: the previous config
    /// stays in use and a notice on every output says so (with the error) until a good one loads.
    /// Outputs are not re-created; the overlay's settings apply from the next prompt.
    pub fn reload_config(&mut self) {
        let Some(path) = self.config_path.clone() else {
            return;
        };
        let refused = match crate::startup::load(Some(&path)) {
            Ok(loaded) => match self.intents.gate_mut().reload(loaded.gate) {
                Ok(()) => {
                    self.config = loaded.compositor;
                    if self.overlay.is_open() {
                        tracing::info!("the overlay settings apply from the next prompt");
                    } else {
                        match OverlayUi::new(loaded.overlay) {
                            Ok(o) => self.overlay = o,
                            Err(e) => tracing::warn!("the overlay settings were not applied: {e}"),
                        }
                    }
                    tracing::info!("reloaded {}", path.display());
                    None
                }
                Err(e) => Some(e.to_string()),
            },
            Err(e) => Some(e.to_string()),
        };
        if let Some(e) = &refused {
            tracing::warn!("config reload refused, keeping the previous config: {e}");
        }
        let text = refused.map(|e| format!("{} {e}", self.config.reload_error_notice));
        self.notice.set(text);
        self.dirty = true;
    }

    /// Tells the gate which modalities the hardware allows now: an output while any is left
    /// (none: the denying authorizer), input as set at start, microphone with model, and haptic
    /// device, probed now.
    pub fn refresh_availability(&mut self) {
        let mut available = self.intents.gate().available();
        available.output = !self.backend.outputs.is_empty();
        available.input = self.input_available;
        available.voice = self.voice.available();
        available.haptic = self.haptic.available();
        self.intents.gate_mut().set_available(available);
    }

    /// Starts or stops the voice listener and the haptic cue to match the shown prompt.
    pub(crate) fn sync_devices(&mut self) {
        self.sync_voice();
        self.sync_haptic();
    }

    /// Re-arms the timer for the gate's next deadline.
    pub(crate) fn schedule_deadline(&mut self) {
        if let Some(token) = self.deadline_timer.take() {
            self.loop_handle.remove(token);
        }
        let Some(at) = self.intents.next_deadline() else {
            return;
        };
        let wait = (at - self.clock.now_ms()).max(0) as u64;
        let result = self.loop_handle.insert_source(
            Timer::from_duration(Duration::from_millis(wait)),
            |_, _, state: &mut State| {
                state.deadline_timer = None;
                crate::intent::tick(state);
                TimeoutAction::Drop
            },
        );
        match result {
            Ok(token) => self.deadline_timer = Some(token),
            Err(e) => tracing::error!("cannot arm the prompt timer: {e}"),
        }
    }

    /// Sets the focal point from a source other than the pointer or touch (a spatial tracker,
    /// or a test): the overlay moves to the output nearest it.
    pub fn set_focus_hint(&mut self, x: f64, y: f64) {
        self.set_focal_point(Point::from((x, y)));
    }

    /// Where a new window goes: the output nearest the focal point, cascaded.
    pub(crate) fn place_new_window(&mut self, window: Window) {
        let index = self.backend.nearest_output(self.focus).unwrap_or(0);
        let (x, y) = self
            .backend
            .outputs
            .get(index)
            .map(|o| (o.spec.x, o.spec.y))
            .unwrap_or((0, 0));
        let step = 32 * (self.placed_windows % 8) as i32;
        self.placed_windows += 1;
        self.space.map_element(window, (x + step, y + step), true);
        self.dirty = true;
    }
}
