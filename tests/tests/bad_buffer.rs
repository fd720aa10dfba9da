//! A client whose shm buffer cannot be read (its file truncated after the pool was made, as
//! WLCS's `BadBufferTest.test_truncated_shm_file` does) cannot take the dialog off the screen:
//! the frame that cannot draw its window draws the dialog alone, and the waiting prompt stays
//! answerable. (Found by the WLCS run with a prompt waiting: the prompt was denied
//! `confirmation_unavailable`.)

mod harness;

use std::io::Write;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::net::UnixStream;

use pcp_overlay::Control;
use serde_json::json;
use wayland_client::globals::{GlobalListContents, registry_queue_init};
use wayland_client::protocol::wl_buffer::WlBuffer;
use wayland_client::protocol::wl_compositor::WlCompositor;
use wayland_client::protocol::wl_registry::WlRegistry;
use wayland_client::protocol::wl_shm::{self, WlShm};
use wayland_client::protocol::wl_shm_pool::WlShmPool;
use wayland_client::protocol::wl_surface::WlSurface;
use wayland_client::{Connection, Dispatch, QueueHandle};
use wayland_protocols::xdg::shell::client::xdg_surface::{self, XdgSurface};
use wayland_protocols::xdg::shell::client::xdg_toplevel::XdgToplevel;
use wayland_protocols::xdg::shell::client::xdg_wm_base::XdgWmBase;

use harness::client::{answer_pings, ignore_events};
use harness::{Fixture, intent};

#[derive(Default)]
struct App {
    configured: Option<u32>,
}

/// A window whose buffer's file is emptied before the compositor reads it.
fn run_liar(path: std::path::PathBuf) {
    let conn = Connection::from_socket(UnixStream::connect(path).unwrap()).unwrap();
    let (globals, mut queue) = registry_queue_init::<App>(&conn).unwrap();
    let qh = queue.handle();
    let compositor: WlCompositor = globals.bind(&qh, 4..=5, ()).unwrap();
    let shm: WlShm = globals.bind(&qh, 1..=1, ()).unwrap();
    let wm: XdgWmBase = globals.bind(&qh, 1..=6, ()).unwrap();
    let surface = compositor.create_surface(&qh, ());
    let xdg = wm.get_xdg_surface(&surface, &qh, ());
    let _toplevel = xdg.get_toplevel(&qh, ());
    surface.commit();
    let mut app = App::default();
    while app.configured.is_none() {
        queue.blocking_dispatch(&mut app).unwrap();
    }
    xdg.ack_configure(app.configured.unwrap());
    let (w, h) = (400, 300);
    // SAFETY: memfd_create with a NUL-terminated name; the result is checked.
    let raw = unsafe { libc::memfd_create(c"pcp-liar".as_ptr(), libc::MFD_CLOEXEC) };
    assert!(raw >= 0);
    // SAFETY: a fresh descriptor nobody else owns.
    let mut file = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(raw) });
    file.write_all(&[0x80; 400 * 300 * 4]).unwrap();
    let pool = shm.create_pool(file.as_fd(), w * h * 4, &qh, ());
    let buffer = pool.create_buffer(0, w, h, w * 4, wl_shm::Format::Xrgb8888, &qh, ());
    // SAFETY: truncating our own file; the compositor's mapping now reads past its end.
    assert_eq!(unsafe { libc::ftruncate(file.as_raw_fd(), 0) }, 0);
    surface.attach(Some(&buffer), 0, 0);
    surface.damage_buffer(0, 0, w, h);
    surface.commit();
    while queue.blocking_dispatch(&mut app).is_ok() {}
}

#[test]
fn a_window_whose_buffer_cannot_be_read_does_not_take_the_dialog_away() {
    let mut fx = Fixture::new(&["1024x768@0,0"]);
    let c = fx.submit(intent("settings.change", json!({"key": "k", "value": "v"})));
    fx.pending(&c);
    let path = fx.socket_path();
    std::thread::spawn(move || run_liar(path));
    fx.pump_until("the liar's window", |fx| fx.window_count() == 1);
    for _ in 0..20 {
        fx.pump();
    }
    // Drawn with the unreadable buffer in the scene: the dialog is on screen.
    let capture = fx.capture(0);
    let (ax, ay) = fx.control_centre(Control::Approve);
    assert!(
        !harness::is_background(capture.pixel(ax as u32, ay as u32)),
        "the dialog is drawn"
    );
    assert!(fx.dialog_open(), "the prompt still waits");
    fx.advance_clock(1000);
    fx.click(Control::Deny);
    assert_eq!(fx.decision(&c).resolution, "user_denied");
}

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
            app.configured = Some(serial);
        }
    }
}

answer_pings!(App);

ignore_events!(
    App:
    WlRegistry => GlobalListContents,
    WlCompositor => (),
    WlShm => (),
    WlShmPool => (),
    WlBuffer => (),
    WlSurface => (),
    XdgToplevel => (),
);
