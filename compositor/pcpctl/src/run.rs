//! `pcpctl run [--app-id ID] -- COMMAND [ARGS...]`: starts COMMAND confined by bubblewrap. Inside,
//! pcp's config file and folder, the manifest folders (the user's and the system's), the state
//! folder and the token key are masked (an empty read-only folder, or an unreadable read-only
//! file), `$XDG_RUNTIME_DIR` is an empty folder holding one Wayland socket made with
//! `wp_security_context_v1` (engine `pcp`, the app id, an instance id), and the compositor's own
//! socket is out of reach. The compositor names every client of that socket by its sandbox
//! (verified) and shows it no privileged global. pcpctl keeps the security context's close fd
//! for the sandbox's life: when pcpctl exits, the compositor stops listening on the socket.

use std::ffi::OsString;
use std::io::{PipeReader, PipeWriter};
use std::os::fd::AsFd;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{Context, Result, anyhow, bail};
use pcp_gate::config::{default_config_path, default_state_path};
use pcp_gate::sources::SYSTEM_MANIFEST_DIRS;
use wayland_client::globals::{GlobalListContents, registry_queue_init};
use wayland_client::protocol::wl_registry::WlRegistry;
use wayland_client::{Connection, Dispatch, QueueHandle};
use wayland_protocols::wp::security_context::v1::client::wp_security_context_manager_v1::WpSecurityContextManagerV1;
use wayland_protocols::wp::security_context::v1::client::wp_security_context_v1::WpSecurityContextV1;

/// The sandbox engine name the compositor sees for `pcpctl run`.
pub const ENGINE: &str = "pcp";

#[derive(clap::Args)]
pub struct Args {
    /// The app id the compositor shows (verified) and keys friction history by; default: the
    /// command's file name.
    #[arg(long)]
    app_id: Option<String>,
    /// The config file whose paths are masked (default: `$XDG_CONFIG_HOME/pcp/config.toml`).
    #[arg(long)]
    config: Option<PathBuf>,
    /// The bubblewrap program (default: `bwrap` on `$PATH`).
    #[arg(long, default_value = "bwrap")]
    bwrap: PathBuf,
    /// The program to confine and its arguments.
    #[arg(required = true, last = true)]
    command: Vec<OsString>,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let Some((program, rest)) = args.command.split_first() else {
        bail!("pcpctl run needs a command after `--`");
    };
    let bwrap = find_program(&args.bwrap).ok_or_else(|| {
        anyhow!(
            "bubblewrap (`{}`) is not installed or not on $PATH: install the `bubblewrap` package",
            args.bwrap.display()
        )
    })?;
    let app_id = app_id_of(&args, program)?;
    let masks = Masks::of(args.config.as_deref());
    let runtime = std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from);

    // The sandbox's own socket, in a private folder outside anything the sandbox sees.
    let private = tempfile::Builder::new()
        .prefix("pcp-run-")
        .tempdir()
        .context("cannot create a private folder for the sandbox's socket")?;
    std::fs::set_permissions(private.path(), std::fs::Permissions::from_mode(0o700))
        .context("cannot make the sandbox's socket folder private")?;
    let socket_path = private.path().join("wayland-0");
    let listener = UnixListener::bind(&socket_path)
        .with_context(|| format!("cannot create the socket {}", socket_path.display()))?;
    let instance = format!("{}-{}", std::process::id(), crate::common::now_ms());
    let context = SecurityContext::create(&listener, &app_id, &instance)?;
    drop(listener);

    let inner_runtime = runtime
        .clone()
        .unwrap_or_else(|| PathBuf::from("/run/user/pcp-sandbox"));
    let mut cmd = Command::new(&bwrap);
    cmd.args(["--dev-bind", "/", "/"])
        .args(["--proc", "/proc"])
        .args([
            "--unshare-pid",
            "--unshare-ipc",
            "--die-with-parent",
            "--new-session",
        ])
        // Root keeps its capabilities in bubblewrap unless told: never inside.
        .args(["--cap-drop", "ALL"]);
    mask(&mut cmd, &masks, private.path())?;
    cmd.arg("--tmpfs")
        .arg(&inner_runtime)
        .arg("--chmod")
        .arg("0700")
        .arg(&inner_runtime)
        .arg("--bind")
        .arg(&socket_path)
        .arg(inner_runtime.join("wayland-0"))
        .arg("--setenv")
        .arg("XDG_RUNTIME_DIR")
        .arg(&inner_runtime)
        .args(["--setenv", "WAYLAND_DISPLAY", "wayland-0"])
        .args(["--setenv", "PCP_SANDBOX_APP_ID", &app_id])
        .args(["--unsetenv", "DISPLAY"])
        .arg("--")
        .arg(program)
        .args(rest);
    let status = cmd
        .status()
        .with_context(|| format!("cannot start {}", bwrap.display()))?;
    // The sandbox is over: closing the close fd ends the compositor's listener.
    drop(context);
    Ok(match status.code() {
        Some(0) => ExitCode::SUCCESS,
        Some(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        None => ExitCode::from(1),
    })
}

/// The app id the sandbox is named by: `--app-id`, else the command's file name.
fn app_id_of(args: &Args, program: &OsString) -> Result<String> {
    Ok(match &args.app_id {
        Some(id) if id.trim().is_empty() => bail!("--app-id must not be empty"),
        Some(id) => id.clone(),
        None => Path::new(program)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .filter(|n| !n.is_empty())
            .ok_or_else(|| anyhow!("cannot name the app from the command; give --app-id"))?,
    })
}

/// Adds to `cmd` what hides pcp's files and the compositor's socket from the sandbox: the
/// masked folders emptied and read-only, the masked files bound to an unreadable file made in
/// `private`.
fn mask(cmd: &mut Command, masks: &Masks, private: &Path) -> Result<()> {
    let unreadable = private.join("masked");
    std::fs::write(&unreadable, b"").context("cannot create the mask file")?;
    std::fs::set_permissions(&unreadable, std::fs::Permissions::from_mode(0o000))
        .context("cannot make the mask file unreadable")?;
    for folder in masks.folders.iter().filter(|f| f.is_dir()) {
        cmd.arg("--tmpfs")
            .arg(folder)
            .arg("--remount-ro")
            .arg(folder);
    }
    // A file inside a masked folder is gone already (and the folder is read-only by now).
    let outside = |f: &&PathBuf| !masks.folders.iter().any(|d| f.starts_with(d));
    for file in masks.files.iter().filter(|f| f.is_file()).filter(outside) {
        cmd.arg("--ro-bind").arg(&unreadable).arg(file);
    }
    // The compositor's socket: its folder emptied (when it is not the runtime folder, which is
    // emptied below anyway).
    if let Some(display) = std::env::var_os("WAYLAND_DISPLAY").map(PathBuf::from)
        && display.is_absolute()
        && let Some(folder) = display.parent()
    {
        if private.starts_with(folder) || folder == Path::new("/") {
            cmd.arg("--ro-bind").arg(&unreadable).arg(&display);
        } else {
            cmd.arg("--tmpfs").arg(folder);
        }
    }
    Ok(())
}

/// What the sandbox must not reach.
struct Masks {
    folders: Vec<PathBuf>,
    files: Vec<PathBuf>,
}

impl Masks {
    /// The config file and its folder, the manifest folders, the state folder and the key, from
    /// the config (or the defaults when it does not load: then still everything it would use).
    fn of(config: Option<&Path>) -> Masks {
        let config_path = config.map_or_else(default_config_path, Path::to_path_buf);
        let loaded = if config_path.exists() {
            crate::common::load_config(Some(&config_path))
                .map_err(|e| eprintln!("pcpctl: {e}; masking the default paths as well"))
                .ok()
        } else {
            None
        };
        let base = config_path.parent().unwrap_or(Path::new("/")).to_path_buf();
        let mut folders: Vec<PathBuf> = SYSTEM_MANIFEST_DIRS.iter().map(PathBuf::from).collect();
        let default_dir = default_config_path()
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        folders.push(default_dir);
        let (manifest_dirs, state) = match &loaded {
            Some(c) => (c.file.manifests.dirs.clone(), c.state_path()),
            None => (
                pcp_gate::config::ManifestConfig::default().dirs,
                default_state_path(),
            ),
        };
        folders.extend(manifest_dirs.into_iter().map(|d| base.join(d)));
        let mut files = vec![config_path.clone()];
        let key = pcp_gate::token::TokenKey::path_beside(&state);
        if let Some(state_dir) = state.parent() {
            folders.push(state_dir.to_path_buf());
        }
        files.push(state.clone());
        files.push(key);
        // The default state folder too, when the config moved the state elsewhere.
        if let Some(d) = default_state_path().parent() {
            folders.push(d.to_path_buf());
        }
        // The config's own folder only when it is pcp's (a config in $HOME is masked as a file).
        if config_path.parent().and_then(Path::file_name) == Some("pcp".as_ref()) {
            folders.push(base);
        }
        folders.sort();
        folders.dedup();
        // A folder inside another masked folder is gone with it.
        let nested: Vec<PathBuf> = folders
            .iter()
            .filter(|f| folders.iter().any(|o| o != *f && f.starts_with(o)))
            .cloned()
            .collect();
        folders.retain(|f| !nested.contains(f));
        Masks { folders, files }
    }
}

/// `name` as given when it has a slash, else the first match on `$PATH`.
fn find_program(name: &Path) -> Option<PathBuf> {
    if name.components().count() > 1 {
        return name.is_file().then(|| name.to_path_buf());
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// A security context made on the running compositor: alive while this value is (it holds the
/// close fd's write end and the connection).
struct SecurityContext {
    _close: PipeWriter,
    _connection: Connection,
}

struct NoEvents;

impl Dispatch<WlRegistry, GlobalListContents> for NoEvents {
    fn event(
        _: &mut Self,
        _: &WlRegistry,
        _: wayland_client::protocol::wl_registry::Event,
        _: &GlobalListContents,
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
    }
}

impl Dispatch<WpSecurityContextManagerV1, ()> for NoEvents {
    fn event(
        _: &mut Self,
        _: &WpSecurityContextManagerV1,
        _: <WpSecurityContextManagerV1 as wayland_client::Proxy>::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
    }
}

impl Dispatch<WpSecurityContextV1, ()> for NoEvents {
    fn event(
        _: &mut Self,
        _: &WpSecurityContextV1,
        _: <WpSecurityContextV1 as wayland_client::Proxy>::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
    }
}

impl SecurityContext {
    fn create(listener: &UnixListener, app_id: &str, instance: &str) -> Result<SecurityContext> {
        let display = std::env::var("WAYLAND_DISPLAY").unwrap_or_default();
        let connection = Connection::connect_to_env().with_context(|| {
            format!("cannot reach the compositor (WAYLAND_DISPLAY={display:?}): is it running?")
        })?;
        let (globals, mut queue) = registry_queue_init::<NoEvents>(&connection)
            .context("the compositor did not list its globals")?;
        let qh = queue.handle();
        let manager: WpSecurityContextManagerV1 = globals.bind(&qh, 1..=1, ()).map_err(|_| {
            anyhow!(
                "the compositor (WAYLAND_DISPLAY={display:?}) offers no wp_security_context_v1 \
                 (no wp_security_context_manager_v1 global), or this process already runs in \
                 a sandbox: it cannot confine an app"
            )
        })?;
        let (close_read, close_write): (PipeReader, PipeWriter) =
            std::io::pipe().context("cannot create the security context's close pipe")?;
        let context = manager.create_listener(listener.as_fd(), close_read.as_fd(), &qh, ());
        context.set_sandbox_engine(ENGINE.to_string());
        context.set_app_id(app_id.to_string());
        context.set_instance_id(instance.to_string());
        context.commit();
        context.destroy();
        manager.destroy();
        queue
            .roundtrip(&mut NoEvents)
            .context("the compositor refused the security context")?;
        // The compositor holds its own copies of both descriptors now.
        drop(close_read);
        Ok(SecurityContext {
            _close: close_write,
            _connection: connection,
        })
    }
}
