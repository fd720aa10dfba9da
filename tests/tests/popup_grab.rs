//! A client cannot take the keyboard from the dialog with an xdg popup grab: while the dialog
//! holds the keyboard, a popup asking for a grab (with the serial of the client's own last
//! keyboard enter) is dismissed at once (popup_done) and the keyboard stays the dialog's.

mod harness;

use std::os::unix::net::UnixStream;
use std::sync::mpsc::{Receiver, Sender, channel};

use pcp_overlay::Control;
use serde_json::json;
use wayland_client::globals::{GlobalListContents, registry_queue_init};
use wayland_client::protocol::wl_buffer::WlBuffer;
use wayland_client::protocol::wl_compositor::WlCompositor;
use wayland_client::protocol::wl_keyboard::{self, WlKeyboard};
use wayland_client::protocol::wl_registry::WlRegistry;
use wayland_client::protocol::wl_seat::WlSeat;
use wayland_client::protocol::wl_shm::WlShm;
use wayland_client::protocol::wl_shm_pool::WlShmPool;
use wayland_client::protocol::wl_surface::WlSurface;
use wayland_client::{Connection, Dispatch, QueueHandle};
use wayland_protocols::xdg::shell::client::xdg_popup::{self, XdgPopup};
use wayland_protocols::xdg::shell::client::xdg_positioner::XdgPositioner;
use wayland_protocols::xdg::shell::client::xdg_surface::{self, XdgSurface};
use wayland_protocols::xdg::shell::client::xdg_toplevel::XdgToplevel;
use wayland_protocols::xdg::shell::client::xdg_wm_base::XdgWmBase;

use harness::client::{answer_pings, ignore_events, shm_buffer};
use harness::{Fixture, intent};

#[derive(Debug, Clone, PartialEq)]
enum Seen {
    KeyboardEnter,
    KeyboardLeave,
    PopupConfigured,
    PopupDone,
}

struct App {
    tx: Sender<Seen>,
    configured: Option<u32>,
    last_enter: Option<u32>,
}

/// A window that, when told, opens a popup and asks for a grab with its last enter's serial.
fn run_client(path: std::path::PathBuf, tx: Sender<Seen>, go: Receiver<()>) {
    let conn = Connection::from_socket(UnixStream::connect(path).unwrap()).unwrap();
    let (globals, mut queue) = registry_queue_init::<App>(&conn).unwrap();
    let qh = queue.handle();
    let compositor: WlCompositor = globals.bind(&qh, 4..=5, ()).unwrap();
    let shm: WlShm = globals.bind(&qh, 1..=1, ()).unwrap();
    let wm: XdgWmBase = globals.bind(&qh, 1..=6, ()).unwrap();
    let seat: WlSeat = globals.bind(&qh, 1..=7, ()).unwrap();
    let _keyboard = seat.get_keyboard(&qh, ());
    let surface = compositor.create_surface(&qh, ());
    let xdg = wm.get_xdg_surface(&surface, &qh, ());
    let _toplevel = xdg.get_toplevel(&qh, ());
    surface.commit();
    let mut app = App {
        tx,
        configured: None,
        last_enter: None,
    };
    while app.configured.is_none() {
        queue.blocking_dispatch(&mut app).unwrap();
    }
    xdg.ack_configure(app.configured.take().unwrap());
    let b = shm_buffer(&shm, &qh, 200, 150, [0x40, 0x90, 0x20, 0xff]);
    surface.attach(Some(&b), 0, 0);
    surface.damage_buffer(0, 0, 200, 150);
    surface.commit();
    while go.try_recv().is_err() {
        queue.roundtrip(&mut app).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let positioner = wm.create_positioner(&qh, ());
    positioner.set_size(100, 80);
    positioner.set_anchor_rect(0, 0, 20, 20);
    let popup_surface = compositor.create_surface(&qh, ());
    let popup_xdg = wm.get_xdg_surface(&popup_surface, &qh, ());
    let popup = popup_xdg.get_popup(Some(&xdg), &positioner, &qh, ());
    popup.grab(&seat, app.last_enter.expect("a keyboard enter"));
    popup_surface.commit();
    while queue.blocking_dispatch(&mut app).is_ok() {}
}

#[test]
fn a_popup_grab_asked_while_the_dialog_holds_the_keyboard_is_refused() {
    let mut fx = Fixture::new(&["800x600@0,0"]);
    let (tx, rx) = channel();
    let (go_tx, go) = channel();
    let path = fx.socket_path();
    std::thread::spawn(move || run_client(path, tx, go));
    let mut seen = Vec::new();
    fx.pump_until("the window's keyboard enter", |fx| {
        fx.render();
        seen.extend(rx.try_iter());
        seen.contains(&Seen::KeyboardEnter)
    });
    let c = fx.submit(intent("settings.change", json!({"key": "k", "value": "v"})));
    fx.pending(&c);
    fx.press_focus_shortcut();
    assert!(fx.dialog_has_keyboard());
    go_tx.send(()).unwrap();
    fx.pump_until("the popup to be dismissed", |fx| {
        fx.render();
        seen.extend(rx.try_iter());
        seen.contains(&Seen::PopupDone)
    });
    for _ in 0..20 {
        fx.pump();
    }
    seen.extend(rx.try_iter());
    assert!(fx.dialog_has_keyboard(), "the dialog keeps the keyboard");
    assert!(!fx.keyboard_on_client(), "no client has the keyboard");
    let enters = seen.iter().filter(|s| **s == Seen::KeyboardEnter).count();
    assert_eq!(
        enters, 1,
        "no keyboard enter after the dialog took it: {seen:?}"
    );
    fx.advance_clock(1000);
    fx.click(Control::Deny);
    assert_eq!(fx.decision(&c).resolution, "user_denied");
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
            wl_keyboard::Event::Enter { serial, .. } => {
                app.last_enter = Some(serial);
                Seen::KeyboardEnter
            }
            wl_keyboard::Event::Leave { .. } => Seen::KeyboardLeave,
            _ => return,
        };
        let _ = app.tx.send(seen);
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
            if app.configured.is_none() && app.last_enter.is_none() {
                app.configured = Some(serial);
            } else {
                xdg.ack_configure(serial);
            }
        }
    }
}

impl Dispatch<XdgPopup, ()> for App {
    fn event(
        app: &mut App,
        _: &XdgPopup,
        event: xdg_popup::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<App>,
    ) {
        let seen = match event {
            xdg_popup::Event::Configure { .. } => Seen::PopupConfigured,
            xdg_popup::Event::PopupDone => Seen::PopupDone,
            _ => return,
        };
        let _ = app.tx.send(seen);
    }
}

ignore_events!(
    App:
    WlRegistry => GlobalListContents,
    WlCompositor => (),
    WlSurface => (),
    WlSeat => (),
    WlShm => (),
    WlShmPool => (),
    WlBuffer => (),
    XdgToplevel => (),
    XdgPositioner => (),
);
