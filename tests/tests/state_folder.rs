//! No pcp binary takes over a folder it did not make. The real `pcp-compositor` (headless),
//! `pcp-harness` and `pcpctl`, given a state path in a shared folder (mode 1777 like `/tmp`, or
//! writable by everyone), refuse it with an error naming the folder, and the folder keeps its
//! mode, owner and sticky bit; a folder of another user is refused saying to run as that user.
//! A folder pcp makes is 0700, and the default state folder (`$XDG_STATE_HOME/pcp`) is narrowed.

use std::io::{BufRead, BufReader};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::Value;

/// How long a binary may take to refuse its state path (it does so before it serves anything).
const REFUSE_WITHIN: Duration = Duration::from_secs(60);

struct Binaries {
    compositor: PathBuf,
    pcpctl: PathBuf,
    harness: PathBuf,
}

/// The three binaries as the sources are now, built by the cargo running this test in its own
/// target folder and profile. Two builds: the harness is an example of this package, built with
/// its dev-dependencies' test features, which must not reach the session binaries (and a
/// build that asks for only one of them reports the binary cargo already has).
fn binaries() -> &'static Binaries {
    static BUILT: OnceLock<Binaries> = OnceLock::new();
    BUILT.get_or_init(|| {
        // Built as validators.rs and scripted_user.rs build them, so that the three tests share
        // the artifacts instead of building other feature sets.
        let session = ["-p", "pcpctl", "-p", "pcp-compositor"];
        let session = [
            &session[..],
            &["--bin", "pcpctl", "--bin", "pcp-compositor"],
        ]
        .concat();
        let harness = ["-p", "pcp-tests", "--example", "pcp-harness"];
        Binaries {
            compositor: built(&session, "pcp-compositor"),
            pcpctl: built(&session, "pcpctl"),
            harness: built(&harness, "pcp-harness"),
        }
    })
}

/// `name` as cargo reports it after building `args` in this test's target folder and profile.
fn built(args: &[&str], name: &str) -> PathBuf {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| env!("CARGO").into());
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().and_then(Path::parent).unwrap();
    let mut cmd = Command::new(cargo);
    cmd.arg("build")
        .args(args)
        .arg("--message-format=json-render-diagnostics")
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    if profile_dir.file_name().and_then(|n| n.to_str()) == Some("release") {
        cmd.arg("--release");
    }
    if let Some(target) = profile_dir.parent() {
        cmd.arg("--target-dir").arg(target);
    }
    let out = cmd.stderr(Stdio::inherit()).output().unwrap();
    assert!(out.status.success(), "{cmd:?} failed: see above");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == name)
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
        .unwrap_or_else(|| panic!("{cmd:?} reported no {name} executable"))
}

/// Mode (with the sticky bit), owner and group of `path`.
fn stat(path: &Path) -> (u32, u32, u32) {
    let meta = std::fs::metadata(path).unwrap();
    (meta.permissions().mode() & 0o7777, meta.uid(), meta.gid())
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Runs `cmd` until it exits or [`REFUSE_WITHIN`] passes (then it is killed: it did not
/// refuse): its exit code (`None` when killed) and stderr.
fn run(cmd: &mut Command) -> (Option<i32>, String) {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            text.push_str(&line);
            text.push('\n');
        }
        text
    });
    let start = Instant::now();
    let code = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status.code();
        }
        if start.elapsed() > REFUSE_WITHIN {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    (code, reader.join().unwrap())
}

/// A config for the compositor: no manifests, no voice, the state at `state` (if given).
fn config(dir: &Path, state: Option<&Path>) -> PathBuf {
    let mut text = "[manifests]\ndirs = []\n[overlay]\nsystem_fonts = false\n[speech]\n\
                    enabled = false\n"
        .to_string();
    if let Some(state) = state {
        text.push_str(&format!("[state]\npath = {state:?}\n"));
    }
    let path = dir.join("config.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// The three binaries, each pointed at `state`: what each said (name, exit code, stderr).
fn each_binary(dir: &Path, state: &Path) -> Vec<(&'static str, Option<i32>, String)> {
    let b = binaries();
    let runtime = tempfile::tempdir().unwrap();
    let compositor = run(Command::new(&b.compositor)
        .args(["--backend", "headless", "--config"])
        .arg(config(dir, Some(state)))
        .env("XDG_RUNTIME_DIR", runtime.path()));
    let harness = run(Command::new(&b.harness).arg("--state").arg(state));
    let pcpctl = run(Command::new(&b.pcpctl)
        .args(["audit", "--state"])
        .arg(state));
    vec![
        ("pcp-compositor", compositor.0, compositor.1),
        ("pcp-harness", harness.0, harness.1),
        ("pcpctl audit", pcpctl.0, pcpctl.1),
    ]
}

#[test]
fn a_state_path_in_a_shared_folder_is_refused_by_every_binary_and_the_folder_is_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let shared = dir.path().join("scratch");
    std::fs::create_dir(&shared).unwrap();
    let mut wrong = Vec::new();
    for bits in [0o1777, 0o777] {
        chmod(&shared, bits);
        let before = stat(&shared);
        // A database already there (empty: a new one to SQLite), so that `pcpctl audit`, which
        // reads an existing store, gets as far as its folder.
        let state = shared.join("state.sqlite3");
        std::fs::write(&state, "").unwrap();
        chmod(&state, 0o600);
        for (binary, code, stderr) in each_binary(dir.path(), &state) {
            let named = format!(
                "{}: it is a shared folder (mode {bits:04o}",
                shared.display()
            );
            if code != Some(2) || !stderr.contains(&named) {
                wrong.push(format!(
                    "{binary} in a {bits:04o} folder: exit {code:?}: {stderr}"
                ));
            }
            if stderr.contains("panicked") {
                wrong.push(format!("{binary}: {stderr}"));
            }
            if stat(&shared) != before {
                wrong.push(format!(
                    "{binary} changed the {bits:04o} folder: now {:04o}",
                    stat(&shared).0
                ));
                chmod(&shared, bits);
            }
        }
        let left: Vec<_> = std::fs::read_dir(&shared)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        if left != [std::ffi::OsString::from("state.sqlite3")] {
            wrong.push(format!("files made in the {bits:04o} folder: {left:?}"));
        }
        std::fs::remove_file(&state).unwrap();
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn a_state_folder_of_another_user_is_refused_saying_to_run_as_that_user() {
    let dir = tempfile::tempdir().unwrap();
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if root {
        // Root is refused another user's folder as anyone is: the state is that user's.
        let theirs = dir.path().join("theirs");
        std::fs::create_dir(&theirs).unwrap();
        let state = theirs.join("state.sqlite3");
        std::fs::write(&state, "").unwrap();
        std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
        std::os::unix::fs::chown(&state, Some(65534), Some(65534)).unwrap();
        let before = stat(&theirs);
        let (code, stderr) = run(Command::new(&binaries().pcpctl)
            .args(["audit", "--state"])
            .arg(&state));
        assert_eq!(code, Some(2), "{stderr}");
        assert!(
            stderr.contains(&format!("{}: it is owned by", theirs.display()))
                && stderr.contains("uid 65534")
                && stderr.contains("Run this as"),
            "{stderr}"
        );
        assert_eq!(stat(&theirs), before);
    } else {
        // Not root: `/` is someone else's (root's).
        let state = Path::new("/pcp-test-state.sqlite3");
        let runtime = tempfile::tempdir().unwrap();
        let (code, stderr) = run(Command::new(&binaries().compositor)
            .args(["--backend", "headless", "--config"])
            .arg(config(dir.path(), Some(state)))
            .env("XDG_RUNTIME_DIR", runtime.path()));
        assert_eq!(code, Some(2), "{stderr}");
        assert!(
            stderr.contains("/: it is owned by root (uid 0)")
                && stderr.contains("Run this as root"),
            "{stderr}"
        );
    }
}

#[test]
fn a_folder_pcp_makes_is_0700_and_the_default_state_folder_is_narrowed() {
    let dir = tempfile::tempdir().unwrap();
    // A folder pcp makes, several levels deep: `pcp-harness` ends when the command after `--`
    // does.
    let made = dir.path().join("new/deeper");
    let (code, stderr) = run(Command::new(&binaries().harness)
        .arg("--state")
        .arg(made.join("state.sqlite3"))
        .args(["--", "true"]));
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stat(&made).0, 0o700);
    assert_eq!(stat(&dir.path().join("new")).0, 0o700);

    // The default folder under the user's own state home, left wide by hand: pcp's own, so
    // narrowed. The compositor runs until it listens, then is stopped.
    let home = dir.path().join("state-home");
    let default = home.join("pcp");
    std::fs::create_dir_all(&default).unwrap();
    chmod(&default, 0o755);
    let runtime = tempfile::tempdir().unwrap();
    let mut child = Command::new(&binaries().compositor)
        .args(["--backend", "headless", "--config"])
        .arg(config(dir.path(), None))
        .env("XDG_RUNTIME_DIR", runtime.path())
        .env("XDG_STATE_HOME", &home)
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut log = String::new();
    for line in BufReader::new(child.stderr.take().unwrap())
        .lines()
        .map_while(Result::ok)
    {
        log.push_str(&line);
        log.push('\n');
        if line.contains("listening on") {
            break;
        }
    }
    // SAFETY: a signal to our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let _ = child.wait();
    assert!(log.contains("listening on"), "{log}");
    assert_eq!(stat(&default).0, 0o700, "{log}");
    assert!(default.join("state.sqlite3").is_file());
}
