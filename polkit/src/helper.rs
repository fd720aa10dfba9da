//! The conversation with `polkit-agent-helper-1`, which runs PAM as root and, when PAM accepts,
//! tells polkitd itself: start it for one user and cookie, relay its lines, write answers.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::FileTypeExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::sync::{Arc, Mutex};

use crate::request::{MessageKind, Prompt};
use crate::secret::Secret;

/// Where the helper is. polkit 127 and later listen on the socket (a systemd socket unit); older
/// ones, and systems without the unit, have only the setuid binary.
#[derive(Clone, Debug)]
pub struct HelperConfig {
    pub socket: PathBuf,
    /// Tried in order; the first that exists is run.
    pub binaries: Vec<PathBuf>,
}

impl Default for HelperConfig {
    fn default() -> Self {
        Self {
            socket: "/run/polkit/agent-helper.socket".into(),
            binaries: vec![
                "/usr/lib/polkit-1/polkit-agent-helper-1".into(),
                "/usr/libexec/polkit-agent-helper-1".into(),
                "/usr/lib/policykit-1/polkit-agent-helper-1".into(),
            ],
        }
    }
}

/// A line a PAM prompt's text is cut at: the helper's lines are short, so anything longer is
/// garbage, not a prompt to show.
const MAX_LINE: usize = 4096;

/// One line of the helper's output.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Line {
    Prompt(Prompt),
    Message(MessageKind, String),
    Success,
    Failure,
}

/// Parses one line (without its newline). The helper escapes texts as GLib's `g_strescape`
/// does, so they are unescaped here as `g_strcompress` would.
pub(crate) fn parse_line(line: &[u8]) -> Result<Line, String> {
    let text = std::str::from_utf8(line).map_err(|_| "a line that is not UTF-8".to_string())?;
    let arg = |prefix: &str| {
        text.strip_prefix(prefix)
            .map(|rest| compress(rest.strip_prefix(' ').unwrap_or(rest)))
    };
    if let Some(t) = arg("PAM_PROMPT_ECHO_OFF") {
        return Ok(Line::Prompt(Prompt {
            text: t,
            echo: false,
        }));
    }
    if let Some(t) = arg("PAM_PROMPT_ECHO_ON") {
        return Ok(Line::Prompt(Prompt {
            text: t,
            echo: true,
        }));
    }
    if let Some(t) = arg("PAM_ERROR_MSG") {
        return Ok(Line::Message(MessageKind::Error, t));
    }
    if let Some(t) = arg("PAM_TEXT_INFO") {
        return Ok(Line::Message(MessageKind::Info, t));
    }
    match text {
        "SUCCESS" => Ok(Line::Success),
        "FAILURE" => Ok(Line::Failure),
        _ => {
            let shown: String = text.chars().take(60).collect();
            Err(format!("an unexpected line {shown:?}"))
        }
    }
}

/// GLib's `g_strcompress`: C escapes (`\n`, `\t`, `\\`, octal `\NNN`…) back to characters.
fn compress(s: &str) -> String {
    let mut out = Vec::with_capacity(s.len());
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'\\' || i + 1 == bytes.len() {
            out.push(bytes[i]);
            i += 1;
            continue;
        }
        i += 1;
        let c = bytes[i];
        i += 1;
        out.push(match c {
            b'0'..=b'7' => {
                let mut v = u32::from(c - b'0');
                let mut n = 1;
                while n < 3 && i < bytes.len() && (b'0'..=b'7').contains(&bytes[i]) {
                    v = v * 8 + u32::from(bytes[i] - b'0');
                    i += 1;
                    n += 1;
                }
                (v & 0xff) as u8
            }
            b'b' => 8,
            b'f' => 12,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            b'v' => 11,
            other => other,
        });
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A way to stop a running helper from another thread (the request was answered or cancelled).
#[derive(Clone)]
pub(crate) struct Stopper(Arc<Mutex<StopTarget>>);

enum StopTarget {
    /// The helper's pid until it is reaped: it cannot be recycled before then, so killing it is
    /// safe. The setuid helper keeps our real uid, so we may signal it.
    Pid(u32),
    Socket(UnixStream),
    Done,
}

impl Stopper {
    pub(crate) fn stop(&self) {
        let Ok(target) = self.0.lock() else { return };
        match &*target {
            StopTarget::Pid(pid) => {
                if let Ok(pid) = libc::pid_t::try_from(*pid) {
                    // SAFETY: kill has no memory preconditions; the pid is our unreaped child.
                    unsafe { libc::kill(pid, libc::SIGKILL) };
                }
            }
            StopTarget::Socket(s) => {
                let _ = s.shutdown(std::net::Shutdown::Both);
            }
            StopTarget::Done => {}
        }
    }

    /// Ends the stopper's reach, stopping the helper first if `stop`: once the helper is
    /// reaped its pid may be reused, so it must never be signalled after this.
    fn done_or_stop(&self, stop: bool) {
        if stop {
            self.stop();
        }
        if let Ok(mut t) = self.0.lock() {
            *t = StopTarget::Done;
        }
    }
}

/// A started helper: its output, its input, and what to reap.
pub(crate) struct Conversation {
    reader: BufReader<Box<dyn Read + Send>>,
    writer: Box<dyn Write + Send>,
    child: Option<Child>,
    stopper: Stopper,
}

/// Starts the helper for `user` and `cookie`: the socket where it exists and accepts, the setuid
/// binary otherwise. `cookie` and `user` are checked by the caller to hold no whitespace.
pub(crate) fn start(cfg: &HelperConfig, user: &str, cookie: &str) -> Result<Conversation, String> {
    if is_socket(&cfg.socket) {
        match UnixStream::connect(&cfg.socket) {
            Ok(stream) => return over_socket(stream, user, cookie),
            Err(e) => tracing::warn!(
                "polkit agent: the helper socket {} does not answer ({e}): trying the binary",
                cfg.socket.display()
            ),
        }
    }
    let binary = cfg
        .binaries
        .iter()
        .find(|b| b.exists())
        .ok_or_else(|| format!("no polkit-agent-helper-1 at any of {:?}", cfg.binaries))?;
    let mut child = Command::new(binary)
        .arg(user)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", binary.display()))?;
    let (Some(mut stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        let _ = child.kill();
        let _ = child.wait();
        return Err("the helper's pipes were not set up".into());
    };
    // The cookie goes on stdin, never in argv, where every local user could read it.
    if let Err(e) = writeln!(stdin, "{cookie}").and_then(|()| stdin.flush()) {
        let _ = child.kill();
        let _ = child.wait();
        return Err(format!("cannot give the helper its cookie: {e}"));
    }
    let stopper = Stopper(Arc::new(Mutex::new(StopTarget::Pid(child.id()))));
    Ok(Conversation {
        reader: BufReader::new(Box::new(stdout)),
        writer: Box::new(stdin),
        child: Some(child),
        stopper,
    })
}

fn is_socket(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.file_type().is_socket())
}

/// The socket form (polkit ≥ 127): the user's name and the cookie, one line each, then the same
/// conversation as on the binary's pipes.
pub(crate) fn over_socket(
    mut stream: UnixStream,
    user: &str,
    cookie: &str,
) -> Result<Conversation, String> {
    write!(stream, "{user}\n{cookie}\n")
        .and_then(|()| stream.flush())
        .map_err(|e| format!("cannot write to the helper socket: {e}"))?;
    let clone = |s: &UnixStream| {
        s.try_clone()
            .map_err(|e| format!("cannot share the helper socket: {e}"))
    };
    let reader = clone(&stream)?;
    let stopper = Stopper(Arc::new(Mutex::new(StopTarget::Socket(clone(&stream)?))));
    Ok(Conversation {
        reader: BufReader::new(Box::new(reader)),
        writer: Box::new(stream),
        child: None,
        stopper,
    })
}

/// One step of the conversation, reported as it happens.
#[derive(Debug)]
pub(crate) enum Step {
    Prompt(Prompt),
    Message(MessageKind, String),
}

/// How the conversation ended: PAM's verdict, or why there was none.
pub(crate) type Verdict = Result<bool, String>;

impl Conversation {
    pub(crate) fn stopper(&self) -> Stopper {
        self.stopper.clone()
    }

    /// Relays the helper's lines to `report` and answers each prompt with the next secret from
    /// `secrets`, until SUCCESS or FAILURE, then gives the verdict to `done`. A closed `secrets`
    /// (the request went away), a dead helper or garbage ends it without a verdict, and the
    /// helper is stopped. Always reaps the helper.
    pub(crate) fn run_then(
        mut self,
        secrets: &Receiver<Secret>,
        report: &mut dyn FnMut(Step),
        done: &mut dyn FnMut(Verdict),
    ) {
        let verdict = self.converse(secrets, report);
        self.stopper.done_or_stop(verdict.is_err());
        if verdict.is_ok() {
            // PAM's verdict is final once printed (the helper has already told polkitd): report
            // it before reaping, so the request need not wait for the helper's own exit.
            done(verdict);
            self.reap();
            return;
        }
        let status = self.reap();
        done(match (verdict, status) {
            (Err(e), Some(Ok(status))) if !status.success() => {
                Err(format!("{e} (the helper {status})"))
            }
            (v, _) => v,
        });
    }

    /// [`Conversation::run_then`], returning the verdict.
    #[cfg(test)]
    pub(crate) fn run(self, secrets: &Receiver<Secret>, report: &mut dyn FnMut(Step)) -> Verdict {
        let mut verdict = Err("no verdict".to_string());
        self.run_then(secrets, report, &mut |v| verdict = v);
        verdict
    }

    fn reap(&mut self) -> Option<std::io::Result<std::process::ExitStatus>> {
        self.child.take().map(|mut c| c.wait())
    }

    fn converse(&mut self, secrets: &Receiver<Secret>, report: &mut dyn FnMut(Step)) -> Verdict {
        let mut buf = Vec::new();
        loop {
            buf.clear();
            let n = (&mut self.reader)
                .take(MAX_LINE as u64 + 1)
                .read_until(b'\n', &mut buf)
                .map_err(|e| format!("cannot read from the helper: {e}"))?;
            if n == 0 {
                return Err("the helper ended without SUCCESS or FAILURE".into());
            }
            if buf.last() != Some(&b'\n') {
                return Err(format!(
                    "the helper printed a line longer than {MAX_LINE} bytes"
                ));
            }
            buf.pop();
            match parse_line(&buf).map_err(|e| format!("the helper printed {e}"))? {
                Line::Success => return Ok(true),
                Line::Failure => return Ok(false),
                Line::Message(kind, text) => report(Step::Message(kind, text)),
                Line::Prompt(prompt) => {
                    report(Step::Prompt(prompt));
                    let secret = secrets
                        .recv()
                        .map_err(|_| "the request ended while PAM was asking".to_string())?;
                    let line = secret.line()?;
                    drop(secret);
                    self.writer
                        .write_all(&line)
                        .and_then(|()| self.writer.flush())
                        .map_err(|e| format!("cannot answer the helper: {e}"))?;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
