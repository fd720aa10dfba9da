//! A private D-Bus session bus for the tests that need one (the screen reader, the settings
//! portal): the daemon `dbus-run-session` starts, on its own, ended with the test.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// Ends a helper process when the test ends, passing or not.
pub struct Reaped(pub Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A private session bus (Debian `dbus-daemon`); its address.
pub fn private_session_bus() -> (Reaped, String) {
    let mut daemon = Command::new("dbus-daemon")
        .args(["--session", "--nofork", "--print-address=1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("dbus-daemon runs (Debian package `dbus-daemon`)");
    let mut line = String::new();
    BufReader::new(daemon.stdout.take().expect("its stdout"))
        .read_line(&mut line)
        .expect("dbus-daemon prints its address");
    let address = line.trim().to_string();
    assert!(!address.is_empty(), "dbus-daemon did not start");
    (Reaped(daemon), address)
}

/// Makes the bus at `address` this process's session bus, for the compositor's threads that
/// connect to it. Call it before the compositor starts, in a test binary with one test.
pub fn use_session_bus(address: &str) {
    // SAFETY: called before the compositor (and any thread that reads the environment) starts,
    // in a test binary whose only test this is.
    unsafe { std::env::set_var("DBUS_SESSION_BUS_ADDRESS", address) };
}

/// Turns accessibility on for the session at `address`, as a screen reader does at start: the
/// accessibility bus launcher (Debian `at-spi2-core`) is activated on the session bus to answer.
pub fn turn_accessibility_on(address: &str) {
    let out = Command::new("dbus-send")
        .env("DBUS_SESSION_BUS_ADDRESS", address)
        .args([
            "--session",
            "--print-reply",
            "--dest=org.a11y.Bus",
            "/org/a11y/bus",
            "org.freedesktop.DBus.Properties.Set",
            "string:org.a11y.Status",
            "string:IsEnabled",
            "variant:boolean:true",
        ])
        .output()
        .expect("dbus-send runs");
    assert!(
        out.status.success(),
        "at-spi2-core's bus launcher answers (Debian package `at-spi2-core`): {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
