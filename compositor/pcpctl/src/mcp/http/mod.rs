//! `pcpctl mcp --url URL`: the gateway in front of a streamable-HTTP MCP server, serving clients
//! on a loopback address. Each POST goes through the session's [`Proxy`] like a stdio line: a
//! `tools/call` is held until the desktop decides ([`super::asker`]), everything else is
//! forwarded to URL and its answer — one JSON message or an event stream — comes back through
//! the proxy (so listings are read, answers nobody asked for dropped). GET (the server's own
//! stream) and DELETE (the session's end) are forwarded. Sessions are the server's
//! `Mcp-Session-Id`; each has its own proxy. Only loopback addresses are served, and a request
//! from a non-loopback `Origin` is refused (DNS rebinding).

mod upstream;
mod wire;

use std::collections::HashMap;
use std::io::{BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Sender, channel};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use pcp_mcp::{Action, IdKey, Proxy, Verdict};

use super::Settings;
use super::asker::{self, Job, Jobs};
use upstream::{Answer, Body, Upstream};
use wire::Request;

/// Connections served at once; more wait in the listen queue.
const MAX_CONNECTIONS: usize = 32;
/// Sessions kept; the oldest is dropped past this.
const MAX_SESSIONS: usize = 64;
/// How long a connection may take to send a request.
const READ_TIMEOUT: Duration = Duration::from_secs(300);

/// What every connection shares.
struct Shared {
    settings: Settings,
    upstream: Upstream,
    sessions: Mutex<Vec<(String, Arc<Mutex<Proxy>>)>>,
    jobs: Jobs,
    /// Calls being asked: the asker's key → the waiting connection.
    waiting: Arc<Mutex<HashMap<IdKey, Sender<Verdict>>>>,
    /// A session's call → the asker's key, for a cancel.
    asked: Mutex<HashMap<(String, IdKey), IdKey>>,
    next: AtomicUsize,
    connections: AtomicUsize,
}

pub fn run(settings: Settings, url: &str, listen: &str) -> Result<ExitCode> {
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        bail!("--url {url} is not an http:// or https:// URL");
    }
    let addr: SocketAddr = listen
        .parse()
        .with_context(|| format!("--listen {listen} is not an address and port"))?;
    if !addr.ip().is_loopback() {
        bail!("--listen {listen} is not a loopback address: the gateway serves this machine only");
    }
    let listener = TcpListener::bind(addr).with_context(|| format!("cannot listen on {addr}"))?;
    let local = listener.local_addr()?;
    eprintln!("pcpctl mcp: serving http://{local}/mcp in front of {url}");
    let waiting: Arc<Mutex<HashMap<IdKey, Sender<Verdict>>>> = Arc::default();
    let jobs = {
        let waiting = Arc::clone(&waiting);
        asker::start(settings.deadline, move |key, verdict| {
            if let Some(tx) = lock(&waiting).remove(&key) {
                let _ = tx.send(verdict);
            }
        })?
    };
    let shared = Arc::new(Shared {
        upstream: Upstream::new(url, settings.max_message_bytes),
        settings,
        sessions: Mutex::new(Vec::new()),
        jobs,
        waiting,
        asked: Mutex::new(HashMap::new()),
        next: AtomicUsize::new(0),
        connections: AtomicUsize::new(0),
    });
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        while shared.connections.load(Ordering::Acquire) >= MAX_CONNECTIONS {
            std::thread::sleep(Duration::from_millis(10));
        }
        shared.connections.fetch_add(1, Ordering::AcqRel);
        let shared = Arc::clone(&shared);
        std::thread::spawn(move || {
            if let Err(e) = serve(&shared, stream) {
                tracing::debug!("connection ended: {e}");
            }
            shared.connections.fetch_sub(1, Ordering::AcqRel);
        });
    }
    Ok(ExitCode::SUCCESS)
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Serves one connection's requests until it closes or an answer was a stream.
fn serve(shared: &Shared, stream: TcpStream) -> std::io::Result<()> {
    stream.set_read_timeout(Some(READ_TIMEOUT))?;
    let mut out = stream.try_clone()?;
    let mut reader = BufReader::new(stream);
    let max = shared.settings.max_message_bytes;
    loop {
        let request = match wire::read_request(&mut reader, max) {
            Ok(Some(r)) => r,
            Ok(None) => return Ok(()),
            Err(e) => {
                let body = error_body(&e.to_string());
                return wire::respond(&mut out, 400, &[], Some("application/json"), &body);
            }
        };
        if let Some(origin) = request.header("origin")
            && !loopback_origin(origin)
        {
            let body = error_body(&format!("requests from the origin {origin} are refused"));
            wire::respond(&mut out, 403, &[], Some("application/json"), &body)?;
            continue;
        }
        let path = request.path.split('?').next().unwrap_or("");
        if path != "/mcp" && path != "/" {
            let body = error_body(&format!(
                "no MCP endpoint at {path}: the gateway serves /mcp"
            ));
            wire::respond(&mut out, 404, &[], Some("application/json"), &body)?;
            continue;
        }
        let streamed = match request.method.as_str() {
            "POST" => post(shared, &request, &mut out)?,
            "GET" | "DELETE" => pass(shared, &request, &mut out)?,
            _ => {
                let allow = [("Allow".to_string(), "GET, POST, DELETE".to_string())];
                wire::respond(&mut out, 405, &allow, None, b"")?;
                false
            }
        };
        if streamed {
            return Ok(());
        }
    }
}

/// Whether `origin` is a loopback one (`http://localhost:…`, `http://127.0.0.1:…`, `[::1]`).
fn loopback_origin(origin: &str) -> bool {
    let host = origin.split_once("://").map_or(origin, |(_, rest)| rest);
    let host = host.split('/').next().unwrap_or(host);
    let host = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(v6),
        None => host.rsplit_once(':').map_or(host, |(h, _)| h),
    };
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

fn error_body(message: &str) -> Vec<u8> {
    pcp_mcp::message::error_response(&serde_json::Value::Null, -32600, message)
}

/// The proxy of the session the request names (a new one for a new session).
fn session(shared: &Shared, request: &Request) -> (String, Arc<Mutex<Proxy>>) {
    let id = request.header("mcp-session-id").unwrap_or("").to_string();
    let mut sessions = lock(&shared.sessions);
    if let Some((_, p)) = sessions.iter().find(|(k, _)| *k == id) {
        return (id, Arc::clone(p));
    }
    if sessions.len() >= MAX_SESSIONS {
        sessions.remove(0);
    }
    let proxy = Arc::new(Mutex::new(shared.settings.proxy()));
    sessions.push((id.clone(), Arc::clone(&proxy)));
    (id, proxy)
}

/// Where a POST's answer goes: held while it is one message, an event stream once there are more
/// (or the server streams).
struct Reply<'a, W: Write> {
    out: &'a mut W,
    held: Option<Vec<u8>>,
    streaming: bool,
    status: u16,
    headers: Vec<(String, String)>,
}

impl<W: Write> Reply<'_, W> {
    fn message(&mut self, bytes: Vec<u8>, id: Option<&str>) -> std::io::Result<()> {
        if !self.streaming && self.held.is_none() && id.is_none() {
            self.held = Some(bytes);
            return Ok(());
        }
        self.stream()?;
        wire::write_event(self.out, id, None, &bytes)
    }

    fn stream(&mut self) -> std::io::Result<()> {
        if !self.streaming {
            self.streaming = true;
            wire::start_stream(self.out, &self.headers)?;
            if let Some(held) = self.held.take() {
                wire::write_event(self.out, None, None, &held)?;
            }
        }
        Ok(())
    }

    /// Ends the answer; true when it was a stream (the connection then ends).
    fn finish(mut self) -> std::io::Result<bool> {
        if self.streaming {
            return Ok(true);
        }
        match self.held.take() {
            Some(body) => {
                let status = if self.status == 202 { 200 } else { self.status };
                wire::respond(
                    self.out,
                    status,
                    &self.headers,
                    Some("application/json"),
                    &body,
                )?;
            }
            None => wire::respond(self.out, self.status, &self.headers, None, b"")?,
        }
        Ok(false)
    }
}

/// A POST: the message through the session's proxy, then whatever it asks for.
fn post(shared: &Shared, request: &Request, out: &mut impl Write) -> std::io::Result<bool> {
    let (sid, proxy) = session(shared, request);
    let actions = lock(&proxy).from_client(&request.body);
    let mut reply = Reply {
        out,
        held: None,
        streaming: false,
        status: 202,
        headers: Vec::new(),
    };
    carry_out(shared, request, &sid, &proxy, actions, &mut reply)?;
    reply.finish()
}

fn carry_out<W: Write>(
    shared: &Shared,
    request: &Request,
    sid: &str,
    proxy: &Mutex<Proxy>,
    actions: Vec<Action>,
    reply: &mut Reply<'_, W>,
) -> std::io::Result<()> {
    for action in actions {
        match action {
            Action::ToClient(bytes) => reply.message(bytes, None)?,
            Action::ToServer(bytes) => match shared.upstream.post(&bytes, &request.headers) {
                Ok(answer) => relay(shared, request, sid, proxy, answer, reply)?,
                Err(why) => {
                    tracing::warn!("{why}");
                    let more = lock(proxy).fail_all(&why);
                    carry_out(shared, request, sid, proxy, more, reply)?;
                }
            },
            Action::Ask(mut ask) => {
                let key = ask.call.clone();
                let unique = IdKey(format!("h{}", shared.next.fetch_add(1, Ordering::Relaxed)));
                let (tx, rx) = channel();
                lock(&shared.waiting).insert(unique.clone(), tx);
                lock(&shared.asked).insert((sid.to_string(), key.clone()), unique.clone());
                ask.call = unique;
                shared.jobs.send(Job::Ask(ask));
                let wait = shared.settings.deadline + Duration::from_secs(5);
                let verdict = rx.recv_timeout(wait).unwrap_or_else(|_| {
                    Verdict::Deny("no decision within the gateway's deadline".into())
                });
                lock(&shared.asked).remove(&(sid.to_string(), key.clone()));
                let more = lock(proxy).decided(&key, verdict);
                carry_out(shared, request, sid, proxy, more, reply)?;
            }
            Action::Cancel(key) => {
                if let Some(unique) = lock(&shared.asked).remove(&(sid.to_string(), key)) {
                    shared.jobs.send(Job::Cancel(unique));
                }
            }
            Action::Warn(text) => tracing::warn!("{text}"),
        }
    }
    Ok(())
}

/// The server's answer to a forwarded message, through the proxy, to the client.
fn relay<W: Write>(
    shared: &Shared,
    request: &Request,
    sid: &str,
    proxy: &Mutex<Proxy>,
    answer: Answer,
    reply: &mut Reply<'_, W>,
) -> std::io::Result<()> {
    reply.status = answer.status;
    for h in answer.headers {
        if !reply
            .headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case(&h.0))
        {
            reply.headers.push(h);
        }
    }
    match answer.body {
        Body::Empty => Ok(()),
        Body::Whole {
            content_type,
            bytes,
        } if content_type.starts_with("application/json") => {
            let more = lock(proxy).from_server(&bytes);
            carry_out(shared, request, sid, proxy, more, reply)
        }
        // Not JSON (an error page): every request it was to answer gets an error.
        Body::Whole { .. } => {
            let why = format!("the server answered {} without a JSON body", answer.status);
            let more = lock(proxy).fail_all(&why);
            carry_out(shared, request, sid, proxy, more, reply)
        }
        Body::Events(mut events) => {
            reply.stream()?;
            loop {
                match events.next() {
                    Ok(Some(event)) if event.data.is_empty() => {
                        wire::write_event(
                            reply.out,
                            event.id.as_deref(),
                            event.retry.as_deref(),
                            b"",
                        )?;
                    }
                    Ok(Some(event)) => {
                        let more = lock(proxy).from_server(&event.data);
                        for action in more {
                            match action {
                                Action::ToClient(bytes) => {
                                    wire::write_event(reply.out, event.id.as_deref(), None, &bytes)?
                                }
                                other => {
                                    carry_out(shared, request, sid, proxy, vec![other], reply)?
                                }
                            }
                        }
                    }
                    Ok(None) => return Ok(()),
                    Err(why) => {
                        let more = lock(proxy).fail_all(&why);
                        return carry_out(shared, request, sid, proxy, more, reply);
                    }
                }
            }
        }
    }
}

/// GET (the server's own stream) and DELETE (the session's end), forwarded; a stream's messages
/// go through the session's proxy.
fn pass(shared: &Shared, request: &Request, out: &mut impl Write) -> std::io::Result<bool> {
    let (sid, proxy) = session(shared, request);
    let answer = match shared.upstream.call(&request.method, &request.headers) {
        Ok(a) => a,
        Err(why) => {
            let body = error_body(&why);
            wire::respond(out, 502, &[], Some("application/json"), &body)?;
            return Ok(false);
        }
    };
    let mut reply = Reply {
        out,
        held: None,
        streaming: false,
        status: answer.status,
        headers: Vec::new(),
    };
    if request.method == "DELETE" {
        lock(&shared.sessions).retain(|(k, _)| *k != sid);
    }
    relay(shared, request, &sid, &proxy, answer, &mut reply)?;
    reply.finish()
}
