//! Voice confirmation: cpal capture, resampling, Vosk grammar recognition, phrase packs, spoken
//! prompts and availability probing.
//!
//! The compositor builds one [`SpeechEngine`] at start-up, asks [`SpeechEngine::available`]
//! before offering voice, and for each prompt calls [`SpeechEngine::ask`] (the model loads while
//! the question is spoken and is released after `unload_after_s` without a voice prompt;
//! [`SpeechEngine::prepare`] starts the load earlier), then polls the returned [`Listener`] from its event loop for
//! [`SpeechEvent`]s. At exit it calls [`SpeechEngine::shutdown`] (or drops the engine), so no
//! thread is inside libvosk when the process ends. `pcp-listen` calls [`listen::run`].

pub mod alsa_log;
pub mod capture;
pub mod config;
pub mod convert;
pub mod decide;
pub mod error;
pub mod keeper;
pub mod listen;
pub mod listener;
pub mod model;
pub mod phrases;
pub mod prompt;
pub mod recognize;

pub use config::Config;
pub use error::SpeechError;
pub use keeper::{KeeperState, ModelKeeper};
pub use listen::{ListenInput, ListenOptions, ListenReport, ReportAnswer};
pub use listener::{Availability, Listener, SpeechEngine, SpeechEvent, Unavailable};
pub use model::SpeechModel;
pub use phrases::{AnswerWords, PhrasePack, Reading, SpokenAnswer};
