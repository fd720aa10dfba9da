//! Sample conversion: any cpal sample type and channel count to mono `f32`, and mono `f32` at the
//! device's rate to mono `i16` at the model's rate through rubato's FFT resampler.

use cpal::{FromSample, Sample};
use rubato::{FftFixedIn, Resampler};

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

/// Mono `f32` at `from` Hz in, mono `i16` at `to` Hz out.
pub struct Converter {
    from: u32,
    to: u32,
    resampler: Option<FftFixedIn<f32>>,
    pending: Vec<f32>,
    out_buf: Vec<Vec<f32>>,
}

impl Converter {
    /// A converter; with equal rates it only converts the sample type.
    pub fn new(from: u32, to: u32) -> Result<Converter, SpeechError> {
        let resampler = if from == to {
            None
        } else {
            let r = FftFixedIn::<f32>::new(from as usize, to as usize, RESAMPLE_CHUNK, 2, 1)
                .map_err(|e| SpeechError::Resample {
                    from,
                    to,
                    reason: e.to_string(),
                })?;
            Some(r)
        };
        let out_len = resampler.as_ref().map_or(0, |r| r.output_frames_max());
        Ok(Converter {
            from,
            to,
            resampler,
            pending: Vec::new(),
            out_buf: vec![vec![0.0; out_len]],
        })
    }

    /// Converts `input`, appending what is ready to `out` (the resampler keeps a partial chunk).
    pub fn push(&mut self, input: &[f32], out: &mut Vec<i16>) -> Result<(), SpeechError> {
        let Some(resampler) = self.resampler.as_mut() else {
            out.extend(input.iter().map(|s| to_i16(*s)));
            return Ok(());
        };
        // A NaN or infinity would make the FFT resampler fail on every later chunk.
        self.pending
            .extend(input.iter().map(|s| if s.is_finite() { *s } else { 0.0 }));
        let mut start = 0;
        while self.pending.len() - start >= RESAMPLE_CHUNK {
            let chunk = [&self.pending[start..start + RESAMPLE_CHUNK]];
            let (_, written) = resampler
                .process_into_buffer(&chunk, &mut self.out_buf, None)
                .map_err(|e| SpeechError::Resample {
                    from: self.from,
                    to: self.to,
                    reason: e.to_string(),
                })?;
            out.extend(self.out_buf[0][..written].iter().map(|s| to_i16(*s)));
            start += RESAMPLE_CHUNK;
        }
        self.pending.drain(..start);
        Ok(())
    }

    /// Flushes the partial chunk (padded with silence) at the end of a finite input.
    pub fn flush(&mut self, out: &mut Vec<i16>) -> Result<(), SpeechError> {
        if self.resampler.is_some() && !self.pending.is_empty() {
            let pad = RESAMPLE_CHUNK - self.pending.len();
            let silence = vec![0.0; pad];
            self.push(&silence, out)?;
        }
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
}
