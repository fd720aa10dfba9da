//! One round of listening, shared by the CLI (`pcp-listen`), the compositor's `Listener` and
//! the tests: audio from a WAV file or a cpal device → conversion → recognition (Vosk or Moonshine), until an
//! answer is decided or the timeout passes, counted in captured audio and in wall time.

mod source;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;

pub(crate) use self::source::{Microphone, Source, WavSource};

use crate::capture::Capture;
use crate::config::Config;
use crate::convert::Converter;
use crate::error::SpeechError;
use crate::models::{RecognizerModel, Utterances, load_configured};
use crate::phrases::{PhrasePack, SpokenAnswer};
use crate::recognize::Heard;

/// Where the audio comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListenInput {
    /// A cpal input device by name; `None` is `[speech] input_device` (empty: the default).
    Device(Option<String>),
    /// A WAV file (any rate, channel count, integer or float samples).
    Wav(PathBuf),
}

/// What `pcp-listen` asks for.
#[derive(Debug, Clone)]
pub struct ListenOptions {
    /// Model directory; `None` is the configured or discovered one.
    pub model: Option<PathBuf>,
    pub input: ListenInput,
    /// Language; `None` is `[speech] language`.
    pub lang: Option<String>,
    /// Timeout; `None` is `[speech] timeout_ms`.
    pub timeout: Option<Duration>,
    pub config: Config,
}

/// The answer field of a report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ReportAnswer {
    Approve,
    Deny,
    Cancel,
    /// Nothing decided: timeout, or the file ended first.
    None,
}

impl From<Option<SpokenAnswer>> for ReportAnswer {
    fn from(a: Option<SpokenAnswer>) -> Self {
        match a {
            Some(SpokenAnswer::Approve) => ReportAnswer::Approve,
            Some(SpokenAnswer::Deny) => ReportAnswer::Deny,
            Some(SpokenAnswer::Cancel) => ReportAnswer::Cancel,
            None => ReportAnswer::None,
        }
    }
}

/// `pcp-listen`'s JSON line: `{"answer","transcript","audio_ms","decided_after_ms"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ListenReport {
    pub answer: ReportAnswer,
    /// What was heard last (empty if nothing).
    pub transcript: String,
    /// Audio consumed, in milliseconds of captured (or file) time.
    pub audio_ms: u64,
    /// Wall time from the start of listening to the end (decision, timeout or end of file).
    pub decided_after_ms: u64,
}

impl ListenReport {
    /// The report as one JSON line (without the newline).
    pub fn to_json(&self) -> String {
        // A struct of strings and integers always serialises.
        serde_json::to_string(self).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }
}

/// How a round ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    Heard(Heard),
    /// The timeout passed (audio or wall time) with no answer.
    Timeout,
    /// A finite input ended with no answer.
    EndOfInput,
    /// `stop` was set by the caller.
    Stopped,
}

/// The wall time of the last block's recognition when it decided the round (what a live
/// decision adds to the audio's own arrival), else nothing.
fn decision_compute(decided: bool, block: Instant) -> Duration {
    if decided {
        block.elapsed()
    } else {
        Duration::ZERO
    }
}

/// What a round reports while it listens.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum RoundEvent {
    /// The input level of the last block (0 = silence or below −60 dBFS, 1 = full scale).
    Level(f32),
    /// An utterance was heard and decided nothing; listening goes on to the deadline.
    Missed { transcript: String },
}

/// A round's result.
#[derive(Debug, Clone)]
pub struct Round {
    pub ending: Ending,
    pub transcript: String,
    pub audio_ms: u64,
    pub wall: Duration,
    /// Where in the input the answer was decided: the end of the audio block whose recognition
    /// decided it, in milliseconds of input audio (`None` when nothing was decided).
    pub decided_at_ms: Option<f64>,
    /// Wall time spent recognizing that last block (what a live decision adds to the audio's
    /// own arrival).
    pub decision_compute: Duration,
    /// When the decision would have been ready had the input arrived in real time, on the
    /// audio's clock (ms): each block arrives at its end and is recognized once the blocks
    /// before it are, taking the wall time its recognition took here. Unlike
    /// `decided_at_ms + decision_compute`, this counts work done for the decision in earlier
    /// blocks (a transcription while the speaker falls quiet) that delays the blocks after it.
    /// `None` when nothing was decided.
    pub ready_at_ms: Option<f64>,
    /// One line per utterance the recognizer judged (see `AnswerRecognizer::judged`).
    pub judged: Vec<String>,
    /// Wall time spent converting and recognizing audio (the rest of `wall` went waiting for
    /// it): above `audio_ms`, recognition did not keep up with the microphone.
    pub busy: Duration,
    /// The first block louder than `[speech] quiet_dbfs`: where it starts in the input (ms of
    /// audio) and the wall time from the start of the round to its recognition (`None` when
    /// none was).
    pub first_sound: Option<(u64, Duration)>,
}

impl Round {
    /// The CLI's report of this round.
    pub fn report(&self) -> ListenReport {
        let answer = match &self.ending {
            Ending::Heard(h) => Some(h.answer),
            _ => None,
        };
        ListenReport {
            answer: answer.into(),
            transcript: self.transcript.clone(),
            audio_ms: self.audio_ms,
            decided_after_ms: self.wall.as_millis() as u64,
        }
    }
}

/// Root-mean-square level of a block mapped from −60..0 dBFS to 0..1.
pub(crate) fn level(block: &[f32]) -> f32 {
    if block.is_empty() {
        return 0.0;
    }
    let rms = (block.iter().map(|s| s * s).sum::<f32>() / block.len() as f32).sqrt();
    if rms <= 0.0 {
        return 0.0;
    }
    ((20.0 * rms.log10() + 60.0) / 60.0).clamp(0.0, 1.0)
}

/// Runs one round: feeds `source` to a fresh recognizer (for a prompt showing `challenge`, or
/// none) until an answer, the timeout (audio or wall time), the end of the input, or `stop`.
/// `on_event` gets a level every `level_interval_ms` of audio, and each utterance that decided
/// nothing.
#[allow(clippy::too_many_arguments)]
pub(crate) fn listen_round(
    model: &dyn RecognizerModel,
    pack: Arc<PhrasePack>,
    config: &Config,
    challenge: Option<&str>,
    timeout: Duration,
    source: &mut dyn Source,
    stop: &AtomicBool,
    on_event: &mut dyn FnMut(RoundEvent),
) -> Result<Round, SpeechError> {
    let started = Instant::now();
    let rate = source.rate();
    let mut recognizer = model.recognizer(pack, config, challenge)?;
    let mut converter = Converter::with_denoise(rate, model.sample_rate(), config.denoise)?;
    let limit_frames = timeout.as_millis() as u64 * u64::from(rate) / 1000;
    let level_frames = (config.level_interval_ms * u64::from(rate) / 1000).max(1);
    let mut next_level = 0u64;
    let mut converted = Vec::new();
    let mut tally = Tally::new(started, rate);
    let quiet = 10f32.powf(config.quiet_dbfs / 20.0);
    loop {
        if stop.load(Ordering::Relaxed) {
            return Ok(tally.finish(Ending::Stopped, recognizer.as_ref()));
        }
        if tally.frames >= limit_frames || started.elapsed() >= timeout {
            return Ok(tally.finish(Ending::Timeout, recognizer.as_ref()));
        }
        let next = source.next()?;
        tally.block_started = Instant::now();
        let Some(mut block) = next else {
            let ending = end_of_input(&mut converter, recognizer.as_mut(), &mut converted)?;
            return Ok(tally.finish(ending, recognizer.as_ref()));
        };
        // Audio past the timeout is never heard: an answer must start and end in time.
        block.truncate((limit_frames - tally.frames) as usize);
        tally.count(&block, quiet);
        if tally.frames >= next_level && !block.is_empty() {
            on_event(RoundEvent::Level(level(&block)));
            next_level = tally.frames + level_frames;
        }
        converted.clear();
        converter.push(&block, &mut converted)?;
        if let Some(heard) = recognizer.feed(&converted)? {
            return Ok(tally.finish(Ending::Heard(heard), recognizer.as_ref()));
        }
        if let Some(transcript) = recognizer.take_missed() {
            on_event(RoundEvent::Missed { transcript });
        }
        tally.done_with_block();
    }
}

/// Where a round is in its input and its wall time, from which its [`Round`] is reported.
struct Tally {
    started: Instant,
    rate: u32,
    /// Frames of input audio taken so far.
    frames: u64,
    /// When the block being recognized arrived.
    block_started: Instant,
    busy: Duration,
    first_sound: Option<(u64, Duration)>,
    /// When the last block's recognition would have ended with real-time input, on the audio's
    /// clock in ms (see `Round::ready_at_ms`).
    clock_ms: f64,
}

impl Tally {
    /// A round that started at `started`, on audio at `rate`.
    fn new(started: Instant, rate: u32) -> Tally {
        Tally {
            started,
            rate,
            frames: 0,
            block_started: Instant::now(),
            busy: Duration::ZERO,
            first_sound: None,
            clock_ms: 0.0,
        }
    }

    /// Where the input is, on the audio's clock, in ms.
    fn arrived_ms(&self) -> f64 {
        self.frames as f64 * 1000.0 / f64::from(self.rate.max(1))
    }

    /// The block started at `block_started` is recognized: its time counts as busy, and on the
    /// real-time clock it ends that long after it arrived or the block before it ended.
    fn done_with_block(&mut self) {
        let took = self.block_started.elapsed();
        self.busy += took;
        self.clock_ms = self.clock_ms.max(self.arrived_ms()) + took.as_secs_f64() * 1000.0;
    }

    /// Milliseconds of input audio in `frames`.
    fn audio_ms(&self, frames: u64) -> u64 {
        frames * 1000 / u64::from(self.rate.max(1))
    }

    /// Counts `block` in, noting where the first one louder than `quiet` starts.
    fn count(&mut self, block: &[f32], quiet: f32) {
        if self.first_sound.is_none() && block.iter().any(|s| s.abs() > quiet) {
            self.first_sound = Some((self.audio_ms(self.frames), self.started.elapsed()));
        }
        self.frames += block.len() as u64;
    }

    /// The round as it ended with `ending`, with what `recognizer` heard.
    fn finish(&self, ending: Ending, recognizer: &dyn Utterances) -> Round {
        let decided = matches!(ending, Ending::Heard(_));
        let compute = decision_compute(decided, self.block_started);
        Round {
            decided_at_ms: decided.then(|| self.arrived_ms()),
            ready_at_ms: decided
                .then(|| self.clock_ms.max(self.arrived_ms()) + compute.as_secs_f64() * 1000.0),
            decision_compute: compute,
            ending,
            transcript: recognizer.last_transcript().to_string(),
            judged: recognizer.judged().to_vec(),
            audio_ms: self.audio_ms(self.frames),
            wall: self.started.elapsed(),
            busy: self.busy + compute,
            first_sound: self.first_sound,
        }
    }
}

/// The input has ended: what the converter still holds is recognized, then the recognizer's
/// last utterance is decided.
fn end_of_input(
    converter: &mut Converter,
    recognizer: &mut dyn Utterances,
    converted: &mut Vec<i16>,
) -> Result<Ending, SpeechError> {
    converted.clear();
    converter.flush(converted)?;
    if let Some(heard) = recognizer.feed(converted)? {
        return Ok(Ending::Heard(heard));
    }
    Ok(match recognizer.finish()? {
        Some(heard) => Ending::Heard(heard),
        None => Ending::EndOfInput,
    })
}

/// One round over a whole WAV file with an already loaded model and pack, for a prompt showing
/// `challenge` (or none): the evaluation's entry point (the same conversion and recognition as
/// live capture, block by block).
pub fn round_from_wav(
    model: &dyn RecognizerModel,
    pack: Arc<PhrasePack>,
    config: &Config,
    challenge: Option<&str>,
    path: &Path,
) -> Result<Round, SpeechError> {
    round_from_wavs(model, pack, config, challenge, path, None)
}

/// [`round_from_wav`] with a repeat in the same listening window: `then` (a file and the
/// silence before it, in ms) follows the first file, as a person says the answer again after
/// the dialog's "didn't catch that". The repeat is heard only when the first utterance decided
/// nothing (a decision ends the round), and only as far as the window lasts.
pub fn round_from_wavs(
    model: &dyn RecognizerModel,
    pack: Arc<PhrasePack>,
    config: &Config,
    challenge: Option<&str>,
    path: &Path,
    then: Option<(&Path, u32)>,
) -> Result<Round, SpeechError> {
    let mut source = WavSource::open(path, config.block_ms)?;
    if let Some((then, gap_ms)) = then {
        source = source.followed_by(WavSource::open(then, config.block_ms)?, gap_ms, then)?;
    }
    let stop = AtomicBool::new(false);
    listen_round(
        model,
        pack,
        config,
        challenge,
        config.timeout(),
        &mut source,
        &stop,
        &mut |_: RoundEvent| {},
    )
}

/// `pcp-listen`: resolves model and pack, listens once, returns the JSON-able report.
pub fn run(options: ListenOptions) -> Result<ListenReport, SpeechError> {
    let lang = options
        .lang
        .clone()
        .unwrap_or_else(|| options.config.language());
    let config = Config {
        language: lang,
        model: options
            .model
            .clone()
            .unwrap_or_else(|| options.config.model.clone()),
        ..options.config.clone()
    };
    // With the configured decoder options, so the CLI hears what the compositor would.
    let model = load_configured(&config)?;
    run_with_model(model.as_ref(), options)
}

/// Like [`run`] with an already loaded model (the model is expensive: load it once).
pub fn run_with_model(
    model: &dyn RecognizerModel,
    options: ListenOptions,
) -> Result<ListenReport, SpeechError> {
    let mut config = options.config;
    if let Some(lang) = options.lang {
        config.language = lang;
    }
    config.validate()?;
    let timeout = options.timeout.unwrap_or_else(|| config.timeout());
    if timeout.is_zero() {
        return Err(SpeechError::Config(
            "the timeout must be more than 0".into(),
        ));
    }
    let dir = (!config.phrases_dir.as_os_str().is_empty()).then_some(config.phrases_dir.as_path());
    let pack = PhrasePack::load(dir, &config.language())?;
    model.check_pack(&pack)?;
    let pack = Arc::new(pack);
    let stop = AtomicBool::new(false);
    let round = match options.input {
        ListenInput::Wav(path) => {
            let mut source = WavSource::open(&path, config.block_ms)?;
            listen_round(
                model,
                pack,
                &config,
                None,
                timeout,
                &mut source,
                &stop,
                &mut |_: RoundEvent| {},
            )?
        }
        ListenInput::Device(name) => {
            if let Some(name) = name {
                config.input_device = name;
            }
            let mut capture = Capture::open(&config)?;
            listen_round(
                model,
                pack,
                &config,
                None,
                timeout,
                &mut capture,
                &stop,
                &mut |_: RoundEvent| {},
            )?
        }
    };
    Ok(round.report())
}
