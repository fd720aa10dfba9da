//! The compositor as the session's polkit agent, end to end: Debian's real polkitd, PAM and
//! `polkit-agent-helper-1` on a private system bus (the world of `polkit/tests/polkitd`), an
//! ordinary test user's shell as the subject, and `pcp-harness` — the headless compositor with
//! `[polkit] enabled = true`, played by a scripted user who types into the dialog's entry and
//! clicks — running as that user as its agent. Each case fails on a compositor without the
//! agent (pkcheck then exits 2, and no polkit prompt is audited); the first case shows it.
//!
//! Needs root (a private mount namespace, test users, its own bus and polkitd): without it the
//! test FAILS and says why; `PCP_POLKIT_TEST_SKIP=1` (never set by CI) skips it. One binary,
//! three roles (`PCP_POLKIT_ROLE`): none → build `pcp-harness` and re-run inside `unshare
//! --mount`; `inside` → build the world and play the cases (cases.rs; `PCP_POLKIT_CASE=TEXT`
//! plays only those whose name holds TEXT); `forge` → call the compositor's agent as a process
//! that is not polkitd (forge.rs).

// The crate's own test world; some of it (stopping polkitd) only that test uses.
#[allow(dead_code)]
#[path = "../../../polkit/tests/polkitd/world.rs"]
mod world;

// Debian's pkttyagent, driven as the crate's own bench drives it.
#[path = "../../../polkit/tests/polkitd/tty_agent.rs"]
mod tty_agent;

mod bench;
mod cases;
mod forge;
mod run;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

const ROLE: &str = "PCP_POLKIT_ROLE";
const HARNESS: &str = "PCP_HARNESS";
const COMPOSITOR: &str = "PCP_COMPOSITOR";

fn main() {
    let code = match std::env::var(ROLE).unwrap_or_default().as_str() {
        "inside" => inside(),
        "forge" => forge::run(),
        _ => outer(),
    };
    std::process::exit(code);
}

fn outer() -> i32 {
    if std::env::var("PCP_POLKIT_TEST_SKIP").as_deref() == Ok("1") {
        eprintln!("polkit agent test SKIPPED: PCP_POLKIT_TEST_SKIP=1");
        return 0;
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!(
            "polkit agent test FAILED: it needs root (a private mount namespace, test users, its \
             own system bus and polkitd). Run it as root, or set PCP_POLKIT_TEST_SKIP=1."
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
        "/usr/bin/pkexec",
        world::POLKITD,
        "/usr/lib/polkit-1/polkit-agent-helper-1",
        "/usr/bin/swaylock",
        "/usr/bin/pkill",
    ];
    let missing: Vec<&str> = needed
        .into_iter()
        .filter(|p| !Path::new(p).exists())
        .collect();
    if !missing.is_empty() {
        eprintln!(
            "polkit agent test FAILED: missing {missing:?}; `cargo xtask setup` installs them"
        );
        return 1;
    }
    let built = build(
        &["-p", "pcp-tests", "--example", "pcp-harness"],
        "pcp-harness",
    )
    .and_then(|harness| {
        // As validators.rs builds it, so that both share the artifacts.
        let session = [
            "-p",
            "pcpctl",
            "-p",
            "pcp-compositor",
            "--bin",
            "pcpctl",
            "--bin",
            "pcp-compositor",
        ];
        build(&session, "pcp-compositor").map(|compositor| (harness, compositor))
    });
    let (harness, compositor) = match built {
        Ok(p) => p,
        Err(e) => {
            eprintln!("polkit agent test FAILED: {e}");
            return 1;
        }
    };
    let Ok(exe) = std::env::current_exe() else {
        eprintln!("polkit agent test FAILED: cannot find its own executable");
        return 1;
    };
    match Command::new("unshare")
        .arg("--mount")
        .arg(exe)
        .env(ROLE, "inside")
        .env(HARNESS, &harness)
        .env(COMPOSITOR, &compositor)
        .status()
    {
        Ok(s) if s.success() => 0,
        Ok(s) => {
            eprintln!("polkit agent test FAILED ({s})");
            1
        }
        Err(e) => {
            eprintln!("polkit agent test FAILED: cannot run unshare --mount: {e}");
            1
        }
    }
}

/// `name` (`args` say which package and target) as the sources are now, built by the cargo
/// running this test, in its target folder and profile (as `scripted_user.rs` does). The harness
/// and the compositor are built apart: the harness's test features must not reach the
/// compositor.
fn build(args: &[&str], name: &str) -> Result<PathBuf, String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| env!("CARGO").into());
    let mut cmd = Command::new(cargo);
    cmd.arg("build")
        .args(args)
        .arg("--message-format=json-render-diagnostics")
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .ok_or("no profile folder")?;
    match profile_dir.file_name().and_then(|n| n.to_str()) {
        Some("debug") | None => {}
        Some("release") => {
            cmd.arg("--release");
        }
        Some(other) => {
            cmd.args(["--profile", other]);
        }
    }
    if let Some(target) = profile_dir.parent() {
        cmd.arg("--target-dir").arg(target);
    }
    let out = cmd
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !out.status.success() {
        return Err(format!("{cmd:?} failed ({})", out.status));
    }
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == name)
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
        .ok_or_else(|| format!("{cmd:?} reported no {name} executable"))
}

fn inside() -> i32 {
    let world = match world::World::build() {
        Ok(w) => w,
        Err(e) => {
            eprintln!("polkit agent test FAILED: cannot set up polkitd's world: {e}");
            return 1;
        }
    };
    let tools = match run::Tools::install(&world) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("polkit agent test FAILED: {e}");
            return 1;
        }
    };
    let mut failed = Vec::new();
    // For working on one case: only the cases whose name holds this text run.
    let only = std::env::var("PCP_POLKIT_CASE").unwrap_or_default();
    for case in cases::all().into_iter().filter(|c| c.name.contains(&only)) {
        let started = std::time::Instant::now();
        match case.run(&world, &tools) {
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
    let rounds: usize = std::env::var("PCP_POLKIT_BENCH")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    if rounds > 0
        && let Err(e) = bench::run(&world, &tools, rounds)
    {
        println!("FAIL bench: {e}");
        failed.push("bench");
    }
    if failed.is_empty() {
        println!("polkit agent test: all cases passed");
        return 0;
    }
    println!(
        "polkit agent test: {} failed: {failed:?}\npolkitd's log:\n{}",
        failed.len(),
        world.polkitd_log()
    );
    1
}
