//! The scripted demo session behind `cargo xtask demo`: the headless compositor with two
//! virtual outputs on the real clock, a real `weston-simple-shm` window, intents submitted over
//! the pcp-intent-v1 protocol, spoken answers synthesized by espeak-ng and heard through the
//! ALSA `file` PCM → cpal → Vosk, a recording haptic device, and the user's clicks, holds and
//! taps injected into the seat through the harness. It writes both outputs' PNGs at every step
//! and the audit log (SQLite, plus a JSON-lines export) to the output folder, prints what each
//! intent got, and exits non-zero when any step did not go as the script says.
//!
//! Run: `cargo run -p pcp-tests --example demo -- [OUTPUT_DIR]` (default `target/demo`), with
//! `PCP_CACHE_DIR` pointing at the cache `cargo xtask setup` filled (libvosk and the model).

#[path = "../tests/harness/mod.rs"]
mod harness;

use std::path::{Path, PathBuf};
use std::process::{Child, ExitCode};
use std::time::{Duration, Instant};

use pcp_compositor::headless::Capture;
use pcp_gate::store::Store;
use pcp_gate::{AuditRecord, Modality};
use pcp_haptics::{FfKind, Recorded, RecordingHaptics};
use pcp_overlay::Control;
use pcp_protocol::client::{Decision, Submission};
use pcp_speech::{Config as SpeechConfig, SpeechEngine};
use serde_json::json;

use harness::{AsyncIntent, Fixture, SharedHaptics, audio, intent};

/// A 1080p monitor on the left and a HiDPI tablet (2560×1600 at scale 2) on its right.
const OUTPUTS: &[&str] = &["1920x1080@0,0", "2560x1600*2@1920,0"];

/// How long the scripted user reads a dialog before answering: past the click guard
/// (`guard_delay_ms` plus one early-press extension in the default config).
const READ: Duration = Duration::from_millis(1400);

/// What the script expects of one intent, and what it measured.
struct Step {
    expected: &'static str,
    resolution: String,
    wall: Duration,
}

struct Demo {
    fx: Fixture,
    out: PathBuf,
    audio: PathBuf,
    encoding: audio::Encoding,
    mic_conf: PathBuf,
    haptics: SharedHaptics,
    /// Captures go to a thread that encodes the PNGs, so the session is not held up by it.
    pngs: Option<std::sync::mpsc::Sender<(PathBuf, Capture)>>,
    png_writer: Option<std::thread::JoinHandle<Vec<String>>>,
    steps: Vec<Step>,
    problems: Vec<String>,
}

fn main() -> ExitCode {
    let out = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| harness::assets().join("../target/demo"));
    match run(&out) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("demo: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(out: &Path) -> Result<bool, String> {
    prepare(out)?;
    let mut demo = Demo::start(out)?;
    let mut window = demo.open_window()?;
    demo.script();
    demo.finish_pngs();
    let _ = window.kill();
    let _ = window.wait();
    let Demo {
        fx,
        steps,
        mut problems,
        ..
    } = demo;
    // Dropping the compositor commits the routine records still batched in the gate.
    drop(fx);
    let records = export_audit(out, &mut problems)?;
    print_table(&steps, &records, &mut problems);
    println!("\nPNGs of every output at every step, the audit log (state.sqlite3, audit.jsonl):");
    println!("  {}", out.display());
    if problems.is_empty() {
        println!("\nEvery step went as scripted.");
        Ok(true)
    } else {
        println!("\nNot as scripted:");
        for p in &problems {
            println!("  - {p}");
        }
        Ok(false)
    }
}

/// An empty output folder (the previous run's files removed, nothing else touched).
fn prepare(out: &Path) -> Result<(), String> {
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let entries = std::fs::read_dir(out).map_err(|e| format!("{}: {e}", out.display()))?;
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        // ALSA's `file` plugin writes each opening of the playback PCM to the next
        // `questions.raw.NNNN` once `questions.raw` exists.
        let ours = name.ends_with(".png")
            || name.starts_with("state.sqlite3")
            || name.starts_with("questions.raw")
            || ["token.key", "audit.jsonl"].contains(&name.as_str());
        if ours {
            std::fs::remove_file(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        }
    }
    std::fs::create_dir_all(out.join("audio")).map_err(|e| format!("{}: {e}", out.display()))
}

impl Demo {
    fn start(out: &Path) -> Result<Demo, String> {
        let audio_dir = out.join("audio");
        // The microphone is an ALSA `file` PCM of its own config file, so the script can unplug
        // it; the question is spoken into `questions.raw` through the default PCM.
        let mic_conf = audio_dir.join("microphone.conf");
        let placeholder = audio_dir.join("placeholder.raw");
        std::fs::write(&placeholder, [0u8; 8192]).map_err(|e| e.to_string())?;
        std::fs::write(&mic_conf, audio::mic_conf(&placeholder)).map_err(|e| e.to_string())?;
        // SAFETY: the demo is single-threaded until the compositor and its clients start; ALSA
        // reads these when a PCM opens.
        unsafe {
            std::env::set_var("ALSA_CONFIG_PATH", audio::alsa_config_path(&mic_conf));
            std::env::set_var("PCP_ALSA_PLAYBACK_FILE", out.join("questions.raw"));
        }
        // The demo's scripted user answers from fixtures made before each prompt, so it cannot
        // say a challenge word chosen when the prompt begins: its destructive delete is answered
        // with a bare "네", as without `[speech] challenge`. The challenge word is shown and
        // required in tests/tests/voice.rs.
        let speech_config = SpeechConfig {
            input_device: audio::MIC.into(),
            challenge: Vec::new(),
            ..SpeechConfig::for_language("ko")
        };
        let encoding = audio::encoding(&speech_config)?;
        println!("Loading the Korean Vosk model (on-device speech recognition)…");
        let engine = SpeechEngine::start(speech_config);
        let haptics = SharedHaptics::new(RecordingHaptics::new(
            &pcp_haptics::Config::default(),
            FfKind::Rumble,
        ));
        // The harness gives a compositor with voice a font with Hangul (`cargo xtask setup`
        // installs fonts-nanum): the voice lines name the Korean pack's answer words.
        let mut fx = Fixture::start(
            OUTPUTS,
            Some(engine),
            Some(Box::new(haptics.clone())),
            Some(&out.join("state.sqlite3")),
            |text| text,
        );
        // The real clock: every time in the table is wall time.
        fx.use_real_clock();
        let loaded = Instant::now();
        while fx.voice_availability().is_err() {
            if loaded.elapsed() > Duration::from_secs(60) {
                return Err(format!(
                    "voice is not available after 60 s: {:?}",
                    fx.voice_availability()
                ));
            }
            fx.pump();
        }
        println!("Model loaded in {:.1} s.\n", loaded.elapsed().as_secs_f64());
        let (pngs, captures) = std::sync::mpsc::channel::<(PathBuf, Capture)>();
        let png_writer = std::thread::spawn(move || {
            let mut failed = Vec::new();
            for (path, capture) in captures {
                if let Err(e) = capture.write_png(&path) {
                    failed.push(format!("cannot write {}: {e}", path.display()));
                }
            }
            failed
        });
        Ok(Demo {
            fx,
            out: out.to_path_buf(),
            audio: audio_dir,
            encoding,
            mic_conf,
            haptics,
            pngs: Some(pngs),
            png_writer: Some(png_writer),
            steps: Vec::new(),
            problems: Vec::new(),
        })
    }

    /// A real client window on the left output, for the dialogs to appear over.
    fn open_window(&mut self) -> Result<Child, String> {
        self.look_at(0);
        let mut child = self.fx.spawn(self.fx.command("weston-simple-shm"));
        let start = Instant::now();
        while self.fx.window_count() == 0 {
            if start.elapsed() > harness::WAIT {
                let _ = child.kill();
                let _ = child.wait();
                return Err("weston-simple-shm did not map a window".into());
            }
            self.fx.pump();
        }
        Ok(child)
    }

    fn script(&mut self) {
        self.step("Routine write: no prompt", "policy_allow", |d| {
            d.submit(intent(
                "file.write",
                json!({"path": "/home/alice/notes.txt"}),
            ))
        });
        self.shoot_after("routine-write");

        self.step(
            "Privileged write: dialog on the output looked at, click after the guard",
            "user_approved",
            |d| {
                d.look_at(1);
                let c = d.submit(move_window("HEADLESS-2"));
                d.expect_prompt(&c, "visual", &["visual"], 1);
                // A click the instant the dialog appears is ignored (clickjacking guard).
                d.fx.click(Control::Approve);
                if !d.fx.dialog_open() {
                    d.problem("a click before the guard was ready counted");
                }
                d.shoot("privileged-write");
                d.fx.wait(READ);
                d.fx.click(Control::Approve);
                c
            },
        );

        self.step(
            "Destructive delete: spoken \"네\" (yes) and a click",
            "user_approved",
            |d| {
                d.look_at(0);
                d.hear("yes", "네");
                let c = d.submit(intent(
                    "file.delete",
                    json!({"path": "/home/alice/report.pdf"}),
                ));
                d.expect_prompt(&c, "voice+visual", &["voice", "visual"], 0);
                d.fx.pump_until("the spoken answer", |fx| fx.answered(Modality::Voice));
                d.shoot("destructive-delete-heard");
                d.fx.wait(READ);
                d.fx.click(Control::Approve);
                c
            },
        );

        self.step(
            "System action left unanswered: denied at the 10 s voice timeout",
            "confirmation.timeout",
            |d| {
                d.hear_silence();
                let c = d.submit(intent("session.logout", json!({})));
                d.expect_prompt(&c, "voice+visual", &["voice", "visual"], 0);
                d.fx.pump_until("the microphone to listen", |fx| {
                    fx.dialog_live().map(|l| l.voice) == Some(pcp_overlay::VoiceState::Listening)
                });
                d.shoot("system-unanswered");
                c
            },
        );

        for round in 2..=3 {
            self.step(
                "The same privileged write again: prompted, approved",
                "user_approved",
                |d| {
                    let c = d.submit(move_window("HEADLESS-2"));
                    d.expect_prompt(&c, "visual", &["visual"], 0);
                    d.shoot(&format!("repeat-{round}"));
                    d.fx.wait(READ);
                    d.fx.click(Control::Approve);
                    c
                },
            );
        }
        self.step(
            "The same privileged write a 4th time: history confirms it",
            "confirmed_by_history",
            |d| d.submit(move_window("HEADLESS-2")),
        );
        self.shoot_after("repeat-4-history");
        self.step(
            "The privileged write with new parameters: prompted again, denied",
            "user_denied",
            |d| {
                let c = d.submit(move_window("HEADLESS-1"));
                d.expect_prompt(&c, "visual", &["visual"], 0);
                d.shoot("new-parameters");
                d.fx.wait(READ);
                d.fx.click(Control::Deny);
                c
            },
        );

        self.step(
            "Microphone unplugged: voice falls back to the dialog with press-and-hold",
            "user_approved",
            |d| {
                d.unplug_microphone();
                let c = d.submit(intent("package.install", json!({"package": "htop"})));
                d.expect_prompt(&c, "voice+visual", &["visual"], 0);
                let hold = d.fx.gate().active().is_some_and(|p| p.plan.press_and_hold);
                if !hold {
                    d.problem("the fallback plan does not ask for press-and-hold");
                }
                d.shoot("voice-unavailable-hold");
                d.fx.wait(READ);
                let (x, y) = d.fx.control_centre(Control::Approve);
                d.fx.inject_pointer_motion(x, y);
                d.fx.inject_pointer_button(true);
                d.fx.wait(Duration::from_millis(1000));
                d.fx.inject_pointer_button(false);
                c
            },
        );

        self.step(
            "Low-risk setting with a haptic device: cue, then a double tap",
            "user_approved",
            |d| {
                let c = d.submit(intent(
                    "settings.change",
                    json!({"key": "brightness", "value": 40}),
                ));
                d.expect_prompt(&c, "visual", &["haptic"], 0);
                d.shoot("haptic-cue");
                let cue = pcp_haptics::Config::default().cue.duration();
                d.fx.wait(cue + Duration::from_millis(100));
                let (x, y) = (960.0, 700.0);
                for _ in 0..2 {
                    d.fx.inject_touch_down(x, y);
                    d.fx.wait(Duration::from_millis(50));
                    d.fx.inject_touch_up();
                    d.fx.wait(Duration::from_millis(150));
                }
                let played = d
                    .haptics
                    .0
                    .borrow()
                    .calls()
                    .iter()
                    .any(|r| matches!(r, Recorded::Started { .. }));
                if !played {
                    d.problem("the haptic cue was not played");
                }
                c
            },
        );

        self.step(
            "A capability no manifest declares",
            "unknown_capability",
            |d| d.submit(intent("disk.format", json!({"device": "/dev/sda"}))),
        );
        self.shoot_after("unknown-capability");

        self.step(
            "The tablet is unplugged while its dialog is up: the same prompt moves to the monitor",
            "user_approved",
            |d| {
                d.look_at(1);
                let c = d.submit(move_window("HEADLESS-1"));
                d.expect_prompt(&c, "visual", &["visual"], 1);
                d.shoot("unplug-before");
                let before = d.fx.gate().active().map(|p| p.id);
                if let Err(e) = d.fx.unplug_output(1) {
                    d.problem(&format!("cannot unplug the tablet: {e}"));
                }
                let on = d.fx.dialog_output();
                let after = d.fx.gate().active().map(|p| p.id);
                if on != Some(0) || after != before {
                    d.problem(&format!(
                        "after the unplug the dialog is on {on:?} showing {after:?}, expected \
                         output 0 showing {before:?}"
                    ));
                }
                d.shoot("unplug-after");
                d.fx.wait(READ);
                d.fx.click(Control::Approve);
                c
            },
        );

        self.step(
            "A prompt waits without blocking the desktop: the window beside it is used and keeps drawing",
            "user_approved",
            |d| {
                d.look_at(0);
                let c = d.submit(intent(
                    "network.share",
                    json!({"path": "/home/alice/report.pdf", "recipient": "bob@example.org"}),
                ));
                d.expect_prompt(&c, "visual", &["visual"], 0);
                d.shoot("window-beside-prompt-before");
                let before = d.window_pixels();
                // The user clicks into the window and types: it gets the pointer and keeps
                // the keyboard; the dialog has neither.
                let (x, y) = d.fx.first_window_location().unwrap_or((0, 0));
                d.fx.inject_click(f64::from(x) + 40.0, f64::from(y) + 40.0);
                d.fx.inject_key(harness::KEY_A, true);
                d.fx.inject_key(harness::KEY_A, false);
                if !d.fx.pointer_on_client() || !d.fx.keyboard_on_client() {
                    d.problem("the window does not have the pointer and the keyboard");
                }
                if d.fx.dialog_has_keyboard() || !d.fx.dialog_open() {
                    d.problem("the dialog took the keyboard or went away");
                }
                // weston-simple-shm draws a new frame each time the compositor asks.
                let start = Instant::now();
                while start.elapsed() < Duration::from_millis(400) {
                    d.fx.render();
                    d.fx.pump();
                }
                let after = d.window_pixels();
                if before.is_empty() || before == after {
                    d.problem("the window did not draw while the prompt waited");
                }
                d.shoot("window-beside-prompt-after");
                d.fx.wait(READ);
                d.fx.click(Control::Approve);
                c
            },
        );
    }

    /// The pixels of weston-simple-shm's window (its 250×250 buffer) on output 0.
    fn window_pixels(&mut self) -> Vec<[u8; 4]> {
        let Some((x, y)) = self.fx.first_window_location() else {
            return Vec::new();
        };
        let capture = self.fx.capture(0);
        let (x, y) = (x.max(0) as u32, y.max(0) as u32);
        (0..250)
            .flat_map(|dy| (0..250).map(move |dx| (x + dx, y + dy)))
            .map(|(px, py)| capture.pixel(px, py))
            .collect()
    }

    /// Runs one scripted intent: `script` submits it and plays the user's part; the step then
    /// waits for the decision and checks its resolution.
    fn step(
        &mut self,
        title: &'static str,
        expected: &'static str,
        script: impl FnOnce(&mut Demo) -> (AsyncIntent, Instant),
    ) {
        println!("{:>2}. {title}", self.steps.len() + 1);
        let (client, submitted) = script(self);
        let decision: Decision = self.fx.decision(&client);
        let decided = client.last_event_at().unwrap_or_else(Instant::now);
        let wall = decided.saturating_duration_since(submitted);
        if decision.resolution != expected {
            self.problem(&format!(
                "step {} ({title}): expected {expected}, got {} ({:?})",
                self.steps.len() + 1,
                decision.resolution,
                decision.reason
            ));
        }
        self.steps.push(Step {
            expected,
            resolution: decision.resolution,
            wall,
        });
        // Let the dialog go before the next step's pictures.
        self.fx.pump();
    }

    fn submit(&mut self, submission: Submission) -> (AsyncIntent, Instant) {
        let submitted = Instant::now();
        (self.fx.submit(submission), submitted)
    }

    /// Waits for `pending` and checks the threshold, the modalities asked and the output the
    /// dialog is on.
    fn expect_prompt(
        &mut self,
        (client, _): &(AsyncIntent, Instant),
        threshold: &str,
        modalities: &[&str],
        output: usize,
    ) {
        let (got_threshold, got_modalities) = self.fx.pending(client);
        if got_threshold != threshold || got_modalities != modalities {
            self.problem(&format!(
                "expected a {threshold} prompt through {modalities:?}, got {got_threshold} \
                 through {got_modalities:?}"
            ));
        }
        let on = self.fx.dialog_output();
        if on != Some(output) {
            self.problem(&format!(
                "expected the dialog on output {output}, it is on {on:?}"
            ));
        }
    }

    /// Moves the pointer (the focal point) to the centre of output `index`.
    fn look_at(&mut self, index: usize) {
        let spec = self.fx.output_spec(index);
        let (w, h) = spec.logical_size();
        let (x, y) = (spec.x, spec.y);
        self.fx.inject_pointer_motion(
            f64::from(x) + f64::from(w) / 2.0,
            f64::from(y) + f64::from(h) / 2.0,
        );
    }

    /// The microphone will hear `text` spoken (after half a second of silence).
    fn hear(&mut self, name: &str, text: &str) {
        match audio::speech(&self.audio, name, text, &self.encoding) {
            Ok(file) => self.microphone_reads(&file),
            Err(e) => self.problem(&format!("cannot synthesize {text:?}: {e}")),
        }
    }

    /// The microphone will hear nothing at all.
    fn hear_silence(&mut self) {
        match audio::silence(&self.audio, &self.encoding) {
            Ok(file) => self.microphone_reads(&file),
            Err(e) => self.problem(&format!("cannot make silence: {e}")),
        }
    }

    fn microphone_reads(&mut self, file: &Path) {
        // A new file renamed over the old one, so ALSA sees the change.
        let next = self.mic_conf.with_extension("conf.new");
        let written = std::fs::write(&next, audio::mic_conf(file))
            .and_then(|()| std::fs::rename(&next, &self.mic_conf));
        if let Err(e) = written {
            self.problem(&format!(
                "cannot point the microphone at {}: {e}",
                file.display()
            ));
        }
    }

    /// Takes the microphone away (its PCM leaves ALSA's list) and waits for the compositor's
    /// probe to notice.
    fn unplug_microphone(&mut self) {
        let next = self.mic_conf.with_extension("conf.new");
        let written = std::fs::write(&next, "# the microphone was unplugged\n")
            .and_then(|()| std::fs::rename(&next, &self.mic_conf));
        if let Err(e) = written {
            self.problem(&format!("cannot unplug the microphone: {e}"));
        }
        self.fx.pump_until("voice to become unavailable", |fx| {
            fx.voice_availability().is_err()
        });
    }

    /// Captures every output during the current step, to be written as
    /// `NN-<name>-output-<i>.png`.
    fn shoot(&mut self, name: &str) {
        self.shoot_numbered(self.steps.len() + 1, name);
    }

    /// Captures every output after the last step's decision.
    fn shoot_after(&mut self, name: &str) {
        self.shoot_numbered(self.steps.len(), name);
    }

    fn shoot_numbered(&mut self, step: usize, name: &str) {
        for index in 0..self.fx.output_count() {
            let path = self
                .out
                .join(format!("{step:02}-{name}-output-{index}.png"));
            let capture = self.fx.capture(index);
            if let Some(pngs) = &self.pngs {
                let _ = pngs.send((path, capture));
            }
        }
    }

    /// Waits for every PNG to be written.
    fn finish_pngs(&mut self) {
        self.pngs = None;
        if let Some(writer) = self.png_writer.take() {
            match writer.join() {
                Ok(failed) => self.problems.extend(failed),
                Err(_) => self.problems.push("the PNG writer panicked".into()),
            }
        }
    }

    fn problem(&mut self, what: &str) {
        eprintln!("    not as scripted: {what}");
        self.problems.push(what.to_string());
    }
}

/// Moves weston-simple-shm's window (by its app id) to `output`.
fn move_window(output: &str) -> Submission {
    intent(
        "window.move",
        json!({"window": "org.freedesktop.weston.simple-shm", "output": output}),
    )
}

/// Verifies the audit chain, writes it as `audit.jsonl` and returns its records.
fn export_audit(out: &Path, problems: &mut Vec<String>) -> Result<Vec<AuditRecord>, String> {
    let path = out.join("state.sqlite3");
    let store = Store::open_read_only(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    match store.verify_audit() {
        Ok(Ok(n)) => println!("\nAudit chain verified: {n} records."),
        Ok(Err(brk)) => problems.push(format!("the audit chain is broken: {brk:?}")),
        Err(e) => problems.push(format!("cannot verify the audit chain: {e}")),
    }
    let records = store
        .audit_since(0)
        .map_err(|e| format!("cannot read the audit log: {e}"))?;
    let mut text = String::new();
    for r in &records {
        text.push_str(&serde_json::to_string(r).map_err(|e| e.to_string())?);
        text.push('\n');
    }
    let jsonl = out.join("audit.jsonl");
    std::fs::write(&jsonl, text).map_err(|e| format!("{}: {e}", jsonl.display()))?;
    Ok(records)
}

/// The table: each step's audit record (threshold, plan, outcome, resolution) and the wall time
/// from submission to the client's decision.
fn print_table(steps: &[Step], records: &[AuditRecord], problems: &mut Vec<String>) {
    // The policy the compositor recorded at its first start is no step of the script.
    let records: Vec<AuditRecord> = records
        .iter()
        .filter(|r| r.capability != pcp_gate::POLICY_CAPABILITY)
        .cloned()
        .collect();
    let records = records.as_slice();
    if records.len() != steps.len() {
        problems.push(format!(
            "{} steps but {} audit records",
            steps.len(),
            records.len()
        ));
    }
    println!(
        "\n{:<2}  {:<36}  {:<24}  {:<12}  {:<8}  {:<22}  {:>10}",
        "#", "intent", "threshold", "plan", "outcome", "resolution", "decided in"
    );
    for (i, (step, record)) in steps.iter().zip(records).enumerate() {
        let threshold = match (record.threshold, record.effective_threshold) {
            (Some(full), Some(eff)) if full != eff => format!("{full} → {eff} (history)"),
            (Some(full), _) => full.to_string(),
            (None, _) => "—".into(),
        };
        let mut plan: Vec<&str> = record.plan.iter().map(|m| m.as_str()).collect();
        if record.press_and_hold {
            plan.push("hold");
        }
        let plan = if plan.is_empty() {
            "—".into()
        } else {
            plan.join("+")
        };
        let resolution = record.resolution.as_str();
        if resolution != step.resolution {
            problems.push(format!(
                "step {}: the client got {} but the audit log says {resolution}",
                i + 1,
                step.resolution
            ));
        }
        let mark = if resolution == step.expected {
            ""
        } else {
            " ✗"
        };
        println!(
            "{:<2}  {:<36}  {:<24}  {:<12}  {:<8}  {:<22}  {:>7} ms{mark}",
            i + 1,
            describe(record),
            threshold,
            plan,
            record.outcome,
            resolution,
            step.wall.as_millis(),
        );
    }
}

/// `capability(param values)`, each value shortened to its last component (a file name, the
/// last part of an app id) to fit the table.
fn describe(record: &AuditRecord) -> String {
    let short = |v: &serde_json::Value| {
        let text = v.as_str().map_or_else(|| v.to_string(), str::to_string);
        let last = match text.rsplit_once('/') {
            Some((_, name)) => name,
            None if text.len() > 16 => text.rsplit_once('.').map_or(text.as_str(), |(_, l)| l),
            None => text.as_str(),
        };
        last.to_string()
    };
    let params = record
        .params
        .as_ref()
        .and_then(|p| p.as_object())
        .map(|o| o.values().map(short).collect::<Vec<_>>().join(", "))
        .unwrap_or_default();
    let text = format!("{}({params})", record.capability);
    if text.chars().count() > 36 {
        let cut: String = text.chars().take(35).collect();
        format!("{cut}…")
    } else {
        text
    }
}
