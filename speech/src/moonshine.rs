//! The English recognizer: Moonshine tiny-en through its C API (`pcp-moonshine`), fed while the
//! user speaks. It has no grammar: it writes what it hears as text, and the phrase pack's rule
//! alone decides (an utterance made of answer phrases that agree is that answer; any other word,
//! a misheard one included, decides nothing; a spoken approval on a challenge prompt needs the
//! shown word).
//!
//! **Feeding.** Where an utterance begins and ends is found as for Vosk: the loudness of 10 ms
//! frames against `quiet_dbfs`. When speech begins, a Moonshine stream starts with the audio
//! from 1 s before it (its voice activity detector settles on that quiet), and every block after
//! goes into it as it arrives. Once the speaker has
//! been quiet for `transcribe_after_quiet_ms`, the stream is transcribed (forced); when the
//! quiet has lasted `quiet_final_ms` that transcript is judged, unless a louder frame came after
//! it was taken (then it is transcribed again). The decision so comes `quiet_final_ms` after the
//! answer's end, the transcription done while that quiet passes. The stream stops after each
//! utterance, so the next one's transcript is only its own speech. (Tiny-en is not one of
//! Moonshine's streaming architectures: a transcription encodes the stream's audio whole; what
//! the stream buys is that nothing is left to copy or cut when the speaker falls quiet.)
//!
//! **Views.** An approval needs `moonshine_views` readings that agree, word for word: the
//! stream's, and the same utterance transcribed in one call from 0.25 s and 0.5 s before it
//! began. A word the model only half hears reads differently from
//! another start ("yeast": "Yes." from one, "East," from another); a clear answer reads the same.
//! A refusal needs the first reading only (a wrong one only denies).
//!
//! **Reading.** The model writes sentences ("Yes.", "No, no.", "Yes, rocket."): case and
//! punctuation are dropped before the pack reads the words (see [`spoken_words`]).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use pcp_moonshine::{Arch, SAMPLE_RATE, Stream, Transcriber};
use tracing::{debug, info, warn};

use crate::config::Config;
use crate::decide::Judge;
use crate::error::SpeechError;
use crate::models::{MOONSHINE_FILES, RecognizerModel, Utterances};
use crate::phrases::{PhrasePack, Reading, SpokenAnswer};
use crate::recognize::{Heard, LeadIn, dbfs_to_level};

/// A loaded Moonshine model.
pub struct MoonshineModel {
    transcriber: Arc<Transcriber>,
    path: PathBuf,
}

impl MoonshineModel {
    /// Loads the model in `dir` (`moonshine-tiny-en`; `-base-` in the name for the base
    /// architecture) with `[speech] moonshine_options`.
    pub fn load(dir: &Path, config: &Config) -> Result<MoonshineModel, SpeechError> {
        let broken = |reason: String| SpeechError::BrokenModel {
            path: dir.to_path_buf(),
            reason,
        };
        for file in MOONSHINE_FILES {
            if !dir.join(file).is_file() {
                return Err(broken(format!("missing {file}")));
            }
        }
        let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let arch = if name.contains("-base") {
            Arch::Base
        } else {
            Arch::Tiny
        };
        let options: Vec<(String, String)> = config
            .moonshine_options
            .iter()
            .filter_map(|o| o.split_once('='))
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect();
        if std::env::var_os(pcp_moonshine::ONE_THREAD_ENV).is_none() {
            warn!(
                "{} is not set (pcp_speech::prepare_process): transcriptions run on ONNX \
                 Runtime's thread pool, about three times slower on one CPU",
                pcp_moonshine::ONE_THREAD_ENV
            );
        }
        let started = std::time::Instant::now();
        let transcriber = Transcriber::load(dir, arch, &options)
            .map_err(|e| broken(format!("Moonshine could not load it: {e}")))?;
        info!(path = %dir.display(), ms = started.elapsed().as_millis() as u64, ?options, "moonshine model loaded");
        Ok(MoonshineModel {
            transcriber: Arc::new(transcriber),
            path: dir.to_path_buf(),
        })
    }
}

impl RecognizerModel for MoonshineModel {
    fn kind(&self) -> &'static str {
        "moonshine"
    }

    fn path(&self) -> &Path {
        &self.path
    }

    fn sample_rate(&self) -> u32 {
        SAMPLE_RATE
    }

    /// Any pack fits: the model writes any English text, and the pack reads it.
    fn check_pack(&self, _pack: &PhrasePack) -> Result<(), SpeechError> {
        Ok(())
    }

    fn recognizer<'a>(
        &'a self,
        pack: Arc<PhrasePack>,
        config: &Config,
        challenge: Option<&str>,
    ) -> Result<Box<dyn Utterances + 'a>, SpeechError> {
        Ok(Box::new(MoonshineRecognizer::new(
            self, pack, config, challenge,
        )?))
    }
}

/// An error of the library, as the crate's error.
fn failed(e: pcp_moonshine::MoonshineError) -> SpeechError {
    SpeechError::Recognizer {
        reason: format!("Moonshine: {e}"),
    }
}

/// The words of a transcript as the phrase pack reads them: lowercase, an apostrophe inside a
/// word kept (`don't`; a typographic one made plain), every other character that is not a
/// letter or a digit a space. "Yes, rocket." is `yes rocket`; "Yes-man" is `yes man`.
pub fn spoken_words(text: &str) -> String {
    let plain: String = text
        .chars()
        .map(|c| match c {
            '\u{2019}' | '\u{2018}' => '\'',
            c if c.is_alphanumeric() || c == '\'' => c,
            _ => ' ',
        })
        .collect();
    plain
        .split_whitespace()
        .map(|w| w.trim_matches('\'').to_lowercase())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// One prompt's recognizer over a Moonshine stream (see the module docs).
pub struct MoonshineRecognizer {
    stream: Stream,
    pack: Arc<PhrasePack>,
    challenge: Option<String>,
    judge: Judge,
    rate: u64,
    quiet_level: i16,
    loud_frame: usize,
    samples: u64,
    last_voice: u64,
    began: Option<u64>,
    lead_in: LeadIn,
    early_samples: u64,
    quiet_final_samples: u64,
    /// Views an approval needs (`[speech] moonshine_views`).
    views: u32,
    /// The views taken once the speaker had been quiet `early_samples`: when (samples fed) and
    /// what each read.
    early: Option<(u64, Vec<String>)>,
    /// The stream holds the current utterance (from [`VIEW_LEADS_MS`]`[0]` before it began).
    streaming: bool,
    /// Where the last utterance was judged and the stream stopped: no view of the next one
    /// reaches back before it.
    floor: u64,
    /// Where an approval that waits for its challenge word began: its stream goes on, so the
    /// word said after a pause is transcribed together with it ("Yes, tiger.").
    pending_from: Option<u64>,
    /// How long such an approval waits, in samples (`challenge_pause_ms`).
    pause_samples: u64,
    /// The last [`MAX_HELD`] samples fed, and the overall sample index of the first: the
    /// stream starts from them, and the other views transcribe them.
    held: Vec<f32>,
    held_origin: u64,
    last_text: String,
    pending_text: String,
    judged: Vec<String>,
    heard: u32,
    missed: u32,
    missed_taken: u32,
}

/// How long before the speech began each view starts, in ms: the first view (the stream) and
/// the further ones. The voice activity detector inside the library reads a stretch of quiet
/// before the speech best (on the tuning part, the stream from 1 s before the speech heard 193
/// of 288 answers, from 0.5 s 185, from 0.1 s 175); the further views start elsewhere.
const VIEW_LEADS_MS: [u64; 3] = [1000, 250, 500];

/// At most this much audio (20 s at 16 kHz) is held: past it, an utterance is longer than any
/// answer.
const MAX_HELD: usize = 20 * 16_000;

impl MoonshineRecognizer {
    /// A recognizer for `pack` on `model` for a prompt that shows `challenge` (one of the
    /// pack's challenge words) or none.
    pub fn new(
        model: &MoonshineModel,
        pack: Arc<PhrasePack>,
        config: &Config,
        challenge: Option<&str>,
    ) -> Result<MoonshineRecognizer, SpeechError> {
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
        let stream = model.transcriber.stream().map_err(failed)?;
        stream.stop().map_err(failed)?;
        let rate = u64::from(SAMPLE_RATE);
        let ms = |v: u64| v.saturating_mul(rate) / 1000;
        Ok(MoonshineRecognizer {
            stream,
            pack,
            challenge: challenge.map(str::to_string),
            judge: Judge::new(ms(config.challenge_pause_ms)),
            rate,
            quiet_level: dbfs_to_level(config.quiet_dbfs),
            loud_frame: (SAMPLE_RATE as usize / 100).max(1),
            samples: 0,
            last_voice: 0,
            began: None,
            lead_in: LeadIn::new(ms(config.lead_in_ms) as usize),
            early_samples: ms(config.transcribe_after_quiet_ms),
            quiet_final_samples: ms(config.quiet_final_ms),
            views: config.moonshine_views.clamp(1, VIEW_LEADS_MS.len() as u32),
            early: None,
            streaming: false,
            floor: 0,
            pending_from: None,
            pause_samples: ms(config.challenge_pause_ms),
            held: Vec::new(),
            held_origin: 0,
            last_text: String::new(),
            pending_text: String::new(),
            judged: Vec::new(),
            heard: 0,
            missed: 0,
            missed_taken: 0,
        })
    }

    /// The held audio from `lead_ms` before the speech began.
    fn held_from(&self, lead_ms: u64) -> &[f32] {
        let from = self
            .began
            .unwrap_or(self.samples)
            .saturating_sub(lead_ms * self.rate / 1000)
            .max(self.floor);
        let skip = from.saturating_sub(self.held_origin) as usize;
        &self.held[skip.min(self.held.len())..]
    }

    /// What the utterance says in each view, transcribed now: the stream, then, while the first
    /// reads something that can approve, the held audio from each further view's lead, in one
    /// call. An approval needs every view to read it: a word the model only half hears
    /// ("yeast" as "Yes.") reads differently from another start.
    fn views_now(&self) -> Result<Vec<String>, SpeechError> {
        let mut views = vec![joined(&self.stream.transcribe(true).map_err(failed)?)];
        for lead in VIEW_LEADS_MS.iter().take(self.views as usize).skip(1) {
            if !can_approve(self.read(&views[0])) {
                break;
            }
            let lines = self
                .stream
                .transcriber()
                .transcribe(self.held_from(*lead), SAMPLE_RATE)
                .map_err(failed)?;
            views.push(joined(&lines));
        }
        Ok(views)
    }

    /// The distinct words of `text` the pack reads (its ignored words left out).
    fn words_of(&self, text: &str) -> BTreeSet<String> {
        spoken_words(text)
            .split(' ')
            .filter(|w| !w.is_empty() && !self.pack.is_ignored(w))
            .map(str::to_string)
            .collect()
    }

    /// What `text` says on this prompt.
    fn read(&self, text: &str) -> Reading {
        self.pack
            .read(&spoken_words(text), self.challenge.as_deref())
    }

    /// Notes where speech began and last sounded in `audio`; whether any frame was loud.
    fn measure(&mut self, audio: &[i16]) -> bool {
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
        loud
    }

    /// Holds `audio` (which ends at the current sample) and feeds the stream: from the first
    /// view's lead before the speech began once it has, as it comes after that.
    fn add(&mut self, audio: &[i16]) -> Result<(), SpeechError> {
        if self.held.is_empty() {
            self.held_origin = self.samples - audio.len() as u64;
        }
        let block: Vec<f32> = audio.iter().map(|s| f32::from(*s) / 32_768.0).collect();
        self.held.extend_from_slice(&block);
        if self.held.len() > MAX_HELD {
            let drop = self.held.len() - MAX_HELD;
            self.held.drain(..drop);
            self.held_origin += drop as u64;
        }
        if self.streaming {
            return self.stream.add_audio(&block, SAMPLE_RATE).map_err(failed);
        }
        if self.began.is_none() {
            return Ok(());
        }
        self.stream.start().map_err(failed)?;
        self.streaming = true;
        let from = self.held_from(VIEW_LEADS_MS[0]).to_vec();
        self.stream.add_audio(&from, SAMPLE_RATE).map_err(failed)
    }

    /// Stops the stream; the next utterance starts one of its own.
    fn stop_stream(&mut self) -> Result<(), SpeechError> {
        if self.streaming {
            self.stream.stop().map_err(failed)?;
        }
        self.streaming = false;
        self.pending_from = None;
        self.floor = self.samples;
        Ok(())
    }

    /// Judges the utterance that just ended (`why`); the stream waits for the next one, or
    /// goes on when an approval waits for its challenge word.
    fn judge_utterance(&mut self, why: &str) -> Result<Option<Heard>, SpeechError> {
        let views = match self.early.take() {
            Some((at, views)) if at >= self.last_voice => views,
            _ => self.views_now()?,
        };
        let readings: Vec<Reading> = views.iter().map(|v| self.read(v)).collect();
        // The first view decides; anything that can approve needs the others to agree, on the
        // words as well as on what they mean: "Yeah." from one start and "Yes." from another is
        // a word the model is guessing at ("nap" was written both ways).
        let first = readings.first().copied().unwrap_or(Reading::Nothing);
        let words: Vec<BTreeSet<String>> = views.iter().map(|v| self.words_of(v)).collect();
        let agree = readings.iter().all(|r| *r == first) && words.iter().all(|w| *w == words[0]);
        let reading = if can_approve(first) && !agree {
            Reading::Nothing
        } else {
            first
        };
        let text = views.first().cloned().unwrap_or_default();
        let began = self.began.take().unwrap_or(self.samples);
        self.pending_from = None;
        if reading == Reading::ApproveWithoutWord {
            // The word may follow: the stream goes on with this utterance in it.
            self.pending_from = Some(began);
        } else {
            self.stop_stream()?;
        }
        let ended = self.last_voice.max(began);
        debug!(why, ?reading, ?views, "utterance judged");
        self.judged.push(format!(
            "{}ms {why} {reading:?} {views:?}",
            self.samples * 1000 / self.rate
        ));
        let was_pending = self.judge.is_pending();
        let answer = self.judge.utterance(reading, began, ended);
        let transcript = if was_pending && reading == Reading::ShownWord {
            format!("{} {text}", self.pending_text)
        } else {
            text.clone()
        };
        if self.judge.is_pending() {
            self.pending_text.clone_from(&text);
        }
        if !text.is_empty() {
            self.last_text.clone_from(&text);
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

/// The texts of `lines` joined.
fn joined(lines: &[pcp_moonshine::Line]) -> String {
    lines
        .iter()
        .map(|l| l.text.trim())
        .filter(|t| !t.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether a reading can lead to an approval (and so needs every view).
fn can_approve(reading: Reading) -> bool {
    matches!(
        reading,
        Reading::Answer(SpokenAnswer::Approve) | Reading::ApproveWithoutWord | Reading::ShownWord
    )
}

impl Utterances for MoonshineRecognizer {
    fn feed(&mut self, audio: &[i16]) -> Result<Option<Heard>, SpeechError> {
        let loud = self.measure(audio);
        let audio = self.lead_in.pass(audio, loud);
        if audio.is_empty() {
            return Ok(None);
        }
        // Speech after an approval that waits for its word continues that utterance.
        if let (Some(from), Some(_)) = (self.pending_from, self.began) {
            self.began = Some(from);
        }
        self.add(&audio)?;
        if self.began.is_none() {
            if self.pending_from.is_some() && self.samples - self.last_voice > self.pause_samples {
                self.stop_stream()?;
            }
            return Ok(None);
        }
        let quiet_for = self.samples - self.last_voice;
        if quiet_for >= self.quiet_final_samples {
            return self.judge_utterance("quiet");
        }
        let stale = self
            .early
            .as_ref()
            .is_none_or(|(at, _)| *at < self.last_voice);
        if self.early_samples > 0 && quiet_for >= self.early_samples && stale {
            self.early = Some((self.samples, self.views_now()?));
        }
        Ok(None)
    }

    fn finish(&mut self) -> Result<Option<Heard>, SpeechError> {
        if self.began.is_none() {
            return Ok(None);
        }
        self.judge_utterance("end-of-input")
    }

    fn last_transcript(&self) -> &str {
        &self.last_text
    }

    fn take_missed(&mut self) -> Option<String> {
        (self.missed > self.missed_taken).then(|| {
            self.missed_taken = self.missed;
            self.last_text.clone()
        })
    }

    fn judged(&self) -> &[String] {
        &self.judged
    }
}

#[cfg(test)]
mod tests {
    use super::spoken_words;

    #[test]
    fn sentences_become_the_words_a_pack_reads() {
        for (text, words) in [
            ("Yes.", "yes"),
            ("No, no.", "no no"),
            ("Yes, rocket.", "yes rocket"),
            ("Yes-man", "yes man"),
            ("Don't!", "don't"),
            ("Don\u{2019}t", "don't"),
            ("'Yes'", "yes"),
            ("Yes, I'm handed.", "yes i'm handed"),
            ("  ...  ", ""),
            ("Kensel.", "kensel"),
            ("5", "5"),
        ] {
            assert_eq!(spoken_words(text), words, "{text}");
        }
    }
}
