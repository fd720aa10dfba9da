//! Which recognizer listens, chosen by the phrase pack's language: a Vosk grammar model (Korean,
//! and any Vosk model a user installs) or Moonshine (English, shipped with the package; cargo
//! feature `moonshine`). Owns finding a model for a language, loading it, and the two traits
//! the listening round uses whatever the recognizer: [`RecognizerModel`] (a loaded model) and
//! [`Utterances`] (one prompt's recognizer over it).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::config::Config;
use crate::error::SpeechError;
use crate::model::{SYSTEM_MODELS, SpeechModel, project_cache_dir, vosk_model_in};
use crate::phrases::PhrasePack;
use crate::recognize::{AnswerRecognizer, Heard};

/// A loaded model, shared by the prompts that listen with it.
pub trait RecognizerModel: Send + Sync {
    /// Which recognizer it is (`vosk`, `moonshine`), for logs.
    fn kind(&self) -> &'static str;

    /// Where it was loaded from.
    fn path(&self) -> &Path;

    /// The rate (Hz) its audio must have.
    fn sample_rate(&self) -> u32;

    /// Fails when `pack` does not fit the model (a Vosk grammar word it does not know).
    fn check_pack(&self, pack: &PhrasePack) -> Result<(), SpeechError>;

    /// A recognizer for one prompt: answers from `pack`, an approval needing `challenge` when
    /// one is shown.
    fn recognizer<'a>(
        &'a self,
        pack: Arc<PhrasePack>,
        config: &Config,
        challenge: Option<&str>,
    ) -> Result<Box<dyn Utterances + 'a>, SpeechError>;
}

/// One prompt's recognizer: fed audio at the model's rate, it judges each utterance and says
/// when an answer is decided.
pub trait Utterances {
    /// Feeds audio; `Some` once an answer is decided (the caller stops feeding then).
    fn feed(&mut self, audio: &[i16]) -> Result<Option<Heard>, SpeechError>;

    /// Ends a finite input: judges what is still held.
    fn finish(&mut self) -> Result<Option<Heard>, SpeechError>;

    /// The last non-empty thing heard.
    fn last_transcript(&self) -> &str;

    /// The transcript of an utterance heard since the last call that decided nothing and left
    /// no approval waiting for its challenge word.
    fn take_missed(&mut self) -> Option<String>;

    /// One line per utterance judged so far, for evaluation and logs.
    fn judged(&self) -> &[String];
}

impl<T: RecognizerModel + ?Sized> RecognizerModel for Arc<T> {
    fn kind(&self) -> &'static str {
        (**self).kind()
    }
    fn path(&self) -> &Path {
        (**self).path()
    }
    fn sample_rate(&self) -> u32 {
        (**self).sample_rate()
    }
    fn check_pack(&self, pack: &PhrasePack) -> Result<(), SpeechError> {
        (**self).check_pack(pack)
    }
    fn recognizer<'a>(
        &'a self,
        pack: Arc<PhrasePack>,
        config: &Config,
        challenge: Option<&str>,
    ) -> Result<Box<dyn Utterances + 'a>, SpeechError> {
        (**self).recognizer(pack, config, challenge)
    }
}

impl RecognizerModel for SpeechModel {
    fn kind(&self) -> &'static str {
        "vosk"
    }
    fn path(&self) -> &Path {
        SpeechModel::path(self)
    }
    fn sample_rate(&self) -> u32 {
        SpeechModel::sample_rate(self)
    }
    fn check_pack(&self, pack: &PhrasePack) -> Result<(), SpeechError> {
        SpeechModel::check_pack(self, pack)
    }
    fn recognizer<'a>(
        &'a self,
        pack: Arc<PhrasePack>,
        config: &Config,
        challenge: Option<&str>,
    ) -> Result<Box<dyn Utterances + 'a>, SpeechError> {
        Ok(Box::new(AnswerRecognizer::with_challenge(
            self, pack, config, challenge,
        )?))
    }
}

impl Utterances for AnswerRecognizer {
    fn feed(&mut self, audio: &[i16]) -> Result<Option<Heard>, SpeechError> {
        AnswerRecognizer::feed(self, audio)
    }
    fn finish(&mut self) -> Result<Option<Heard>, SpeechError> {
        AnswerRecognizer::finish(self)
    }
    fn last_transcript(&self) -> &str {
        AnswerRecognizer::last_transcript(self)
    }
    fn take_missed(&mut self) -> Option<String> {
        AnswerRecognizer::take_missed(self)
    }
    fn judged(&self) -> &[String] {
        AnswerRecognizer::judged(self)
    }
}

/// A model found on disk, by the recognizer that reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FoundModel {
    /// A Vosk model directory (`am/`, `conf/`, `graph/`).
    Vosk(PathBuf),
    /// A Moonshine model directory (`encoder_model.ort`, `decoder_model_merged.ort`,
    /// `tokenizer.bin`).
    Moonshine(PathBuf),
}

impl FoundModel {
    /// The model's directory.
    pub fn path(&self) -> &Path {
        match self {
            FoundModel::Vosk(p) | FoundModel::Moonshine(p) => p,
        }
    }
}

/// The files a Moonshine model directory holds.
pub const MOONSHINE_FILES: [&str; 3] = [
    "encoder_model.ort",
    "decoder_model_merged.ort",
    "tokenizer.bin",
];

/// Where the package installs its Moonshine models, relative to the folder of the running
/// program (`/usr/bin` → `/usr/share/pcp/models`), then absolute.
const PACKAGE_MODELS: &str = "../share/pcp/models";
/// Where a build copies the setup's Moonshine model, relative to the folder of the running
/// program: beside the recognizers' libraries (`<target>/<profile>/pcp-lib/models`, found from
/// the profile folder's binaries and from `deps/` and `examples/`, as the rpath finds the
/// libraries). A user who cannot enter the setup user's cache finds it there.
const BUILD_MODELS: [&str; 2] = ["pcp-lib/models", "../pcp-lib/models"];
pub const SYSTEM_MOONSHINE_MODELS: &str = "/usr/share/pcp/models";

/// Finds the model for `lang`: the configured directory (which must exist: no silent fallback;
/// a Moonshine one when it holds `encoder_model.ort`), else a Vosk model installed for the
/// language (`~/.cache/vosk/`, the project cache, [`SYSTEM_MODELS`]: a user's or an
/// administrator's choice wins), else a Moonshine model for it (the project cache, the build's
/// copy beside the program, the package's folder beside the program,
/// [`SYSTEM_MOONSHINE_MODELS`]).
pub fn find(configured: Option<&Path>, lang: &str) -> Result<FoundModel, SpeechError> {
    if let Some(dir) = configured {
        if !dir.is_dir() {
            return Err(SpeechError::NoModel {
                lang: lang.into(),
                searched: format!("{} (from config: not a directory)", dir.display()),
            });
        }
        return Ok(if dir.join(MOONSHINE_FILES[0]).is_file() {
            FoundModel::Moonshine(dir.to_path_buf())
        } else {
            FoundModel::Vosk(dir.to_path_buf())
        });
    }
    let mut vosk_roots = Vec::new();
    if let Some(home) = std::env::var_os("HOME").filter(|v| !v.is_empty()) {
        vosk_roots.push(PathBuf::from(home).join(".cache").join("vosk"));
    }
    let cache = project_cache_dir().map(|c| c.join("models"));
    vosk_roots.extend(cache.clone());
    vosk_roots.push(PathBuf::from(SYSTEM_MODELS));
    for root in &vosk_roots {
        if let Some(found) = vosk_model_in(root, lang) {
            return Ok(FoundModel::Vosk(found));
        }
    }
    let mut moonshine_roots: Vec<PathBuf> = cache.into_iter().collect();
    if let Some(bin) = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(Path::to_path_buf))
    {
        moonshine_roots.extend(BUILD_MODELS.iter().map(|m| bin.join(m)));
        moonshine_roots.push(bin.join(PACKAGE_MODELS));
    }
    moonshine_roots.push(PathBuf::from(SYSTEM_MOONSHINE_MODELS));
    for root in &moonshine_roots {
        if let Some(found) = moonshine_model_in(root, lang) {
            return Ok(FoundModel::Moonshine(found));
        }
    }
    Err(SpeechError::NoModel {
        lang: lang.into(),
        searched: vosk_roots
            .iter()
            .map(|r| format!("{} (vosk-model-*)", r.display()))
            .chain(
                moonshine_roots
                    .iter()
                    .map(|r| format!("{} (moonshine-*)", r.display())),
            )
            .collect::<Vec<_>>()
            .join(", "),
    })
}

/// A complete `moonshine-<arch>-<lang>` directory under `root` (`moonshine-tiny-en`); the last
/// by name.
fn moonshine_model_in(root: &Path, lang: &str) -> Option<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(root)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("moonshine-") && n.rsplit('-').next() == Some(lang))
                && MOONSHINE_FILES.iter().all(|f| p.join(f).is_file())
        })
        .collect();
    found.sort();
    found.pop()
}

/// Loads `found` with `config`'s options for its recognizer (Vosk's `decoder_options`,
/// Moonshine's `moonshine_options`).
pub fn load(found: &FoundModel, config: &Config) -> Result<Arc<dyn RecognizerModel>, SpeechError> {
    match found {
        FoundModel::Vosk(dir) => Ok(Arc::new(SpeechModel::load_with(
            dir,
            &config.decoder_options,
        )?)),
        #[cfg(feature = "moonshine")]
        FoundModel::Moonshine(dir) => Ok(Arc::new(crate::moonshine::MoonshineModel::load(
            dir, config,
        )?)),
        #[cfg(not(feature = "moonshine"))]
        FoundModel::Moonshine(dir) => Err(SpeechError::BrokenModel {
            path: dir.clone(),
            reason: "this program was built without the Moonshine recognizer (pcp-speech \
                     feature `moonshine`)"
                .into(),
        }),
    }
}

/// The model `config` names or discovers for its language, loaded as the compositor listens
/// with it.
pub fn load_configured(config: &Config) -> Result<Arc<dyn RecognizerModel>, SpeechError> {
    load(&find(config.model_dir(), &config.language())?, config)
}
