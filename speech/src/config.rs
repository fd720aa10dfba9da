//! The `[speech]` section of the compositor config: model, language, devices, timeout, decision
//! thresholds and the spoken question. Every key has a default; `assets/config/speech.toml` lists
//! them all with comments.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::SpeechError;
use crate::phrases::PhrasePack;
use crate::sentences::{
    CHALLENGE_HINT_PLACEHOLDERS, CHALLENGE_SPOKEN_PLACEHOLDERS, QUESTION_PLACEHOLDERS,
};

mod check;

/// The default quiet level: −40 dBFS, below speech and above a quiet room.
pub const DEFAULT_QUIET_DBFS: f32 = -40.0;

/// The default number of decoder phases (see `recognize`'s module docs).
pub const DEFAULT_DECODER_PHASES: u32 = 2;

/// The decoder options used unless `[speech] decoder_options` says otherwise: a lattice beam wide
/// enough for the n-best margin rules to see rivals up to 6 log-likelihood units behind (the
/// model's own 2.0 hides every rival past 2), and Vosk's endpoint after 0.25 s of trailing
/// silence instead of 0.5 s (1.0 s for a less sure ending), which ends an answer sooner.
pub const DEFAULT_DECODER_OPTIONS: &[&str] = &[
    "--lattice-beam=6.0",
    "--endpoint.rule2.min-trailing-silence=0.25",
    "--endpoint.rule3.min-trailing-silence=0.5",
];

/// The Moonshine options used unless `[speech] moonshine_options` says otherwise: the library's
/// own transcription every `transcription_interval` seconds is put off past any prompt's window
/// (the recognizer asks for a transcription when the speaker falls quiet; the library's voice
/// activity detector still runs on every block).
pub const DEFAULT_MOONSHINE_OPTIONS: &[&str] = &["transcription_interval=60"];

/// Whether `code` looks like a language code: 2 or 3 lowercase ASCII letters (ISO 639).
fn is_language_code(code: &str) -> bool {
    (2..=3).contains(&code.len()) && code.bytes().all(|b| b.is_ascii_lowercase())
}

/// The language of a POSIX locale name (`ko_KR.UTF-8` is `ko`, `en_US` is `en`); `C`, `POSIX`,
/// an empty name and anything that is not a language code are English, the C locale's.
pub fn language_of_locale(locale: &str) -> String {
    let code = locale
        .split(['_', '.', '@'])
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    if is_language_code(&code) {
        code
    } else {
        "en".into()
    }
}

/// The gate's risk classes, by the names `[speech] challenge` lists.
pub const RISK_CLASSES: &[&str] = &["routine", "privileged", "destructive", "system"];

/// Voice confirmation settings (`[speech]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// Whether voice confirmation may be offered at all.
    pub enabled: bool,
    /// Language of the phrase pack and model (`ko`, `en`, ...); empty means the user's locale
    /// (see [`Config::language`]).
    pub language: String,
    /// Model directory, Vosk or Moonshine (see [`crate::models::find`]); empty means discover
    /// (a Vosk model for the language, else its Moonshine model).
    pub model: PathBuf,
    /// Directory of phrase packs (`<language>.toml`); empty means the packs built into the crate.
    pub phrases_dir: PathBuf,
    /// Input device name; empty means the system default.
    pub input_device: String,
    /// Output device for the spoken question; empty means the system default.
    pub output_device: String,
    /// Capture rate to ask the device for, in Hz; 0 means the device's default.
    pub capture_rate: u32,
    /// Capture channel count to ask the device for; 0 means the device's default.
    pub capture_channels: u16,
    /// How long to wait for an answer, in milliseconds (the rule: 10 s). Counted both in captured
    /// audio and in wall time; whichever ends first times out.
    pub timeout_ms: u64,
    /// How long every phase's partial result must stay unchanged, in milliseconds of audio (with
    /// the speaker quiet as long), before the utterance is ended and judged by Vosk's final
    /// result, without waiting for Vosk's end of utterance.
    pub stable_partial_ms: u64,
    /// A 10 ms frame whose RMS level (dBFS) is at or below this counts as quiet (the level of
    /// each frame, not of single samples, so light noise is quiet): an utterance is ended on a stable
    /// partial only once the speaker has been quiet for `stable_partial_ms`.
    pub quiet_dbfs: f32,
    /// When the speaker has been quiet this long (ms of audio), the utterance is ended and Vosk's
    /// final result judged whatever the partials say (Vosk itself waits 5 s of silence for an
    /// utterance it has no word for yet).
    pub quiet_final_ms: u64,
    /// How many recognizers decode the audio, each shifted by an equal part of the model's
    /// output frame period, so a short word is heard wherever it falls in that period (see
    /// `recognize`). 1..=4; each costs one recognizer's CPU.
    pub decoder_phases: u32,
    /// Each decoder phase decodes on a thread of its own, so phases cost wall time only where
    /// there is no core to spare. Off: one after the other on one thread, in an order that
    /// repeats exactly (Kaldi dithers with libc's process-wide `rand()`).
    pub parallel_phases: bool,
    /// 0: the recognizer hears everything from the moment the microphone opens. Above 0: the
    /// silence before the first sound louder than `quiet_dbfs` is held back and only its last
    /// this many milliseconds reach the recognizer, with that sound; for a device whose
    /// recognizer runs slower than real time, where every second of silence before the answer
    /// would delay it by more than a second. 0 or 100..=5000.
    pub lead_in_ms: u64,
    /// Noise suppression (RNNoise, see `denoise`) on the captured audio before the resampler to
    /// the model's rate; off by default for the false approvals it let through on the evaluation
    /// set (see docs/voice-tuning.md).
    pub denoise: bool,
    /// Extra `--key=value` options for the model's `conf/model.conf` (Kaldi decoder and
    /// endpoint settings), applied on a private copy of that file when the model loads.
    pub decoder_options: Vec<String>,
    /// Options for the English recognizer (Moonshine), `name=value` each, handed to its library
    /// when the model loads (`vad_threshold`, `vad_window_duration`, `transcription_interval`,
    /// `max_tokens_per_second`, ...; the library refuses a name it does not know).
    pub moonshine_options: Vec<String>,
    /// Moonshine: once the speaker has been quiet this many milliseconds of audio, what was said
    /// is transcribed ahead of `quiet_final_ms`, so the decision can come as soon as the quiet
    /// has lasted that long (it stands only if nothing louder than `quiet_dbfs` came after). 0
    /// transcribes at `quiet_final_ms`; otherwise less than `quiet_final_ms`.
    pub transcribe_after_quiet_ms: u64,
    /// Moonshine: how many views of an utterance an approval needs, all writing the same words
    /// (1..=3). The first is the stream; the others transcribe the utterance again from 0.25 s
    /// and 0.5 s before it began. A word the model only half hears reads differently from
    /// another start; a clear answer reads the same. A refusal needs the first view only.
    pub moonshine_views: u32,
    /// Audio block size read from a WAV file (`listen --wav`, tests), in milliseconds; the
    /// microphone's blocks follow `capture_buffer_ms`.
    pub block_ms: u32,
    /// Blocks the capture callback may queue before it waits for the recognizer.
    pub queue_blocks: usize,
    /// The microphone's ALSA capture buffer, in milliseconds: how long the audio thread may
    /// fall behind (a busy or emulated CPU) before the capture overruns, which fails the stream.
    /// cpal splits it into four periods, so the capture callback hands on a quarter of it at a
    /// time. A device that refuses it runs at its own default (100 ms, 25 ms periods). A
    /// capture that delivers nothing for twice this long is taken as failed and opened again.
    pub capture_buffer_ms: u32,
    /// How many times one prompt's listening opens the microphone again after its stream failed
    /// (an overrun on a busy system leaves an ALSA capture stream failed for good); past that,
    /// voice is lost for the prompt and the overlay takes over.
    pub capture_reopen: u32,
    /// How often a `Listening { level }` event is sent, in milliseconds of audio.
    pub level_interval_ms: u64,
    /// Speak the question before listening.
    pub speak_prompt: bool,
    /// espeak-ng voice for the question (a voice name such as `ko` or `en-us`); empty means the
    /// phrase pack's.
    pub voice: String,
    /// Speaking rate of the question, in words per minute (espeak-ng's 80..=450).
    pub speech_rate_wpm: u32,
    /// Pitch of the question, 0..=100 (50 is espeak-ng's normal). Kept low for a calm tone.
    pub pitch: u32,
    /// The question: `{action}` is replaced by the action's description, `{approve}`, `{deny}`
    /// and `{cancel}` by the phrase pack's answer words. Empty means the pack's question.
    pub question_template: String,
    /// Silence after the question before the microphone opens, in milliseconds, so the tail of
    /// the question still in the device buffer is not heard as an answer.
    pub after_prompt_ms: u64,
    /// Release the model after this many seconds without a voice prompt (it is loaded again
    /// when the next one begins). 0 keeps it loaded once loaded.
    pub unload_after_s: u64,
    /// Load the model when the engine starts instead of when the first voice prompt begins: the
    /// first prompt then finds it loaded, on a device where loading takes longer than the
    /// voice step's `timeout_ms`. Costs the model's memory from the start.
    pub load_at_start: bool,
    /// Risk classes whose prompts show a challenge word that the spoken approval must contain.
    pub challenge: Vec<String>,
    /// Read the challenge word aloud in the question (for users who cannot see the dialog; it
    /// lets anything that hears the question answer it too).
    pub speak_challenge: bool,
    /// Read the challenge word aloud while a screen reader runs, whatever `speak_challenge`
    /// says (it is never put on the accessibility bus).
    pub speak_challenge_for_screen_readers: bool,
    /// Added to the question of a challenge prompt when `speak_challenge` is false: tells the
    /// user to say the word shown on the dialog. Takes the answer words like the question;
    /// empty means the pack's.
    pub challenge_hint: String,
    /// Added to the question of a challenge prompt when `speak_challenge` is true; `{word}` is
    /// replaced by the word. Empty means the pack's.
    pub challenge_spoken: String,
    /// Alternatives Vosk returns per utterance (n-best); the margin rules compare them. 1..=20.
    pub alternatives: u16,
    /// How far (natural log-likelihood) the best reading of an approval must lead every
    /// alternative that reads differently, in every decoder phase.
    pub approve_margin: f32,
    /// The same for deny and cancel (a wrong refusal only denies, so it may be looser).
    pub refuse_margin: f32,
    /// On a challenge prompt, how long after an approval said alone (ms) the shown word may
    /// still follow as its own utterance ("네. … 기차").
    pub challenge_pause_ms: u64,
    /// Play a short cue when something was said that decided nothing (the dialog says "didn't
    /// catch that" with the answer words either way). A quiet setup turns it off with
    /// `speak_prompt`.
    pub missed_earcon: bool,
    /// The cue's first tone in Hz (the second is three quarters of it), 200..=4000.
    pub earcon_hz: u32,
    /// Each tone's length in milliseconds, 20..=1000.
    pub earcon_ms: u32,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            enabled: true,
            language: String::new(),
            model: PathBuf::new(),
            phrases_dir: PathBuf::new(),
            input_device: String::new(),
            output_device: String::new(),
            capture_rate: 0,
            capture_channels: 0,
            timeout_ms: 10_000,
            stable_partial_ms: 100,
            quiet_dbfs: DEFAULT_QUIET_DBFS,
            quiet_final_ms: 200,
            decoder_phases: DEFAULT_DECODER_PHASES,
            parallel_phases: true,
            lead_in_ms: 0,
            denoise: false,
            decoder_options: DEFAULT_DECODER_OPTIONS
                .iter()
                .map(|o| (*o).to_string())
                .collect(),
            moonshine_options: DEFAULT_MOONSHINE_OPTIONS
                .iter()
                .map(|o| (*o).to_string())
                .collect(),
            transcribe_after_quiet_ms: 100,
            moonshine_views: 3,
            block_ms: 20,
            queue_blocks: 256,
            capture_buffer_ms: 400,
            capture_reopen: 3,
            level_interval_ms: 100,
            speak_prompt: true,
            voice: String::new(),
            speech_rate_wpm: 150,
            pitch: 40,
            question_template: String::new(),
            after_prompt_ms: 150,
            unload_after_s: 300,
            load_at_start: false,
            challenge: vec!["destructive".into(), "system".into()],
            speak_challenge: false,
            speak_challenge_for_screen_readers: true,
            challenge_hint: String::new(),
            challenge_spoken: String::new(),
            alternatives: 8,
            approve_margin: 0.4,
            refuse_margin: 0.25,
            challenge_pause_ms: 1500,
            missed_earcon: true,
            earcon_hz: 880,
            earcon_ms: 90,
        }
    }
}

impl Config {
    /// Parses a `[speech]` section given as TOML text; `origin` names it in errors.
    pub fn from_toml(text: &str, origin: &str) -> Result<Config, SpeechError> {
        let config: Config =
            toml::from_str(text).map_err(|e| SpeechError::Config(format!("{origin}: {e}")))?;
        config.validate()?;
        Ok(config)
    }

    /// Reads and parses a file holding a `[speech]` section's keys.
    pub fn from_file(path: &Path) -> Result<Config, SpeechError> {
        let text = std::fs::read_to_string(path).map_err(|source| SpeechError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Self::from_toml(&text, &path.display().to_string())
    }

    /// The answer timeout as a duration.
    pub fn timeout(&self) -> Duration {
        Duration::from_millis(self.timeout_ms)
    }

    /// The language whose pack and model are used: `language`, or when it is empty the user's
    /// locale (`LC_ALL`, then `LC_MESSAGES`, then `LANG`; `C` and `POSIX` are English).
    pub fn language(&self) -> String {
        if !self.language.is_empty() {
            return self.language.clone();
        }
        let locale = ["LC_ALL", "LC_MESSAGES", "LANG"]
            .iter()
            .filter_map(|name| std::env::var(name).ok())
            .find(|value| !value.is_empty())
            .unwrap_or_default();
        language_of_locale(&locale)
    }

    /// The defaults with `language` set, whatever the locale says (tests, the demo and the VM
    /// say which pack and model they use).
    pub fn for_language(language: &str) -> Config {
        Config {
            language: language.into(),
            ..Config::default()
        }
    }

    /// This config with `language` resolved (see [`Config::language`]).
    pub fn with_language(&self) -> Config {
        Config {
            language: self.language(),
            ..self.clone()
        }
    }

    /// This config with its language resolved and what it leaves empty taken from `pack`: the
    /// question's voice and sentences. The answer words are filled into the sentences, the
    /// configured ones too, so nothing spoken names a word the pack does not listen for.
    pub fn with_pack(&self, pack: &PhrasePack) -> Config {
        let s = pack.sentences();
        let words = pack.answer_words();
        let pick = |own: &str, packs: &str| {
            if own.trim().is_empty() {
                packs.to_string()
            } else {
                words.fill(own)
            }
        };
        Config {
            language: self.language(),
            voice: pick(&self.voice, &s.voice),
            question_template: pick(&self.question_template, &s.question),
            challenge_hint: pick(&self.challenge_hint, &s.challenge_hint),
            challenge_spoken: pick(&self.challenge_spoken, &s.challenge_spoken),
            ..self.clone()
        }
    }

    /// The templates with their keys and the placeholders each is filled with, for the
    /// config's check that a template names only those.
    pub fn templates(&self) -> [(&'static str, &str, &'static [&'static str]); 3] {
        [
            (
                "question_template",
                &self.question_template,
                QUESTION_PLACEHOLDERS,
            ),
            (
                "challenge_hint",
                &self.challenge_hint,
                CHALLENGE_HINT_PLACEHOLDERS,
            ),
            (
                "challenge_spoken",
                &self.challenge_spoken,
                CHALLENGE_SPOKEN_PLACEHOLDERS,
            ),
        ]
    }

    /// The question for an action, from `question_template` (filled in by the engine from the
    /// phrase pack where it is empty).
    pub fn question(&self, action: &str) -> String {
        self.question_template.replace("{action}", action)
    }

    /// `model` as an optional path (empty means discover).
    pub fn model_dir(&self) -> Option<&Path> {
        (!self.model.as_os_str().is_empty()).then_some(self.model.as_path())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_config_parses_to_the_defaults() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets/config/speech.toml");
        let text = std::fs::read_to_string(&path).unwrap();
        let table: toml::Table = toml::from_str(&text).unwrap();
        let section = table["speech"].as_table().expect("[speech] section");
        let parsed = Config::from_toml(&toml::to_string(section).unwrap(), "speech.toml").unwrap();
        assert_eq!(parsed, Config::default());
    }

    #[test]
    fn unknown_keys_and_bad_values_are_rejected_with_their_name() {
        let err = Config::from_toml("timeout = 3", "t")
            .unwrap_err()
            .to_string();
        assert!(err.contains("timeout"), "{err}");
        let err = Config::from_toml("timeout_ms = 0", "t")
            .unwrap_err()
            .to_string();
        assert!(err.contains("timeout_ms"), "{err}");
        let err = Config::from_toml("pitch = 300", "t")
            .unwrap_err()
            .to_string();
        assert!(err.contains("pitch"), "{err}");
        for text in [
            "quiet_final_ms = 0",
            "decoder_phases = 9",
            "lead_in_ms = 50",
            "decoder_options = [\"--beam=5\\n--x=1\"]",
            "decoder_options = [\"beam=5\"]",
            "challenge = [\"dangerous\"]",
            "alternatives = 0",
            "approve_margin = -1.0",
            "refuse_margin = nan",
            "challenge_pause_ms = 60000",
            "earcon_hz = 20",
            "earcon_ms = 5000",
            "moonshine_options = [\"vad threshold=1\"]",
            "moonshine_options = [\"vad_threshold\"]",
            "transcribe_after_quiet_ms = 200",
            "moonshine_views = 0",
        ] {
            let key = text.split(' ').next().unwrap();
            let err = Config::from_toml(text, "t").unwrap_err().to_string();
            assert!(err.contains(key), "{text}: {err}");
        }
    }

    #[test]
    fn the_language_follows_the_locale_unless_set() {
        for (locale, lang) in [
            ("ko_KR.UTF-8", "ko"),
            ("en_US.UTF-8", "en"),
            ("de_DE@euro", "de"),
            ("fil_PH", "fil"),
            ("C.UTF-8", "en"),
            ("POSIX", "en"),
            ("", "en"),
            ("../../etc", "en"),
        ] {
            assert_eq!(language_of_locale(locale), lang, "{locale}");
        }
        let set = Config {
            language: "ko".into(),
            ..Config::default()
        };
        assert_eq!(set.language(), "ko");
        for bad in ["KO", "k", "korean", "../x", " ko"] {
            let err = Config::from_toml(&format!("language = {bad:?}"), "t")
                .unwrap_err()
                .to_string();
            assert!(err.contains("`language`"), "{bad}: {err}");
        }
    }

    #[test]
    fn question_template_fills_in_the_action() {
        let c = Config {
            question_template: "Should I {action}?".into(),
            ..Config::default()
        };
        assert_eq!(c.question("delete this file"), "Should I delete this file?");
    }
}
