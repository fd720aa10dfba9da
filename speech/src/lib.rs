//! Voice confirmation: cpal capture, resampling, noise suppression, recognition (Vosk grammars
//! for Korean and any installed Vosk model; Moonshine for English, feature `moonshine`), phrase
//! packs, spoken prompts and availability probing.
//!
//! The compositor builds one [`SpeechEngine`] at start-up, asks [`SpeechEngine::available`]
//! before offering voice, and for each prompt calls [`SpeechEngine::ask`] (the model loads while
//! the question is spoken and is released after `unload_after_s` without a voice prompt;
//! [`SpeechEngine::prepare`] starts the load earlier), then polls the returned [`Listener`] from its event loop for
//! [`SpeechEvent`]s. At exit it calls [`SpeechEngine::shutdown`] (or drops the engine), so no
//! thread is inside libvosk when the process ends. `pcp-listen` calls `listen::run`.
//!
//! Without the cargo feature `vosk` (on by default) only the config, the phrase packs, the
//! decision rule and the [`Voice`] trait are built: no libvosk, cpal or espeak-ng is needed.
//! The feature `moonshine` (on by default; it needs `vosk`'s capture) adds the English
//! recognizer and links libmoonshine and its ONNX Runtime; without it an English prompt finds
//! voice unavailable, naming the missing feature.

#[cfg(feature = "vosk")]
pub mod alsa_log;
#[cfg(feature = "vosk")]
pub mod capture;
pub mod config;
#[cfg(feature = "vosk")]
pub mod convert;
pub mod decide;
#[cfg(feature = "vosk")]
pub mod denoise;
#[cfg(feature = "vosk")]
pub mod engine;
pub mod error;
#[cfg(feature = "vosk")]
pub mod keeper;
#[cfg(feature = "vosk")]
pub mod listen;
#[cfg(feature = "vosk")]
pub mod model;
#[cfg(feature = "vosk")]
pub mod models;
#[cfg(feature = "moonshine")]
pub mod moonshine;
pub mod phrases;
#[cfg(feature = "vosk")]
pub mod prompt;
#[cfg(feature = "vosk")]
pub mod recognize;
pub mod sentences;
pub mod voice;

pub use config::Config;
#[cfg(feature = "vosk")]
pub use engine::{Listener, SpeechEngine};
pub use error::SpeechError;
#[cfg(feature = "vosk")]
pub use keeper::{KeeperState, ModelKeeper};
#[cfg(feature = "vosk")]
pub use listen::{ListenInput, ListenOptions, ListenReport, ReportAnswer};
#[cfg(feature = "vosk")]
pub use model::SpeechModel;
#[cfg(feature = "vosk")]
pub use models::{FoundModel, RecognizerModel, Utterances};
pub use phrases::{AnswerWords, PhrasePack, Reading, SpokenAnswer};
pub use voice::{Availability, Listening, SpeechEvent, Unavailable, Voice};

/// Prepares the process for voice: the English recognizer's ONNX Runtime runs each transcription
/// on the listening thread alone (see `pcp_moonshine::ONE_THREAD_ENV`; without this call it
/// still works, with a spinning thread pool that costs a one-CPU device about three times the
/// time). A program calls it first thing in `main`.
///
/// # Safety
/// As for [`std::env::set_var`]: no other thread may read or write the environment meanwhile,
/// so before any thread starts.
pub unsafe fn prepare_process() {
    #[cfg(feature = "moonshine")]
    // SAFETY: passed on from the caller.
    unsafe {
        pcp_moonshine::prefer_one_thread();
    }
}
