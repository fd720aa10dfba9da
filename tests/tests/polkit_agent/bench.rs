//! `PCP_POLKIT_BENCH=N` (after the cases): one `pkcheck --allow-user-interaction` at a time, N
//! rounds each, answered by the compositor as the session's agent (`pcp-harness`, its scripted
//! user typing the password and approving as soon as the dialog lets it) and by Debian's
//! `pkttyagent` (fed the password the moment it asks). Reports pkcheck's wall time for both and,
//! for the compositor, from pkcheck's start to the dialog shown (the harness's `prompt` event:
//! the prompt is up and its first frame is due at the next vblank). A measurement to compare,
//! not a timed test: it never fails on the numbers. The compositor's figure includes the
//! dialog's click guard (`[overlay] click_guard_ms`): nobody can approve sooner.

use std::time::{Duration, Instant};

use crate::run::{Harness, Lines, Tools, finish, go, subject};
use crate::tty_agent::start_pkttyagent;
use crate::world::{USER_PW, World};

const ACTION: &str = "org.pcp.test.self";

pub fn run(world: &World, tools: &Tools, rounds: usize) -> Result<(), String> {
    let (mut ours, mut shown, mut tty) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        let (wall, prompt) = with_compositor(world, tools)?;
        ours.push(wall);
        shown.push(prompt);
        tty.push(with_pkttyagent()?);
    }
    println!(
        "bench: pkcheck answered at once, {rounds} rounds: the compositor's agent median {:.0} ms \
         (min {:.0}; pkcheck's start to the dialog shown median {:.0} ms, min {:.0}), \
         pkttyagent median {:.0} ms (min {:.0})",
        median(&mut ours),
        min(&ours),
        median(&mut shown),
        min(&shown),
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

fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1000.0
}

/// One request answered by the compositor: pkcheck's wall time and its start to the dialog.
fn with_compositor(world: &World, tools: &Tools) -> Result<(f64, f64), String> {
    let mut lines = Lines::new();
    let (child, mut stdin, pid) = subject(ACTION, false, &mut lines)?;
    let script = format!(
        "[[answer]]\ncapability = \"polkit.*\"\ndo = [\"type\", \"approve\"]\ndelay_ms = 0\n\
         type = {USER_PW:?}\n"
    );
    let config = format!("[polkit]\nenabled = true\nsubject = \"unix-process:{pid}\"\n");
    let dir = world.dir.join(format!("bench-{pid}"));
    let (harness, _) = match Harness::start(tools, &dir, &script, &config, &mut lines) {
        Ok(h) => h,
        Err(e) => {
            finish(child, stdin);
            return Err(e);
        }
    };
    let measured = (|| {
        go(&mut stdin)?;
        lines.wait_for("subject", Duration::from_secs(10), |l| l.starts_with("pk "))?;
        let started = Instant::now();
        lines.wait_for("harness", Duration::from_secs(30), |l| {
            l.contains("\"event\":\"prompt\"")
        })?;
        let prompt = ms(started);
        let rc = lines.wait_for("subject", Duration::from_secs(30), |l| l.starts_with("rc "))?;
        let wall = ms(started);
        if rc != format!("rc {ACTION} 0") {
            return Err(format!("with the compositor's agent pkcheck gave {rc:?}"));
        }
        Ok((wall, prompt))
    })();
    harness.stop();
    finish(child, stdin);
    measured
}

/// One request answered by Debian's pkttyagent: pkcheck's wall time.
fn with_pkttyagent() -> Result<f64, String> {
    let mut lines = Lines::new();
    let (child, mut stdin, pid) = subject(ACTION, false, &mut lines)?;
    let mut agent = match start_pkttyagent(&pid.to_string()) {
        Ok(a) => a,
        Err(e) => {
            finish(child, stdin);
            return Err(e);
        }
    };
    // pkttyagent says nothing when it has registered.
    std::thread::sleep(Duration::from_millis(2500));
    let measured = (|| {
        go(&mut stdin)?;
        lines.wait_for("subject", Duration::from_secs(10), |l| l.starts_with("pk "))?;
        let started = Instant::now();
        let rc = lines.wait_for("subject", Duration::from_secs(30), |l| l.starts_with("rc "))?;
        let wall = ms(started);
        if rc != format!("rc {ACTION} 0") {
            return Err(format!("with pkttyagent pkcheck gave {rc:?}"));
        }
        Ok(wall)
    })();
    let _ = agent.kill();
    let _ = agent.wait();
    finish(child, stdin);
    measured
}
