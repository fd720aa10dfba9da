//! `pcpctl mcp -- COMMAND`: the stdio gateway. It starts the server as its child and stands
//! between the client (its own stdin and stdout) and the server's, one thread per direction
//! and one asking the desktop ([`super::asker`]); all three share the [`Proxy`]. Writes happen
//! outside the proxy's lock. The server's stderr is the gateway's (the client logs it). When
//! the server exits the gateway exits with its status, after answering what was held; when the
//! client closes its side the server's stdin is closed and the server is given a moment to end.

use std::io::{BufReader, Write};
use std::process::{Child, ChildStdin, Command, ExitCode, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use pcp_mcp::framing::{Line, read_line};
use pcp_mcp::{Action, Proxy};

use super::Settings;
use super::asker::{self, Job, Jobs};

/// How long a server may take to end once its stdin is closed before it is killed.
const SERVER_GRACE: Duration = Duration::from_secs(5);

/// Where actions go: the client's stdout, the server's stdin, the asker.
struct Io {
    client: Mutex<std::io::Stdout>,
    server: Mutex<Option<ChildStdin>>,
    jobs: Mutex<Option<Jobs>>,
}

impl Io {
    fn carry_out(&self, actions: Vec<Action>) {
        for action in actions {
            match action {
                Action::ToClient(bytes) => {
                    let mut out = self.client.lock().unwrap_or_else(PoisonError::into_inner);
                    let _ = write_line(&mut *out, &bytes);
                }
                Action::ToServer(bytes) => {
                    let mut server = self.server.lock().unwrap_or_else(PoisonError::into_inner);
                    if let Some(stdin) = server.as_mut()
                        && write_line(stdin, &bytes).is_err()
                    {
                        tracing::warn!("cannot write to the server: it closed its input");
                    }
                }
                Action::Ask(ask) => self.job(Job::Ask(ask)),
                Action::Cancel(key) => self.job(Job::Cancel(key)),
                Action::Warn(text) => tracing::warn!("{text}"),
            }
        }
    }

    fn job(&self, job: Job) {
        let jobs = self
            .jobs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if let Some(jobs) = jobs {
            jobs.send(job);
        }
    }
}

fn write_line(out: &mut impl Write, bytes: &[u8]) -> std::io::Result<()> {
    out.write_all(bytes)?;
    out.write_all(b"\n")?;
    out.flush()
}

/// Runs the gateway in front of `command` until the server exits or the client leaves.
pub fn run(settings: Settings, command: &[String]) -> Result<ExitCode> {
    let (program, args) = command
        .split_first()
        .context("pcpctl mcp needs the server's command after `--`")?;
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("cannot start the MCP server `{program}`"))?;
    let (Some(server_in), Some(server_out)) = (child.stdin.take(), child.stdout.take()) else {
        anyhow::bail!("the MCP server's stdin and stdout could not be opened");
    };
    let proxy = Arc::new(Mutex::new(settings.proxy()));
    let io = Arc::new(Io {
        client: Mutex::new(std::io::stdout()),
        server: Mutex::new(Some(server_in)),
        jobs: Mutex::new(None),
    });
    let jobs = {
        let (proxy, io) = (Arc::clone(&proxy), Arc::clone(&io));
        asker::start(settings.deadline, move |key, verdict| {
            let actions = lock(&proxy).decided(&key, verdict);
            io.carry_out(actions);
        })?
    };
    *io.jobs.lock().unwrap_or_else(PoisonError::into_inner) = Some(jobs);
    let max = settings.max_message_bytes;
    {
        let (proxy, io) = (Arc::clone(&proxy), Arc::clone(&io));
        std::thread::Builder::new()
            .name("mcp-server".into())
            .spawn(move || serve_server(server_out, &proxy, &io, max, child))?;
    }
    let stdin = std::io::stdin();
    let mut reader = BufReader::with_capacity(64 * 1024, stdin.lock());
    let mut line = Vec::new();
    loop {
        let actions = match read_line(&mut reader, &mut line, max) {
            Ok(Line::Message) => lock(&proxy).from_client(&line),
            Ok(Line::TooLong) => lock(&proxy).client_too_large(max),
            Ok(Line::End) => break,
            Err(e) => {
                tracing::warn!("cannot read from the client: {e}");
                break;
            }
        };
        io.carry_out(actions);
    }
    // The client is gone: close the server's input; the server thread exits with its status.
    io.server
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take();
    std::thread::sleep(SERVER_GRACE + Duration::from_secs(1));
    Ok(ExitCode::SUCCESS)
}

fn lock(proxy: &Mutex<Proxy>) -> std::sync::MutexGuard<'_, Proxy> {
    proxy.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The server's side: each line through the proxy; at its end, everything held is answered
/// and the gateway exits with the server's status.
fn serve_server(
    out: std::process::ChildStdout,
    proxy: &Mutex<Proxy>,
    io: &Io,
    max: usize,
    mut child: Child,
) {
    let mut reader = BufReader::with_capacity(64 * 1024, out);
    let mut line = Vec::new();
    let why = loop {
        let actions = match read_line(&mut reader, &mut line, max) {
            Ok(Line::Message) => lock(proxy).from_server(&line),
            Ok(Line::TooLong) => lock(proxy).fail_all(&format!(
                "the server sent a message over the gateway's limit of {max} bytes \
                 (pcpctl mcp --max-message-bytes)"
            )),
            Ok(Line::End) => break "the MCP server closed its output".to_string(),
            Err(e) => break format!("cannot read from the MCP server: {e}"),
        };
        io.carry_out(actions);
    };
    let status = wait_for(&mut child);
    let why = match status {
        Some(code) => format!("{why} and exited with status {code}"),
        None => why,
    };
    let actions = lock(proxy).server_closed(&why);
    io.carry_out(actions);
    tracing::info!("{why}");
    let code = status.unwrap_or(1).clamp(0, 255) as u8;
    let _ = io
        .client
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .flush();
    std::process::exit(i32::from(code));
}

/// The server's exit status; killed when it has not ended within [`SERVER_GRACE`].
fn wait_for(child: &mut Child) -> Option<i32> {
    let until = Instant::now() + SERVER_GRACE;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return status.code(),
            Ok(None) if Instant::now() < until => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                return child.wait().ok().and_then(|s| s.code());
            }
        }
    }
}
