//! What the compositor uses: a [`SpeechEngine`] made once at start-up (model loading in the
//! background), an availability check with the reason voice cannot run, and per prompt a
//! [`Listener`] whose worker thread speaks the question, listens, and reports [`SpeechEvent`]s
//! through a channel the compositor polls without blocking.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, Sender, TryRecvError, channel};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use tracing::{debug, warn};

use crate::capture::probe_input;
use crate::config::Config;
use crate::error::SpeechError;
use crate::keeper::{KeeperState, LeaseError, ModelKeeper, page_out_libraries};
use crate::listen::{Ending, Microphone, RoundEvent, listen_round};
use crate::models::{RecognizerModel, find};
use crate::phrases::PhrasePack;
use crate::prompt::{play_earcon, speak};
use crate::voice::{Availability, Listening, SpeechEvent, Unavailable, Voice};

/// Voice confirmation for the compositor: config, phrase pack and the model's keeper.
///
/// The model is not loaded at start: [`prepare`](Self::prepare) (or the first
/// [`ask`](Self::ask)) loads it in the background while the question is spoken, and it is
/// released after `[speech] unload_after_s` without a voice prompt.
///
/// **At exit**, call [`shutdown`](Self::shutdown) (dropping the engine does the same): no thread
/// may still be inside libvosk when the process ends, or libvosk's teardown can crash it
/// (SIGSEGV). Shutdown stops every listener's worker, then waits for the workers and for a model
/// load still under way: up to the load time (~2 s) or the rest of a question being spoken.
pub struct SpeechEngine {
    config: Config,
    pack: Option<Arc<PhrasePack>>,
    keeper: Arc<ModelKeeper>,
    /// The listeners' worker threads that may still run, with their stop flags.
    workers: Mutex<Vec<Worker>>,
    /// How many listeners' workers are running: while one is, the microphone is theirs and
    /// [`available`](Self::available) does not open it.
    listening: Arc<AtomicUsize>,
}

/// Counts one running listener's worker in [`SpeechEngine`]'s `listening` while it lives.
struct ListeningGuard(Arc<AtomicUsize>);

impl ListeningGuard {
    fn new(count: &Arc<AtomicUsize>) -> ListeningGuard {
        count.fetch_add(1, Ordering::AcqRel);
        ListeningGuard(Arc::clone(count))
    }
}

impl Drop for ListeningGuard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A listener's worker thread, as the engine tracks it for shutdown.
struct Worker {
    stop: Arc<AtomicBool>,
    handle: JoinHandle<()>,
}

impl SpeechEngine {
    /// Finds the model and loads the phrase pack; the model itself loads when a prompt needs
    /// it (or now, with `load_at_start`). Never fails: problems show up in [`available`](Self::available) and as
    /// `Unavailable` events.
    pub fn start(config: Config) -> SpeechEngine {
        let pack = load_pack(&config);
        let config = match &pack {
            Ok(pack) => config.with_pack(pack),
            Err(_) => config.with_language(),
        };
        let unload_after =
            (config.unload_after_s > 0).then(|| Duration::from_secs(config.unload_after_s));
        let found = find(config.model_dir(), &config.language());
        let keeper = match (&pack, &found) {
            (Err(e), _) | (_, Err(e)) => {
                warn!("voice confirmation unavailable: {e}");
                ModelKeeper::broken(e.to_string())
            }
            (Ok(pack), Ok(found)) => {
                ModelKeeper::new(found.clone(), &config, pack.clone(), unload_after)
            }
        };
        // The recognizers' libraries ran their start-up code when the process started; an
        // engine that has not listened yet keeps none of their pages resident.
        page_out_libraries();
        if config.enabled && config.load_at_start {
            keeper.prepare();
        }
        SpeechEngine {
            config,
            pack: pack.ok().map(Arc::new),
            keeper: Arc::new(keeper),
            workers: Mutex::new(Vec::new()),
            listening: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// An engine over a model that is already loaded (tests, benches, and hosts sharing one);
    /// it is never released.
    pub fn with_model(
        config: Config,
        model: Arc<dyn RecognizerModel>,
    ) -> Result<SpeechEngine, SpeechError> {
        let pack = load_pack(&config)?;
        model.check_pack(&pack)?;
        Ok(SpeechEngine {
            config: config.with_pack(&pack),
            pack: Some(Arc::new(pack)),
            keeper: Arc::new(ModelKeeper::fixed(model)),
            workers: Mutex::new(Vec::new()),
            listening: Arc::new(AtomicUsize::new(0)),
        })
    }

    /// The engine's configuration, with what it leaves to the locale and the phrase pack
    /// filled in (its language, voice and sentences).
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The answer words the dialog names, from the phrase pack (none when the pack could not
    /// be loaded: voice is unavailable then).
    pub fn answer_words(&self) -> Option<&crate::phrases::AnswerWords> {
        self.pack.as_deref().map(PhrasePack::answer_words)
    }

    /// Whether voice can run: enabled, a model that loads (or will: an unloaded model is
    /// loaded by the prompt) and a microphone that is there. Probes the input device (no
    /// stream), except while a listener of this engine is running: its own opening of the
    /// microphone is the check then (a failure comes back as its `Unavailable` event), and a
    /// probe opening the device beside it would compete for the capture — on a loopback card,
    /// whose capture subdevices pair with playback ones, a probe holding the first one when the
    /// listener opens leaves the listener on another, deaf.
    pub fn available(&self) -> Availability {
        if !self.config.enabled {
            return Err(Unavailable::Disabled);
        }
        if self.pack.is_none() {
            return Err(Unavailable::NoModel("no phrase pack".into()));
        }
        self.keeper.loadable().map_err(Unavailable::NoModel)?;
        if self.listening.load(Ordering::Acquire) > 0 {
            return Ok(());
        }
        match probe_input(&self.config) {
            Ok(()) => Ok(()),
            Err(SpeechError::NoDevice { name, .. }) => Err(Unavailable::NoInputDevice(name)),
            Err(e) => Err(Unavailable::DeviceBusy(e.to_string())),
        }
    }

    /// Starts loading the model now (a prompt with a voice step is about to begin), so the load
    /// overlaps what comes before listening. Returns at once.
    pub fn prepare(&self) {
        if self.config.enabled {
            self.keeper.prepare();
        }
    }

    /// Where the model stands: unloaded, loading, ready or failed.
    pub fn model_state(&self) -> KeeperState {
        self.keeper.state()
    }

    /// How many times the model has started loading (it is loaded again after being released).
    pub fn model_loads(&self) -> u64 {
        self.keeper.loads()
    }

    /// The challenge word for a prompt of the risk class named `risk_class` (the gate's
    /// lowercase name): `Ok(None)` when `[speech] challenge` does not list the class, else a word
    /// chosen at random from the phrase pack. `Err` when one is needed but none can be chosen
    /// (a pack without challenge words, or no randomness): the voice step cannot run then, and
    /// must never run without its word.
    pub fn challenge_for(&self, risk_class: &str) -> Result<Option<String>, Unavailable> {
        if !self.config.challenges(risk_class) {
            return Ok(None);
        }
        let pack = self
            .pack
            .as_ref()
            .ok_or_else(|| Unavailable::NoModel("no phrase pack".into()))?;
        pack.random_challenge()
            .map(|w| Some(w.to_string()))
            .ok_or_else(|| {
                Unavailable::NoModel(format!(
                    "the `{}` phrase pack has no challenge words (or no randomness)",
                    pack.language()
                ))
            })
    }

    /// Speaks `question` (if `speak_prompt`) while the model loads, waits for the model (within
    /// the timeout, counted from now), then listens for an answer on a worker thread. Poll the
    /// returned listener; dropping it stops listening and closes the microphone.
    pub fn ask(&self, question: &str) -> Listener {
        self.ask_with_challenge(question, None)
    }

    /// Like [`ask`](Self::ask) for a prompt that shows `challenge` (from
    /// [`challenge_for`](Self::challenge_for)): an approval counts only with that word. The
    /// question gets `[speech] challenge_hint`, or `challenge_spoken` (which reads the word
    /// aloud) when `speak_challenge` is true.
    pub fn ask_with_challenge(&self, question: &str, challenge: Option<&str>) -> Listener {
        self.ask_challenge(question, challenge, self.config.speak_challenge)
    }

    /// Like [`ask_with_challenge`](Self::ask_with_challenge) with `challenge` read aloud in the
    /// question (`challenge_spoken`) whatever `speak_challenge` says: for a user who hears the
    /// dialog instead of seeing it (a screen reader runs).
    pub fn ask_reading_challenge(&self, question: &str, challenge: &str) -> Listener {
        self.ask_challenge(question, Some(challenge), true)
    }

    fn ask_challenge(&self, question: &str, challenge: Option<&str>, aloud: bool) -> Listener {
        let asked = Instant::now();
        let (tx, rx) = channel();
        let stop = Arc::new(AtomicBool::new(false));
        let listener = Listener {
            rx,
            stop: Arc::clone(&stop),
            done: false,
        };
        let unavailable = |why: Unavailable| {
            let _ = tx.send(SpeechEvent::Unavailable {
                reason: why.to_string(),
            });
        };
        if !self.config.enabled {
            unavailable(Unavailable::Disabled);
            return listener;
        }
        let Some(pack) = self.pack.clone() else {
            unavailable(Unavailable::NoModel("no phrase pack".into()));
            return listener;
        };
        if let Some(word) = challenge
            && !pack.is_challenge_word(word)
        {
            unavailable(Unavailable::NoModel(format!(
                "`{word}` is not a challenge word of the `{}` phrase pack",
                pack.language()
            )));
            return listener;
        }
        self.keeper.prepare();
        let keeper = Arc::clone(&self.keeper);
        let config = self.config.clone();
        let question = match challenge {
            Some(word) => format!(
                "{question} {}",
                self.config.challenge_question_read(word, aloud)
            ),
            None => question.to_string(),
        };
        let challenge = challenge.map(str::to_string);
        let worker_tx = tx.clone();
        let worker_stop = Arc::clone(&stop);
        // Counted from the ask, before the thread starts, so a probe asked for right after
        // (the dialog showing this prompt) already leaves the microphone alone.
        let listening = ListeningGuard::new(&self.listening);
        let spawned = thread::Builder::new()
            .name("pcp-voice".into())
            .spawn(move || {
                let _listening = listening;
                let job = Job {
                    keeper: &keeper,
                    pack,
                    config: &config,
                    question: &question,
                    challenge: challenge.as_deref(),
                    asked,
                };
                // A panic on the way (ours, or a library's surfacing in Rust) is voice lost for
                // this prompt, reported like any other failure: the dialog takes over.
                let ran = catch_unwind(AssertUnwindSafe(|| worker(job, &worker_stop, &worker_tx)))
                    .unwrap_or_else(|_| {
                        Err(SpeechError::Recognizer {
                            reason: "the voice worker panicked".into(),
                        })
                    });
                let event = match ran {
                    Ok(Some(event)) => event,
                    Ok(None) => return,
                    Err(e) => {
                        warn!("voice confirmation failed: {e}");
                        SpeechEvent::Unavailable {
                            reason: e.to_string(),
                        }
                    }
                };
                let _ = worker_tx.send(event);
            });
        match spawned {
            Ok(handle) => {
                let mut workers = self.workers.lock().unwrap_or_else(|e| e.into_inner());
                // Forget workers that have ended, so the list stays as short as the live ones.
                workers.retain(|w| !w.handle.is_finished());
                workers.push(Worker { stop, handle });
            }
            Err(e) => {
                let _ = tx.send(SpeechEvent::Unavailable {
                    reason: format!("could not start listening: {e}"),
                });
            }
        }
        listener
    }

    /// Stops every listener, then waits until no thread of this engine is inside Vosk: the
    /// listeners' workers and a model load still under way (see the type's docs). Their
    /// listeners then report `Unavailable`. Calling it twice is harmless.
    pub fn shutdown(&self) {
        let workers = std::mem::take(&mut *self.workers.lock().unwrap_or_else(|e| e.into_inner()));
        for w in &workers {
            w.stop.store(true, Ordering::Relaxed);
        }
        for w in workers {
            if w.handle.join().is_err() {
                warn!("a voice worker thread panicked");
            }
        }
        self.keeper.shutdown();
    }
}

impl Voice for SpeechEngine {
    fn config(&self) -> &Config {
        SpeechEngine::config(self)
    }

    fn answer_words(&self) -> Option<&crate::phrases::AnswerWords> {
        SpeechEngine::answer_words(self)
    }

    fn available(&self) -> Availability {
        SpeechEngine::available(self)
    }

    fn prepare(&self) {
        SpeechEngine::prepare(self)
    }

    fn challenge_words(&self) -> &[String] {
        self.pack.as_ref().map_or(&[], |p| p.challenge_words())
    }

    fn challenge_for(&self, risk_class: &str) -> Result<Option<String>, Unavailable> {
        SpeechEngine::challenge_for(self, risk_class)
    }

    fn ask_with_challenge(&self, question: &str, challenge: Option<&str>) -> Box<dyn Listening> {
        Box::new(SpeechEngine::ask_with_challenge(self, question, challenge))
    }

    fn ask_reading_challenge(&self, question: &str, challenge: &str) -> Box<dyn Listening> {
        Box::new(SpeechEngine::ask_reading_challenge(
            self, question, challenge,
        ))
    }
}

impl Listening for Listener {
    fn poll(&mut self) -> Option<SpeechEvent> {
        Listener::poll(self)
    }

    fn is_done(&self) -> bool {
        Listener::is_done(self)
    }

    fn cancel(&mut self) {
        Listener::cancel(self)
    }
}

impl Drop for SpeechEngine {
    fn drop(&mut self) {
        self.shutdown();
    }
}

fn load_pack(config: &Config) -> Result<PhrasePack, SpeechError> {
    let dir = (!config.phrases_dir.as_os_str().is_empty()).then_some(config.phrases_dir.as_path());
    PhrasePack::load(dir, &config.language())
}

/// What one listener's worker needs.
struct Job<'a> {
    keeper: &'a ModelKeeper,
    pack: Arc<PhrasePack>,
    config: &'a Config,
    question: &'a str,
    challenge: Option<&'a str>,
    asked: Instant,
}

/// The worker: the question (while the model loads), the model, then one listening round,
/// within the timeout counted from the ask. `None` when stopped by the owner.
fn worker(
    job: Job<'_>,
    stop: &AtomicBool,
    tx: &Sender<SpeechEvent>,
) -> Result<Option<SpeechEvent>, SpeechError> {
    let config = job.config;
    // Speaking and listening are separate: a question that cannot be spoken (a voice missing,
    // text the synthesizer refuses) is still on the dialog, and the answer is still listened
    // for. Reporting it as voice unavailable would let a client's text drop the voice step.
    if let Err(e) = speak(job.question, config) {
        warn!("the question could not be spoken; listening for the answer anyway: {e}");
    }
    if stop.load(Ordering::Relaxed) {
        return Ok(None);
    }
    let deadline = job.asked + config.timeout();
    let lease = match job.keeper.lease(deadline, stop) {
        Ok(lease) => lease,
        Err(LeaseError::Stopped) => return Ok(None),
        Err(LeaseError::TimedOut) => return Ok(Some(SpeechEvent::Timeout)),
        Err(LeaseError::Failed(reason)) => {
            return Ok(Some(SpeechEvent::Unavailable {
                reason: Unavailable::NoModel(reason).to_string(),
            }));
        }
    };
    let remaining = deadline.saturating_duration_since(Instant::now());
    if remaining.is_zero() {
        return Ok(Some(SpeechEvent::Timeout));
    }
    let leased = job.asked.elapsed();
    let mut capture = Microphone::open(config)?;
    // Where the voice deadline's first seconds went, on a slow machine.
    debug!(
        leased_ms = leased.as_millis() as u64,
        open_ms = (job.asked.elapsed() - leased).as_millis() as u64,
        "microphone open"
    );
    let _ = tx.send(SpeechEvent::Listening { level: 0.0 });
    let mut loudest = 0.0f32;
    let cpu_before = thread_cpu();
    let round = listen_round(
        lease.model(),
        job.pack,
        config,
        job.challenge,
        remaining,
        &mut capture,
        stop,
        &mut |event| match event {
            RoundEvent::Level(level) => {
                loudest = loudest.max(level);
                let _ = tx.send(SpeechEvent::Listening { level });
            }
            RoundEvent::Missed { transcript } => {
                debug!(transcript, "utterance not understood as an answer");
                if config.missed_earcon {
                    play_earcon(config);
                }
                let _ = tx.send(SpeechEvent::Missed { transcript });
            }
        },
    )?;
    // Close the microphone before reporting, so it is never open after the answer.
    drop(capture);
    drop(lease);
    // Whether the answer reached the microphone, and whether recognition kept up with it.
    debug!(
        audio_ms = round.audio_ms,
        wall_ms = round.wall.as_millis() as u64,
        busy_ms = round.busy.as_millis() as u64,
        cpu_ms = thread_cpu().saturating_sub(cpu_before).as_millis() as u64,
        first_sound_audio_ms = round.first_sound.map(|(at, _)| at),
        first_sound_wall_ms = round.first_sound.map(|(_, wall)| wall.as_millis() as u64),
        loudest,
        transcript = %round.transcript,
        "listening ended"
    );
    Ok(match round.ending {
        Ending::Heard(h) => Some(SpeechEvent::Heard {
            answer: h.answer,
            transcript: h.transcript,
            utterances: h.utterances,
        }),
        Ending::Timeout | Ending::EndOfInput => Some(SpeechEvent::Timeout),
        Ending::Stopped => None,
    })
}

/// CPU time this thread has used: beside the round's wall and busy times it tells a slow
/// recognizer from one that waited for a CPU (zero where the clock cannot be read).
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec for the call to fill.
    if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } != 0 {
        return Duration::ZERO;
    }
    Duration::new(
        u64::try_from(ts.tv_sec).unwrap_or(0),
        u32::try_from(ts.tv_nsec).unwrap_or(0),
    )
}

/// One prompt's listening, polled from the compositor's event loop.
pub struct Listener {
    rx: Receiver<SpeechEvent>,
    stop: Arc<AtomicBool>,
    done: bool,
}

impl Listener {
    /// The next event, if one is waiting. Never blocks.
    pub fn poll(&mut self) -> Option<SpeechEvent> {
        if self.done {
            return None;
        }
        match self.rx.try_recv() {
            Ok(event) => {
                if !matches!(
                    event,
                    SpeechEvent::Listening { .. } | SpeechEvent::Missed { .. }
                ) {
                    self.done = true;
                }
                Some(event)
            }
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => {
                // The worker ended without a final event: treat as unavailable (fail closed).
                self.done = true;
                Some(SpeechEvent::Unavailable {
                    reason: "the voice worker stopped unexpectedly".into(),
                })
            }
        }
    }

    /// Whether the final event (`Heard`, `Timeout` or `Unavailable`) has been polled.
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// Stops listening now (the prompt was answered some other way or withdrawn).
    pub fn cancel(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        self.done = true;
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}
