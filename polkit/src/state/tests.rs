//! The request state without a bus: what the front end's calls do to an open request, and that
//! every way to the end answers polkitd, never with success before PAM. The helper here is a
//! path that does not exist (a real condition: a system without polkit's helper).

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, channel};

use super::Shared;
use crate::error::AgentError;
use crate::helper::HelperConfig;
use crate::identity::Identity;
use crate::request::{AgentEvent, Answer, AttemptEnd, AuthRequest, ClosedBy, Reply};
use crate::secret::Secret;

fn shared(max_tries: u32) -> (Arc<Shared>, Receiver<AgentEvent>) {
    let (tx, rx) = channel();
    let helper = HelperConfig {
        socket: "/nonexistent/agent-helper.socket".into(),
        binaries: vec!["/nonexistent/polkit-agent-helper-1".into()],
    };
    let sink = Box::new(move |e| {
        let _ = tx.send(e);
    });
    (Arc::new(Shared::new(sink, max_tries, helper)), rx)
}

fn request(cookie: &str) -> AuthRequest {
    AuthRequest {
        cookie: cookie.into(),
        action_id: "org.pcp.test.self".into(),
        message: "m".into(),
        icon_name: String::new(),
        identities: vec![Identity {
            uid: 1000,
            name: "someone".into(),
        }],
        subject_pid: None,
        caller_pid: None,
        program: None,
        command_line: None,
        details: HashMap::new(),
        skipped_identities: Vec::new(),
    }
}

#[test]
fn approve_before_pam_fails_the_request() {
    let (s, events) = shared(3);
    let reply = s.open(request("c1")).expect("opened");
    assert!(matches!(events.recv(), Ok(AgentEvent::Request(_))));
    assert_eq!(
        s.answer("c1", Answer::Approve),
        Err(AgentError::NotAuthenticated)
    );
    assert!(matches!(reply.try_recv(), Ok(Reply::Failed(_))));
    assert!(matches!(
        events.recv(),
        Ok(AgentEvent::Closed {
            by: ClosedBy::FrontEnd,
            ..
        })
    ));
    assert_eq!(
        s.answer("c1", Answer::Deny),
        Err(AgentError::UnknownCookie("c1".into()))
    );
}

#[test]
fn deny_and_fail_answer_cancelled_and_failed() {
    let (s, _events) = shared(3);
    let deny = s.open(request("d")).expect("opened");
    let fail = s.open(request("f")).expect("opened");
    assert!(
        s.open(request("d"))
            .expect_err("duplicate")
            .contains("already open")
    );
    s.answer("d", Answer::Deny).expect("denied");
    s.answer("f", Answer::Fail("no output".into()))
        .expect("failed");
    assert_eq!(deny.try_recv(), Ok(Reply::Cancelled));
    assert_eq!(fail.try_recv(), Ok(Reply::Failed("no output".into())));
}

#[test]
fn calls_that_do_not_fit_the_request_are_refused() {
    let (s, _events) = shared(3);
    let _reply = s.open(request("c")).expect("opened");
    assert_eq!(
        s.authenticate("c", 0),
        Err(AgentError::NoSuchIdentity { uid: 0 })
    );
    assert_eq!(
        s.respond("c", Secret::new("pw".into())),
        Err(AgentError::NoPrompt)
    );
    let err = s
        .respond("c", Secret::new("a\nb".into()))
        .expect_err("a line break");
    assert!(matches!(err, AgentError::BadSecret(_)));
    assert_eq!(
        s.authenticate("x", 1000),
        Err(AgentError::UnknownCookie("x".into()))
    );
}

#[test]
fn a_missing_helper_uses_up_the_tries_and_fails_the_request() {
    let (s, events) = shared(2);
    let reply = s.open(request("c")).expect("opened");
    let _ = events.recv();
    for left in [1, 0] {
        s.authenticate("c", 1000).expect("a try is started");
        match events.recv() {
            Ok(AgentEvent::AttemptEnded {
                end: AttemptEnd::Broken { reason, tries_left },
                ..
            }) => {
                assert!(reason.contains("no polkit-agent-helper-1"), "{reason}");
                assert_eq!(tries_left, left);
            }
            other => panic!("not a broken attempt: {other:?}"),
        }
    }
    assert!(matches!(
        events.recv(),
        Ok(AgentEvent::Closed {
            by: ClosedBy::TooManyFailures,
            ..
        })
    ));
    assert_eq!(
        reply.try_recv(),
        Ok(Reply::Failed("2 password attempts failed".into()))
    );
    assert_eq!(
        s.authenticate("c", 1000),
        Err(AgentError::UnknownCookie("c".into()))
    );
}

#[test]
fn stopping_answers_every_open_request_cancelled() {
    let (s, _events) = shared(3);
    let a = s.open(request("a")).expect("opened");
    let b = s.open(request("b")).expect("opened");
    s.close_all();
    assert_eq!(a.try_recv(), Ok(Reply::Cancelled));
    assert_eq!(b.try_recv(), Ok(Reply::Cancelled));
}

#[test]
fn switching_to_an_identity_polkitd_did_not_offer_is_refused() {
    let (s, _events) = shared(3);
    let _reply = s.open(request("c")).expect("opened");
    assert_eq!(
        s.drop_unanswered_attempt("c", 0),
        Err(AgentError::NoSuchIdentity { uid: 0 })
    );
    assert_eq!(
        s.drop_unanswered_attempt("gone", 1000),
        Err(AgentError::UnknownCookie("gone".into()))
    );
    assert_eq!(
        s.drop_unanswered_attempt("c", 1000),
        Ok(()),
        "nothing running"
    );
}
