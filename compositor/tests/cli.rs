//! `pcp-compositor` as a user runs it: `validate`, bad flags, a missing runtime folder.

mod common;

use std::process::Command;

use serde_json::json;

fn run(args: &[&str], runtime: Option<&std::path::Path>) -> std::process::Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pcp-compositor"));
    c.args(args).env_remove("XDG_RUNTIME_DIR");
    if let Some(r) = runtime {
        c.env("XDG_RUNTIME_DIR", r);
    }
    c.output().unwrap()
}

#[test]
fn validate_accepts_the_shipped_sections_and_names_a_bad_one() {
    let dir = tempfile::tempdir().unwrap();
    let assets = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets");
    let mut text = format!(
        "[manifests]\ndirs = [{:?}]\n",
        assets.join("capabilities.d")
    );
    text += &std::fs::read_to_string(assets.join("config/compositor.toml")).unwrap();
    let good = dir.path().join("good.toml");
    std::fs::write(&good, &text).unwrap();
    let o = run(&["validate", "--config", good.to_str().unwrap()], None);
    assert!(o.status.success(), "{o:?}");
    assert!(String::from_utf8_lossy(&o.stdout).contains("ok ("));

    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "[compositor]\noutputs = [\"1920x\"]\n").unwrap();
    let o = run(&["validate", "--config", bad.to_str().unwrap()], None);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("bad.toml") && err.contains("1920x"), "{err}");
}

#[test]
fn validate_checks_the_whole_shipped_default_config_and_the_device_sections() {
    let dir = tempfile::tempdir().unwrap();
    let assets = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets/config");
    // The shipped default config is the sections' files together, as docs/configuration.md says.
    let mut names: Vec<_> = std::fs::read_dir(&assets)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    names.sort();
    let all: String = names
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap() + "\n")
        .collect();
    let whole = dir.path().join("config.toml");
    std::fs::write(&whole, &all).unwrap();
    let o = run(&["validate", "--config", whole.to_str().unwrap()], None);
    assert!(o.status.success(), "{o:?}");

    let cases = [
        (
            "speech.toml",
            "[speech]\ntimeout_ms = \"ten\"\n",
            "speech.toml:2:",
        ),
        (
            "speech-range.toml",
            "[speech]\nquiet_dbfs = 3.0\n",
            "quiet_dbfs",
        ),
        (
            "haptics.toml",
            "[haptics]\nno_such_key = 1\n",
            "no_such_key",
        ),
    ];
    for (name, text, expect) in cases {
        let bad = dir.path().join(name);
        std::fs::write(&bad, text).unwrap();
        let o = run(&["validate", "--config", bad.to_str().unwrap()], None);
        assert_eq!(o.status.code(), Some(1), "{name}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(expect) && err.contains(name), "{name}: {err}");
    }
}

#[test]
fn bad_flags_and_a_missing_runtime_folder_are_clear_errors() {
    let o = run(&["--output", "10x10"], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("64 to 16384"));

    let o = run(&["--output", "800x600"], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("XDG_RUNTIME_DIR"));

    // Without the `winit` feature the backend is refused by name; with it, a nested window
    // needs a host display, and having none is an error, not a panic.
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[manifests]\ndirs = []\n[state]\npath = {:?}\n[overlay]\nsystem_fonts = false\n",
            dir.path().join("state.sqlite3")
        ),
    )
    .unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_pcp-compositor"))
        .args([
            "--backend",
            "winit",
            "--socket",
            "pcp-winit-none",
            "--config",
        ])
        .arg(&config)
        .env("XDG_RUNTIME_DIR", dir.path())
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("WAYLAND_SOCKET")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    if cfg!(feature = "winit") {
        assert!(err.contains("cannot start the compositor"), "{err}");
        assert!(!err.contains("panicked"), "{err}");
    } else {
        assert!(err.contains("built without the `winit` feature"), "{err}");
    }
}

/// Waits up to 20 s for `cond`.
fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let start = std::time::Instant::now();
    while !cond() {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(20),
            "timed out waiting for {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn the_headless_binary_serves_real_clients_and_captures_pngs() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .unwrap();
    let assets = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets");
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[manifests]\ndirs = [{:?}]\n[state]\npath = {:?}\n[overlay]\nsystem_fonts = false\n\
             [audit]\ngroup_commit_records = 1000\ngroup_commit_ms = 3600000\n",
            assets.join("capabilities.d"),
            dir.path().join("state.sqlite3")
        ),
    )
    .unwrap();
    let captures = dir.path().join("captures");
    let mut compositor = Command::new(env!("CARGO_BIN_EXE_pcp-compositor"))
        .args(["--output", "640x480@0,0", "--output", "320x240*2@640,0"])
        .args(["--socket", "pcp-test", "--capture-interval-ms", "100"])
        .arg("--config")
        .arg(&config)
        .arg("--capture-dir")
        .arg(&captures)
        .env("XDG_RUNTIME_DIR", dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_for("the socket", || dir.path().join("pcp-test").exists());
    let client = |program: &str| {
        let mut c = Command::new(program);
        c.env("XDG_RUNTIME_DIR", dir.path())
            .env("WAYLAND_DISPLAY", "pcp-test");
        c
    };

    let info = client("wayland-info").output().unwrap();
    let text = String::from_utf8_lossy(&info.stdout);
    assert!(text.contains("'pcp_intent_manager_v1'"), "{text}");
    assert_eq!(text.matches("'wl_output'").count(), 2);

    let routine = common::submit(dir.path(), "pcp-test", "file.write", json!({"path": "/a"}));
    assert!(routine.approved, "{routine:?}");
    // Headless has no seat devices: nobody can answer, so a privileged write is denied.
    let privileged = common::submit(
        dir.path(),
        "pcp-test",
        "settings.change",
        json!({"key": "a", "value": "b"}),
    );
    assert!(!privileged.approved, "{privileged:?}");
    assert_eq!(privileged.resolution, "confirmation_unavailable");

    let mut shm = client("weston-simple-shm")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let png = captures.join("HEADLESS-1.png");
    wait_for("weston-simple-shm's pixels in the capture", || {
        let Ok(file) = std::fs::File::open(&png) else {
            return false;
        };
        let Ok(mut reader) = png::Decoder::new(std::io::BufReader::new(file)).read_info() else {
            return false;
        };
        let mut buf = vec![0; reader.output_buffer_size()];
        let Ok(info) = reader.next_frame(&mut buf) else {
            return false;
        };
        let at = ((125 * info.width + 125) * 4) as usize;
        // The background is #202028; simple-shm draws bright colours there.
        info.width == 640 && buf[at..at + 3] != [0x20, 0x20, 0x28]
    });
    // Each round writes HEADLESS-1.png then HEADLESS-2.png: the second may still be coming.
    wait_for("the second output's capture", || {
        captures.join("HEADLESS-2.png").exists()
    });
    let _ = shm.kill();
    let _ = shm.wait();

    // A display manager ends the session with SIGTERM: the routine record still batched (the
    // group commit above waits an hour) is written before the compositor exits.
    // SAFETY: kill(2) on our own child's pid.
    assert_eq!(
        unsafe { libc::kill(compositor.id() as libc::pid_t, libc::SIGTERM) },
        0
    );
    let status = compositor.wait().unwrap();
    assert!(status.success(), "{status:?}");
    let store = pcp_gate::store::Store::open_read_only(&dir.path().join("state.sqlite3")).unwrap();
    let audit = store.audit_since(0).unwrap();
    assert!(
        audit
            .iter()
            .any(|r| r.capability == "file.write"
                && r.resolution == pcp_gate::Resolution::PolicyAllow),
        "{audit:?}"
    );
}

#[test]
fn without_a_config_file_it_starts_on_the_built_in_defaults() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .unwrap();
    // No $XDG_CONFIG_HOME/pcp/config.toml; the state goes to a private $XDG_STATE_HOME.
    let config_home = dir.path().join("config");
    let mut compositor = Command::new(env!("CARGO_BIN_EXE_pcp-compositor"))
        .args(["--backend", "auto", "--socket", "pcp-defaults"])
        .env("XDG_RUNTIME_DIR", dir.path())
        .env("XDG_CONFIG_HOME", &config_home)
        .env("XDG_STATE_HOME", dir.path().join("state"))
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("DISPLAY")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let socket = dir.path().join("pcp-defaults");
    let start = std::time::Instant::now();
    while !socket.exists() {
        if let Ok(Some(status)) = compositor.try_wait() {
            let mut err = String::new();
            std::io::Read::read_to_string(compositor.stderr.as_mut().unwrap(), &mut err).unwrap();
            panic!("exited {status:?} before listening: {err}");
        }
        assert!(
            start.elapsed() < std::time::Duration::from_secs(20),
            "no socket"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // SAFETY: kill(2) on our own child's pid.
    assert_eq!(
        unsafe { libc::kill(compositor.id() as libc::pid_t, libc::SIGTERM) },
        0
    );
    let out = compositor.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    // `--backend auto` here (no display server, no VT): headless, and it says why.
    assert!(err.contains("backend Headless"), "{err}");
    // Its log went into a pipe, as into a log file or the journal: no colour escape codes.
    assert!(
        !err.contains('\u{1b}'),
        "escape codes in a piped log: {err:?}"
    );
}

#[test]
fn a_group_writable_config_or_a_world_readable_key_stops_the_start_by_name() {
    use std::os::unix::fs::PermissionsExt;
    let chmod = |p: &std::path::Path, mode: u32| {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap()
    };
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[manifests]\ndirs = []\n[state]\npath = {:?}\n[overlay]\nsystem_fonts = false\n",
            state.join("state.sqlite3")
        ),
    )
    .unwrap();
    let start = || {
        Command::new(env!("CARGO_BIN_EXE_pcp-compositor"))
            .args(["--socket", "pcp-refused", "--config"])
            .arg(&config)
            .env("XDG_RUNTIME_DIR", dir.path())
            .output()
            .unwrap()
    };

    chmod(&config, 0o664);
    let o = start();
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!("{}: mode 0664", config.display())),
        "{err}"
    );
    assert!(
        !dir.path().join("pcp-refused").exists(),
        "no socket was made"
    );

    // A good config makes the state (key included); then the key is made world-readable.
    chmod(&config, 0o644);
    std::fs::create_dir(&state).unwrap();
    let key = state.join("token.key");
    std::fs::write(&key, [7u8; 32]).unwrap();
    chmod(&key, 0o644);
    let o = start();
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!("{}: mode 0644", key.display())),
        "{err}"
    );
    assert!(!dir.path().join("pcp-refused").exists());

    // The same files made private start (voice off: no model to load; stopped once listening).
    chmod(&key, 0o600);
    let text = std::fs::read_to_string(&config).unwrap() + "[speech]\nenabled = false\n";
    std::fs::write(&config, text).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_pcp-compositor"))
        .args(["--socket", "pcp-private", "--config"])
        .arg(&config)
        .env("XDG_RUNTIME_DIR", dir.path())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_for("the socket", || dir.path().join("pcp-private").exists());
    // SAFETY: signalling our own child by its pid.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    assert!(child.wait().unwrap().success());
}
