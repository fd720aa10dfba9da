//! Turning the configured cue into kernel force-feedback effects: one effect per pulse, each
//! scheduled by its replay delay so the kernel times the pattern and nobody has to sleep.

use evdev::{FFEffectData, FFEffectKind, FFEnvelope, FFReplay, FFTrigger, FFWaveform};

use crate::config::{CueConfig, Waveform};

/// Which kind of effect a device can play.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FfKind {
    /// Two-motor rumble (`FF_RUMBLE`): phones, gamepads, most vibration motors.
    Rumble,
    /// A periodic waveform (`FF_PERIODIC`): devices without a rumble interface.
    Periodic,
}

/// Maps a 0.0–1.0 fraction onto the full `u16` range (out-of-range input is clamped).
pub fn fraction_to_u16(fraction: f64) -> u16 {
    (fraction.clamp(0.0, 1.0) * f64::from(u16::MAX)).round() as u16
}

/// Maps a 0.0–1.0 fraction onto `0..=i16::MAX` (out-of-range input is clamped).
pub fn fraction_to_i16(fraction: f64) -> i16 {
    (fraction.clamp(0.0, 1.0) * f64::from(i16::MAX)).round() as i16
}

/// The value written as `FF_GAIN` for a configured gain.
pub fn gain_value(gain: f64) -> u16 {
    fraction_to_u16(gain)
}

/// The effects for one cue: pulse `i` starts at `i * (pulse_ms + gap_ms)` and lasts `pulse_ms`.
/// The config has been validated, so every millisecond value fits the kernel's `u16` fields;
/// values that somehow do not are saturated rather than wrapped.
pub fn cue_effects(cue: &CueConfig, kind: FfKind) -> Vec<FFEffectData> {
    let length = saturate_u16(u64::from(cue.pulse_ms));
    let step = u64::from(cue.pulse_ms) + u64::from(cue.gap_ms);
    let effect_kind = match kind {
        FfKind::Rumble => FFEffectKind::Rumble {
            strong_magnitude: fraction_to_u16(cue.strong_magnitude),
            weak_magnitude: fraction_to_u16(cue.weak_magnitude),
        },
        FfKind::Periodic => FFEffectKind::Periodic {
            waveform: match cue.waveform {
                Waveform::Sine => FFWaveform::Sine,
                Waveform::Square => FFWaveform::Square,
                Waveform::Triangle => FFWaveform::Triangle,
            },
            period: saturate_u16(u64::from(cue.period_ms)),
            magnitude: fraction_to_i16(cue.periodic_magnitude),
            offset: 0,
            phase: 0,
            // No attack or fade: a pulse should be felt crisply at full strength.
            envelope: FFEnvelope {
                attack_length: 0,
                attack_level: 0,
                fade_length: 0,
                fade_level: 0,
            },
        },
    };
    (0..u64::from(cue.pulses))
        .map(|i| FFEffectData {
            direction: 0,
            trigger: FFTrigger::default(),
            replay: FFReplay {
                length,
                delay: saturate_u16(i * step),
            },
            kind: effect_kind,
        })
        .collect()
}

fn saturate_u16(v: u64) -> u16 {
    u16::try_from(v).unwrap_or(u16::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rumble_effects_field_by_field() {
        let cue = CueConfig {
            pulses: 3,
            pulse_ms: 40,
            gap_ms: 60,
            strong_magnitude: 1.0,
            weak_magnitude: 0.25,
            ..CueConfig::default()
        };
        let effects = cue_effects(&cue, FfKind::Rumble);
        assert_eq!(effects.len(), 3);
        for (i, e) in effects.iter().enumerate() {
            assert_eq!(e.direction, 0);
            assert_eq!(e.trigger.button, 0);
            assert_eq!(e.trigger.interval, 0);
            assert_eq!(e.replay.length, 40);
            assert_eq!(e.replay.delay, 100 * i as u16);
            match e.kind {
                FFEffectKind::Rumble {
                    strong_magnitude,
                    weak_magnitude,
                } => {
                    assert_eq!(strong_magnitude, 65535);
                    assert_eq!(weak_magnitude, 16384);
                }
                other => panic!("expected rumble, got {other:?}"),
            }
        }
    }

    #[test]
    fn periodic_effects_field_by_field() {
        let cue = CueConfig {
            pulses: 2,
            pulse_ms: 80,
            gap_ms: 120,
            waveform: Waveform::Square,
            period_ms: 25,
            periodic_magnitude: 0.5,
            ..CueConfig::default()
        };
        let effects = cue_effects(&cue, FfKind::Periodic);
        assert_eq!(effects.len(), 2);
        assert_eq!(
            effects[0].replay,
            FFReplay {
                length: 80,
                delay: 0
            }
        );
        assert_eq!(
            effects[1].replay,
            FFReplay {
                length: 80,
                delay: 200
            }
        );
        for e in &effects {
            assert_eq!(e.direction, 0);
            assert_eq!(e.trigger, FFTrigger::default());
            match e.kind {
                FFEffectKind::Periodic {
                    waveform,
                    period,
                    magnitude,
                    offset,
                    phase,
                    envelope,
                } => {
                    assert_eq!(waveform, FFWaveform::Square);
                    assert_eq!(period, 25);
                    assert_eq!(magnitude, 16384);
                    assert_eq!(offset, 0);
                    assert_eq!(phase, 0);
                    assert_eq!(envelope.attack_length, 0);
                    assert_eq!(envelope.attack_level, 0);
                    assert_eq!(envelope.fade_length, 0);
                    assert_eq!(envelope.fade_level, 0);
                }
                other => panic!("expected periodic, got {other:?}"),
            }
        }
    }

    #[test]
    fn default_cue_is_two_short_pulses() {
        let effects = cue_effects(&CueConfig::default(), FfKind::Rumble);
        assert_eq!(effects.len(), 2);
        assert_eq!(
            effects[0].replay,
            FFReplay {
                length: 70,
                delay: 0
            }
        );
        assert_eq!(
            effects[1].replay,
            FFReplay {
                length: 70,
                delay: 180
            }
        );
    }

    #[test]
    fn gain_and_fractions_cover_the_range_and_clamp() {
        assert_eq!(gain_value(0.0), 0);
        assert_eq!(gain_value(1.0), u16::MAX);
        assert_eq!(gain_value(0.5), 32768);
        assert_eq!(gain_value(7.0), u16::MAX);
        assert_eq!(fraction_to_i16(-1.0), 0);
        assert_eq!(fraction_to_i16(1.0), i16::MAX);
    }
}
