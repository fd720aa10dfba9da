//! The streaming noise suppressor (`[speech] denoise`): RNNoise (the `nnnoiseless` crate) on
//! 480-sample frames of mono audio at 48 kHz, between the capture and the resampler to the
//! model's rate.
//!
//! RNNoise works on 10 ms frames with a 20 ms window: each frame's output is the overlap of the
//! previous frame's second half and this frame's first half, so the stream comes out exactly one
//! frame (480 samples, 10 ms) late, and up to 479 samples more wait here until a frame is full.
//! That is acceptable for the end of an answer: the decision waits for 200 ms of quiet after it
//! (`quiet_final_ms`) and the resampler behind already holds ~21 ms, so 10 to 20 ms more moves
//! the decision by a few percent of its latency, and the latency figures measure it (the decision
//! is timed against the audio fed in, not the audio the recognizer has heard).

use nnnoiseless::DenoiseState;

/// The only rate RNNoise's model was trained for.
pub const DENOISE_RATE: u32 = 48_000;

/// Samples per RNNoise frame (10 ms at 48 kHz).
pub const FRAME: usize = DenoiseState::FRAME_SIZE;

/// RNNoise's samples are `f32` in the range of `i16` (its model was trained on 16-bit PCM),
/// ours are in −1..1.
const SCALE: f32 = 32_768.0;

/// The noise suppressor's state across blocks: the network's and the overlap's (inside
/// `DenoiseState`) and the samples of a frame not yet full.
pub struct Denoiser {
    state: Box<DenoiseState<'static>>,
    /// The frame being filled, already scaled; `filled` samples of it are valid.
    frame: [f32; FRAME],
    filled: usize,
    output: [f32; FRAME],
}

impl Default for Denoiser {
    fn default() -> Self {
        Self::new()
    }
}

impl Denoiser {
    /// A fresh suppressor: the first frame it gives is the fade-in of its window (near silence),
    /// kept so that every later sample is exactly one frame late rather than shifted by a
    /// start-up that depends on the first block.
    pub fn new() -> Denoiser {
        Denoiser {
            state: DenoiseState::new(),
            frame: [0.0; FRAME],
            filled: 0,
            output: [0.0; FRAME],
        }
    }

    /// Denoises `input` (mono, 48 kHz, −1..1), appending every full frame's output to `out`; the
    /// rest waits for the next call. Allocates nothing once `out` has grown to a block's size.
    pub fn push(&mut self, mut input: &[f32], out: &mut Vec<f32>) {
        while !input.is_empty() {
            let take = (FRAME - self.filled).min(input.len());
            for (slot, s) in self.frame[self.filled..self.filled + take]
                .iter_mut()
                .zip(&input[..take])
            {
                // A NaN or infinity would stay in the network's recurrent state for good.
                *slot = if s.is_finite() {
                    (s * SCALE).clamp(-SCALE, SCALE - 1.0)
                } else {
                    0.0
                };
            }
            self.filled += take;
            input = &input[take..];
            if self.filled == FRAME {
                self.state.process_frame(&mut self.output, &self.frame);
                out.extend(self.output.iter().map(|s| s / SCALE));
                self.filled = 0;
            }
        }
    }

    /// At the end of a finite input: pads the partial frame with silence and pushes one frame of
    /// silence more, so the last real frame leaves the overlap too.
    pub fn flush(&mut self, out: &mut Vec<f32>) {
        let silence = [0.0; FRAME];
        if self.filled > 0 {
            self.push(&silence[self.filled..], out);
        }
        self.push(&silence, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 1 s of a 300 Hz tone in white-ish noise (a fixed LCG, so the test repeats), at 48 kHz.
    fn noisy_tone() -> Vec<f32> {
        let mut seed = 12_345u32;
        (0..48_000)
            .map(|i| {
                seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                let noise = (seed >> 16) as f32 / 65_536.0 - 0.5;
                let t = i as f32 / 48_000.0;
                0.3 * (2.0 * std::f32::consts::PI * 300.0 * t).sin() + 0.05 * noise
            })
            .collect()
    }

    #[test]
    fn odd_blocks_give_the_same_output_as_one_block() {
        let input = noisy_tone();
        let mut whole = Vec::new();
        let mut one = Denoiser::new();
        one.push(&input, &mut whole);
        one.flush(&mut whole);

        // Block sizes that never line up with a frame: 1, 7, 479, 481, 1000, 333, …
        let mut pieces = Vec::new();
        let mut streamed = Denoiser::new();
        let sizes = [1usize, 7, 479, 481, 1000, 333, 2, 960, 13];
        let mut rest = input.as_slice();
        for size in sizes.iter().cycle() {
            if rest.is_empty() {
                break;
            }
            let n = (*size).min(rest.len());
            streamed.push(&rest[..n], &mut pieces);
            rest = &rest[n..];
        }
        streamed.flush(&mut pieces);

        // Whole frames only, one frame longer than the input (the overlap's delay).
        assert_eq!(whole.len(), input.len() + FRAME);
        assert_eq!(whole, pieces);
        // It did something: the output is not the input one frame late.
        let moved = input
            .iter()
            .zip(&whole[FRAME..])
            .filter(|(a, b)| (*a - *b).abs() > 1e-3)
            .count();
        assert!(moved > input.len() / 2, "{moved}");
    }

    #[test]
    fn a_partial_frame_waits_and_broken_samples_are_silence() {
        let mut d = Denoiser::new();
        let mut out = Vec::new();
        d.push(&[0.1; FRAME - 1], &mut out);
        assert!(out.is_empty());
        d.push(&[f32::NAN, f32::INFINITY], &mut out);
        assert_eq!(out.len(), FRAME);
        d.push(&[0.1; 2 * FRAME], &mut out);
        assert!(out.iter().all(|s| s.is_finite()), "{out:?}");
    }
}
