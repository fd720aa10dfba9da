//! Hostile clients against the dialog, through the real protocol with the harness playing the
//! user: typing through a prompt as it appears, a queue that changes all the time to keep the
//! guard re-arming, and a prompt swapped for another under a held pointer.

mod harness;

use std::sync::mpsc;

use pcp_overlay::Control;
use pcp_protocol::client::IntentEvent;
use serde_json::json;

use harness::{Fixture, intent};

const ONE: &[&str] = &["1920x1080@0,0"];
const KEY_TAB: u32 = 15;
const KEY_ENTER: u32 = 28;

fn tap(fx: &mut Fixture, code: u32) {
    fx.inject_key(code, true);
    fx.inject_key(code, false);
}

fn still_pending(fx: &mut Fixture) -> bool {
    fx.pump();
    fx.gate().active().is_some()
}

/// A modal dialog has the keyboard the moment it appears (a non-modal one never takes it: keys
/// typed as it appears stay with the window they were typed into).
const MODAL: &str = "modal_for = [\"privileged\"]";

#[test]
fn tab_tab_enter_typed_while_a_prompt_appears_does_not_approve_it() {
    let mut fx = Fixture::with_overlay(ONE, MODAL);
    let c = fx.submit(intent("settings.change", json!({"key": "a", "value": "b"})));
    fx.pending(&c);
    // The user was typing in a terminal: Tab, Tab, then Enter just after the guard delay.
    tap(&mut fx, KEY_TAB);
    fx.advance_clock(150);
    tap(&mut fx, KEY_TAB);
    fx.advance_clock(650);
    tap(&mut fx, KEY_ENTER);
    assert!(still_pending(&mut fx), "typed keys approved the prompt");
    // The keys inside the guard moved nothing, so Enter had no control to activate.
    assert_eq!(fx.dialog_live().unwrap().focus, None);
    // Deliberately, after the guard: Tab Tab Enter approves.
    fx.advance_clock(1000);
    tap(&mut fx, KEY_TAB);
    tap(&mut fx, KEY_TAB);
    tap(&mut fx, KEY_ENTER);
    assert_eq!(fx.decision(&c).resolution, "user_approved");
}

#[test]
fn a_key_press_alone_does_not_approve_its_release_does() {
    let mut fx = Fixture::new(ONE);
    let c = fx.submit(intent("settings.change", json!({"key": "c", "value": "d"})));
    fx.pending(&c);
    fx.press_focus_shortcut();
    fx.advance_clock(1000);
    tap(&mut fx, KEY_TAB);
    tap(&mut fx, KEY_TAB);
    // Enter goes down on Approve after the guard, and stays down (a key bounced or held by a
    // program driving the keyboard): not an answer yet.
    fx.inject_key(KEY_ENTER, true);
    fx.advance_clock(100);
    assert!(still_pending(&mut fx), "a key press alone approved");
    fx.inject_key(KEY_ENTER, false);
    assert_eq!(fx.decision(&c).resolution, "user_approved");
}

/// Prompt slots belong to the app, and every client here is this test process: give it two.
const TWO_SLOTS: &str = "[queue]\nper_client = 2\n";

#[test]
fn a_queue_that_keeps_changing_does_not_rearm_the_guard() {
    let mut fx = Fixture::with_config(ONE, TWO_SLOTS);
    let a = fx.submit(intent("settings.change", json!({"key": "g", "value": "h"})));
    fx.pending(&a);
    // Another client submits a prompt and withdraws it again, over and over: queued at 200,
    // 450 and 700 ms, withdrawn at 250, 500 and 750 ms.
    for round in 0..3 {
        fx.advance_clock(200);
        let (go, wait) = mpsc::channel::<()>();
        let b = fx.client(move |c| {
            let h = c.submit(&intent(
                "network.share",
                json!({"path": format!("/p{round}"), "recipient": "eve"}),
            ))?;
            c.roundtrip()?;
            let _ = wait.recv();
            h.cancel();
            Ok(vec![h])
        });
        fx.pump_until("the second prompt is queued", |fx| fx.queued() == 1);
        fx.advance_clock(50);
        go.send(()).unwrap();
        loop {
            if let IntentEvent::Final { decision, .. } = fx.next_event(&b).unwrap() {
                assert_eq!(decision.resolution, "cancelled");
                break;
            }
        }
        fx.pump_until("the queue is empty again", |fx| fx.queued() == 0);
    }
    // At 800 ms, past the guard of A (shown at 0) but only 50 ms after the last change in the
    // queue: the click counts, since queue changes do not re-arm the guard.
    fx.advance_clock(50);
    fx.click(Control::Approve);
    assert_eq!(fx.decision(&a).resolution, "user_approved");
}

#[test]
fn a_pointer_pressed_on_one_prompt_does_not_approve_the_one_swapped_in() {
    let mut fx = Fixture::with_config(ONE, TWO_SLOTS);
    let (go, wait) = mpsc::channel::<()>();
    let a = fx.client(move |c| {
        let h = c.submit(&intent(
            "settings.change",
            json!({"key": "i", "value": "j"}),
        ))?;
        c.roundtrip()?;
        let _ = wait.recv();
        h.cancel();
        Ok(vec![h])
    });
    fx.pump_until("A is shown", |fx| fx.dialog_open());
    let b = fx.submit(intent(
        "network.share",
        json!({"path": "/q", "recipient": "mallory"}),
    ));
    fx.pump_until("B waits behind A", |fx| fx.queued() == 1);
    fx.advance_clock(1000);
    // The user presses Approve on A...
    let (x, y) = fx.control_centre(Control::Approve);
    fx.inject_pointer_motion(x, y);
    fx.inject_pointer_button(true);
    // ...A withdraws, and B takes its place under the pointer.
    go.send(()).unwrap();
    loop {
        if let IntentEvent::Final { decision, .. } = fx.next_event(&a).unwrap() {
            assert_eq!(decision.resolution, "cancelled");
            break;
        }
    }
    fx.pump_until("B is shown", |fx| {
        fx.gate()
            .active()
            .is_some_and(|p| p.intent.capability == "network.share")
    });
    assert_eq!(fx.control_centre(Control::Approve), (x, y));
    // The release comes well after B's guard: it was A's press, so nothing.
    fx.advance_clock(2000);
    fx.inject_pointer_button(false);
    assert!(still_pending(&mut fx), "a press on A approved B");
    // A whole click on B is B's approval.
    fx.click(Control::Approve);
    let d = fx.decision(&b);
    assert_eq!(d.resolution, "user_approved");
}
