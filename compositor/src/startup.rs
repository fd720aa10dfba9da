//! Starting the compositor: a config file and flags into [`Options`], then [`Options`] into a
//! [`Compositor`] with its display, seat, backend, confirmation UI and plugin. The file is read
//! once, as one typed
//! document ([`LoadedConfig`]: the gate's sections, the plugin's and this compositor's own,
//! [`ReferenceSections`]) by the same function `pcp-compositor validate` and `pcpctl validate`
//! call. The gate opens with the policy last approved ([`pcp_config::start`]); a policy in the
//! files that differs from it is proposed once the compositor runs
//! ([`pcp_plugin::policy::start`]), and until then the approved policy is in force, every
//! section included.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use calloop::generic::Generic;
use calloop::{EventLoop, Interest, LoopHandle, Mode, PostAction};
use pcp_plugin::{ConfirmUi, Pcp, UiOptions, UiTiming};
use smithay::desktop::Space;
use smithay::input::{Seat, SeatState};
use smithay::utils::Point;
use wayland_server::{Display, DisplayHandle, ListeningSocket};

use crate::backend::{Backend, BackendKind};
use crate::config::{CompositorConfig, OutputSpec, ReferenceSections};
use crate::desktop::Desktop;
use crate::frames::Frames;
use crate::handlers::ClientState;
use crate::notice::Notice;
use crate::pointer::Pointer;
use crate::state::{Clock, Compositor, Options, Protocols, Settings, Socket, StartError, State};

/// The whole config file as this compositor reads it.
pub type LoadedConfig = pcp_config::Config<ReferenceSections>;

/// Why the config could not be turned into a running compositor.
#[derive(Debug, thiserror::Error)]
pub enum ConfigLoadError {
    #[error("{0}")]
    Config(#[from] pcp_gate::ConfigError),
    #[error("{path}: {source}")]
    Compositor {
        path: String,
        source: crate::config::SpecError,
    },
    /// Its words carry the store's own (not as a source too: a report would say them twice).
    #[error("cannot open the state store: {0}")]
    Store(pcp_gate::StoreError),
}

impl From<pcp_gate::StoreError> for ConfigLoadError {
    fn from(e: pcp_gate::StoreError) -> Self {
        ConfigLoadError::Store(e)
    }
}

/// Reads and checks the whole config file (or the built-in defaults when `path` is `None` and
/// the default file does not exist).
pub fn load(path: Option<&Path>) -> Result<LoadedConfig, ConfigLoadError> {
    Ok(LoadedConfig::load(path)?)
}

/// The options for a compositor from a loaded config: `outputs` from flags win over the file's.
/// The gate opens with the policy last approved; when the files differ from it, the sections in
/// force are the approved ones too, and [`Options::policy`] carries the files' policy to
/// propose.
pub fn options(
    loaded: LoadedConfig,
    outputs: Vec<OutputSpec>,
    socket: Option<Socket>,
    config_path: Option<PathBuf>,
    input_available: bool,
) -> Result<Options, ConfigLoadError> {
    let now = crate::state::Clock::default().now_ms();
    let started = pcp_config::start(loaded, now)?;
    let compositor = started.host.compositor;
    let polkit = started.host.polkit;
    let outputs = if outputs.is_empty() {
        compositor
            .output_specs()
            .map_err(|source| ConfigLoadError::Compositor {
                path: config_path
                    .as_ref()
                    .map_or_else(String::new, |p| p.display().to_string()),
                source,
            })?
    } else {
        outputs
    };
    Ok(Options {
        outputs,
        socket,
        gate: started.gate,
        policy: started.proposal,
        config: compositor,
        polkit,
        plugin: started.plugin,
        input_available,
        frame_timer: true,
        config_path,
    })
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
        dispatch_clients(display, &loop_handle)?;
        let (seat_state, seat) = new_seat(&dh)?;
        let mut space = Space::default();
        let backend = start_backend(
            kind,
            &dh,
            &options.outputs,
            &mut space,
            &loop_handle,
            socket_name.as_deref(),
        )?;
        let config = options.config;
        let (cursor_theme, cursor_size) = (config.cursor_theme.clone(), config.cursor_size);
        let plugin = options.plugin;
        let ui = start_ui(&plugin, &config, options.input_available)?;
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
            protocols: Protocols::new(&dh, seat_state, &loop_handle),
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
            crate::reload::watch_config(&mut state)?;
        }
        Ok(Compositor {
            event_loop,
            state,
            socket_name,
        })
    }
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

/// Puts the display on the loop: client requests are dispatched as they arrive.
fn dispatch_clients(
    display: Display<State>,
    loop_handle: &LoopHandle<'static, State>,
) -> Result<(), StartError> {
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
        .map(|_| ())
        .map_err(|e| StartError::EventLoop(e.to_string()))
}

/// `seat0` with a keyboard, a pointer and touch.
fn new_seat(dh: &DisplayHandle) -> Result<(SeatState<State>, Seat<State>), StartError> {
    let mut seat_state = SeatState::new();
    let mut seat = seat_state.new_wl_seat(dh, "seat0");
    seat.add_keyboard(Default::default(), 400, 25)
        .map_err(|e| StartError::Seat(e.to_string()))?;
    seat.add_pointer();
    seat.add_touch();
    Ok((seat_state, seat))
}

/// The backend of `kind` with its outputs mapped in `space`; `socket_name` titles the nested
/// window.
#[cfg_attr(
    not(feature = "winit"),
    allow(
        unused_variables,
        reason = "the nested window's title and the loop are used only by backends not built"
    )
)]
fn start_backend(
    kind: BackendKind,
    dh: &DisplayHandle,
    outputs: &[OutputSpec],
    space: &mut Space<smithay::desktop::Window>,
    loop_handle: &LoopHandle<'static, State>,
    socket_name: Option<&str>,
) -> Result<Backend, StartError> {
    match kind {
        BackendKind::Headless => Backend::headless::<State>(dh, outputs, space),
        #[cfg(feature = "winit")]
        BackendKind::Winit => {
            let title = match socket_name {
                Some(name) => format!("pcp-compositor (WAYLAND_DISPLAY={name})"),
                None => "pcp-compositor".to_string(),
            };
            crate::winit::start(dh, outputs, space, loop_handle, &title)
        }
        #[cfg(not(feature = "winit"))]
        BackendKind::Winit => Err(crate::backend::BackendError::WinitNotBuilt),
        #[cfg(feature = "udev")]
        BackendKind::Udev => crate::udev::start(dh, space, loop_handle),
        #[cfg(not(feature = "udev"))]
        BackendKind::Udev => Err(crate::backend::BackendError::UdevNotBuilt),
    }
    .map_err(|e| StartError::Backend(e.to_string()))
}

/// The confirmation UI with the plugin's sections, its timing from `[compositor]`, and
/// whether a seat device can answer.
fn start_ui(
    plugin: &pcp_config::PluginSections,
    config: &CompositorConfig,
    input_available: bool,
) -> Result<ConfirmUi, StartError> {
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
    ui.set_input_devices(usize::from(input_available));
    #[cfg(feature = "a11y")]
    if config.accessibility {
        ui.enable_accessibility();
    }
    Ok(ui)
}
