//! presentation-time: a client is told the compositor's presentation clock (CLOCK_MONOTONIC)
//! and, for a frame it asked about, when that frame was shown — a time by that clock between
//! its commit and the moment the test reads it, the output's refresh, and rising sequence
//! numbers.

mod harness;

use std::os::unix::net::UnixStream;
use std::sync::mpsc::{Sender, channel};
use std::time::Duration;

use wayland_client::globals::{GlobalListContents, registry_queue_init};
use wayland_client::protocol::wl_buffer::WlBuffer;
use wayland_client::protocol::wl_compositor::WlCompositor;
use wayland_client::protocol::wl_output::WlOutput;
use wayland_client::protocol::wl_registry::WlRegistry;
use wayland_client::protocol::wl_shm::WlShm;
use wayland_client::protocol::wl_shm_pool::WlShmPool;
use wayland_client::protocol::wl_surface::WlSurface;
use wayland_client::{Connection, Dispatch, QueueHandle};
use wayland_protocols::wp::presentation_time::client::wp_presentation::{self, WpPresentation};
use wayland_protocols::wp::presentation_time::client::wp_presentation_feedback::{
    self, WpPresentationFeedback,
};
use wayland_protocols_wlr::layer_shell::v1::client::zwlr_layer_shell_v1::{self, ZwlrLayerShellV1};
use wayland_protocols_wlr::layer_shell::v1::client::zwlr_layer_surface_v1::{
    self, ZwlrLayerSurfaceV1,
};

use harness::Fixture;
use harness::client::{ignore_events, shm_buffer};

/// What the client heard.
#[derive(Debug, Clone, PartialEq)]
enum Heard {
    Clock(u32),
    /// When (ns by the presentation clock), the refresh (ns), the sequence number.
    Presented(u128, u32, u64),
    Discarded,
    /// CLOCK_MONOTONIC (ns) just before the commit the feedback is for.
    Committed(u128),
}

struct App {
    tx: Sender<Heard>,
    configured: Option<u32>,
}

fn monotonic_ns() -> u128 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec it is given.
    assert_eq!(
        unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) },
        0
    );
    ts.tv_sec as u128 * 1_000_000_000 + ts.tv_nsec as u128
}

fn run_client(path: std::path::PathBuf, tx: Sender<Heard>) {
    let conn = Connection::from_socket(UnixStream::connect(path).unwrap()).unwrap();
    let (globals, mut queue) = registry_queue_init::<App>(&conn).unwrap();
    let qh = queue.handle();
    let compositor: WlCompositor = globals.bind(&qh, 4..=5, ()).unwrap();
    let shm: WlShm = globals.bind(&qh, 1..=1, ()).unwrap();
    let layers: ZwlrLayerShellV1 = globals.bind(&qh, 1..=4, ()).unwrap();
    let presentation: WpPresentation = globals.bind(&qh, 1..=1, ()).unwrap();
    let surface = compositor.create_surface(&qh, ());
    let layer = layers.get_layer_surface(
        &surface,
        None,
        zwlr_layer_shell_v1::Layer::Top,
        "pcp-presentation-test".into(),
        &qh,
        (),
    );
    layer.set_size(64, 64);
    surface.commit();
    let mut app = App {
        tx: tx.clone(),
        configured: None,
    };
    while app.configured.is_none() {
        queue.blocking_dispatch(&mut app).unwrap();
    }
    layer.ack_configure(app.configured.unwrap());
    // Three frames, each with feedback asked.
    for _ in 0..3 {
        let b = shm_buffer(&shm, &qh, 64, 64, [0x40, 0x80, 0xc0, 0xff]);
        surface.attach(Some(&b), 0, 0);
        surface.damage_buffer(0, 0, 64, 64);
        presentation.feedback(&surface, &qh, ());
        tx.send(Heard::Committed(monotonic_ns())).unwrap();
        surface.commit();
        queue.roundtrip(&mut app).unwrap();
        std::thread::sleep(Duration::from_millis(30));
        queue.roundtrip(&mut app).unwrap();
    }
    while queue.blocking_dispatch(&mut app).is_ok() {}
}

#[test]
fn a_frame_is_reported_presented_by_the_monotonic_clock() {
    let mut fx = Fixture::new(&["640x480@0,0"]);
    let (tx, rx) = channel();
    let path = fx.socket_path();
    std::thread::spawn(move || run_client(path, tx));
    let mut heard = Vec::new();
    let start = std::time::Instant::now();
    while heard
        .iter()
        .filter(|h| matches!(h, Heard::Presented(..)))
        .count()
        < 3
    {
        assert!(start.elapsed() < harness::WAIT, "heard only {heard:?}");
        fx.render();
        fx.pump();
        heard.extend(rx.try_iter());
    }
    let read_at = monotonic_ns();
    assert!(
        heard.contains(&Heard::Clock(libc::CLOCK_MONOTONIC as u32)),
        "{heard:?}"
    );
    assert!(!heard.contains(&Heard::Discarded), "{heard:?}");
    let committed: Vec<u128> = heard
        .iter()
        .filter_map(|h| match h {
            Heard::Committed(t) => Some(*t),
            _ => None,
        })
        .collect();
    let presented: Vec<(u128, u32, u64)> = heard
        .iter()
        .filter_map(|h| match h {
            Heard::Presented(t, r, s) => Some((*t, *r, *s)),
            _ => None,
        })
        .collect();
    for (i, (t, refresh, _)) in presented.iter().enumerate() {
        assert!(
            committed[i] <= *t && *t <= read_at,
            "frame {i} presented at {t}, committed at {}, read at {read_at}",
            committed[i]
        );
        // The 60 Hz mode of the virtual output.
        assert_eq!(*refresh, 16_666_666);
    }
    assert!(
        presented.windows(2).all(|w| w[0].2 < w[1].2),
        "rising sequence numbers: {presented:?}"
    );
}

impl Dispatch<WpPresentation, ()> for App {
    fn event(
        app: &mut App,
        _: &WpPresentation,
        event: wp_presentation::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<App>,
    ) {
        if let wp_presentation::Event::ClockId { clk_id } = event {
            let _ = app.tx.send(Heard::Clock(clk_id));
        }
    }
}

impl Dispatch<WpPresentationFeedback, ()> for App {
    fn event(
        app: &mut App,
        _: &WpPresentationFeedback,
        event: wp_presentation_feedback::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<App>,
    ) {
        match event {
            wp_presentation_feedback::Event::Presented {
                tv_sec_hi,
                tv_sec_lo,
                tv_nsec,
                refresh,
                seq_hi,
                seq_lo,
                ..
            } => {
                let secs = (u128::from(tv_sec_hi) << 32) | u128::from(tv_sec_lo);
                let seq = (u64::from(seq_hi) << 32) | u64::from(seq_lo);
                let _ = app.tx.send(Heard::Presented(
                    secs * 1_000_000_000 + u128::from(tv_nsec),
                    refresh,
                    seq,
                ));
            }
            wp_presentation_feedback::Event::Discarded => {
                let _ = app.tx.send(Heard::Discarded);
            }
            _ => {}
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
        if let zwlr_layer_surface_v1::Event::Configure { serial, .. } = event {
            app.configured = Some(serial);
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
    WlOutput => (),
    ZwlrLayerShellV1 => (),
);
