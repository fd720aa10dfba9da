//! The agent against Debian's real polkitd, PAM and `polkit-agent-helper-1`, on a private system
//! bus. Needs root (CI runs as root) and `unshare`: without them it FAILS with the reason. Only
//! `PCP_POLKIT_TEST_SKIP=1`, which CI never sets, skips it. Packages: `cargo xtask setup`.
//!
//! One binary, several roles (env `PCP_POLKIT_ROLE`): none → check and re-run itself inside
//! `unshare --mount`; `inside` → build the world (world.rs) and play the cases;
//! `agent` and `forge` → run as the test users (roles.rs). Each case starts a
//! subject shell as `pcptest` that runs `pkcheck --allow-user-interaction` on itself, and our
//! agent (as `pcptest`, registered for that shell) with a scripted front end.

mod bench;
mod cases;
mod owner;
mod roles;
mod tty_agent;
mod world;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::time::{Duration, Instant};

use world::{ADMIN, ADMIN_PW, USER, USER_PW, World};

const ROLE: &str = "PCP_POLKIT_ROLE";

fn main() {
    let code = match std::env::var(ROLE).unwrap_or_default().as_str() {
        "inside" => inside(),
        "agent" => roles::agent(),
        "forge" => roles::forge(),
        "owner" => owner::run(),
        _ => outer(),
    };
    std::process::exit(code);
}

/// Checks that the test can run here, then runs it in a private mount namespace.
fn outer() -> i32 {
    if std::env::var("PCP_POLKIT_TEST_SKIP").as_deref() == Ok("1") {
        eprintln!("polkitd test SKIPPED: PCP_POLKIT_TEST_SKIP=1");
        return 0;
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!(
            "polkitd test FAILED: it needs root (a private mount namespace, test users, its own \
             system bus and polkitd). Run it as root, or set PCP_POLKIT_TEST_SKIP=1 to skip it."
        );
        return 1;
    }
    let needed = [
        "/usr/bin/unshare",
        "/usr/bin/setpriv",
        "/usr/sbin/useradd",
        "/usr/sbin/chpasswd",
        "/usr/bin/dbus-daemon",
        "/usr/bin/pkcheck",
        world::POLKITD,
        "/usr/lib/polkit-1/polkit-agent-helper-1",
    ];
    let missing: Vec<&str> = needed
        .into_iter()
        .filter(|p| !Path::new(p).exists())
        .collect();
    if !missing.is_empty() {
        eprintln!("polkitd test FAILED: missing {missing:?}; `cargo xtask setup` installs them");
        return 1;
    }
    let Ok(exe) = std::env::current_exe() else {
        eprintln!("polkitd test FAILED: cannot find its own executable");
        return 1;
    };
    match Command::new("unshare")
        .arg("--mount")
        .arg(exe)
        .env(ROLE, "inside")
        .status()
    {
        Ok(s) if s.success() => 0,
        Ok(s) => {
            eprintln!("polkitd test FAILED ({s})");
            1
        }
        Err(e) => {
            eprintln!("polkitd test FAILED: cannot run unshare --mount: {e}");
            1
        }
    }
}

fn inside() -> i32 {
    let world = match World::build() {
        Ok(w) => w,
        Err(e) => {
            eprintln!("polkitd test FAILED: cannot set up polkitd's world: {e}");
            return 1;
        }
    };
    let mut failed = Vec::new();
    // Before the cases: the last of them stops polkitd.
    let rounds: usize = std::env::var("PCP_POLKIT_BENCH")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    if rounds > 0
        && let Err(e) = bench::run(&world, rounds)
    {
        println!("FAIL bench: {e}");
        failed.push("bench");
    }
    for case in cases::all() {
        let started = Instant::now();
        match case.run(&world) {
            Ok(()) => println!(
                "ok   {} ({:.1} s)",
                case.name,
                started.elapsed().as_secs_f32()
            ),
            Err(e) => {
                println!("FAIL {}: {e}", case.name);
                failed.push(case.name);
            }
        }
    }
    if failed.is_empty() {
        println!("polkitd test: all cases passed");
        return 0;
    }
    println!(
        "polkitd test: {} failed: {failed:?}\npolkitd's log:\n{}",
        failed.len(),
        world.polkitd_log()
    );
    1
}

/// A line from one of a case's processes.
struct Line {
    from: &'static str,
    text: String,
}

/// Starts `args` as `user` (setpriv), stdin piped, stdout lines sent to `lines` tagged `from`.
fn spawn_as(
    user: &str,
    args: &[&str],
    env: &[(&str, String)],
    from: &'static str,
    lines: &Sender<Line>,
) -> Result<(Child, ChildStdin), String> {
    let ids = [format!("--reuid={user}"), format!("--regid={user}")];
    let mut child = Command::new("setpriv")
        .args(&ids)
        .arg("--init-groups")
        .args(args)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {from}: {e}"))?;
    let stdin = child.stdin.take().ok_or("no stdin")?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let tx = lines.clone();
    std::thread::spawn(move || {
        for text in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(Line { from, text }).is_err() {
                break;
            }
        }
    });
    Ok((child, stdin))
}

/// Waits for a line from `from` matching `want`, keeping every line seen in `log`.
fn wait_for(
    lines: &Receiver<Line>,
    log: &mut Vec<String>,
    from: &str,
    timeout: Duration,
    want: impl Fn(&str) -> bool,
) -> Result<String, String> {
    let deadline = Instant::now() + timeout;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = lines.recv_timeout(left).map_err(|_| {
            format!(
                "no {from} line as expected within {timeout:?}; seen:\n  {}",
                log.join("\n  ")
            )
        })?;
        log.push(format!("{}: {}", line.from, line.text));
        if line.from == from && want(&line.text) {
            return Ok(line.text);
        }
    }
}

/// The `rc ACTION CODE` lines of a subject, by action.
fn exit_codes(log: &[String]) -> HashMap<String, i32> {
    log.iter()
        .filter_map(|l| l.strip_prefix("subject: rc "))
        .filter_map(|l| l.split_once(' '))
        .filter_map(|(a, c)| Some((a.to_owned(), c.parse().ok()?)))
        .collect()
}

/// Ends a process politely (stdin closed), then for sure.
fn finish(mut child: Child, stdin: ChildStdin, timeout: Duration) {
    drop(stdin);
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
}

fn go(stdin: &mut ChildStdin) -> Result<(), String> {
    writeln!(stdin, "go").map_err(|e| format!("cannot start the subject: {e}"))
}

fn passwords() -> String {
    format!("{USER}={USER_PW};{ADMIN}={ADMIN_PW}")
}

fn channel_pair() -> (Sender<Line>, Receiver<Line>) {
    channel()
}
