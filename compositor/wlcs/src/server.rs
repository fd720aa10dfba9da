//! One compositor for one WLCS test: the headless reference compositor with one output, started
//! on a thread of its own from a private folder (its config, the gate's state store and audit
//! log), served by that thread's event loop until WLCS stops it. WLCS's calls arrive as
//! [`Command`]s over a channel; each is answered once it has been done, so what WLCS does next
//! (a client's round trip) always comes after it.

use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use calloop::channel::{Channel, Event};
use pcp_compositor::host::DeviceEvent;
use pcp_compositor::startup;
use pcp_compositor::state::{Compositor, State};
use pcp_plugin::PcpHandler;
use wayland_server::backend::ClientId;

/// The one output every test sees: wide enough (the dialog's `large_output_width`) that a
/// prompt waits near the focal point it appeared at, far from where WLCS puts its windows.
pub const OUTPUT: &str = "2560x1440";

/// How long [`Running::start`] waits for the compositor (and, with a prompt, the dialog) to be
/// up before it lets WLCS go on regardless.
const READY_WAIT: Duration = Duration::from_secs(20);

/// What WLCS asks of the running compositor.
#[derive(Debug)]
pub enum Command {
    /// Add the client at the other end of `stream`; WLCS knows it by `key` (its own end's fd).
    Client { stream: UnixStream, key: i32 },
    /// Move the window whose toplevel is object `surface` of client `key` to (x, y).
    PlaceWindow {
        key: i32,
        surface: u32,
        x: i32,
        y: i32,
    },
    /// An event of a fake pointer or touch device.
    Device(DeviceEvent),
    /// End the test: the loop ends and everything is dropped.
    Stop,
}

/// A command and who waits for it to be done.
#[derive(Debug)]
pub struct Request {
    command: Command,
    done: mpsc::SyncSender<()>,
}

/// How the compositor of each test is started.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// The folder holding the capability manifests.
    pub manifests: PathBuf,
    /// A real intent waits for its answer in the dialog throughout the test ([`crate::prompt`]).
    pub prompt: bool,
}

/// Why a compositor could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("cannot make the private folder: {0}")]
    Folder(std::io::Error),
    #[error("the config does not load: {0}")]
    Config(String),
    #[error("the compositor does not start: {0}")]
    Compositor(String),
    #[error("the compositor thread cannot start: {0}")]
    Thread(std::io::Error),
    #[error("the compositor stopped")]
    Stopped,
}

/// A compositor running on its thread, and the way to reach it.
pub struct Running {
    commands: calloop::channel::Sender<Request>,
    thread: Option<JoinHandle<()>>,
}

impl Running {
    /// Starts a compositor on a new thread; returns once it serves clients (and, with a
    /// prompt, once the dialog shows it), or after 20 seconds at most.
    pub fn start(options: ServerOptions) -> Result<Running, ServerError> {
        let (commands, channel) = calloop::channel::channel();
        let (ready_tx, ready) = mpsc::sync_channel(1);
        let thread = std::thread::Builder::new()
            .name("pcp-wlcs".into())
            .spawn(move || serve(options, channel, ready_tx))
            .map_err(ServerError::Thread)?;
        let running = Running {
            commands,
            thread: Some(thread),
        };
        match ready.recv_timeout(READY_WAIT) {
            Ok(Ok(())) => Ok(running),
            Ok(Err(e)) => Err(e),
            Err(mpsc::RecvTimeoutError::Timeout) => {
                tracing::warn!(
                    "the compositor was not ready after {} s; going on",
                    READY_WAIT.as_secs()
                );
                Ok(running)
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => Err(ServerError::Stopped),
        }
    }

    /// Runs `command` on the compositor's thread and waits until it is done.
    pub fn run(&self, command: Command) -> Result<(), ServerError> {
        let (done, finished) = mpsc::sync_channel(1);
        self.commands
            .send(Request { command, done })
            .map_err(|_| ServerError::Stopped)?;
        finished.recv().map_err(|_| ServerError::Stopped)
    }

    /// A handle that sends commands to this compositor (for the fake devices).
    pub fn link(&self) -> Link {
        Link {
            commands: self.commands.clone(),
        }
    }

    /// Stops the compositor and waits until its thread has ended: its clients are
    /// disconnected, and its folder and everything in it are gone.
    pub fn stop(mut self) {
        self.join();
    }

    fn join(&mut self) {
        if self.thread.is_none() {
            return;
        }
        // An error is a thread already gone.
        let _ = self.run(Command::Stop);
        if let Some(thread) = self.thread.take()
            && thread.join().is_err()
        {
            tracing::error!("the compositor thread panicked");
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.join();
    }
}

/// A fake device's way to the compositor.
#[derive(Clone)]
pub struct Link {
    commands: calloop::channel::Sender<Request>,
}

impl Link {
    /// Sends a device event and waits until the compositor has routed it.
    pub fn device(&self, event: DeviceEvent) {
        let (done, finished) = mpsc::sync_channel(1);
        if self
            .commands
            .send(Request {
                command: Command::Device(event),
                done,
            })
            .is_err()
            || finished.recv().is_err()
        {
            tracing::warn!("a device event reached no compositor: it has stopped");
        }
    }
}

/// The compositor thread: start, say so, serve until the channel closes, then drop everything
/// (the folder last, after the gate has written its store).
fn serve(
    options: ServerOptions,
    channel: Channel<Request>,
    ready: mpsc::SyncSender<Result<(), ServerError>>,
) {
    let folder = match private_folder() {
        Ok(f) => f,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    let started = std::time::Instant::now();
    let mut compositor = match start(folder.path(), &options.manifests) {
        Ok(c) => c,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    tracing::debug!(
        ms = started.elapsed().as_millis() as u64,
        "the compositor started"
    );
    let mut clients: HashMap<i32, ClientId> = HashMap::new();
    let source = compositor.event_loop.handle().insert_source(
        channel,
        move |event, _, state: &mut State| match event {
            Event::Msg(request) => {
                handle(state, &mut clients, request.command);
                let _ = request.done.send(());
            }
            Event::Closed => state.stop(),
        },
    );
    if let Err(e) = source {
        let _ = ready.send(Err(ServerError::Compositor(e.to_string())));
        return;
    }
    let prompt = if options.prompt {
        match crate::prompt::Prompt::submit(&mut compositor.state) {
            Ok(p) => Some(p),
            Err(e) => {
                let _ = ready.send(Err(e));
                return;
            }
        }
    } else {
        None
    };
    let mut ready = Some(ready);
    while compositor.state.is_running() {
        let up = prompt
            .as_ref()
            .is_none_or(|_| compositor.state.pcp().ui().is_open());
        if up && let Some(ready) = ready.take() {
            let _ = ready.send(Ok(()));
        }
        if let Err(e) = compositor.dispatch(None) {
            tracing::error!("the event loop failed: {e}");
            break;
        }
    }
    // Clients first (the prompt's client sees its connection end), then the rest.
    let stopping = std::time::Instant::now();
    drop(compositor);
    tracing::debug!(
        ms = stopping.elapsed().as_millis() as u64,
        "the compositor stopped"
    );
    if let Some(prompt) = prompt {
        prompt.join();
    }
    drop(folder);
}

/// What one command does.
fn handle(state: &mut State, clients: &mut HashMap<i32, ClientId>, command: Command) {
    match command {
        Command::Client { stream, key } => match state.insert_client(stream) {
            Ok(client) => {
                clients.insert(key, client.id());
            }
            Err(e) => tracing::warn!("{e}"),
        },
        Command::PlaceWindow { key, surface, x, y } => {
            let placed = clients
                .get(&key)
                .is_some_and(|client| state.place_window(client, surface, (x, y).into()));
            if !placed {
                // WLCS places layer surfaces too; theirs is where their anchors say.
                tracing::debug!("no window is surface {surface} of client {key}: not placed");
            }
        }
        Command::Device(event) => state.device_input(event),
        Command::Stop => state.stop(),
    }
}

/// A new 0700 folder of this test's own (the gate narrows nothing it did not create), in
/// memory when the machine has a tmpfs for it: `$XDG_RUNTIME_DIR`, else `/dev/shm`. The store is
/// the real SQLite either way, but its syncs to a disk took most of a test's start (250 ms of
/// 300 here), a thousand times over.
fn private_folder() -> Result<tempfile::TempDir, ServerError> {
    let base = std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .filter(|p| p.is_dir())
        .or_else(|| Some(PathBuf::from("/dev/shm")).filter(|p| p.is_dir()))
        .unwrap_or_else(std::env::temp_dir);
    tempfile::Builder::new()
        .prefix("pcp-wlcs-")
        .permissions(std::fs::Permissions::from_mode(0o700))
        .tempdir_in(base)
        .map_err(ServerError::Folder)
}

/// The config of every test's compositor: this checkout's manifests; the state store in the
/// private folder; voice, haptics and the accessibility tree off (no model, no device, no
/// bus); the default policy and dialog otherwise.
fn config_text(folder: &Path, manifests: &Path) -> String {
    format!(
        "[manifests]\ndirs = [{:?}]\n[state]\npath = {:?}\n[speech]\nenabled = false\n\
         [haptics]\nenabled = false\n[compositor]\naccessibility = false\n[overlay]\nsystem_fonts = false\n",
        manifests,
        folder.join("state.sqlite3"),
    )
}

/// The compositor, from the config written into `folder`.
fn start(folder: &Path, manifests: &Path) -> Result<Compositor, ServerError> {
    let path = folder.join("config.toml");
    std::fs::write(&path, config_text(folder, manifests)).map_err(ServerError::Folder)?;
    let loaded = startup::load(Some(&path)).map_err(|e| ServerError::Config(e.to_string()))?;
    let output = OUTPUT
        .parse()
        .map_err(|e: pcp_compositor::config::SpecError| ServerError::Config(e.to_string()))?;
    // No socket (WLCS hands clients over), no config watch (the file never changes).
    let options = startup::options(loaded, vec![output], None, None, true)
        .map_err(|e| ServerError::Config(e.to_string()))?;
    Compositor::new(options).map_err(|e| ServerError::Compositor(e.to_string()))
}
