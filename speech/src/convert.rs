//! Sample conversion: any cpal sample type and channel count to mono `f32`, and mono `f32` at the
//! device's rate to mono `i16` at the model's rate through rubato's FFT resampler, with the
//! noise suppressor (`[speech] denoise`, at 48 kHz) in front of it when it is on.

use cpal::{FromSample, Sample};
use rubato::{FftFixedIn, Resampler};

use crate::denoise::{DENOISE_RATE, Denoiser};
use crate::error::SpeechError;

/// Input frames per resampler call: ~20 ms at 48 kHz, small enough to add little latency.
const RESAMPLE_CHUNK: usize = 1024;

/// Averages interleaved frames of `channels` samples into mono `f32`, appended to `out`.
pub fn downmix<T>(interleaved: &[T], channels: usize, out: &mut Vec<f32>)
where
    T: Sample,
    f32: FromSample<T>,
{
    let channels = channels.max(1);
    let scale = 1.0 / channels as f32;
    out.extend(
        interleaved
            .chunks_exact(channels)
            .map(|frame| frame.iter().map(|s| f32::from_sample(*s)).sum::<f32>() * scale),
    );
}

/// One sample to `i16`, rounded to the nearest step (cpal's `from_sample` truncates towards zero,
/// a dead zone around silence); anything not finite (a broken device) becomes silence.
fn to_i16(s: f32) -> i16 {
    if s.is_finite() {
        (s * 32_768.0).round().clamp(-32_768.0, 32_767.0) as i16
    } else {
        0
    }
}

/// One FFT resampler with the partial chunk it keeps between calls.
struct Resample {
    from: u32,
    to: u32,
    chunk: usize,
    inner: FftFixedIn<f32>,
    pending: Vec<f32>,
    out_buf: Vec<Vec<f32>>,
}

impl Resample {
    fn new(from: u32, to: u32, chunk: usize) -> Result<Resample, SpeechError> {
        let inner =
            FftFixedIn::<f32>::new(from as usize, to as usize, chunk, 2, 1).map_err(|e| {
                SpeechError::Resample {
                    from,
                    to,
                    reason: e.to_string(),
                }
            })?;
        let out_len = inner.output_frames_max();
        Ok(Resample {
            from,
            to,
            chunk,
            inner,
            pending: Vec::with_capacity(4 * chunk),
            out_buf: vec![vec![0.0; out_len]],
        })
    }

    /// Resamples `input`, appending every full chunk's output to `out`.
    fn push(&mut self, input: &[f32], out: &mut Vec<f32>) -> Result<(), SpeechError> {
        // A NaN or infinity would make the FFT resampler fail on every later chunk.
        self.pending
            .extend(input.iter().map(|s| if s.is_finite() { *s } else { 0.0 }));
        let mut start = 0;
        while self.pending.len() - start >= self.chunk {
            let chunk = [&self.pending[start..start + self.chunk]];
            let (_, written) = self
                .inner
                .process_into_buffer(&chunk, &mut self.out_buf, None)
                .map_err(|e| SpeechError::Resample {
                    from: self.from,
                    to: self.to,
                    reason: e.to_string(),
                })?;
            out.extend_from_slice(&self.out_buf[0][..written]);
            start += self.chunk;
        }
        // `drain` keeps the capacity: no allocation once a block's worth has been seen.
        self.pending.drain(..start);
        Ok(())
    }

    /// Pads the partial chunk with silence and resamples it.
    fn flush(&mut self, out: &mut Vec<f32>) -> Result<(), SpeechError> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let silence = vec![0.0; self.chunk - self.pending.len()];
        self.push(&silence, out)
    }
}

/// Mono `f32` at `from` Hz in, mono `i16` at `to` Hz out, optionally denoised on the way.
pub struct Converter {
    /// With the noise suppressor, from a device rate other than 48 kHz to 48 kHz: RNNoise only
    /// works at 48 kHz. A second resampling costs a little CPU and its chunk's latency, but
    /// keeps one path for every device rate (a 16 kHz microphone is denoised the same way).
    to_denoise: Option<Resample>,
    denoiser: Option<Denoiser>,
    /// To the model's rate; none when the rates are equal.
    to_model: Option<Resample>,
    /// Reused between calls, so a block allocates nothing once the first few have passed.
    at_48k: Vec<f32>,
    denoised: Vec<f32>,
    resampled: Vec<f32>,
}

impl Converter {
    /// A converter without the noise suppressor; with equal rates it only converts the sample
    /// type.
    pub fn new(from: u32, to: u32) -> Result<Converter, SpeechError> {
        Self::with_denoise(from, to, false)
    }

    /// A converter that runs the noise suppressor first when `denoise` is set.
    pub fn with_denoise(from: u32, to: u32, denoise: bool) -> Result<Converter, SpeechError> {
        let to_denoise = if denoise && from != DENOISE_RATE {
            // ~10 ms of input per call (at least one RNNoise frame's worth at 48 kHz), not the
            // model resampler's 1024 samples, which are 64 ms at a 16 kHz device.
            let chunk = (from as usize / 100).max(16);
            Some(Resample::new(from, DENOISE_RATE, chunk)?)
        } else {
            None
        };
        let middle = if denoise { DENOISE_RATE } else { from };
        let to_model = if middle == to {
            None
        } else {
            Some(Resample::new(middle, to, RESAMPLE_CHUNK)?)
        };
        Ok(Converter {
            to_denoise,
            denoiser: denoise.then(Denoiser::new),
            to_model,
            at_48k: Vec::new(),
            denoised: Vec::new(),
            resampled: Vec::new(),
        })
    }

    /// Converts `input`, appending what is ready to `out` (each stage keeps a partial chunk or
    /// frame for the next call).
    pub fn push(&mut self, input: &[f32], out: &mut Vec<i16>) -> Result<(), SpeechError> {
        self.run(input, false, out)
    }

    /// Flushes every stage's partial chunk (padded with silence) at the end of a finite input.
    pub fn flush(&mut self, out: &mut Vec<i16>) -> Result<(), SpeechError> {
        self.run(&[], true, out)
    }

    fn run(&mut self, input: &[f32], flush: bool, out: &mut Vec<i16>) -> Result<(), SpeechError> {
        let Converter {
            to_denoise,
            denoiser,
            to_model,
            at_48k,
            denoised,
            resampled,
        } = self;
        let mut current = input;
        if let Some(r) = to_denoise {
            at_48k.clear();
            r.push(current, at_48k)?;
            if flush {
                r.flush(at_48k)?;
            }
            current = at_48k;
        }
        if let Some(d) = denoiser {
            denoised.clear();
            d.push(current, denoised);
            if flush {
                d.flush(denoised);
            }
            current = denoised;
        }
        if let Some(r) = to_model {
            resampled.clear();
            r.push(current, resampled)?;
            if flush {
                r.flush(resampled)?;
            }
            current = resampled;
        }
        out.extend(current.iter().map(|s| to_i16(*s)));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn downmix_averages_channels_of_any_sample_type() {
        let mut out = Vec::new();
        downmix(&[i16::MAX, 0, 0, i16::MIN], 2, &mut out);
        assert!(
            (out[0] - 0.5).abs() < 1e-3 && (out[1] + 0.5).abs() < 1e-3,
            "{out:?}"
        );
        out.clear();
        downmix(&[0u8, 255, 128], 1, &mut out);
        assert!(
            out[0] < -0.99 && out[1] > 0.98 && out[2].abs() < 1e-6,
            "{out:?}"
        );
    }

    #[test]
    fn resampling_keeps_duration_and_a_tone() {
        // 1 s of 440 Hz at 44.1 kHz → ~16000 samples at 16 kHz, still a 440 Hz tone.
        let input: Vec<f32> = (0..44_100)
            .map(|i| 0.5 * (2.0 * std::f32::consts::PI * 440.0 * i as f32 / 44_100.0).sin())
            .collect();
        let mut c = Converter::new(44_100, 16_000).unwrap();
        let mut out = Vec::new();
        for block in input.chunks(441) {
            c.push(block, &mut out).unwrap();
        }
        c.flush(&mut out).unwrap();
        assert!((15_500..=16_800).contains(&out.len()), "{}", out.len());
        // Zero crossings in the middle 0.5 s: 440 per second → ~440 in half a second (two per cycle).
        let mid = &out[4000..12_000];
        let crossings = mid.windows(2).filter(|w| (w[0] < 0) != (w[1] < 0)).count();
        assert!((430..=450).contains(&crossings), "{crossings}");
        let peak = mid.iter().map(|s| s.unsigned_abs()).max().unwrap();
        assert!((14_000..=18_000).contains(&peak), "{peak}");
    }

    #[test]
    fn broken_samples_become_silence_instead_of_stopping_the_resampler() {
        let mut c = Converter::new(44_100, 16_000).unwrap();
        let mut out = Vec::new();
        let mut block = vec![0.25f32; 2048];
        block[100] = f32::NAN;
        block[900] = f32::INFINITY;
        c.push(&block, &mut out).unwrap();
        c.push(&[0.25; 2048], &mut out).unwrap();
        assert!(!out.is_empty());
        let mut same_rate = Converter::new(16_000, 16_000).unwrap();
        let mut out = Vec::new();
        same_rate
            .push(&[f32::NAN, 1.5, -2.0, 0.5 / 32_768.0], &mut out)
            .unwrap();
        assert_eq!(out, [0, 32_767, -32_768, 1]);
    }

    #[test]
    fn denoising_converter_streams_at_any_device_rate() {
        // 1 s of a 440 Hz tone at each rate, whole or in odd blocks: the same samples out, about
        // 1 s of them at 16 kHz (the resamplers' and the suppressor's delays are a few frames).
        for rate in [48_000u32, 44_100, 16_000] {
            let input: Vec<f32> = (0..rate)
                .map(|i| 0.3 * (2.0 * std::f32::consts::PI * 440.0 * i as f32 / rate as f32).sin())
                .collect();
            let mut whole = Vec::new();
            let mut c = Converter::with_denoise(rate, 16_000, true).unwrap();
            c.push(&input, &mut whole).unwrap();
            c.flush(&mut whole).unwrap();
            let mut pieces = Vec::new();
            let mut c = Converter::with_denoise(rate, 16_000, true).unwrap();
            for block in input.chunks(rate as usize / 50 + 7) {
                c.push(block, &mut pieces).unwrap();
            }
            c.flush(&mut pieces).unwrap();
            assert_eq!(whole, pieces, "{rate} Hz");
            assert!(
                (16_000..=17_500).contains(&whole.len()),
                "{rate} Hz: {}",
                whole.len()
            );
            let peak = whole.iter().map(|s| s.unsigned_abs()).max().unwrap();
            assert!(peak > 3_000, "{rate} Hz: the tone is gone ({peak})");
        }
    }
}
