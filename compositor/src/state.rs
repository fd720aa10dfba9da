//! The reference compositor's state — the Smithay protocol states, the seat, the desktop
//! ([`crate::desktop`]), the backend, the plugin ([`pcp_plugin::Pcp`], embedded exactly as any
//! compositor embeds it), the pointer and focal point ([`crate::pointer`]), frame pacing
//! ([`crate::frames`]), the config in force and the injected clock — and the event loop that
//! drives it.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use calloop::generic::Generic;
use calloop::timer::{TimeoutAction, Timer};
use calloop::{EventLoop, Interest, LoopHandle, Mode, PostAction};
use pcp_gate::Gate;
use pcp_plugin::{ConfirmUi, Pcp, UiOptions, UiTiming};
use smithay::desktop::Space;
use smithay::input::{Seat, SeatState};
use smithay::utils::Point;
use smithay::wayland::compositor::CompositorState;
use smithay::wayland::cursor_shape::CursorShapeManagerState;
use smithay::wayland::fractional_scale::FractionalScaleManagerState;
use smithay::wayland::idle_inhibit::IdleInhibitManagerState;
use smithay::wayland::idle_notify::IdleNotifierState;
use smithay::wayland::output::OutputManagerState;
use smithay::wayland::presentation::PresentationState;
use smithay::wayland::security_context::SecurityContextState;
use smithay::wayland::selection::data_device::DataDeviceState;
use smithay::wayland::selection::primary_selection::PrimarySelectionState;
use smithay::wayland::session_lock::SessionLockManagerState;
use smithay::wayland::shell::wlr_layer::WlrLayerShellState;
use smithay::wayland::shell::xdg::XdgShellState;
use smithay::wayland::shell::xdg::decoration::XdgDecorationState;
use smithay::wayland::shm::ShmState;
use smithay::wayland::viewporter::ViewporterState;
use smithay::wayland::xdg_activation::XdgActivationState;
use wayland_server::{Display, DisplayHandle, ListeningSocket};

use crate::backend::{Backend, BackendKind};
use crate::config::{CompositorConfig, OutputSpec, ReferenceSections};
use crate::desktop::Desktop;
use crate::frames::Frames;
use crate::handlers::ClientState;
use crate::notice::Notice;
use crate::pointer::Pointer;

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

pub use crate::clock::Clock;

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
    /// `[polkit]`: read when the agent starts ([`crate::polkit::start`]).
    pub polkit: crate::polkit::PolkitConfig,
    /// `[overlay]`, `[speech]` (disabled: no model is loaded) and `[haptics]`.
    pub plugin: pcp_config::PluginSections,
    /// Whether a seat input device can answer prompts (false: every ask is denied
    /// `confirmation_unavailable`, fail closed).
    pub input_available: bool,
    /// Draw on a timer (the binary); the harness draws when it asks.
    pub frame_timer: bool,
    /// The config file to watch for changes.
    pub config_path: Option<PathBuf>,
    /// The policy in the files, to propose once the compositor runs, when it differs from the
    /// one last approved (the sections above are then the approved ones).
    pub policy: Option<pcp_config::Proposed>,
}

/// The event loop and the state it drives.
pub struct Compositor {
    pub event_loop: EventLoop<'static, State>,
    pub state: State,
    /// The socket clients connect to (what `WAYLAND_DISPLAY` names).
    pub socket_name: Option<String>,
}

/// The Smithay protocol states the reference compositor serves.
pub struct Protocols {
    pub compositor: CompositorState,
    pub xdg_shell: XdgShellState,
    pub layer_shell: WlrLayerShellState,
    pub shm: ShmState,
    pub data_device: DataDeviceState,
    pub primary_selection: PrimarySelectionState,
    pub seat: SeatState<State>,
    pub output_manager: OutputManagerState,
    /// `wp_security_context_v1`: sandbox engines make listeners whose clients are named by the
    /// sandbox and see no privileged global.
    pub security_context: SecurityContextState,
    /// `ext_session_lock_manager_v1`: screen lockers; privileged (hidden from sandboxes).
    pub session_lock: SessionLockManagerState,
    /// `zxdg_decoration_manager_v1`: always client-side (no borders are drawn here).
    pub decoration: XdgDecorationState,
    pub viewporter: ViewporterState,
    pub fractional_scale: FractionalScaleManagerState,
    /// `xdg_activation_v1`: tokens from a recent input event of the focused client.
    pub activation: XdgActivationState,
    /// `wp_presentation`: when frames were shown, by CLOCK_MONOTONIC.
    pub presentation: PresentationState,
    /// `ext_idle_notifier_v1`: idle daemons; privileged (hidden from sandboxes).
    pub idle_notifier: IdleNotifierState<State>,
    pub idle_inhibit: IdleInhibitManagerState,
    pub cursor_shape: CursorShapeManagerState,
}

/// What the config file says and where it is, and the notice of a refused reload.
pub struct Settings {
    pub config: CompositorConfig,
    /// `[polkit]` as the session started: the agent reads it once, when it starts.
    pub polkit: crate::polkit::PolkitConfig,
    pub path: Option<PathBuf>,
    pub notice: Notice,
    /// The config file as last looked at, to tell a change from nothing.
    seen: Option<ConfigStamp>,
}

/// Everything the reference compositor knows.
pub struct State {
    pub(crate) dh: DisplayHandle,
    pub(crate) loop_handle: LoopHandle<'static, State>,
    pub(crate) clock: Clock,
    pub(crate) protocols: Protocols,
    pub(crate) seat: Seat<State>,
    /// The windows, popups, grabs and lock under the dialog.
    pub(crate) desktop: Desktop,
    pub(crate) backend: Backend,
    /// The plugin: the gate, the protocol and the confirmation UI.
    pub(crate) pcp: Pcp,
    /// The pointer, its cursor, and the focal point.
    pub(crate) pointer: Pointer,
    pub(crate) settings: Settings,
    /// When the next frame is drawn.
    pub(crate) frames: Frames,
    /// Where the dialog was last said to be (see `log_placement`).
    logged_placement: Option<pcp_plugin::Placement>,
    /// Cleared when the session ends (logout, a signal, the nested window closed).
    pub(crate) running: bool,
    /// The capabilities of the last [`crate::builtins::PERFORMED_KEPT`] built-ins performed,
    /// oldest first, for logs and tests (the audit log has every one, with its params): bounded,
    /// so a client asking for routine built-ins in a loop grows nothing.
    pub(crate) performed: std::collections::VecDeque<String>,
}

/// What tells a changed config file: modification time, length, mode, owner.
type ConfigStamp = (SystemTime, u64, u32, u32);

/// Reloads the config file when it changes: told by an inotify watch on its folder, so an idle
/// compositor does not wake up to look; where no watch can be set, or once the folder is gone
/// (deleted or moved away), the file is checked every `reload_check_ms` until a watch can be
/// set again. `reload_check_ms = 0` turns reloading off.
fn watch_config(state: &mut State) -> Result<(), StartError> {
    let Some(path) = state.settings.path.clone() else {
        return Ok(());
    };
    if state.settings.config.reload_check_ms == 0 {
        return Ok(());
    }
    state.settings.seen = state.config_stamp();
    match crate::watch::FileWatch::new(&path) {
        Ok(watch) => watch_config_folder(state, watch),
        Err(e) => {
            tracing::warn!(
                "cannot watch {} for changes ({e}): checking it every {} ms",
                path.display(),
                state.settings.config.reload_check_ms
            );
            poll_config(state)
        }
    }
    .map_err(StartError::EventLoop)
}

/// Reloads the config file if it differs from when it was last looked at.
fn look_at_config(state: &mut State) {
    let now = state.config_stamp();
    if now != state.settings.seen {
        state.settings.seen = now;
        state.reload_config();
    }
}

/// Puts `watch` on the loop: a change looks at the file; a watch gone with its folder gives way
/// to polling.
fn watch_config_folder(state: &mut State, watch: crate::watch::FileWatch) -> Result<(), String> {
    state
        .loop_handle
        .insert_source(
            Generic::new(watch, Interest::READ, Mode::Level),
            |_, watch, state| {
                let changes = watch.changes();
                if changes.file {
                    look_at_config(state);
                }
                if !changes.watch_gone {
                    return Ok(PostAction::Continue);
                }
                tracing::warn!(
                    "the folder of the config file went away: checking the file every {} ms \
                     until it can be watched again",
                    state.settings.config.reload_check_ms
                );
                if let Err(e) = poll_config(state) {
                    // Without a watch or a timer a changed config would go unnoticed until the
                    // next start, which checks it: say so rather than keep a dead watch.
                    tracing::error!("config changes are not noticed until restart: {e}");
                }
                Ok(PostAction::Remove)
            },
        )
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// Looks at the config file every `reload_check_ms` and tries to watch it again each time; the
/// timer ends once a watch is set.
fn poll_config(state: &mut State) -> Result<(), String> {
    let every = |state: &State| {
        Duration::from_millis(u64::from(state.settings.config.reload_check_ms.max(1)))
    };
    let first = every(state);
    state
        .loop_handle
        .insert_source(Timer::from_duration(first), move |_, _, state| {
            let watch = state
                .settings
                .path
                .as_deref()
                .and_then(|path| crate::watch::FileWatch::new(path).ok());
            // Looked at after the watch is set, so a change in between is not missed.
            look_at_config(state);
            if let Some(watch) = watch {
                match watch_config_folder(state, watch) {
                    Ok(()) => {
                        tracing::info!("the config file is watched again");
                        return TimeoutAction::Drop;
                    }
                    Err(e) => tracing::warn!("cannot watch the config file again: {e}"),
                }
            }
            TimeoutAction::ToDuration(every(state))
        })
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// The listening socket as an event source: each new client is inserted with its data.
fn listen(socket: &Socket, handle: &LoopHandle<'static, State>) -> Result<String, StartError> {
    let bound = match socket {
        Socket::Name(name) => ListeningSocket::bind(name),
        Socket::Path(path) => ListeningSocket::bind_absolute(path.clone()),
    }
    .map_err(|e| StartError::Socket {
        name: socket.to_string(),
        message: e.to_string(),
    })?;
    handle
        .insert_source(
            Generic::new(bound, Interest::READ, Mode::Level),
            |_, socket, state: &mut State| {
                loop {
                    match socket.accept() {
                        Ok(Some(stream)) => {
                            let data = Arc::new(ClientState::connected(&stream, None));
                            if let Err(e) = state.dh.insert_client(stream, data) {
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
    Ok(socket.to_string())
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
            Some(socket) => Some(listen(socket, &loop_handle)?),
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
        let config = options.config;
        let (cursor_theme, cursor_size) = (config.cursor_theme.clone(), config.cursor_size);
        let plugin = options.plugin;
        let mut ui = ConfirmUi::new(UiOptions {
            overlay: plugin.overlay.clone(),
            speech: pcp_plugin::start_voice(plugin.speech.clone()),
            haptics: Box::new(pcp_haptics::EvdevHaptics::discover(&plugin.haptics)),
            haptics_config: plugin.haptics.clone(),
            timing: UiTiming {
                voice_poll_ms: config.voice_poll_ms,
                device_probe_ms: config.device_probe_ms,
                touch_dpi: config.touch_dpi,
                frame_interval_ms: config.frame_interval_ms,
            },
        })
        .map_err(|e| StartError::Overlay(e.to_string()))?;
        ui.set_input_devices(usize::from(options.input_available));
        #[cfg(feature = "a11y")]
        if config.accessibility {
            ui.enable_accessibility();
        }
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
        let mut state = State {
            protocols: Protocols {
                compositor: CompositorState::new::<State>(&dh),
                xdg_shell: XdgShellState::new::<State>(&dh),
                layer_shell: WlrLayerShellState::new_with_filter::<State, _>(
                    &dh,
                    crate::handlers::may_see_privileged,
                ),
                shm: ShmState::new::<State>(&dh, vec![]),
                data_device: DataDeviceState::new::<State>(&dh),
                primary_selection: PrimarySelectionState::new::<State>(&dh),
                seat: seat_state,
                output_manager: OutputManagerState::new_with_xdg_output::<State>(&dh),
                security_context: SecurityContextState::new::<State, _>(
                    &dh,
                    crate::handlers::may_see_privileged,
                ),
                session_lock: SessionLockManagerState::new::<State, _>(
                    &dh,
                    crate::handlers::may_see_privileged,
                ),
                decoration: XdgDecorationState::new::<State>(&dh),
                viewporter: ViewporterState::new::<State>(&dh),
                fractional_scale: FractionalScaleManagerState::new::<State>(&dh),
                activation: XdgActivationState::new::<State>(&dh),
                presentation: PresentationState::new::<State>(
                    &dh,
                    crate::handlers::presentation::PRESENTATION_CLOCK,
                ),
                idle_notifier: IdleNotifierState::new(&dh, loop_handle.clone()),
                idle_inhibit: IdleInhibitManagerState::new::<State>(&dh),
                cursor_shape: CursorShapeManagerState::new::<State>(&dh),
            },
            pcp: Pcp::new::<State>(&dh, options.gate, ui, plugin),
            seat,
            desktop: Desktop::new(space),
            backend,
            settings: Settings {
                config,
                polkit: options.polkit,
                path: options.config_path,
                notice: Notice::new().map_err(|e| StartError::Overlay(e.to_string()))?,
                seen: None,
            },
            clock: Clock::default(),
            pointer: Pointer::new(centre, &cursor_theme, cursor_size),
            logged_placement: None,
            frames: Frames::default(),
            running: true,
            performed: std::collections::VecDeque::new(),
            dh,
            loop_handle: loop_handle.clone(),
        };
        // The first frame draws the outputs' background.
        state.frames.damage();
        state.pcp.use_event_loop(loop_handle.clone());
        // The desktop's high-contrast preference, from the settings portal when one answers.
        #[cfg(feature = "a11y")]
        if let Err(e) = pcp_plugin::desktop::follow_contrast(&loop_handle) {
            tracing::warn!("{e}: the config's theme stays");
        }
        pcp_plugin::refresh(&mut state);
        // Outputs and input devices are known now: a changed policy found at the start can be
        // asked about (or waits, proposed again, until something can answer).
        if let Some(proposal) = pcp_plugin::policy::start(&mut state, options.policy) {
            tracing::info!("the config's policy at start: {proposal:?}");
        }
        if options.frame_timer {
            state.frames.pace(Duration::from_millis(u64::from(
                state.settings.config.frame_interval_ms,
            )));
            watch_config(&mut state)?;
        }
        Ok(Compositor {
            event_loop,
            state,
            socket_name,
        })
    }

    /// Runs one round of the event loop: client requests, timers, then flushes replies.
    /// Idle means asleep: with nothing to draw and no timer near, this waits for the next
    /// client request or device event (or `timeout`).
    pub fn dispatch(&mut self, timeout: Option<Duration>) -> std::io::Result<()> {
        self.event_loop
            .dispatch(timeout, &mut self.state)
            .map_err(std::io::Error::other)?;
        // Whatever this round changed is drawn by the frame timer, armed only now.
        self.state.schedule_frame();
        self.state.dh.flush_clients().map_err(std::io::Error::other)
    }
}

impl State {
    /// Draws every output now and sends frame callbacks.
    pub fn render(&mut self) {
        self.log_placement();
        let bg = self
            .settings
            .config
            .background_rgb()
            .unwrap_or([0.12, 0.12, 0.15]);
        // While locked each output shows only its lock surface (and the dialog above it).
        let lock_views: Vec<_> = self
            .backend
            .outputs
            .iter()
            .map(|vo| {
                self.desktop.is_locked().then(|| {
                    self.desktop
                        .lock_surface_of(&vo.output.name())
                        .map(|s| s.wl_surface().clone())
                })
            })
            .collect();
        let pointer = self.pointer.location().to_i32_round();
        let icon = self.desktop.drag_icon();
        // The headless backend draws no pointer: its captures show only what clients and the
        // dialog draw.
        let cursor = if self.backend.kind() == crate::backend::BackendKind::Headless {
            None
        } else {
            let client_focus = self
                .seat
                .get_pointer()
                .is_some_and(|p| p.current_focus().is_some());
            self.pointer.cursor(client_focus)
        };
        for (vo, view) in self.backend.outputs.iter_mut().zip(lock_views) {
            vo.locked = view;
            let (w, h) = vo.spec.logical_size();
            let on_it = pointer.x >= vo.spec.x
                && pointer.x < vo.spec.x + w
                && pointer.y >= vo.spec.y
                && pointer.y < vo.spec.y + h;
            vo.drag_icon = icon.clone().filter(|_| on_it).map(|s| (s, pointer));
            vo.cursor = cursor.clone().filter(|_| on_it);
        }
        let notice = &mut self.settings.notice;
        for vo in &self.backend.outputs {
            notice.prepare(vo.spec.logical_size().0, vo.spec.scale);
        }
        let drawn = {
            // Front first: the dialog above everything, the notice above the windows.
            let mut layers: Vec<pcp_plugin::PlacedOverlay<'_>> =
                self.pcp.ui().placed().into_iter().collect();
            for (i, vo) in self.backend.outputs.iter().enumerate() {
                if let Some(n) = notice.get(vo.spec.logical_size().0, vo.spec.scale) {
                    layers.push(pcp_plugin::PlacedOverlay {
                        output: i,
                        location: (vo.spec.x, vo.spec.y).into(),
                        logical_size: n.logical,
                        buffer_size: n.size,
                        buffer: &n.buffer,
                    });
                }
            }
            self.backend.render(&self.desktop.space, &layers, bg)
        };
        if let Err(e) = drawn {
            // A frame that cannot be drawn cannot show a prompt: fail closed.
            tracing::error!("rendering failed: {e}");
            if let Some(prompt) = self.pcp.ui().shown() {
                let lost = pcp_plugin::PromptEvent {
                    prompt,
                    event: pcp_gate::ModalityEvent::Lost(pcp_gate::Modality::Visual),
                };
                pcp_plugin::run(self, pcp_plugin::Command::Events(vec![lost]));
            }
        } else {
            self.send_presentation_feedback();
        }
        self.desktop.popups.cleanup();
        let now = Duration::from_millis(self.clock.now_ms().max(0) as u64);
        for vo in &self.backend.outputs {
            if let Some(Some(surface)) = &vo.locked {
                smithay::desktop::utils::send_frames_surface_tree(
                    surface,
                    &vo.output,
                    now,
                    Some(Duration::ZERO),
                    |_, _| Some(vo.output.clone()),
                );
                continue;
            }
            for window in self.desktop.space.elements() {
                window.send_frame(&vo.output, now, Some(Duration::ZERO), |_, _| {
                    Some(vo.output.clone())
                });
            }
        }
    }

    /// The config file's modification time, length, mode and owner, to notice changes (a
    /// mode or owner change matters to the trust checks).
    fn config_stamp(&self) -> Option<ConfigStamp> {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata(self.settings.path.as_ref()?).ok()?;
        Some((meta.modified().ok()?, meta.len(), meta.mode(), meta.uid()))
    }

    /// Reads the config file again. A file that does not load is refused: the previous config
    /// stays in use and a notice on every output says so (with the error) until a good one
    /// loads. One that loads is proposed to the gate as a new policy
    /// ([`pcp_plugin::policy::propose`]): it applies at once when nothing in it lowers
    /// protection, else only once the user approves the policy-change prompt; until then every
    /// section stays as it is (`apply_policy_sections` runs when it applies). Outputs
    /// are not re-created; the overlay's settings apply from the next prompt.
    pub fn reload_config(&mut self) {
        let Some(path) = self.settings.path.clone() else {
            return;
        };
        match crate::startup::load(Some(&path)) {
            Ok(loaded) => {
                self.settings.notice.set(None);
                let proposal = pcp_plugin::policy::propose(self, loaded.into_proposal());
                tracing::info!("reloaded {}: {proposal:?}", path.display());
            }
            Err(e) => {
                tracing::warn!("config reload refused, keeping the previous config: {e}");
                let text = format!("{} {e}", self.settings.config.reload_error_notice);
                self.settings.notice.set(Some(text));
            }
        }
        self.frames.damage();
        pcp_plugin::refresh(self);
    }

    /// A new policy is in force: the compositor's own sections as they were proposed and
    /// approved (not as the file may be now). The plugin has applied its own already.
    pub(crate) fn apply_policy_sections(&mut self) {
        let Some(sections) = self.pcp.take_applied_sections::<ReferenceSections>() else {
            return;
        };
        self.settings.config = sections.compositor;
        // The agent already running keeps the `[polkit]` it started with.
        self.settings.polkit = sections.polkit;
        self.frames.damage();
    }

    /// Sets the focal point from a source other than the pointer or touch (a spatial tracker,
    /// or a test): the dialog moves to the output nearest it.
    pub fn set_focus_hint(&mut self, x: f64, y: f64) {
        self.pointer.set_focal_point(Point::from((x, y)));
        if self.pcp.ui().is_open() {
            pcp_plugin::refresh(self);
        }
    }

    /// The dialog's outputs as the plugin sees them, and the focal point.
    pub(crate) fn surroundings(&self) -> pcp_plugin::Surroundings {
        pcp_plugin::Surroundings {
            outputs: self.backend.overlay_outputs(),
            focus: {
                let focal = self.pointer.focal_point();
                pcp_overlay::Point {
                    x: focal.x,
                    y: focal.y,
                }
            },
        }
    }
}

/// What the compositor shows its embedder, its binary and its tests.
impl State {
    /// The outputs and how they are drawn and captured.
    pub fn backend(&self) -> &Backend {
        &self.backend
    }

    /// The seat: its pointer, keyboard and touch, and which surfaces they are on.
    pub fn seat(&self) -> &Seat<State> {
        &self.seat
    }

    /// The windows, popups and lock under the dialog.
    pub fn desktop(&self) -> &Desktop {
        &self.desktop
    }

    /// The pointer and the focal point.
    pub fn pointer(&self) -> &Pointer {
        &self.pointer
    }

    /// Whether the session goes on (false once it ended: logout, a signal, the nested window
    /// closed).
    pub fn is_running(&self) -> bool {
        self.running
    }

    /// Stops the compositor: whoever runs its event loop leaves it (a termination signal).
    pub fn stop(&mut self) {
        self.running = false;
    }

    /// Closes, at the end of a session, the parts that hold data or threads — the gate (its
    /// audit and state are written out), voice and haptics, then the outputs and the seat —
    /// logging how long each took, so a session manager that gave up waiting finds in the log
    /// where the exit waited. Returns the rest (clients, windows, textures, the renderer holding
    /// the GPU's file), which has nothing to write out: a process about to exit can leave it to
    /// the kernel rather than drop it (in the VM session that teardown did not end within 30 s).
    pub fn close_for_exit(self) -> impl Sized {
        let State {
            pcp,
            backend,
            dh,
            loop_handle,
            clock,
            protocols,
            seat,
            desktop,
            pointer,
            settings,
            frames,
            logged_placement,
            running,
            performed,
        } = self;
        let started = std::time::Instant::now();
        drop(pcp);
        tracing::info!(
            ms = started.elapsed().as_millis() as u64,
            "closed the gate, voice and haptics"
        );
        let started = std::time::Instant::now();
        drop(backend);
        tracing::info!(
            ms = started.elapsed().as_millis() as u64,
            "closed the outputs and the seat"
        );
        (
            dh,
            loop_handle,
            clock,
            protocols,
            seat,
            desktop,
            pointer,
            settings,
            frames,
            logged_placement,
            running,
            performed,
        )
    }

    /// The capabilities of the last built-ins performed (at most
    /// [`crate::builtins::PERFORMED_KEPT`]), oldest first.
    pub fn performed(&self) -> impl Iterator<Item = &str> {
        self.performed.iter().map(String::as_str)
    }

    /// The text of the notice on screen (a refused config reload or policy), if any.
    pub fn notice_text(&self) -> Option<&str> {
        self.settings.notice.text()
    }
}

impl State {
    /// Says where the dialog now is and where its controls are (global logical pixels), once
    /// each time it appears or moves: what a person sees on which display, and what a scripted
    /// session (`cargo xtask session-test`) aims its touches at.
    fn log_placement(&mut self) {
        let placed = self.pcp.ui().placement();
        if placed == self.logged_placement {
            return;
        }
        self.logged_placement = placed;
        let Some(placed) = placed else {
            return;
        };
        let name = self
            .backend
            .outputs
            .get(placed.output)
            .map_or_else(String::new, |o| o.output.name());
        let dialog = self.pcp.ui().dialog();
        let global = |b: Option<[f64; 4]>| {
            b.map_or_else(
                || "none".to_string(),
                |[x, y, w, h]| {
                    let (x, y) = (f64::from(placed.rect.x) + x, f64::from(placed.rect.y) + y);
                    format!("{x:.0},{y:.0} {w:.0}x{h:.0}")
                },
            )
        };
        let r = placed.rect;
        tracing::info!(
            "dialog placed on {name} at {},{} {}x{}; approve {}; deny {}",
            r.x,
            r.y,
            r.w,
            r.h,
            global(dialog.control_bounds(pcp_overlay::Control::Approve)),
            global(dialog.control_bounds(pcp_overlay::Control::Deny)),
        );
    }
}
