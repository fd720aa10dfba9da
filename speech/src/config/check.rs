//! The checks of `[speech]` values that serde cannot make: ranges, language codes, option
//! lines and the templates' placeholders. Each error names the key first, in backticks.

use super::{Config, RISK_CLASSES, is_language_code};
use crate::error::SpeechError;
use crate::sentences::check_sentences;

/// Whether `option` looks like one Kaldi command-line option, `--key=value`, with nothing that
/// could start another line or option in `model.conf`.
fn is_decoder_option(option: &str) -> bool {
    let Some((key, value)) = option.strip_prefix("--").and_then(|o| o.split_once('=')) else {
        return false;
    };
    !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.' || c == '_')
        && !value.is_empty()
        && !value.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// Whether `option` looks like one Moonshine option, `name=value`: a lowercase name of letters,
/// digits and underscores, and a value without spaces or control characters.
fn is_moonshine_option(option: &str) -> bool {
    let Some((name, value)) = option.split_once('=') else {
        return false;
    };
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !value.is_empty()
        && !value.chars().any(|c| c.is_whitespace() || c.is_control())
}

impl Config {
    /// Checks values serde cannot: ranges and non-empty strings. It stops at the first wrong key,
    /// in the order of the steps below, and names it.
    pub fn validate(&self) -> Result<(), SpeechError> {
        self.validate_language_and_cue()?;
        check_sentences(self.templates()).map_err(SpeechError::Config)?;
        self.validate_capture()?;
        self.validate_spoken_question()?;
        self.validate_quiet()?;
        self.validate_answers()?;
        self.validate_moonshine()?;
        self.validate_decoder_options()
    }

    /// The answer's deadline and the microphone's capture: blocks, their queue, the device's
    /// buffer.
    fn validate_capture(&self) -> Result<(), SpeechError> {
        let bad = |m: String| Err(SpeechError::Config(m));
        if self.timeout_ms == 0 {
            return bad("`timeout_ms` must be more than 0".into());
        }
        if !(1..=1000).contains(&self.block_ms) {
            return bad(format!(
                "`block_ms` = {} is outside 1..=1000",
                self.block_ms
            ));
        }
        if self.queue_blocks == 0 {
            return bad("`queue_blocks` must be more than 0".into());
        }
        if !(20..=4000).contains(&self.capture_buffer_ms) {
            return bad(format!(
                "`capture_buffer_ms` = {} is outside 20..=4000",
                self.capture_buffer_ms
            ));
        }
        Ok(())
    }

    /// How the question is spoken: espeak-ng's rate and pitch.
    fn validate_spoken_question(&self) -> Result<(), SpeechError> {
        let bad = |m: String| Err(SpeechError::Config(m));
        if !(80..=450).contains(&self.speech_rate_wpm) {
            return bad(format!(
                "`speech_rate_wpm` = {} is outside 80..=450",
                self.speech_rate_wpm
            ));
        }
        if self.pitch > 100 {
            return bad(format!("`pitch` = {} is outside 0..=100", self.pitch));
        }
        Ok(())
    }

    /// The level events, what counts as quiet and when it ends an utterance, the lead-in kept
    /// before speech.
    fn validate_quiet(&self) -> Result<(), SpeechError> {
        let bad = |m: String| Err(SpeechError::Config(m));
        if self.level_interval_ms == 0 {
            return bad("`level_interval_ms` must be more than 0".into());
        }
        if !(-96.0..=0.0).contains(&self.quiet_dbfs) {
            return bad(format!(
                "`quiet_dbfs` = {} is outside -96.0..=0.0",
                self.quiet_dbfs
            ));
        }
        if !(100..=10_000).contains(&self.quiet_final_ms) {
            return bad(format!(
                "`quiet_final_ms` = {} is outside 100..=10000",
                self.quiet_final_ms
            ));
        }
        if self.lead_in_ms != 0 && !(100..=5000).contains(&self.lead_in_ms) {
            return bad(format!(
                "`lead_in_ms` = {} is neither 0 nor in 100..=5000",
                self.lead_in_ms
            ));
        }
        Ok(())
    }

    /// How an answer is read from what was heard: the decoder phases, the prompts that ask for
    /// a challenge word, the n-best alternatives and their margins, the pause before the word.
    fn validate_answers(&self) -> Result<(), SpeechError> {
        let bad = |m: String| Err(SpeechError::Config(m));
        if !(1..=4).contains(&self.decoder_phases) {
            return bad(format!(
                "`decoder_phases` = {} is outside 1..=4",
                self.decoder_phases
            ));
        }
        for class in &self.challenge {
            if !RISK_CLASSES.contains(&class.as_str()) {
                return bad(format!(
                    "`challenge` entry `{class}` is not a risk class ({})",
                    RISK_CLASSES.join(", ")
                ));
            }
        }
        if !(1..=20).contains(&self.alternatives) {
            return bad(format!(
                "`alternatives` = {} is outside 1..=20",
                self.alternatives
            ));
        }
        for (key, value) in [
            ("approve_margin", self.approve_margin),
            ("refuse_margin", self.refuse_margin),
        ] {
            if !(0.0..=100.0).contains(&value) {
                return bad(format!("`{key}` = {value} is outside 0.0..=100.0"));
            }
        }
        if self.challenge_pause_ms > 5000 {
            return bad(format!(
                "`challenge_pause_ms` = {} is outside 0..=5000",
                self.challenge_pause_ms
            ));
        }
        Ok(())
    }

    /// Moonshine's options, when it transcribes during a pause, how many views must agree.
    fn validate_moonshine(&self) -> Result<(), SpeechError> {
        let bad = |m: String| Err(SpeechError::Config(m));
        for option in &self.moonshine_options {
            if !is_moonshine_option(option) {
                return bad(format!(
                    "`moonshine_options` entry `{option}` is not a `name=value` option"
                ));
            }
        }
        if self.transcribe_after_quiet_ms != 0
            && self.transcribe_after_quiet_ms >= self.quiet_final_ms
        {
            return bad(format!(
                "`transcribe_after_quiet_ms` = {} is neither 0 nor less than `quiet_final_ms` ({})",
                self.transcribe_after_quiet_ms, self.quiet_final_ms
            ));
        }
        if !(1..=3).contains(&self.moonshine_views) {
            return bad(format!(
                "`moonshine_views` = {} is outside 1..=3",
                self.moonshine_views
            ));
        }
        Ok(())
    }

    /// Vosk's `model.conf` options.
    fn validate_decoder_options(&self) -> Result<(), SpeechError> {
        let bad = |m: String| Err(SpeechError::Config(m));
        for option in &self.decoder_options {
            if !is_decoder_option(option) {
                return bad(format!(
                    "`decoder_options` entry `{option}` is not a `--key=value` option"
                ));
            }
        }
        Ok(())
    }

    /// The language code and the missed-answer cue's tones.
    fn validate_language_and_cue(&self) -> Result<(), SpeechError> {
        let bad = |m: String| Err(SpeechError::Config(m));
        if !self.language.is_empty() && !is_language_code(&self.language) {
            return bad(format!(
                "`language` = {:?} is not a language code such as `ko` or `en` (empty: the locale's)",
                self.language
            ));
        }
        if !(200..=4000).contains(&self.earcon_hz) {
            return bad(format!(
                "`earcon_hz` = {} is outside 200..=4000",
                self.earcon_hz
            ));
        }
        if !(20..=1000).contains(&self.earcon_ms) {
            return bad(format!(
                "`earcon_ms` = {} is outside 20..=1000",
                self.earcon_ms
            ));
        }
        Ok(())
    }
}
