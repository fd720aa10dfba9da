//! `pcp-compositor --backend winit` for real: a private Xvfb (Debian `xvfb`, with Mesa's software
//! EGL/GLES) hosts the nested window; `wayland-info` and a protocol client connect to it; the dialog's
//! pixels are read back from the X screen (Xvfb's `-fbdir` XWD file). Built only with the `winit`
//! feature: `cargo test -p pcp-compositor --features winit`.
#![cfg(feature = "winit")]

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

/// Kills a child process when the test ends, passing or not.
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Waits up to 30 s for `cond`.
fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Gives the nested window the X input focus (what a window manager does on a click), moves the
/// X pointer to (x, y), waits `settle`, and presses and releases the key with X keycode
/// `keycode` through XTEST: real X input, which the nested window receives like a user's.
/// Moves the pointer to `x, y` on the nested window, waits `settle`, then sends `keys` (X
/// keycodes, pressed or released) in order.
fn press_keys(display: &str, x: i16, y: i16, settle: Duration, keys: &[(u8, bool)]) {
    use x11rb::connection::Connection;
    use x11rb::protocol::xproto::{
        ConnectionExt as _, InputFocus, KEY_PRESS_EVENT, KEY_RELEASE_EVENT, MOTION_NOTIFY_EVENT,
        MapState,
    };
    use x11rb::protocol::xtest::ConnectionExt;
    use x11rb::wrapper::ConnectionExt as _;
    let (conn, screen) = x11rb::connect(Some(display)).expect("connect to Xvfb");
    let root = conn.setup().roots[screen].root;
    let tree = conn.query_tree(root).unwrap().reply().unwrap();
    let window = tree
        .children
        .into_iter()
        .find(|w| {
            conn.get_window_attributes(*w)
                .unwrap()
                .reply()
                .is_ok_and(|a| a.map_state == MapState::VIEWABLE)
        })
        .expect("the nested window is mapped");
    conn.set_input_focus(InputFocus::PARENT, window, x11rb::CURRENT_TIME)
        .expect("focus");
    conn.xtest_fake_input(MOTION_NOTIFY_EVENT, 0, 0, root, x, y, 0)
        .expect("pointer motion");
    conn.sync().expect("motion delivered");
    std::thread::sleep(settle);
    for &(keycode, pressed) in keys {
        let kind = if pressed {
            KEY_PRESS_EVENT
        } else {
            KEY_RELEASE_EVENT
        };
        conn.xtest_fake_input(kind, keycode, 0, root, 0, 0, 0)
            .expect("key");
    }
    conn.sync().expect("XTEST input delivered");
}

/// Starts Xvfb on a free display; returns it and the display name.
fn xvfb(fbdir: &Path) -> (Reaped, String) {
    let mut child = Command::new("Xvfb")
        .args([
            "-displayfd",
            "1",
            "-screen",
            "0",
            "1024x768x24",
            "-nolisten",
            "tcp",
        ])
        .arg("-fbdir")
        .arg(fbdir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("Xvfb runs (Debian package `xvfb`)");
    let stdout = child.stdout.take().expect("Xvfb's stdout");
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("Xvfb prints its display number");
    let number = line.trim();
    assert!(!number.is_empty(), "Xvfb did not start");
    (Reaped(child), format!(":{number}"))
}

/// The X screen as Xvfb maps it: (width, height, RGB pixels), from its XWD file.
fn screen(fbdir: &Path) -> (usize, usize, Vec<[u8; 3]>) {
    let bytes = std::fs::read(fbdir.join("Xvfb_screen0")).expect("Xvfb's screen file");
    let field = |i: usize| {
        u32::from_be_bytes(bytes[i * 4..i * 4 + 4].try_into().expect("4 bytes")) as usize
    };
    let (header, width, height) = (field(0), field(4), field(5));
    let (lsb_first, bits, stride, colours) = (field(7) == 0, field(11), field(12), field(19));
    assert_eq!(bits, 32, "a 24-bit Xvfb screen has 32-bit pixels");
    let start = header + colours * 12;
    let mut pixels = Vec::with_capacity(width * height);
    for y in 0..height {
        for x in 0..width {
            let at = start + y * stride + x * 4;
            let p = &bytes[at..at + 4];
            pixels.push(if lsb_first {
                [p[2], p[1], p[0]]
            } else {
                [p[1], p[2], p[3]]
            });
        }
    }
    (width, height, pixels)
}

/// How many pixels of the window's area (the top-left 640×480, where an X server with no
/// window manager puts it) differ from `background`.
fn foreground_pixels(fbdir: &Path, background: [u8; 3]) -> usize {
    let (width, _, pixels) = screen(fbdir);
    (0..480)
        .flat_map(|y| (0..640).map(move |x| y * width + x))
        .filter(|&i| pixels[i] != background)
        .count()
}

fn private_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .unwrap();
    dir
}

#[test]
fn the_nested_window_serves_clients_and_draws_the_dialog_with_gles() {
    let dir = private_dir();
    let fbdir = dir.path().join("fb");
    std::fs::create_dir(&fbdir).unwrap();
    let (_x, display) = xvfb(&fbdir);

    let assets = Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets");
    let config: PathBuf = dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[manifests]\ndirs = [{:?}]\n[state]\npath = {:?}\n[timeouts]\nvisual_seconds = 5\n\
             [overlay]\nsystem_fonts = false\n[compositor]\nbackground = \"#204060\"\n",
            assets.join("capabilities.d"),
            dir.path().join("state.sqlite3")
        ),
    )
    .unwrap();
    let log = std::fs::File::create(dir.path().join("compositor.log")).unwrap();
    let compositor = Command::new(env!("CARGO_BIN_EXE_pcp-compositor"))
        .args([
            "--backend",
            "winit",
            "--output",
            "640x480",
            "--socket",
            "pcp-winit",
        ])
        .arg("--config")
        .arg(&config)
        .env("XDG_RUNTIME_DIR", dir.path())
        .env("DISPLAY", &display)
        .env("RUST_LOG", "info,pcp_compositor=trace")
        // The host is the X server: winit must not try a Wayland compositor first.
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("WAYLAND_SOCKET")
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap();
    let mut compositor = Reaped(compositor);
    let log_text = || std::fs::read_to_string(dir.path().join("compositor.log")).unwrap();
    wait_for("the socket", || {
        if let Ok(Some(status)) = compositor.0.try_wait() {
            panic!("the compositor exited ({status}):\n{}", log_text());
        }
        dir.path().join("pcp-winit").exists()
    });
    let background = [0x20, 0x40, 0x60];
    // The GLES renderer cleared the window to the configured background on the X screen; the
    // X pointer starts over the window, so the themed cursor may be on it (a few hundred
    // pixels).
    wait_for("the window's first frame", || {
        foreground_pixels(&fbdir, background) < 2_000
    });

    let client = |program: &str| {
        let mut c = Command::new(program);
        c.env("XDG_RUNTIME_DIR", dir.path())
            .env("WAYLAND_DISPLAY", "pcp-winit");
        c
    };
    let info = client("wayland-info").output().unwrap();
    let text = String::from_utf8_lossy(&info.stdout);
    assert!(text.contains("'pcp_intent_manager_v1'"), "{text}");
    assert_eq!(text.matches("'wl_output'").count(), 1, "{text}");

    let routine = common::submit(dir.path(), "pcp-winit", "file.write", json!({"path": "/a"}));
    assert!(routine.approved, "{routine:?}");

    // The window's seat can answer, so a privileged write is asked on screen (not refused as
    // unavailable); Escape pressed on the X server denies it through the dialog.
    let privileged = common::submit_in_background(
        dir.path(),
        "pcp-winit",
        "settings.change",
        json!({"key": "a", "value": "b"}),
    );
    wait_for("the dialog's pixels in the window", || {
        foreground_pixels(&fbdir, background) > 10_000
    });
    // X keycodes are evdev + 8: 133 Super_L, 36 Return, 9 Escape. The dialog takes the
    // keyboard only when given it: Super+Return, then Escape. The overlay's guard ignores input
    // for 750 ms after the dialog appears or moves (and the pointer moving it counts): wait past
    // it.
    press_keys(
        &display,
        320,
        240,
        Duration::from_millis(1500),
        &[
            (133, true),
            (36, true),
            (36, false),
            (133, false),
            (9, true),
            (9, false),
        ],
    );
    let privileged = privileged.join().unwrap();
    assert!(!privileged.approved, "{privileged:?}");
    assert_eq!(
        privileged.resolution,
        "user_denied",
        "{privileged:?}\n{}",
        log_text()
    );
    // The pointer moved into the window (XTEST): once the dialog has gone, what remains on the
    // background is the themed cursor (Adwaita's 24 px arrow: a few hundred pixels).
    wait_for("the dialog to go, the themed cursor drawn", || {
        (50..2_000).contains(&foreground_pixels(&fbdir, background))
    });

    // Unanswered, the next one times out (the timeout is 5 s in this config).
    let unanswered = common::submit(
        dir.path(),
        "pcp-winit",
        "settings.change",
        json!({"key": "a", "value": "c"}),
    );
    assert!(!unanswered.approved, "{unanswered:?}");
    assert_eq!(unanswered.resolution, "confirmation.timeout");

    // A client's shm window is drawn by the GLES renderer too.
    let shm = client("weston-simple-shm")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let _shm = Reaped(shm);
    wait_for("weston-simple-shm's pixels in the window", || {
        foreground_pixels(&fbdir, background) > 10_000
    });
    assert!(compositor.0.try_wait().unwrap().is_none(), "{}", log_text());
}
