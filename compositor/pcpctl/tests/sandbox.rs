//! Confined agents and verified identity against a real headless compositor on this thread,
//! with real bubblewrap and real clients: `pcpctl run` masks pcp's files and reaches the
//! compositor only through its security context's socket (the dialog and the audit name the
//! sandbox, verified); a sandboxed client sees neither layer-shell nor the security-context
//! manager; a client whose connecting process ran another program before submitting is refused.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use pcp_compositor::startup;
use pcp_compositor::state::{Compositor, Socket};
use pcp_plugin::PcpHandler;
use serde_json::Value;

const KEY_TAB: u32 = 15;
const KEY_ENTER: u32 = 28;
const KEY_LEFTMETA: u32 = 125;

struct Setup {
    compositor: Compositor,
    dir: tempfile::TempDir,
}

/// The config, the manifests and the state each in a place of their own (so each mask is
/// tried), the socket in its own runtime folder.
fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::set_permissions(root, std::fs::Permissions::from_mode(0o700)).unwrap();
    for sub in ["manifests", "state", "run"] {
        std::fs::create_dir(root.join(sub)).unwrap();
        std::fs::set_permissions(root.join(sub), std::fs::Permissions::from_mode(0o700)).unwrap();
    }
    let assets = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/capabilities.d");
    for entry in std::fs::read_dir(assets).unwrap() {
        let entry = entry.unwrap();
        let to = root.join("manifests").join(entry.file_name());
        std::fs::copy(entry.path(), &to).unwrap();
        std::fs::set_permissions(&to, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let config = root.join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[manifests]\ndirs = [{:?}]\n[state]\npath = {:?}\n[overlay]\nsystem_fonts = false\n[speech]\nenabled = false\n",
            root.join("manifests"),
            root.join("state/state.sqlite3")
        ),
    )
    .unwrap();
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o600)).unwrap();
    let loaded = startup::load(Some(&config)).unwrap();
    let mut options = startup::options(
        loaded,
        vec!["800x480@0,0".parse().unwrap()],
        Some(Socket::Path(root.join("run/wl"))),
        Some(config),
        true,
    )
    .unwrap();
    options.frame_timer = false;
    Setup {
        compositor: Compositor::new(options).unwrap(),
        dir,
    }
}

impl Setup {
    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = Command::new(program);
        c.env("WAYLAND_DISPLAY", self.path("run/wl"))
            .env("XDG_RUNTIME_DIR", self.path("run"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        c
    }

    /// `pcpctl run --config … --app-id APP -- ARGS`.
    fn pcpctl_run(&self, app: &str, args: &[&str]) -> Command {
        let mut c = self.command(env!("CARGO_BIN_EXE_pcpctl"));
        c.arg("run")
            .arg("--config")
            .arg(self.path("config.toml"))
            .args(["--app-id", app, "--"])
            .args(args);
        c
    }

    fn pump_until(&mut self, what: &str, mut done: impl FnMut(&mut Setup) -> bool) {
        let start = Instant::now();
        while !done(self) {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "timed out: {what}"
            );
            self.compositor
                .dispatch(Some(Duration::from_millis(5)))
                .unwrap();
        }
    }

    fn finish(&mut self, mut child: Child) -> Output {
        self.pump_until("the client to exit", |_| {
            matches!(child.try_wait(), Ok(Some(_)))
        });
        child.wait_with_output().unwrap()
    }

    fn audit(&mut self) -> Vec<pcp_gate::AuditRecord> {
        let pcp = self.compositor.state.pcp();
        pcp.flush().unwrap();
        pcp.gate().store().audit_since(0).unwrap()
    }
}

fn bwrap_works() {
    let ok = Command::new("bwrap")
        .args(["--ro-bind", "/", "/", "true"])
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        ok,
        "bubblewrap must run here (`cargo xtask setup` installs it)"
    );
}

/// What the agent tries from inside: read and write each of pcp's files, reach the real socket.
const PROBE: &str = r#"
echo "runtime: $(ls "$XDG_RUNTIME_DIR" | tr '\n' ' ')"
if [ -e "$REAL_SOCKET" ]; then echo "SOCKET $REAL_SOCKET"; else echo "no-socket"; fi
for f in "$@"; do
  if cat "$f" >/dev/null 2>&1; then echo "READ $f"; else echo "no-read $f"; fi
  if sh -c "echo tampered >> '$f'" 2>/dev/null; then echo "WROTE $f"; else echo "no-write $f"; fi
done
exec "$PCPCTL" submit settings.change --params '{"key":"theme","value":"dark"}'
"#;

#[test]
fn an_agent_in_pcpctl_run_cannot_touch_pcp_files_and_its_dialog_names_its_sandbox() {
    bwrap_works();
    let mut s = setup();
    let files = [
        s.path("config.toml"),
        s.path("manifests/50-desktop.toml"),
        s.path("state/state.sqlite3"),
        s.path("state/token.key"),
    ];
    let before: Vec<Vec<u8>> = files.iter().map(|f| std::fs::read(f).unwrap()).collect();
    let mut args = vec!["sh", "-c", PROBE, "probe"];
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    args.extend(names.iter().map(String::as_str));
    let mut cmd = s.pcpctl_run("org.example.Agent", &args);
    cmd.env("PCPCTL", env!("CARGO_BIN_EXE_pcpctl"))
        .env("REAL_SOCKET", s.path("run/wl"));
    let child = cmd.spawn().unwrap();

    s.pump_until("the sandboxed agent's prompt", |s| {
        s.compositor.state.pcp().gate().active().is_some()
    });
    let client = s
        .compositor
        .state
        .pcp()
        .gate()
        .active()
        .unwrap()
        .intent
        .client
        .clone();
    let sandbox = client
        .sandbox
        .clone()
        .expect("named by its security context");
    assert_eq!(sandbox.engine.as_deref(), Some("pcp"));
    assert_eq!(sandbox.app_id.as_deref(), Some("org.example.Agent"));
    assert!(sandbox.instance_id.is_some());
    assert_eq!(client.app_key(), "sandbox:pcp:org.example.Agent");
    let requester = s
        .compositor
        .state
        .pcp()
        .ui()
        .dialog()
        .content()
        .unwrap()
        .requester
        .clone();
    assert_eq!(
        requester,
        pcp_overlay::Requester::Sandboxed {
            engine: "pcp".into(),
            app_id: "org.example.Agent".into()
        }
    );
    pcp_plugin::refresh(&mut s.compositor.state);
    s.compositor.state.render();
    let capture = s.compositor.state.backend().capture(0).unwrap();
    let png = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/pcp-captures");
    std::fs::create_dir_all(&png).unwrap();
    capture
        .write_png(&png.join("sandboxed-agent-dialog.png"))
        .unwrap();

    // Approve with the keyboard once the click guard has passed: decided like any intent.
    let state = &mut s.compositor.state;
    state.advance_clock(1000);
    // The dialog takes the keyboard only when given it (issue 17): Super+Return.
    if !state.pcp().ui().wants_keyboard() {
        for (key, pressed) in [
            (KEY_LEFTMETA, true),
            (KEY_ENTER, true),
            (KEY_ENTER, false),
            (KEY_LEFTMETA, false),
        ] {
            state.inject_key(key, pressed);
        }
    }
    for key in [KEY_TAB, KEY_TAB, KEY_ENTER] {
        state.inject_key(key, true);
        state.inject_key(key, false);
    }
    let out = s.finish(child);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    for f in &names {
        assert!(
            stdout.contains(&format!("no-read {f}")),
            "{stdout}\n{stderr}"
        );
        assert!(
            stdout.contains(&format!("no-write {f}")),
            "{stdout}\n{stderr}"
        );
    }
    assert!(
        !stdout.contains("READ ") && !stdout.contains("WROTE "),
        "{stdout}"
    );
    // Only the security context's socket is in the sandbox's runtime folder; the compositor's
    // own socket is not there.
    assert!(stdout.contains("runtime: wayland-0 \n"), "{stdout}");
    assert!(stdout.contains("no-socket"), "{stdout}");
    let decision: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(decision["approved"], true, "{stdout}\n{stderr}");
    assert_eq!(decision["resolution"], "user_approved");
    for (f, old) in files[..2].iter().zip(&before) {
        assert_eq!(&std::fs::read(f).unwrap(), old, "{} unchanged", f.display());
    }
    assert_eq!(
        std::fs::read(&files[3]).unwrap(),
        before[3],
        "the key unchanged"
    );

    // The audit record carries the same verified identity.
    let records = s.audit();
    let last = records.last().unwrap();
    assert_eq!(last.client.sandbox, Some(sandbox));
    assert_eq!(last.capability, "settings.change");
}

#[test]
fn a_sandboxed_client_sees_neither_layer_shell_nor_the_session_lock_nor_the_security_context_manager()
 {
    bwrap_works();
    let mut s = setup();
    let plain = s.command("wayland-info").spawn().unwrap();
    let plain = String::from_utf8_lossy(&s.finish(plain).stdout).into_owned();
    assert!(plain.contains("zwlr_layer_shell_v1"), "{plain}");
    assert!(plain.contains("wp_security_context_manager_v1"), "{plain}");
    assert!(plain.contains("pcp_intent_manager_v1"), "{plain}");
    assert!(plain.contains("ext_session_lock_manager_v1"), "{plain}");
    assert!(plain.contains("ext_idle_notifier_v1"), "{plain}");

    let child = s
        .pcpctl_run("org.example.Agent", &["wayland-info"])
        .spawn()
        .unwrap();
    let out = s.finish(child);
    let inside = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert!(inside.contains("pcp_intent_manager_v1"), "{inside}");
    assert!(!inside.contains("zwlr_layer_shell_v1"), "{inside}");
    assert!(!inside.contains("ext_session_lock_manager_v1"), "{inside}");
    assert!(!inside.contains("ext_idle_notifier_v1"), "{inside}");
    assert!(
        !inside.contains("wp_security_context_manager_v1"),
        "{inside}"
    );
}

#[test]
fn pcpctl_run_says_what_is_missing() {
    let mut s = setup();
    let mut cmd = s.command(env!("CARGO_BIN_EXE_pcpctl"));
    cmd.args(["run", "--bwrap", "/nonexistent/bwrap", "--", "true"]);
    let out = s.finish(cmd.spawn().unwrap());
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bubblewrap") && err.contains("not installed"),
        "{err}"
    );

    let mut cmd = s.command(env!("CARGO_BIN_EXE_pcpctl"));
    cmd.args(["run", "--", "true"])
        .env("WAYLAND_DISPLAY", s.path("run/nothing-here"));
    let out = s.finish(cmd.spawn().unwrap());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("cannot reach the compositor"), "{err}");
}

/// A process connects, then replaces itself (`execve`) with `pcpctl submit`, which speaks on the
/// inherited connection (`WAYLAND_SOCKET`).
const CONNECT_THEN_EXEC: &str = r#"
import os, socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(os.environ["WAYLAND_DISPLAY"])
# The compositor takes the identity when it accepts the connection (at its next dispatch): an
# exec before that is seen as the program that connected. Wait until it surely has.
import time; time.sleep(0.5)
os.set_inheritable(s.fileno(), True)
os.environ["WAYLAND_SOCKET"] = str(s.fileno())
os.execv(sys.argv[1], [sys.argv[1], "submit", "file.write", "--params", '{"path":"/tmp/x"}'])
"#;

#[test]
fn a_client_whose_connecting_process_execs_another_program_is_refused() {
    let mut s = setup();
    let mut cmd = s.command("python3");
    cmd.args(["-c", CONNECT_THEN_EXEC, env!("CARGO_BIN_EXE_pcpctl")]);
    let out = s.finish(cmd.spawn().unwrap());
    let stdout = String::from_utf8_lossy(&out.stdout);
    let decision: Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("{e}: {stdout} {}", String::from_utf8_lossy(&out.stderr)));
    // file.write is policy_allow for the process that connected and is still running it.
    assert_eq!(decision["approved"], false, "{decision}");
    assert_eq!(decision["resolution"], "policy_deny");
    let reason = decision["reason"].as_str().unwrap();
    assert!(reason.contains(env!("CARGO_BIN_EXE_pcpctl")), "{reason}");
    assert!(reason.contains("python3"), "{reason}");
    let records = s.audit();
    let last = records.last().unwrap();
    assert_eq!(last.resolution, pcp_gate::Resolution::IdentityChanged);
    // The record names the process as it connected.
    assert!(
        last.client
            .executable
            .as_deref()
            .unwrap()
            .contains("python3"),
        "{:?}",
        last.client
    );

    // The same program connecting itself is allowed: the refusal is the exec, not pcpctl.
    let mut cmd = s.command(env!("CARGO_BIN_EXE_pcpctl"));
    cmd.args(["submit", "file.write", "--params", r#"{"path":"/tmp/x"}"#]);
    let out = s.finish(cmd.spawn().unwrap());
    assert_eq!(out.status.code(), Some(0), "{out:?}");
}
