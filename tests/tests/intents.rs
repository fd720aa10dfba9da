//! End-to-end: real protocol clients against the headless compositor, decisions checked as the
//! client received them.

mod harness;

use pcp_overlay::Control;
use pcp_protocol::client::{ClientError, IntentEvent};
use serde_json::json;

use harness::{Fixture, intent};

const ONE: &[&str] = &["1920x1080@0,0"];

#[test]
fn a_routine_write_runs_with_no_prompt_and_carries_a_token() {
    let mut fx = Fixture::new(ONE);
    let c = fx.submit(intent("file.write", json!({"path": "/tmp/a"})));
    let d = fx.decision(&c);
    assert!(d.approved, "{d:?}");
    assert_eq!(d.resolution, "policy_allow");
    assert!(d.token.as_deref().is_some_and(|t| t.starts_with("pcp1.")));
    assert!(
        d.threshold.is_none(),
        "no pending event for a routine write"
    );
    assert!(!fx.dialog_open());
}

#[test]
fn an_unknown_capability_is_denied() {
    let mut fx = Fixture::new(ONE);
    let c = fx.submit(intent("no.such.thing", json!({})));
    let d = fx.decision(&c);
    assert!(!d.approved);
    assert_eq!(d.resolution, "unknown_capability");
}

#[test]
fn a_privileged_write_waits_and_a_click_after_the_guard_approves_it() {
    let mut fx = Fixture::new(ONE);
    let c = fx.submit(intent(
        "settings.change",
        json!({"key": "dark", "value": "on"}),
    ));
    let (threshold, modalities) = fx.pending(&c);
    assert_eq!(threshold, "visual");
    assert_eq!(modalities, ["visual"]);
    assert!(fx.dialog_open());

    // Inside the 750 ms guard: the click does nothing.
    fx.click(Control::Approve);
    assert!(
        fx.gate().active().is_some(),
        "an early click must not count"
    );

    fx.advance_clock(2000);
    fx.click(Control::Approve);
    let d = fx.decision(&c);
    assert!(d.approved, "{d:?}");
    assert_eq!(d.resolution, "user_approved");
    assert_eq!(d.threshold.as_deref(), Some("visual"));
    assert!(d.token.is_some());
    assert!(!fx.dialog_open());
}

#[test]
fn a_deny_click_denies() {
    let mut fx = Fixture::new(ONE);
    let c = fx.submit(intent("settings.change", json!({"key": "a", "value": "b"})));
    fx.pending(&c);
    fx.advance_clock(1000);
    fx.click(Control::Deny);
    let d = fx.decision(&c);
    assert!(!d.approved);
    assert_eq!(d.resolution, "user_denied");
}

#[test]
fn a_visual_timeout_denies_on_the_gate_clock() {
    let mut fx = Fixture::new(ONE);
    let c = fx.submit(intent("settings.change", json!({"key": "a", "value": "b"})));
    fx.pending(&c);
    fx.advance_clock(29_000);
    assert!(fx.dialog_open(), "still up before 30 s");
    fx.advance_clock(1_500);
    let d = fx.decision(&c);
    assert!(!d.approved);
    assert_eq!(d.resolution, "confirmation.timeout");
    assert!(!fx.dialog_open());
}

#[test]
fn keyboard_tab_then_enter_approves_after_the_guard_and_escape_denies() {
    let mut fx = Fixture::new(ONE);
    const KEY_TAB: u32 = 15;
    const KEY_ENTER: u32 = 28;
    const KEY_ESC: u32 = 1;
    let c = fx.submit(intent("settings.change", json!({"key": "a", "value": "b"})));
    fx.pending(&c);
    // The dialog gets keys only once given the keyboard.
    fx.press_focus_shortcut();
    // Enter alone does nothing: there is no default button.
    fx.advance_clock(1000);
    fx.inject_key(KEY_ENTER, true);
    fx.inject_key(KEY_ENTER, false);
    assert!(fx.dialog_open());
    // Tab goes to Deny first, Shift-less Tab again to Approve.
    for _ in 0..2 {
        fx.inject_key(KEY_TAB, true);
        fx.inject_key(KEY_TAB, false);
    }
    fx.inject_key(KEY_ENTER, true);
    fx.inject_key(KEY_ENTER, false);
    let d = fx.decision(&c);
    assert_eq!(d.resolution, "user_approved", "{d:?}");
    assert!(
        fx.suppressed_keys().is_empty(),
        "every intercepted release was seen"
    );

    let c = fx.submit(intent("settings.change", json!({"key": "c", "value": "d"})));
    fx.pending(&c);
    fx.press_focus_shortcut();
    fx.advance_clock(1000);
    fx.inject_key(KEY_ESC, true);
    let d = fx.decision(&c);
    assert_eq!(d.resolution, "user_denied");
    // The release arrives after the dialog is gone and is still kept from clients.
    assert!(fx.suppressed_keys().contains(&KEY_ESC));
    fx.inject_key(KEY_ESC, false);
    assert!(fx.suppressed_keys().is_empty());
}

#[test]
fn malformed_json_ends_only_that_client() {
    let mut fx = Fixture::new(ONE);
    let waiting = fx.submit(intent("settings.change", json!({"key": "a", "value": "b"})));
    fx.pending(&waiting);

    let bad = fx.client(|c| Ok(vec![c.submit_raw("file.write", "{not json", None, None)?]));
    match fx.next_event(&bad) {
        Err(ClientError::Protocol {
            interface, code, ..
        }) => {
            assert_eq!(interface, "pcp_intent_manager_v1");
            assert_eq!(code, 2, "invalid_json");
        }
        other => panic!("expected a protocol error, got {other:?}"),
    }
    for (params, steps, code) in [
        ("[1,2]", None, 2),
        ("{}", Some("{\"not\": \"an array\"}"), 2),
        ("{}", None, 0),
    ] {
        let capability = if code == 0 { "Bad Name" } else { "file.write" };
        let c = fx.client(move |c| Ok(vec![c.submit_raw(capability, params, None, steps)?]));
        match fx.next_event(&c) {
            Err(ClientError::Protocol { code: got, .. }) => assert_eq!(got, code),
            other => panic!("expected a protocol error, got {other:?}"),
        }
    }

    // Inline data over 3072 bytes (the message itself still fits Smithay's 4 KiB buffer).
    let c = fx.client(|c| {
        let big = format!(r#"{{"x":"{}"}}"#, "a".repeat(3200));
        Ok(vec![c.submit_raw("file.write", &big, None, None)?])
    });
    match fx.next_event(&c) {
        Err(ClientError::Protocol { code, .. }) => assert_eq!(code, 1, "inline_too_large"),
        other => panic!("expected a protocol error, got {other:?}"),
    }
    // A file that is not a sealed memfd, and a size over the cap.
    let c = fx.client(|c| {
        let file = tempfile::tempfile().unwrap();
        std::io::Write::write_all(&mut &file, b"{}").unwrap();
        Ok(vec![c.submit_fd_raw(
            "file.write",
            std::os::fd::AsFd::as_fd(&file),
            2,
        )?])
    });
    // It ends only that request: a denial, the connection stays.
    let d = fx.decision(&c);
    assert_eq!(d.resolution, "invalid_params");
    let reason = d.reason.unwrap_or_default();
    assert!(reason.contains("seal"), "{reason}");
    let c = fx.client(|c| {
        let (fd, _) = pcp_protocol::wire::sealed_memfd(&json!({}), &[]).unwrap();
        Ok(vec![c.submit_fd_raw(
            "file.write",
            std::os::fd::AsFd::as_fd(&fd),
            2 << 20,
        )?])
    });
    match fx.next_event(&c) {
        Err(ClientError::Protocol { code, .. }) => assert_eq!(code, 4, "fd_too_large"),
        other => panic!("expected a protocol error, got {other:?}"),
    }

    // The compositor and the other client carry on.
    assert!(fx.dialog_open());
    fx.advance_clock(1000);
    fx.click(Control::Approve);
    assert_eq!(fx.decision(&waiting).resolution, "user_approved");
    let c = fx.submit(intent("file.write", json!({"path": "/x"})));
    assert!(fx.decision(&c).approved);
}

#[test]
fn large_params_travel_through_a_sealed_memfd() {
    let mut fx = Fixture::new(ONE);
    let big = "x".repeat(200_000);
    let c = fx.submit(intent(
        "file.write",
        json!({"path": "/big", "content": big}),
    ));
    let d = fx.decision(&c);
    assert!(d.approved, "{d:?}");
    assert_eq!(d.resolution, "policy_allow");
}

#[test]
fn a_client_cannot_approve_its_own_intent_through_any_request() {
    // The protocol has no request that answers a prompt: only submit, submit_fd, cancel, destroy.
    let xml = pcp_protocol::XML;
    let mut requests: Vec<&str> = xml
        .split("<request name=\"")
        .skip(1)
        .map(|s| &s[..s.find('"').unwrap()])
        .collect();
    requests.sort();
    assert_eq!(
        requests,
        ["cancel", "destroy", "destroy", "submit", "submit_fd"]
    );

    let mut fx = Fixture::new(ONE);
    // Everything a client can send about its pending intent: a second submission (with params
    // claiming approval), a cancel, a second cancel. None approves.
    let c = fx.client(|c| {
        let first = c.submit(&harness::intent(
            "settings.change",
            json!({"key": "a", "value": "b"}),
        ))?;
        let second = c.submit(&harness::intent(
            "settings.change",
            json!({"key": "a", "value": "b", "approved": true, "resolution": "user_approved"}),
        ))?;
        Ok(vec![first, second])
    });
    let mut finals = Vec::new();
    while finals.is_empty() {
        if let IntentEvent::Final { decision, .. } = fx.next_event(&c).unwrap() {
            finals.push(decision);
        }
    }
    // Parameters the manifest does not declare are refused before anything else is looked at.
    assert_eq!(finals[0].resolution, "invalid_params", "{finals:?}");
    assert!(fx.dialog_open());
    // Time passes with no seat input: still not approved, and then the deadline denies it.
    fx.advance_clock(31_000);
    let d = fx.decision(&c);
    assert_eq!(d.resolution, "confirmation.timeout");

    // Cancel withdraws: the answer is denied(cancelled), never approved.
    let c = fx.client(|c| {
        let h = c.submit(&harness::intent(
            "settings.change",
            json!({"key": "z", "value": "y"}),
        ))?;
        c.roundtrip()?;
        h.cancel();
        Ok(vec![h])
    });
    let d = fx.decision(&c);
    assert!(!d.approved);
    assert_eq!(d.resolution, "cancelled");
    assert!(!fx.dialog_open());

    // Cancelling twice is a protocol error that ends only that client.
    let c = fx.client(|c| {
        let h = c.submit(&harness::intent(
            "settings.change",
            json!({"key": "q", "value": "r"}),
        ))?;
        c.roundtrip()?;
        h.cancel();
        h.cancel();
        Ok(vec![h])
    });
    loop {
        match fx.next_event(&c) {
            Ok(IntentEvent::Final { decision, .. }) => assert!(!decision.approved),
            Ok(IntentEvent::Pending { .. }) => {}
            Err(ClientError::Protocol {
                interface, code, ..
            }) => {
                assert_eq!((interface.as_str(), code), ("pcp_intent_v1", 0));
                break;
            }
            Err(e) => panic!("{e}"),
        }
    }
    assert!(!fx.dialog_open());
    // The audit log holds no approval for settings.change.
    let approved = fx
        .gate()
        .store()
        .audit_since(0)
        .unwrap()
        .into_iter()
        .filter(|r| r.capability == "settings.change" && r.outcome == "approved")
        .count();
    assert_eq!(approved, 0);
}

#[test]
fn a_deny_rule_reaches_the_client_as_policy_deny_with_its_reason() {
    let rule = "[[rule]]\ncapability = \"disk.*\"\ndecision = \"deny\"\nreason = \"never here\"\n";
    let mut fx = Fixture::with_config(ONE, rule);
    let c = fx.submit(intent("disk.format", json!({"device": "/dev/sda"})));
    let d = fx.decision(&c);
    assert!(!d.approved);
    assert_eq!(d.resolution, "policy_deny");
    assert_eq!(d.reason.as_deref(), Some("never here"));
    assert!(!fx.dialog_open());
}

#[test]
fn two_clients_prompts_queue_and_the_second_is_shown_after_the_first() {
    // Prompt slots belong to the app, and every client here is this test process: give it two.
    let mut fx = Fixture::with_config(ONE, "[queue]\nper_client = 2\n");
    let a = fx.submit(intent("settings.change", json!({"key": "a", "value": "1"})));
    fx.pending(&a);
    let before = fx.capture(0);
    let b = fx.submit(intent(
        "network.share",
        json!({"path": "/p", "recipient": "bob"}),
    ));
    fx.pending(&b);
    assert_eq!(fx.gate().prompts().count(), 2);
    assert_eq!(fx.queued(), 1, "the badge counts the waiting prompt");
    let after = fx.capture(0);
    assert_ne!(before, after, "the badge changed the dialog's pixels");

    fx.advance_clock(1000);
    fx.click(Control::Approve);
    assert_eq!(fx.decision(&a).resolution, "user_approved");
    // The second prompt is shown now, with its own guard: a click on Approve inside it is
    // ignored, while Deny works at once (a refusal never waits for the guard).
    assert!(fx.dialog_open());
    assert_eq!(fx.queued(), 0);
    fx.click(Control::Approve);
    assert!(fx.dialog_open(), "inside the new prompt's guard");
    fx.click(Control::Deny);
    assert_eq!(fx.decision(&b).resolution, "user_denied");
}

#[test]
fn built_in_capabilities_run_in_the_compositor_only_after_approval() {
    let mut fx = Fixture::new(&["800x600@0,0", "800x600@800,0"]);
    let c = fx.submit(intent(
        "output.configure",
        json!({"output": "HEADLESS-2", "mode": "1024x768"}),
    ));
    let (threshold, _) = fx.pending(&c);
    assert_eq!(threshold, "voice+visual");
    assert!(fx.performed().is_empty(), "nothing runs before approval");
    fx.advance_clock(1000);
    // System risk: approve is press-and-hold (voice is unavailable here).
    fx.hold(Control::Approve, 1000);
    let d = fx.decision(&c);
    assert!(d.approved, "{d:?}");
    assert_eq!(fx.performed().len(), 1);
    assert_eq!(fx.output_spec(1).width, 1024);

    // An approved built-in that cannot run is reported as such.
    let c = fx.submit(intent("window.close", json!({"window": "nope"})));
    let d = fx.decision(&c);
    assert!(!d.approved);
    assert_eq!(d.resolution, "execution_failed");
    // The audit says the same: the approval, then its failure linked to it.
    let records = fx.gate().store().audit_since(0).unwrap();
    let closes: Vec<_> = records
        .iter()
        .filter(|r| r.capability == "window.close")
        .collect();
    assert_eq!(closes.len(), 2, "{closes:#?}");
    let (approval, failure) = (closes[0], closes[1]);
    assert!(approval.resolution.approves());
    assert_eq!(failure.resolution, pcp_gate::Resolution::ExecutionFailed);
    assert_eq!(failure.outcome, "denied");
    assert_eq!(failure.approval_seq, Some(approval.seq));
    assert!(
        failure
            .notes
            .iter()
            .any(|n| n.contains("could not perform")),
        "{:?}",
        failure.notes
    );
}

#[test]
fn interacting_with_the_dialog_restarts_the_inactivity_timeout() {
    const KEY_TAB: u32 = 15;
    let mut fx = Fixture::new(ONE);
    let c = fx.submit(intent("settings.change", json!({"key": "t", "value": "u"})));
    fx.pending(&c);
    fx.advance_clock(20_000);
    fx.press_focus_shortcut();
    fx.inject_key(KEY_TAB, true);
    fx.inject_key(KEY_TAB, false);
    fx.advance_clock(20_000);
    assert!(
        fx.dialog_open(),
        "40 s in, but 20 s since the last activity"
    );
    fx.advance_clock(11_000);
    assert_eq!(fx.decision(&c).resolution, "confirmation.timeout");
}

#[test]
fn a_plan_that_asks_for_press_and_hold_gets_it_whatever_the_risk() {
    // Strict safety: a privileged write needs voice + visual; without a microphone the gate
    // falls back to visual with press-and-hold, and the dialog must enforce the hold.
    let mut fx = Fixture::with_config(ONE, "[safety]\nlevel = \"strict\"\n");
    let c = fx.submit(intent("settings.change", json!({"key": "h", "value": "1"})));
    let (threshold, modalities) = fx.pending(&c);
    assert_eq!(
        (threshold.as_str(), modalities),
        ("voice+visual", vec!["visual".to_string()])
    );
    assert!(fx.gate().active().unwrap().plan.press_and_hold);
    fx.advance_clock(1000);
    fx.click(Control::Approve);
    assert!(fx.dialog_open(), "a click is not a hold");
    fx.hold(Control::Approve, 1000);
    assert_eq!(fx.decision(&c).resolution, "user_approved");
}
