//! The gateway's one line to the desktop: a thread that asks the compositor about tool calls,
//! one at a time, over one pcp-intent-v1 connection (made when first needed, made again after
//! it fails). It fails closed: no compositor, a protocol error, the compositor going away, or
//! no decision before the deadline is a denial with the reason. A call the client cancels is
//! withdrawn from the desktop. When another program of the same app holds the only prompt slot
//! (`rate_limited`), the call waits for it, asking again every second until its deadline.

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::net::UnixStream;
use std::sync::mpsc::{Receiver, SyncSender, TryRecvError};
use std::time::{Duration, Instant};

use pcp_mcp::{Ask, IdKey, Verdict};
use pcp_protocol::{IntentClient, IntentEvent, Submission};

/// Work for the asker.
pub enum Job {
    Ask(Ask),
    /// The client cancelled this call.
    Cancel(IdKey),
}

/// How often a call held back by another program's open prompt is asked again.
const RATE_LIMIT_RETRY: Duration = Duration::from_secs(1);

/// The sending end: a job, and a byte on the wake socket so a waiting asker sees it.
#[derive(Clone)]
pub struct Jobs {
    tx: SyncSender<Job>,
    wake: std::sync::Arc<UnixStream>,
}

impl Jobs {
    /// Hands `job` to the asker (waits while its queue is full).
    pub fn send(&self, job: Job) {
        if self.tx.send(job).is_ok() {
            // A full wake socket already has bytes to wake on.
            let _ = (&*self.wake).write(&[1]);
        }
    }
}

/// Starts the asker thread; `decided` is called on it with each verdict.
pub fn start(
    deadline: Duration,
    decided: impl FnMut(IdKey, Verdict) + Send + 'static,
) -> std::io::Result<Jobs> {
    let (tx, rx) = std::sync::mpsc::sync_channel(256);
    let (wake_tx, wake_rx) = UnixStream::pair()?;
    wake_tx.set_nonblocking(true)?;
    wake_rx.set_nonblocking(true)?;
    let mut asker = Asker {
        rx,
        wake: wake_rx,
        backlog: VecDeque::new(),
        client: None,
        deadline,
    };
    let mut decided = decided;
    std::thread::Builder::new()
        .name("mcp-asker".into())
        .spawn(move || {
            while let Some(job) = asker.next_job() {
                if let Job::Ask(ask) = job
                    && let Some(verdict) = asker.decide(&ask)
                {
                    decided(ask.call, verdict);
                }
            }
        })?;
    Ok(Jobs {
        tx,
        wake: std::sync::Arc::new(wake_tx),
    })
}

struct Asker {
    rx: Receiver<Job>,
    wake: UnixStream,
    /// Jobs taken off the queue while a decision was awaited.
    backlog: VecDeque<Job>,
    client: Option<IntentClient>,
    deadline: Duration,
}

/// What waiting for one intent ended with.
enum Waited {
    Decided(pcp_protocol::Decision),
    /// The client cancelled the call: no verdict is owed.
    Cancelled,
    TimedOut,
    Failed(String),
}

impl Asker {
    /// The next job; `None` when every sender is gone.
    fn next_job(&mut self) -> Option<Job> {
        if let Some(job) = self.backlog.pop_front() {
            return Some(job);
        }
        self.rx.recv().ok()
    }

    /// Asks about one call; `None` when the client cancelled it meanwhile.
    fn decide(&mut self, ask: &Ask) -> Option<Verdict> {
        let until = Instant::now() + self.deadline;
        loop {
            let waited = self.ask_once(ask, until);
            let decision = match waited {
                Waited::Cancelled => return None,
                Waited::TimedOut => {
                    return Some(Verdict::Deny(format!(
                        "no decision within the gateway's deadline of {} s (pcpctl mcp --deadline)",
                        self.deadline.as_secs_f64()
                    )));
                }
                Waited::Failed(why) => {
                    self.client = None;
                    return Some(Verdict::Deny(why));
                }
                Waited::Decided(d) => d,
            };
            if decision.approved {
                return Some(Verdict::Allow);
            }
            let reason = decision.reason.unwrap_or_default();
            let busy = decision.resolution == "rate_limited" && reason.contains("open prompt");
            if busy && Instant::now() + RATE_LIMIT_RETRY < until {
                if self.pause(RATE_LIMIT_RETRY, &ask.call) {
                    return None;
                }
                continue;
            }
            return Some(Verdict::Deny(format!(
                "{} ({}): {reason}",
                ask.capability, decision.resolution
            )));
        }
    }

    /// Submits `ask` and waits for its decision, the client's cancel or `until`.
    fn ask_once(&mut self, ask: &Ask, until: Instant) -> Waited {
        if self.client.is_none() {
            match connect() {
                Ok(c) => self.client = Some(c),
                Err(e) => return Waited::Failed(format!("no compositor to ask: {e}")),
            }
        }
        let Some(client) = self.client.as_mut() else {
            return Waited::Failed("no compositor to ask".into());
        };
        let submission = Submission {
            capability: ask.capability.clone(),
            params: ask.params.clone(),
            target: None,
            steps: Vec::new(),
        };
        let handle = match client.submit(&submission) {
            Ok(h) => h,
            Err(e) => return Waited::Failed(format!("asking the compositor failed: {e}")),
        };
        let id = handle.id();
        let mut cancelled = false;
        loop {
            if let Err(e) = client.poll() {
                return Waited::Failed(format!("asking the compositor failed: {e}"));
            }
            while let Some(event) = client.take_event() {
                if let IntentEvent::Final { intent, decision } = event
                    && intent == id
                {
                    handle.destroy();
                    return if cancelled {
                        Waited::Cancelled
                    } else {
                        Waited::Decided(decision)
                    };
                }
            }
            let now = Instant::now();
            if now >= until {
                handle.destroy();
                return Waited::TimedOut;
            }
            let woke = match wait(
                client.poll_fd().as_raw_fd(),
                self.wake.as_fd().as_raw_fd(),
                until - now,
            ) {
                Ok(w) => w,
                Err(e) => return Waited::Failed(format!("waiting for the compositor failed: {e}")),
            };
            if woke && !cancelled && take_jobs(&self.rx, &self.wake, &mut self.backlog, &ask.call) {
                // The denial (cancelled) that follows ends the wait.
                handle.cancel();
                let _ = client.poll();
                cancelled = true;
            }
        }
    }

    /// Waits `pause`, or until the client cancels `current` (then true).
    fn pause(&mut self, pause: Duration, current: &IdKey) -> bool {
        let until = Instant::now() + pause;
        loop {
            let now = Instant::now();
            if now >= until {
                return false;
            }
            let wake = self.wake.as_fd().as_raw_fd();
            if matches!(wait(wake, wake, until - now), Ok(true))
                && take_jobs(&self.rx, &self.wake, &mut self.backlog, current)
            {
                return true;
            }
        }
    }
}

/// Connects to `$WAYLAND_DISPLAY`; when the client left it out of the server's environment (the
/// MCP SDKs pass only HOME, PATH, USER and a few others by default), to the session's first
/// socket, `wayland-0` in `$XDG_RUNTIME_DIR` or `/run/user/UID`. A socket that is not
/// pcp-confirm's offers no pcp_intent_manager_v1: that is a denial, like no socket at all.
fn connect() -> Result<IntentClient, pcp_protocol::ClientError> {
    if std::env::var_os("WAYLAND_DISPLAY").is_some_and(|d| !d.is_empty()) {
        return IntentClient::connect();
    }
    let runtime = std::env::var_os("XDG_RUNTIME_DIR")
        .filter(|d| !d.is_empty())
        .map(std::path::PathBuf::from)
        // SAFETY: getuid has no preconditions and cannot fail.
        .unwrap_or_else(|| format!("/run/user/{}", unsafe { libc::getuid() }).into());
    IntentClient::connect_to(&runtime.join("wayland-0"))
}

/// Moves queued jobs to `backlog`; true when one cancels `current`.
fn take_jobs(
    rx: &Receiver<Job>,
    wake: &UnixStream,
    backlog: &mut VecDeque<Job>,
    current: &IdKey,
) -> bool {
    let mut drain = [0u8; 64];
    while matches!((&*wake).read(&mut drain), Ok(n) if n > 0) {}
    let mut cancelled = false;
    loop {
        match rx.try_recv() {
            Ok(Job::Cancel(key)) if key == *current => cancelled = true,
            Ok(Job::Cancel(key)) => {
                // A cancel for a call still queued: drop that call's ask.
                backlog.retain(|j| !matches!(j, Job::Ask(a) if a.call == key));
            }
            Ok(job) => backlog.push_back(job),
            Err(TryRecvError::Empty | TryRecvError::Disconnected) => return cancelled,
        }
    }
}

/// Waits until `fd` is readable (false) or `wake` is (true), at most `timeout`.
fn wait(fd: i32, wake: i32, timeout: Duration) -> std::io::Result<bool> {
    let mut fds = [
        libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        },
        libc::pollfd {
            fd: wake,
            events: libc::POLLIN,
            revents: 0,
        },
    ];
    let ms = timeout.as_millis().min(i32::MAX as u128) as i32;
    // SAFETY: `fds` is a valid array of two pollfd structures for the call's duration.
    let n = unsafe { libc::poll(fds.as_mut_ptr(), 2, ms.max(1)) };
    if n < 0 {
        let e = std::io::Error::last_os_error();
        return if e.kind() == std::io::ErrorKind::Interrupted {
            Ok(false)
        } else {
            Err(e)
        };
    }
    Ok(fds[1].revents & libc::POLLIN != 0)
}
