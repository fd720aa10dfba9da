//! The scripted session: its steps in order, each timed, with a screendump of every head, and the
//! summary table. A step that goes otherwise is recorded and the session goes on (later steps
//! still say what they can); the verdict lists every such step.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::Args;
use crate::host::Host;
use crate::session::{READ, Session, uptime};

/// One step's outcome for the summary.
struct Step {
    name: &'static str,
    expected: &'static str,
    /// The resolution, or why the step failed.
    got: String,
    ok: bool,
    /// Submission to decision, seconds.
    decision: Option<f64>,
    /// The whole step, seconds.
    wall: f64,
    notes: Vec<String>,
}

/// What a step function reports on success.
#[derive(Default)]
struct Done {
    resolution: String,
    decision: Option<f64>,
    notes: Vec<String>,
}

/// Plays the session; returns the steps that went otherwise.
pub fn play(args: &Args, host: &mut Host) -> Result<Vec<String>> {
    let began = Instant::now();
    let mut s = Session::start(args, host)?;
    let mut steps: Vec<Step> = Vec::new();
    let mut run = |s: &mut Session<'_>,
                   name: &'static str,
                   expected: &'static str,
                   f: &mut dyn FnMut(&mut Session<'_>) -> Result<Done>| {
        s.host.log(&format!("step: {name} (at {:.1} s)", uptime()));
        let start = Instant::now();
        if let Some(why) = s.compositor_exited() {
            steps.push(Step {
                name,
                expected,
                ok: false,
                got: why,
                decision: None,
                wall: 0.0,
                notes: Vec::new(),
            });
            return;
        }
        let step = match f(s) {
            Ok(done) => Step {
                name,
                expected,
                ok: done.resolution == expected,
                got: done.resolution,
                decision: done.decision,
                wall: start.elapsed().as_secs_f64(),
                notes: done.notes,
            },
            Err(e) => Step {
                name,
                expected,
                ok: false,
                got: format!("{e:#}"),
                decision: None,
                wall: start.elapsed().as_secs_f64(),
                notes: Vec::new(),
            },
        };
        s.host.log(&format!(
            "  {} in {:.1} s: {}",
            if step.ok { "ok" } else { "WENT OTHERWISE" },
            step.wall,
            step.got
        ));
        steps.push(step);
    };

    run(&mut s, "both heads lit, devices counted", "lit", &mut lit);
    run(&mut s, "real apps map windows", "mapped", &mut apps);
    run(
        &mut s,
        "privileged: touch tap on Approve",
        "user_approved",
        &mut privileged,
    );
    run(
        &mut s,
        "destructive: spoken approval + tap",
        "user_approved",
        &mut voice,
    );
    run(
        &mut s,
        "admin: pkexec through polkit, spoken approval + password typed + tap",
        "user_approved",
        &mut admin,
    );
    run(
        &mut s,
        "haptic: double tap after the cue",
        "user_approved",
        &mut haptic,
    );
    run(
        &mut s,
        "haptic device unplugged mid-prompt",
        "user_approved",
        &mut haptic_unplugged,
    );
    run(
        &mut s,
        "display unplugged under its dialog",
        "user_approved",
        &mut display_unplugged,
    );
    run(
        &mut s,
        "VT switch away and back",
        "user_approved",
        &mut vt_switch,
    );
    run(
        &mut s,
        "display's preferred mode changed",
        "user_approved",
        &mut mode_changed,
    );
    let ended = s.end();

    let mut table = String::new();
    let _ = writeln!(
        table,
        "session-test in the VM (TCG): {:.0} s of guest driver, kernel up {:.0} s\n{}\n",
        began.elapsed().as_secs_f64(),
        uptime(),
        s.started_as
    );
    let _ = writeln!(
        table,
        "{:<2} {:<38} {:<14} {:>10} {:>7}  result",
        "#", "step", "expected", "decision", "step"
    );
    for (i, st) in steps.iter().enumerate() {
        let _ = writeln!(
            table,
            "{:<2} {:<38} {:<14} {:>10} {:>6.1}s  {}{}",
            i + 1,
            st.name,
            st.expected,
            st.decision
                .map_or_else(|| "-".into(), |d| format!("{d:.2}s")),
            st.wall,
            if st.ok { "ok: " } else { "WENT OTHERWISE: " },
            st.got
        );
        for n in &st.notes {
            let _ = writeln!(table, "     · {n}");
        }
    }
    for n in &ended {
        let _ = writeln!(table, "end: {n}");
    }
    std::fs::write(s.out.join("summary.txt"), &table).context("cannot write summary.txt")?;
    Ok(steps
        .iter()
        .filter(|st| !st.ok)
        .map(|st| format!("{}: {}", st.name, st.got))
        .collect())
}

fn lit(s: &mut Session<'_>) -> Result<Done> {
    if s.outputs.len() != 2 {
        bail!(
            "{} output(s) lit, expected 2: {:?}",
            s.outputs.len(),
            s.outputs
        );
    }
    let mut notes: Vec<String> = s
        .outputs
        .iter()
        .map(|o| format!("{} at {:?}", o.name, o.rect))
        .collect();
    // The devices libinput announced, and no "nobody can answer" from the seat.
    for device in ["pcp-vm touch screen", "pcp-vm mouse"] {
        s.log.wait(
            0,
            &format!("input device {device}"),
            Duration::from_secs(120),
        )?;
    }
    notes.extend(s.log.find(0, "input device "));
    // The speech model loads in the background from the start, taking most of one emulated CPU
    // for minutes: the session waits for it here, so the prompts below are timed on a guest
    // that is not also loading it (and the voice step finds it loaded; no deadline is relaxed).
    let (_, loaded) = s
        .log
        .wait(0, "speech model ready", Duration::from_secs(600))?;
    notes.push(format!(
        "speech model ready{}",
        loaded
            .split_once("speech model ready")
            .map_or("", |(_, r)| r)
    ));
    // Drawn at least once on each head (vblank seen) before the picture.
    std::thread::sleep(Duration::from_secs(2));
    s.shot("lit")?;
    Ok(Done {
        resolution: "lit".into(),
        decision: None,
        notes,
    })
}

fn apps(s: &mut Session<'_>) -> Result<Done> {
    s.start_app("weston-simple-shm", "weston-simple-shm", &[])?;
    s.start_app("foot", "foot", &[])?;
    s.start_app("gtk3-demo", "gtk3-demo", &[])?;
    // No client says when it has mapped: give them time on the emulated CPU, then look.
    std::thread::sleep(Duration::from_secs(20));
    s.shot("apps")?;
    let exited = s.exited_apps();
    if !exited.is_empty() {
        bail!("{}", exited.join("; "));
    }
    Ok(Done {
        resolution: "mapped".into(),
        decision: None,
        notes: Vec::new(),
    })
}

/// Submits, waits for the dialog on the first output, touches Approve after reading.
fn touch_prompt(s: &mut Session<'_>, capability: &str, params: &str, name: &str) -> Result<Done> {
    let mark = s.log.mark();
    let mut submitted = s.submit(capability, params)?;
    let (_, dialog) = s.prompt(mark, &mut submitted)?;
    let shown = submitted.started.elapsed().as_secs_f64();
    std::thread::sleep(READ);
    s.shot(&format!("{name}-prompt"))?;
    let (d, touches) = s.approve(&dialog, submitted, "user_approved")?;
    s.shot(&format!("{name}-decided"))?;
    Ok(Done {
        resolution: d.resolution,
        decision: Some(d.seconds),
        notes: vec![format!(
            "dialog on {} {shown:.2} s after submission; modalities {:?}; {touches} touch(es)",
            dialog.output, d.modalities
        )],
    })
}

fn privileged(s: &mut Session<'_>) -> Result<Done> {
    let second = s.outputs.get(1).context("no second output")?.name.clone();
    let params =
        format!(r#"{{"window": "org.freedesktop.weston.simple-shm", "output": "{second}"}}"#);
    touch_prompt(s, "window.move", &params, "privileged")
}

fn voice(s: &mut Session<'_>) -> Result<Done> {
    // The model was loaded before the first step (never a longer deadline for the emulated
    // CPU).
    let mut notes = Vec::new();
    let clip = s.out.join("answer-yes.wav");
    let player = crate::audio::Player::open(crate::audio::SPEAKER, &clip)?;
    let mark = s.log.mark();
    let mut submitted = s.submit("file.delete", r#"{"path": "/home/user/report.pdf"}"#)?;
    let (_, dialog) = s.prompt(mark, &mut submitted)?;
    notes.push(speak_answer(s, player, mark, submitted.started, "voice")?);
    std::thread::sleep(READ);
    s.shot("voice-heard")?;
    let (d, touches) = s.approve(&dialog, submitted, "user_approved")?;
    notes.push(format!(
        "modalities {:?}; {touches} touch(es)",
        d.modalities
    ));
    Ok(Done {
        resolution: d.resolution,
        decision: Some(d.seconds),
        notes,
    })
}

/// Plays the recorded answer into the microphone once it is open (after log line `mark`) and
/// waits until the compositor heard it; `since` is when the prompt was asked for, `name` names
/// the picture taken while the answer plays. Returns a note on the timings.
fn speak_answer(
    s: &mut Session<'_>,
    player: crate::audio::Player,
    mark: usize,
    since: Instant,
    name: &str,
) -> Result<String> {
    // The voice worker's own line, written as the capture starts: the event loop's
    // "listening for a spoken answer" can come seconds later on the emulated CPU.
    s.log
        .wait(mark, "microphone open", Duration::from_secs(30))?;
    let listening = since.elapsed().as_secs_f64();
    // The answer is played at once. The dialog was placed before the microphone opened, but
    // on the emulated CPU its frame reaches the display about a second later: the picture is
    // taken then, while the clip plays and is recognized.
    let played = Instant::now();
    let player = std::thread::spawn(move || {
        crate::session::set_thread_nice(crate::procs::USER_NICE);
        player.play()
    });
    std::thread::sleep(Duration::from_secs(1));
    // The loopback's own view while the answer plays: which substreams are open, by whom,
    // and whether each cable carries sound, for a person reading why an answer went unheard.
    crate::audio::write_loopback_state(&s.out.join(format!("loopback-during-{name}.txt")));
    s.shot(&format!("{name}-listening"))?;
    let length = player
        .join()
        .map_err(|_| anyhow::anyhow!("the thread playing the answer panicked"))??;
    let (_, heard) = s
        .log
        .wait(mark, "voice answer heard", Duration::from_secs(20))
        .with_context(|| {
            // What the recognizer made of the clip, and when: a wrong reading and a late one
            // need different mending.
            let recognizer: Vec<String> = [
                "utterance judged",
                "listening ended",
                "pcp_plugin::ui::voice",
            ]
            .iter()
            .flat_map(|needle| s.log.find(mark, needle))
            .collect();
            format!(
                "the spoken answer was not heard (listening {listening:.2} s after submission; \
                 the {length:.1} s clip began playing then); the compositor logged: {}",
                if recognizer.is_empty() {
                    "nothing of the recognizer".to_string()
                } else {
                    recognizer.join(" | ")
                }
            )
        })?;
    Ok(format!(
        "listening {listening:.2} s after the request; the {length:.1} s clip heard {:.2} s after \
         it began playing: {}",
        played.elapsed().as_secs_f64(),
        heard
            .split_once("voice answer heard")
            .map_or("", |(_, r)| r.trim())
    ))
}

/// What the shell that ran `pkexec` printed, once it has ended.
fn pkexec_ended(s: &mut Session<'_>) -> Result<Option<String>> {
    match &mut s.polkit {
        Ok(polkit) => polkit.finished(),
        Err(e) => bail!("polkitd did not start in the guest: {e}"),
    }
}

/// The capability of `pkexec`'s polkit action.
const PKEXEC: &str = "polkit.org.freedesktop.policykit.exec";

/// An admin action through the session's polkit agent: the user's shell runs `pkexec
/// --disable-internal-agent id -u`. Its dialog (system: voice + visual) hears the recorded "yes";
/// a tap on the dialog gives its password entry the keyboard (never the dialog's appearing);
/// the password is typed on the guest's virtio keyboard and Enter sends it to PAM; once PAM
/// accepted it, a tap on Approve lets `pkexec` run as root, and it prints 0.
fn admin(s: &mut Session<'_>) -> Result<Done> {
    if let Err(e) = &s.polkit {
        bail!("polkitd did not start in the guest: {e}");
    }
    let mut notes = Vec::new();
    let clip = s.out.join("answer-yes.wav");
    let player = crate::audio::Player::open(crate::audio::SPEAKER, &clip)?;
    let mark = s.log.mark();
    let started = Instant::now();
    if let Ok(polkit) = &s.polkit {
        polkit.run_pkexec()?;
    }
    let (_, dialog) = s
        .dialog_after(mark, Duration::from_secs(60))
        .context("pkexec's request brought no dialog")?;
    notes.push(format!(
        "dialog on {} {:.2} s after pkexec started",
        dialog.output,
        started.elapsed().as_secs_f64()
    ));
    notes.push(speak_answer(s, player, mark, started, "admin")?);
    s.log
        .wait(mark, "PAM asks", Duration::from_secs(60))
        .context("PAM never asked for the password")?;
    // The dialog's header, away from its buttons: the explicit act the entry needs.
    let (x, y, _, _) = dialog.rect;
    s.touch_point(&dialog, (x + 60.0, y + 24.0))?;
    std::thread::sleep(Duration::from_millis(500));
    for c in crate::polkit::PASSWORD.chars() {
        s.host.ask(&format!("keys {c}"))?;
    }
    // The emulated CPU draws the dots about a second after the keys.
    std::thread::sleep(READ);
    s.shot("admin-typed")?;
    s.host.ask("keys ret")?;
    s.log
        .wait(mark, "PAM accepted the password", Duration::from_secs(90))
        .context("PAM did not accept the typed password")?;
    std::thread::sleep(READ);
    s.shot("admin-accepted")?;
    // A touch too early for the click guard is ignored, as a person's would be: up to four.
    let (mut printed, mut touches) = (None, 0);
    while printed.is_none() && touches < 4 {
        s.touch_approve(&dialog)?;
        touches += 1;
        let touched = Instant::now();
        while printed.is_none() && touched.elapsed() < Duration::from_secs(6) {
            printed = pkexec_ended(s)?;
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    let printed = printed.context("pkexec had not ended 6 s after the fourth touch on Approve")?;
    let decided = started.elapsed().as_secs_f64();
    s.shot("admin-decided")?;
    let record = s.audited_record(PKEXEC)?;
    let lines: Vec<&str> = printed.lines().collect();
    if lines != ["0", "exit 0"] {
        bail!(
            "pkexec printed {printed:?}, not its uid 0 and exit 0; audited {}",
            record["resolution"]
        );
    }
    notes.push(format!(
        "pkexec printed uid 0; {touches} touch(es) on Approve; modalities {}",
        record["modality_results"]
    ));
    Ok(Done {
        resolution: record["resolution"].as_str().unwrap_or("?").to_string(),
        decision: Some(decided),
        notes,
    })
}

/// Waits until the force-feedback device has played more than `before` effects.
fn wait_cue(s: &Session<'_>, before: usize) -> Result<()> {
    let rumble = s.rumble.as_ref().context("no force-feedback device")?;
    let start = Instant::now();
    while rumble.counts().1 <= before {
        if start.elapsed() > Duration::from_secs(30) {
            bail!("the compositor played no cue on the force-feedback device");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}

fn ff_lines(s: &Session<'_>, from: usize) -> Vec<String> {
    s.rumble.as_ref().map_or_else(Vec::new, |r| {
        let r = r.record.lock().unwrap_or_else(|e| e.into_inner());
        r.lines
            .iter()
            .skip(from)
            .map(|l| format!("ff: {}", l.trim()))
            .collect()
    })
}

fn haptic(s: &mut Session<'_>) -> Result<Done> {
    let (before, seen) = {
        let r = s.rumble.as_ref().context("no force-feedback device")?;
        let lines = r
            .record
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .lines
            .len();
        (r.counts().1, lines)
    };
    let mark = s.log.mark();
    let mut submitted = s.submit(
        "settings.change",
        r#"{"key": "display.brightness", "value": "70"}"#,
    )?;
    s.prompt(mark, &mut submitted)?;
    wait_cue(s, before)?;
    let cued = submitted.started.elapsed().as_secs_f64();
    // The cue is two 70 ms pulses 110 ms apart: tap after it.
    std::thread::sleep(Duration::from_millis(600));
    s.shot("haptic-cue")?;
    // A double tap away from the dialog's buttons: 60 ms contacts, 150 ms apart.
    let size = s.outputs.first().context("no output")?.rect;
    let spot = (f64::from(size.2) * 0.15, f64::from(size.3) * 0.85);
    s.touch
        .tap(spot, (size.2, size.3), Duration::from_millis(60))?;
    std::thread::sleep(Duration::from_millis(150));
    s.touch
        .tap(spot, (size.2, size.3), Duration::from_millis(60))?;
    let d = s.decided(submitted, "user_approved")?;
    let mut notes = vec![format!(
        "cue played {cued:.2} s after submission; modalities {:?}",
        d.modalities
    )];
    if d.modalities != ["haptic"] {
        bail!(
            "approved through {:?}, expected the double tap alone",
            d.modalities
        );
    }
    notes.extend(ff_lines(s, seen));
    s.shot("haptic-decided")?;
    Ok(Done {
        resolution: d.resolution,
        decision: Some(d.seconds),
        notes,
    })
}

fn haptic_unplugged(s: &mut Session<'_>) -> Result<Done> {
    let before = s
        .rumble
        .as_ref()
        .context("no force-feedback device")?
        .counts()
        .1;
    let mark = s.log.mark();
    let mut submitted = s.submit(
        "settings.change",
        r#"{"key": "display.brightness", "value": "40"}"#,
    )?;
    s.prompt(mark, &mut submitted)?;
    wait_cue(s, before)?;
    s.shot("haptic-before-unplug")?;
    let unplugged = Instant::now();
    s.rumble = None;
    let (i, _) = s.log.wait(
        mark,
        "haptic device went away mid-prompt",
        Duration::from_secs(15),
    )?;
    let noticed = unplugged.elapsed().as_secs_f64();
    let (_, dialog) = s.dialog_after(i, Duration::from_secs(15))?;
    std::thread::sleep(READ);
    s.shot("haptic-unplugged-visual")?;
    let (d, touches) = s.approve(&dialog, submitted, "user_approved")?;
    // `pcpctl submit` prints the plan the app was told when the prompt began; the audit record
    // says which modality really answered.
    let audited = s.audited_results("settings.change")?;
    let mut resolution = d.resolution;
    if audited != ["haptic lost", "visual approve"] {
        resolution = format!("{resolution}, audited as {audited:?}");
    }
    Ok(Done {
        resolution,
        decision: Some(d.seconds),
        notes: vec![format!(
            "the unplug was noticed {noticed:.2} s later; {touches} touch(es); the app was told \
             {:?}; audited {audited:?}",
            d.modalities
        )],
    })
}

fn display_unplugged(s: &mut Session<'_>) -> Result<Done> {
    let first = s.outputs.first().context("no output")?.name.clone();
    let second = s.outputs.get(1).context("no second output")?.name.clone();
    // The pointer (the focal point) goes to the second head, far right.
    s.mouse.move_by(4000, 0, 40)?;
    let mark = s.log.mark();
    let params =
        format!(r#"{{"window": "org.freedesktop.weston.simple-shm", "output": "{first}"}}"#);
    let mut submitted = s.submit("window.move", &params)?;
    let (i, dialog) = s.prompt(mark, &mut submitted)?;
    if dialog.output != second {
        bail!(
            "the dialog opened on {}, not on the second head {second}",
            dialog.output
        );
    }
    std::thread::sleep(READ);
    s.shot("dialog-on-second-head")?;
    let asked = Instant::now();
    if let Err(e) = s.host.ask("unplug gpu1") {
        // What the guest's kernel is blocked on (in dmesg.log at the end), for a person
        // reading why the device was not let go.
        let _ = std::fs::write("/proc/sysrq-trigger", "w");
        return Err(e);
    }
    let unplugged = asked.elapsed().as_secs_f64();
    // What the guest's kernel did with the card, for a person reading the run.
    crate::kernel_state::watch(
        s.out.join("unplug-kernel.log"),
        "0000:01:00.0",
        &[3, 10, 30, 60],
    );
    let (j, _) = s.log.wait(
        i,
        &format!("output {second} (index 1) removed"),
        Duration::from_secs(30),
    )?;
    let (_, moved) = s.dialog_after(j, Duration::from_secs(15))?;
    let moved_after = asked.elapsed().as_secs_f64();
    if moved.output != first {
        bail!("the dialog moved to {}, expected {first}", moved.output);
    }
    std::thread::sleep(READ);
    s.shot("dialog-moved")?;
    let (d, touches) = match s.approve(&moved, submitted, "user_approved") {
        Ok(done) => done,
        Err(e) => {
            s.backtrace("dialog-moved");
            return Err(e);
        }
    };
    let mut notes = vec![format!(
        "QEMU unplugged the GPU in {unplugged:.2} s; the dialog was on {first} {moved_after:.2} s \
         after the request; {touches} touch(es)"
    )];
    // A card is plugged in: its display is lit, right of the others. It goes into the second
    // root port: QEMU 7.2 does not report the unplugged card deleted (see `unplug-kernel.log`
    // for the guest's side: the PCI device removed, the slot powered off), and its slot stays
    // taken until it does.
    let deleted = s.host.ask("deleted gpu1")?;
    notes.push(format!(
        "QEMU reported the unplugged card deleted by now: {deleted}"
    ));
    let mark = s.log.mark();
    let asked = Instant::now();
    s.host.ask("plug gpu2")?;
    s.log.wait(mark, " added at ", Duration::from_secs(60))?;
    let lit = s.newly_lit(mark);
    notes.push(format!(
        "a card plugged in: lit {:?} after {:.2} s",
        lit.iter().map(|l| (&l.name, l.rect)).collect::<Vec<_>>(),
        asked.elapsed().as_secs_f64()
    ));
    if lit.is_empty() {
        bail!("the card plugged in was not lit");
    }
    // The later steps know the second head by what it is now.
    if let (Some(now), Some(slot)) = (lit.first(), s.outputs.get_mut(1)) {
        *slot = now.clone();
    }
    std::thread::sleep(Duration::from_secs(2));
    s.shot("gpu-plugged-in")?;
    Ok(Done {
        resolution: d.resolution,
        decision: Some(d.seconds),
        notes,
    })
}

fn vt_switch(s: &mut Session<'_>) -> Result<Done> {
    let mark = s.log.mark();
    let asked = Instant::now();
    s.host.ask("keys ctrl alt f2")?;
    s.log
        .wait(mark, "session paused", Duration::from_secs(30))?;
    let away = asked.elapsed().as_secs_f64();
    std::thread::sleep(Duration::from_secs(1));
    s.shot("vt2")?;
    let asked = Instant::now();
    s.host.ask("keys ctrl alt f1")?;
    s.log
        .wait(mark, "session active again", Duration::from_secs(30))?;
    let back = asked.elapsed().as_secs_f64();
    std::thread::sleep(Duration::from_secs(2));
    s.shot("vt1-back")?;
    // Input works after the return: a new prompt answered by touch. It moves the window back
    // to the first head (the privileged step moved it to the second), which is there whatever
    // the display-unplug step left of the second.
    let first = s.outputs.first().context("no output")?.name.clone();
    // The pointer back on the first head, where the touch screen is.
    s.mouse.move_by(-8000, 0, 40)?;
    let params =
        format!(r#"{{"window": "org.freedesktop.weston.simple-shm", "output": "{first}"}}"#);
    let mut done = touch_prompt(s, "window.move", &params, "after-vt")?;
    done.notes.insert(
        0,
        format!("paused {away:.2} s after Ctrl+Alt+F2; active again {back:.2} s after Ctrl+Alt+F1"),
    );
    Ok(done)
}

/// The first head's new preferred size (QEMU's VNC desktop-size request to its virtio-gpu).
const NEW_MODE: (i32, i32) = (1024, 768);

/// The first display, still connected, now prefers another mode: it is lit again at that mode,
/// the second head moves to its new right edge, and a prompt on it is placed inside its new size
/// and answered by touch.
fn mode_changed(s: &mut Session<'_>) -> Result<Done> {
    let first = s.outputs.first().context("no output")?.name.clone();
    let mark = s.log.mark();
    let asked = Instant::now();
    s.host
        .ask(&format!("resize {}x{}", NEW_MODE.0, NEW_MODE.1))?;
    let (_, line) = s.log.wait(
        mark,
        "the display's preferred mode changed",
        Duration::from_secs(60),
    )?;
    let relit = asked.elapsed().as_secs_f64();
    let expected = format!(
        "output {first}: the display's preferred mode changed: {}x{}@",
        NEW_MODE.0, NEW_MODE.1
    );
    if !line.contains(&expected) {
        bail!("expected `{expected}…`, the compositor logged {line:?}");
    }
    if let Some(o) = s.outputs.first_mut() {
        o.rect.2 = NEW_MODE.0;
        o.rect.3 = NEW_MODE.1;
    }
    let mut notes = vec![format!(
        "{first} lit again at {}x{} {relit:.2} s after the request",
        NEW_MODE.0, NEW_MODE.1
    )];
    std::thread::sleep(Duration::from_secs(2));
    s.shot("mode-changed")?;
    // The second head (plugged in again by the unplug step, if it was) closes up to the new
    // right edge.
    let second = s.outputs.get(1).context("no second output")?.name.clone();
    let lit = s
        .log
        .find(0, &format!("output {second}"))
        .last()
        .is_some_and(|l| !l.contains(") removed"));
    if lit {
        let moved = s
            .log
            .wait(
                mark,
                &format!("output {second} moved to {},0", NEW_MODE.0),
                Duration::from_secs(10),
            )
            .is_ok();
        notes.push(format!("{second} moved to {},0: {moved}", NEW_MODE.0));
        if !moved {
            let said = s.log.find(mark, " output ");
            bail!("{second} did not move to the new right edge; the log says {said:?}");
        }
    } else {
        notes.push(format!("{second} is not lit: nothing beside it to move"));
    }
    // A prompt on the resized display (the pointer is on it since the VT step): placed inside
    // its new size and answered by a touch there.
    let mark = s.log.mark();
    let params =
        format!(r#"{{"window": "org.freedesktop.weston.simple-shm", "output": "{first}"}}"#);
    let mut submitted = s.submit("window.move", &params)?;
    let (_, dialog) = s.prompt(mark, &mut submitted)?;
    let (x, y) = dialog.approve;
    if dialog.output != first
        || !(0.0..f64::from(NEW_MODE.0)).contains(&x)
        || !(0.0..f64::from(NEW_MODE.1)).contains(&y)
    {
        bail!(
            "the dialog is on {} with Approve at {x},{y}, not inside {first}'s {}x{}",
            dialog.output,
            NEW_MODE.0,
            NEW_MODE.1
        );
    }
    std::thread::sleep(crate::session::READ);
    s.shot("mode-changed-prompt")?;
    let (d, touches) = s.approve(&dialog, submitted, "user_approved")?;
    notes.push(format!(
        "the dialog's Approve at {x:.0},{y:.0}; {touches} touch(es)"
    ));
    s.shot("mode-changed-decided")?;
    Ok(Done {
        resolution: d.resolution,
        decision: Some(d.seconds),
        notes,
    })
}
