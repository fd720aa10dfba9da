//! Session approvals ("allow until logout"): offered only for actions at most as risky as a
//! visual prompt, to a verified app, when the config turns them on; they cover that app, that
//! capability at that version and those salient parameters, and end at logout, at a profile
//! switch and when the capability changes.

mod support;

use pcp_gate::{
    ClientIdentity, Decision, Gate, Intent, IntentId, ModalityEvent, Outcome, Resolution,
    RespondError, Step,
};
use serde_json::{Value, json};
use support::gate;

const S: i64 = 1000;
const ON: &str = "[gate]\nsession_approvals = true\n";

fn program(exe: &str) -> ClientIdentity {
    ClientIdentity {
        id: format!("wl-{exe}"),
        pid: Some(7),
        uid: Some(1000),
        executable: Some(exe.to_string()),
        ..Default::default()
    }
}

fn agent() -> ClientIdentity {
    program("/usr/bin/agent")
}

fn setting(value: &str) -> Value {
    json!({"key": "theme", "value": value})
}

fn ask(client: ClientIdentity, capability: &str, params: Value) -> Intent {
    Intent::new(capability, params, client)
}

fn prompt_of(d: Decision) -> IntentId {
    match d {
        Decision::Confirm { id, .. } => id,
        other => panic!("expected a prompt, got {other:?}"),
    }
}

/// Submits and chooses "allow until logout".
fn allow_for_session(g: &mut Gate, intent: Intent, at: i64) -> Outcome {
    let id = prompt_of(g.submit(intent, at));
    assert!(g.prompt(id).unwrap().offers_session());
    g.respond(id, ModalityEvent::ApproveForSession, at + S)
        .unwrap()
        .expect("the overlay was the whole plan")
}

fn executed(d: Decision) -> Outcome {
    match d {
        Decision::Execute(o) => o,
        other => panic!("expected it to run, got {other:?}"),
    }
}

#[test]
fn later_matching_intents_run_approved_for_the_session_with_a_token() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), ON);
    let first = allow_for_session(&mut g, ask(agent(), "settings.change", setting("dark")), 0);
    assert_eq!(first.resolution, Resolution::UserApproved);
    assert_eq!(g.session_approvals(), 1);
    for n in 1..4 {
        let o = executed(g.submit(ask(agent(), "settings.change", setting("dark")), n * 10 * S));
        assert_eq!(o.resolution, Resolution::UserApprovedForSession);
        assert!(o.token.is_some());
    }
    // Other salient parameters are another action: asked again.
    prompt_of(g.submit(ask(agent(), "settings.change", setting("light")), 50 * S));
    g.flush().unwrap();
    let resolutions: Vec<Resolution> = g
        .store()
        .audit_since(0)
        .unwrap()
        .iter()
        .map(|r| r.resolution)
        .collect();
    assert_eq!(
        resolutions,
        [
            Resolution::UserApproved,
            Resolution::UserApprovedForSession,
            Resolution::UserApprovedForSession,
            Resolution::UserApprovedForSession,
        ]
    );
}

#[test]
fn one_apps_session_approval_does_not_cover_another_app() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), ON);
    allow_for_session(&mut g, ask(agent(), "settings.change", setting("dark")), 0);
    let other = program("/usr/bin/other-agent");
    prompt_of(g.submit(ask(other, "settings.change", setting("dark")), 10 * S));
}

#[test]
fn it_is_never_offered_for_destructive_system_or_multi_step_intents() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), ON);
    let mut t = 0;
    let mut not_offered = |g: &mut Gate, intent: Intent| {
        t += 100 * S;
        let id = prompt_of(g.submit(intent, t));
        assert!(!g.prompt(id).unwrap().offers_session());
        assert_eq!(
            g.respond(id, ModalityEvent::ApproveForSession, t + S),
            Err(RespondError::SessionNotOffered)
        );
        g.cancel(id, t + 2 * S).unwrap();
    };
    not_offered(&mut g, ask(agent(), "file.delete", json!({"path": "/a"})));
    not_offered(
        &mut g,
        ask(agent(), "package.install", json!({"package": "x"})),
    );
    not_offered(&mut g, ask(agent(), "session.logout", json!({})));
    let mut multi = ask(agent(), "file.write", json!({"path": "/a"}));
    multi.steps = vec![Step {
        capability: "file.write".into(),
        params: json!({"path": "/b"}),
    }];
    not_offered(&mut g, multi);
    // Nor to an app known only by its connection: there is no app to remember.
    not_offered(
        &mut g,
        ask(
            ClientIdentity::named("anonymous"),
            "settings.change",
            setting("dark"),
        ),
    );
    // And not at all unless the config turns it on.
    let dir = tempfile::tempdir().unwrap();
    let mut off = support::gate(dir.path(), "");
    not_offered(&mut off, ask(agent(), "settings.change", setting("dark")));
}

#[test]
fn it_ends_at_logout() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), ON);
    allow_for_session(&mut g, ask(agent(), "settings.change", setting("dark")), 0);
    executed(g.submit(ask(agent(), "settings.change", setting("dark")), 10 * S));
    g.end_session().unwrap();
    assert_eq!(g.session_approvals(), 0);
    prompt_of(g.submit(ask(agent(), "settings.change", setting("dark")), 20 * S));
    // Nor does a new gate (a new session) remember it.
    drop(g);
    let mut g = gate(dir.path(), ON);
    prompt_of(g.submit(ask(agent(), "settings.change", setting("dark")), 30 * S));
}

#[test]
fn it_ends_at_a_profile_switch_and_when_the_capability_changes() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), ON);
    allow_for_session(&mut g, ask(agent(), "settings.change", setting("dark")), 0);
    g.set_profile("bob");
    g.set_profile("default");
    prompt_of(g.submit(ask(agent(), "settings.change", setting("dark")), 10 * S));

    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), ON);
    allow_for_session(&mut g, ask(agent(), "settings.change", setting("dark")), 0);
    g.update_capability("settings.change", 2).unwrap();
    assert_eq!(g.session_approvals(), 0);
    prompt_of(g.submit(ask(agent(), "settings.change", setting("dark")), 10 * S));
}

#[test]
fn explain_says_whether_the_prompt_would_offer_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = gate(dir.path(), ON);
    let intent = ask(agent(), "settings.change", setting("dark"));
    let ex = g.explain(&intent, 0);
    assert!(ex.offers_session);
    assert!(
        !g.explain(&ask(agent(), "file.delete", json!({"path": "/a"})), 0)
            .offers_session
    );
    allow_for_session(&mut g, intent.clone(), 0);
    let ex = g.explain(&intent, 10 * S);
    assert_eq!(ex.would, "execute");
    assert_eq!(ex.resolution, Some("user_approved_for_session"));
}
