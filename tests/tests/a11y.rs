//! A real screen reader's view of the dialog: a private session bus (`dbus-daemon --session`, as
//! `dbus-run-session` starts it), Debian's at-spi2-core on it (the accessibility bus launcher and
//! registry, started by D-Bus activation once accessibility is turned on), the compositor with
//! its accessibility tree, and `a11y_reader.py`, a pyatspi client, reading the dialog of a
//! privileged intent, watching the focus follow the seat's Tab, and pressing Approve through
//! AT-SPI — which must not approve, and makes the dialog's live region say how to answer
//! instead. Deny is enabled as soon as the dialog is shown. Needs Debian `at-spi2-core`, `dbus-daemon` and
//! `python3-pyatspi` (`cargo xtask setup` installs them).

mod harness;

use std::io::{BufRead, BufReader, Write};
use std::process::{ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::time::Instant;

use harness::dbus::{Reaped, private_session_bus, turn_accessibility_on, use_session_bus};
use harness::*;
use serde_json::json;

/// The reader script's lines, as they come.
struct Reader {
    _child: Reaped,
    input: ChildStdin,
    lines: Receiver<String>,
}

impl Reader {
    /// Pumps the compositor until the reader prints a line starting with `expected`; returns
    /// the rest of it.
    fn expect(&mut self, fx: &mut Fixture, expected: &str) -> String {
        let start = Instant::now();
        loop {
            match self.lines.try_recv() {
                Ok(line) => {
                    assert!(
                        line.starts_with(expected),
                        "the screen reader said {line:?}, expected {expected}"
                    );
                    return line[expected.len()..].trim().to_string();
                }
                Err(TryRecvError::Disconnected) => {
                    panic!("the screen reader ended before saying {expected}")
                }
                Err(TryRecvError::Empty) => {}
            }
            assert!(
                start.elapsed() < WAIT * 2,
                "timed out waiting for the screen reader to say {expected}"
            );
            fx.pump();
        }
    }

    fn tell(&mut self, line: &str) {
        writeln!(self.input, "{line}").expect("the screen reader reads");
    }
}

#[test]
fn a_screen_reader_reads_the_dialog_and_cannot_answer_it() {
    let (_bus, address) = private_session_bus();
    // The compositor's adapter connects to the session bus named here, on its own thread.
    use_session_bus(&address);
    turn_accessibility_on(&address);
    let mut fx = Fixture::with_config(
        &["1280x800@0,0"],
        "accessibility = true\n[queue]\nper_client = 2\n",
    );

    let app = std::env::current_exe()
        .expect("the test binary")
        .file_name()
        .expect("a file name")
        .to_string_lossy()
        .into_owned();
    let action = "Install the package cowsay";
    let (next_action, last_action) = ("Install the package sl", "Install the package lolcat");
    let requester = std::env::current_exe()
        .expect("the test binary")
        .to_string_lossy()
        .into_owned();
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/a11y_reader.py");
    // Debian's python3-pyatspi is for the system interpreter.
    let mut child = Command::new("/usr/bin/python3")
        .arg(&script)
        .args([
            &app,
            action,
            &requester,
            "Approve",
            "Deny",
            next_action,
            last_action,
        ])
        .env("DBUS_SESSION_BUS_ADDRESS", &address)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("python3 runs the reader (Debian package `python3-pyatspi`)");
    let input = child.stdin.take().expect("its stdin");
    let stdout = child.stdout.take().expect("its stdout");
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut reader = Reader {
        _child: Reaped(child),
        input,
        lines,
    };

    reader.expect(&mut fx, "READY");
    let client = fx.submit(intent("package.install", json!({"package": "cowsay"})));
    fx.pending(&client);
    reader.tell("SUBMITTED");
    let shown = reader.expect(&mut fx, "FOUND");
    assert_eq!(shown, format!("Confirmation needed: {action}"));

    // The deliberate act that gives the dialog the keyboard, then Tab: the focus ring on Deny.
    fx.advance_clock(1000);
    fx.press_focus_shortcut();
    fx.inject_key(KEY_TAB, true);
    fx.inject_key(KEY_TAB, false);
    assert_eq!(
        fx.dialog_live().and_then(|l| l.focus),
        Some(pcp_overlay::Control::Deny)
    );
    reader.tell("TABBED");
    let refused = reader.expect(&mut fx, "ACTED");
    // The refusal is said: the dialog's live region tells how to answer instead.
    assert_eq!(
        refused,
        "The dialog does not take answers from assistive software. Press Super+Return to give \
         it the keyboard, then Tab to Approve and Enter, or Escape to deny; or answer by voice."
    );

    // GrabFocus and DoAction on Approve reached the compositor and were refused: the prompt
    // still waits and the focus stayed on Deny (and the client's next event is the denial).
    let (refused, _) = fx.accessibility_counters();
    assert!(refused >= 2, "both requests reached the adapter: {refused}");
    assert!(fx.gate().active().is_some(), "the prompt still waits");
    assert_eq!(
        fx.dialog_live().and_then(|l| l.focus),
        Some(pcp_overlay::Control::Deny)
    );

    // The user answers with the seat: Escape denies.
    fx.inject_key(KEY_ESC, true);
    fx.inject_key(KEY_ESC, false);
    let decision = fx.decision(&client);
    assert!(!decision.approved);
    assert_eq!(decision.resolution, "user_denied");
    reader.tell("DECIDED");
    let said = reader.expect(&mut fx, "EMPTIED");
    assert_eq!(said, format!("Denied: {action}"));

    // Two prompts, one waiting behind the other: the badge is read, and denying the first
    // shows the second in the same round — both the denial and the new prompt are announced.
    let next = fx.submit(intent("package.install", json!({"package": "sl"})));
    fx.pending(&next);
    let last = fx.submit(intent("package.install", json!({"package": "lolcat"})));
    fx.pending(&last);
    assert_eq!(fx.queued(), 1);
    reader.tell("QUEUED");
    reader.expect(&mut fx, "BADGE");
    // No wait for the click guard: a refusal never waits for it.
    fx.press_focus_shortcut();
    fx.inject_key(KEY_ESC, true);
    fx.inject_key(KEY_ESC, false);
    assert!(!fx.decision(&next).approved);
    reader.tell("DENIED");
    reader.expect(&mut fx, "NEXT");
}
