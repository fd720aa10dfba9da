//! Debian's `pkttyagent` answering a request with the test user's password as soon as it asks:
//! what the benches compare an agent with. Shared by the crate's polkitd test and the
//! compositor's agent test (`tests/tests/polkit_agent`), each of which has a `world` module.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

use crate::world::{USER, USER_PW};

/// pkttyagent for the subject, on a terminal from `script`. pkttyagent turns echo off with
/// TCSAFLUSH after printing its prompt, which drops what was typed in between; so the password is
/// typed as soon as the prompt appears and again every 20 ms until pkttyagent moves on.
pub fn start_pkttyagent(pid: &str) -> Result<std::process::Child, String> {
    let command = format!("pkttyagent --process {pid}");
    let mut child = Command::new("setpriv")
        .args([
            &format!("--reuid={USER}"),
            &format!("--regid={USER}"),
            "--init-groups",
        ])
        .args(["script", "-qfec", &command, "/dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start pkttyagent under script: {e}"))?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let mut stdout = child.stdout.take().ok_or("no stdout")?;
    // 0: no prompt yet, 1: prompt shown, 2: answered (output after the prompt), 3: ended.
    let state = Arc::new(AtomicU8::new(0));
    let typist = Arc::clone(&state);
    std::thread::spawn(move || {
        let mut seen = Vec::new();
        let mut buf = [0u8; 512];
        while let Ok(n) = stdout.read(&mut buf) {
            if n == 0 {
                break;
            }
            seen.extend_from_slice(&buf[..n]);
            if typist.load(Ordering::SeqCst) == 1 {
                typist.store(2, Ordering::SeqCst);
            } else if seen.windows(9).any(|w| w == b"Password:") {
                typist.store(1, Ordering::SeqCst);
                seen.clear();
            }
        }
        typist.store(3, Ordering::SeqCst);
    });
    std::thread::spawn(move || {
        loop {
            match state.load(Ordering::SeqCst) {
                0 => std::thread::sleep(Duration::from_millis(1)),
                1 => {
                    let _ = writeln!(stdin, "{USER_PW}");
                    std::thread::sleep(Duration::from_millis(20));
                }
                2 => std::thread::sleep(Duration::from_millis(5)),
                _ => break,
            }
        }
    });
    Ok(child)
}
