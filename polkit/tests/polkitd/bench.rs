//! `PCP_POLKIT_BENCH=N` (after the cases): `pkcheck --allow-user-interaction`'s wall time with
//! the password typed at once, N rounds each, with our agent and with Debian's `pkttyagent`
//! (given a terminal by `script`, fed the password as soon as it prints its prompt). A
//! measurement to compare, not a timed test: it never fails on the numbers.

use std::time::{Duration, Instant};

use crate::tty_agent::start_pkttyagent;
use crate::world::{USER, World};
use crate::{channel_pair, finish, go, passwords, spawn_as, wait_for};

const SUBJECT: &str = r#"echo "pid $$"; read go
pkcheck --action-id org.pcp.test.self --process $$ --allow-user-interaction >/dev/null 2>&1
echo "rc $?""#;

pub fn run(world: &World, rounds: usize) -> Result<(), String> {
    let mut ours = Vec::new();
    let mut tty = Vec::new();
    for _ in 0..rounds {
        ours.push(once(world, false)?);
        tty.push(once(world, true)?);
    }
    println!(
        "bench: pkcheck wall time, password typed at once, {rounds} rounds: pcp-polkit median \
         {:.1} ms (min {:.1}), pkttyagent median {:.1} ms (min {:.1})",
        median(&mut ours),
        min(&ours),
        median(&mut tty),
        min(&tty)
    );
    Ok(())
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

fn min(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::INFINITY, f64::min)
}

/// One pkcheck answered by our agent or by pkttyagent; its wall time in ms.
fn once(world: &World, pkttyagent: bool) -> Result<f64, String> {
    let (tx, rx) = channel_pair();
    let mut log = Vec::new();
    let (subject, mut subject_in) = spawn_as(USER, &["sh", "-c", SUBJECT], &[], "subject", &tx)?;
    let secs = Duration::from_secs;
    let pid = wait_for(&rx, &mut log, "subject", secs(10), |l| {
        l.starts_with("pid ")
    })?;
    let pid = pid.trim_start_matches("pid ").to_string();
    let mut agent = None;
    let mut tty = None;
    if pkttyagent {
        tty = Some(start_pkttyagent(&pid)?);
        // pkttyagent says nothing when it has registered.
        std::thread::sleep(Duration::from_millis(2500));
    } else {
        let exe = world.exe.to_string_lossy().into_owned();
        let env = [
            ("PCP_POLKIT_ROLE", "agent".to_string()),
            ("PCP_SUBJECT_PID", pid),
            ("PCP_MODE", "password".to_string()),
            ("PCP_PASSWORDS", passwords()),
        ];
        agent = Some(spawn_as(USER, &[exe.as_str()], &env, "agent", &tx)?);
        wait_for(&rx, &mut log, "agent", secs(15), |l| l.starts_with("READY"))?;
    }
    let started = Instant::now();
    go(&mut subject_in)?;
    let rc = wait_for(&rx, &mut log, "subject", secs(30), |l| l.starts_with("rc "))?;
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    finish(subject, subject_in, secs(2));
    if let Some((child, stdin)) = agent {
        finish(child, stdin, secs(10));
    }
    if let Some(mut child) = tty {
        let _ = child.kill();
        let _ = child.wait();
    }
    if rc != "rc 0" {
        let who = if pkttyagent {
            "pkttyagent"
        } else {
            "our agent"
        };
        return Err(format!(
            "with {who}, pkcheck gave {rc}; seen:\n  {}",
            log.join("\n  ")
        ));
    }
    Ok(ms)
}
