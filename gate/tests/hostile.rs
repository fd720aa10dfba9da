//! Hostile clients against the gate itself: prompts that must end, answers that must not be
//! enough, parameters that must not hide, queues that must stay fair, floods that must stay
//! small, tokens that must not be reused.

mod support;

use pcp_gate::token::TokenRejection;
use pcp_gate::{
    Answer, Availability, Decision, Gate, IntentId, Modality, ModalityEvent, Outcome, Resolution,
    Step,
};
use serde_json::{Value, json};
use support::{gate, intent, intent_from};

const S: i64 = 1000;

fn confirm(d: Decision) -> IntentId {
    match d {
        Decision::Confirm { id, .. } => id,
        other => panic!("expected a prompt, got {other:?}"),
    }
}

fn denied(d: Decision) -> Outcome {
    match d {
        Decision::Deny(o) => o,
        other => panic!("expected a denial, got {other:?}"),
    }
}

fn approve(modality: Modality) -> ModalityEvent {
    ModalityEvent::Answer(modality, Answer::Approve)
}

/// Approves every modality of the prompt's plan.
fn approve_all(g: &mut Gate, id: IntentId, at: i64) -> Outcome {
    let mut outcome = None;
    for m in g.prompt(id).unwrap().plan.modalities.clone() {
        outcome = g.respond(id, approve(m), at).unwrap();
    }
    outcome.expect("every modality approved decides the prompt")
}

// ── Attack 1: a prompt always ends ──────────────────────────────────────────────────────────

#[test]
fn a_click_given_before_voice_is_lost_is_asked_again_as_a_press_and_hold() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), "");
    let id = confirm(g.submit(intent("file.delete", json!({"path": "/a"})), 0));
    // A plain click on Approve, then the microphone goes.
    assert_eq!(g.respond(id, approve(Modality::Visual), S).unwrap(), None);
    assert_eq!(
        g.respond(id, ModalityEvent::Lost(Modality::Voice), 2 * S)
            .unwrap(),
        None
    );
    let p = g.prompt(id).expect("the prompt is still open");
    assert_eq!(p.plan.modalities, [Modality::Visual]);
    assert!(
        p.plan.press_and_hold,
        "voice's fallback is a press-and-hold"
    );
    assert!(
        !p.answered(Modality::Visual),
        "the plain click was less than the plan now asks"
    );
    assert_eq!(
        g.next_deadline(),
        Some(2 * S + 30 * S),
        "the overlay has a fresh deadline"
    );
    // The hold approves it.
    let o = g
        .respond(id, approve(Modality::Visual), 3 * S)
        .unwrap()
        .unwrap();
    assert_eq!(o.resolution, Resolution::UserApproved);
    g.flush().unwrap();
    let record = g.store().audit_since(0).unwrap().pop().unwrap();
    let results: Vec<(Modality, &str)> = record
        .modality_results
        .iter()
        .map(|r| (r.modality, r.result.as_str()))
        .collect();
    assert_eq!(
        results,
        [
            (Modality::Visual, "approve"),
            (Modality::Voice, "lost"),
            (Modality::Visual, "reasked"),
            (Modality::Visual, "approve"),
        ]
    );
    assert!(record.press_and_hold);
}

#[test]
fn left_alone_after_the_loss_the_prompt_times_out() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), "");
    let id = confirm(g.submit(intent("package.install", json!({"package": "x"})), 0));
    g.respond(id, approve(Modality::Visual), S).unwrap();
    g.respond(id, ModalityEvent::Lost(Modality::Voice), 2 * S)
        .unwrap();
    assert!(g.tick(32 * S - 1).is_empty());
    let out = g.tick(32 * S);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].resolution, Resolution::ConfirmationTimeout);
    assert!(g.prompt(id).is_none());
}

/// What a voice + visual prompt may be approved on, given the events so far: voice approved
/// while it was in the plan and the overlay approved; or voice lost before it approved and the
/// overlay approved (as a press-and-hold) after the loss.
fn approval_is_earned(events: &[ModalityEvent]) -> bool {
    let mut voice_approved = false;
    let mut voice_lost = false;
    let mut visual_approved = false;
    for e in events {
        match *e {
            ModalityEvent::Answer(Modality::Voice, Answer::Approve) if !voice_lost => {
                voice_approved = true
            }
            ModalityEvent::Answer(Modality::Visual, Answer::Approve) => visual_approved = true,
            ModalityEvent::Lost(Modality::Voice) if !voice_approved && !voice_lost => {
                voice_lost = true;
                // The overlay must be approved again, after the loss.
                visual_approved = false;
            }
            _ => {}
        }
    }
    visual_approved && (voice_approved || voice_lost)
}

fn sequences(alphabet: &[ModalityEvent], max_len: usize) -> Vec<Vec<ModalityEvent>> {
    let mut all = vec![Vec::new()];
    let mut last = vec![Vec::new()];
    for _ in 0..max_len {
        let next: Vec<Vec<ModalityEvent>> = last
            .iter()
            .flat_map(|seq| {
                alphabet.iter().map(move |e| {
                    let mut s = seq.clone();
                    s.push(*e);
                    s
                })
            })
            .collect();
        all.extend(next.iter().cloned());
        last = next;
    }
    all
}

/// Plays `events` one second apart on a fresh voice + visual prompt and checks after each one:
/// an open prompt has a running deadline, a decided one was approved only when earned; in the
/// end the prompt ends by itself.
fn play(g: &mut Gate, now: &mut i64, capability: &str, events: &[ModalityEvent], n: usize) {
    let params = match capability {
        "file.delete" => json!({"path": format!("/tmp/{n}")}),
        _ => json!({"package": format!("p{n}")}),
    };
    *now += 100 * S;
    let id = confirm(g.submit(intent(capability, params), *now));
    let mut decided = None;
    for (i, event) in events.iter().enumerate() {
        *now += S;
        match g.respond(id, *event, *now) {
            Ok(Some(outcome)) => {
                decided = Some((outcome, i));
                break;
            }
            Ok(None) | Err(_) => {
                let deadline = g.prompt(id).and_then(|p| p.next_deadline());
                assert!(
                    deadline.is_some_and(|d| d > *now),
                    "{events:?}: after event {i} the open prompt has no running deadline"
                );
            }
        }
    }
    match decided {
        Some((o, i)) => {
            if o.approved {
                assert!(
                    approval_is_earned(&events[..=i]),
                    "{events:?}: approved on less than the plan"
                );
            }
        }
        None => {
            let out = g.tick(*now + 60 * S);
            assert_eq!(out.len(), 1, "{events:?}: the prompt did not end by itself");
            assert_eq!(out[0].resolution, Resolution::ConfirmationTimeout);
            *now += 60 * S;
        }
    }
    assert!(g.prompt(id).is_none());
}

#[test]
fn every_order_of_answers_and_losses_ends_and_never_approves_on_less_than_the_plan() {
    let dir = support::memory_dir();
    let mut g = gate(dir.path(), "");
    let alphabet = [
        approve(Modality::Voice),
        approve(Modality::Visual),
        ModalityEvent::Lost(Modality::Voice),
        ModalityEvent::Lost(Modality::Visual),
        ModalityEvent::Activity,
    ];
    let mut now = 0;
    for (n, events) in sequences(&alphabet, 4).iter().enumerate() {
        play(&mut g, &mut now, "package.install", events, n);
    }
}

// ── Attack 11: voice alone never approves ───────────────────────────────────────────────────

#[test]
fn voice_alone_never_approves_a_voice_and_visual_prompt_in_any_order() {
    let dir = support::memory_dir();
    let mut g = gate(dir.path(), "");
    g.set_available(Availability {
        haptic: true,
        ..g.available()
    });
    // Everything but an approval on the overlay.
    let alphabet = [
        approve(Modality::Voice),
        ModalityEvent::Lost(Modality::Voice),
        ModalityEvent::Lost(Modality::Haptic),
        approve(Modality::Haptic),
        ModalityEvent::Activity,
        ModalityEvent::Parent(Answer::Approve),
    ];
    let mut now = 0;
    for capability in ["file.delete", "package.install"] {
        for (n, events) in sequences(&alphabet, 4).iter().enumerate() {
            assert!(!approval_is_earned(events));
            play(&mut g, &mut now, capability, events, n);
        }
    }
}

// ── Attack 3: parameters the dialog does not show ───────────────────────────────────────────

#[test]
fn a_parameter_the_manifest_does_not_declare_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), "");
    let o = denied(g.submit(
        intent("file.delete", json!({"path": "/tmp/x", "recursive": true})),
        0,
    ));
    assert_eq!(o.resolution, Resolution::InvalidParams);
    assert!(o.reason.contains("`recursive`"), "{}", o.reason);
    // Routine intents too: the token would cover the parameter.
    let o = denied(g.submit(
        intent("file.write", json!({"path": "/a", "mode": "0777"})),
        S,
    ));
    assert_eq!(o.resolution, Resolution::InvalidParams);
    // A step's undeclared parameter is refused the same way, naming the step.
    let mut i = intent("file.write", json!({"path": "/a"}));
    i.steps = vec![Step {
        capability: "file.delete".into(),
        params: json!({"path": "/b", "recursive": true}),
    }];
    let o = denied(g.submit(i, 2 * S));
    assert_eq!(o.resolution, Resolution::InvalidParams);
    assert!(o.reason.starts_with("steps[0]"), "{}", o.reason);
}

/// A capability that lets clients send anything, and shows it.
const PURGE: &str = r#"
[[capability]]
name = "cache.purge"
version = 1
side_effects = "destructive"
auth_level = "user"
description = "Purge the cache {name}"
params = ["name", "older_than"]
extra_params = "show"
"#;

#[test]
fn with_extra_params_show_the_prompt_lists_every_parameter_its_text_leaves_out() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), PURGE);
    let id = confirm(g.submit(
        intent(
            "cache.purge",
            json!({"name": "thumbs", "older_than": 7, "recursive": true, "note": "x"}),
        ),
        0,
    ));
    let p = g.prompt(id).unwrap();
    assert_eq!(p.description, "Purge the cache thumbs");
    assert_eq!(
        p.extra,
        [
            ("note".to_string(), "x".to_string()),
            ("older_than".to_string(), "7".to_string()),
            ("recursive".to_string(), "true".to_string()),
        ]
    );
}

#[test]
fn a_multi_step_token_covers_its_steps() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), "");
    let steps = vec![Step {
        capability: "file.delete".into(),
        params: json!({"path": "/b"}),
    }];
    let mut i = intent("file.write", json!({"path": "/a"}));
    i.steps = steps.clone();
    let id = confirm(g.submit(i, 0));
    let o = approve_all(&mut g, id, S);
    assert!(o.approved);
    let token = o.token.unwrap();
    let params = json!({"path": "/a"});
    let other_steps = [Step {
        capability: "file.delete".into(),
        params: json!({"path": "/home"}),
    }];
    for wrong in [&other_steps[..], &[]] {
        assert_eq!(
            g.verify_token(&token, "file.write", &params, wrong, None, 2 * S)
                .unwrap(),
            Err(TokenRejection::Mismatch)
        );
    }
    assert!(
        g.verify_token(&token, "file.write", &params, &steps, None, 2 * S)
            .unwrap()
            .is_ok()
    );
}

// ── Attack 7: the queue serves apps in turn ─────────────────────────────────────────────────

#[test]
fn an_app_with_many_prompts_does_not_keep_another_off_the_screen() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), "[queue]\nper_client = 3\n");
    let p = |n: i64| json!({"key": "k", "value": n});
    let a: Vec<IntentId> = (0..3)
        .map(|n| confirm(g.submit(intent_from("a", "settings.change", p(n)), 0)))
        .collect();
    // A fourth from a is refused: its slots are full.
    assert_eq!(
        denied(g.submit(intent_from("a", "settings.change", p(4)), 0)).resolution,
        Resolution::RateLimited
    );
    let b = confirm(g.submit(intent_from("b", "settings.change", p(9)), 0));
    assert_eq!(g.active().unwrap().id, a[0]);
    g.respond(a[0], approve(Modality::Visual), S).unwrap();
    assert_eq!(
        g.active().unwrap().id,
        b,
        "b's prompt comes before a's second"
    );
    g.respond(b, approve(Modality::Visual), 2 * S).unwrap();
    assert_eq!(g.active().unwrap().id, a[1]);
}

/// A client of an unconfined program: known by its uid and executable, on its own connection.
fn program(connection: &str, executable: &str) -> pcp_gate::ClientIdentity {
    pcp_gate::ClientIdentity {
        id: connection.to_string(),
        pid: Some(4242),
        uid: Some(1000),
        executable: Some(executable.to_string()),
        ..Default::default()
    }
}

#[test]
fn prompt_slots_belong_to_the_app_not_to_its_connections() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), "");
    let ask = |connection: &str, exe: &str, n: u32| {
        pcp_gate::Intent::new(
            "settings.change",
            json!({"key": "k", "value": n}),
            program(connection, exe),
        )
    };
    confirm(g.submit(ask("wl-1", "/usr/bin/agent", 1), 0));
    // The same program on a second (and third) connection has no slot left.
    for (n, connection) in ["wl-2", "wl-3"].into_iter().enumerate() {
        let o = denied(g.submit(ask(connection, "/usr/bin/agent", n as u32 + 2), 0));
        assert_eq!(o.resolution, Resolution::RateLimited);
    }
    // Another program still gets its own.
    confirm(g.submit(ask("wl-4", "/usr/bin/editor", 9), 0));
}

// ── Attack 8: a flood stays small ───────────────────────────────────────────────────────────

#[test]
fn denials_are_group_committed_not_synced_one_by_one() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), "");
    denied(g.submit(intent("no.such.capability", json!({})), 0));
    denied(g.submit(intent("file.write", json!(["not", "an", "object"])), 1));
    assert_eq!(
        g.store().buffered(),
        2,
        "the denials wait for the group commit"
    );
    g.tick(250);
    assert_eq!(g.store().buffered(), 0);
    let records = g.store().audit_since(0).unwrap();
    assert_eq!(records.len(), 2);
}

#[test]
fn a_flood_of_denials_with_big_params_keeps_the_buffer_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), "");
    let big = "x".repeat(16 * 1024);
    let mut most_bytes = 0;
    for n in 0..500 {
        let i = intent_from(
            &format!("c{n}"),
            "no.such.capability",
            json!({"blob": big, "n": n}),
        );
        denied(g.submit(i, n));
        assert!(g.store().buffered() < 64);
        most_bytes = most_bytes.max(g.store().buffered_bytes());
    }
    // At most 63 buffered records of a digest and a 1 KiB excerpt each, not of 16 KiB
    // parameters.
    assert!(most_bytes < 64 * 2048, "{most_bytes} bytes buffered");
}

#[test]
fn big_params_are_stored_as_a_digest_and_an_excerpt_unless_the_config_asks_for_all() {
    let big = "é".repeat(10_000);
    let params = json!({"path": "/a", "content": big});
    let canonical = params.to_string();
    for (extra, whole) in [("", false), ("[audit]\nfull_params = true\n", true)] {
        let dir = tempfile::tempdir().unwrap();
        let mut g = gate(dir.path(), extra);
        assert!(matches!(
            g.submit(intent("file.write", params.clone()), 0),
            Decision::Execute(_)
        ));
        g.flush().unwrap();
        let r = g.store().audit_since(0).unwrap().pop().unwrap();
        assert_eq!(r.params_digest, pcp_gate::capability::digest(&params));
        if whole {
            assert_eq!(r.params.as_ref(), Some(&params));
            assert_eq!(r.params_excerpt, None);
        } else {
            assert_eq!(r.params, None);
            let excerpt = r.params_excerpt.unwrap();
            assert!(excerpt.len() <= 1024 && excerpt.len() > 1000);
            assert!(canonical.starts_with(&excerpt));
            assert_eq!(r.params_bytes, Some(canonical.len()));
        }
    }
}

#[test]
fn records_written_before_excerpts_existed_still_read_and_verify() {
    // A record as the gate wrote it before `params_excerpt`/`params_bytes`.
    let old = r#"{"seq":1,"time_ms":5,"profile":"default","client":{"id":"c"},"capability":"file.write","capability_version":1,"params_digest":"ab","params":{"path":"/a"},"threshold":"none","effective_threshold":"none","plan":[],"outcome":"approved","resolution":"policy_allow","prev_hash":"0000000000000000000000000000000000000000000000000000000000000000"}"#;
    let record: pcp_gate::AuditRecord = serde_json::from_str(old).unwrap();
    assert_eq!(record.params_excerpt, None);
    let hash = pcp_gate::audit::chain_hash(old);
    assert_eq!(
        pcp_gate::audit::verify_chain([(1, old, hash.as_str())]),
        Ok(1)
    );
}

// ── Attack 10: tokens ───────────────────────────────────────────────────────────────────────

fn routine_token(g: &mut Gate, client: &str, at: i64) -> String {
    match g.submit(intent_from(client, "file.write", json!({"path": "/a"})), at) {
        Decision::Execute(o) => o.token.unwrap(),
        other => panic!("{other:?}"),
    }
}

fn check(g: &mut Gate, token: &str, app: Option<&str>, at: i64) -> Result<(), TokenRejection> {
    g.verify_token(token, "file.write", &json!({"path": "/a"}), &[], app, at)
        .unwrap()
        .map(|_| ())
}

#[test]
fn a_token_is_refused_after_its_capability_changes() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), "");
    let token = routine_token(&mut g, "app", 0);
    g.update_capability("file.write", 2).unwrap();
    assert_eq!(check(&mut g, &token, None, S), Err(TokenRejection::Stale));
}

#[test]
fn a_token_is_refused_under_another_profile() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), "");
    let token = routine_token(&mut g, "app", 0);
    g.set_profile("bob");
    assert_eq!(
        check(&mut g, &token, None, S),
        Err(TokenRejection::WrongProfile)
    );
    g.set_profile("default");
    assert_eq!(check(&mut g, &token, None, S), Ok(()));
}

#[test]
fn a_token_names_the_app_it_was_issued_to() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), "");
    let token = routine_token(&mut g, "editor", 0);
    let claims = g.token_key().open(&token).unwrap();
    assert_eq!(claims.app, "connection:editor");
    assert_eq!(
        check(&mut g, &token, Some("connection:agent"), S),
        Err(TokenRejection::WrongApp)
    );
    // A refusal does not spend it.
    assert_eq!(check(&mut g, &token, Some("connection:editor"), S), Ok(()));
}

#[test]
fn a_spent_token_stays_spent_when_the_wall_clock_goes_back() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), "");
    let t0 = 1_000_000;
    let first = routine_token(&mut g, "app", t0);
    assert_eq!(check(&mut g, &first, None, t0 + S), Ok(()));
    // Much later another token is verified: the first one's nonce has served its time...
    let later = t0 + 3_600 * S;
    let second = routine_token(&mut g, "app", later);
    assert_eq!(check(&mut g, &second, None, later + S), Ok(()));
    // ...and then the wall clock is set back to just after the first was issued.
    assert_eq!(
        check(&mut g, &first, None, t0 + 2 * S),
        Err(TokenRejection::Expired)
    );
    // Across a restart too: the token clock is kept in the store.
    drop(g);
    let mut g = gate(dir.path(), "");
    assert_eq!(
        check(&mut g, &first, None, t0 + 3 * S),
        Err(TokenRejection::Expired)
    );
}

#[test]
fn a_token_params_check_treats_null_step_params_as_empty() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), "");
    let mut i = intent("file.write", json!({"path": "/a"}));
    i.steps = vec![Step {
        capability: "session.logout".into(),
        params: Value::Null,
    }];
    let id = confirm(g.submit(i, 0));
    let token = approve_all(&mut g, id, S).token.unwrap();
    let steps = [Step {
        capability: "session.logout".into(),
        params: json!({}),
    }];
    assert!(
        g.verify_token(
            &token,
            "file.write",
            &json!({"path": "/a"}),
            &steps,
            None,
            2 * S
        )
        .unwrap()
        .is_ok()
    );
}
