//! What the compositor uses: a [`SpeechEngine`] made once at start-up (model loading in the
//! background), an availability check with the reason voice cannot run, and per prompt a
//! [`Listener`] whose worker thread speaks the question, listens, and reports [`SpeechEvent`]s
//! through a channel the compositor polls without blocking.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, TryRecvError, channel};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};

use tracing::warn;

use crate::capture::{Capture, probe_input};
use crate::config::Config;
use crate::error::SpeechError;
use crate::listen::{Ending, listen_round};
use crate::model::{ModelLoader, ModelState, SpeechModel, find_model};
use crate::phrases::{PhrasePack, SpokenAnswer};
use crate::prompt::speak;

/// What a listener reports. Exactly one of `Heard`, `Timeout` or `Unavailable` ends it.
#[derive(Debug, Clone, PartialEq)]
pub enum SpeechEvent {
    /// Listening, with the input level (0 = silence or below −60 dBFS, 1 = full scale).
    Listening { level: f32 },
    /// An answer was understood.
    Heard {
        answer: SpokenAnswer,
        transcript: String,
    },
    /// No answer within the timeout (seed 000: deny with `confirmation.timeout`).
    Timeout,
    /// Voice could not run; deny or fall back, and log the reason.
    Unavailable { reason: String },
}

/// Why voice cannot run now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unavailable {
    /// `[speech] enabled = false`.
    Disabled,
    /// The model is still loading.
    ModelLoading,
    /// No model, a broken one, or a phrase pack that does not fit it.
    NoModel(String),
    /// No input device (or no such named device).
    NoInputDevice(String),
    /// The input device exists but cannot be opened (busy, unplugged, no usable format).
    DeviceBusy(String),
}

impl fmt::Display for Unavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unavailable::Disabled => f.write_str("voice confirmation is disabled in config"),
            Unavailable::ModelLoading => f.write_str("the speech model is still loading"),
            Unavailable::NoModel(r) => write!(f, "no usable speech model: {r}"),
            Unavailable::NoInputDevice(r) => write!(f, "no microphone: {r}"),
            Unavailable::DeviceBusy(r) => write!(f, "microphone unavailable: {r}"),
        }
    }
}

/// Whether voice can run now.
pub type Availability = Result<(), Unavailable>;

/// Voice confirmation for the compositor: config, phrase pack and the (loading) model.
///
/// **At exit**, call [`shutdown`](Self::shutdown) (dropping the engine does the same): no thread
/// may still be inside libvosk when the process ends, or libvosk's teardown can crash it
/// (SIGSEGV). Shutdown stops every listener's worker, then waits for the workers and for a model
/// load still under way: up to the load time (~2 s) or the rest of a question being spoken.
pub struct SpeechEngine {
    config: Config,
    pack: Option<Arc<PhrasePack>>,
    loader: ModelLoader,
    /// The listeners' worker threads that may still run, with their stop flags.
    workers: Mutex<Vec<Worker>>,
}

/// A listener's worker thread, as the engine tracks it for shutdown.
struct Worker {
    stop: Arc<AtomicBool>,
    handle: JoinHandle<()>,
}

impl SpeechEngine {
    /// Starts loading the model in the background. Never fails: problems show up in
    /// [`available`](Self::available) and as `Unavailable` events.
    pub fn start(config: Config) -> SpeechEngine {
        let pack = load_pack(&config);
        let loader = match (&pack, find_model(config.model_dir(), &config.language)) {
            (Err(e), _) => ModelLoader::failed(e.to_string()),
            (_, Err(e)) => ModelLoader::failed(e.to_string()),
            (Ok(pack), Ok(dir)) => ModelLoader::spawn(dir, pack.clone()),
        };
        if let ModelState::Failed(reason) = loader.state() {
            warn!("voice confirmation unavailable: {reason}");
        }
        SpeechEngine {
            config,
            pack: pack.ok().map(Arc::new),
            loader,
            workers: Mutex::new(Vec::new()),
        }
    }

    /// An engine over a model that is already loaded (tests, benches, and hosts sharing one).
    pub fn with_model(
        config: Config,
        model: Arc<SpeechModel>,
    ) -> Result<SpeechEngine, SpeechError> {
        let pack = load_pack(&config)?;
        model.check_pack(&pack)?;
        Ok(SpeechEngine {
            config,
            pack: Some(Arc::new(pack)),
            loader: ModelLoader::ready(model),
            workers: Mutex::new(Vec::new()),
        })
    }

    /// The engine's configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Whether voice can run now, and if not, why. Probes the input device (cheap, no stream).
    pub fn available(&self) -> Availability {
        self.ready_model()?;
        match probe_input(&self.config) {
            Ok(()) => Ok(()),
            Err(SpeechError::NoDevice { name, .. }) => Err(Unavailable::NoInputDevice(name)),
            Err(e) => Err(Unavailable::DeviceBusy(e.to_string())),
        }
    }

    fn ready_model(&self) -> Result<(Arc<SpeechModel>, Arc<PhrasePack>), Unavailable> {
        if !self.config.enabled {
            return Err(Unavailable::Disabled);
        }
        match (self.loader.state(), &self.pack) {
            (ModelState::Loading, _) => Err(Unavailable::ModelLoading),
            (ModelState::Failed(r), _) => Err(Unavailable::NoModel(r)),
            (ModelState::Ready(_), None) => Err(Unavailable::NoModel("no phrase pack".into())),
            (ModelState::Ready(m), Some(p)) => Ok((m, Arc::clone(p))),
        }
    }

    /// Speaks `question` (if `speak_prompt`), then listens for an answer on a worker thread.
    /// Poll the returned listener; dropping it stops listening and closes the microphone.
    pub fn ask(&self, question: &str) -> Listener {
        let (tx, rx) = channel();
        let stop = Arc::new(AtomicBool::new(false));
        let listener = Listener {
            rx,
            stop: Arc::clone(&stop),
            done: false,
        };
        let (model, pack) = match self.ready_model() {
            Ok(ready) => ready,
            Err(why) => {
                let _ = tx.send(SpeechEvent::Unavailable {
                    reason: why.to_string(),
                });
                return listener;
            }
        };
        let config = self.config.clone();
        let question = question.to_string();
        let worker_tx = tx.clone();
        let worker_stop = Arc::clone(&stop);
        let spawned = thread::Builder::new()
            .name("pcp-voice".into())
            .spawn(move || {
                let event = match worker(&model, pack, &config, &question, &worker_stop, &worker_tx)
                {
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
    /// listeners then report `Unavailable`. Voice is unusable afterwards only if the model was
    /// never loaded; calling it twice is harmless.
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
        self.loader.join();
    }
}

impl Drop for SpeechEngine {
    fn drop(&mut self) {
        self.shutdown();
    }
}

fn load_pack(config: &Config) -> Result<PhrasePack, SpeechError> {
    let dir = (!config.phrases_dir.as_os_str().is_empty()).then_some(config.phrases_dir.as_path());
    PhrasePack::load(dir, &config.language)
}

/// The worker: question, then one listening round. `None` when stopped by the owner.
fn worker(
    model: &SpeechModel,
    pack: Arc<PhrasePack>,
    config: &Config,
    question: &str,
    stop: &AtomicBool,
    tx: &Sender<SpeechEvent>,
) -> Result<Option<SpeechEvent>, SpeechError> {
    speak(question, config)?;
    if stop.load(Ordering::Relaxed) {
        return Ok(None);
    }
    let mut capture = Capture::open(config)?;
    let _ = tx.send(SpeechEvent::Listening { level: 0.0 });
    let round = listen_round(
        model,
        pack,
        config,
        config.timeout(),
        &mut capture,
        stop,
        &mut |level| {
            let _ = tx.send(SpeechEvent::Listening { level });
        },
    )?;
    // Close the microphone before reporting, so it is never open after the answer.
    drop(capture);
    Ok(match round.ending {
        Ending::Heard(h) => Some(SpeechEvent::Heard {
            answer: h.answer,
            transcript: h.transcript,
        }),
        Ending::Timeout | Ending::EndOfInput => Some(SpeechEvent::Timeout),
        Ending::Stopped => None,
    })
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
                if !matches!(event, SpeechEvent::Listening { .. }) {
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
