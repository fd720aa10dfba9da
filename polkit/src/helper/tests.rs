//! The helper's line format, and the socket form's conversation. polkit 122 (Debian 12) has no
//! helper socket, so the socket form is driven here by a thread speaking the helper's side of
//! the protocol over a socket pair; the binary form runs for real in `tests/polkitd.rs`.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::sync::mpsc;

use super::{Line, Step, compress, over_socket, parse_line};
use crate::request::{MessageKind, Prompt};
use crate::secret::Secret;

#[test]
fn lines_parse_into_prompts_messages_and_verdicts() {
    let prompt = |text: &str, echo| {
        Line::Prompt(Prompt {
            text: text.into(),
            echo,
        })
    };
    assert_eq!(
        parse_line(b"PAM_PROMPT_ECHO_OFF Password: "),
        Ok(prompt("Password: ", false))
    );
    assert_eq!(
        parse_line(b"PAM_PROMPT_ECHO_ON Login:"),
        Ok(prompt("Login:", true))
    );
    assert_eq!(
        parse_line(b"PAM_ERROR_MSG Sorry\\nagain"),
        Ok(Line::Message(MessageKind::Error, "Sorry\nagain".into()))
    );
    assert_eq!(
        parse_line(b"PAM_TEXT_INFO Touch the key"),
        Ok(Line::Message(MessageKind::Info, "Touch the key".into()))
    );
    assert_eq!(parse_line(b"SUCCESS"), Ok(Line::Success));
    assert_eq!(parse_line(b"FAILURE"), Ok(Line::Failure));
    let err = parse_line(b"SUCCESS!").expect_err("not a verdict");
    assert!(err.contains("SUCCESS!"), "{err}");
    assert!(
        parse_line(b"\xff\xfe")
            .expect_err("not UTF-8")
            .contains("UTF-8")
    );
}

#[test]
fn escapes_are_undone_like_g_strcompress() {
    assert_eq!(compress(r"a\tb\\c\101\"), "a\tb\\cA\\");
    assert_eq!(compress(r"caf\303\251"), "café");
}

/// Plays the helper's side: checks the user and cookie lines, prompts, expects `answer`.
fn fake_helper(stream: UnixStream, answer: &'static str, verdict: &'static str) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
    let mut w = stream;
    let mut line = String::new();
    for expected in ["pcptest\n", "1-abc-1-def\n"] {
        line.clear();
        reader.read_line(&mut line).expect("read");
        assert_eq!(line, expected);
    }
    writeln!(w, "PAM_TEXT_INFO hello").expect("write");
    writeln!(w, "PAM_PROMPT_ECHO_OFF Password: ").expect("write");
    line.clear();
    reader.read_line(&mut line).expect("read the answer");
    assert_eq!(line, format!("{answer}\n"));
    writeln!(w, "{verdict}").expect("write");
}

#[test]
fn the_socket_form_relays_prompts_and_writes_the_answer() {
    let (ours, theirs) = UnixStream::pair().expect("socket pair");
    let helper = std::thread::spawn(move || fake_helper(theirs, "s3cret", "SUCCESS"));
    let conv = over_socket(ours, "pcptest", "1-abc-1-def").expect("started");
    let (tx, rx) = mpsc::channel();
    let mut steps = Vec::new();
    let verdict = conv.run(&rx, &mut |step| {
        if let Step::Prompt(_) = step {
            tx.send(Secret::new("s3cret".into())).expect("send");
        }
        steps.push(format!("{step:?}"));
    });
    helper.join().expect("the fake helper's checks");
    assert_eq!(verdict, Ok(true));
    assert_eq!(steps.len(), 2, "{steps:?}");
}

#[test]
fn a_request_that_ends_at_a_prompt_stops_without_a_verdict() {
    let (ours, theirs) = UnixStream::pair().expect("socket pair");
    let conv = over_socket(ours, "pcptest", "1-abc-1-def").expect("started");
    let mut w = theirs;
    writeln!(w, "PAM_PROMPT_ECHO_OFF Password:").expect("write");
    let (tx, rx) = mpsc::channel::<Secret>();
    drop(tx);
    let verdict = conv.run(&rx, &mut |_| {});
    assert!(
        verdict
            .expect_err("no verdict")
            .contains("ended while PAM was asking")
    );
}

#[test]
fn garbage_and_silence_are_errors_that_name_the_problem() {
    let (ours, theirs) = UnixStream::pair().expect("socket pair");
    let conv = over_socket(ours, "u", "c").expect("started");
    let mut w = theirs;
    writeln!(w, "HELLO THERE").expect("write");
    let (_tx, rx) = mpsc::channel::<Secret>();
    let err = conv.run(&rx, &mut |_| {}).expect_err("garbage");
    assert!(err.contains("unexpected line \"HELLO THERE\""), "{err}");

    let (ours, theirs) = UnixStream::pair().expect("socket pair");
    let conv = over_socket(ours, "u", "c").expect("started");
    // Read what we wrote first: closing with unread data would reset the connection instead.
    let mut lines = BufReader::new(theirs).lines();
    assert_eq!(lines.next().and_then(Result::ok).as_deref(), Some("u"));
    assert_eq!(lines.next().and_then(Result::ok).as_deref(), Some("c"));
    drop(lines);
    let err = conv.run(&rx, &mut |_| {}).expect_err("silence");
    assert!(err.contains("without SUCCESS or FAILURE"), "{err}");
}
