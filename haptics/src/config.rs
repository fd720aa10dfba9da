//! The `[haptics]` section of the compositor config: which devices to use, the cue pattern and
//! gain, and every double-tap threshold. Parsing, defaults and validation live here; nothing else
//! in the crate hard-codes a threshold.

use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::ConfigError;

/// Most pulses a cue may have: each pulse is one uploaded effect and devices hold few (often 16).
pub const MAX_PULSES: u32 = 8;

/// The `[haptics]` section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// Whether haptic confirmation is offered at all; `false` makes it unavailable (`disabled`).
    pub enabled: bool,
    /// Force-feedback device: empty for the first capable one, a path starting with `/`, or an
    /// exact device name.
    pub device: String,
    /// Touch device read directly through evdev: empty for the first multitouch (protocol B)
    /// device, a path starting with `/`, or an exact device name. Only used when the compositor
    /// does not forward its own touch events.
    pub touch_device: String,
    /// Overall force-feedback strength, 0.0 to 1.0 (sent as `FF_GAIN` where the device has it).
    pub gain: f64,
    /// The "confirmation needed" vibration.
    pub cue: CueConfig,
    /// What counts as a double tap.
    pub tap: TapConfig,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            enabled: true,
            device: String::new(),
            touch_device: String::new(),
            gain: 0.75,
            cue: CueConfig::default(),
            tap: TapConfig::default(),
        }
    }
}

/// The periodic waveform used on devices that have `FF_PERIODIC` but not `FF_RUMBLE`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Waveform {
    Sine,
    Square,
    Triangle,
}

/// The cue: `pulses` vibrations of `pulse_ms`, separated by `gap_ms`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CueConfig {
    /// Number of pulses (1 to 8).
    pub pulses: u32,
    /// Length of each pulse in milliseconds.
    pub pulse_ms: u32,
    /// Silence between pulses in milliseconds.
    pub gap_ms: u32,
    /// Rumble devices: heavy motor strength, 0.0 to 1.0.
    pub strong_magnitude: f64,
    /// Rumble devices: light motor strength, 0.0 to 1.0.
    pub weak_magnitude: f64,
    /// Periodic-only devices: waveform.
    pub waveform: Waveform,
    /// Periodic-only devices: period of the wave in milliseconds.
    pub period_ms: u32,
    /// Periodic-only devices: amplitude, 0.0 to 1.0.
    pub periodic_magnitude: f64,
}

impl Default for CueConfig {
    fn default() -> Self {
        CueConfig {
            pulses: 2,
            pulse_ms: 70,
            gap_ms: 110,
            strong_magnitude: 0.5,
            weak_magnitude: 0.9,
            waveform: Waveform::Sine,
            period_ms: 20,
            periodic_magnitude: 0.8,
        }
    }
}

impl CueConfig {
    /// How long the whole cue lasts, from the start of the first pulse to the end of the last.
    pub fn duration(&self) -> Duration {
        let pulses = u64::from(self.pulses);
        let ms =
            pulses * u64::from(self.pulse_ms) + pulses.saturating_sub(1) * u64::from(self.gap_ms);
        Duration::from_millis(ms)
    }
}

/// Double-tap thresholds. Distances are in millimetres on the touch surface.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TapConfig {
    /// Longest time from the first tap's lift to the second tap's touch, in milliseconds.
    pub max_interval_ms: u32,
    /// Shortest such time, in milliseconds: anything quicker is contact bounce, not a second tap.
    pub min_interval_ms: u32,
    /// Longest contact that is still a tap, in milliseconds (longer is a press).
    pub max_tap_ms: u32,
    /// Farthest a contact may move from where it touched and still be a tap, in millimetres.
    pub max_movement_mm: f64,
    /// Farthest the second tap may land from the first, in millimetres.
    pub max_distance_mm: f64,
    /// Taps that touch down before the cue has finished plus this many milliseconds are ignored,
    /// so a tap already under way cannot answer a prompt the user has not felt.
    pub arm_delay_ms: u32,
    /// Device units per millimetre when a touch device reports no resolution.
    pub fallback_units_per_mm: f64,
}

impl Default for TapConfig {
    fn default() -> Self {
        TapConfig {
            max_interval_ms: 400,
            min_interval_ms: 40,
            max_tap_ms: 250,
            max_movement_mm: 2.5,
            max_distance_mm: 15.0,
            arm_delay_ms: 0,
            fallback_units_per_mm: 10.0,
        }
    }
}

/// A whole config document, of which only `[haptics]` is ours; other sections are ignored here.
#[derive(Deserialize)]
struct Document {
    #[serde(default)]
    haptics: Config,
}

impl Config {
    /// Parses the `[haptics]` section of a config document (`origin` names the file in errors)
    /// and validates it. A missing section gives the defaults.
    pub fn from_document(text: &str, origin: &Path) -> Result<Config, ConfigError> {
        let doc: Document = toml::from_str(text).map_err(|e| ConfigError::Parse {
            origin: origin.to_path_buf(),
            message: e.to_string(),
        })?;
        doc.haptics
            .validate()
            .map_err(|(key, reason)| ConfigError::Invalid {
                origin: origin.to_path_buf(),
                key,
                reason,
            })?;
        Ok(doc.haptics)
    }

    /// Checks every value's range; on failure returns the dotted key and what is wrong with it.
    pub fn validate(&self) -> Result<(), (String, String)> {
        fn fraction(key: &str, v: f64) -> Result<(), (String, String)> {
            if (0.0..=1.0).contains(&v) {
                Ok(())
            } else {
                Err((key.into(), format!("{v} is not between 0.0 and 1.0")))
            }
        }
        fn positive_mm(key: &str, v: f64) -> Result<(), (String, String)> {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err((key.into(), format!("{v} is not a positive number")))
            }
        }
        fn ms_u16(key: &str, v: u32) -> Result<(), (String, String)> {
            if v <= u32::from(u16::MAX) {
                Ok(())
            } else {
                Err((key.into(), format!("{v} ms exceeds {} ms", u16::MAX)))
            }
        }
        fraction("haptics.gain", self.gain)?;
        let c = &self.cue;
        if !(1..=MAX_PULSES).contains(&c.pulses) {
            return Err((
                "haptics.cue.pulses".into(),
                format!("{} is not between 1 and {MAX_PULSES}", c.pulses),
            ));
        }
        if c.pulse_ms == 0 {
            return Err(("haptics.cue.pulse_ms".into(), "must be at least 1".into()));
        }
        ms_u16("haptics.cue.pulse_ms", c.pulse_ms)?;
        ms_u16("haptics.cue.period_ms", c.period_ms)?;
        // The last pulse's start is its replay delay, a u16 in the kernel's ff_replay.
        let last_start = u64::from(c.pulses - 1) * (u64::from(c.pulse_ms) + u64::from(c.gap_ms));
        if last_start > u64::from(u16::MAX) {
            return Err((
                "haptics.cue.gap_ms".into(),
                format!(
                    "the last pulse would start after {last_start} ms (limit {})",
                    u16::MAX
                ),
            ));
        }
        fraction("haptics.cue.strong_magnitude", c.strong_magnitude)?;
        fraction("haptics.cue.weak_magnitude", c.weak_magnitude)?;
        fraction("haptics.cue.periodic_magnitude", c.periodic_magnitude)?;
        let t = &self.tap;
        if t.max_interval_ms == 0 || t.min_interval_ms >= t.max_interval_ms {
            return Err((
                "haptics.tap.min_interval_ms".into(),
                format!(
                    "{} must be below haptics.tap.max_interval_ms ({}), which must be positive",
                    t.min_interval_ms, t.max_interval_ms
                ),
            ));
        }
        if t.max_tap_ms == 0 {
            return Err(("haptics.tap.max_tap_ms".into(), "must be at least 1".into()));
        }
        positive_mm("haptics.tap.max_movement_mm", t.max_movement_mm)?;
        positive_mm("haptics.tap.max_distance_mm", t.max_distance_mm)?;
        positive_mm("haptics.tap.fallback_units_per_mm", t.fallback_units_per_mm)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    fn shipped() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../assets/config/haptics.toml")
    }

    #[test]
    fn shipped_config_parses_to_the_defaults() {
        let path = shipped();
        let text = std::fs::read_to_string(&path).unwrap();
        let parsed = Config::from_document(&text, &path).unwrap();
        assert_eq!(parsed, Config::default());
    }

    #[test]
    fn shipped_config_documents_every_key() {
        let text = std::fs::read_to_string(shipped()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let mut keys = 0;
        for (i, line) in lines.iter().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') || line.starts_with('[') {
                continue;
            }
            keys += 1;
            assert!(
                i > 0 && lines[i - 1].trim_start().starts_with('#'),
                "key on line {} has no comment above it: {line}",
                i + 1
            );
        }
        // 4 top-level scalars + 8 cue keys + 7 tap keys.
        assert_eq!(keys, 19);
    }

    #[test]
    fn unknown_key_is_an_error_naming_file_and_key() {
        let err = Config::from_document(
            "[haptics.tap]\nmax_intervall_ms = 300\n",
            Path::new("x.toml"),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("x.toml"), "{err}");
        assert!(err.contains("max_intervall_ms"), "{err}");
        assert!(err.contains("line 2"), "{err}");
    }

    #[test]
    fn out_of_range_values_name_their_key() {
        let cases = [
            ("[haptics]\ngain = 1.5\n", "haptics.gain"),
            ("[haptics.cue]\npulses = 0\n", "haptics.cue.pulses"),
            ("[haptics.cue]\npulses = 9\n", "haptics.cue.pulses"),
            ("[haptics.cue]\npulse_ms = 0\n", "haptics.cue.pulse_ms"),
            (
                "[haptics.cue]\npulses = 8\ngap_ms = 20000\n",
                "haptics.cue.gap_ms",
            ),
            (
                "[haptics.cue]\nweak_magnitude = -0.1\n",
                "haptics.cue.weak_magnitude",
            ),
            (
                "[haptics.tap]\nmin_interval_ms = 500\n",
                "haptics.tap.min_interval_ms",
            ),
            (
                "[haptics.tap]\nmax_movement_mm = 0.0\n",
                "haptics.tap.max_movement_mm",
            ),
            (
                "[haptics.tap]\nmax_distance_mm = nan\n",
                "haptics.tap.max_distance_mm",
            ),
        ];
        for (text, key) in cases {
            let err = Config::from_document(text, Path::new("c.toml")).unwrap_err();
            match &err {
                ConfigError::Invalid { key: k, .. } => assert_eq!(k, key, "{text}"),
                other => panic!("{text}: expected Invalid, got {other}"),
            }
            assert!(err.to_string().contains("c.toml"));
        }
    }

    #[test]
    fn other_sections_are_left_alone_and_missing_section_gives_defaults() {
        let cfg = Config::from_document("[overlay]\nanything = 1\n", Path::new("c.toml")).unwrap();
        assert_eq!(cfg, Config::default());
    }

    #[test]
    fn cue_duration_counts_pulses_and_gaps() {
        let cue = CueConfig {
            pulses: 3,
            pulse_ms: 50,
            gap_ms: 100,
            ..CueConfig::default()
        };
        assert_eq!(cue.duration(), Duration::from_millis(350));
    }
}
