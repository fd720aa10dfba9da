//! `pcp-harness`: the headless compositor with virtual outputs and a virtual seat, played by a
//! scripted user, for testing an agent against the real gate in any language. Built from the
//! `pcp-tests` crate as an example, so the `test-harness` seat injection and the gate's
//! `scripted-user` mark are never part of a normal build: it is never installed with the
//! session and `pcp-compositor` (whatever its backend) cannot reach it.
//!
//! The scripted user (`--user SCRIPT.toml`, see `script.rs`) answers each dialog by its
//! capability; `--stdin` lets a test answer live, one command a line. Every decision is printed
//! as one JSON line on stdout (the audit record plus what the user did) and every prompt the
//! scripted user answered is audited `"scripted": true`. Clients connect through the
//! `WAYLAND_DISPLAY` and `XDG_RUNTIME_DIR` the first line (`"event": "ready"`) names: `pcpctl
//! submit` and any libwayland client work unchanged.
//!
//! Run: `cargo run -p pcp-tests --example pcp-harness -- --user user.toml`, with
//! `PCP_CACHE_DIR` pointing at the cache `cargo xtask setup` filled when the script speaks.

#[path = "../../tests/harness/mod.rs"]
mod harness;
mod script;

use std::collections::HashSet;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::time::{Duration, Instant};

use clap::Parser;
use pcp_gate::{IntentId, Modality};
use pcp_haptics::{FfKind, RecordingHaptics};
use pcp_overlay::{Control, Row};
use pcp_plugin::ui::EntryState;
use serde_json::{Value, json};

use harness::{Fixture, SharedHaptics, StartFailure, audio};
use script::{Action, Script};

/// The headless compositor played by a scripted user, for testing agents.
#[derive(Parser)]
#[command(name = "pcp-harness")]
struct Args {
    /// The scripted user: what to do for each capability (see docs/agents.md, "Testing your agent").
    #[arg(long, value_name = "SCRIPT.toml")]
    user: Option<PathBuf>,
    /// Also take commands on stdin, one a line: approve, deny, allow-session, double-tap,
    /// capture NAME, quit act on the dialog shown now; say PHRASE is spoken into the next
    /// dialog's microphone. End of input quits.
    #[arg(long)]
    stdin: bool,
    /// A virtual output `WxH[*SCALE][@X,Y]`; repeat for more (default one 1920x1080).
    #[arg(long = "output", value_name = "SPEC")]
    outputs: Vec<String>,
    /// Config text added to the harness config (`[[rule]]` deny rules, `[gate]`, …).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// A further folder of capability manifests, after the shipped ones; repeatable.
    #[arg(long = "manifests", value_name = "DIR")]
    manifests: Vec<PathBuf>,
    /// Keep the gate's state (audit log, history, token key) here instead of a temporary folder.
    #[arg(long, value_name = "FILE")]
    state: Option<PathBuf>,
    /// Write a PNG of every output to this folder each time a dialog appears.
    #[arg(long, value_name = "DIR")]
    capture: Option<PathBuf>,
    /// Load the voice model even if the script never speaks.
    #[arg(long)]
    voice: bool,
    /// On failure, print the error in the developer's form; `PCP_DEBUG=1` does the same.
    #[arg(long)]
    debug: bool,
    /// A program to run against the harness (after `--`), with `WAYLAND_DISPLAY`,
    /// `XDG_RUNTIME_DIR`, `PCP_CONFIG` and `PCP_STATE` set and its output on stderr: the harness
    /// ends when it does and exits with its status.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
}

/// evdev key codes the `type` action presses besides the text's own.
const KEY_LEFTMETA: u32 = 125;
const KEY_LEFTSHIFT: u32 = 42;
const KEY_ENTER: u32 = 28;

/// Set by SIGTERM and SIGINT: the harness commits its audit log and exits.
static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

fn main() -> ExitCode {
    // SAFETY: the first thing the process does; no other thread exists yet.
    unsafe { pcp_speech::prepare_process() };
    let args = Args::parse();
    // The compositor's own log lines (the polkit agent's refusals, why it did not start…) go
    // to stderr like every pcp binary's: warnings by default, `RUST_LOG` for more.
    let report = pcp_cli::Report::start("pcp-harness", "warn", args.debug);
    match run(args) {
        Ok(None) => ExitCode::SUCCESS,
        Ok(Some(code)) => ExitCode::from(code),
        Err(e) => report.fail_message(&e),
    }
}

/// Runs the harness; the status of `--`'s command, if one ran.
fn run(args: Args) -> Result<Option<u8>, String> {
    let script = match &args.user {
        Some(path) => Script::load(path)?,
        None => Script::idle(),
    };
    let extra = match &args.config {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("{}: cannot read the config: {e}", path.display()))?;
            check_toml(&text, path)?;
            text
        }
        None => String::new(),
    };
    let outputs = if args.outputs.is_empty() {
        vec!["1920x1080".to_string()]
    } else {
        args.outputs.clone()
    };
    for spec in &outputs {
        spec.parse::<pcp_compositor::config::OutputSpec>()
            .map_err(|e| format!("--output: {e}"))?;
    }
    for dir in &args.manifests {
        if !dir.is_dir() {
            return Err(format!(
                "--manifests {}: not a folder of capability manifests",
                dir.display()
            ));
        }
    }
    if let Some(dir) = &args.capture {
        std::fs::create_dir_all(dir).map_err(|e| format!("--capture {}: {e}", dir.display()))?;
    }
    // SAFETY: the handler only stores to an atomic.
    unsafe {
        libc::signal(
            libc::SIGTERM,
            on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t,
        );
        libc::signal(
            libc::SIGINT,
            on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t,
        );
    }
    let mut harness = Harness::start(&args, script, &outputs, &extra)?;
    if let Some((program, rest)) = args.command.split_first() {
        let child = harness
            .fx
            .command(program)
            .args(rest)
            .env("PCP_CONFIG", harness.fx.config_path())
            .env("PCP_STATE", &harness.state)
            .stdin(std::process::Stdio::null())
            // Its output goes to stderr: stdout stays the harness's JSON lines.
            .stdout(std::io::stderr())
            .stderr(std::process::Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot run {program}: {e}"))?;
        harness.program = Some(child);
    }
    harness.serve();
    harness.finish();
    Ok(harness.program_status)
}

/// The tables the harness writes itself: a `--config` file may not set them again.
const HARNESS_TABLES: [&str; 5] = ["manifests", "state", "overlay", "speech", "compositor"];

/// The config file must be TOML and leave the harness's own tables alone; its meaning is checked
/// by the compositor.
fn check_toml(text: &str, path: &Path) -> Result<(), String> {
    match text.parse::<toml::Table>() {
        Ok(table) => match HARNESS_TABLES.iter().find(|t| table.contains_key(**t)) {
            Some(t) => Err(format!(
                "{}: [{t}] is set by the harness (use --manifests for capability folders)",
                path.display()
            )),
            None => Ok(()),
        },
        Err(e) => {
            let place = e.span().map_or_else(String::new, |s| {
                let (line, column) = script::line_column(text, s.start);
                format!(":{line}:{column}")
            });
            Err(format!("{}{place}: {}", path.display(), e.message()))
        }
    }
}

/// The microphone the scripted user speaks into: an ALSA `file` PCM of its own config file,
/// pointed at silence or at a spoken phrase (espeak-ng, Korean voice) before the compositor
/// opens it to listen.
struct Microphone {
    dir: tempfile::TempDir,
    conf: PathBuf,
    encoding: audio::Encoding,
    silence: PathBuf,
    /// Phrases already synthesized, by text.
    spoken: Vec<(String, PathBuf)>,
}

impl Microphone {
    /// Points the microphone at `file` (a new config renamed over the old, so ALSA sees it).
    fn reads(&self, file: &Path) -> Result<(), String> {
        let next = self.conf.with_extension("conf.new");
        std::fs::write(&next, audio::mic_conf(file))
            .and_then(|()| std::fs::rename(&next, &self.conf))
            .map_err(|e| format!("cannot point the microphone at {}: {e}", file.display()))
    }

    /// The raw samples of `phrase` spoken, synthesized once. An error names the command that
    /// failed (espeak-ng or sox) and its stderr.
    fn phrase(&mut self, phrase: &str) -> Result<PathBuf, String> {
        if let Some((_, file)) = self.spoken.iter().find(|(p, _)| p == phrase) {
            return Ok(file.clone());
        }
        let name = format!("phrase-{}", self.spoken.len());
        let file = audio::speech(self.dir.path(), &name, phrase, &self.encoding)
            .map_err(|e| format!("cannot speak {phrase:?} into the microphone: {e}"))?;
        self.spoken.push((phrase.to_string(), file.clone()));
        Ok(file)
    }
}

/// What the scripted user did for one prompt, waiting for its audit record.
struct Performance {
    client: String,
    capability: String,
    did: Vec<String>,
}

struct Harness {
    fx: Fixture,
    script: Script,
    microphone: Option<Microphone>,
    haptics: SharedHaptics,
    capture: Option<PathBuf>,
    captures: usize,
    /// Prompts the script has already played.
    played: HashSet<IntentId>,
    performances: Vec<Performance>,
    last_seq: u64,
    last_time_ms: i64,
    lines: Option<Receiver<String>>,
    line_no: usize,
    quit: bool,
    polled: Instant,
    /// The script is playing a dialog now (its decision waits for the whole performance).
    playing: bool,
    /// Whether a screen locker held the session when last looked (`locked`/`unlocked` events).
    locked: bool,
    /// A phrase said on stdin, for the next dialog's microphone.
    next_phrase: Option<String>,
    /// The gate's state file.
    state: PathBuf,
    /// `--`'s command while it runs, and its exit status once it ended.
    program: Option<std::process::Child>,
    program_status: Option<u8>,
}

impl Harness {
    fn start(
        args: &Args,
        script: Script,
        outputs: &[String],
        extra: &str,
    ) -> Result<Harness, String> {
        let voice = args.voice || script.speaks();
        let (speech, microphone) = if voice {
            let dir = tempfile::tempdir().map_err(|e| format!("temporary folder: {e}"))?;
            let conf = dir.path().join("microphone.conf");
            let placeholder = dir.path().join("placeholder.raw");
            std::fs::write(&placeholder, [0u8; 8192]).map_err(|e| e.to_string())?;
            std::fs::write(&conf, audio::mic_conf(&placeholder)).map_err(|e| e.to_string())?;
            // SAFETY: no other thread runs yet; ALSA reads these when a PCM opens.
            unsafe {
                std::env::set_var("ALSA_CONFIG_PATH", audio::alsa_config_path(&conf));
                std::env::set_var("PCP_ALSA_PLAYBACK_FILE", dir.path().join("questions.raw"));
            }
            let config = pcp_speech::Config {
                input_device: audio::MIC.into(),
                ..pcp_speech::Config::for_language("ko")
            };
            let encoding = audio::encoding(&config)?;
            let silence = audio::silence(dir.path(), &encoding)?;
            let mut mic = Microphone {
                dir,
                conf,
                encoding,
                silence,
                spoken: Vec::new(),
            };
            mic.reads(&mic.silence.clone())?;
            // Fixed phrases are synthesized now, so that a dialog's microphone can be pointed
            // at them at once.
            for answer in &script.answers {
                if let Some(phrase) = &answer.say
                    && !phrase.contains(script::CHALLENGE)
                {
                    mic.phrase(&script::phrase_for(phrase, None))?;
                }
            }
            (Some(pcp_speech::SpeechEngine::start(config)), Some(mic))
        } else {
            (None, None)
        };
        let haptics = SharedHaptics::new(RecordingHaptics::new(
            &pcp_haptics::Config::default(),
            FfKind::Rumble,
        ));
        let specs: Vec<&str> = outputs.iter().map(String::as_str).collect();
        let manifests = args.manifests.clone();
        let extra = extra.to_string();
        let mut fx = Fixture::try_start(
            &specs,
            speech,
            Some(Box::new(haptics.clone())),
            args.state.as_deref(),
            move |text| {
                // The session's fonts, as the compositor draws with them: the test fixtures'
                // bundled font alone has no CJK, no Hangul.
                let mut text = text.replacen("system_fonts = false", "system_fonts = true", 1);
                for dir in &manifests {
                    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.clone());
                    text = text.replacen("dirs = [", &format!("dirs = [{dir:?}, "), 1);
                }
                text + "\n" + &extra
            },
        )
        .map_err(|e| match e {
            StartFailure::Output(e) => format!("--output: {e}"),
            e => format!("the compositor did not start: {e}"),
        })?;
        fx.use_real_clock();
        fx.pcp_mut().attach_scripted_user();
        if voice {
            let loading = Instant::now();
            while fx.voice_availability().is_err() {
                if loading.elapsed() > Duration::from_secs(60) {
                    return Err(format!(
                        "voice is not available after 60 s: {:?} (is PCP_CACHE_DIR the cache \
                         `cargo xtask setup` filled?)",
                        fx.voice_availability()
                    ));
                }
                fx.pump();
            }
        }
        let lines = args.stdin.then(|| {
            let (tx, rx) = mpsc::channel();
            std::thread::spawn(move || {
                for line in std::io::stdin().lock().lines() {
                    let Ok(line) = line else { break };
                    if tx.send(line).is_err() {
                        return;
                    }
                }
            });
            rx
        });
        let outputs: Vec<Value> = (0..fx.output_count())
            .map(|i| json!({"name": fx.output_name(i), "spec": outputs[i]}))
            .collect();
        let (last_seq, last_time_ms) = {
            let records = fx.gate().store().audit_since(0).unwrap_or_default();
            records.last().map_or((0, 0), |r| (r.seq, r.time_ms))
        };
        let state = args
            .state
            .clone()
            .unwrap_or_else(|| fx.runtime_dir().join("state.sqlite3"));
        emit(&json!({
            "event": "ready",
            "wayland_display": fx.socket_path(),
            "xdg_runtime_dir": fx.runtime_dir(),
            "config": fx.config_path(),
            "state": state,
            "outputs": outputs,
            "voice": voice,
            "polkit_agent": fx.polkit_agent().is_some(),
            "polkit_bus_name": fx.polkit_agent(),
            "polkit_agent_error": fx.polkit_agent_error(),
        }));
        Ok(Harness {
            fx,
            script,
            microphone,
            haptics,
            capture: args.capture.clone(),
            captures: 0,
            played: HashSet::new(),
            performances: Vec::new(),
            last_seq,
            last_time_ms,
            lines,
            line_no: 0,
            quit: false,
            polled: Instant::now(),
            playing: false,
            locked: false,
            next_phrase: None,
            state,
            program: None,
            program_status: None,
        })
    }

    /// Serves clients and plays the user until a signal or `quit`.
    fn serve(&mut self) {
        while !self.stopping() {
            self.tick();
            if let Some(id) = self.new_prompt() {
                self.play(id);
            }
        }
    }

    fn stopping(&mut self) -> bool {
        if let Some(program) = &mut self.program
            && let Ok(Some(status)) = program.try_wait()
        {
            // A signal's death is reported as the shell does, 128 + the signal.
            let code = status
                .code()
                .or_else(|| std::os::unix::process::ExitStatusExt::signal(&status).map(|s| 128 + s))
                .unwrap_or(1);
            self.program_status = Some(u8::try_from(code).unwrap_or(1));
            self.program = None;
            self.quit = true;
        }
        self.quit || STOP.load(Ordering::SeqCst)
    }

    /// One round: the event loop, the decisions made, a live command.
    fn tick(&mut self) {
        self.fx.pump();
        let locked = self.fx.locked();
        if locked != self.locked {
            self.locked = locked;
            emit(&json!({"event": if locked { "locked" } else { "unlocked" }}));
        }
        // Not while the script plays a dialog: its decision line carries the whole performance.
        if !self.playing && self.polled.elapsed() >= Duration::from_millis(50) {
            self.polled = Instant::now();
            self.emit_decisions();
        }
        let line = match &self.lines {
            Some(lines) => match lines.try_recv() {
                Ok(line) => Some(line),
                Err(TryRecvError::Empty) => None,
                Err(TryRecvError::Disconnected) => {
                    self.quit = true;
                    None
                }
            },
            None => None,
        };
        if let Some(line) = line {
            self.line_no += 1;
            self.command(&line);
        }
    }

    /// The prompt shown now, if the script has not played it yet.
    fn new_prompt(&mut self) -> Option<IntentId> {
        if !self.fx.dialog_open() {
            return None;
        }
        let id = self.fx.gate().active().filter(|p| p.shown_ms.is_some())?.id;
        self.played.insert(id).then_some(id)
    }

    /// Whether prompt `id` is still the one shown.
    fn showing(&mut self, id: IntentId) -> bool {
        self.fx.dialog_open() && self.fx.gate().active().map(|p| p.id) == Some(id)
    }

    /// Serves for `time`, as long as prompt `id` is shown; false when it went away.
    fn wait_on(&mut self, id: IntentId, time: Duration) -> bool {
        let start = Instant::now();
        while start.elapsed() < time {
            if self.stopping() || !self.showing(id) {
                return false;
            }
            self.tick();
        }
        self.showing(id)
    }

    /// Plays the script's answer to the prompt just shown.
    fn play(&mut self, id: IntentId) {
        let Some(prompt) = self.fx.gate().active() else {
            return;
        };
        let capability = prompt.intent.capability.clone();
        let client = prompt.intent.client.id.clone();
        let threshold = prompt.effective.to_string();
        let plan: Vec<&str> = prompt.plan.modalities.iter().map(|m| m.as_str()).collect();
        let plan = json!(plan);
        let hold = prompt.plan.press_and_hold;
        let params = prompt.params.clone();
        // (This one brings the dialog's content up to date first.)
        let offers_session = self.fx.dialog_offers_session();
        let challenge = self.fx.dialog_challenge();
        let answer = self.script.answer_for(&capability, &params).cloned();
        // The microphone hears the phrase, or silence, from the moment the compositor opens it
        // (after the question is read); a phrase from an earlier dialog is never heard again.
        // A phrase said on stdin answers the next dialog when the script has none.
        let live = self.next_phrase.take();
        let scripted = answer.as_ref().and_then(|a| a.say.clone());
        let said_live = scripted.is_none() && live.is_some();
        let phrase = scripted
            .or(live)
            .map(|p| script::phrase_for(&p, challenge.as_deref()));
        let mut did = Vec::new();
        if said_live && let Some(p) = &phrase {
            did.push(format!("say {p}"));
        }
        if let Some(mic) = &mut self.microphone {
            // A phrase that cannot be synthesized is said on stderr; the microphone then hears
            // silence, so the prompt goes unanswered by voice rather than the harness stopping.
            let file = match phrase.as_deref().map(|p| mic.phrase(p)) {
                Some(Ok(file)) => file,
                Some(Err(e)) => {
                    eprintln!("pcp-harness: {e}");
                    mic.silence.clone()
                }
                None => mic.silence.clone(),
            };
            if let Err(e) = mic.reads(&file) {
                eprintln!("pcp-harness: {e}");
            }
        }
        // What the user reads on it, as drawn (a password only as its dots).
        self.fx.render();
        let text = self.fx.dialog_texts();
        emit(&json!({
            "event": "prompt",
            "text": text,
            "capability": capability,
            "client": client,
            "threshold": threshold,
            "plan": plan,
            "press_and_hold": hold,
            "challenge": challenge,
            "offers_session": offers_session,
            "scripted": answer.is_some(),
        }));
        self.capture_all(&capability);
        self.playing = true;
        if let Some(answer) = answer {
            let mut typed = answer.typed.iter();
            for action in &answer.actions {
                if !self.wait_on(id, Duration::from_millis(answer.delay_ms)) {
                    break;
                }
                let text = match action {
                    Action::Type => self.type_text(id, typed.next().map_or("", |t| t.as_str())),
                    _ => self.act(id, *action, phrase.as_deref()),
                };
                did.push(text);
            }
        }
        self.performances.push(Performance {
            client,
            capability,
            did,
        });
        self.playing = false;
    }

    /// Does `action` on prompt `id`; returns what was done, for the JSON line.
    fn act(&mut self, id: IntentId, action: Action, phrase: Option<&str>) -> String {
        match action {
            Action::Approve => self.approve(id),
            Action::Deny => {
                self.click(id, Control::Deny);
                "deny".into()
            }
            Action::AllowSession => {
                if self.fx.dialog_offers_session() {
                    self.click(id, Control::Session);
                    "allow-session".into()
                } else {
                    "allow-session (not offered)".into()
                }
            }
            Action::Say => {
                let phrase = phrase.unwrap_or_default().to_string();
                if self.microphone.is_none() {
                    return format!("say {phrase} (no microphone)");
                }
                let wait = Duration::from_millis(self.script.say_wait_ms);
                let start = Instant::now();
                while start.elapsed() < wait && self.showing(id) && !self.stopping() {
                    if self.fx.answered(Modality::Voice) {
                        return format!("say {phrase}");
                    }
                    self.tick();
                }
                format!("say {phrase} (not heard)")
            }
            Action::DoubleTap => {
                self.double_tap(id);
                "double-tap".into()
            }
            Action::Type => "type (no text)".into(),
            Action::NextAccount => self.next_account(id),
            Action::Capture => {
                self.captures += 1;
                let name = format!("{:03}-capture", self.captures);
                self.capture_named(&name);
                "capture".into()
            }
            Action::Nothing => "nothing".into(),
        }
    }

    /// Types `text` into the entry of prompt `id` as a person would: waits until it asks, gives
    /// the dialog the keyboard with the focus shortcut (unless its entry already has it),
    /// types each character on the virtual keyboard, presses Enter and waits for the verdict.
    /// Returns what happened, never the text.
    fn type_text(&mut self, id: IntentId, text: &str) -> String {
        let asked_by = self
            .fx
            .gate()
            .prompt(id)
            .map(|p| (p.intent.client.id.clone(), p.intent.capability.clone()));
        let start = Instant::now();
        while !self
            .fx
            .dialog_entry()
            .is_some_and(|e| e.state == EntryState::Typing)
        {
            if start.elapsed() > harness::WAIT || !self.wait_on(id, Duration::from_millis(5)) {
                return "type (the entry never asked)".into();
            }
        }
        if !self.fx.dialog_entry().is_some_and(|e| e.focused) {
            // Super+Return, the default `[overlay] focus_shortcut`.
            self.fx.inject_key(KEY_LEFTMETA, true);
            self.fx.inject_key(KEY_ENTER, true);
            self.fx.inject_key(KEY_ENTER, false);
            self.fx.inject_key(KEY_LEFTMETA, false);
        }
        for c in text.chars() {
            let Some((code, shift)) = script::key_of(c) else {
                continue; // the script was checked: never reached
            };
            if shift {
                self.fx.inject_key(KEY_LEFTSHIFT, true);
            }
            self.fx.inject_key(code, true);
            self.fx.inject_key(code, false);
            if shift {
                self.fx.inject_key(KEY_LEFTSHIFT, false);
            }
        }
        self.fx.inject_key(KEY_ENTER, true);
        self.fx.inject_key(KEY_ENTER, false);
        let start = Instant::now();
        loop {
            if !self.showing(id) {
                return self.verdict_at_the_end(asked_by);
            }
            match self.fx.dialog_entry().map(|e| e.state) {
                Some(EntryState::Checking) => {}
                Some(EntryState::Accepted) => return "type (accepted)".into(),
                Some(_) => return "type (not accepted)".into(),
                None => return self.verdict_at_the_end(asked_by),
            }
            if start.elapsed() > harness::WAIT {
                return "type (no verdict)".into();
            }
            self.wait_on(id, Duration::from_millis(5));
        }
    }

    /// The verdict on a text typed into a prompt that ended while it was being checked: the
    /// front end's last refusal (polkit's last wrong password) ends the prompt
    /// `authentication_failed`, and that is a text not accepted; anything else ended the prompt
    /// first.
    fn verdict_at_the_end(&mut self, asked_by: Option<(String, String)>) -> String {
        if let Err(e) = self.fx.pcp_mut().flush() {
            eprintln!("pcp-harness: the audit log could not be committed: {e}");
        }
        let records = self
            .fx
            .gate()
            .store()
            .audit_since(self.last_time_ms)
            .unwrap_or_default();
        let refused = asked_by.is_some_and(|(client, capability)| {
            records.iter().rev().any(|r| {
                r.seq > self.last_seq
                    && r.client.id == client
                    && r.capability == capability
                    && r.resolution == pcp_gate::Resolution::AuthenticationFailed
            })
        });
        if refused {
            "type (not accepted)".into()
        } else {
            "type (the prompt ended)".into()
        }
    }

    /// Clicks the entry's account row once it is drawn, and waits until the entry asks again
    /// (for the next account). Returns what happened with the account the row names then.
    fn next_account(&mut self, id: IntentId) -> String {
        let start = Instant::now();
        let at = loop {
            if let Some(at) = self.fx.row_centre(Row::EntryAccount) {
                break at;
            }
            if start.elapsed() > harness::WAIT || !self.wait_on(id, Duration::from_millis(5)) {
                return "next-account (no account row)".into();
            }
        };
        let before = self.fx.dialog_entry().and_then(|e| e.account);
        self.fx.inject_click(at.0, at.1);
        let start = Instant::now();
        loop {
            let entry = self.fx.dialog_entry();
            let asks = entry
                .as_ref()
                .is_some_and(|e| e.state == EntryState::Typing);
            let account = entry.and_then(|e| e.account);
            if asks && account != before {
                return format!("next-account ({})", account.unwrap_or_default());
            }
            if start.elapsed() > harness::WAIT || !self.wait_on(id, Duration::from_millis(5)) {
                return "next-account (the entry never asked again)".into();
            }
        }
    }

    /// Clicks Approve once the click guard is armed, or holds it when the plan asks.
    fn approve(&mut self, id: IntentId) -> String {
        if !self.wait_armed(id) {
            return "approve (the dialog was never ready)".into();
        }
        let hold = self
            .fx
            .gate()
            .active()
            .is_some_and(|p| p.plan.press_and_hold);
        if !hold {
            self.click(id, Control::Approve);
            return "approve".into();
        }
        let (x, y) = self.fx.control_centre(Control::Approve);
        self.fx.inject_pointer_motion(x, y);
        self.fx.inject_pointer_button(true);
        let held = Duration::from_millis(self.script.hold_ms);
        self.wait_on(id, held);
        self.fx.inject_pointer_button(false);
        "approve (held)".into()
    }

    /// Serves until the dialog's click guard is armed (a click before it is ignored, as a
    /// person's would be); false when prompt `id` went away first.
    fn wait_armed(&mut self, id: IntentId) -> bool {
        let start = Instant::now();
        while !self.fx.dialog_live().is_some_and(|l| l.armed) {
            if start.elapsed() > harness::WAIT || !self.wait_on(id, Duration::from_millis(5)) {
                return false;
            }
        }
        true
    }

    /// Clicks `control` once the guard is armed.
    fn click(&mut self, id: IntentId, control: Control) {
        if self.wait_armed(id) && self.showing(id) {
            self.fx.click(control);
        }
    }

    /// Two taps on the dialog's output beside the dialog: the haptic answer.
    fn double_tap(&mut self, id: IntentId) {
        let Some(placement) = self.fx.dialog_placement() else {
            return;
        };
        let spec = self.fx.output_spec(placement.output);
        let (_, h) = spec.logical_size();
        let rect = placement.rect;
        // Below the dialog when there is room, else above it.
        let below = rect.y + rect.h + 40;
        let y = if below < spec.y + h {
            below
        } else {
            (rect.y - 40).max(spec.y)
        };
        let x = f64::from(rect.x + rect.w / 2);
        for _ in 0..2 {
            self.fx.inject_touch_down(x, f64::from(y));
            self.wait_on(id, Duration::from_millis(50));
            self.fx.inject_touch_up();
            if !self.wait_on(id, Duration::from_millis(150)) {
                return;
            }
        }
    }

    /// A live command from stdin.
    fn command(&mut self, line: &str) {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            return;
        }
        let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
        match word {
            "quit" => self.quit = true,
            "say" if !rest.trim().is_empty() => {
                if self.microphone.is_none() {
                    self.live_error("`say`: no microphone (start with --voice)");
                    return;
                }
                // The compositor opens the microphone as a dialog begins: the phrase is spoken
                // into the next dialog's.
                self.next_phrase = Some(rest.trim().to_string());
            }
            "capture" if !rest.trim().is_empty() => {
                let name = rest.trim().replace('/', "_");
                self.capture_named(&name);
            }
            _ => {
                let Some(action) = Action::parse(word).filter(|a| *a != Action::Say) else {
                    self.live_error(&format!(
                        "unknown command `{line}`: expected approve, deny, allow-session, \
                         double-tap, nothing, say PHRASE, capture NAME or quit"
                    ));
                    return;
                };
                let Some(id) = self.fx.gate().active().map(|p| p.id) else {
                    self.live_error(&format!("`{word}`: no dialog is shown"));
                    return;
                };
                let Some(prompt) = self.fx.gate().active() else {
                    return;
                };
                let (client, capability) = (
                    prompt.intent.client.id.clone(),
                    prompt.intent.capability.clone(),
                );
                let did = self.act(id, action, None);
                match self
                    .performances
                    .iter_mut()
                    .rev()
                    .find(|p| p.client == client && p.capability == capability)
                {
                    Some(p) => p.did.push(did),
                    None => self.performances.push(Performance {
                        client,
                        capability,
                        did: vec![did],
                    }),
                }
            }
        }
    }

    fn live_error(&self, message: &str) {
        emit(
            &json!({"event": "error", "at": format!("stdin:{}:1", self.line_no), "message": message}),
        );
    }

    /// Prints the decisions audited since the last look, one JSON line each.
    fn emit_decisions(&mut self) {
        if let Err(e) = self.fx.pcp_mut().flush() {
            eprintln!("pcp-harness: the audit log could not be committed: {e}");
        }
        let records = match self.fx.gate().store().audit_since(self.last_time_ms) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("pcp-harness: the audit log could not be read: {e}");
                return;
            }
        };
        let last_seq = self.last_seq;
        for record in records.into_iter().filter(|r| r.seq > last_seq) {
            self.last_seq = record.seq;
            self.last_time_ms = record.time_ms;
            if record.capability == pcp_gate::POLICY_CAPABILITY {
                continue;
            }
            let performed = self
                .performances
                .iter()
                .position(|p| p.client == record.client.id && p.capability == record.capability)
                .filter(|_| record.scripted)
                .map(|i| self.performances.remove(i));
            let Ok(mut line) = serde_json::to_value(&record) else {
                continue;
            };
            if let Some(fields) = line.as_object_mut() {
                fields.insert("event".into(), json!("decision"));
                fields.insert("approved".into(), json!(record.resolution.approves()));
                fields.insert(
                    "user".into(),
                    json!(performed.map(|p| p.did).unwrap_or_default()),
                );
            }
            emit(&line);
        }
    }

    /// PNGs of every output for the dialog of `capability` just shown (with `--capture`).
    fn capture_all(&mut self, capability: &str) {
        self.captures += 1;
        let name = format!("{:03}-{capability}", self.captures);
        self.capture_named(&name);
    }

    fn capture_named(&mut self, name: &str) {
        let Some(dir) = self.capture.clone() else {
            return;
        };
        let dialog_on = self.fx.dialog_output();
        for index in 0..self.fx.output_count() {
            let path = dir.join(format!("{name}-output-{index}.png"));
            let capture = self.fx.capture(index);
            // The dialog's words as this capture drew them (none on another output), and the
            // characters it drew as empty boxes (no font has them).
            let (text, boxes) = if dialog_on == Some(index) {
                let boxes: Vec<String> = self
                    .fx
                    .dialog_missing_glyphs()
                    .into_iter()
                    .map(String::from)
                    .collect();
                (self.fx.dialog_texts(), boxes)
            } else {
                (Vec::new(), Vec::new())
            };
            match capture.write_png(&path) {
                Ok(()) => emit(&json!({
                    "event": "capture",
                    "path": path,
                    "text": text,
                    "missing_glyphs": boxes,
                })),
                Err(e) => eprintln!("pcp-harness: cannot write {}: {e}", path.display()),
            }
        }
    }

    /// Commits the audit log and prints the last decisions.
    fn finish(&mut self) {
        if let Some(mut program) = self.program.take() {
            let _ = program.kill();
            let _ = program.wait();
        }
        self.emit_decisions();
        let played = self.haptics.0.borrow().calls().len();
        emit(&json!({"event": "exit", "haptic_calls": played}));
    }
}

/// One JSON line on stdout, flushed at once (a test reads it live).
fn emit(value: &Value) {
    let mut out = std::io::stdout().lock();
    // Whoever started the harness reads its lines: once nobody can, it ends.
    if writeln!(out, "{value}").and_then(|()| out.flush()).is_err() {
        STOP.store(true, Ordering::SeqCst);
    }
}
