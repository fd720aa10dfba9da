//! A minimal Smithay compositor that embeds pcp-confirm as `docs/embedding.md` tells, step by
//! step: one headless output drawn by pixman, xdg-shell windows, a seat. Standard input stands
//! in for the seat's devices (a real compositor feeds libinput or its host window through the
//! same calls); the config's `[speech]` and `[haptics]` sections drive the voice and haptic
//! steps, and `[embed]` is this compositor's own section. `reload` on standard input reads the
//! file again as a new policy.

use std::io::BufRead;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail};
use calloop::EventLoop;
use calloop::channel::{Event, channel};
use calloop::generic::Generic;
use calloop::{Interest, Mode, PostAction};
use pcp_config::{Config, Invalid, Protection, Section};
use pcp_overlay::Control;
use pcp_plugin::identity::ConnectionIdentity;
// Smithay's seat handles with the plugin's calls beside their own: `pointer.pcp_motion(…)`.
use pcp_plugin::input::{PcpKeyboard, PcpPointer, PcpTouch};
use pcp_plugin::{Effect, Pcp, PcpHandler, Run, Surroundings};
use serde::{Deserialize, Serialize};
use smithay::backend::allocator::Fourcc;
use smithay::backend::input::{ButtonState, KeyState};
use smithay::backend::renderer::damage::OutputDamageTracker;
use smithay::backend::renderer::pixman::PixmanRenderer;
use smithay::backend::renderer::{Bind, Offscreen};
use smithay::desktop::{Space, Window, WindowSurfaceType};
use smithay::input::keyboard::FilterResult;
use smithay::input::pointer::{ButtonEvent, MotionEvent};
use smithay::input::touch::{DownEvent, MotionEvent as TouchMotionEvent, UpEvent};
use smithay::input::{Seat, SeatHandler, SeatState};
use smithay::output::{Mode as OutputMode, Output, PhysicalProperties, Scale, Subpixel};
use smithay::reexports::pixman::Image;
use smithay::utils::{Logical, Point, SERIAL_COUNTER, Serial, Transform};
use smithay::wayland::buffer::BufferHandler;
use smithay::wayland::compositor::{CompositorClientState, CompositorHandler, CompositorState};
use smithay::wayland::output::OutputHandler;
use smithay::wayland::shell::xdg::{
    PopupSurface, PositionerState, ToplevelSurface, XdgShellHandler, XdgShellState,
};
use smithay::wayland::shm::{ShmHandler, ShmState};
use wayland_server::backend::{ClientData, ClientId, DisconnectReason};
use wayland_server::protocol::{wl_buffer, wl_seat, wl_surface::WlSurface};
use wayland_server::{Client, Display, DisplayHandle, ListeningSocket};

const WIDTH: i32 = 1280;
const HEIGHT: i32 = 800;
/// `BTN_LEFT` from linux/input-event-codes.h.
const BTN_LEFT: u32 = 0x110;

struct App {
    display: DisplayHandle,
    compositor: CompositorState,
    xdg: XdgShellState,
    shm: ShmState,
    seat_state: SeatState<App>,
    seat: Seat<App>,
    space: Space<Window>,
    output: Output,
    pcp: Pcp,
    /// This compositor's own section of the config, as the policy in force has it.
    own: EmbedSection,
    /// The config file, read again on `reload`.
    config_path: std::path::PathBuf,
    dirty: bool,
    running: bool,
}

// ---- Its own config section, beside the plugin's. ----

/// `[embed]`: this compositor's own section of the config file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct EmbedSection {
    /// The grey behind the windows, 0 (black) to 1 (white).
    background: f32,
    /// Printed when a policy with this section takes effect.
    greeting: String,
}

impl Default for EmbedSection {
    fn default() -> Self {
        EmbedSection {
            background: 0.1,
            greeting: "embed: config in force".into(),
        }
    }
}

impl Section for EmbedSection {
    const NAME: &'static str = "embed";
    // Every key needs an order (a key without one counts as lowering protection when it
    // changes); neither of these can mislead the user about a prompt.
    const PROTECTION: &'static [(&'static str, Protection)] = &[
        ("background", Protection::Unrelated),
        ("greeting", Protection::Unrelated),
    ];

    fn validate(&self) -> Result<(), Invalid> {
        if (0.0..=1.0).contains(&self.background) {
            Ok(())
        } else {
            Err(Invalid::new("background", "must be 0 to 1"))
        }
    }
}

pcp_config::sections! {
    /// Every section of the config file that is this compositor's own.
    struct EmbedSections {
        embed: EmbedSection,
    }
}

// ---- The glue: what the plugin needs from its host. ----

impl PcpHandler for App {
    fn pcp(&mut self) -> &mut Pcp {
        &mut self.pcp
    }

    fn connection<'c>(&self, client: &'c Client) -> Option<&'c ConnectionIdentity> {
        client.get_data::<ClientState>()?.connection.as_ref()
    }

    fn now_ms(&self) -> i64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64)
    }

    fn surroundings(&self) -> Surroundings {
        // The outputs of the space; the focal point follows the seat's input.
        Surroundings::of_space(&self.space)
    }

    fn execute(&mut self, run: &Run) -> Result<(), String> {
        match run.capability.as_str() {
            // The plugin ends the session's approvals once this returns (`Effect::EndSession`).
            "session.logout" => Ok(()),
            other => Err(format!("{other} is not supported here")),
        }
    }

    fn effect(&mut self, effect: Effect) {
        match effect {
            Effect::PolicySettled { applied, reason } => {
                // Applied: the plugin has applied its own sections (the dialog's, voice's and
                // haptics') as the user approved them; ours come back as we proposed them.
                if let Some(own) = self.pcp.take_applied_sections::<EmbedSections>() {
                    self.own = own.embed;
                    pcp_cli::outln!("{}", self.own.greeting);
                    self.dirty = true;
                }
                pcp_cli::outln!(
                    "policy {}: {reason}",
                    if applied { "applied" } else { "not applied" }
                );
            }
            Effect::KeyboardFocus => {
                // The dialog takes the keyboard from the window that had it, and gives it back.
                if let Some(keyboard) = self.seat.get_keyboard() {
                    keyboard.pcp_focus(self, SERIAL_COUNTER.next_serial());
                }
            }
            Effect::DialogShown(_) | Effect::Damage => {
                // A window the dialog now covers loses the pointer (one it uncovered gets it).
                if let Some(pointer) = self.seat.get_pointer() {
                    let under = self.surface_under(pointer.current_location());
                    pointer.pcp_after_dialog(self, under);
                }
                self.dirty = true;
            }
            Effect::EndSession => self.running = false,
        }
    }
}

impl App {
    /// The window surface under `p`, for the seat's focus.
    fn surface_under(&self, p: Point<f64, Logical>) -> Option<(WlSurface, Point<f64, Logical>)> {
        let (window, loc) = self.space.element_under(p)?;
        let (surface, at) = window.surface_under(p - loc.to_f64(), WindowSurfaceType::ALL)?;
        Some((surface, (at + loc).to_f64()))
    }
}

pcp_plugin::delegate_pcp!(App);

/// One line of standard input, standing in for a seat device. Each event goes through the
/// plugin's call in place of Smithay's own (`pointer.pcp_motion` for `pointer.motion`): the
/// dialog sees it first, and what it does not take goes on to the window under it.
fn seat_input(app: &mut App, line: &str) -> Result<()> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = |i: usize| -> Result<Point<f64, Logical>> {
        let word = |i: usize| -> Result<f64> { Ok(words.get(i).context("a coordinate")?.parse()?) };
        Ok((word(i)?, word(i + 1)?).into())
    };
    // A line has no event time: 0 is from no clock, so the event is dated now. A seat passes
    // its events' own times (the double tap is judged by them).
    let time = 0;
    match words.first().copied() {
        Some("click") => {
            let location = at(1)?;
            let pointer = app.seat.get_pointer().context("the seat has a pointer")?;
            let under = app.surface_under(location);
            let motion = MotionEvent {
                location,
                serial: SERIAL_COUNTER.next_serial(),
                time,
            };
            pointer.pcp_motion(app, under, &motion);
            for state in [ButtonState::Pressed, ButtonState::Released] {
                let button = ButtonEvent {
                    serial: SERIAL_COUNTER.next_serial(),
                    time,
                    button: BTN_LEFT,
                    state,
                };
                pointer.pcp_button(app, &button);
            }
            pointer.frame(app);
        }
        Some("touch") => {
            // touch SLOT X Y [X Y]…: finger SLOT goes down at the first point, moves through
            // the others and lifts. It stays with whatever it went down on.
            let slot = Some(words.get(1).context("a slot")?.parse()?).into();
            let touch = app.seat.get_touch().context("the seat has touch")?;
            let location = at(2)?;
            let under = app.surface_under(location);
            let down = DownEvent {
                slot,
                location,
                serial: SERIAL_COUNTER.next_serial(),
                time,
            };
            touch.pcp_down(app, under, &down);
            for i in (4..words.len()).step_by(2) {
                let location = at(i)?;
                let under = app.surface_under(location);
                let motion = TouchMotionEvent {
                    slot,
                    location,
                    time,
                };
                touch.pcp_motion(app, under, &motion);
            }
            let up = UpEvent {
                slot,
                serial: SERIAL_COUNTER.next_serial(),
                time,
            };
            touch.pcp_up(app, &up);
            touch.frame(app);
        }
        Some("key") => {
            // key CODE: an evdev key code pressed and released. Smithay's keycodes are xkb
            // keycodes (evdev + 8), as its backends give them.
            let code: u32 = words.get(1).context("a key code")?.parse()?;
            let keyboard = app.seat.get_keyboard().context("the seat has a keyboard")?;
            for state in [KeyState::Pressed, KeyState::Released] {
                let serial = SERIAL_COUNTER.next_serial();
                // Our own shortcuts would go in this filter; the dialog's keys never reach it.
                keyboard.pcp_input(app, (code + 8).into(), state, serial, time, |_, _, _| {
                    FilterResult::<()>::Forward
                });
            }
        }
        Some("where") => {
            // Where a control is, so a script can press it: "approve X Y".
            let ui = app.pcp.ui();
            for (name, control) in [("approve", Control::Approve), ("deny", Control::Deny)] {
                if let (Some(p), Some([x, y, w, h])) =
                    (ui.placement(), ui.dialog().control_bounds(control))
                {
                    let (cx, cy) = (
                        f64::from(p.rect.x) + x + w / 2.0,
                        f64::from(p.rect.y) + y + h / 2.0,
                    );
                    pcp_cli::outln!("{name} {cx} {cy}");
                }
            }
        }
        Some("reload") => {
            // The file as a new policy: a change that lowers protection waits for the user.
            let config = Config::<EmbedSections>::load(Some(&app.config_path))?;
            let proposal = pcp_plugin::policy::propose(app, config.into_proposal());
            pcp_cli::outln!("the reloaded config's policy: {proposal:?}");
        }
        Some("quit") => app.running = false,
        _ => bail!(
            "unknown input `{line}` (click X Y, touch SLOT X Y [X Y]…, key CODE, where, reload, \
             quit)"
        ),
    }
    Ok(())
}

/// Draws the output when something changed: the windows, and the dialog's element in front.
fn render(
    app: &mut App,
    renderer: &mut PixmanRenderer,
    image: &mut Image<'static, 'static>,
    damage: &mut OutputDamageTracker,
) -> Result<()> {
    app.dirty = false;
    // The dialog's elements for this output, in front of everything else it draws.
    let dialog = app
        .pcp
        .ui()
        .render_elements_on(renderer, &app.space, &app.output)?;
    let mut target = renderer.bind(image)?;
    smithay::desktop::space::render_output(
        &app.output,
        renderer,
        &mut target,
        1.0,
        0,
        [&app.space],
        &dialog,
        damage,
        {
            let grey = app.own.background;
            [grey, grey, grey, 1.0]
        },
    )
    .map_err(|e| anyhow::anyhow!("{e:?}"))?;
    Ok(())
}

fn main() -> Result<()> {
    let path = std::env::args()
        .nth(1)
        .context("usage: embed CONFIG.toml")?;
    let mut event_loop: EventLoop<App> = EventLoop::try_new()?;
    let display: Display<App> = Display::new()?;
    let mut dh = display.handle();
    // The whole file, read once: the gate's sections, the plugin's and ours. The gate opens
    // with the policy last approved; when the file differs from it, the file is proposed
    // below, and until then the approved sections apply.
    let config = Config::<EmbedSections>::load(Some(path.as_ref()))?;
    let opened = Pcp::open::<App, EmbedSections>(&dh, config)?;
    let mut seat_state = SeatState::new();
    let mut seat = seat_state.new_wl_seat(&dh, "seat0");
    seat.add_keyboard(Default::default(), 400, 25)?;
    seat.add_pointer();
    seat.add_touch();
    let output = Output::new(
        "EMBED-1".into(),
        PhysicalProperties {
            size: (0, 0).into(),
            subpixel: Subpixel::Unknown,
            make: "pcp".into(),
            model: "embed".into(),
        },
    );
    let mode = OutputMode {
        size: (WIDTH, HEIGHT).into(),
        refresh: 60_000,
    };
    output.change_current_state(
        Some(mode),
        Some(Transform::Normal),
        Some(Scale::Integer(1)),
        Some((0, 0).into()),
    );
    output.create_global::<App>(&dh);
    let mut space = Space::default();
    space.map_output(&output, (0, 0));
    let mut app = App {
        compositor: CompositorState::new::<App>(&dh),
        xdg: XdgShellState::new::<App>(&dh),
        shm: ShmState::new::<App>(&dh, vec![]),
        pcp: opened.pcp,
        own: opened.host.embed,
        config_path: path.into(),
        seat_state,
        seat,
        space,
        output: output.clone(),
        display: dh.clone(),
        dirty: true,
        running: true,
    };
    // The plugin's timer and device probe run on our loop. The file's policy, when it differs
    // from the one approved, is proposed now: with no output or input device yet (a
    // multi-backend compositor adds its outputs later) it waits, and is asked once they come.
    app.pcp.use_event_loop(event_loop.handle());
    if let Some(proposal) = pcp_plugin::policy::start(&mut app, opened.proposal) {
        pcp_cli::outln!("the config's policy: {proposal:?}");
    }

    let socket = ListeningSocket::bind_auto("wayland", 1..33)?;
    pcp_cli::outln!(
        "WAYLAND_DISPLAY={}",
        socket
            .socket_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default()
    );
    event_loop.handle().insert_source(
        Generic::new(socket, Interest::READ, Mode::Level),
        |_, socket, app| {
            while let Some(stream) = socket.accept()? {
                // Who connected, from the socket, before the client can do anything.
                let data = ClientState {
                    compositor: CompositorClientState::default(),
                    connection: Some(ConnectionIdentity::of_stream(&stream, None)),
                };
                let _ = app.display.insert_client(stream, Arc::new(data));
            }
            Ok(PostAction::Continue)
        },
    )?;
    event_loop.handle().insert_source(
        Generic::new(display, Interest::READ, Mode::Level),
        |_, display, app| {
            // SAFETY: the display is not dropped while the loop holds it.
            unsafe { display.get_mut().dispatch_clients(app)? };
            Ok(PostAction::Continue)
        },
    )?;
    let (lines, input) = channel::<String>();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines().map_while(Result::ok) {
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    event_loop
        .handle()
        .insert_source(input, |event, _, app| match event {
            Event::Msg(line) => {
                if let Err(e) = seat_input(app, &line) {
                    eprintln!("embed: {e:#}");
                }
            }
            Event::Closed => app.running = false,
        })
        .map_err(|e| e.error)?;

    let mut renderer = PixmanRenderer::new()?;
    let mut image = renderer.create_buffer(Fourcc::Argb8888, (WIDTH, HEIGHT).into())?;
    let mut damage = OutputDamageTracker::from_output(&output);
    while app.running {
        // Asleep until a client, the seat, or the plugin's timer has something.
        event_loop.dispatch(None, &mut app)?;
        // Once a round: the outputs, input devices and focal point reach the plugin here.
        pcp_plugin::refresh(&mut app);
        if app.dirty {
            render(&mut app, &mut renderer, &mut image, &mut damage)?;
        }
        dh.flush_clients()?;
    }
    // The audit log's last records are committed (dropping the state does it too; a process
    // that ends with `std::process::exit` must call this first).
    app.pcp.flush()?;
    Ok(())
}

// ---- The compositor's own windowing: Smithay's handlers, nothing pcp-specific. ----

struct ClientState {
    compositor: CompositorClientState,
    /// The connecting process, taken at connect; the plugin checks it at every submit.
    connection: Option<ConnectionIdentity>,
}

impl ClientData for ClientState {
    fn initialized(&self, _: ClientId) {}
    fn disconnected(&self, _: ClientId, _: DisconnectReason) {}
}

impl CompositorHandler for App {
    fn compositor_state(&mut self) -> &mut CompositorState {
        &mut self.compositor
    }
    fn client_compositor_state<'a>(&self, client: &'a Client) -> &'a CompositorClientState {
        static NONE: std::sync::OnceLock<CompositorClientState> = std::sync::OnceLock::new();
        // Every client is inserted with ClientState below.
        client
            .get_data::<ClientState>()
            .map_or_else(|| NONE.get_or_init(Default::default), |d| &d.compositor)
    }
    fn commit(&mut self, surface: &WlSurface) {
        smithay::backend::renderer::utils::on_commit_buffer_handler::<Self>(surface);
        if let Some(w) = self
            .space
            .elements()
            .find(|w| w.toplevel().is_some_and(|t| t.wl_surface() == surface))
        {
            w.on_commit();
        }
        self.dirty = true;
    }
}

impl BufferHandler for App {
    fn buffer_destroyed(&mut self, _: &wl_buffer::WlBuffer) {}
}

impl ShmHandler for App {
    fn shm_state(&self) -> &ShmState {
        &self.shm
    }
}

impl XdgShellHandler for App {
    fn xdg_shell_state(&mut self) -> &mut XdgShellState {
        &mut self.xdg
    }
    fn new_toplevel(&mut self, surface: ToplevelSurface) {
        surface.send_configure();
        self.space
            .map_element(Window::new_wayland_window(surface), (0, 0), true);
    }
    fn new_popup(&mut self, _: PopupSurface, _: PositionerState) {}
    fn grab(&mut self, _: PopupSurface, _: wl_seat::WlSeat, _: Serial) {}
    fn reposition_request(&mut self, _: PopupSurface, _: PositionerState, _: u32) {}
}

impl SeatHandler for App {
    type KeyboardFocus = WlSurface;
    type PointerFocus = WlSurface;
    type TouchFocus = WlSurface;
    fn seat_state(&mut self) -> &mut SeatState<App> {
        &mut self.seat_state
    }
}

impl OutputHandler for App {}

smithay::delegate_compositor!(App);
smithay::delegate_shm!(App);
smithay::delegate_xdg_shell!(App);
smithay::delegate_seat!(App);
smithay::delegate_output!(App);
