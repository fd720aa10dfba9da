//! The reference compositor's state — the Smithay protocol states, the seat, the desktop
//! ([`crate::desktop`]), the backend, the plugin ([`pcp_plugin::Pcp`], embedded exactly as any
//! compositor embeds it), the pointer and focal point ([`crate::pointer`]), frame pacing
//! ([`crate::frames`]), the config in force and the injected clock — and the event loop that
//! drives it.

use std::path::PathBuf;
use std::time::Duration;

use calloop::{EventLoop, LoopHandle};
use pcp_gate::Gate;
use pcp_plugin::Pcp;
use smithay::input::Seat;
use smithay::utils::Point;
use wayland_server::DisplayHandle;

use crate::backend::Backend;
use crate::config::{CompositorConfig, OutputSpec, ReferenceSections};
use crate::desktop::Desktop;
use crate::frames::Frames;
use crate::notice::Notice;
use crate::pointer::Pointer;
use crate::touch::TouchPoints;

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
pub use crate::protocols::Protocols;

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

/// What the config file says and where it is, and the notice of a refused reload.
pub struct Settings {
    pub config: CompositorConfig,
    /// `[polkit]` as the session started: the agent reads it once, when it starts.
    pub polkit: crate::polkit::PolkitConfig,
    pub path: Option<PathBuf>,
    pub notice: Notice,
    /// The config file as last looked at, to tell a change from nothing.
    pub(crate) seen: Option<crate::reload::ConfigStamp>,
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
    /// The touch points down now, and where each one's down went.
    pub(crate) touch: TouchPoints,
    pub(crate) settings: Settings,
    /// When the next frame is drawn.
    pub(crate) frames: Frames,
    /// How many of the seat's input devices can press the dialog's controls (the plugin reads
    /// it through `surroundings`).
    pub(crate) input_devices: usize,
    /// Where the dialog was last said to be (see `log_placement`).
    pub(crate) logged_placement: Option<pcp_plugin::Placement>,
    /// Cleared when the session ends (logout, a signal, the nested window closed).
    pub(crate) running: bool,
    /// The capabilities of the last [`crate::builtins::PERFORMED_KEPT`] built-ins performed,
    /// oldest first, for logs and tests (the audit log has every one, with its params): bounded,
    /// so a client asking for routine built-ins in a loop grows nothing.
    pub(crate) performed: std::collections::VecDeque<String>,
}

impl Compositor {
    /// Runs one round of the event loop: client requests, timers, then flushes replies.
    /// Idle means asleep: with nothing to draw and no timer near, this waits for the next
    /// client request or device event (or `timeout`).
    pub fn dispatch(&mut self, timeout: Option<Duration>) -> std::io::Result<()> {
        self.event_loop
            .dispatch(timeout, &mut self.state)
            .map_err(std::io::Error::other)?;
        // Whatever else this round changed under a resting pointer (the handlers that change
        // the scene already looked, before answering the next request).
        self.state.refocus_pointer();
        // Outputs, input devices and the focal point reach the plugin here, once a round.
        pcp_plugin::refresh(&mut self.state);
        // Whatever this round changed is drawn by the frame timer, armed only now.
        self.state.schedule_frame();
        self.state.dh.flush_clients().map_err(std::io::Error::other)
    }
}

impl State {
    /// Draws every output now and sends frame callbacks.
    pub fn render(&mut self) {
        self.log_placement();
        // Which outputs each window and layer surface is on (their wl_surface.enter and leave),
        // and layer surfaces gone since the last frame.
        self.desktop.space.refresh();
        for vo in &self.backend.outputs {
            smithay::desktop::layer_map_for_output(&vo.output).cleanup();
        }
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
            self.backend
                .render_or_overlays(&self.desktop.space, &layers, bg)
        };
        if let Ok(Some(e)) = &drawn {
            tracing::warn!("drawing the windows failed ({e}): the overlays alone were drawn");
        }
        if let Err(e) = drawn {
            // A frame that cannot be drawn cannot show a prompt: fail closed.
            tracing::error!("rendering failed: {e}");
            pcp_plugin::render_failed(self);
        } else {
            self.send_presentation_feedback();
        }
        self.desktop.popups.cleanup();
        self.send_frame_callbacks();
    }

    /// Tells every surface shown (windows, layer surfaces, lock surfaces, and their popups and
    /// subsurfaces) that a frame was drawn.
    fn send_frame_callbacks(&self) {
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
            // Panels and backgrounds (and their popups) draw by frame callbacks too.
            for layer in smithay::desktop::layer_map_for_output(&vo.output).layers() {
                layer.send_frame(&vo.output, now, Some(Duration::ZERO), |_, _| {
                    Some(vo.output.clone())
                });
            }
        }
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
        pcp_plugin::refresh(self);
    }

    /// The dialog's outputs as the plugin sees them, the focal point (the compositor keeps its
    /// own: it also places new windows there) and the input devices that can answer.
    pub(crate) fn surroundings(&self) -> pcp_plugin::Surroundings {
        let focal = self.pointer.focal_point();
        pcp_plugin::Surroundings {
            outputs: self.backend.overlay_outputs(),
            focus: Some(pcp_overlay::Point {
                x: focal.x,
                y: focal.y,
            }),
            input_devices: Some(self.input_devices),
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
            touch,
            settings,
            frames,
            input_devices: _,
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
            touch,
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
