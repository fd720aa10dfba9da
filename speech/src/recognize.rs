//! Grammar recognition: a Vosk recognizer restricted to one phrase pack, fed mono `i16` at the
//! model's rate, that decides as soon as an answer is unambiguous: on a final result, or on a
//! partial result that has stayed the same for `stable_partial_ms` of audio *after the speaker
//! fell quiet*. Without the quiet, a partial is only a guess about speech still going on (Vosk
//! reads the start of "안녕하세요" as "아니"), so it never decides.

use std::sync::Arc;

use tracing::debug;

use crate::error::SpeechError;
use crate::model::SpeechModel;
use crate::phrases::{PhrasePack, SpokenAnswer};

/// The default quiet level: −40 dBFS, below speech and above a quiet room.
pub const DEFAULT_QUIET_DBFS: f32 = -40.0;

fn dbfs_to_level(dbfs: f32) -> i16 {
    (f32::from(i16::MAX) * 10f32.powf(dbfs.clamp(-96.0, 0.0) / 20.0)) as i16
}

/// An answer the recognizer is sure of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Heard {
    pub answer: SpokenAnswer,
    /// What Vosk heard, as the grammar spells it.
    pub transcript: String,
}

/// A Vosk grammar recognizer plus the decision rule.
pub struct AnswerRecognizer {
    rec: vosk::Recognizer,
    pack: Arc<PhrasePack>,
    stable_samples: u64,
    samples: u64,
    partial: String,
    partial_since: u64,
    last_text: String,
    /// Samples at or below this magnitude count as quiet.
    quiet_level: i16,
    /// The sample count just after the last sample louder than `quiet_level`.
    last_voice: u64,
}

impl AnswerRecognizer {
    /// A recognizer for `pack` on `model`; `stable_partial_ms` is how long a partial must hold.
    pub fn new(
        model: &SpeechModel,
        pack: Arc<PhrasePack>,
        stable_partial_ms: u64,
    ) -> Result<AnswerRecognizer, SpeechError> {
        let rate = model.sample_rate();
        let rec = model
            .with_model(|m| vosk::Recognizer::new_with_grammar(m, rate as f32, pack.grammar()))?
            .ok_or_else(|| SpeechError::Recognizer {
                reason: format!(
                    "grammar of pack `{}` on {}",
                    pack.language(),
                    model.path().display()
                ),
            })?;
        Ok(AnswerRecognizer {
            rec,
            pack,
            stable_samples: stable_partial_ms * u64::from(rate) / 1000,
            samples: 0,
            partial: String::new(),
            partial_since: 0,
            last_text: String::new(),
            quiet_level: dbfs_to_level(DEFAULT_QUIET_DBFS),
            last_voice: 0,
        })
    }

    /// Sets the level (dBFS) below which audio counts as quiet, i.e. the speaker has finished.
    pub fn with_quiet_level(mut self, dbfs: f32) -> AnswerRecognizer {
        self.quiet_level = dbfs_to_level(dbfs);
        self
    }

    /// Feeds audio; `Some` once an answer is decided (the caller stops feeding then).
    pub fn feed(&mut self, audio: &[i16]) -> Result<Option<Heard>, SpeechError> {
        let state = self
            .rec
            .accept_waveform(audio)
            .map_err(|e| SpeechError::Recognizer {
                reason: e.to_string(),
            })?;
        if let Some(i) = audio
            .iter()
            .rposition(|s| s.unsigned_abs() > self.quiet_level.unsigned_abs())
        {
            self.last_voice = self.samples + i as u64 + 1;
        }
        self.samples += audio.len() as u64;
        match state {
            vosk::DecodingState::Failed => Err(SpeechError::Recognizer {
                reason: "Vosk failed to decode the audio".into(),
            }),
            vosk::DecodingState::Finalized => {
                let text = self
                    .rec
                    .result()
                    .single()
                    .map(|r| r.text.to_string())
                    .unwrap_or_default();
                self.partial.clear();
                self.partial_since = self.samples;
                Ok(self.judge(text, "final"))
            }
            vosk::DecodingState::Running => {
                let partial = self.rec.partial_result().partial.to_string();
                if partial != self.partial {
                    self.partial = partial;
                    self.partial_since = self.samples;
                    if !self.partial.is_empty() {
                        self.last_text = self.partial.clone();
                    }
                    return Ok(None);
                }
                let quiet_for = self.samples - self.last_voice;
                if self.samples - self.partial_since >= self.stable_samples
                    && quiet_for >= self.stable_samples
                {
                    return Ok(self.judge(self.partial.clone(), "stable partial after speech"));
                }
                Ok(None)
            }
        }
    }

    /// Ends a finite input: flushes Vosk and judges what it still held.
    pub fn finish(&mut self) -> Option<Heard> {
        let text = self
            .rec
            .final_result()
            .single()
            .map(|r| r.text.to_string())
            .unwrap_or_default();
        self.judge(text, "end of input")
    }

    /// The last non-empty thing heard (for reports when nothing was decided).
    pub fn last_transcript(&self) -> &str {
        &self.last_text
    }

    /// Audio fed so far, in samples at the model's rate.
    pub fn samples_fed(&self) -> u64 {
        self.samples
    }

    fn judge(&mut self, text: String, how: &str) -> Option<Heard> {
        if text.is_empty() {
            return None;
        }
        self.last_text = text.clone();
        let answer = self.pack.classify(&text);
        debug!(transcript = %text, ?answer, how, "speech heard");
        answer.map(|answer| Heard {
            answer,
            transcript: text,
        })
    }
}
