//! Deny rules and "Allow until logout" end to end: real protocol clients, the dialog's controls
//! clicked through the seat, config reloads through the compositor, and the audit log.

mod harness;

use pcp_overlay::Control;
use pcp_protocol::client::Submission;
use serde_json::json;

use harness::{Fixture, intent};

const ONE: &[&str] = &["1280x800"];

const SESSIONS: &str = "[gate]\nsession_approvals = true\n";

/// The click guard and one early-press extension, on the frozen clock.
const PAST_GUARD: i64 = 1000;

fn share() -> Submission {
    intent(
        "network.share",
        json!({"path": "/home/alice/report.pdf", "recipient": "bob@example.org"}),
    )
}

fn setting(value: &str) -> Submission {
    intent("settings.change", json!({"key": "theme", "value": value}))
}

/// Submits `submission`, waits for its dialog and clicks `control` past the guard; returns the
/// resolution.
fn answer(fx: &mut Fixture, submission: Submission, control: Control) -> String {
    let c = fx.submit(submission);
    fx.pending(&c);
    fx.advance_clock(PAST_GUARD);
    fx.click(control);
    fx.decision(&c).resolution
}

/// Submits `submission` and returns its resolution without touching the dialog.
fn unanswered(fx: &mut Fixture, submission: Submission) -> String {
    let c = fx.submit(submission);
    fx.decision(&c).resolution
}

/// Chooses "Allow until logout" for `submission`: guarded like Approve, never focused first.
fn allow_until_logout(fx: &mut Fixture, submission: Submission) -> String {
    let c = fx.submit(submission);
    fx.pending(&c);
    assert!(fx.dialog_offers_session(), "the dialog offers it");
    let live = fx.dialog_live().unwrap();
    assert_ne!(live.focus, Some(Control::Session), "no default focus");
    fx.click(Control::Session);
    assert!(fx.dialog_open(), "a click inside the guard does nothing");
    fx.advance_clock(PAST_GUARD);
    fx.click(Control::Session);
    fx.decision(&c).resolution
}

#[test]
fn allow_until_logout_lets_later_matching_intents_run_without_a_dialog() {
    let mut fx = Fixture::with_config(ONE, SESSIONS);
    assert_eq!(allow_until_logout(&mut fx, share()), "user_approved");
    assert_eq!(fx.gate().session_approvals(), 1);
    for _ in 0..2 {
        let c = fx.submit(share());
        let d = fx.decision(&c);
        assert_eq!(d.resolution, "user_approved_for_session");
        assert!(d.token.is_some(), "it carries a token like any approval");
        assert!(!fx.dialog_open());
    }
    // Other salient parameters are another action: asked again.
    let other = intent(
        "network.share",
        json!({"path": "/home/alice/report.pdf", "recipient": "eve@example.org"}),
    );
    assert_eq!(answer(&mut fx, other, Control::Deny), "user_denied");
}

#[test]
fn allow_until_logout_is_not_offered_when_off_nor_for_destructive_or_system_intents() {
    let mut off = Fixture::new(ONE);
    let c = off.submit(share());
    off.pending(&c);
    assert!(
        !off.dialog_offers_session(),
        "[gate] session_approvals is off by default"
    );

    let mut fx = Fixture::with_config(ONE, SESSIONS);
    for submission in [
        intent("file.delete", json!({"path": "/home/alice/report.pdf"})),
        intent("session.logout", json!({})),
        intent(
            "output.configure",
            json!({"output": "HEADLESS-1", "mode": "800x600"}),
        ),
    ] {
        let capability = submission.capability.clone();
        let c = fx.submit(submission);
        fx.pending(&c);
        assert!(!fx.dialog_offers_session(), "offered for {capability}");
        fx.advance_clock(PAST_GUARD);
        fx.click(Control::Deny);
        assert_eq!(fx.decision(&c).resolution, "user_denied");
    }
}

#[test]
fn session_approvals_end_at_logout() {
    let mut fx = Fixture::with_config(ONE, SESSIONS);
    assert_eq!(allow_until_logout(&mut fx, share()), "user_approved");
    assert_eq!(unanswered(&mut fx, share()), "user_approved_for_session");

    // The user logs out (a system action: voice is off here, so press-and-hold).
    let c = fx.submit(intent("session.logout", json!({})));
    fx.pending(&c);
    fx.advance_clock(PAST_GUARD);
    fx.hold(Control::Approve, 1500);
    assert_eq!(fx.decision(&c).resolution, "user_approved");
    assert_eq!(
        fx.gate().session_approvals(),
        0,
        "the session approvals ended with the session"
    );
    let c = fx.submit(share());
    fx.pending(&c);
    assert!(fx.dialog_open(), "asked again after logout");
}

#[test]
fn a_deny_rule_in_a_manifest_folder_denies_through_the_protocol_and_names_itself() {
    let rules = tempfile::tempdir().unwrap();
    std::fs::write(
        rules.path().join("90-site.toml"),
        "[[rule]]\nname = \"no-disks\"\ncapability = \"disk.*\"\ndecision = \"deny\"\n\
         reason = \"Disks are never formatted on this machine\"\n",
    )
    .unwrap();
    let dir = rules.path().to_path_buf();
    let mut fx = Fixture::with_edited_config(ONE, None, move |text| {
        text.replacen("dirs = [", &format!("dirs = [{dir:?}, "), 1)
    });
    let c = fx.submit(intent("disk.format", json!({"device": "/dev/sda"})));
    let d = fx.decision(&c);
    assert_eq!(d.resolution, "policy_deny");
    assert_eq!(
        d.reason.as_deref(),
        Some("Disks are never formatted on this machine")
    );
    assert!(!fx.dialog_open());
    fx.pcp_mut().flush().unwrap();
    let record = fx.gate().store().audit_since(0).unwrap().pop().unwrap();
    assert_eq!(record.rule.as_deref(), Some("no-disks"));
    assert_eq!(record.resolution.as_str(), "policy_deny");
}

#[test]
fn a_deny_rule_added_on_reload_applies_at_once_over_a_session_approval_and_a_history() {
    let mut fx = Fixture::with_config(ONE, SESSIONS);
    assert_eq!(allow_until_logout(&mut fx, share()), "user_approved");
    // Repeated identical approvals build a history that confirms the next one.
    for _ in 0..3 {
        assert_eq!(
            answer(&mut fx, setting("dark"), Control::Approve),
            "user_approved"
        );
    }
    assert_eq!(unanswered(&mut fx, setting("dark")), "confirmed_by_history");
    assert_eq!(unanswered(&mut fx, share()), "user_approved_for_session");

    let rules = "[[rule]]\nname = \"no-sharing\"\ncapability = \"network.share\"\n\
                 decision = \"deny\"\nreason = \"Nothing leaves this machine\"\n\n\
                 [[rule]]\nname = \"no-theme\"\ncapability = \"settings.*\"\n\
                 params = { key = \"theme\" }\ndecision = \"deny\"\nreason = \"The theme is fixed\"\n";
    let text = format!("{}{rules}", fx.config_text());
    std::fs::write(fx.config_path(), text).unwrap();
    fx.reload_config();
    // Only a raise in protection: no policy-change prompt, in force at once.
    assert!(!fx.dialog_open(), "a deny rule is not asked about");
    assert!(fx.notice_text().is_none());

    let c = fx.submit(share());
    let d = fx.decision(&c);
    assert_eq!(
        (d.resolution.as_str(), d.reason.as_deref()),
        ("policy_deny", Some("Nothing leaves this machine"))
    );
    let c = fx.submit(setting("dark"));
    let d = fx.decision(&c);
    assert_eq!(
        (d.resolution.as_str(), d.reason.as_deref()),
        ("policy_deny", Some("The theme is fixed"))
    );
    assert!(!fx.dialog_open());
    fx.pcp_mut().flush().unwrap();
    let rules: Vec<Option<String>> = fx
        .gate()
        .store()
        .audit_since(0)
        .unwrap()
        .into_iter()
        .filter(|r| r.resolution.as_str() == "policy_deny")
        .map(|r| r.rule)
        .collect();
    assert_eq!(
        rules,
        [Some("no-sharing".to_string()), Some("no-theme".to_string())]
    );
}
