//! Commands of more than one line through the real protocol, as agent hooks send them: a
//! here-document is accepted (a line feed or a tab in a parameter is no protocol error, any other
//! control character still is); a dangerous line pushed below 200 blank lines or a deep indent
//! is rated by the gate and reaches the dialog and the accessibility tree; a command too long to
//! see at once scrolls, and Approve waits until its last line was on screen.

mod harness;

use pcp_overlay::Control;
use pcp_protocol::client::ClientError;
use serde_json::json;

use harness::{Fixture, intent};

const ONE: &[&str] = &["1920x1080@0,0"];
const INVALID_JSON: u32 = 2;
const KEY_END: u32 = 107;

fn shell(command: &str) -> pcp_protocol::client::Submission {
    intent(
        "shell.exec",
        json!({"command": command, "cwd": "/home/u/project"}),
    )
}

#[test]
fn a_here_document_is_accepted_and_shown_line_by_line() {
    let mut fx = Fixture::new(ONE);
    let heredoc = "cat <<'EOF' > notes.txt\n\tfirst\nsecond\nEOF";
    let c = fx.submit(shell(heredoc));
    // Writing inside the working folder: no prompt, and no protocol error on the way.
    let d = fx.decision(&c);
    assert!(d.approved, "{d:?}");
    assert_eq!(fx.gate().active().map(|p| p.id), None);
    // Another control character is still refused, naming where.
    let raw = r#"{"command":"ls\r\nrm -rf ~","cwd":"/home/u/project"}"#;
    let bad = fx.client(move |c| Ok(vec![c.submit_raw("shell.exec", raw, None, None)?]));
    match fx.next_event(&bad) {
        Err(ClientError::Protocol { code, message, .. }) => {
            assert_eq!(code, INVALID_JSON);
            assert!(message.contains("U+000D") && message.contains("params.command"));
        }
        other => panic!("expected a protocol error, got {other:?}"),
    }
}

#[test]
fn a_dangerous_line_below_200_blank_lines_or_a_deep_indent_is_rated_and_shown() {
    let mut fx = Fixture::new(ONE);
    for (command, shown) in [
        (
            format!("echo hello{}rm -rf ~/photos", "\n".repeat(201)),
            "echo hello\n[200 blank lines]\nrm -rf ~/photos",
        ),
        (
            format!("echo hello\n{}rm -rf ~/photos", " ".repeat(300)),
            "echo hello\n<U+0020 ×300>rm -rf ~/photos",
        ),
        (
            format!("echo hello\n{}rm -rf ~/photos", " \u{a0}\t\n".repeat(200)),
            "echo hello\n[200 blank lines]\nrm -rf ~/photos",
        ),
    ] {
        let c = fx.submit(shell(&command));
        // Rated by the whole command: deleting outside the project asks for voice and visual.
        let (threshold, _) = fx.pending(&c);
        assert_eq!(threshold, "voice+visual", "{command:?}");
        assert_eq!(
            fx.dialog_content().action,
            format!("Run the shell command: {command}")
        );
        let reading = fx.accessible_reading().expect("accessibility is on");
        let action = reading.dialog.expect("the dialog is in the tree").action;
        assert_eq!(action, format!("Run the shell command: {shown}"));
        fx.advance_clock(1000);
        fx.click(Control::Deny);
        assert!(!fx.decision(&c).approved);
    }
}

#[test]
fn approve_waits_until_the_last_line_of_a_long_command_was_on_screen() {
    let mut fx = Fixture::new(&["800x480@0,0"]);
    let lines: Vec<String> = (1..=80).map(|i| format!("echo step {i}")).collect();
    let command = format!("bash <<'EOF'\n{}\nrm -rf ~/photos\nEOF", lines.join("\n"));
    let c = fx.submit(shell(&command));
    fx.pending(&c);
    fx.advance_clock(1000);
    // Held long enough for any press-and-hold, but the end was never on screen: nothing.
    fx.hold(Control::Approve, 1500);
    fx.pump();
    assert!(fx.gate().active().is_some(), "approved an unread command");
    assert!(!fx.dialog_live().unwrap().read_all);
    // Scrolled to the end (the press gave the dialog the keyboard), the same hold counts.
    assert!(fx.dialog_has_keyboard());
    fx.inject_key(KEY_END, true);
    fx.inject_key(KEY_END, false);
    fx.render();
    assert!(fx.dialog_live().unwrap().read_all, "scrolled to the end");
    fx.hold(Control::Approve, 1500);
    assert_eq!(fx.decision(&c).resolution, "user_approved");
}
