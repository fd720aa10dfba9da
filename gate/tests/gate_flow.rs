//! The gate end to end on an injected clock: thresholds, plans, answers, timeouts, friction,
//! persistence, queueing and cancellation.

mod support;

use pcp_gate::{
    Answer, Authorizer, Availability, Decision, Gate, IntentId, Modality, ModalityEvent, Outcome,
    Resolution, RespondError, Threshold,
};
use serde_json::json;
use support::{gate, intent, intent_from};

const S: i64 = 1000;

fn confirm(d: Decision) -> (IntentId, Vec<Modality>) {
    match d {
        Decision::Confirm { id, plan, .. } => (id, plan.modalities),
        other => panic!("expected a prompt, got {other:?}"),
    }
}

fn approve_all(g: &mut Gate, id: IntentId, plan: &[Modality], at: i64) -> Outcome {
    let mut last = None;
    for m in plan {
        last = g
            .respond(id, ModalityEvent::Answer(*m, Answer::Approve), at)
            .unwrap();
    }
    last.expect("all modalities approved decides the prompt")
}

/// Submits and approves every modality; returns the plan that was asked ([] when none was).
fn run_approved(
    g: &mut Gate,
    cap: &str,
    params: serde_json::Value,
    at: i64,
) -> (Vec<Modality>, Outcome) {
    match g.submit(intent(cap, params.clone()), at) {
        Decision::Execute(o) => (Vec::new(), o),
        Decision::Confirm { id, plan, .. } => {
            let o = approve_all(g, id, &plan.modalities, at + S);
            // The prompt's approval carries what it runs, as the gate checked it.
            let run = o.run.as_ref().expect("an approval carries what it runs");
            assert_eq!((run.capability.as_str(), &run.params), (cap, &params));
            (plan.modalities, o)
        }
        Decision::Deny(o) => panic!("denied: {o:?}"),
    }
}

#[test]
fn routine_write_executes_with_policy_allow_and_a_token() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), "");
    match g.submit(intent("file.write", json!({"path": "/tmp/x"})), 0) {
        Decision::Execute(o) => {
            assert_eq!(o.resolution, Resolution::PolicyAllow);
            assert!(o.token.is_some());
            // What runs is what was approved, moved from the submission.
            let run = o.run.expect("an approval carries what it runs");
            assert_eq!(run.capability, "file.write");
            assert_eq!(run.params, json!({"path": "/tmp/x"}));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn unknown_capability_is_denied() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), "");
    match g.submit(intent("file.shred", json!({})), 0) {
        Decision::Deny(o) => {
            assert_eq!(o.resolution, Resolution::UnknownCapability);
            assert_eq!(o.run, None, "a denial runs nothing");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn params_that_are_not_an_object_are_denied() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), "");
    match g.submit(intent("file.write", json!(["/tmp/x"])), 0) {
        Decision::Deny(o) => assert_eq!(o.resolution, Resolution::InvalidParams),
        other => panic!("{other:?}"),
    }
}

#[test]
fn destructive_needs_both_voice_and_visual_and_one_alone_is_not_enough() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), "");
    let (id, plan) = confirm(g.submit(intent("file.delete", json!({"path": "/a"})), 0));
    assert_eq!(plan, [Modality::Voice, Modality::Visual]);
    assert_eq!(
        g.respond(
            id,
            ModalityEvent::Answer(Modality::Voice, Answer::Approve),
            S
        )
        .unwrap(),
        None
    );
    // Visual never answers: the visual deadline denies even though voice said yes.
    let out = g.tick(31 * S);
    assert_eq!(out[0].resolution, Resolution::ConfirmationTimeout);
    assert!(!out[0].approved);
}

#[test]
fn visual_yes_with_spoken_no_is_denied() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), "");
    let (id, _) = confirm(g.submit(intent("package.install", json!({"package": "x"})), 0));
    assert_eq!(
        g.respond(
            id,
            ModalityEvent::Answer(Modality::Visual, Answer::Approve),
            S
        )
        .unwrap(),
        None
    );
    let o = g
        .respond(
            id,
            ModalityEvent::Answer(Modality::Voice, Answer::Deny),
            2 * S,
        )
        .unwrap()
        .unwrap();
    assert_eq!(o.resolution, Resolution::UserDenied);
    assert_eq!(o.run, None, "a denial runs nothing");
}

#[test]
fn voice_times_out_after_ten_seconds_on_the_injected_clock() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), "");
    let (id, _) = confirm(g.submit(intent("file.delete", json!({"path": "/a"})), 5 * S));
    g.respond(
        id,
        ModalityEvent::Answer(Modality::Visual, Answer::Approve),
        6 * S,
    )
    .unwrap();
    assert!(g.tick(15 * S - 1).is_empty());
    let out = g.tick(15 * S);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].resolution.as_str(), "confirmation.timeout");
}

#[test]
fn visual_times_out_after_thirty_seconds_and_activity_restarts_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), "");
    let (id, plan) = confirm(g.submit(
        intent("window.move", json!({"window": "w", "output": "HDMI-1"})),
        0,
    ));
    assert_eq!(plan, [Modality::Visual]);
    g.respond(id, ModalityEvent::Activity, 20 * S).unwrap();
    assert!(g.tick(49 * S).is_empty());
    assert_eq!(
        g.tick(50 * S)[0].resolution,
        Resolution::ConfirmationTimeout
    );
}

#[test]
fn a_late_answer_does_not_beat_the_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), "");
    let (id, _) = confirm(g.submit(
        intent("window.move", json!({"window": "w", "output": "o"})),
        0,
    ));
    let o = g
        .respond(
            id,
            ModalityEvent::Answer(Modality::Visual, Answer::Approve),
            30 * S,
        )
        .unwrap()
        .unwrap();
    assert_eq!(o.resolution, Resolution::ConfirmationTimeout);
}

#[test]
fn configured_timeouts_apply() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), "[timeouts]\nvoice_seconds = 3\n");
    let (id, _) = confirm(g.submit(intent("file.delete", json!({"path": "/a"})), 0));
    g.respond(
        id,
        ModalityEvent::Answer(Modality::Visual, Answer::Approve),
        S,
    )
    .unwrap();
    assert_eq!(g.tick(3 * S)[0].resolution, Resolution::ConfirmationTimeout);
}

#[test]
fn an_answer_through_a_modality_outside_the_plan_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), "");
    let (id, _) = confirm(g.submit(
        intent("window.move", json!({"window": "w", "output": "o"})),
        0,
    ));
    let err = g
        .respond(
            id,
            ModalityEvent::Answer(Modality::Haptic, Answer::Approve),
            S,
        )
        .unwrap_err();
    assert_eq!(err, RespondError::NotInPlan(Modality::Haptic));
    assert!(g.prompt(id).is_some());
}

#[test]
fn voice_unavailable_gives_visual_with_press_and_hold() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), "");
    g.set_available(Availability {
        voice: false,
        ..g.available()
    });
    match g.submit(intent("file.delete", json!({"path": "/a"})), 0) {
        Decision::Confirm { plan, .. } => {
            assert_eq!(plan.modalities, [Modality::Visual]);
            assert!(plan.press_and_hold);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn losing_the_microphone_mid_prompt_falls_back_without_losing_the_prompt() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), "");
    let (id, _) = confirm(g.submit(intent("file.delete", json!({"path": "/a"})), 0));
    assert_eq!(
        g.respond(id, ModalityEvent::Lost(Modality::Voice), S)
            .unwrap(),
        None
    );
    let p = g.prompt(id).unwrap();
    assert_eq!(p.plan.modalities, [Modality::Visual]);
    assert!(p.plan.press_and_hold);
    let o = g
        .respond(
            id,
            ModalityEvent::Answer(Modality::Visual, Answer::Approve),
            2 * S,
        )
        .unwrap()
        .unwrap();
    assert_eq!(o.resolution, Resolution::UserApproved);
}

#[test]
fn haptic_for_a_quick_low_risk_action_and_visual_without_the_device() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), "");
    let params = json!({"key": "brightness", "value": 40});
    let (_, plan) = confirm(g.submit(intent_from("a", "settings.change", params.clone()), 0));
    assert_eq!(plan, [Modality::Visual], "no haptic device: visual");
    g.set_available(Availability {
        haptic: true,
        ..g.available()
    });
    let (id, plan) = confirm(g.submit(intent_from("b", "settings.change", params), 0));
    assert_eq!(plan, [Modality::Haptic]);
    let _ = id;
}

#[test]
fn no_output_selects_the_denying_authorizer() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), "");
    g.set_available(Availability {
        output: false,
        ..g.available()
    });
    match g.submit(
        intent("window.move", json!({"window": "w", "output": "o"})),
        0,
    ) {
        Decision::Deny(o) => {
            assert_eq!(o.resolution, Resolution::ConfirmationUnavailable);
            assert!(o.plan.is_empty());
        }
        other => panic!("{other:?}"),
    }
    // Routine intents still run: nobody needs to answer them.
    assert!(matches!(
        g.submit(intent("file.read", json!({"path": "/a"})), 0),
        Decision::Execute(_)
    ));
}

#[test]
fn a_nested_session_asks_the_parent() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), "[session]\nparent_authorizer = true\n");
    match g.submit(
        intent("window.move", json!({"window": "w", "output": "o"})),
        0,
    ) {
        Decision::Confirm { id, plan, .. } => {
            assert_eq!(plan.authorizer, Authorizer::Parent);
            let o = g
                .respond(id, ModalityEvent::Parent(Answer::Approve), S)
                .unwrap()
                .unwrap();
            assert_eq!(o.resolution, Resolution::UserApproved);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn multi_step_is_always_visual_listing_every_step() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), "");
    let mut i = intent("file.write", json!({"path": "/a"}));
    i.steps = vec![
        pcp_gate::Step {
            capability: "file.read".into(),
            params: json!({"path": "/b"}),
        },
        pcp_gate::Step {
            capability: "file.write".into(),
            params: json!({"path": "/c"}),
        },
    ];
    let (id, plan) = confirm(g.submit(i, 0));
    assert_eq!(plan, [Modality::Visual]);
    assert_eq!(g.prompt(id).unwrap().steps, ["Read /b", "Write /c"]);
}

#[test]
fn one_open_prompt_per_client_and_a_bounded_queue() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), "[queue]\nmax_pending = 2\n");
    let p = json!({"window": "w", "output": "o"});
    let (first, _) = confirm(g.submit(intent_from("a", "window.move", p.clone()), 0));
    match g.submit(intent_from("a", "window.move", p.clone()), 0) {
        Decision::Deny(o) => assert_eq!(o.resolution, Resolution::RateLimited),
        other => panic!("{other:?}"),
    }
    let (second, _) = confirm(g.submit(intent_from("b", "window.move", p.clone()), 0));
    match g.submit(intent_from("c", "window.move", p), 0) {
        Decision::Deny(o) => assert_eq!(o.resolution, Resolution::RateLimited),
        other => panic!("{other:?}"),
    }
    // The queued prompt is not shown, cannot be answered, and its timer has not started.
    assert_eq!(
        g.respond(
            second,
            ModalityEvent::Answer(Modality::Visual, Answer::Approve),
            S
        ),
        Err(RespondError::NotShown(second))
    );
    let o = g.cancel(first, 10 * S).unwrap();
    assert_eq!(o.resolution, Resolution::Cancelled);
    assert_eq!(g.active().unwrap().id, second);
    assert!(
        g.tick(39 * S).is_empty(),
        "the second prompt's 30 s started when it was shown"
    );
    assert_eq!(
        g.tick(40 * S)[0].resolution,
        Resolution::ConfirmationTimeout
    );
}

#[test]
fn first_occurrence_gets_the_full_threshold() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), "");
    let (plan, o) = run_approved(
        &mut g,
        "window.move",
        json!({"window": "w", "output": "o"}),
        0,
    );
    assert_eq!(plan, [Modality::Visual]);
    assert_eq!(o.resolution, Resolution::UserApproved);
}

#[test]
fn repeated_identical_actions_become_confirmed_by_history() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), "");
    let p = json!({"window": "w", "output": "left"});
    let resolutions: Vec<Resolution> = (0..5)
        .map(|i| {
            run_approved(&mut g, "window.move", p.clone(), i * 60 * S)
                .1
                .resolution
        })
        .collect();
    use Resolution::*;
    assert_eq!(
        resolutions,
        [
            UserApproved,
            UserApproved,
            UserApproved,
            ConfirmedByHistory,
            ConfirmedByHistory
        ]
    );
    let records = g.store().audit_since(0).unwrap();
    assert_eq!(records.last().unwrap().resolution, ConfirmedByHistory);
}

#[test]
fn novel_parameters_reset_to_the_full_threshold() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), "");
    for i in 0..3 {
        run_approved(
            &mut g,
            "window.move",
            json!({"window": "w", "output": "left"}),
            i * S,
        );
    }
    let (plan, _) = run_approved(
        &mut g,
        "window.move",
        json!({"window": "w", "output": "DP-2"}),
        10 * S,
    );
    assert_eq!(plan, [Modality::Visual]);
}

/// A privileged write with a parameter that is not salient.
const TILE: &str = r#"
[[capability]]
name = "window.tile"
version = 1
side_effects = "write"
auth_level = "privileged"
description = "Tile the window {window} on {output}"
salient = ["window", "output"]
params = ["window", "output", "animate"]
"#;

#[test]
fn non_salient_parameters_do_not_make_an_action_novel() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), TILE);
    for i in 0..3 {
        run_approved(
            &mut g,
            "window.tile",
            json!({"window": "w", "output": "o", "animate": i}),
            i * S,
        );
    }
    let (plan, o) = run_approved(
        &mut g,
        "window.tile",
        json!({"window": "w", "output": "o", "animate": 9}),
        10 * S,
    );
    assert!(plan.is_empty());
    assert_eq!(o.resolution, Resolution::ConfirmedByHistory);
}

#[test]
fn destructive_keeps_the_visual_gate_while_voice_drops() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), "");
    let plans: Vec<Vec<Modality>> = (0..6)
        .map(|i| run_approved(&mut g, "file.delete", json!({"path": "/tmp/a"}), i * 60 * S).0)
        .collect();
    let vv = vec![Modality::Voice, Modality::Visual];
    let v = vec![Modality::Visual];
    assert_eq!(plans, [vv.clone(), vv.clone(), vv, v.clone(), v.clone(), v]);
}

#[test]
fn system_actions_never_degrade() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), "[safety]\nlevel = \"permissive\"\n");
    for i in 0..8 {
        let (plan, _) = run_approved(&mut g, "session.logout", json!({}), i * 60 * S);
        assert_eq!(plan, [Modality::Voice, Modality::Visual], "repeat {i}");
    }
}

#[test]
fn strict_never_degrades_and_raises_privileged_writes() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), "[safety]\nlevel = \"strict\"\n");
    for i in 0..6 {
        let (plan, _) = run_approved(
            &mut g,
            "window.move",
            json!({"window": "w", "output": "o"}),
            i * S,
        );
        assert_eq!(plan, [Modality::Voice, Modality::Visual]);
    }
}

#[test]
fn permissive_degrades_sooner_with_the_same_floors() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), "[safety]\nlevel = \"permissive\"\n");
    let p = json!({"window": "w", "output": "o"});
    let asked: Vec<bool> = (0..3)
        .map(|i| {
            !run_approved(&mut g, "window.move", p.clone(), i * S)
                .0
                .is_empty()
        })
        .collect();
    assert_eq!(asked, [true, true, false]);
    for i in 0..5 {
        let (plan, _) = run_approved(
            &mut g,
            "file.delete",
            json!({"path": "/a"}),
            100 * S + i * S,
        );
        assert!(plan.contains(&Modality::Visual));
    }
}

#[test]
fn a_denial_resets_the_history() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), "");
    for i in 0..3 {
        run_approved(&mut g, "file.delete", json!({"path": "/y"}), i * 60 * S);
    }
    let (id, plan) = confirm(g.submit(intent("file.delete", json!({"path": "/y"})), 400 * S));
    assert_eq!(
        plan,
        [Modality::Visual],
        "voice dropped after three approvals"
    );
    g.respond(
        id,
        ModalityEvent::Answer(Modality::Visual, Answer::Deny),
        401 * S,
    )
    .unwrap();
    let (plan, _) = run_approved(&mut g, "file.delete", json!({"path": "/y"}), 500 * S);
    assert_eq!(
        plan,
        [Modality::Voice, Modality::Visual],
        "denial reset the history"
    );
}

#[test]
fn a_timeout_resets_the_history() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), "");
    for i in 0..3 {
        run_approved(&mut g, "file.delete", json!({"path": "/y"}), i * 60 * S);
    }
    let (_, plan) = confirm(g.submit(intent("file.delete", json!({"path": "/y"})), 400 * S));
    assert_eq!(plan, [Modality::Visual]);
    assert_eq!(
        g.tick(430 * S)[0].resolution,
        Resolution::ConfirmationTimeout
    );
    let (plan, _) = run_approved(&mut g, "file.delete", json!({"path": "/y"}), 500 * S);
    assert_eq!(plan, [Modality::Voice, Modality::Visual]);
}

#[test]
fn friction_persists_across_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let p = json!({"window": "w", "output": "o"});
    {
        let mut g = gate(dir.path(), "");
        for i in 0..3 {
            run_approved(&mut g, "window.move", p.clone(), i * S);
        }
    }
    let mut g = gate(dir.path(), "");
    let (plan, o) = run_approved(&mut g, "window.move", p, 10 * S);
    assert!(plan.is_empty());
    assert_eq!(o.resolution, Resolution::ConfirmedByHistory);
}

#[test]
fn a_new_profile_starts_with_default_friction() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), "");
    let p = json!({"window": "w", "output": "o"});
    for i in 0..3 {
        run_approved(&mut g, "window.move", p.clone(), i * S);
    }
    g.set_profile("bob");
    assert_eq!(
        run_approved(&mut g, "window.move", p.clone(), 10 * S).0,
        [Modality::Visual]
    );
    g.set_profile("default");
    assert!(run_approved(&mut g, "window.move", p, 11 * S).0.is_empty());
}

#[test]
fn a_capability_update_resets_its_history() {
    let dir = tempfile::tempdir().unwrap();
    let p = json!({"window": "w", "output": "o"});
    let mut g = gate(dir.path(), "");
    for i in 0..3 {
        run_approved(&mut g, "window.move", p.clone(), i * S);
    }
    g.update_capability("window.move", 2).unwrap();
    assert_eq!(
        run_approved(&mut g, "window.move", p.clone(), 10 * S).0,
        [Modality::Visual]
    );
    // Going back to version 1 does not bring the old history back either.
    g.update_capability("window.move", 1).unwrap();
    assert_eq!(
        run_approved(&mut g, "window.move", p, 11 * S).0,
        [Modality::Visual]
    );
}

#[test]
fn idle_history_is_asked_again_after_a_day() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), "");
    let p = json!({"window": "w", "output": "o"});
    for i in 0..3 {
        run_approved(&mut g, "window.move", p.clone(), i * S);
    }
    let day = 24 * 3600 * S;
    assert_eq!(
        run_approved(&mut g, "window.move", p, day + 10 * S).0,
        [Modality::Visual]
    );
}

#[test]
fn every_decision_is_audited_and_the_chain_verifies() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), "");
    run_approved(&mut g, "file.write", json!({"path": "/a"}), 0);
    g.submit(intent("nope", json!({})), S);
    run_approved(&mut g, "file.delete", json!({"path": "/a"}), 2 * S);
    g.flush().unwrap();
    let records = g.store().audit_since(0).unwrap();
    let res: Vec<&str> = records.iter().map(|r| r.resolution.as_str()).collect();
    assert_eq!(res, ["policy_allow", "unknown_capability", "user_approved"]);
    assert_eq!(records[2].plan, [Modality::Voice, Modality::Visual]);
    assert_eq!(records[2].threshold, Some(Threshold::VoiceVisual));
    assert_eq!(g.store().verify_audit().unwrap(), Ok(3));
}

#[test]
fn redaction_keeps_only_the_digest() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), "[audit]\nredact_params = true\n");
    run_approved(&mut g, "file.write", json!({"path": "/secret"}), 0);
    g.flush().unwrap();
    let r = &g.store().audit_since(0).unwrap()[0];
    assert!(r.params.is_none());
    assert_eq!(r.params_digest.len(), 64);
}
