//! The dialog is drawn above a fullscreen layer-shell surface in the `overlay` layer (the
//! highest a client can ask for) and above a fullscreen xdg toplevel; the clients' pixels stay
//! visible around it.

mod harness;

use std::os::unix::net::UnixStream;

use pcp_overlay::Control;
use pcp_protocol::generated::client::pcp_intent_manager_v1::PcpIntentManagerV1;
use pcp_protocol::generated::client::pcp_intent_v1::PcpIntentV1;
use serde_json::json;
use wayland_client::globals::{GlobalListContents, registry_queue_init};
use wayland_client::protocol::wl_buffer::WlBuffer;
use wayland_client::protocol::wl_compositor::WlCompositor;
use wayland_client::protocol::wl_registry::WlRegistry;
use wayland_client::protocol::wl_shm::WlShm;
use wayland_client::protocol::wl_shm_pool::WlShmPool;
use wayland_client::protocol::wl_surface::WlSurface;
use wayland_client::{Connection, Dispatch, QueueHandle};
use wayland_protocols::xdg::shell::client::xdg_surface::{self, XdgSurface};
use wayland_protocols::xdg::shell::client::xdg_toplevel::{self, XdgToplevel};
use wayland_protocols::xdg::shell::client::xdg_wm_base::XdgWmBase;
use wayland_protocols_wlr::layer_shell::v1::client::zwlr_layer_shell_v1::{self, ZwlrLayerShellV1};
use wayland_protocols_wlr::layer_shell::v1::client::zwlr_layer_surface_v1::{
    self, Anchor, ZwlrLayerSurfaceV1,
};

use harness::client::{answer_pings, ignore_events, shm_buffer};
use harness::{Fixture, intent};

/// Opaque green, as XRGB8888 little-endian bytes.
const GREEN: [u8; 4] = [0x20, 0xc0, 0x40, 0xff];

#[derive(Default)]
struct App {
    configured: Option<(u32, u32, u32)>,
    toplevel_size: Option<(i32, i32)>,
}

fn run_client(path: std::path::PathBuf) {
    let conn = Connection::from_socket(UnixStream::connect(path).unwrap()).unwrap();
    let (globals, mut queue) = registry_queue_init::<App>(&conn).unwrap();
    let qh = queue.handle();
    let compositor: WlCompositor = globals.bind(&qh, 4..=5, ()).unwrap();
    let shm: WlShm = globals.bind(&qh, 1..=1, ()).unwrap();
    let layers: ZwlrLayerShellV1 = globals.bind(&qh, 1..=4, ()).unwrap();
    let surface = compositor.create_surface(&qh, ());
    let layer = layers.get_layer_surface(
        &surface,
        None,
        zwlr_layer_shell_v1::Layer::Overlay,
        "pcp-test".into(),
        &qh,
        (),
    );
    layer.set_anchor(Anchor::Top | Anchor::Bottom | Anchor::Left | Anchor::Right);
    layer.set_size(0, 0);
    layer.set_exclusive_zone(-1);
    surface.commit();
    let mut app = App::default();
    while app.configured.is_none() {
        queue.blocking_dispatch(&mut app).unwrap();
    }
    let (serial, w, h) = app.configured.unwrap();
    layer.ack_configure(serial);
    let buffer = shm_buffer(&shm, &qh, w as i32, h as i32, GREEN);
    surface.attach(Some(&buffer), 0, 0);
    surface.damage_buffer(0, 0, w as i32, h as i32);
    surface.commit();
    while queue.blocking_dispatch(&mut app).is_ok() {}
}

fn run_fullscreen_client(path: std::path::PathBuf) {
    let conn = Connection::from_socket(UnixStream::connect(path).unwrap()).unwrap();
    let (globals, mut queue) = registry_queue_init::<App>(&conn).unwrap();
    let qh = queue.handle();
    let compositor: WlCompositor = globals.bind(&qh, 4..=5, ()).unwrap();
    let shm: WlShm = globals.bind(&qh, 1..=1, ()).unwrap();
    let wm: XdgWmBase = globals.bind(&qh, 1..=6, ()).unwrap();
    let manager: PcpIntentManagerV1 = globals.bind(&qh, 1..=1, ()).unwrap();
    let surface = compositor.create_surface(&qh, ());
    let xdg = wm.get_xdg_surface(&surface, &qh, ());
    let toplevel = xdg.get_toplevel(&qh, ());
    toplevel.set_app_id("org.example.Fullscreen".into());
    toplevel.set_fullscreen(None);
    surface.commit();
    let mut app = App::default();
    while app.configured.is_none() || app.toplevel_size.is_none() {
        queue.blocking_dispatch(&mut app).unwrap();
    }
    let (serial, _, _) = app.configured.unwrap();
    xdg.ack_configure(serial);
    let (w, h) = app.toplevel_size.unwrap();
    assert!(w > 0 && h > 0, "the compositor gives a fullscreen size");
    let buffer = shm_buffer(&shm, &qh, w, h, GREEN);
    surface.attach(Some(&buffer), 0, 0);
    surface.damage_buffer(0, 0, w, h);
    surface.commit();
    queue.roundtrip(&mut app).unwrap();
    // The fullscreen app itself asks: the dialog must still be above it.
    let _intent = manager.submit(
        "settings.change".into(),
        r#"{"key":"k","value":"f"}"#.into(),
        None,
        None,
        &qh,
        (),
    );
    while queue.blocking_dispatch(&mut app).is_ok() {}
}

fn green(px: [u8; 4]) -> bool {
    // Captures are RGBA; the buffer was B, G, R, X.
    px[0].abs_diff(GREEN[2]) <= 2 && px[1].abs_diff(GREEN[1]) <= 2 && px[2].abs_diff(GREEN[0]) <= 2
}

#[test]
fn the_dialog_is_above_a_fullscreen_overlay_layer() {
    let mut fx = Fixture::new(&["800x600@0,0"]);
    let path = fx.socket_path();
    std::thread::spawn(move || run_client(path));
    fx.pump_until("the layer surface's pixels", |fx| {
        let c = fx.capture(0);
        green(c.pixel(400, 300)) && green(c.pixel(5, 5))
    });
    let c = fx.submit(intent("settings.change", json!({"key": "k", "value": "v"})));
    fx.pending(&c);
    let png = fx.save_png(0, "layer-overlay-and-dialog");
    let capture = fx.capture(0);
    let (ax, ay) = fx.control_centre(Control::Approve);
    assert!(
        !green(capture.pixel(ax as u32, ay as u32)),
        "the dialog is on top ({})",
        png.display()
    );
    assert!(
        green(capture.pixel(5, 5)),
        "the layer shows around the dialog"
    );
    fx.advance_clock(1000);
    fx.click(Control::Deny);
    assert_eq!(fx.decision(&c).resolution, "user_denied");
    assert!(green(fx.capture(0).pixel(ax as u32, ay as u32)));
}

#[test]
fn the_dialog_is_above_a_fullscreen_window() {
    let mut fx = Fixture::new(&["640x480@0,0", "640x480@640,0"]);
    let path = fx.socket_path();
    std::thread::spawn(move || run_fullscreen_client(path));
    // Fullscreen on the output of the focal point (the first): green from corner to corner.
    fx.pump_until("the fullscreen window's pixels", |fx| {
        let c = fx.capture(0);
        green(c.pixel(1, 1)) && green(c.pixel(638, 478))
    });
    assert!(harness::is_background(fx.capture(1).pixel(5, 5)));
    fx.pump_until("the fullscreen app's prompt", |fx| fx.dialog_open());
    let png = fx.save_png(0, "fullscreen-and-dialog");
    let capture = fx.capture(0);
    let (ax, ay) = fx.control_centre(Control::Approve);
    assert!(
        !green(capture.pixel(ax as u32, ay as u32)),
        "{}",
        png.display()
    );
    assert!(green(capture.pixel(1, 1)));
    fx.advance_clock(1000);
    fx.click(Control::Approve);
    assert!(!fx.dialog_open());
    let audit = fx.gate().store().audit_since(0).unwrap();
    let last = audit.last().unwrap();
    assert_eq!(last.resolution.as_str(), "user_approved");
    assert_eq!(
        last.client.declared_app_id.as_deref(),
        Some("org.example.Fullscreen")
    );
}

answer_pings!(App);

impl Dispatch<XdgSurface, ()> for App {
    fn event(
        app: &mut App,
        _: &XdgSurface,
        event: xdg_surface::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<App>,
    ) {
        if let xdg_surface::Event::Configure { serial } = event {
            app.configured = Some((serial, 0, 0));
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
        if let xdg_toplevel::Event::Configure { width, height, .. } = event {
            app.toplevel_size = Some((width, height));
        }
    }
}

impl Dispatch<ZwlrLayerSurfaceV1, ()> for App {
    fn event(
        app: &mut App,
        _: &ZwlrLayerSurfaceV1,
        event: zwlr_layer_surface_v1::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<App>,
    ) {
        if let zwlr_layer_surface_v1::Event::Configure {
            serial,
            width,
            height,
        } = event
        {
            app.configured = Some((serial, width, height));
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
    ZwlrLayerShellV1 => (),
    PcpIntentManagerV1 => (),
    PcpIntentV1 => (),
);
