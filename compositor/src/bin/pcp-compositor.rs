//! `pcp-compositor`: the reference compositor. `--backend headless` runs with virtual outputs
//! (and per-output PNG capture); `--backend winit` (cargo feature `winit`) opens a nested window
//! as the one output, for development; `--backend udev` (cargo feature `udev`) runs a real session
//! on a VT (DRM/KMS displays, libinput, libseat); `--backend auto` picks the best of those built
//! in; `validate` checks a config file. SIGTERM, SIGINT and SIGHUP end the session like a logout:
//! the last batch of audit records is written before it exits.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use calloop::generic::Generic;
use calloop::{Interest, Mode, PostAction};
use clap::{CommandFactory, Parser, Subcommand, ValueEnum};
use pcp_compositor::auto::Surroundings;
use pcp_compositor::backend::{BackendError, BackendKind, UDEV_BUILT, WINIT_BUILT};
use pcp_compositor::config::{OutputSpec, ReferenceSections};
use pcp_compositor::startup;
use pcp_compositor::state::{Compositor, Socket};
use pcp_plugin::PcpHandler;

#[derive(Parser)]
#[command(
    name = "pcp-compositor",
    version,
    about = "A Wayland compositor that gates intents",
    after_long_help = pcp_cli::EXIT_STATUS
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Which backend to run; `auto`: udev on a virtual terminal, winit inside another display,
    /// headless otherwise (among those built in).
    #[arg(long, value_enum, default_value = "headless")]
    backend: Backend,
    /// A virtual output, WxH[*SCALE][@X,Y]; repeat for more (default: the config's `outputs`).
    /// With `--backend winit` the first one gives the window's size and the output's scale.
    #[arg(long = "output")]
    outputs: Vec<OutputSpec>,
    /// The socket name in $XDG_RUNTIME_DIR.
    #[arg(long, default_value = "pcp-0")]
    socket: String,
    /// The config file (default: $XDG_CONFIG_HOME/pcp/config.toml; without one, the built-in
    /// defaults).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Write each output's picture as DIR/<output>.png when it changed.
    #[arg(long)]
    capture_dir: Option<PathBuf>,
    /// How often to write captures, in milliseconds.
    #[arg(long, default_value_t = 500)]
    capture_interval_ms: u64,
    /// On failure, print the error's causes one per line and where it was made (a backtrace);
    /// `PCP_DEBUG=1` does the same.
    #[arg(long, global = true)]
    debug: bool,
}

#[derive(Subcommand)]
enum Command {
    /// Check a config file: every section, every manifest (the same check as `pcpctl validate`).
    Validate {
        /// The config file to check (default: $XDG_CONFIG_HOME/pcp/config.toml).
        #[arg(long)]
        config: Option<PathBuf>,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum Backend {
    Auto,
    Headless,
    Winit,
    Udev,
}

fn main() -> ExitCode {
    // SAFETY: the first thing the process does; no other thread exists yet.
    unsafe { pcp_speech::prepare_process() };
    if let Some(code) = pcp_cli::generate_if_asked(Cli::command) {
        return code;
    }
    let cli = Cli::parse();
    let report = pcp_cli::Report::start("pcp-compositor", "info", cli.debug);
    match run(cli) {
        Ok(code) => code,
        Err(e) => report.fail(&e),
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    if let Some(Command::Validate { config }) = cli.command {
        // The same check as `pcpctl validate` and as this compositor's loader.
        return Ok(
            match pcp_config::validate::<ReferenceSections>(config.as_deref()) {
                Ok(ok) => {
                    pcp_cli::outln!("{ok}");
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("{e}");
                    ExitCode::from(1)
                }
            },
        );
    }
    let kind = backend_kind(cli.backend)?;
    if kind != BackendKind::Headless && cli.capture_dir.is_some() {
        bail!(
            "--capture-dir needs --backend headless: the other backends' pixels are on a display"
        );
    }
    if std::env::var_os("XDG_RUNTIME_DIR").is_none() {
        bail!("XDG_RUNTIME_DIR is not set: the Wayland socket lives there");
    }
    // Before the socket exists: a client or session manager may signal as soon as it sees it.
    catch_termination()?;
    let loaded = startup::load(cli.config.as_deref())?;
    // Headless has no seat devices: nothing can answer a prompt, so every ask is denied
    // `confirmation_unavailable` (fail closed). The nested window's keyboard, pointer and touch
    // can answer. The udev backend starts with none and counts the keyboards, pointers and
    // touch screens libinput adds and removes.
    let options = startup::options(
        loaded,
        cli.outputs,
        Some(Socket::Name(cli.socket)),
        cli.config,
        kind == BackendKind::Winit,
    )?;
    let mut compositor =
        Compositor::with_backend(options, kind).context("cannot start the compositor")?;
    announce_and_start_agent(&mut compositor, kind);
    if let Some(dir) = &cli.capture_dir {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create the capture folder {}", dir.display()))?;
    }
    let mut last_capture = Instant::now();
    wake_on_termination(&mut compositor)?;
    let capture_every = Duration::from_millis(cli.capture_interval_ms);
    while compositor.state.is_running() && !TERMINATE.load(Ordering::Relaxed) {
        // Asleep until a client, a device or a timer has something: only captures wake it up
        // on their own.
        let timeout = cli
            .capture_dir
            .as_ref()
            .map(|_| capture_every.saturating_sub(last_capture.elapsed()));
        if let Err(e) = compositor.dispatch(timeout) {
            // A signal interrupts the wait (epoll_wait is never restarted): not a failure.
            if TERMINATE.load(Ordering::Relaxed) {
                break;
            }
            return Err(e).context("the event loop failed");
        }
        if let Some(dir) = &cli.capture_dir
            && last_capture.elapsed() >= capture_every
        {
            last_capture = Instant::now();
            capture_outputs(&compositor, dir);
        }
    }
    // Routine audit records are committed in groups: write out the last group before leaving.
    if let Err(e) = compositor.state.pcp().flush() {
        tracing::error!("the last audit records could not be written: {e}");
    }
    if TERMINATE.load(Ordering::Relaxed) {
        tracing::info!("session ended (signal)");
    } else {
        tracing::info!("session ended (logout)");
    }
    close_and_exit(compositor)
}

/// The backend `--backend` asks for (`auto` chooses from what is around), or why it cannot be
/// had.
fn backend_kind(backend: Backend) -> Result<BackendKind> {
    Ok(match backend {
        Backend::Auto => {
            let (kind, why) = pcp_compositor::auto::choose(&Surroundings::detect());
            tracing::info!("backend {kind:?}: {why}");
            kind
        }
        Backend::Headless => BackendKind::Headless,
        Backend::Winit if !WINIT_BUILT => bail!("{}", BackendError::WinitNotBuilt),
        Backend::Winit => BackendKind::Winit,
        Backend::Udev if !UDEV_BUILT => bail!("{}", BackendError::UdevNotBuilt),
        Backend::Udev => BackendKind::Udev,
    })
}

/// Writes every output's pixels to `dir` as `NAME.png`; a failure is logged and the next output
/// tried.
fn capture_outputs(compositor: &Compositor, dir: &Path) {
    for (i, vo) in compositor.state.backend().outputs.iter().enumerate() {
        let path = dir.join(format!("{}.png", vo.output.name()));
        match compositor.state.backend().capture(i) {
            Ok(c) => {
                if let Err(e) = c.write_png(&path) {
                    tracing::warn!("{e}");
                }
            }
            Err(e) => tracing::warn!("{e}"),
        }
    }
}

/// Says where clients connect, then starts the session's polkit agent (headless: only with
/// `[polkit] enabled = true`); without one the session carries on, and the log says why.
fn announce_and_start_agent(compositor: &mut Compositor, kind: BackendKind) {
    if let Some(name) = &compositor.socket_name {
        tracing::info!("listening on WAYLAND_DISPLAY={name}");
    }
    // Why it did not start is logged.
    let _ = pcp_compositor::polkit::start(compositor, kind != BackendKind::Headless);
}

/// Closes what holds data or threads part by part, logging how long each took (a session
/// manager that gives up waiting should find in the log where the exit waited), then exits.
/// The rest (clients, windows, the textures and renderer holding the GPU's file) has nothing to
/// write out and is left to the kernel: in the VM session, tearing it down (after the GPU's
/// file was dropped) did not end within 30 s of SIGTERM.
fn close_and_exit(compositor: Compositor) -> ! {
    let Compositor {
        event_loop, state, ..
    } = compositor;
    let started = Instant::now();
    drop(event_loop);
    tracing::info!(
        ms = started.elapsed().as_millis() as u64,
        "closed the event loop and its device sources"
    );
    let rest = state.close_for_exit();
    tracing::info!("exiting; the kernel closes the rest");
    // Never dropped: see `State::close_for_exit`.
    std::mem::forget(rest);
    std::process::exit(0)
}

/// Set by SIGTERM, SIGINT or SIGHUP; the event loop sees it when the signal wakes it.
static TERMINATE: AtomicBool = AtomicBool::new(false);

/// An eventfd the signal handler writes to: the event loop sleeps with no timeout and retries
/// a wait a signal interrupts, so a signal must wake it as an event (-1: none yet).
static WAKE_FD: AtomicI32 = AtomicI32::new(-1);

extern "C" fn on_termination(_signal: libc::c_int) {
    // An atomic store and a write(2): both async-signal-safe.
    TERMINATE.store(true, Ordering::Relaxed);
    let fd = WAKE_FD.load(Ordering::Relaxed);
    if fd >= 0 {
        let one: u64 = 1;
        // SAFETY: writing 8 bytes from a local to an eventfd; the result is irrelevant (a full
        // counter still wakes the loop).
        unsafe {
            libc::write(fd, (&one as *const u64).cast::<libc::c_void>(), 8);
        }
    }
}

/// The eventfd a termination signal wakes the loop with, as an event source that stops it.
fn wake_on_termination(compositor: &mut Compositor) -> Result<()> {
    // SAFETY: eventfd takes an initial value and flags; a non-negative result is a new fd.
    let raw = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
    if raw < 0 {
        bail!(
            "cannot create an eventfd: {}",
            std::io::Error::last_os_error()
        );
    }
    // SAFETY: `raw` was just returned by eventfd and is owned by nothing else.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    WAKE_FD.store(fd.as_raw_fd(), Ordering::Relaxed);
    compositor
        .event_loop
        .handle()
        .insert_source(
            Generic::new(fd, Interest::READ, Mode::Level),
            |_, fd, state| {
                // Read the counter so the level-triggered source quiets, and keep the source:
                // removing it would close the fd whose number the signal handler still writes to.
                let mut count = [0u8; 8];
                // SAFETY: reading 8 bytes into a local from the eventfd the source owns.
                unsafe {
                    libc::read(fd.as_raw_fd(), count.as_mut_ptr().cast::<libc::c_void>(), 8);
                }
                state.stop();
                Ok(PostAction::Continue)
            },
        )
        .map_err(|e| anyhow::anyhow!("cannot watch for termination signals: {e}"))?;
    Ok(())
}

/// A display manager ends a session with SIGTERM (a terminal with SIGINT or SIGHUP): leave the
/// loop and write the batched audit records instead of dying with them.
fn catch_termination() -> Result<()> {
    for signal in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
        // SAFETY: a zeroed sigaction with a handler that only stores an atomic is a valid
        // disposition; the pointers passed live for the call.
        let installed = unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_termination as extern "C" fn(libc::c_int) as usize;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut())
        };
        if installed != 0 {
            bail!(
                "cannot handle signal {signal}: {}",
                std::io::Error::last_os_error()
            );
        }
    }
    Ok(())
}
