//! Where a round's audio comes from: the microphone (opened again when its stream fails), a
//! plain capture, or a WAV file handed out in blocks, all as mono blocks at a fixed rate.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::capture::Capture;
use crate::config::Config;
use crate::convert::downmix;
use crate::error::SpeechError;

/// How long one wait for a capture block may last before timeouts are checked again.
const POLL: Duration = Duration::from_millis(20);

/// A source of mono audio blocks at a fixed rate.
pub(crate) trait Source {
    fn rate(&self) -> u32;
    /// `Ok(Some(empty))` means nothing yet; `Ok(None)` means the input ended.
    fn next(&mut self) -> Result<Option<Vec<f32>>, SpeechError>;
}

impl Source for Capture {
    fn rate(&self) -> u32 {
        Capture::rate(self)
    }
    fn next(&mut self) -> Result<Option<Vec<f32>>, SpeechError> {
        Ok(Some(self.next_block(POLL)?.unwrap_or_default()))
    }
}

/// The microphone as a listening source: its capture, opened again when the stream fails, up
/// to `[speech] capture_reopen` times. A capture overrun (the system too busy to read the
/// device in time) leaves an ALSA input stream failing for good (cpal reports POLLERR on
/// every poll and never recovers it), so without this one busy moment would leave the prompt
/// deaf until its deadline. Audio lost in between is not heard; nothing is made up for it.
///
/// An overrun can also stop the stream without any error: cpal's ALSA backend prepares the
/// capture again after an overrun but never restarts it, so no audio comes any more. A capture
/// that delivers nothing for twice its buffer (`capture_buffer_ms`) is taken as failed that way.
pub(crate) struct Microphone<'a> {
    config: &'a Config,
    capture: Capture,
    reopened: u32,
    /// When the capture last delivered audio (or was opened).
    last_audio: Instant,
}

impl<'a> Microphone<'a> {
    /// Opens the configured input device.
    pub(crate) fn open(config: &'a Config) -> Result<Microphone<'a>, SpeechError> {
        Ok(Microphone {
            config,
            capture: Capture::open(config)?,
            reopened: 0,
            last_audio: Instant::now(),
        })
    }

    /// The next block, or the stream's failure: an error it reported, or no audio for twice
    /// the capture buffer.
    fn next_or_stalled(&mut self) -> Result<Option<Vec<f32>>, SpeechError> {
        let stalled_after = Duration::from_millis(2 * u64::from(self.config.capture_buffer_ms));
        match self.capture.next_block(POLL)? {
            Some(block) => {
                self.last_audio = Instant::now();
                Ok(Some(block))
            }
            None if self.last_audio.elapsed() > stalled_after => Err(SpeechError::Stream {
                name: self.capture.device_name().to_string(),
                reason: format!(
                    "no audio for {} ms (an overrun stops the capture without an error)",
                    self.last_audio.elapsed().as_millis()
                ),
            }),
            None => Ok(None),
        }
    }
}

impl Source for Microphone<'_> {
    fn rate(&self) -> u32 {
        self.capture.rate()
    }

    fn next(&mut self) -> Result<Option<Vec<f32>>, SpeechError> {
        match self.next_or_stalled() {
            Err(SpeechError::Stream { name, reason })
                if self.reopened < self.config.capture_reopen =>
            {
                self.reopened += 1;
                tracing::warn!(
                    device = %name,
                    "the capture stream failed ({reason}); opening it again ({} of {})",
                    self.reopened,
                    self.config.capture_reopen
                );
                let rate = self.capture.rate();
                // The failed stream goes first: the device may take one capture at a time.
                self.capture.close();
                self.capture = Capture::open(self.config).map_err(|e| SpeechError::Stream {
                    name: name.clone(),
                    reason: format!("{reason}; opening it again failed: {e}"),
                })?;
                self.last_audio = Instant::now();
                if self.capture.rate() != rate {
                    return Err(SpeechError::Stream {
                        name,
                        reason: format!(
                            "opened again at {} Hz instead of {rate} Hz",
                            self.capture.rate()
                        ),
                    });
                }
                Ok(Some(Vec::new()))
            }
            other => Ok(Some(other?.unwrap_or_default())),
        }
    }
}

/// A whole WAV file, read up front and handed out in blocks.
pub(crate) struct WavSource {
    audio: Vec<f32>,
    rate: u32,
    pos: usize,
    block: usize,
}

impl WavSource {
    pub(crate) fn open(path: &Path, block_ms: u32) -> Result<WavSource, SpeechError> {
        let bad = |reason: String| SpeechError::Wav {
            path: path.to_path_buf(),
            reason,
        };
        let mut reader = hound::WavReader::open(path).map_err(|e| bad(e.to_string()))?;
        let spec = reader.spec();
        if spec.channels == 0 || spec.sample_rate < 4000 {
            return Err(bad(format!(
                "{} channels at {} Hz is not usable audio",
                spec.channels, spec.sample_rate
            )));
        }
        let channels = usize::from(spec.channels);
        let mut audio = Vec::new();
        match (spec.sample_format, spec.bits_per_sample) {
            (hound::SampleFormat::Float, 32) => {
                let s: Result<Vec<f32>, _> = reader.samples::<f32>().collect();
                downmix(&s.map_err(|e| bad(e.to_string()))?, channels, &mut audio);
            }
            (hound::SampleFormat::Int, bits @ 1..=32) => {
                let s: Result<Vec<i32>, _> = reader.samples::<i32>().collect();
                let scale = 1.0 / (1u64 << (bits - 1)) as f32;
                let s: Vec<f32> = s
                    .map_err(|e| bad(e.to_string()))?
                    .iter()
                    .map(|v| *v as f32 * scale)
                    .collect();
                downmix(&s, channels, &mut audio);
            }
            (format, bits) => {
                return Err(bad(format!(
                    "unsupported sample format {format:?} with {bits} bits"
                )));
            }
        }
        let block = (spec.sample_rate as usize * block_ms as usize / 1000).max(1);
        Ok(WavSource {
            audio,
            rate: spec.sample_rate,
            pos: 0,
            block,
        })
    }

    /// `then` played after this file and `gap_ms` of silence, as one stream (both at one rate).
    pub(super) fn followed_by(
        mut self,
        then: WavSource,
        gap_ms: u32,
        path: &Path,
    ) -> Result<Self, SpeechError> {
        if then.rate != self.rate {
            return Err(SpeechError::Wav {
                path: path.to_path_buf(),
                reason: format!(
                    "{} Hz, but the clip before it is at {} Hz",
                    then.rate, self.rate
                ),
            });
        }
        let gap = self.rate as usize * gap_ms as usize / 1000;
        self.audio.extend(std::iter::repeat_n(0.0, gap));
        self.audio.extend(then.audio);
        Ok(self)
    }
}

impl Source for WavSource {
    fn rate(&self) -> u32 {
        self.rate
    }
    fn next(&mut self) -> Result<Option<Vec<f32>>, SpeechError> {
        if self.pos >= self.audio.len() {
            return Ok(None);
        }
        let end = (self.pos + self.block).min(self.audio.len());
        let block = self.audio[self.pos..end].to_vec();
        self.pos = end;
        Ok(Some(block))
    }
}
