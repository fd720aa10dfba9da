//! Grammar recognition: Vosk recognizers restricted to one phrase pack, fed mono `i16` at the
//! model's rate. An utterance is judged when Vosk's endpoint rules end it, when every phase's
//! partial result has stayed the same for `stable_partial_ms` of audio *after the speaker fell
//! quiet*, or once the speaker has been quiet for `quiet_final_ms` whatever the partials say.
//! Judging forces Vosk's final result with its n-best alternatives (`[speech] alternatives`) in
//! every phase, and `decide` turns them into an answer only when every phase that heard anything
//! reads the same answer with enough margin over every alternative that reads otherwise
//! (`approve_margin`, `refuse_margin`; a refusal needs one sure phase and no other answer). A partial never decides,
//! even when the final result heard nothing at all (a short word can score below silence once
//! the end-of-utterance scores are added: that is doubt, and doubt is no answer). Without the quiet, a partial is only a guess
//! about speech still going on (Vosk reads the start of "안녕하세요" as "아니").
//!
//! **Challenge words.** On a prompt that shows one, the recognizer uses the pack's challenge
//! grammar and an approval must contain the shown word, in the same utterance or in the next one
//! within `challenge_pause_ms` ("네. … 기차"); see `decide::Judge`.
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
//! Vosk starts a new feature pipeline after a final result we force, so each phase's shift is put
//! in front of its audio again after every such utterance: otherwise all phases would hear the
//! next utterance (the repeat after "didn't catch that") at one alignment, and be one phase.
//! With `parallel_phases` (the default) each phase decodes on its own thread; their frames then
//! draw their dither from `rand()` in an order the scheduler picks, so an evaluation that must
//! repeat exactly (`eval-voice`, which seeds `rand()` per clip) runs them one after the other.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use tracing::{debug, warn};

use crate::config::Config;
use crate::decide::{Alternative, Judge, Margins, PhaseReading, agree, read_phase};
use crate::error::SpeechError;
use crate::model::SpeechModel;
use crate::phrases::{PhrasePack, Reading, SpokenAnswer};

// Defaults of `[speech]`, kept with the config (which builds without the recognizer).
pub use crate::config::{DEFAULT_DECODER_PHASES, DEFAULT_QUIET_DBFS};

/// The sample level (RMS of a 10 ms frame) that `dbfs` is.
pub(crate) fn dbfs_to_level(dbfs: f32) -> i16 {
    (f32::from(i16::MAX) * 10f32.powf(dbfs.clamp(-96.0, 0.0) / 20.0)) as i16
}

/// An answer the recognizer is sure of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Heard {
    pub answer: SpokenAnswer,
    /// What Vosk heard, as the grammar spells it (for a challenge answer said in two
    /// utterances, both).
    pub transcript: String,
    /// Utterances heard in the round up to and including this answer (speech, not silence):
    /// 1 when the first thing said decided it.
    pub utterances: u32,
}

/// What ended an utterance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Trigger {
    /// Vosk's endpoint rules ended it in one phase.
    Endpoint,
    /// Every phase's partial stayed the same while the speaker was quiet.
    StablePartial,
    /// The speaker has been quiet for `quiet_final_ms`.
    Quiet,
    /// The input ended.
    EndOfInput,
}

/// One Vosk recognizer fed the audio shifted by its part of the frame period.
struct Phase {
    rec: vosk::Recognizer,
    /// Samples of silence ahead of this phase's audio: its part of the frame period.
    shift: usize,
    /// Vosk was asked for its final result, so it starts a new feature pipeline at the next
    /// audio, and with it lines the audio up with the output frames afresh: the shift must be
    /// put in front again, or every phase would hear the next utterance at the same alignment.
    restarts: bool,
    /// What this phase hears now (its partial result).
    hyp: String,
    /// Samples fed (overall count) when `hyp` last changed.
    hyp_since: u64,
    /// The alternatives of a final result Vosk's endpoint rules gave in the current utterance.
    ended: Option<Vec<Alternative>>,
}

/// What one phase made of the audio it was fed.
enum PhaseStep {
    Failed(String),
    /// Vosk's endpoint rules ended the utterance: its final alternatives.
    Finalized(Vec<Alternative>),
    /// Still listening: the partial result.
    Running(String),
}

impl Phase {
    /// Feeds `audio` to this phase's recognizer and reads what it says.
    fn step(&mut self, audio: &[i16]) -> PhaseStep {
        let shifted;
        let audio = if std::mem::take(&mut self.restarts) && self.shift > 0 {
            shifted = [vec![0i16; self.shift].as_slice(), audio].concat();
            shifted.as_slice()
        } else {
            audio
        };
        match self.rec.accept_waveform(audio) {
            Err(e) => PhaseStep::Failed(e.to_string()),
            Ok(vosk::DecodingState::Failed) => {
                PhaseStep::Failed("Vosk failed to decode the audio".into())
            }
            Ok(vosk::DecodingState::Finalized) => {
                PhaseStep::Finalized(guarded(|| alternatives(self.rec.result())))
            }
            Ok(vosk::DecodingState::Running) => {
                PhaseStep::Running(self.rec.partial_result().partial.to_string())
            }
        }
    }
}

/// Vosk grammar recognizers (one per decoder phase) plus the decision rules.
pub struct AnswerRecognizer {
    phases: Vec<Phase>,
    /// Phases decode on threads of their own (`[speech] parallel_phases`).
    parallel: bool,
    pack: Arc<PhrasePack>,
    rate: u64,
    challenge: Option<String>,
    margins: Margins,
    judge: Judge,
    stable_samples: u64,
    quiet_final_samples: u64,
    samples: u64,
    last_text: String,
    /// The transcript of an approval waiting for its challenge word.
    pending_text: String,
    /// A 10 ms frame whose RMS is at or below this counts as quiet.
    quiet_level: i16,
    /// Samples per loudness frame (10 ms).
    loud_frame: usize,
    /// The sample count just after the last frame louder than `quiet_level`.
    last_voice: u64,
    /// Where the current utterance began: the first loud frame after the last judgement.
    began: Option<u64>,
    /// One line per judged utterance (for evaluation and logs).
    judged: Vec<String>,
    /// Utterances judged that held speech (a phase heard words, not silence).
    heard: u32,
    /// Of those, the ones that decided nothing and left no approval waiting for its word: the
    /// user said something that was not understood as an answer.
    missed: u32,
    /// How many of those [`Self::take_missed`] has reported.
    missed_taken: u32,
    /// The silence before the first sound, held back (`[speech] lead_in_ms`).
    lead_in: LeadIn,
}

/// The audio before the first sound of a round, held back from the recognizer
/// (`[speech] lead_in_ms`): only its last `keep` samples are handed on, with that sound. With
/// `keep` 0 everything passes at once.
pub(crate) struct LeadIn {
    keep: usize,
    held: VecDeque<i16>,
    open: bool,
}

impl LeadIn {
    pub(crate) fn new(keep: usize) -> LeadIn {
        LeadIn {
            keep,
            held: VecDeque::new(),
            open: keep == 0,
        }
    }

    /// What the recognizer gets of `audio` (`loud`: it holds a sound): nothing while it is
    /// silence before the first sound, then the last `keep` samples held and `audio`, then
    /// `audio` as it comes.
    pub(crate) fn pass<'a>(&mut self, audio: &'a [i16], loud: bool) -> Cow<'a, [i16]> {
        if self.open {
            return Cow::Borrowed(audio);
        }
        if !loud {
            self.held.extend(audio);
            let extra = self.held.len().saturating_sub(self.keep);
            self.held.drain(..extra);
            return Cow::Borrowed(&[]);
        }
        self.open = true;
        let mut all: Vec<i16> = std::mem::take(&mut self.held).into();
        all.extend_from_slice(audio);
        Cow::Owned(all)
    }
}

impl AnswerRecognizer {
    /// Recognizers for `pack` on `model` for a prompt without a challenge word.
    pub fn new(
        model: &SpeechModel,
        pack: Arc<PhrasePack>,
        config: &Config,
    ) -> Result<AnswerRecognizer, SpeechError> {
        Self::with_challenge(model, pack, config, None)
    }

    /// Recognizers for `pack` on `model` with `config`'s phases, margins and quiet rules, for a
    /// prompt that shows `challenge` (which must be one of the pack's challenge words).
    pub fn with_challenge(
        model: &SpeechModel,
        pack: Arc<PhrasePack>,
        config: &Config,
        challenge: Option<&str>,
    ) -> Result<AnswerRecognizer, SpeechError> {
        if let Some(word) = challenge
            && !pack.is_challenge_word(word)
        {
            return Err(SpeechError::Recognizer {
                reason: format!(
                    "`{word}` is not a challenge word of the `{}` phrase pack",
                    pack.language()
                ),
            });
        }
        let rate = model.sample_rate();
        let grammar = if challenge.is_some() {
            pack.challenge_grammar()
        } else {
            pack.grammar()
        };
        let count = config.decoder_phases.max(1);
        let period = u64::from(model.frame_period_samples());
        let mut phases = Vec::with_capacity(count as usize);
        for i in 0..u64::from(count) {
            let mut rec = model
                .with_model(|m| vosk::Recognizer::new_with_grammar(m, rate as f32, grammar))?
                .ok_or_else(|| SpeechError::Recognizer {
                    reason: format!(
                        "Vosk refused the grammar of pack `{}` on {}",
                        pack.language(),
                        model.path().display()
                    ),
                })?;
            rec.set_max_alternatives(config.alternatives.max(1));
            phases.push(Phase {
                rec,
                hyp: String::new(),
                // Leading silence shifts this phase's audio against the output frames, put in
                // front of the first audio like after every restart.
                shift: (period * i / u64::from(count)) as usize,
                restarts: true,
                hyp_since: 0,
                ended: None,
            });
        }
        let ms = |v: u64| v.saturating_mul(u64::from(rate)) / 1000;
        Ok(AnswerRecognizer {
            phases,
            parallel: config.parallel_phases,
            pack,
            rate: u64::from(rate),
            challenge: challenge.map(str::to_string),
            margins: Margins {
                approve: config.approve_margin,
                refuse: config.refuse_margin,
            },
            judge: Judge::new(ms(config.challenge_pause_ms)),
            stable_samples: ms(config.stable_partial_ms),
            quiet_final_samples: ms(config.quiet_final_ms),
            samples: 0,
            last_text: String::new(),
            pending_text: String::new(),
            quiet_level: dbfs_to_level(config.quiet_dbfs),
            loud_frame: (rate as usize / 100).max(1),
            last_voice: 0,
            began: None,
            judged: Vec::new(),
            heard: 0,
            missed: 0,
            missed_taken: 0,
            lead_in: LeadIn::new(ms(config.lead_in_ms) as usize),
        })
    }

    /// How many decoder phases run.
    pub fn phases(&self) -> usize {
        self.phases.len()
    }

    /// Feeds audio; `Some` once an answer is decided (the caller stops feeding then).
    pub fn feed(&mut self, audio: &[i16]) -> Result<Option<Heard>, SpeechError> {
        // Loudness per 10 ms frame (RMS), not per sample: light noise whose peaks pass the
        // quiet level now and then is still quiet, so the end of speech is seen in it.
        let level = f64::from(self.quiet_level);
        let mut start = self.samples;
        let mut loud = false;
        for frame in audio.chunks(self.loud_frame) {
            let power = frame.iter().map(|s| f64::from(*s).powi(2)).sum::<f64>();
            if (power / frame.len() as f64).sqrt() > level {
                self.began.get_or_insert(start);
                self.last_voice = start + frame.len() as u64;
                loud = true;
            }
            start += frame.len() as u64;
        }
        self.samples += audio.len() as u64;
        let audio = self.lead_in.pass(audio, loud);
        if audio.is_empty() {
            // Silence before the first sound, held back: nothing to recognize or judge yet.
            return Ok(None);
        }
        let quiet_for = self.samples - self.last_voice;
        let steps = self.decode(&audio);
        let mut endpoint = false;
        for (phase, step) in self.phases.iter_mut().zip(steps) {
            match step {
                PhaseStep::Failed(reason) => return Err(SpeechError::Recognizer { reason }),
                PhaseStep::Finalized(alternatives) => {
                    // A phase that ended twice before the others: keep the first utterance's
                    // result (the judgement below comes in the same call anyway).
                    phase.ended.get_or_insert(alternatives);
                    endpoint = true;
                }
                PhaseStep::Running(partial) => {
                    if partial != phase.hyp {
                        if !partial.is_empty() {
                            self.last_text.clone_from(&partial);
                        }
                        phase.hyp = partial;
                        phase.hyp_since = self.samples;
                    }
                }
            }
        }
        let spoke = self.began.is_some();
        let trigger = if endpoint {
            Some(Trigger::Endpoint)
        } else if spoke && quiet_for >= self.quiet_final_samples {
            Some(Trigger::Quiet)
        } else if spoke && quiet_for >= self.stable_samples && self.partials_settled() {
            Some(Trigger::StablePartial)
        } else {
            None
        };
        match trigger {
            Some(trigger) => self.judge_utterance(trigger),
            None => Ok(None),
        }
    }

    /// Every phase's reading of `audio`, in phase order. With `parallel_phases` each phase
    /// after the first decodes on a thread of its own while the first decodes here, so two
    /// phases cost the wall time of about one on a machine with a core to spare.
    fn decode(&mut self, audio: &[i16]) -> Vec<PhaseStep> {
        if !self.parallel || self.phases.len() < 2 {
            return self.phases.iter_mut().map(|p| p.step(audio)).collect();
        }
        let (first, rest) = self.phases.split_at_mut(1);
        std::thread::scope(|scope| {
            let others: Vec<_> = rest
                .iter_mut()
                .map(|phase| scope.spawn(move || phase.step(audio)))
                .collect();
            let mut steps = vec![first[0].step(audio)];
            steps.extend(others.into_iter().map(|h| {
                h.join().unwrap_or_else(|_| {
                    PhaseStep::Failed("a decoder phase's thread panicked".into())
                })
            }));
            steps
        })
    }

    /// Whether every phase's partial has stayed the same for `stable_samples`, one of them has
    /// heard something, and what they heard is not an approval still waiting for its challenge
    /// word (the word may come after a short pause: give it `quiet_final_ms`).
    fn partials_settled(&self) -> bool {
        let stable = self
            .phases
            .iter()
            .all(|p| self.samples - p.hyp_since >= self.stable_samples);
        let heard = self.phases.iter().any(|p| !p.hyp.is_empty());
        let waiting = self.phases.iter().any(|p| {
            self.pack.read(&p.hyp, self.challenge.as_deref()) == Reading::ApproveWithoutWord
        });
        stable && heard && !waiting
    }

    /// Ends a finite input: flushes Vosk and judges what it still held.
    pub fn finish(&mut self) -> Result<Option<Heard>, SpeechError> {
        self.judge_utterance(Trigger::EndOfInput)
    }

    /// The last non-empty thing heard (for reports when nothing was decided).
    pub fn last_transcript(&self) -> &str {
        &self.last_text
    }

    /// The transcript of the last utterance heard that decided nothing (other speech, doubt,
    /// phases that disagree) and left no approval waiting for its challenge word, once: `None`
    /// when no such utterance was judged since the last call.
    pub fn take_missed(&mut self) -> Option<String> {
        (self.missed > self.missed_taken).then(|| {
            self.missed_taken = self.missed;
            self.last_text.clone()
        })
    }

    /// Audio fed so far, in samples at the model's rate.
    pub fn samples_fed(&self) -> u64 {
        self.samples
    }

    /// One line per utterance judged so far, oldest first: when, why, each phase's best text
    /// and margin, and the reading they agreed on.
    pub fn judged(&self) -> &[String] {
        &self.judged
    }

    /// Forces every phase's final result (unless Vosk already gave it), reads the alternatives
    /// and applies the decision rules; the next utterance starts afresh in every phase.
    fn judge_utterance(&mut self, trigger: Trigger) -> Result<Option<Heard>, SpeechError> {
        let began = self.began.take().unwrap_or(self.samples);
        let ended = self.last_voice.max(began);
        let partials: Vec<String> = self.phases.iter().map(|p| p.hyp.clone()).collect();
        let mut readings: Vec<PhaseReading> = Vec::with_capacity(self.phases.len());
        let mut heard: Vec<Vec<Alternative>> = Vec::with_capacity(self.phases.len());
        for phase in &mut self.phases {
            let alternatives = match phase.ended.take() {
                // Vosk's own endpoint: its feature pipeline goes on, shift and all.
                Some(a) => a,
                None => {
                    phase.restarts = true;
                    guarded(|| alternatives(phase.rec.final_result()))
                }
            };
            readings.push(read_phase(
                &self.pack,
                self.challenge.as_deref(),
                &alternatives,
            ));
            heard.push(alternatives);
            phase.hyp.clear();
            phase.hyp_since = self.samples;
        }
        let reading = agree(&readings, &self.margins);
        // What was heard, from the first phase that heard anything: a phase that heard silence
        // abstains, and the transcript (in the log and the audit) must not read as silence.
        let text = readings
            .iter()
            .map(|r| r.text.as_str())
            .find(|t| !t.is_empty())
            .unwrap_or_default()
            .to_string();
        if !text.is_empty() {
            self.last_text.clone_from(&text);
        }
        debug!(
            ?trigger,
            ?reading,
            phases = ?readings.iter().map(|r| (&r.text, r.margin)).collect::<Vec<_>>(),
            "utterance judged"
        );
        self.judged.push(format!(
            "{}ms {trigger:?} {:?} {:?} partials {:?} n-best {}",
            self.samples * 1000 / self.rate.max(1),
            reading,
            readings
                .iter()
                .map(|r| (r.text.as_str(), r.margin, r.margin_over_speech))
                .collect::<Vec<_>>(),
            partials,
            n_best_line(&heard)
        ));
        let was_pending = self.judge.is_pending();
        let answer = self.judge.utterance(reading, began, ended);
        let transcript = if was_pending && reading == Reading::ShownWord {
            format!("{} {text}", self.pending_text)
        } else {
            text.clone()
        };
        let heard_speech = !text.is_empty();
        if self.judge.is_pending() {
            self.pending_text = text;
        }
        if heard_speech {
            self.heard += 1;
            if answer.is_none() && !self.judge.is_pending() {
                self.missed += 1;
            }
        }
        if answer.is_some() {
            self.last_text.clone_from(&transcript);
        }
        let utterances = self.heard.max(1);
        Ok(answer.map(|answer| Heard {
            answer,
            transcript,
            utterances,
        }))
    }
}

/// Runs `read` (which fetches and parses a Vosk result). A result Vosk cannot express as JSON
/// (the `vosk` crate panics on it) counts as having heard nothing: no answer, never a crash.
fn guarded(read: impl FnOnce() -> Vec<Alternative>) -> Vec<Alternative> {
    catch_unwind(AssertUnwindSafe(read)).unwrap_or_else(|_| {
        warn!("Vosk returned a result that is not valid JSON; treating it as nothing heard");
        Vec::new()
    })
}

/// Every phase's alternatives as `[text:likelihood ...]` per phase, best first, the likelihood
/// relative to the phase's best (so the margins the rules saw can be read off, and rules can be
/// tried on them without decoding again).
fn n_best_line(phases: &[Vec<Alternative>]) -> String {
    let mut line = String::new();
    for alternatives in phases {
        let mut sorted: Vec<&Alternative> = alternatives.iter().collect();
        sorted.sort_by(|a, b| b.likelihood.total_cmp(&a.likelihood));
        let best = sorted.first().map_or(0.0, |a| a.likelihood);
        line.push('[');
        for (i, a) in sorted.iter().enumerate() {
            if i > 0 {
                line.push_str(" | ");
            }
            line.push_str(&format!("{}:{:.3}", a.text, a.likelihood - best));
        }
        line.push(']');
    }
    line
}

/// A result's alternatives.
fn alternatives(result: vosk::CompleteResult<'_>) -> Vec<Alternative> {
    match result {
        vosk::CompleteResult::Multiple(m) => m
            .alternatives
            .iter()
            .map(|a| Alternative {
                text: a.text.to_string(),
                likelihood: a.confidence,
            })
            .collect(),
        // One alternative only (`alternatives = 1`): nothing to compare it with.
        vosk::CompleteResult::Single(s) => vec![Alternative {
            text: s.text.to_string(),
            likelihood: 0.0,
        }],
    }
}

#[cfg(test)]
mod tests {
    use super::LeadIn;

    #[test]
    fn silence_before_the_first_sound_is_held_back_but_its_end() {
        let mut lead = LeadIn::new(3);
        assert!(lead.pass(&[1, 2], false).is_empty());
        assert!(lead.pass(&[3, 4, 5], false).is_empty());
        // The sound comes with the last three samples of the silence before it.
        assert_eq!(&*lead.pass(&[90, 91], true), &[3, 4, 5, 90, 91]);
        // Then everything passes, quiet or not.
        assert_eq!(&*lead.pass(&[6], false), &[6]);
        assert_eq!(&*lead.pass(&[92], true), &[92]);
    }

    #[test]
    fn without_a_lead_in_everything_passes() {
        let mut lead = LeadIn::new(0);
        assert_eq!(&*lead.pass(&[1, 2], false), &[1, 2]);
        assert_eq!(&*lead.pass(&[90], true), &[90]);
    }
}
