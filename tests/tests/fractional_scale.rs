//! fractional-scale-v1: a window's surface is told the scale of the output it is on, in
//! 120ths (the protocol's unit) — 1.5 is 180 — so it can draw at that density.

mod harness;

use std::os::unix::net::UnixStream;
use std::sync::mpsc::{Sender, channel};

use harness::Fixture;
use harness::client::{answer_pings, ignore_events};
use wayland_client::globals::{GlobalListContents, registry_queue_init};
use wayland_client::protocol::wl_compositor::WlCompositor;
use wayland_client::protocol::wl_registry::WlRegistry;
use wayland_client::protocol::wl_surface::WlSurface;
use wayland_client::{Connection, Dispatch, QueueHandle};
use wayland_protocols::wp::fractional_scale::v1::client::wp_fractional_scale_manager_v1::WpFractionalScaleManagerV1;
use wayland_protocols::wp::fractional_scale::v1::client::wp_fractional_scale_v1::{
    self, WpFractionalScaleV1,
};
use wayland_protocols::xdg::shell::client::xdg_surface::XdgSurface;
use wayland_protocols::xdg::shell::client::xdg_toplevel::XdgToplevel;
use wayland_protocols::xdg::shell::client::xdg_wm_base::XdgWmBase;

struct App(Sender<u32>);

/// A toplevel that asks for its preferred fractional scale and reports it.
fn run_client(path: std::path::PathBuf, tx: Sender<u32>) {
    let conn = Connection::from_socket(UnixStream::connect(path).unwrap()).unwrap();
    let (globals, mut queue) = registry_queue_init::<App>(&conn).unwrap();
    let qh = queue.handle();
    let compositor: WlCompositor = globals.bind(&qh, 4..=5, ()).unwrap();
    let wm: XdgWmBase = globals.bind(&qh, 1..=6, ()).unwrap();
    let manager: WpFractionalScaleManagerV1 = globals.bind(&qh, 1..=1, ()).unwrap();
    let surface = compositor.create_surface(&qh, ());
    let xdg = wm.get_xdg_surface(&surface, &qh, ());
    let _toplevel = xdg.get_toplevel(&qh, ());
    let _scale = manager.get_fractional_scale(&surface, &qh, ());
    surface.commit();
    let mut app = App(tx);
    while queue.blocking_dispatch(&mut app).is_ok() {}
}

fn preferred_scale(outputs: &[&str], focus: (f64, f64)) -> u32 {
    let mut fx = Fixture::new(outputs);
    fx.set_focus_hint(focus.0, focus.1);
    let (tx, rx) = channel();
    let path = fx.socket_path();
    std::thread::spawn(move || run_client(path, tx));
    let mut scale = None;
    fx.pump_until("the preferred scale", |_| {
        scale = rx.try_recv().ok();
        scale.is_some()
    });
    scale.unwrap()
}

#[test]
fn a_window_is_told_its_outputs_fractional_scale() {
    assert_eq!(preferred_scale(&["1200x900*1.5@0,0"], (10.0, 10.0)), 180);
    // Two outputs: the window opens on the one nearest the focal point, and gets its scale.
    let two = ["800x600@0,0", "1600x1200*2@800,0"];
    assert_eq!(preferred_scale(&two, (1000.0, 100.0)), 240);
    assert_eq!(preferred_scale(&two, (100.0, 100.0)), 120);
}

impl Dispatch<WpFractionalScaleV1, ()> for App {
    fn event(
        app: &mut App,
        _: &WpFractionalScaleV1,
        event: wp_fractional_scale_v1::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<App>,
    ) {
        if let wp_fractional_scale_v1::Event::PreferredScale { scale } = event {
            let _ = app.0.send(scale);
        }
    }
}

answer_pings!(App);

ignore_events!(
    App:
    WlRegistry => GlobalListContents,
    WlCompositor => (),
    WlSurface => (),
    WpFractionalScaleManagerV1 => (),
    XdgSurface => (),
    XdgToplevel => (),
);
