//! The dialog does not block the desktop. A real client with a fullscreen window under the
//! dialog keeps drawing and gets pointer, touch-free clicks and keys outside the dialog while a
//! prompt waits; what lands on the dialog or its margin reaches only the dialog; the dialog
//! takes the keyboard only when given it (a click on it, Super+Return) and gives it back;
//! `[overlay] modal_for` makes chosen risk classes modal; a client asking again and again does
//! not take the desktop from another.

mod harness;

use std::os::unix::net::UnixStream;
use std::sync::mpsc::{Receiver, Sender, channel};

use pcp_gate::RiskClass;
use pcp_overlay::Control;
use serde_json::json;
use wayland_client::globals::{GlobalListContents, registry_queue_init};
use wayland_client::protocol::wl_buffer::WlBuffer;
use wayland_client::protocol::wl_callback::{self, WlCallback};
use wayland_client::protocol::wl_compositor::WlCompositor;
use wayland_client::protocol::wl_keyboard::{self, WlKeyboard};
use wayland_client::protocol::wl_pointer::{self, WlPointer};
use wayland_client::protocol::wl_registry::WlRegistry;
use wayland_client::protocol::wl_seat::WlSeat;
use wayland_client::protocol::wl_shm::WlShm;
use wayland_client::protocol::wl_shm_pool::WlShmPool;
use wayland_client::protocol::wl_surface::WlSurface;
use wayland_client::protocol::wl_touch::{self, WlTouch};
use wayland_client::{Connection, Dispatch, QueueHandle, WEnum};
use wayland_protocols::xdg::shell::client::xdg_surface::{self, XdgSurface};
use wayland_protocols::xdg::shell::client::xdg_toplevel::{self, XdgToplevel};
use wayland_protocols::xdg::shell::client::xdg_wm_base::XdgWmBase;

use harness::client::{answer_pings, ignore_events, shm_buffer};
use harness::{Fixture, KEY_A, KEY_ENTER, KEY_ESC, KEY_LEFTMETA, KEY_TAB, intent};

const ONE: &[&str] = &["800x600@0,0"];

/// What the window's client received.
#[derive(Debug, Clone, PartialEq)]
enum Seen {
    PointerEnter,
    PointerLeave,
    Motion(f64, f64),
    Button(bool),
    KeyboardEnter,
    KeyboardLeave,
    Key(u32, bool),
    Touch(bool),
    Frame,
}

struct App {
    tx: Sender<Seen>,
    configured: Option<u32>,
    size: Option<(i32, i32)>,
    surface: Option<WlSurface>,
    buffer: Option<WlBuffer>,
}

/// A fullscreen window that takes pointer and keyboard and draws a frame each time the
/// compositor asks for one, reporting everything it receives.
fn run_window(path: std::path::PathBuf, tx: Sender<Seen>) {
    let conn = Connection::from_socket(UnixStream::connect(path).unwrap()).unwrap();
    let (globals, mut queue) = registry_queue_init::<App>(&conn).unwrap();
    let qh = queue.handle();
    let compositor: WlCompositor = globals.bind(&qh, 4..=5, ()).unwrap();
    let shm: WlShm = globals.bind(&qh, 1..=1, ()).unwrap();
    let wm: XdgWmBase = globals.bind(&qh, 1..=6, ()).unwrap();
    let seat: WlSeat = globals.bind(&qh, 1..=7, ()).unwrap();
    let _pointer = seat.get_pointer(&qh, ());
    let _keyboard = seat.get_keyboard(&qh, ());
    let _touch = seat.get_touch(&qh, ());
    let surface = compositor.create_surface(&qh, ());
    let xdg = wm.get_xdg_surface(&surface, &qh, ());
    let toplevel = xdg.get_toplevel(&qh, ());
    toplevel.set_app_id("org.example.Window".into());
    toplevel.set_fullscreen(None);
    surface.commit();
    let mut app = App {
        tx,
        configured: None,
        size: None,
        surface: None,
        buffer: None,
    };
    while app.configured.is_none() || app.size.is_none() {
        queue.blocking_dispatch(&mut app).unwrap();
    }
    xdg.ack_configure(app.configured.unwrap());
    let (w, h) = app.size.unwrap();
    let buffer = shm_buffer(&shm, &qh, w, h, [0x40, 0x90, 0x20, 0xff]);
    surface.attach(Some(&buffer), 0, 0);
    surface.damage_buffer(0, 0, w, h);
    surface.frame(&qh, ());
    surface.commit();
    app.surface = Some(surface);
    app.buffer = Some(buffer);
    while queue.blocking_dispatch(&mut app).is_ok() {}
}

/// A fixture with `overlay` added to its `[overlay]` settings and the window up: it has the
/// keyboard and has drawn.
fn with_window(overlay: &str) -> (Fixture, Receiver<Seen>) {
    let mut fx = Fixture::with_overlay(ONE, overlay);
    let (tx, rx) = channel();
    let path = fx.socket_path();
    std::thread::spawn(move || run_window(path, tx));
    let mut seen = Vec::new();
    let start = std::time::Instant::now();
    while !(seen.contains(&Seen::KeyboardEnter) && seen.contains(&Seen::Frame)) {
        assert!(start.elapsed() < harness::WAIT, "the window: {seen:?}");
        fx.render();
        fx.pump();
        seen.extend(rx.try_iter());
    }
    (fx, rx)
}

/// Pumps (drawing frames) a little and returns everything the window saw meanwhile.
fn drain(fx: &mut Fixture, rx: &Receiver<Seen>) -> Vec<Seen> {
    for _ in 0..10 {
        fx.render();
        fx.pump();
    }
    rx.try_iter().collect()
}

/// What the window saw, frames aside.
fn input(seen: &[Seen]) -> Vec<Seen> {
    seen.iter()
        .filter(|s| **s != Seen::Frame)
        .cloned()
        .collect()
}

/// What the window heard of the keyboard (the pointer's leave as the dialog appears under it
/// is the pointer's business).
fn keyboard(seen: &[Seen]) -> Vec<Seen> {
    seen.iter()
        .filter(|s| matches!(s, Seen::Key(..) | Seen::KeyboardEnter | Seen::KeyboardLeave))
        .cloned()
        .collect()
}

fn key(fx: &mut Fixture, code: u32) {
    fx.inject_key(code, true);
    fx.inject_key(code, false);
}

#[test]
fn a_window_keeps_drawing_and_gets_input_beside_a_privileged_prompt() {
    let (mut fx, rx) = with_window("");
    let c = fx.submit(intent("settings.change", json!({"key": "k", "value": "v"})));
    fx.pending(&c);
    assert_eq!(fx.gate().active().unwrap().risk, RiskClass::Privileged);
    assert!(!fx.dialog_modal());
    assert!(!fx.dialog_has_keyboard(), "the dialog takes no keyboard");
    let seen = drain(&mut fx, &rx);
    assert!(
        !seen.contains(&Seen::KeyboardLeave),
        "the window keeps the keyboard: {seen:?}"
    );
    let frames = seen.iter().filter(|s| **s == Seen::Frame).count();
    assert!(frames >= 5, "the window keeps drawing: {frames} frames");

    fx.inject_pointer_motion(10.0, 10.0);
    fx.inject_click(12.0, 10.0);
    key(&mut fx, KEY_A);
    let seen = input(&drain(&mut fx, &rx));
    assert_eq!(
        seen,
        [
            Seen::PointerEnter,
            Seen::Motion(12.0, 10.0),
            Seen::Button(true),
            Seen::Button(false),
            Seen::Key(KEY_A, true),
            Seen::Key(KEY_A, false),
        ],
    );
    // Another client's routine intent is decided while the prompt waits.
    let routine = fx.submit(intent("file.read", json!({"path": "/tmp/x"})));
    assert_eq!(fx.decision(&routine).resolution, "policy_allow");
    assert!(fx.dialog_open(), "the prompt still waits");
    // Without the keyboard it still counts down, and times out at 30 s of inactivity.
    fx.advance_clock(2000);
    assert_eq!(fx.seconds_left(), Some(28));
    fx.advance_clock(28_000);
    assert_eq!(fx.decision(&c).resolution, "confirmation.timeout");
}

#[test]
fn on_a_large_output_the_dialog_stays_where_it_appeared_while_the_pointer_works_beside_it() {
    // Wide enough (`large_output_width`) for the dialog to appear at the focal point.
    let mut fx = Fixture::new(&["3840x2160@0,0", "1920x1080@3840,0"]);
    fx.inject_pointer_motion(800.0, 600.0);
    let c = fx.submit(intent("settings.change", json!({"key": "k", "value": "v"})));
    fx.pending(&c);
    let r = fx.dialog_rect().unwrap();
    assert!(
        f64::from(r.x) < 800.0 && f64::from(r.x + r.w) > 800.0,
        "near the focal point: {r:?}"
    );
    fx.advance_clock(1000);
    // The pointer leaves the dialog and works elsewhere on the same output: the dialog stays
    // (it does not follow and sit under the pointer), and its guard is not re-armed.
    fx.inject_pointer_motion(2800.0, 1600.0);
    fx.inject_click(2900.0, 1700.0);
    assert_eq!(fx.dialog_rect(), Some(r));
    assert_eq!(fx.dialog_output(), Some(0));
    fx.click(Control::Deny);
    assert_eq!(fx.decision(&c).resolution, "user_denied");
    // Looking at the other output still moves the dialog there.
    let c = fx.submit(intent("settings.change", json!({"key": "k", "value": "w"})));
    fx.pending(&c);
    fx.inject_pointer_motion(4500.0, 500.0);
    assert_eq!(fx.dialog_output(), Some(1));
    fx.advance_clock(1000);
    fx.click(Control::Deny);
    assert_eq!(fx.decision(&c).resolution, "user_denied");
}

#[test]
fn a_press_on_the_dialog_or_its_margin_reaches_only_the_dialog() {
    let (mut fx, rx) = with_window("");
    fx.inject_pointer_motion(10.0, 10.0);
    let c = fx.submit(intent("settings.change", json!({"key": "k", "value": "v"})));
    fx.pending(&c);
    let r = fx.dialog_rect().unwrap();
    drain(&mut fx, &rx);
    // The window lies under the dialog's margin: motion and a click there are the dialog's.
    let (mx, my) = (f64::from(r.x) - 10.0, f64::from(r.y) + 10.0);
    fx.inject_pointer_motion(mx - 1.0, my);
    fx.inject_click(mx, my);
    // A touch there too; one beside the dialog is the window's.
    fx.inject_touch_down(mx, my + 5.0);
    fx.inject_touch_up();
    let seen = input(&drain(&mut fx, &rx));
    assert_eq!(seen, [Seen::PointerLeave], "only a leave");
    assert!(!fx.dialog_has_keyboard(), "the margin is not the dialog");
    fx.inject_touch_down(10.0, 10.0);
    fx.inject_touch_up();
    let seen = input(&drain(&mut fx, &rx));
    assert_eq!(seen, [Seen::Touch(true), Seen::Touch(false)]);
    // A click on the dialog (not on a control) gives it the keyboard.
    fx.inject_click(f64::from(r.x) + 4.0, f64::from(r.y) + 4.0);
    assert!(fx.dialog_has_keyboard());
    assert_eq!(input(&drain(&mut fx, &rx)), [Seen::KeyboardLeave]);
    fx.advance_clock(1000);
    fx.click(Control::Deny);
    assert_eq!(fx.decision(&c).resolution, "user_denied");
    // The dialog has gone: the window gets the keyboard and the pointer back.
    let seen = input(&drain(&mut fx, &rx));
    assert!(
        !seen.iter().any(|s| matches!(s, Seen::Button(_))),
        "{seen:?}"
    );
    assert!(seen.contains(&Seen::KeyboardEnter), "{seen:?}");
    assert!(seen.contains(&Seen::PointerEnter), "{seen:?}");
}

#[test]
fn keys_typed_into_a_window_as_a_prompt_appears_never_reach_the_dialog() {
    let (mut fx, rx) = with_window("");
    // Tab goes down before the prompt and up after it: both reach the window.
    fx.inject_key(KEY_TAB, true);
    let c = fx.submit(intent("settings.change", json!({"key": "k", "value": "v"})));
    fx.pending(&c);
    fx.inject_key(KEY_TAB, false);
    fx.advance_clock(1000);
    // What would approve a dialog with the keyboard: Tab Tab Enter, past the guard.
    for code in [KEY_TAB, KEY_TAB, KEY_ENTER] {
        key(&mut fx, code);
    }
    assert!(fx.dialog_open(), "nothing was answered");
    assert!(!fx.answered(pcp_gate::Modality::Visual));
    assert!(fx.suppressed_keys().is_empty());
    let seen = keyboard(&drain(&mut fx, &rx));
    let mut expected = vec![Seen::Key(KEY_TAB, true), Seen::Key(KEY_TAB, false)];
    for code in [KEY_TAB, KEY_TAB, KEY_ENTER] {
        expected.extend([Seen::Key(code, true), Seen::Key(code, false)]);
    }
    assert_eq!(seen, expected);
    fx.click(Control::Deny);
    assert_eq!(fx.decision(&c).resolution, "user_denied");
}

#[test]
fn super_return_gives_the_dialog_the_keyboard_and_tab_enter_approves() {
    let (mut fx, rx) = with_window("");
    let c = fx.submit(intent("settings.change", json!({"key": "k", "value": "v"})));
    fx.pending(&c);
    fx.press_focus_shortcut();
    assert!(fx.dialog_has_keyboard());
    // The window saw Super go down, then lost the keyboard; Return reached no one.
    let seen = keyboard(&drain(&mut fx, &rx));
    assert_eq!(
        seen,
        [Seen::Key(KEY_LEFTMETA, true), Seen::KeyboardLeave],
        "{seen:?}"
    );
    // The shortcut again gives the keyboard back to the window that had it.
    fx.press_focus_shortcut();
    assert!(!fx.dialog_has_keyboard());
    let seen = input(&drain(&mut fx, &rx));
    assert_eq!(seen.first(), Some(&Seen::KeyboardEnter), "{seen:?}");
    assert!(
        !seen.iter().any(|s| matches!(s, Seen::Key(KEY_ENTER, _))),
        "{seen:?}"
    );
    fx.press_focus_shortcut();
    fx.advance_clock(1000);
    // Deny first, Approve second; Enter presses it.
    for code in [KEY_TAB, KEY_TAB, KEY_ENTER] {
        key(&mut fx, code);
    }
    assert_eq!(fx.decision(&c).resolution, "user_approved");
    let seen = input(&drain(&mut fx, &rx));
    assert!(
        !seen
            .iter()
            .any(|s| matches!(s, Seen::Key(KEY_TAB | KEY_ENTER, _))),
        "{seen:?}"
    );
    assert!(seen.contains(&Seen::KeyboardEnter), "{seen:?}");
    assert!(fx.suppressed_keys().is_empty());

    // Escape with the keyboard denies and gives the keyboard back.
    let c = fx.submit(intent("settings.change", json!({"key": "k", "value": "w"})));
    fx.pending(&c);
    fx.press_focus_shortcut();
    fx.advance_clock(1000);
    key(&mut fx, KEY_ESC);
    assert_eq!(fx.decision(&c).resolution, "user_denied");
    assert!(!fx.dialog_has_keyboard());
    let seen = input(&drain(&mut fx, &rx));
    assert!(
        !seen.iter().any(|s| matches!(s, Seen::Key(KEY_ESC, _))),
        "{seen:?}"
    );
    assert_eq!(seen.last(), Some(&Seen::KeyboardEnter), "{seen:?}");
}

#[test]
fn modal_for_system_makes_a_system_prompt_modal_and_leaves_a_privileged_one_not() {
    let (mut fx, rx) = with_window("modal_for = [\"system\"]");
    fx.inject_pointer_motion(10.0, 10.0);
    let c = fx.submit(intent("settings.change", json!({"key": "k", "value": "v"})));
    fx.pending(&c);
    assert!(!fx.dialog_modal() && !fx.dialog_has_keyboard());
    fx.inject_click(12.0, 10.0);
    assert!(input(&drain(&mut fx, &rx)).contains(&Seen::Button(true)));
    fx.advance_clock(1000);
    fx.click(Control::Deny);
    assert_eq!(fx.decision(&c).resolution, "user_denied");
    fx.inject_pointer_motion(10.0, 10.0);
    drain(&mut fx, &rx);

    let c = fx.submit(intent("session.logout", json!({})));
    fx.pending(&c);
    assert_eq!(fx.gate().active().unwrap().risk, RiskClass::System);
    assert!(fx.dialog_modal());
    assert!(
        fx.dialog_has_keyboard(),
        "a modal dialog has the keyboard at once"
    );
    fx.inject_click(12.0, 12.0);
    key(&mut fx, KEY_A);
    let seen = input(&drain(&mut fx, &rx));
    assert_eq!(seen, [Seen::PointerLeave, Seen::KeyboardLeave], "{seen:?}");
    fx.advance_clock(1000);
    key(&mut fx, KEY_ESC);
    assert_eq!(fx.decision(&c).resolution, "user_denied");
    let seen = input(&drain(&mut fx, &rx));
    assert!(seen.contains(&Seen::KeyboardEnter), "{seen:?}");
}

#[test]
fn a_client_asking_every_second_does_not_take_the_desktop_from_another() {
    let (mut fx, rx) = with_window("");
    fx.inject_pointer_motion(10.0, 10.0);
    let mut asks = Vec::new();
    for i in 0..5 {
        asks.push(fx.submit(intent("settings.change", json!({"key": "k", "value": i}))));
        fx.pump_until("the prompt", |fx| fx.dialog_open());
        fx.advance_clock(1000);
        fx.inject_click(12.0, 10.0);
        key(&mut fx, KEY_A);
    }
    let seen = input(&drain(&mut fx, &rx));
    let presses = seen.iter().filter(|s| **s == Seen::Button(true)).count();
    let keys = seen
        .iter()
        .filter(|s| **s == Seen::Key(KEY_A, true))
        .count();
    assert_eq!((presses, keys), (5, 5), "{seen:?}");
    assert!(!seen.contains(&Seen::KeyboardLeave), "{seen:?}");
    assert!(fx.dialog_open());
}

impl Dispatch<WlPointer, ()> for App {
    fn event(
        app: &mut App,
        _: &WlPointer,
        event: wl_pointer::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<App>,
    ) {
        let seen = match event {
            wl_pointer::Event::Enter { .. } => Seen::PointerEnter,
            wl_pointer::Event::Leave { .. } => Seen::PointerLeave,
            wl_pointer::Event::Motion {
                surface_x,
                surface_y,
                ..
            } => Seen::Motion(surface_x, surface_y),
            wl_pointer::Event::Button { state, .. } => {
                Seen::Button(state == WEnum::Value(wl_pointer::ButtonState::Pressed))
            }
            _ => return,
        };
        let _ = app.tx.send(seen);
    }
}

impl Dispatch<WlTouch, ()> for App {
    fn event(
        app: &mut App,
        _: &WlTouch,
        event: wl_touch::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<App>,
    ) {
        let seen = match event {
            wl_touch::Event::Down { .. } => Seen::Touch(true),
            wl_touch::Event::Up { .. } => Seen::Touch(false),
            _ => return,
        };
        let _ = app.tx.send(seen);
    }
}

impl Dispatch<WlKeyboard, ()> for App {
    fn event(
        app: &mut App,
        _: &WlKeyboard,
        event: wl_keyboard::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<App>,
    ) {
        let seen = match event {
            wl_keyboard::Event::Enter { .. } => Seen::KeyboardEnter,
            wl_keyboard::Event::Leave { .. } => Seen::KeyboardLeave,
            wl_keyboard::Event::Key { key, state, .. } => {
                Seen::Key(key, state == WEnum::Value(wl_keyboard::KeyState::Pressed))
            }
            _ => return,
        };
        let _ = app.tx.send(seen);
    }
}

impl Dispatch<WlCallback, ()> for App {
    fn event(
        app: &mut App,
        _: &WlCallback,
        event: wl_callback::Event,
        _: &(),
        _: &Connection,
        qh: &QueueHandle<App>,
    ) {
        if let wl_callback::Event::Done { .. } = event {
            let _ = app.tx.send(Seen::Frame);
            if let (Some(surface), Some(buffer)) = (&app.surface, &app.buffer) {
                surface.attach(Some(buffer), 0, 0);
                surface.damage_buffer(0, 0, 1, 1);
                surface.frame(qh, ());
                surface.commit();
            }
        }
    }
}

answer_pings!(App);

impl Dispatch<XdgSurface, ()> for App {
    fn event(
        app: &mut App,
        xdg: &XdgSurface,
        event: xdg_surface::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<App>,
    ) {
        if let xdg_surface::Event::Configure { serial } = event {
            if app.surface.is_some() {
                xdg.ack_configure(serial);
            } else {
                app.configured = Some(serial);
            }
        }
    }
}

impl Dispatch<XdgToplevel, ()> for App {
    fn event(
        app: &mut App,
        _: &XdgToplevel,
        event: xdg_toplevel::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<App>,
    ) {
        if let xdg_toplevel::Event::Configure { width, height, .. } = event
            && width > 0
            && height > 0
        {
            app.size = Some((width, height));
        }
    }
}

ignore_events!(
    App:
    WlRegistry => GlobalListContents,
    WlCompositor => (),
    WlSurface => (),
    WlShm => (),
    WlShmPool => (),
    WlBuffer => (),
    WlSeat => (),
);
