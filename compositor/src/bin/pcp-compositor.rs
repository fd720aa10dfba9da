//! `pcp-compositor`: the reference compositor. `--backend headless` runs with virtual outputs
//! (and per-output PNG capture); `--backend winit` (cargo feature `winit`) opens a nested window
//! as the one output, for development; `--backend udev` (cargo feature `udev`) runs a real session
//! on a VT (DRM/KMS displays, libinput, libseat); `--backend auto` picks the best of those built
//! in; `validate` checks a config file. SIGTERM, SIGINT and SIGHUP end the session like a logout:
//! the last batch of audit records is written before it exits.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand, ValueEnum};
use pcp_compositor::auto::Surroundings;
use pcp_compositor::backend::{BackendError, BackendKind, UDEV_BUILT, WINIT_BUILT};
use pcp_compositor::config::OutputSpec;
use pcp_compositor::startup;
use pcp_compositor::state::{Compositor, Socket};

#[derive(Parser)]
#[command(
    name = "pcp-compositor",
    version,
    about = "A Wayland compositor that gates intents"
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
    #[arg(long)]
    config: Option<PathBuf>,
    /// Write each output's picture as DIR/<output>.png when it changed.
    #[arg(long)]
    capture_dir: Option<PathBuf>,
    /// How often to write captures, in milliseconds.
    #[arg(long, default_value_t = 500)]
    capture_interval_ms: u64,
}

#[derive(Subcommand)]
enum Command {
    /// Check a config file: the gate's sections, every manifest, `[compositor]` and `[overlay]`.
    Validate {
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
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    match run(Cli::parse()) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("pcp-compositor: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    if let Some(Command::Validate { config }) = cli.command {
        return Ok(match startup::load(config.as_deref()) {
            Ok(c) => {
                let shown = c
                    .gate
                    .path
                    .map_or_else(|| "<built-in defaults>".into(), |p| p.display().to_string());
                println!("{shown}: ok ({} capabilities)", c.gate.registry.len());
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("{e}");
                ExitCode::from(1)
            }
        });
    }
    let kind = match cli.backend {
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
    };
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
    if let Some(name) = &compositor.socket_name {
        tracing::info!("listening on WAYLAND_DISPLAY={name}");
    }
    if let Some(dir) = &cli.capture_dir {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create the capture folder {}", dir.display()))?;
    }
    let mut last_capture = Instant::now();
    while compositor.state.running && !TERMINATE.load(Ordering::Relaxed) {
        if let Err(e) = compositor.dispatch(Some(Duration::from_millis(16))) {
            // A signal interrupts the wait (epoll_wait is never restarted): not a failure.
            if TERMINATE.load(Ordering::Relaxed) {
                break;
            }
            return Err(e).context("the event loop failed");
        }
        if let Some(dir) = &cli.capture_dir
            && last_capture.elapsed() >= Duration::from_millis(cli.capture_interval_ms)
        {
            last_capture = Instant::now();
            for (i, vo) in compositor.state.backend.outputs.iter().enumerate() {
                let path = dir.join(format!("{}.png", vo.output.name()));
                match compositor.state.backend.capture(i) {
                    Ok(c) => {
                        if let Err(e) = c.write_png(&path) {
                            tracing::warn!("{e}");
                        }
                    }
                    Err(e) => tracing::warn!("{e}"),
                }
            }
        }
    }
    // Routine audit records are committed in groups: write out the last group before leaving.
    if let Err(e) = compositor.state.pcp.gate_mut().flush() {
        tracing::error!("the last audit records could not be written: {e}");
    }
    if TERMINATE.load(Ordering::Relaxed) {
        tracing::info!("session ended (signal)");
    } else {
        tracing::info!("session ended (logout)");
    }
    Ok(ExitCode::SUCCESS)
}

/// Set by SIGTERM, SIGINT or SIGHUP; the event loop (woken at least every 16 ms) sees it.
static TERMINATE: AtomicBool = AtomicBool::new(false);

extern "C" fn on_termination(_signal: libc::c_int) {
    // Only an atomic store: async-signal-safe.
    TERMINATE.store(true, Ordering::Relaxed);
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
