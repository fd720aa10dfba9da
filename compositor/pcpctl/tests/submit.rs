//! `pcpctl submit` against a real headless compositor on this thread: the decision as JSON, the
//! exit code by it, the identity from the socket, and a prompt answered with the keyboard
//! through the compositor's seat (its test-only injection), never through a request.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use pcp_compositor::startup;
use pcp_compositor::state::{Compositor, Socket};
use pcp_plugin::PcpHandler;
use serde_json::Value;

/// evdev key codes.
const KEY_ESC: u32 = 1;
const KEY_TAB: u32 = 15;
const KEY_ENTER: u32 = 28;
const KEY_LEFTMETA: u32 = 125;

struct Setup {
    compositor: Compositor,
    dir: tempfile::TempDir,
}

/// A compositor without voice: these tests never speak, and each compositor would otherwise load
/// a Vosk model (and wait for the load when it is dropped).
fn setup() -> Setup {
    setup_with("")
}

/// Like [`setup`], with `extra` appended to the config.
fn setup_with(extra: &str) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let assets = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets");
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[manifests]\ndirs = [{:?}]\n[state]\npath = {:?}\n[overlay]\nsystem_fonts = false\n[speech]\nenabled = false\n{extra}",
            assets.join("capabilities.d"),
            dir.path().join("state.sqlite3")
        ),
    )
    .unwrap();
    let loaded = startup::load(Some(&config)).unwrap();
    let mut options = startup::options(
        loaded,
        vec!["800x600@0,0".parse().unwrap()],
        Some(Socket::Path(dir.path().join("wl"))),
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
    fn pcpctl(&self, args: &[&str]) -> Child {
        self.run_as(Path::new(env!("CARGO_BIN_EXE_pcpctl")), args)
    }

    /// Runs `program` (pcpctl, or a copy of it under another name) with `args` against the
    /// compositor.
    fn run_as(&self, program: &Path, args: &[&str]) -> Child {
        Command::new(program)
            .args(args)
            .env("WAYLAND_DISPLAY", self.dir.path().join("wl"))
            .env("XDG_RUNTIME_DIR", self.dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    /// Presses and releases `keys` on the seat's keyboard once the dialog's click guard has
    /// passed (Tab, Tab focuses Approve; Escape denies).
    fn press(&mut self, keys: &[u32]) {
        let state = &mut self.compositor.state;
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
        for &key in keys {
            state.inject_key(key, true);
            state.inject_key(key, false);
        }
    }

    /// Clicks the dialog's "Allow until logout" once the click guard has passed.
    fn click_allow_until_logout(&mut self) {
        let state = &mut self.compositor.state;
        state.advance_clock(1000);
        pcp_plugin::refresh(state);
        let ui = state.pcp().ui();
        let rect = ui.placement().expect("the dialog is up").rect;
        let [x, y, w, h] = ui
            .dialog()
            .control_bounds(pcp_overlay::Control::Session)
            .expect("the dialog offers Allow until logout");
        state.inject_click(
            f64::from(rect.x) + x + w / 2.0,
            f64::from(rect.y) + y + h / 2.0,
        );
    }

    fn pump_until(&mut self, mut done: impl FnMut(&mut Setup) -> bool) {
        let start = Instant::now();
        while !done(self) {
            assert!(start.elapsed() < Duration::from_secs(20), "timed out");
            self.compositor
                .dispatch(Some(Duration::from_millis(5)))
                .unwrap();
        }
    }

    fn finish(&mut self, mut child: Child) -> (Output, Value) {
        self.pump_until(|_| matches!(child.try_wait(), Ok(Some(_))));
        let out = child.wait_with_output().unwrap();
        let json = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
        (out, json)
    }
}

#[test]
fn submit_prints_the_decision_and_exits_0_when_approved_1_when_denied() {
    let mut s = setup();
    let child = s.pcpctl(&["submit", "file.write", "--params", r#"{"path":"/tmp/x"}"#]);
    let (out, v) = s.finish(child);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(v["approved"], true);
    assert_eq!(v["resolution"], "policy_allow");
    assert!(v["token"].as_str().unwrap().starts_with("pcp1."));

    let child = s.pcpctl(&["submit", "no.such"]);
    let (out, v) = s.finish(child);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(v["resolution"], "unknown_capability");
    assert!(v["reason"].as_str().unwrap().contains("no.such"));

    // Params over the inline limit go through a sealed memfd, and the token comes back by fd
    // (kept under the 64 KiB pipe buffer: the output is read only once pcpctl has exited).
    let big = format!(r#"{{"path":"/big","content":"{}"}}"#, "y".repeat(20_000));
    let child = s.pcpctl(&["submit", "file.write", "--params", &big]);
    let (out, v) = s.finish(child);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(v["token"].as_str().unwrap().len() > 20_000);
}

#[test]
fn submit_waits_for_the_user_and_the_dialog_names_pcpctl_from_its_credentials() {
    let mut s = setup();
    let child = s.pcpctl(&[
        "submit",
        "settings.change",
        "--params",
        r#"{"key":"a","value":"b"}"#,
        "--target",
        "ignored-when-the-manifest-has-one",
    ]);
    s.pump_until(|s| s.compositor.state.pcp().gate().active().is_some());
    let prompt = s.compositor.state.pcp().gate().active().unwrap();
    let client = prompt.intent.client.clone();
    assert_eq!(
        client.executable.as_deref(),
        Some(env!("CARGO_BIN_EXE_pcpctl")),
        "the executable comes from /proc/PID/exe"
    );
    assert_eq!(client.pid, Some(child.id()));
    assert_eq!(
        prompt.target.as_deref(),
        Some("a"),
        "the manifest's target wins"
    );
    s.press(&[KEY_TAB, KEY_TAB, KEY_ENTER]);
    let (out, v) = s.finish(child);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(v["resolution"], "user_approved");
    assert_eq!(v["threshold"], "visual");
    assert_eq!(v["modalities"], serde_json::json!(["visual"]));

    let child = s.pcpctl(&[
        "submit",
        "settings.change",
        "--params",
        r#"{"key":"c","value":"d"}"#,
    ]);
    s.pump_until(|s| s.compositor.state.pcp().gate().active().is_some());
    s.press(&[KEY_ESC]);
    let (out, v) = s.finish(child);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(v["resolution"], "user_denied");
}

#[test]
fn submit_without_a_compositor_says_so_and_exits_2() {
    let out = Command::new(env!("CARGO_BIN_EXE_pcpctl"))
        .args(["submit", "file.write"])
        .env("WAYLAND_DISPLAY", "/nonexistent/socket")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot connect"), "{err}");
}

/// The dialog's prompt, when one is shown: its capability and the app key it belongs to.
fn shown(s: &mut Setup) -> Option<(String, String)> {
    let prompt = s.compositor.state.pcp().gate().active()?;
    Some((
        prompt.intent.capability.clone(),
        prompt.intent.client.app_key(),
    ))
}

/// Two programs: pcpctl copied under two names, as two agents would be two executables.
fn two_agents(s: &Setup) -> (std::path::PathBuf, std::path::PathBuf) {
    let bin = s.dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let (a, b) = (bin.join("agent-a"), bin.join("agent-b"));
    for copy in [&a, &b] {
        std::fs::copy(env!("CARGO_BIN_EXE_pcpctl"), copy).unwrap();
    }
    (a, b)
}

#[test]
fn allow_until_logout_given_to_one_app_does_not_cover_another_app() {
    let mut s = setup_with("[gate]\nsession_approvals = true\n");
    let (a, b) = two_agents(&s);
    let args = [
        "submit",
        "network.share",
        "--params",
        r#"{"path":"/home/alice/report.pdf","recipient":"bob@example.org"}"#,
    ];
    let child = s.run_as(&a, &args);
    s.pump_until(|s| shown(s).is_some());
    s.click_allow_until_logout();
    let (out, v) = s.finish(child);
    assert_eq!(v["resolution"], "user_approved", "{out:?}");
    // Agent A asks the same again: allowed for the session, no dialog.
    let child = s.run_as(&a, &args);
    let (_, v) = s.finish(child);
    assert_eq!(v["resolution"], "user_approved_for_session", "{v}");
    assert!(v["token"].is_string());

    // Agent B asks the same: the dialog, its own answer.
    let child = s.run_as(&b, &args);
    s.pump_until(|s| shown(s).is_some());
    let (_, app) = shown(&mut s).unwrap();
    assert!(app.ends_with("/bin/agent-b"), "{app}");
    s.press(&[KEY_ESC]);
    let (_, v) = s.finish(child);
    assert_eq!(v["resolution"], "user_denied");
}

#[test]
fn approvals_given_to_one_app_do_not_lower_another_apps_prompt() {
    let mut s = setup();
    // Two programs: pcpctl copied under two names, as two agents would be two executables.
    let bin = s.dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let (a, b) = (bin.join("agent-a"), bin.join("agent-b"));
    for copy in [&a, &b] {
        std::fs::copy(env!("CARGO_BIN_EXE_pcpctl"), copy).unwrap();
    }
    let args = [
        "submit",
        "settings.change",
        "--params",
        r#"{"key":"theme","value":"dark"}"#,
    ];
    // Agent A: `[friction.moderate] implicit_after` (3) identical approvals...
    for _ in 0..3 {
        let child = s.run_as(&a, &args);
        s.pump_until(|s| shown(s).is_some());
        let (_, app) = shown(&mut s).unwrap();
        assert!(app.ends_with("/bin/agent-a"), "{app}");
        s.press(&[KEY_TAB, KEY_TAB, KEY_ENTER]);
        let (out, v) = s.finish(child);
        assert_eq!(v["resolution"], "user_approved", "{out:?}");
    }
    // ...after which A's history stands in for its prompt.
    let child = s.run_as(&a, &args);
    let (_, v) = s.finish(child);
    assert_eq!(v["resolution"], "confirmed_by_history", "{v}");

    // Agent B asks the same: it gets the full prompt, its own history being empty.
    let child = s.run_as(&b, &args);
    s.pump_until(|s| shown(s).is_some());
    let (capability, app) = shown(&mut s).unwrap();
    assert_eq!(capability, "settings.change");
    assert!(app.ends_with("/bin/agent-b"), "{app}");
    s.press(&[KEY_ESC]);
    let (out, v) = s.finish(child);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(v["resolution"], "user_denied");
    assert_eq!(v["threshold"], "visual");
}

#[test]
fn a_lowered_file_delete_in_the_config_still_needs_voice_and_visual_until_approved() {
    let mut s = setup();
    let config = s.dir.path().join("config.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    // A program of the user redeclares file.delete as a read in the config it can write: the
    // shipped folder is dropped, file.delete declared in the file itself.
    let lowered = text
        .lines()
        .map(|l| {
            if l.starts_with("dirs = ") {
                "dirs = []"
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n[[capability]]\nname = \"file.delete\"\nversion = 1\nside_effects = \"read\"\n\
           auth_level = \"user\"\ndescription = \"Delete {path}\"\nparams = [\"path\"]\n";
    std::fs::write(&config, lowered).unwrap();
    s.compositor.state.reload_config();
    let notice = s.compositor.state.notice_text().map(str::to_string);
    let (capability, _) = shown(&mut s)
        .unwrap_or_else(|| panic!("the policy change is asked about (notice: {notice:?})"));
    assert_eq!(capability, pcp_gate::POLICY_CAPABILITY);

    // The user denies it; file.delete is decided by the old policy.
    s.press(&[KEY_ESC]);
    s.pump_until(|s| shown(s).is_none());
    let child = s.pcpctl(&["submit", "file.delete", "--params", r#"{"path":"/home/u"}"#]);
    s.pump_until(|s| shown(s).is_some());
    s.press(&[KEY_ESC]);
    let (out, v) = s.finish(child);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(v["resolution"], "user_denied");
    assert_eq!(v["threshold"], "voice+visual");
    assert!(v["token"].is_null());
}
