//! The crate's error type: every way voice confirmation can fail, each naming what was wrong and
//! where (a path, a device name, a phrase), so the compositor can log it and deny (fail closed).

use std::path::PathBuf;

/// Everything that can go wrong in `pcp-speech`.
#[derive(Debug, thiserror::Error)]
pub enum SpeechError {
    /// No Vosk model directory was found in any of the searched places.
    #[error(
        "no Vosk model for language `{lang}`: looked in {searched} (set `[speech] model`, or run `cargo xtask setup`)"
    )]
    NoModel { lang: String, searched: String },

    /// A model directory exists but is not a usable Vosk model.
    #[error("Vosk model at {path} is broken: {reason}")]
    BrokenModel { path: PathBuf, reason: String },

    /// The background load failed earlier; the reason is its error.
    #[error("voice model unavailable: {0}")]
    ModelUnavailable(String),

    /// The model is still loading in the background.
    #[error("the Vosk model is still loading")]
    ModelLoading,

    /// A phrase pack is missing, unreadable or invalid.
    #[error("phrase pack {source_name}: {reason}")]
    PhrasePack { source_name: String, reason: String },

    /// A grammar word is not in the model's vocabulary (Vosk would silently drop it).
    #[error("phrase pack `{lang}`: word(s) `{word}` not in the vocabulary of the model at {model}")]
    UnknownWord {
        lang: String,
        word: String,
        model: PathBuf,
    },

    /// The recognizer (Vosk or Moonshine) could not be made or failed on the audio; the reason
    /// names which and why.
    #[error("the speech recognizer failed: {reason}")]
    Recognizer { reason: String },

    /// No audio device with that name, or no default one.
    #[error("no {direction} audio device {name}")]
    NoDevice {
        direction: &'static str,
        name: String,
    },

    /// The device exists but cannot be used now (busy, unplugged, or refuses every format).
    #[error("{direction} audio device `{name}` is unavailable: {reason}")]
    DeviceUnavailable {
        direction: &'static str,
        name: String,
        reason: String,
    },

    /// The audio stream failed while running.
    #[error("audio stream on `{name}` failed: {reason}")]
    Stream { name: String, reason: String },

    /// A WAV file could not be read or has a format we cannot use.
    #[error("WAV file {path}: {reason}")]
    Wav { path: PathBuf, reason: String },

    /// The resampler could not be built or failed.
    #[error("resampling {from} Hz to {to} Hz: {reason}")]
    Resample { from: u32, to: u32, reason: String },

    /// espeak-ng could not synthesize the question.
    #[error("speech synthesis (espeak-ng voice `{voice}`): {reason}")]
    Synthesis { voice: String, reason: String },

    /// The configuration has a bad value.
    #[error("[speech] config: {0}")]
    Config(String),

    /// Reading a file failed.
    #[error("reading {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}
