//! The desktop's high-contrast preference reaches the dialog: a private session bus with the
//! settings portal's interface on it (`portal_settings.py`: bookworm's portal has no `contrast`
//! setting yet), the compositor reading org.freedesktop.appearance `contrast` at start and
//! following its `SettingChanged` signal, and the dialog's palette switching with it. Needs
//! Debian `dbus-daemon` and `python3-gi` (`cargo xtask setup` installs them).

mod harness;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;

use harness::dbus::{Reaped, private_session_bus, use_session_bus};
use harness::*;
use serde_json::json;

#[test]
fn the_dialog_turns_high_contrast_when_the_desktop_asks_and_back_when_it_stops() {
    let (_bus, address) = private_session_bus();
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/portal_settings.py");
    let mut portal = Command::new("/usr/bin/python3")
        .arg(&script)
        .arg("1")
        .env("DBUS_SESSION_BUS_ADDRESS", &address)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("python3 runs the portal (Debian package `python3-gi`)");
    let mut input = portal.stdin.take().expect("its stdin");
    let stdout = portal.stdout.take().expect("its stdout");
    let _portal = Reaped(portal);
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    assert_eq!(
        lines.recv_timeout(WAIT).expect("the portal starts"),
        "READY"
    );
    use_session_bus(&address);

    let mut fx = Fixture::new(&["1280x800@0,0"]);
    let defaults = pcp_overlay::Config::default();
    assert_ne!(defaults.themes.high_contrast, *defaults.palette());
    let client = fx.submit(intent("package.install", json!({"package": "cowsay"})));
    fx.pending(&client);
    // The portal said 1 (higher contrast) when asked at start.
    fx.pump_until("the desktop's contrast", |f| f.desktop_high_contrast());
    assert_eq!(fx.dialog_palette(), defaults.themes.high_contrast);

    // The user turns high contrast off on the desktop: the dialog follows, while it is up.
    writeln!(input, "contrast 0").expect("the portal reads");
    assert_eq!(
        lines.recv_timeout(WAIT).expect("the portal answers"),
        "SET 0"
    );
    fx.pump_until("the desktop's contrast to go", |f| {
        !f.desktop_high_contrast()
    });
    assert_eq!(fx.dialog_palette(), *defaults.palette());

    writeln!(input, "contrast 1").expect("the portal reads");
    assert_eq!(
        lines.recv_timeout(WAIT).expect("the portal answers"),
        "SET 1"
    );
    fx.pump_until("the desktop's contrast again", |f| {
        f.desktop_high_contrast()
    });
    assert_eq!(fx.dialog_palette(), defaults.themes.high_contrast);
}
