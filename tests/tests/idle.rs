//! Idle: swayidle (from Debian) is told the seat went idle after its timeout and that it
//! resumed at the next input; while a client holds an idle inhibitor on its surface no idle is
//! reported, and once it lets go, idle comes again.

mod harness;

use std::os::unix::net::UnixStream;
use std::sync::mpsc::{Sender, channel};
use std::time::{Duration, Instant};

use harness::Fixture;
use harness::apps::App;
use harness::client::ignore_events;
use wayland_client::Connection;
use wayland_client::globals::{GlobalListContents, registry_queue_init};
use wayland_client::protocol::wl_compositor::WlCompositor;
use wayland_client::protocol::wl_registry::WlRegistry;
use wayland_client::protocol::wl_surface::WlSurface;
use wayland_protocols::wp::idle_inhibit::zv1::client::zwp_idle_inhibit_manager_v1::ZwpIdleInhibitManagerV1;
use wayland_protocols::wp::idle_inhibit::zv1::client::zwp_idle_inhibitor_v1::ZwpIdleInhibitorV1;

struct Client;

/// Holds an idle inhibitor until told to let go (a message on `release`), then stays connected.
fn run_inhibitor(
    path: std::path::PathBuf,
    held: Sender<()>,
    release: std::sync::mpsc::Receiver<()>,
) {
    let conn = Connection::from_socket(UnixStream::connect(path).unwrap()).unwrap();
    let (globals, mut queue) = registry_queue_init::<Client>(&conn).unwrap();
    let qh = queue.handle();
    let compositor: WlCompositor = globals.bind(&qh, 4..=5, ()).unwrap();
    let manager: ZwpIdleInhibitManagerV1 = globals.bind(&qh, 1..=1, ()).unwrap();
    let surface = compositor.create_surface(&qh, ());
    let inhibitor = manager.create_inhibitor(&surface, &qh, ());
    queue.roundtrip(&mut Client).unwrap();
    held.send(()).unwrap();
    release.recv().unwrap();
    inhibitor.destroy();
    queue.roundtrip(&mut Client).unwrap();
    held.send(()).unwrap();
    while queue.blocking_dispatch(&mut Client).is_ok() {}
}

/// Pumps for `time` of wall time, collecting swayidle's lines.
fn serve(fx: &mut Fixture, idle: &mut App, time: Duration) {
    let start = Instant::now();
    while start.elapsed() < time {
        fx.pump();
        idle.new_lines();
    }
}

#[test]
fn swayidle_goes_idle_resumes_on_input_and_waits_while_an_inhibitor_is_held() {
    let mut fx = Fixture::new(&["640x480@0,0"]);
    let mut command = fx.command("swayidle");
    command.args(["-w", "timeout", "1", "echo idle", "resume", "echo resumed"]);
    let mut idle = fx.spawn_app(command);
    idle.wait_line(&mut fx, "idle");
    fx.inject_pointer_motion(10.0, 10.0);
    idle.wait_line(&mut fx, "resumed");

    // An inhibitor held: no idle for well past the timeout.
    let (held_tx, held) = channel();
    let (release_tx, release) = channel();
    let path = fx.socket_path();
    std::thread::spawn(move || run_inhibitor(path, held_tx, release));
    fx.pump_until("the inhibitor", |_| held.try_recv().is_ok());
    fx.inject_pointer_motion(20.0, 20.0);
    let before = idle.seen.len();
    serve(&mut fx, &mut idle, Duration::from_millis(2500));
    assert_eq!(
        idle.seen[before..].iter().filter(|l| *l == "idle").count(),
        0,
        "idle while inhibited: {:?}",
        idle.seen
    );
    // Let go: idle comes again.
    release_tx.send(()).unwrap();
    fx.pump_until("the inhibitor to go", |_| held.try_recv().is_ok());
    let start = Instant::now();
    while idle.seen[before..].iter().all(|l| l != "idle") {
        assert!(
            start.elapsed() < harness::WAIT,
            "no idle after release: {:?}",
            idle.seen
        );
        fx.pump();
        idle.new_lines();
    }
}

ignore_events!(
    Client:
    WlRegistry => GlobalListContents,
    WlCompositor => (),
    WlSurface => (),
    ZwpIdleInhibitManagerV1 => (),
    ZwpIdleInhibitorV1 => (),
);
