//! Grammar recognition: Vosk recognizers restricted to one phrase pack, fed mono `i16` at the
//! model's rate, that decide as soon as an answer is unambiguous: on a final result, on a partial
//! result that has stayed the same for `stable_partial_ms` of audio *after the speaker fell
//! quiet*, or on the final result forced once the speaker has been quiet for `quiet_final_ms`
//! while the partial is still empty. Without the quiet, a partial is only a guess about speech
//! still going on (Vosk reads the start of "안녕하세요" as "아니"), so it never decides.
//!
//! **Decoder phases.** A chain model (the Korean one: 10 ms frames, frame subsampling 3) scores
//! audio once per 30 ms output frame, so a short word scores differently depending on where it
//! falls inside that period. For espeak-ng's "네" the word and "nothing" are within one to three
//! log-likelihood units of each other, and in about 4 ms of every 30 ms the decoder prefers
//! nothing; the rubato resampler's 10 ms delay put the 0.5 s-padded test fixture right there.
//! Kaldi dithers every frame with noise drawn from libc's process-wide `rand()`, so which side of
//! such a tie wins depends on how much `rand()` the process used before: the first recognizer of
//! a process always gets the same (here losing) draw, later ones other draws. That was the "네
//! fails only as the first utterance" effect. So the audio goes to `decoder_phases` recognizers,
//! each shifted by an equal part of the output frame period, and an answer decided by one phase
//! stands only if every other phase has heard nothing in the current speech or the same answer.

use std::sync::Arc;

use tracing::debug;

use crate::config::Config;
use crate::error::SpeechError;
use crate::model::SpeechModel;
use crate::phrases::{PhrasePack, SpokenAnswer};

/// The default quiet level: −40 dBFS, below speech and above a quiet room.
pub const DEFAULT_QUIET_DBFS: f32 = -40.0;

/// The default number of decoder phases (see the module docs).
pub const DEFAULT_DECODER_PHASES: u32 = 2;

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

/// One Vosk recognizer fed the audio shifted by its part of the frame period.
struct Phase {
    rec: vosk::Recognizer,
    /// What this phase hears now: its partial, or the final result it just gave.
    hyp: String,
    /// Samples fed (overall count) when `hyp` last changed.
    hyp_since: u64,
    /// Samples fed when this phase's current utterance began (after its last final result).
    utterance_start: u64,
    /// The last non-empty thing this phase heard in the current speech: it vetoes another
    /// phase's different answer even after this phase has moved on to a new, still empty
    /// utterance. Cleared when the speaker speaks again after this phase's final result.
    opinion: String,
    /// Whether `opinion` came from a final result (so it ends with the next speech).
    opinion_final: bool,
}

/// Vosk grammar recognizers (one per decoder phase) plus the decision rule.
pub struct AnswerRecognizer {
    phases: Vec<Phase>,
    pack: Arc<PhrasePack>,
    stable_samples: u64,
    quiet_final_samples: u64,
    samples: u64,
    last_text: String,
    /// Samples at or below this magnitude count as quiet.
    quiet_level: i16,
    /// The sample count just after the last sample louder than `quiet_level`.
    last_voice: u64,
}

/// How a phase came to a transcript.
#[derive(Debug, Clone, Copy)]
enum How {
    Final,
    StablePartial,
    ForcedFinal,
    EndOfInput,
}

impl AnswerRecognizer {
    /// Recognizers for `pack` on `model`, with `config`'s `stable_partial_ms`, `quiet_final_ms`,
    /// `quiet_dbfs` and `decoder_phases` (at least one).
    pub fn new(
        model: &SpeechModel,
        pack: Arc<PhrasePack>,
        config: &Config,
    ) -> Result<AnswerRecognizer, SpeechError> {
        let rate = model.sample_rate();
        let count = config.decoder_phases.max(1);
        let period = u64::from(model.frame_period_samples());
        let mut phases = Vec::with_capacity(count as usize);
        for i in 0..u64::from(count) {
            let mut rec = model
                .with_model(|m| vosk::Recognizer::new_with_grammar(m, rate as f32, pack.grammar()))?
                .ok_or_else(|| SpeechError::Recognizer {
                    reason: format!(
                        "grammar of pack `{}` on {}",
                        pack.language(),
                        model.path().display()
                    ),
                })?;
            // Leading silence shifts this phase's audio against the output frames.
            let shift = (period * i / u64::from(count)) as usize;
            if shift > 0 {
                rec.accept_waveform(&vec![0i16; shift])
                    .map_err(|e| SpeechError::Recognizer {
                        reason: e.to_string(),
                    })?;
            }
            phases.push(Phase {
                rec,
                hyp: String::new(),
                hyp_since: 0,
                utterance_start: 0,
                opinion: String::new(),
                opinion_final: false,
            });
        }
        Ok(AnswerRecognizer {
            phases,
            pack,
            stable_samples: config.stable_partial_ms.saturating_mul(u64::from(rate)) / 1000,
            quiet_final_samples: config.quiet_final_ms.saturating_mul(u64::from(rate)) / 1000,
            samples: 0,
            last_text: String::new(),
            quiet_level: dbfs_to_level(config.quiet_dbfs),
            last_voice: 0,
        })
    }

    /// How many decoder phases run.
    pub fn phases(&self) -> usize {
        self.phases.len()
    }

    /// Feeds audio; `Some` once an answer is decided (the caller stops feeding then).
    pub fn feed(&mut self, audio: &[i16]) -> Result<Option<Heard>, SpeechError> {
        if let Some(i) = audio
            .iter()
            .rposition(|s| s.unsigned_abs() > self.quiet_level.unsigned_abs())
        {
            self.last_voice = self.samples + i as u64 + 1;
        }
        self.samples += audio.len() as u64;
        let quiet_for = self.samples - self.last_voice;
        let mut candidates = Vec::new();
        for (index, phase) in self.phases.iter_mut().enumerate() {
            if phase.opinion_final && self.last_voice > phase.utterance_start {
                phase.opinion.clear();
            }
            let state = phase
                .rec
                .accept_waveform(audio)
                .map_err(|e| SpeechError::Recognizer {
                    reason: e.to_string(),
                })?;
            match state {
                vosk::DecodingState::Failed => {
                    return Err(SpeechError::Recognizer {
                        reason: "Vosk failed to decode the audio".into(),
                    });
                }
                vosk::DecodingState::Finalized => {
                    let text = final_text(phase.rec.result());
                    phase.set_final(text.clone(), self.samples);
                    candidates.push((index, text, How::Final));
                }
                vosk::DecodingState::Running => {
                    let partial = phase.rec.partial_result().partial.to_string();
                    if partial != phase.hyp {
                        if !partial.is_empty() {
                            self.last_text = partial.clone();
                        }
                        phase.set_hyp(partial, self.samples);
                        continue;
                    }
                    if !phase.hyp.is_empty() {
                        if quiet_for >= self.stable_samples
                            && self.samples - phase.hyp_since >= self.stable_samples
                        {
                            candidates.push((index, phase.hyp.clone(), How::StablePartial));
                        }
                    } else if quiet_for >= self.quiet_final_samples
                        && self.last_voice > phase.utterance_start
                    {
                        // The speaker spoke and has been quiet for a while, and this phase's
                        // best guess without end-of-utterance scores is still nothing. Vosk would
                        // end such an utterance only after 5 s of silence and then judge it with
                        // those scores; judge it that way now. (Not too soon: after only 150 ms
                        // of silence "예" still scored below nothing.)
                        let text = final_text(phase.rec.final_result());
                        phase.set_final(text.clone(), self.samples);
                        candidates.push((index, text, How::ForcedFinal));
                    }
                }
            }
        }
        Ok(self.decide(candidates))
    }

    /// Ends a finite input: flushes Vosk and judges what it still held.
    pub fn finish(&mut self) -> Option<Heard> {
        let mut candidates = Vec::new();
        for (index, phase) in self.phases.iter_mut().enumerate() {
            let text = final_text(phase.rec.final_result());
            phase.set_final(text.clone(), self.samples);
            candidates.push((index, text, How::EndOfInput));
        }
        self.decide(candidates)
    }

    /// The last non-empty thing heard (for reports when nothing was decided).
    pub fn last_transcript(&self) -> &str {
        &self.last_text
    }

    /// Audio fed so far, in samples at the model's rate.
    pub fn samples_fed(&self) -> u64 {
        self.samples
    }

    /// The first candidate that names an answer every other phase agrees with or abstains from.
    fn decide(&mut self, candidates: Vec<(usize, String, How)>) -> Option<Heard> {
        for (index, text, how) in candidates {
            if text.is_empty() {
                continue;
            }
            self.last_text = text.clone();
            let answer = self.pack.classify(&text);
            debug!(transcript = %text, ?answer, ?how, phase = index, "speech heard");
            let Some(answer) = answer else { continue };
            let dissent = self.phases.iter().enumerate().find(|(other, phase)| {
                *other != index
                    && !phase.opinion.is_empty()
                    && self.pack.classify(&phase.opinion) != Some(answer)
            });
            if let Some((other, phase)) = dissent {
                debug!(
                    transcript = %text,
                    other_phase = other,
                    other = %phase.opinion,
                    "decoder phases disagree: nothing decided"
                );
                continue;
            }
            return Some(Heard {
                answer,
                transcript: text,
            });
        }
        None
    }
}

impl Phase {
    /// A new partial result.
    fn set_hyp(&mut self, hyp: String, now: u64) {
        if !hyp.is_empty() {
            self.opinion.clone_from(&hyp);
            self.opinion_final = false;
        }
        self.hyp = hyp;
        self.hyp_since = now;
    }

    /// A final result: it ends this phase's utterance.
    fn set_final(&mut self, text: String, now: u64) {
        self.set_hyp(text, now);
        self.opinion_final = true;
        self.utterance_start = now;
    }
}

/// The text of a (single-alternative) final result, empty when Vosk heard nothing.
fn final_text(result: vosk::CompleteResult<'_>) -> String {
    result
        .single()
        .map(|r| r.text.to_string())
        .unwrap_or_default()
}
