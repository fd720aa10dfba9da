//! A client with a toplevel asks: its verified identity (pid and uid from the socket, executable
//! from /proc) keys it, and its self-declared app id is kept apart as such, on the
//! prompt and in the audit log; the dialog does not take the keyboard from the client when it
//! appears, and once given it (Super+Return) the client receives no keys, not even the release
//! of the key that answered.

mod harness;

use std::os::unix::net::UnixStream;
use std::sync::mpsc::{Receiver, Sender, channel};

use pcp_protocol::generated::client::pcp_intent_manager_v1::PcpIntentManagerV1;
use pcp_protocol::generated::client::pcp_intent_v1::{self, PcpIntentV1};
use wayland_client::globals::{GlobalListContents, registry_queue_init};
use wayland_client::protocol::wl_compositor::WlCompositor;
use wayland_client::protocol::wl_keyboard::{self, WlKeyboard};
use wayland_client::protocol::wl_registry::WlRegistry;
use wayland_client::protocol::wl_seat::WlSeat;
use wayland_client::protocol::wl_surface::WlSurface;
use wayland_client::{Connection, Dispatch, QueueHandle, WEnum};
use wayland_protocols::xdg::shell::client::xdg_surface::{self, XdgSurface};
use wayland_protocols::xdg::shell::client::xdg_toplevel::XdgToplevel;
use wayland_protocols::xdg::shell::client::xdg_wm_base::XdgWmBase;

use harness::Fixture;
use harness::client::{answer_pings, ignore_events};

#[derive(Debug, Clone, PartialEq)]
enum Seen {
    Enter,
    Leave,
    Key(u32, bool),
    Pending,
    Denied(String),
}

struct App {
    tx: Sender<Seen>,
}

fn run_client(path: std::path::PathBuf, tx: Sender<Seen>) {
    run_client_named(path, tx, "org.example.Agent".into())
}

fn run_client_named(path: std::path::PathBuf, tx: Sender<Seen>, app_id: String) {
    let conn = Connection::from_socket(UnixStream::connect(path).unwrap()).unwrap();
    let (globals, mut queue) = registry_queue_init::<App>(&conn).unwrap();
    let qh = queue.handle();
    let compositor: WlCompositor = globals.bind(&qh, 4..=5, ()).unwrap();
    let wm: XdgWmBase = globals.bind(&qh, 1..=6, ()).unwrap();
    let seat: WlSeat = globals.bind(&qh, 1..=7, ()).unwrap();
    let manager: PcpIntentManagerV1 = globals.bind(&qh, 1..=1, ()).unwrap();
    let _keyboard = seat.get_keyboard(&qh, ());
    let surface = compositor.create_surface(&qh, ());
    let xdg = wm.get_xdg_surface(&surface, &qh, ());
    let toplevel = xdg.get_toplevel(&qh, ());
    toplevel.set_app_id(app_id);
    toplevel.set_title("agent".into());
    surface.commit();
    let mut app = App { tx };
    queue.roundtrip(&mut app).unwrap();
    let _intent = manager.submit(
        "settings.change".into(),
        r#"{"key":"a","value":"b"}"#.into(),
        None,
        None,
        &qh,
        (),
    );
    while queue.blocking_dispatch(&mut app).is_ok() {}
}

fn next(fx: &mut Fixture, rx: &Receiver<Seen>) -> Seen {
    let start = std::time::Instant::now();
    loop {
        if let Ok(s) = rx.try_recv() {
            return s;
        }
        assert!(
            start.elapsed() < harness::WAIT,
            "timed out waiting for the client"
        );
        fx.pump();
    }
}

/// Pumps a little and returns everything the client saw meanwhile.
fn drain(fx: &mut Fixture, rx: &Receiver<Seen>) -> Vec<Seen> {
    for _ in 0..20 {
        fx.pump();
    }
    rx.try_iter().collect()
}

#[test]
fn the_prompt_names_the_app_and_the_client_gets_no_input_while_it_is_up() {
    const KEY_A: u32 = 30;
    const KEY_ESC: u32 = 1;
    let mut fx = Fixture::new(&["1024x768@0,0"]);
    let (tx, rx) = channel();
    let path = fx.socket_path();
    std::thread::spawn(move || run_client(path, tx));

    assert_eq!(
        next(&mut fx, &rx),
        Seen::Enter,
        "the new toplevel gets the keyboard"
    );
    assert_eq!(next(&mut fx, &rx), Seen::Pending);
    assert!(fx.dialog_open());
    // The dialog takes no keyboard by appearing: keys still reach the client.
    fx.inject_key(KEY_A, true);
    fx.inject_key(KEY_A, false);
    assert_eq!(
        drain(&mut fx, &rx),
        [Seen::Key(KEY_A, true), Seen::Key(KEY_A, false)]
    );
    // Super+Return gives the dialog the keyboard.
    fx.press_focus_shortcut();
    assert_eq!(
        drain(&mut fx, &rx),
        [Seen::Key(harness::KEY_LEFTMETA, true), Seen::Leave],
        "the dialog takes the keyboard when given it"
    );

    let client = fx.gate().active().unwrap().intent.client.clone();
    assert_eq!(client.declared_app_id.as_deref(), Some("org.example.Agent"));
    assert_eq!(client.pid, Some(std::process::id()));
    assert_eq!(client.uid, Some(own_uid()));
    let exe = std::env::current_exe().unwrap();
    assert_eq!(client.executable.as_deref(), exe.to_str());
    assert_eq!(
        client.app_key(),
        format!("exe:{}:{}", own_uid(), exe.display()),
        "keyed by what the kernel knows, not by the declared app id"
    );
    assert_eq!(client.display_name(), exe.to_str().unwrap());

    // Keys while the dialog has the keyboard go to the dialog only.
    fx.inject_key(KEY_A, true);
    fx.inject_key(KEY_A, false);
    fx.advance_clock(1000);
    fx.inject_key(KEY_ESC, true);
    let seen = drain(&mut fx, &rx);
    assert!(
        seen.contains(&Seen::Denied("user_denied".into())),
        "Escape denied: {seen:?}"
    );
    assert!(!seen.iter().any(|s| matches!(s, Seen::Key(..))), "{seen:?}");
    // The dialog is gone: the client has the keyboard back...
    assert_eq!(seen.last(), Some(&Seen::Enter), "{seen:?}");
    // ...but never sees the release of the Escape that answered.
    fx.inject_key(KEY_ESC, false);
    fx.inject_key(KEY_A, true);
    let seen = drain(&mut fx, &rx);
    assert_eq!(seen, [Seen::Key(KEY_A, true)]);

    let audit = fx.gate().store().audit_since(0).unwrap();
    let record = audit
        .iter()
        .rev()
        .find(|r| r.capability == "settings.change")
        .unwrap();
    assert_eq!(
        record.client.declared_app_id.as_deref(),
        Some("org.example.Agent")
    );
    assert_eq!(record.client.pid, Some(std::process::id()));
}

/// Our uid as the kernel reports it in /proc.
fn own_uid() -> u32 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("Uid:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
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
            wl_keyboard::Event::Enter { .. } => Seen::Enter,
            wl_keyboard::Event::Leave { .. } => Seen::Leave,
            wl_keyboard::Event::Key { key, state, .. } => {
                Seen::Key(key, state == WEnum::Value(wl_keyboard::KeyState::Pressed))
            }
            _ => return,
        };
        let _ = app.tx.send(seen);
    }
}

impl Dispatch<PcpIntentV1, ()> for App {
    fn event(
        app: &mut App,
        _: &PcpIntentV1,
        event: pcp_intent_v1::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<App>,
    ) {
        let seen = match event {
            pcp_intent_v1::Event::Pending { .. } => Seen::Pending,
            pcp_intent_v1::Event::Denied { resolution, .. } => {
                Seen::Denied(pcp_protocol::client::resolution_name(resolution))
            }
            _ => return,
        };
        let _ = app.tx.send(seen);
    }
}

answer_pings!(App);

impl Dispatch<XdgSurface, ()> for App {
    fn event(
        _: &mut App,
        xdg: &XdgSurface,
        event: xdg_surface::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<App>,
    ) {
        if let xdg_surface::Event::Configure { serial } = event {
            xdg.ack_configure(serial);
        }
    }
}

ignore_events!(
    App:
    WlRegistry => GlobalListContents,
    WlCompositor => (),
    WlSurface => (),
    WlSeat => (),
    XdgToplevel => (),
    PcpIntentManagerV1 => (),
);

/// A client calling itself "Firefox" padded to 300 characters cannot push who it really is off
/// the dialog: the requester is the verified identity (full executable path and pid, "not
/// sandboxed"), drawn whole on an 800×480 output; the declared name is secondary text.
#[test]
fn a_300_character_declared_app_id_cannot_hide_the_verified_identity() {
    let mut fx = Fixture::new(&["800x480@0,0"]);
    let (tx, rx) = channel();
    let path = fx.socket_path();
    let declared = format!("org.mozilla.firefox{}", "x".repeat(281));
    assert_eq!(declared.chars().count(), 300);
    let sent = declared.clone();
    std::thread::spawn(move || run_client_named(path, tx, sent));
    loop {
        if next(&mut fx, &rx) == Seen::Pending {
            break;
        }
    }
    let client = fx.gate().active().unwrap().intent.client.clone();
    assert_eq!(client.declared_app_id.as_deref(), Some(declared.as_str()));
    let exe = std::env::current_exe().unwrap();
    assert_eq!(
        fx.dialog_requester(),
        pcp_overlay::Requester::Unconfined {
            executable: exe.display().to_string(),
            pid: std::process::id(),
        }
    );
    let png = fx.save_png(0, "identity-300-char-app-id");
    eprintln!("dialog: {}", png.display());
}
