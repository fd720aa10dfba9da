//! The processes of one case, all as the test user: the subject shell (which runs `pkcheck` or
//! `pkexec` on itself) and `pcp-harness` as its polkit agent; their lines, tagged, on one
//! channel.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::time::{Duration, Instant};

use crate::world::{USER, World};

/// The harness the test user runs: the build's own, in place. It was built by root, and runs as
/// the test user with no environment variable (no `LD_LIBRARY_PATH`): its rpath finds the
/// recognizers' libraries beside it in the build folder, never in root's setup cache, which that user cannot enter.
pub struct Tools {
    harness: PathBuf,
}

impl Tools {
    pub fn install(_world: &World) -> Result<Tools, String> {
        let harness =
            PathBuf::from(std::env::var_os(crate::HARNESS).ok_or("PCP_HARNESS is not set")?);
        // Every folder above it must let the test user in: the build folder is the project's,
        // not a private one.
        for folder in harness.ancestors().skip(1) {
            let mode = std::fs::metadata(folder)
                .map_err(|e| format!("{}: {e}", folder.display()))?
                .permissions()
                .mode();
            if mode & 0o001 == 0 {
                return Err(format!(
                    "{} (mode {:04o}) does not let other users in, so the test user cannot run \
                     {}: build in a folder others may enter (CARGO_TARGET_DIR)",
                    folder.display(),
                    mode & 0o7777,
                    harness.display()
                ));
            }
        }
        // The compositor links libvosk and libmoonshine the same way: both start as the test user.
        let compositor =
            PathBuf::from(std::env::var_os(crate::COMPOSITOR).ok_or("PCP_COMPOSITOR is not set")?);
        for binary in [&harness, &compositor] {
            let out = Command::new("setpriv")
                .args([format!("--reuid={USER}"), format!("--regid={USER}")])
                .arg("--init-groups")
                .arg(binary)
                .arg("--help")
                .env_clear()
                .output()
                .map_err(|e| format!("cannot run setpriv: {e}"))?;
            if !out.status.success() {
                return Err(format!(
                    "{}, built by root, does not run as {USER} with no environment ({}): {}",
                    binary.display(),
                    out.status,
                    String::from_utf8_lossy(&out.stderr).trim()
                ));
            }
        }
        Ok(Tools { harness })
    }
}

pub fn chmod(path: &Path, mode: u32) -> Result<(), String> {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .map_err(|e| format!("cannot chmod {}: {e}", path.display()))
}

/// A line from one of a case's processes.
pub struct Line {
    pub from: &'static str,
    pub text: String,
}

/// Starts `args` as the test user with `env`, stdin piped, stdout lines sent tagged `from`.
pub fn spawn_as_user(
    args: &[&str],
    env: &[(&str, String)],
    from: &'static str,
    lines: &Sender<Line>,
) -> Result<(Child, ChildStdin), String> {
    spawn_as(USER, args, env, from, lines)
}

/// [`spawn_as_user`] as `user`.
pub fn spawn_as(
    user: &str,
    args: &[&str],
    env: &[(&str, String)],
    from: &'static str,
    lines: &Sender<Line>,
) -> Result<(Child, ChildStdin), String> {
    let mut child = Command::new("setpriv")
        .args([format!("--reuid={user}"), format!("--regid={user}")])
        .arg("--init-groups")
        .args(args)
        .env_clear()
        .env("PATH", "/usr/bin:/bin:/usr/sbin:/sbin")
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {from}: {e}"))?;
    let stdin = child.stdin.take().ok_or("no stdin")?;
    for (pipe, tag) in [
        (
            child
                .stdout
                .take()
                .map(|o| Box::new(o) as Box<dyn std::io::Read + Send>),
            from,
        ),
        (
            child
                .stderr
                .take()
                .map(|e| Box::new(e) as Box<dyn std::io::Read + Send>),
            "stderr",
        ),
    ] {
        let Some(pipe) = pipe else { continue };
        let tx = lines.clone();
        let tag: &'static str = if tag == "stderr" {
            stderr_tag(from)
        } else {
            tag
        };
        std::thread::spawn(move || {
            for text in BufReader::new(pipe).lines().map_while(Result::ok) {
                let tag = if tag == "harness-log" && text.starts_with("pcp-harness: ") {
                    "harness"
                } else {
                    tag
                };
                if tx.send(Line { from: tag, text }).is_err() {
                    break;
                }
            }
        });
    }
    Ok((child, stdin))
}

/// The harness's stderr is its logs and its errors: an error line (it says `pcp-harness:`)
/// is passed on as its own, so a harness that cannot start is reported at once.
fn stderr_tag(from: &str) -> &'static str {
    match from {
        "harness" => "harness-log",
        _ => "subject-stderr",
    }
}

/// The lines of one case, and every line seen so far.
pub struct Lines {
    pub tx: Sender<Line>,
    rx: Receiver<Line>,
    pub log: Vec<String>,
}

impl Lines {
    pub fn new() -> Lines {
        let (tx, rx) = channel();
        Lines {
            tx,
            rx,
            log: Vec::new(),
        }
    }

    /// Waits for a line from `from` matching `want`.
    pub fn wait_for(
        &mut self,
        from: &str,
        timeout: Duration,
        want: impl Fn(&str) -> bool,
    ) -> Result<String, String> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self.rx.recv_timeout(left).map_err(|_| {
                format!(
                    "no {from} line as expected within {timeout:?}; seen:\n  {}",
                    self.log.join("\n  ")
                )
            })?;
            self.log.push(format!("{}: {}", line.from, line.text));
            if line.from == from && want(&line.text) {
                return Ok(line.text);
            }
        }
    }

    /// Takes what arrived without waiting.
    pub fn drain(&mut self) {
        while let Ok(line) = self.rx.try_recv() {
            self.log.push(format!("{}: {}", line.from, line.text));
        }
    }
}

/// `pcp-harness` as the test user's compositor, with a scripted user and `[polkit]` config.
pub struct Harness {
    child: Child,
    _stdin: ChildStdin,
    /// Its `ready` line: where its clients connect (`wayland_display`, `xdg_runtime_dir`).
    pub ready: serde_json::Value,
}

impl Harness {
    /// Writes the script and the config into `dir` and starts the harness; returns once it
    /// said it is ready (and whether its polkit agent registered).
    pub fn start(
        tools: &Tools,
        dir: &Path,
        script: &str,
        config: &str,
        lines: &mut Lines,
    ) -> Result<(Harness, Option<String>), String> {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        chmod(dir, 0o755)?;
        let user = dir.join("user.toml");
        let extra = dir.join("extra.toml");
        // The harness, as the test user, writes its captures here.
        let captures = dir.join("captures");
        std::fs::create_dir_all(&captures).map_err(|e| format!("{}: {e}", captures.display()))?;
        chmod(&captures, 0o777)?;
        for (path, text) in [(&user, script), (&extra, config)] {
            std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))?;
            chmod(path, 0o644)?;
        }
        let (child, stdin) = spawn_as_user(
            &[
                &tools.harness.to_string_lossy(),
                "--user",
                &user.to_string_lossy(),
                "--config",
                &extra.to_string_lossy(),
                "--capture",
                &captures.to_string_lossy(),
            ],
            &[("RUST_LOG", "info".into()), ("HOME", "/tmp".into())],
            "harness",
            &lines.tx,
        )?;
        let ready = lines.wait_for("harness", Duration::from_secs(60), |l| {
            l.contains("\"event\":\"ready\"") || !l.starts_with('{')
        })?;
        if !ready.starts_with('{') {
            return Err(format!("pcp-harness did not start: {ready}"));
        }
        let ready: serde_json::Value =
            serde_json::from_str(&ready).map_err(|e| format!("the ready line: {e}"))?;
        let agent = ready["polkit_bus_name"].as_str().map(str::to_string);
        Ok((
            Harness {
                child,
                _stdin: stdin,
                ready,
            },
            agent,
        ))
    }

    /// Stops the harness (SIGTERM: it commits its audit log and prints the last decisions).
    pub fn stop(mut self) {
        let pid = self.child.id() as libc::pid_t;
        // SAFETY: kill has no memory preconditions; the harness is our unreaped child (setpriv
        // execs it, so the pid is the harness's own).
        unsafe { libc::kill(pid, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The subject: prints its pid, waits for `go`; with PKEXEC=1 runs `pkexec id -u` in the
/// foreground (pkexec's subject is its parent: this shell); then one pkcheck per action in
/// $ACTIONS on itself at once, each pid and exit code printed.
const SUBJECT: &str = r#"echo "pid $$"; read go; pids=""
if [ "$PKEXEC" = 1 ]; then
  out=$(mktemp) || echo "mktemp failed"
  pkexec --disable-internal-agent /usr/bin/id -u >"$out" 2>/dev/null
  echo "rc pkexec $?"; echo "out pkexec $(cat "$out")"; rm -f "$out"
fi
for a in $ACTIONS; do
  pkcheck --action-id "$a" --process $$ --allow-user-interaction >/dev/null 2>&1 &
  echo "pk $a $!"; pids="$pids $a:$!"
done
for p in $pids; do wait "${p#*:}"; echo "rc ${p%%:*} $?"; done; echo done"#;

/// The subject shell, started and waiting for `go`; returns it and its pid.
pub fn subject(
    actions: &str,
    pkexec: bool,
    lines: &mut Lines,
) -> Result<(Child, ChildStdin, u32), String> {
    let (child, stdin) = spawn_as_user(
        &["/bin/sh", "-c", SUBJECT],
        &[
            ("ACTIONS", actions.to_string()),
            ("PKEXEC", if pkexec { "1" } else { "0" }.to_string()),
        ],
        "subject",
        &lines.tx,
    )?;
    let pid = lines.wait_for("subject", Duration::from_secs(10), |l| {
        l.starts_with("pid ")
    })?;
    let pid = pid[4..]
        .trim()
        .parse()
        .map_err(|e| format!("subject pid {pid:?}: {e}"))?;
    Ok((child, stdin, pid))
}

pub fn go(stdin: &mut ChildStdin) -> Result<(), String> {
    writeln!(stdin, "go").map_err(|e| format!("cannot start the subject: {e}"))
}

/// Ends a process: stdin closed, then killed if it is still there.
pub fn finish(mut child: Child, stdin: ChildStdin) {
    drop(stdin);
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
}
