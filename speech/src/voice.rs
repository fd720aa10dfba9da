//! What a host needs of voice confirmation, with or without a recognizer built in: the
//! [`Voice`] trait (mirroring `pcp_haptics::Haptics`), the [`Listening`] handle of one prompt,
//! and the events and reasons they report. The Vosk engine ([`crate::SpeechEngine`], cargo
//! feature `vosk`) implements them; without that feature the crate has no native dependency.

use std::fmt;

use crate::config::Config;
use crate::phrases::{AnswerWords, SpokenAnswer};

/// What a listener reports. Exactly one of `Heard`, `Timeout` or `Unavailable` ends it;
/// `Listening` and `Missed` come before.
#[derive(Debug, Clone, PartialEq)]
pub enum SpeechEvent {
    /// Listening, with the input level (0 = silence or below −60 dBFS, 1 = full scale).
    Listening { level: f32 },
    /// An answer was understood.
    Heard {
        answer: SpokenAnswer,
        transcript: String,
        /// Utterances heard before the decision, the deciding one included.
        utterances: u32,
    },
    /// Something was said that decided nothing (other speech, doubt, decoder phases that
    /// disagree): the dialog asks again for the answer words, and listening goes on to the
    /// deadline. Not sent for silence.
    Missed { transcript: String },
    /// No answer within the timeout (the gate denies it `confirmation.timeout`).
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
    /// The dialog's fonts cannot draw `words`, answer or challenge words of the phrase pack:
    /// voice would ask for words nobody can read. `package` draws them.
    Undrawable { words: String, package: String },
}

impl fmt::Display for Unavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unavailable::Disabled => f.write_str("voice confirmation is disabled in config"),
            Unavailable::ModelLoading => f.write_str("the speech model is still loading"),
            Unavailable::NoModel(r) => write!(f, "no usable speech model: {r}"),
            Unavailable::NoInputDevice(r) => write!(f, "no microphone: {r}"),
            Unavailable::DeviceBusy(r) => write!(f, "microphone unavailable: {r}"),
            Unavailable::Undrawable { words, package } => write!(
                f,
                "the dialog's fonts cannot draw the phrase pack's words ({words}): install \
                 {package}"
            ),
        }
    }
}

/// Whether voice can run now.
pub type Availability = Result<(), Unavailable>;

/// Voice confirmation as a host uses it: probed, prepared, and asked once per prompt.
pub trait Voice: Send + Sync {
    /// `[speech]` as this engine runs it (its language, voice and sentences filled in).
    fn config(&self) -> &Config;

    /// The answer words the dialog names, from the phrase pack (`None`: no pack could be
    /// loaded, and voice is unavailable).
    fn answer_words(&self) -> Option<&AnswerWords>;

    /// Whether voice can run now (device work: call it off the decision path).
    fn available(&self) -> Availability;

    /// Starts loading what listening needs, in the background.
    fn prepare(&self);

    /// Every challenge word of the phrase pack (empty without a pack), for the dialog to check
    /// it can draw them.
    fn challenge_words(&self) -> &[String];

    /// The challenge word for a prompt of `risk_class` (`None`: its class needs none).
    fn challenge_for(&self, risk_class: &str) -> Result<Option<String>, Unavailable>;

    /// Speaks `question` and listens for the answer (with `challenge` said, when given).
    fn ask_with_challenge(&self, question: &str, challenge: Option<&str>) -> Box<dyn Listening>;

    /// Like [`Voice::ask_with_challenge`] with the word `challenge` read aloud in the question
    /// (`challenge_spoken`), whatever `speak_challenge` says: for a user who cannot see the
    /// dialog (a screen reader runs).
    fn ask_reading_challenge(&self, question: &str, challenge: &str) -> Box<dyn Listening>;
}

/// One prompt's listener: polled without blocking until it ends.
pub trait Listening: Send {
    /// The next event, if one is ready.
    fn poll(&mut self) -> Option<SpeechEvent>;

    /// Whether it has ended (an answer, a timeout, or voice lost).
    fn is_done(&self) -> bool;

    /// Stops listening (the microphone closes).
    fn cancel(&mut self);
}
