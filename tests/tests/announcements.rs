//! What the accessibility tree says as prompts come and go, read from the compositor (the
//! AT-SPI side is tests/a11y.rs): a polite announcement when a prompt appears and when it is
//! approved, denied or times out, and no dialog in the tree once it is decided.

mod harness;

use harness::*;
use pcp_overlay::Control;
use serde_json::json;

const ONE: &[&str] = &["1280x800@0,0"];

/// The announcement and whether a dialog is in the tree.
fn said(fx: &mut Fixture) -> (String, bool) {
    let r = fx.accessible_reading().expect("accessibility is on");
    (r.announcement, r.dialog.is_some())
}

fn shown(fx: &mut Fixture, value: &str) -> AsyncIntent {
    let c = fx.submit(intent(
        "settings.change",
        json!({"key": "k", "value": value}),
    ));
    fx.pending(&c);
    let action = format!("Set k to {value}");
    assert_eq!(said(fx), (format!("Confirmation needed: {action}"), true));
    let r = fx.accessible_reading().unwrap();
    let d = r.dialog.unwrap();
    assert_eq!(d.action, action);
    assert_eq!(d.seconds_left, 30);
    c
}

#[test]
fn each_prompt_is_announced_and_so_is_how_it_ended() {
    let mut fx = Fixture::new(ONE);
    assert_eq!(said(&mut fx), (String::new(), false));

    let c = shown(&mut fx, "approved");
    fx.advance_clock(1000);
    fx.click(Control::Approve);
    assert!(fx.decision(&c).approved);
    assert_eq!(said(&mut fx), ("Approved: Set k to approved".into(), false));

    let c = shown(&mut fx, "denied");
    fx.advance_clock(1000);
    fx.click(Control::Deny);
    assert!(!fx.decision(&c).approved);
    assert_eq!(said(&mut fx), ("Denied: Set k to denied".into(), false));

    let c = shown(&mut fx, "late");
    fx.advance_clock(10_000);
    // The countdown is read as it is drawn.
    let left = fx
        .accessible_reading()
        .unwrap()
        .dialog
        .unwrap()
        .seconds_left;
    assert_eq!(Some(left), fx.seconds_left());
    assert_eq!(left, 20);
    fx.advance_clock(21_000);
    assert_eq!(fx.decision(&c).resolution, "confirmation.timeout");
    assert_eq!(
        said(&mut fx),
        ("Timed out, denied: Set k to late".into(), false)
    );
}

#[test]
fn without_accessibility_nothing_is_read() {
    let mut fx = Fixture::with_config(ONE, "accessibility = false\n");
    assert!(fx.accessible_reading().is_none());
}
