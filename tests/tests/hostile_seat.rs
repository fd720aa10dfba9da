//! Hostile seat input against the dialog, each performed through the compositor's real input
//! routing with a real client's window under the dialog that reports everything it receives:
//! several fingers at once, a touch sliding across the dialog's edge both ways, a touch
//! cancelled in the middle of a press, a tablet tool's tip on Approve inside the clickjacking
//! guard, scrolling and a pinch over the dialog. The rules: no approval without one contact's
//! press and release on Approve after the guard; a contact ends where it began; nothing that
//! lands on the dialog reaches the window.

mod harness;

use std::os::unix::net::UnixStream;
use std::sync::mpsc::{Receiver, Sender, channel};

use pcp_overlay::Control;
use serde_json::json;
use wayland_client::globals::{GlobalListContents, registry_queue_init};
use wayland_client::protocol::wl_buffer::WlBuffer;
use wayland_client::protocol::wl_callback::{self, WlCallback};
use wayland_client::protocol::wl_compositor::WlCompositor;
use wayland_client::protocol::wl_keyboard::WlKeyboard;
use wayland_client::protocol::wl_pointer::{self, WlPointer};
use wayland_client::protocol::wl_registry::WlRegistry;
use wayland_client::protocol::wl_seat::WlSeat;
use wayland_client::protocol::wl_shm::WlShm;
use wayland_client::protocol::wl_shm_pool::WlShmPool;
use wayland_client::protocol::wl_surface::WlSurface;
use wayland_client::protocol::wl_touch::{self, WlTouch};
use wayland_client::{Connection, Dispatch, QueueHandle};
use wayland_protocols::xdg::shell::client::xdg_surface::{self, XdgSurface};
use wayland_protocols::xdg::shell::client::xdg_toplevel::{self, XdgToplevel};
use wayland_protocols::xdg::shell::client::xdg_wm_base::XdgWmBase;

use wayland_protocols::wp::pointer_gestures::zv1::client::zwp_pointer_gesture_pinch_v1::{
    self, ZwpPointerGesturePinchV1,
};
use wayland_protocols::wp::pointer_gestures::zv1::client::zwp_pointer_gestures_v1::ZwpPointerGesturesV1;
use wayland_protocols::wp::tablet::zv2::client::zwp_tablet_manager_v2::ZwpTabletManagerV2;
use wayland_protocols::wp::tablet::zv2::client::zwp_tablet_seat_v2::{self, ZwpTabletSeatV2};
use wayland_protocols::wp::tablet::zv2::client::zwp_tablet_tool_v2::{self, ZwpTabletToolV2};
use wayland_protocols::wp::tablet::zv2::client::zwp_tablet_v2::ZwpTabletV2;

use harness::client::{answer_pings, ignore_events, shm_buffer};
use harness::{Fixture, intent};
use pcp_compositor::test_input::Pen;

const ONE: &[&str] = &["800x600@0,0"];

/// What the window's client received (frames aside).
#[derive(Debug, Clone, PartialEq)]
enum Seen {
    Down(i32),
    Motion(i32, f64, f64),
    Up(i32),
    Cancel,
    PointerEnter,
    PointerLeave,
    Button(bool),
    Axis,
    PenIn,
    PenOut,
    PenDown,
    PenUp,
    PenButton,
    Pinch,
    Drawn,
}

struct App {
    tx: Sender<Seen>,
    configured: Option<u32>,
    size: Option<(i32, i32)>,
    surface: Option<WlSurface>,
    buffer: Option<WlBuffer>,
}

/// A fullscreen window that reports the touch and pointer input it receives.
fn run_window(path: std::path::PathBuf, tx: Sender<Seen>) {
    let conn = Connection::from_socket(UnixStream::connect(path).unwrap()).unwrap();
    let (globals, mut queue) = registry_queue_init::<App>(&conn).unwrap();
    let qh = queue.handle();
    let compositor: WlCompositor = globals.bind(&qh, 4..=5, ()).unwrap();
    let shm: WlShm = globals.bind(&qh, 1..=1, ()).unwrap();
    let wm: XdgWmBase = globals.bind(&qh, 1..=6, ()).unwrap();
    let seat: WlSeat = globals.bind(&qh, 5..=7, ()).unwrap();
    let _pointer = seat.get_pointer(&qh, ());
    let _keyboard = seat.get_keyboard(&qh, ());
    let _touch = seat.get_touch(&qh, ());
    let tablets: ZwpTabletManagerV2 = globals.bind(&qh, 1..=1, ()).unwrap();
    let _tablet_seat = tablets.get_tablet_seat(&seat, &qh, ());
    let gestures: ZwpPointerGesturesV1 = globals.bind(&qh, 1..=3, ()).unwrap();
    let _pinch = gestures.get_pinch_gesture(&_pointer, &qh, ());
    let surface = compositor.create_surface(&qh, ());
    let xdg = wm.get_xdg_surface(&surface, &qh, ());
    let toplevel = xdg.get_toplevel(&qh, ());
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

/// A fixture with the window up and drawn, and a privileged prompt waiting on the dialog
/// (past its guard when `past_guard`). Returns the fixture, what the window reports, and
/// the intent.
fn prompt_over_window(past_guard: bool) -> (Fixture, Receiver<Seen>, harness::AsyncIntent) {
    let mut fx = Fixture::new(ONE);
    let (tx, rx) = channel();
    let path = fx.socket_path();
    std::thread::spawn(move || run_window(path, tx));
    fx.pump_until("the window to draw", |fx| {
        fx.render();
        rx.try_iter().any(|s| s == Seen::Drawn)
    });
    let c = fx.submit(intent("settings.change", json!({"key": "k", "value": "v"})));
    fx.pending(&c);
    if past_guard {
        fx.advance_clock(1000);
    }
    drain(&mut fx, &rx);
    (fx, rx, c)
}

/// Pumps a little and returns what the window received meanwhile.
fn drain(fx: &mut Fixture, rx: &Receiver<Seen>) -> Vec<Seen> {
    for _ in 0..10 {
        fx.render();
        fx.pump();
    }
    rx.try_iter().filter(|s| *s != Seen::Drawn).collect()
}

/// A point of the dialog that is on no control (its top-left corner, inside).
fn dialog_body(fx: &mut Fixture) -> (f64, f64) {
    let r = fx.dialog_rect().expect("the dialog is up");
    (f64::from(r.x) + 4.0, f64::from(r.y) + 4.0)
}

#[test]
fn a_second_finger_cannot_complete_the_first_ones_press() {
    let (mut fx, rx, c) = prompt_over_window(true);
    let (ax, ay) = fx.control_centre(Control::Approve);
    let (bx, by) = dialog_body(&mut fx);
    // The first finger rests on the dialog, on no control; a second taps Approve.
    fx.inject_touch_down_at(0, bx, by);
    fx.inject_touch_down_at(1, ax, ay);
    fx.inject_touch_up_at(1);
    fx.inject_touch_up_at(0);
    assert!(fx.dialog_open(), "a second finger approved");
    // The first finger presses Approve; a second on Approve lifts first, then the first
    // slides off Approve before lifting: neither completes anything.
    fx.inject_touch_down_at(0, ax, ay);
    fx.inject_touch_down_at(1, ax + 2.0, ay);
    fx.inject_touch_up_at(1);
    fx.inject_touch_motion(0, bx, by);
    fx.inject_touch_up_at(0);
    assert!(
        fx.dialog_open(),
        "a second finger completed the first one's press"
    );
    assert_eq!(
        drain(&mut fx, &rx),
        [],
        "the window saw the dialog's touches"
    );
    // One finger's own press and release on Approve does approve.
    fx.inject_touch_down_at(3, ax, ay);
    fx.inject_touch_up_at(3);
    assert_eq!(fx.decision(&c).resolution, "user_approved");
}

#[test]
fn a_touch_ends_where_it_began_across_the_dialogs_edge() {
    let (mut fx, rx, c) = prompt_over_window(true);
    let (ax, ay) = fx.control_centre(Control::Approve);
    let r = fx.dialog_rect().unwrap();
    let beside = (f64::from(r.x) - 60.0, ay);
    // Down on the window, across the dialog onto Approve, lifted there: the window's touch
    // from end to end, and no press of the dialog's; its motion over the dialog is withheld
    // (no window learns where a finger is on the dialog).
    fx.inject_touch_down_at(0, beside.0, beside.1);
    fx.inject_touch_motion(0, ax, ay);
    fx.inject_touch_up_at(0);
    assert!(fx.dialog_open(), "a touch from the window approved");
    let seen = drain(&mut fx, &rx);
    assert_eq!(
        seen,
        [Seen::Down(0), Seen::Up(0)],
        "the window keeps its touch, and hears nothing of where it was on the dialog"
    );
    // Down on Approve, off the dialog onto the window and back, lifted on Approve: the
    // dialog's from end to end (the window hears none of it), and leaving Approve dropped the
    // press, so nothing is approved.
    fx.inject_touch_down_at(1, ax, ay);
    fx.inject_touch_motion(1, beside.0, beside.1);
    fx.inject_touch_motion(1, ax, ay);
    fx.inject_touch_up_at(1);
    assert!(fx.dialog_open(), "a press that left Approve approved");
    assert_eq!(drain(&mut fx, &rx), [], "the window saw the dialog's touch");
    fx.inject_touch_down_at(1, ax, ay);
    fx.inject_touch_up_at(1);
    assert_eq!(fx.decision(&c).resolution, "user_approved");
}

#[test]
fn a_touch_cancelled_in_the_middle_of_a_press_is_no_click() {
    let (mut fx, rx, c) = prompt_over_window(true);
    let (ax, ay) = fx.control_centre(Control::Approve);
    // A finger on the window and one pressing Approve; the touch source cancels both.
    fx.inject_touch_down_at(0, 20.0, 20.0);
    fx.inject_touch_down_at(1, ax, ay);
    fx.inject_touch_cancel();
    // The lifts that follow a cancel (a confused device) and a mouse release on Approve
    // complete nothing.
    fx.inject_touch_up_at(1);
    fx.inject_touch_up_at(0);
    fx.inject_pointer_motion(ax, ay);
    fx.inject_pointer_button(false);
    assert!(fx.dialog_open(), "a cancelled touch approved");
    // The window had its own finger (what Smithay tells it of a cancel is Smithay's); the
    // dialog's never reached it.
    let seen = drain(&mut fx, &rx);
    assert_eq!(seen.first(), Some(&Seen::Down(0)), "{seen:?}");
    assert!(
        !seen
            .iter()
            .any(|s| matches!(s, Seen::Down(1) | Seen::Up(1) | Seen::Motion(1, ..))),
        "the dialog's finger reached the window: {seen:?}"
    );
    fx.click(Control::Deny);
    assert_eq!(fx.decision(&c).resolution, "user_denied");
}

#[test]
fn taps_inside_the_guard_do_not_answer_and_push_it_later() {
    let (mut fx, rx, c) = prompt_over_window(false);
    let (ax, ay) = fx.control_centre(Control::Approve);
    // Inside the 750 ms guard: a tap on Approve is ignored, and pushes the guard later.
    fx.advance_clock(700);
    fx.inject_touch_down_at(0, ax, ay);
    fx.inject_touch_up_at(0);
    fx.advance_clock(100);
    fx.inject_touch_down_at(0, ax, ay);
    fx.inject_touch_up_at(0);
    assert!(fx.dialog_open(), "a tap inside the guard approved");
    assert_eq!(drain(&mut fx, &rx), []);
    fx.advance_clock(1000);
    fx.inject_touch_down_at(0, ax, ay);
    fx.inject_touch_up_at(0);
    assert_eq!(fx.decision(&c).resolution, "user_approved");
}

#[test]
fn a_pen_on_approve_inside_the_guard_answers_nothing_and_reaches_no_window() {
    let (mut fx, rx, c) = prompt_over_window(false);
    let (ax, ay) = fx.control_centre(Control::Approve);
    // The pen comes in over Approve and taps it at 700 ms, inside the guard.
    fx.advance_clock(700);
    fx.inject_pen(Pen::In, ax, ay);
    fx.inject_pen(Pen::Down, ax, ay);
    fx.inject_pen(Pen::Up, ax, ay);
    fx.inject_pen(Pen::ButtonDown, ax, ay);
    fx.inject_pen(Pen::ButtonUp, ax, ay);
    assert!(fx.dialog_open(), "a pen tap inside the guard approved");
    // A stroke that begins on the window and ends on Approve, past the guard: the window's.
    fx.advance_clock(1000);
    let r = fx.dialog_rect().unwrap();
    let beside = (f64::from(r.x) - 60.0, ay);
    fx.inject_pen(Pen::Motion, beside.0, beside.1);
    fx.inject_pen(Pen::Down, beside.0, beside.1);
    fx.inject_pen(Pen::Motion, ax, ay);
    fx.inject_pen(Pen::Up, ax, ay);
    assert!(fx.dialog_open(), "a stroke from the window approved");
    let seen = drain(&mut fx, &rx);
    assert_eq!(
        seen,
        [Seen::PenIn, Seen::PenDown, Seen::PenUp],
        "over the dialog the window heard nothing of the pen; its own stroke it got whole"
    );
    // The pen leaving with its tip down on Approve cancels the press.
    fx.inject_pen(Pen::Motion, ax, ay);
    fx.inject_pen(Pen::Down, ax, ay);
    fx.inject_pen(Pen::Out, ax, ay);
    fx.inject_pen(Pen::In, ax, ay);
    fx.inject_pen(Pen::Up, ax, ay);
    assert!(fx.dialog_open(), "a tip that left proximity approved");
    // Its own tap on Approve past the guard approves.
    fx.inject_pen(Pen::Down, ax, ay);
    fx.inject_pen(Pen::Up, ax, ay);
    assert_eq!(fx.decision(&c).resolution, "user_approved");
}

#[test]
fn a_pinch_and_a_scroll_over_the_dialog_reach_no_window_and_answer_nothing() {
    let (mut fx, rx, c) = prompt_over_window(true);
    let (ax, ay) = fx.control_centre(Control::Approve);
    fx.inject_pointer_motion(ax, ay);
    drain(&mut fx, &rx);
    fx.inject_pinch(2, 1.5);
    fx.inject_pinch(3, 0.5);
    fx.inject_scroll(40.0);
    fx.inject_scroll(-40.0);
    assert!(fx.dialog_open(), "a gesture or a scroll answered");
    assert_eq!(
        drain(&mut fx, &rx),
        [],
        "the window heard the dialog's gestures"
    );
    // Beside the dialog the window gets them.
    fx.inject_pointer_motion(20.0, 20.0);
    fx.inject_pinch(2, 1.5);
    fx.inject_scroll(40.0);
    let seen = drain(&mut fx, &rx);
    assert!(seen.contains(&Seen::Pinch), "{seen:?}");
    assert!(seen.contains(&Seen::Axis), "{seen:?}");
    fx.click(Control::Deny);
    assert_eq!(fx.decision(&c).resolution, "user_denied");
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
            wl_touch::Event::Down { id, .. } => Seen::Down(id),
            wl_touch::Event::Motion { id, x, y, .. } => Seen::Motion(id, x, y),
            wl_touch::Event::Up { id, .. } => Seen::Up(id),
            wl_touch::Event::Cancel => Seen::Cancel,
            _ => return,
        };
        let _ = app.tx.send(seen);
    }
}

impl Dispatch<ZwpTabletSeatV2, ()> for App {
    fn event(
        _: &mut App,
        _: &ZwpTabletSeatV2,
        _: zwp_tablet_seat_v2::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<App>,
    ) {
    }

    wayland_client::event_created_child!(App, ZwpTabletSeatV2, [
        zwp_tablet_seat_v2::EVT_TABLET_ADDED_OPCODE => (ZwpTabletV2, ()),
        zwp_tablet_seat_v2::EVT_TOOL_ADDED_OPCODE => (ZwpTabletToolV2, ()),
    ]);
}

impl Dispatch<ZwpTabletToolV2, ()> for App {
    fn event(
        app: &mut App,
        _: &ZwpTabletToolV2,
        event: zwp_tablet_tool_v2::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<App>,
    ) {
        let seen = match event {
            zwp_tablet_tool_v2::Event::ProximityIn { .. } => Seen::PenIn,
            zwp_tablet_tool_v2::Event::ProximityOut => Seen::PenOut,
            zwp_tablet_tool_v2::Event::Down { .. } => Seen::PenDown,
            zwp_tablet_tool_v2::Event::Up => Seen::PenUp,
            zwp_tablet_tool_v2::Event::Button { .. } => Seen::PenButton,
            _ => return,
        };
        let _ = app.tx.send(seen);
    }
}

impl Dispatch<ZwpPointerGesturePinchV1, ()> for App {
    fn event(
        app: &mut App,
        _: &ZwpPointerGesturePinchV1,
        event: zwp_pointer_gesture_pinch_v1::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<App>,
    ) {
        if let zwp_pointer_gesture_pinch_v1::Event::Begin { .. } = event {
            let _ = app.tx.send(Seen::Pinch);
        }
    }
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
            wl_pointer::Event::Button { state, .. } => Seen::Button(
                state == wayland_client::WEnum::Value(wl_pointer::ButtonState::Pressed),
            ),
            wl_pointer::Event::Axis { .. } => Seen::Axis,
            _ => return,
        };
        let _ = app.tx.send(seen);
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
            let _ = app.tx.send(Seen::Drawn);
            // Keep drawing: ask for the next frame.
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

ignore_events!(
    App:
    WlRegistry => GlobalListContents,
    WlCompositor => (),
    WlSurface => (),
    WlShm => (),
    WlShmPool => (),
    WlBuffer => (),
    WlSeat => (),
    WlKeyboard => (),
    ZwpTabletManagerV2 => (),
    ZwpTabletV2 => (),
    ZwpPointerGesturesV1 => (),
);
