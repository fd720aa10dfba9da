//! Hostile clients against the protocol, each attack performed through the real protocol
//! against the headless compositor with the harness playing the user: control characters that
//! once broke the spoken question (attack 2), keys given twice and parameters the description
//! leaves out (attack 3), a flood of refused submissions and one app with many connections
//! (attack 7), and memfds read through the offset the client shares or that are not what they
//! claim (attack 9). Typing through and swapping under the dialog (attacks 5 and 6) are in
//! `dialog_attacks.rs`.

mod harness;

use std::os::fd::{AsFd, AsRawFd};
use std::sync::mpsc;

use pcp_overlay::{Control, Requester};
use pcp_protocol::client::{ClientError, IntentEvent};
use serde_json::json;

use harness::{AsyncIntent, Fixture, intent};

const ONE: &[&str] = &["1920x1080@0,0"];

/// The manager's protocol errors (pcp-intent-v1.xml).
const INVALID_JSON: u32 = 2;
const INVALID_TARGET: u32 = 5;
const RATE_LIMITED: u32 = 6;

/// The protocol error that ended `client`'s connection (panics on any other event).
fn protocol_error(fx: &mut Fixture, client: &AsyncIntent) -> (u32, String) {
    match fx.next_event(client) {
        Err(ClientError::Protocol { code, message, .. }) => (code, message),
        other => panic!("expected a protocol error, got {other:?}"),
    }
}

/// Sends `submit` with raw texts from a new connection and returns the protocol error it got.
fn submit_raw(
    fx: &mut Fixture,
    capability: &'static str,
    params: &'static str,
    target: Option<&'static str>,
    steps: Option<&'static str>,
) -> (u32, String) {
    let c = fx.client(move |c| Ok(vec![c.submit_raw(capability, params, target, steps)?]));
    protocol_error(fx, &c)
}

/// Sends `submit_fd` with `doc` in a sealed memfd from a new connection.
fn submit_doc(fx: &mut Fixture, doc: &'static [u8]) -> AsyncIntent {
    fx.client(move |c| {
        let (fd, size) = pcp_protocol::wire::sealed_bytes(doc).unwrap();
        Ok(vec![c.submit_fd_raw("file.write", fd.as_fd(), size)?])
    })
}

/// A routine request still goes through: the compositor carries on after each refusal.
fn still_serving(fx: &mut Fixture) {
    assert!(fx.gate().active().is_none(), "a refused intent was shown");
    let c = fx.submit(intent("file.read", json!({"path": "/etc/hostname"})));
    assert!(fx.decision(&c).approved);
}

#[test]
fn attack2_a_control_character_in_params_is_a_protocol_error_not_a_weaker_confirmation() {
    let mut fx = Fixture::new(ONE);
    // A NUL once made the spoken question fail, which dropped the voice step.
    for (params, steps, what) in [
        (r#"{"path":"/tmp/x\u0000"}"#, None, "U+0000"),
        (r#"{"path\u001b":"/tmp/x"}"#, None, "U+001B"),
        (r#"{"path":"/tmp/x","n":[{"a":"\u0085"}]}"#, None, "U+0085"),
        (
            "{}",
            Some(r#"[{"capability":"file.delete","params":{"path":"/a\u0000"}}]"#),
            "U+0000",
        ),
    ] {
        let (code, message) = submit_raw(&mut fx, "file.delete", params, None, steps);
        assert_eq!(code, INVALID_JSON, "{message}");
        assert!(message.contains(what), "{what}: {message}");
    }
    let c = submit_doc(&mut fx, br#"{"params":{"path":"/tmp/x\u0000"}}"#);
    let (code, message) = protocol_error(&mut fx, &c);
    assert_eq!(code, INVALID_JSON, "{message}");
    assert!(message.contains("memfd.params.path"), "{message}");
    let (code, message) = submit_raw(&mut fx, "file.delete", "{}", Some("/tmp/\u{7}x"), None);
    assert_eq!(code, INVALID_TARGET, "{message}");
    still_serving(&mut fx);
}

#[test]
fn attack3_a_key_given_twice_is_a_protocol_error() {
    let mut fx = Fixture::new(ONE);
    // The dialog would show the first path, a lenient reader acts on the last.
    for (params, steps, place) in [
        (r#"{"path":"/tmp/x","path":"/"}"#, None, "params"),
        (r#"{"path":"/tmp/x","o":{"a":1,"a":2}}"#, None, "params.o"),
        (
            "{}",
            Some(r#"[{"capability":"file.delete","params":{"path":"/tmp/x","path":"/"}}]"#),
            "steps[0].params",
        ),
    ] {
        let (code, message) = submit_raw(&mut fx, "file.delete", params, None, steps);
        assert_eq!(code, INVALID_JSON, "{message}");
        assert!(message.contains("appears twice"), "{message}");
        assert!(message.contains(place), "{place}: {message}");
    }
    let c = submit_doc(
        &mut fx,
        br#"{"params":{"path":"/tmp/x"},"params":{"path":"/"}}"#,
    );
    let (code, message) = protocol_error(&mut fx, &c);
    assert_eq!(code, INVALID_JSON, "{message}");
    assert!(message.contains("`params` appears twice"), "{message}");
    still_serving(&mut fx);
}

/// A capability that takes parameters its description does not name, and shows them.
const PURGE: &str = r#"
[[capability]]
name = "cache.purge"
version = 1
side_effects = "destructive"
auth_level = "user"
description = "Purge the cache {name}"
params = ["name"]
extra_params = "show"
"#;

#[test]
fn attack3_parameters_the_description_leaves_out_are_refused_or_on_the_dialog() {
    let mut fx = Fixture::with_config(ONE, PURGE);
    // Undeclared: approved as "Delete /tmp/x" it would also have been recursive.
    let c = fx.submit(intent(
        "file.delete",
        json!({"path": "/tmp/x", "recursive": true}),
    ));
    let d = fx.decision(&c);
    assert_eq!(d.resolution, "invalid_params");
    assert!(d.reason.unwrap_or_default().contains("recursive"));
    // Declared as shown: every extra parameter is on the dialog, with its value.
    let c = fx.submit(intent(
        "cache.purge",
        json!({"name": "thumbs", "recursive": true, "older_than": 7}),
    ));
    fx.pending(&c);
    let content = fx.dialog_content();
    assert_eq!(content.action, "Purge the cache thumbs");
    let mut extra = content.extra_params.clone();
    extra.sort();
    assert_eq!(
        extra,
        [
            ("older_than".to_string(), "7".to_string()),
            ("recursive".to_string(), "true".to_string())
        ]
    );
}

#[test]
fn attack9_a_memfd_is_read_without_using_or_moving_the_offset_the_client_shares() {
    let mut fx = Fixture::new(ONE);
    let (tx, rx) = mpsc::channel();
    let c = fx.client(move |c| {
        let (fd, size) =
            pcp_protocol::wire::sealed_memfd(&json!({"path": "/etc/hostname"}), &[]).unwrap();
        // The client keeps the open file it passes, and with it the offset: somewhere inside.
        // SAFETY: lseek on a descriptor this closure owns.
        let set = unsafe { libc::lseek(fd.as_raw_fd(), 5, libc::SEEK_SET) };
        let h = c.submit_fd_raw("file.read", fd.as_fd(), size)?;
        c.roundtrip()?;
        // SAFETY: as above.
        let after = unsafe { libc::lseek(fd.as_raw_fd(), 0, libc::SEEK_CUR) };
        let _ = tx.send((set, after));
        Ok(vec![h])
    });
    // Read from the start whatever the offset: the params arrive whole.
    let d = fx.decision(&c);
    assert_eq!(d.resolution, "policy_allow", "{d:?}");
    let (set, after) = rx.recv().unwrap();
    assert_eq!(set, 5);
    assert_eq!(after, 5, "the compositor moved the client's file offset");
}

#[test]
fn attack9_a_bad_fd_ends_only_its_request() {
    let mut fx = Fixture::new(ONE);
    let c = fx.client(|c| {
        let waiting = c.submit(&intent(
            "settings.change",
            json!({"key": "k", "value": "v"}),
        ))?;
        c.roundtrip()?;
        // Not sealed.
        let file = tempfile::tempfile().map_err(|e| ClientError::Io(e.to_string()))?;
        std::io::Write::write_all(&mut &file, br#"{"params":{"path":"/x"}}"#)
            .map_err(|e| ClientError::Io(e.to_string()))?;
        let unsealed = c.submit_fd_raw("file.read", file.as_fd(), 24)?;
        // Sealed, but shorter than announced.
        let (fd, size) = pcp_protocol::wire::sealed_memfd(&json!({"path": "/x"}), &[]).unwrap();
        let short = c.submit_fd_raw("file.read", fd.as_fd(), size + 100)?;
        Ok(vec![waiting, unsealed, short])
    });
    let mut denied = Vec::new();
    let mut pending = false;
    while denied.len() < 2 || !pending {
        match fx.next_event(&c).expect("the connection stays") {
            IntentEvent::Pending { .. } => pending = true,
            IntentEvent::Final { decision, .. } => denied.push(decision),
        }
    }
    for d in &denied {
        assert_eq!(d.resolution, "invalid_params", "{d:?}");
    }
    assert!(denied[0].reason.as_deref().unwrap_or("").contains("seal"));
    assert!(
        denied[1]
            .reason
            .as_deref()
            .unwrap_or("")
            .contains("announced")
    );
    // The same connection's other intent carries on and is approved.
    fx.advance_clock(1000);
    fx.click(Control::Approve);
    match fx.next_event(&c).expect("the connection stays") {
        IntentEvent::Final { decision, .. } => assert_eq!(decision.resolution, "user_approved"),
        other => panic!("expected the approval, got {other:?}"),
    }
}

#[test]
fn attack7_a_client_that_keeps_being_rate_limited_is_disconnected() {
    let mut fx = Fixture::with_config(
        ONE,
        "[queue]\ndisconnect_after = 3\ndisconnect_window_seconds = 10\n",
    );
    // Refused twice, then quiet past the window: the count starts again, it stays connected.
    let shown = fx.submit(intent("settings.change", json!({"key": "a", "value": "b"})));
    fx.pending(&shown);
    let (sent, round_sent) = mpsc::channel::<()>();
    let (go, wait) = mpsc::channel::<()>();
    let patient = fx.client(move |c| {
        let mut handles = Vec::new();
        for round in 0..2 {
            for i in 0..2 {
                let p = json!({"key": format!("p{round}{i}"), "value": "v"});
                handles.push(c.submit(&intent("settings.change", p))?);
            }
            c.roundtrip()?;
            if round == 0 {
                let _ = sent.send(());
                let _ = wait.recv();
            }
        }
        // Fails if the compositor ended the connection.
        c.roundtrip()?;
        Ok(handles)
    });
    fx.pump_until("the first two were refused", |_| {
        round_sent.try_recv().is_ok()
    });
    fx.advance_clock(11_000);
    go.send(()).unwrap();
    for _ in 0..4 {
        assert_eq!(fx.decision(&patient).resolution, "rate_limited");
    }
    // Three refusals within the window: the connection ends with the protocol error.
    let flood = fx.client(|c| {
        let mut handles = Vec::new();
        for i in 0..10 {
            let p = json!({"key": format!("f{i}"), "value": "v"});
            handles.push(c.submit(&intent("settings.change", p))?);
        }
        Ok(handles)
    });
    // (The client library may report the error before the refusals sent just ahead of it.)
    let mut refused = 0;
    let (code, message) = loop {
        match fx.next_event(&flood) {
            Ok(IntentEvent::Final { decision, .. }) => {
                assert_eq!(decision.resolution, "rate_limited");
                refused += 1;
            }
            Err(ClientError::Protocol { code, message, .. }) => break (code, message),
            other => panic!("expected refusals then a protocol error, got {other:?}"),
        }
    };
    assert!(refused <= 3, "{refused} refusals before the error");
    assert_eq!(code, RATE_LIMITED, "{message}");
    assert!(message.contains("disconnect_after"), "{message}");
    // The patient client was not disconnected, and the prompt on screen is still answerable.
    assert!(fx.dialog_open());
    fx.advance_clock(1000);
    fx.click(Control::Approve);
    assert_eq!(fx.decision(&shown).resolution, "user_approved");
}

/// The role a copy of this test binary plays in
/// [`attack7_one_app_with_nine_connections_does_not_starve_another`].
const SECOND_APP: &str = "PCP_HOSTILE_SECOND_APP";

#[test]
fn attack7_one_app_with_nine_connections_does_not_starve_another() {
    let mut fx = Fixture::new(ONE);
    // App A (this executable) opens nine connections: one prompt, eight refused.
    let first = fx.submit(intent(
        "settings.change",
        json!({"key": "a0", "value": "v"}),
    ));
    fx.pending(&first);
    for i in 1..9 {
        let c = fx.submit(intent(
            "settings.change",
            json!({"key": format!("a{i}"), "value": "v"}),
        ));
        assert_eq!(fx.decision(&c).resolution, "rate_limited", "connection {i}");
    }
    // App B: another executable (a link to this binary under another name) asks too.
    let exe = std::env::current_exe().unwrap();
    let other = exe.with_file_name(format!(
        "{}-second-app-{}",
        exe.file_name().unwrap().to_string_lossy(),
        std::process::id()
    ));
    let _ = std::fs::remove_file(&other);
    if std::fs::hard_link(&exe, &other).is_err() {
        std::fs::copy(&exe, &other).unwrap();
    }
    let mut command = fx.command(&other);
    command
        .args([
            "--exact",
            "second_app_submits",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(SECOND_APP, "1");
    let child = command.spawn().unwrap();
    fx.pump_until("B's prompt waits behind A's", |fx| fx.queued() == 1);
    // A's prompt ends; B's is shown, named by B's own executable.
    fx.advance_clock(1000);
    fx.click(Control::Deny);
    assert_eq!(fx.decision(&first).resolution, "user_denied");
    fx.pump_until("B's prompt is shown", |fx| {
        fx.gate()
            .active()
            .is_some_and(|p| p.intent.params["key"] == "b")
    });
    match fx.dialog_requester() {
        Requester::Unconfined { executable, .. } => {
            assert_eq!(executable, other.to_string_lossy())
        }
        other => panic!("expected B's executable, got {other:?}"),
    }
    fx.advance_clock(1000);
    fx.click(Control::Approve);
    let mut child = Some(child);
    fx.pump_until("B exits", |_| {
        child
            .as_mut()
            .is_some_and(|c| matches!(c.try_wait(), Ok(Some(_))))
    });
    let output = child.take().unwrap().wait_with_output().unwrap();
    let _ = std::fs::remove_file(&other);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("second app: user_approved"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// App B of [`attack7_one_app_with_nine_connections_does_not_starve_another`], run by that test
/// as another executable (it needs the compositor that test starts).
#[test]
#[ignore = "run by attack7_one_app_with_nine_connections_does_not_starve_another as another executable"]
fn second_app_submits() {
    assert_eq!(
        std::env::var(SECOND_APP).as_deref(),
        Ok("1"),
        "only attack7_one_app_with_nine_connections_does_not_starve_another runs this"
    );
    let mut client = pcp_protocol::client::IntentClient::connect().unwrap();
    let h = client
        .submit(&intent(
            "settings.change",
            json!({"key": "b", "value": "v"}),
        ))
        .unwrap();
    let d = client.wait(&h).unwrap();
    println!("second app: {}", d.resolution);
}

#[test]
fn attack8_built_ins_asked_for_in_a_loop_leave_a_bounded_record() {
    const APP: &str = "org.freedesktop.weston.simple-shm";
    let mut fx = Fixture::new(&["800x600@0,0", "800x600@800,0"]);
    fx.set_focus_hint(100.0, 100.0);
    let mut shm = fx.spawn(fx.command("weston-simple-shm"));
    fx.pump_until("weston-simple-shm's window", |fx| {
        fx.window_location_of(APP).is_some()
    });
    let kept = pcp_compositor::builtins::PERFORMED_KEPT;
    for i in 0..kept + 36 {
        let output = if i % 2 == 0 {
            "HEADLESS-2"
        } else {
            "HEADLESS-1"
        };
        let c = fx.submit(intent(
            "window.move",
            json!({"window": APP, "output": output}),
        ));
        // Asked until the history of approvals lets it run unasked.
        let d = match fx.next_event(&c).unwrap() {
            IntentEvent::Pending { .. } => {
                fx.advance_clock(1000);
                fx.click(Control::Approve);
                fx.decision(&c)
            }
            IntentEvent::Final { decision, .. } => decision,
        };
        assert!(d.approved, "{i}: {d:?}");
    }
    assert_eq!(
        fx.window_location_of(APP).unwrap().0,
        0,
        "it ran every time"
    );
    let performed = fx.performed();
    assert_eq!(
        performed.len(),
        kept,
        "the record of performed built-ins grew"
    );
    assert!(performed.iter().all(|c| c == "window.move"));
    let _ = shm.kill();
    let _ = shm.wait();
}

/// Starts a client that connects, then writes `count` routine submissions at once and, when
/// `cancel_last`, cancels the last one in the same burst; returns once all of it is on the
/// socket, before the compositor has read any of it.
fn burst(fx: &mut Fixture, count: usize, cancel_last: bool) -> AsyncIntent {
    let (ready_tx, ready) = mpsc::channel::<()>();
    let (go, wait) = mpsc::channel::<()>();
    let (written_tx, written) = mpsc::channel::<()>();
    let c = fx.client(move |c| {
        let _ = ready_tx.send(());
        let _ = wait.recv();
        let mut handles = Vec::new();
        for i in 0..count {
            let p = json!({"path": format!("/tmp/burst/{i}")});
            handles.push(c.submit(&intent("file.write", p))?);
        }
        if cancel_last {
            handles.last().unwrap().cancel();
        }
        let _ = written_tx.send(());
        Ok(handles)
    });
    fx.pump_until("the client to connect", |_| ready.try_recv().is_ok());
    go.send(()).unwrap();
    // Not served meanwhile: the burst fits the socket's buffer.
    if written.recv_timeout(harness::WAIT).is_err() {
        panic!("the burst was not written: {:?}", fx.next_event(&c));
    }
    c
}

#[test]
fn flood_intents_beyond_a_round_wait_their_turn_in_order() {
    let mut fx = Fixture::new(ONE);
    // 40 at once: decided in turns over rounds, in the order sent; the last, cancelled while
    // it waited, is never decided.
    let c = burst(&mut fx, 40, true);
    let mut finals = Vec::new();
    while finals.len() < 40 {
        if let IntentEvent::Final { intent, decision } = fx.next_event(&c).unwrap() {
            finals.push((intent, decision.resolution));
        }
    }
    let ids: Vec<u32> = finals.iter().map(|(i, _)| *i).collect();
    let mut sorted = ids.clone();
    sorted.sort();
    assert_eq!(ids, sorted, "decided in the order sent");
    assert!(
        finals[..39].iter().all(|(_, r)| r == "policy_allow"),
        "{finals:?}"
    );
    assert_eq!(finals[39].1, "cancelled");
    still_serving(&mut fx);
}

#[test]
fn attack10_a_token_names_the_app_it_was_given_to() {
    let mut fx = Fixture::new(ONE);
    let params = json!({"path": "/tmp/token-app"});
    let c = fx.submit(intent("file.write", params.clone()));
    let d = fx.decision(&c);
    let token = d.token.expect("a token for an executor");
    let exe = std::env::current_exe().unwrap();
    // SAFETY: getuid has no arguments and cannot fail.
    let uid = unsafe { libc::getuid() };
    let mine = format!("exe:{uid}:{}", exe.display());
    // Another app presenting this app's token is refused (pcpctl token verify --app does this).
    let other = format!("exe:{uid}:/usr/bin/other-agent");
    let refused = fx
        .pcp_mut()
        .verify_token(&token, "file.write", &params, &[], Some(&other), 0)
        .unwrap()
        .unwrap_err();
    assert_eq!(refused.code(), "wrong_app", "{refused}");
    let claims = fx
        .pcp_mut()
        .verify_token(&token, "file.write", &params, &[], Some(&mine), 0)
        .unwrap()
        .expect("valid for the app it was given to");
    assert_eq!(claims.app, mine);
}

#[test]
fn attack4_approve_waits_until_the_whole_action_was_on_screen() {
    const KEY_END: u32 = 107;
    let mut fx = Fixture::new(&["800x480@0,0"]);
    // A value long enough to scroll, its point at the very end.
    let value = format!("{}; rm -rf ~", "harmless ".repeat(200));
    let c = fx.submit(intent(
        "settings.change",
        json!({"key": "shell.rc", "value": value}),
    ));
    fx.pending(&c);
    assert!(
        fx.dialog_content().action.ends_with("; rm -rf ~"),
        "the dialog has the whole action"
    );
    // Past the guard, Approve is clicked before the end was ever on screen: nothing.
    fx.advance_clock(1000);
    fx.click(Control::Approve);
    fx.pump();
    assert!(fx.gate().active().is_some(), "approved unread text");
    // Scrolled to the end (keyboard End: the click gave the dialog the keyboard), the click
    // counts.
    assert!(fx.dialog_has_keyboard());
    fx.inject_key(KEY_END, true);
    fx.inject_key(KEY_END, false);
    assert!(fx.dialog_live().unwrap().read_all, "scrolled to the end");
    fx.click(Control::Approve);
    assert_eq!(fx.decision(&c).resolution, "user_approved");
}

/// What the bursting client of [`flood_a_client_with_too_many_intents_waiting_is_disconnected`]
/// says.
enum Burst {
    Connected,
    Written,
    Ended(ClientError),
}

#[test]
fn flood_a_client_with_too_many_intents_waiting_is_disconnected() {
    let mut fx = Fixture::new(ONE);
    let path = fx.socket_path();
    let (tx, rx) = mpsc::channel();
    let (go, wait) = mpsc::channel::<()>();
    let client = std::thread::spawn(move || {
        let stream = std::os::unix::net::UnixStream::connect(&path).unwrap();
        // Room for the whole burst on the socket (each message is a buffer of its own there).
        let room: libc::c_int = 16 << 20;
        // SAFETY: setsockopt on a socket this thread owns, with a pointer to a live c_int.
        let set = unsafe {
            libc::setsockopt(
                stream.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_SNDBUFFORCE,
                (&room as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        assert_eq!(
            set,
            0,
            "SO_SNDBUFFORCE: {}",
            std::io::Error::last_os_error()
        );
        let conn = wayland_client::Connection::from_socket(stream).unwrap();
        let mut c = pcp_protocol::client::IntentClient::from_connection(conn).unwrap();
        let _ = tx.send(Burst::Connected);
        let _ = wait.recv();
        let mut handles = Vec::new();
        for i in 0..300 {
            let p = json!({"path": format!("/tmp/burst/{i}")});
            handles.push(c.submit(&intent("file.write", p)).unwrap());
        }
        let _ = tx.send(Burst::Written);
        loop {
            if let Err(e) = c.next_event() {
                let _ = tx.send(Burst::Ended(e));
                return;
            }
        }
    });
    fx.pump_until("the client to connect", |_| {
        matches!(rx.try_recv(), Ok(Burst::Connected))
    });
    go.send(()).unwrap();
    // All 300 are on the socket before the compositor reads any: one round reads them all.
    assert!(matches!(rx.recv_timeout(harness::WAIT), Ok(Burst::Written)));
    let mut ended = None;
    fx.pump_until("the client to be ended", |_| {
        if let Ok(Burst::Ended(e)) = rx.try_recv() {
            ended = Some(e);
        }
        ended.is_some()
    });
    match ended {
        Some(ClientError::Protocol { code, message, .. }) => {
            assert_eq!(code, 7, "too_many_waiting: {message}")
        }
        other => panic!("expected too_many_waiting, got {other:?}"),
    }
    client.join().unwrap();
    still_serving(&mut fx);
}
