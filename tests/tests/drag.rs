//! Drag and drop: a client's drag icon is drawn at the pointer above the windows, and below
//! the dialog — a drag moved over the dialog cannot cover it.

mod harness;

use std::os::unix::net::UnixStream;
use std::sync::mpsc::{Sender, channel};

use serde_json::json;
use wayland_client::globals::{GlobalListContents, registry_queue_init};
use wayland_client::protocol::wl_buffer::WlBuffer;
use wayland_client::protocol::wl_compositor::WlCompositor;
use wayland_client::protocol::wl_data_device::WlDataDevice;
use wayland_client::protocol::wl_data_device_manager::WlDataDeviceManager;
use wayland_client::protocol::wl_data_source::WlDataSource;
use wayland_client::protocol::wl_pointer::{self, WlPointer};
use wayland_client::protocol::wl_registry::WlRegistry;
use wayland_client::protocol::wl_seat::WlSeat;
use wayland_client::protocol::wl_shm::WlShm;
use wayland_client::protocol::wl_shm_pool::WlShmPool;
use wayland_client::protocol::wl_surface::WlSurface;
use wayland_client::{Connection, Dispatch, QueueHandle, WEnum};
use wayland_protocols::xdg::shell::client::xdg_surface::{self, XdgSurface};
use wayland_protocols::xdg::shell::client::xdg_toplevel::XdgToplevel;
use wayland_protocols::xdg::shell::client::xdg_wm_base::XdgWmBase;

use harness::client::{answer_pings, ignore_events, shm_buffer};
use harness::{Fixture, intent};

/// The icon's colour, as XRGB8888 little-endian bytes (pure red).
const RED: [u8; 4] = [0x00, 0x00, 0xff, 0xff];

struct App {
    tx: Sender<&'static str>,
    configured: Option<u32>,
    pressed: Option<u32>,
}

/// A window that starts a drag with a 48×48 red icon when pressed.
fn run_client(path: std::path::PathBuf, tx: Sender<&'static str>) {
    let conn = Connection::from_socket(UnixStream::connect(path).unwrap()).unwrap();
    let (globals, mut queue) = registry_queue_init::<App>(&conn).unwrap();
    let qh = queue.handle();
    let compositor: WlCompositor = globals.bind(&qh, 4..=5, ()).unwrap();
    let shm: WlShm = globals.bind(&qh, 1..=1, ()).unwrap();
    let wm: XdgWmBase = globals.bind(&qh, 1..=6, ()).unwrap();
    let seat: WlSeat = globals.bind(&qh, 1..=7, ()).unwrap();
    let ddm: WlDataDeviceManager = globals.bind(&qh, 3..=3, ()).unwrap();
    let device = ddm.get_data_device(&seat, &qh, ());
    let _pointer = seat.get_pointer(&qh, ());
    let surface = compositor.create_surface(&qh, ());
    let xdg = wm.get_xdg_surface(&surface, &qh, ());
    let _toplevel = xdg.get_toplevel(&qh, ());
    surface.commit();
    let mut app = App {
        tx: tx.clone(),
        configured: None,
        pressed: None,
    };
    while app.configured.is_none() {
        queue.blocking_dispatch(&mut app).unwrap();
    }
    xdg.ack_configure(app.configured.unwrap());
    let b = shm_buffer(&shm, &qh, 200, 150, [0x40, 0x90, 0x20, 0xff]);
    surface.attach(Some(&b), 0, 0);
    surface.damage_buffer(0, 0, 200, 150);
    surface.commit();
    queue.roundtrip(&mut app).unwrap();
    tx.send("mapped").unwrap();
    while app.pressed.is_none() {
        queue.blocking_dispatch(&mut app).unwrap();
    }
    let source = ddm.create_data_source(&qh, ());
    source.offer("text/plain".into());
    let icon = compositor.create_surface(&qh, ());
    let ib = shm_buffer(&shm, &qh, 48, 48, RED);
    icon.attach(Some(&ib), 0, 0);
    icon.damage_buffer(0, 0, 48, 48);
    device.start_drag(Some(&source), &surface, Some(&icon), app.pressed.unwrap());
    icon.commit();
    queue.roundtrip(&mut app).unwrap();
    tx.send("dragging").unwrap();
    while queue.blocking_dispatch(&mut app).is_ok() {}
}

fn red(px: [u8; 4]) -> bool {
    px[0] > 0xf0 && px[1] < 0x10 && px[2] < 0x10
}

#[test]
fn a_drag_icon_follows_the_pointer_above_windows_and_below_the_dialog() {
    let mut fx = Fixture::new(&["800x600@0,0"]);
    let (tx, rx) = channel();
    let path = fx.socket_path();
    std::thread::spawn(move || run_client(path, tx));
    let mut heard = Vec::new();
    fx.pump_until("the window", |fx| {
        fx.render();
        heard.extend(rx.try_iter());
        heard.contains(&"mapped")
    });
    fx.render();
    fx.inject_pointer_motion(50.0, 50.0);
    fx.inject_pointer_button(true);
    fx.pump_until("the drag", |fx| {
        fx.render();
        heard.extend(rx.try_iter());
        heard.contains(&"dragging")
    });
    // Over the window and beside it, the icon is drawn at the pointer.
    for (x, y) in [(60.0, 60.0), (300.0, 500.0)] {
        fx.inject_pointer_motion(x, y);
        fx.pump_until("the icon at the pointer", |fx| {
            red(fx.capture(0).pixel(x as u32 + 10, y as u32 + 10))
        });
    }
    // A prompt: dragged over the dialog, the icon is under it.
    let c = fx.submit(intent("settings.change", json!({"key": "k", "value": "v"})));
    fx.pending(&c);
    let r = fx.dialog_rect().unwrap();
    // The icon (48×48 from the pointer) half beside the dialog's left edge, half over it.
    let (px, py) = (r.x - 24, r.y + r.h / 2);
    fx.inject_pointer_motion(f64::from(px), f64::from(py));
    fx.render();
    let capture = fx.capture(0);
    fx.save_png(0, "drag-icon-under-dialog");
    for y in (py + 4) as u32..(py + 44) as u32 {
        for x in (px + 2) as u32..(r.x - 2) as u32 {
            assert!(
                red(capture.pixel(x, y)),
                "the icon beside the dialog at {x},{y}"
            );
        }
        for x in (r.x + 8) as u32..(px + 46) as u32 {
            assert!(
                !red(capture.pixel(x, y)),
                "the icon covers the dialog at {x},{y}"
            );
        }
    }
    // Released beside the dialog, the drag ends and its icon goes.
    fx.inject_pointer_motion(20.0, 20.0);
    fx.inject_pointer_button(false);
    fx.pump_until("the icon to go", |fx| {
        fx.render();
        !red(fx.capture(0).pixel(30, 30))
    });
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
        if let wl_pointer::Event::Button { serial, state, .. } = event
            && state == WEnum::Value(wl_pointer::ButtonState::Pressed)
        {
            app.pressed = Some(serial);
            let _ = app.tx.send("pressed");
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
            if app.configured.is_none() {
                app.configured = Some(serial);
            } else {
                xdg.ack_configure(serial);
            }
        }
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
    WlDataDeviceManager => (),
    WlDataDevice => (),
    WlDataSource => (),
    XdgToplevel => (),
);
