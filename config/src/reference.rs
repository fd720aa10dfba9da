//! The reference compositor's own sections (`[compositor]`, and `[polkit]` in its own file; a
//! host adds its own the same way)
//! and the virtual output specs (`WxH[*SCALE][@X,Y]`) that `--output` and `outputs` take. Here,
//! not in the compositor, so that `pcpctl validate` checks them without linking Smithay.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::section::Protection::{self, *};
use crate::section::{Invalid, Section};

/// Why a config value or flag was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    #[error("output `{spec}`: {why} (expected WxH[*SCALE][@X,Y], e.g. 1280x720*2@1920,0)")]
    Output { spec: String, why: String },
    #[error("colour `{0}`: expected #rrggbb")]
    Colour(String),
}

/// One virtual output: size in physical pixels, position in the global logical space, scale.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OutputSpec {
    pub width: i32,
    pub height: i32,
    pub scale: f64,
    pub x: i32,
    pub y: i32,
}

impl OutputSpec {
    /// The size in logical pixels (physical ÷ scale, rounded).
    pub fn logical_size(&self) -> (i32, i32) {
        (
            (f64::from(self.width) / self.scale).round() as i32,
            (f64::from(self.height) / self.scale).round() as i32,
        )
    }
}

impl fmt::Display for OutputSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}", self.width, self.height)?;
        if self.scale != 1.0 {
            write!(f, "*{}", self.scale)?;
        }
        write!(f, "@{},{}", self.x, self.y)
    }
}

impl FromStr for OutputSpec {
    type Err = SpecError;

    fn from_str(spec: &str) -> Result<OutputSpec, SpecError> {
        let err = |why: &str| SpecError::Output {
            spec: spec.to_string(),
            why: why.to_string(),
        };
        let (size_scale, pos) = match spec.split_once('@') {
            Some((a, b)) => (a, Some(b)),
            None => (spec, None),
        };
        let (size, scale) = match size_scale.split_once('*') {
            Some((a, b)) => (a, Some(b)),
            None => (size_scale, None),
        };
        let (w, h) = size.split_once('x').ok_or_else(|| err("no WxH size"))?;
        let width: i32 = w
            .trim()
            .parse()
            .map_err(|_| err("the width is not a number"))?;
        let height: i32 = h
            .trim()
            .parse()
            .map_err(|_| err("the height is not a number"))?;
        if !(64..=16384).contains(&width) || !(64..=16384).contains(&height) {
            return Err(err("each side must be 64 to 16384 pixels"));
        }
        let scale: f64 = match scale {
            Some(s) => s
                .trim()
                .parse()
                .map_err(|_| err("the scale is not a number"))?,
            None => 1.0,
        };
        if !(0.5..=4.0).contains(&scale) {
            return Err(err("the scale must be between 0.5 and 4"));
        }
        let (x, y) = match pos {
            Some(p) => {
                let (x, y) = p
                    .split_once(',')
                    .ok_or_else(|| err("the position is not X,Y"))?;
                (
                    x.trim().parse().map_err(|_| err("X is not a number"))?,
                    y.trim().parse().map_err(|_| err("Y is not a number"))?,
                )
            }
            None => (0, 0),
        };
        Ok(OutputSpec {
            width,
            height,
            scale,
            x,
            y,
        })
    }
}

/// `[compositor]`: what the reference compositor reads from the config file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CompositorConfig {
    /// Virtual outputs of the headless backend when no `--output` flag is given.
    pub outputs: Vec<String>,
    /// The colour behind all windows.
    pub background: String,
    /// How often the headless backend draws, in milliseconds.
    pub frame_interval_ms: u32,
    /// How often the config file is checked for changes, in milliseconds (0: never).
    pub reload_check_ms: u32,
    /// The notice shown when a changed config file is refused.
    pub reload_error_notice: String,
    /// The notice shown when a changed policy is not applied (the user denied its prompt, it
    /// timed out, or nobody could answer it); the reason follows.
    pub policy_refused_notice: String,
    /// How often the microphone, the speech model and the haptic device are probed while
    /// running, in milliseconds (they are also probed before every decision).
    pub device_probe_ms: u32,
    /// How often the voice listener's events are read while a prompt listens, in milliseconds.
    pub voice_poll_ms: u32,
    /// Logical pixels per inch of touch input, to turn the compositor's touch points into the
    /// millimetres `[haptics.tap]` distances are in.
    pub touch_dpi: f64,
    /// Publish the dialog's accessibility tree on the session's AT-SPI bus, for screen readers
    /// (read at start; only in a build with the `a11y` feature, the default).
    pub accessibility: bool,
    /// The xcursor theme of the pointer drawn on the winit and udev backends.
    pub cursor_theme: String,
    /// The cursor's size in logical pixels (the theme's nearest size is used).
    pub cursor_size: u32,
}

impl Default for CompositorConfig {
    fn default() -> Self {
        CompositorConfig {
            outputs: vec!["1920x1080@0,0".into()],
            background: "#202028".into(),
            frame_interval_ms: 16,
            reload_check_ms: 1000,
            reload_error_notice:
                "The changed config was refused; the previous config stays in use.".into(),
            policy_refused_notice:
                "The changed config lowers protection and was not approved; the policy in force \
                 stays."
                    .into(),
            device_probe_ms: 2000,
            voice_poll_ms: 20,
            touch_dpi: 96.0,
            accessibility: true,
            cursor_theme: "Adwaita".into(),
            cursor_size: 24,
        }
    }
}

crate::sections! {
    /// The reference compositor's own sections.
    pub struct ReferenceSections {
        compositor: CompositorConfig,
        polkit: crate::polkit::PolkitConfig,
    }
}

impl Section for CompositorConfig {
    const NAME: &'static str = "compositor";
    const PROTECTION: &'static [(&'static str, Protection)] = &[
        // The touch scale turns touches into the millimetres a double tap is judged in.
        ("touch_dpi", AnyChangeLowers),
        // What the notices say: the user reads them.
        ("reload_error_notice", AnyChangeLowers),
        ("policy_refused_notice", AnyChangeLowers),
        // Whether a screen reader can read the dialog to its user.
        ("accessibility", AnyChangeLowers),
        // The pointer is how the user aims at the dialog's buttons.
        ("cursor_theme", AnyChangeLowers),
        ("cursor_size", AnyChangeLowers),
        ("outputs", Unrelated),
        ("background", Unrelated),
        ("frame_interval_ms", Unrelated),
        ("reload_check_ms", Unrelated),
        ("device_probe_ms", Unrelated),
        ("voice_poll_ms", Unrelated),
    ];

    fn validate(&self) -> Result<(), Invalid> {
        if let Err(e) = self.output_specs() {
            return Err(Invalid::new("outputs", e.to_string()));
        }
        if let Err(e) = self.background_rgb() {
            return Err(Invalid::new("background", e.to_string()));
        }
        let within = |key: &str, value: f64, (low, high): (f64, f64)| {
            if (low..=high).contains(&value) {
                Ok(())
            } else {
                Err(Invalid::new(
                    key,
                    format!("must be {low} to {high}, not {value}"),
                ))
            }
        };
        within("cursor_size", self.cursor_size.into(), (8.0, 256.0))?;
        within(
            "frame_interval_ms",
            self.frame_interval_ms.into(),
            (1.0, f64::from(u32::MAX)),
        )?;
        within(
            "device_probe_ms",
            self.device_probe_ms.into(),
            (100.0, 60_000.0),
        )?;
        within("voice_poll_ms", self.voice_poll_ms.into(), (1.0, 1000.0))?;
        within("touch_dpi", self.touch_dpi, (30.0, 2000.0))
    }
}

impl CompositorConfig {
    /// The parsed `outputs`.
    pub fn output_specs(&self) -> Result<Vec<OutputSpec>, SpecError> {
        self.outputs.iter().map(|s| s.parse()).collect()
    }

    /// The background as linear 0..1 RGB.
    pub fn background_rgb(&self) -> Result<[f32; 3], SpecError> {
        let hex = self
            .background
            .strip_prefix('#')
            .filter(|h| h.len() == 6)
            .ok_or_else(|| SpecError::Colour(self.background.clone()))?;
        let channel = |i: usize| {
            u8::from_str_radix(&hex[i..i + 2], 16)
                .map(|v| f32::from(v) / 255.0)
                .map_err(|_| SpecError::Colour(self.background.clone()))
        };
        Ok([channel(0)?, channel(2)?, channel(4)?])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_specs_parse_size_scale_and_position() {
        let s: OutputSpec = "1280x720*2@1920,0".parse().unwrap();
        assert_eq!(
            (s.width, s.height, s.scale, s.x, s.y),
            (1280, 720, 2.0, 1920, 0)
        );
        assert_eq!(s.logical_size(), (640, 360));
        assert_eq!(s.to_string(), "1280x720*2@1920,0");
        let s: OutputSpec = "800x480".parse().unwrap();
        assert_eq!((s.x, s.y, s.scale), (0, 0, 1.0));
    }

    #[test]
    fn bad_output_specs_say_what_is_wrong() {
        for (spec, why) in [
            ("1920", "no WxH"),
            ("axb", "width"),
            ("10x10", "64 to 16384"),
            ("800x600*9", "scale"),
            ("800x600@1", "X,Y"),
        ] {
            let e = spec.parse::<OutputSpec>().unwrap_err().to_string();
            assert!(e.contains(why) && e.contains(spec), "{spec}: {e}");
        }
    }

    fn refused(section: &str) -> String {
        let text = format!("[manifests]\ndirs = []\n\n[compositor]\n{section}\n");
        let options = pcp_gate::config::LoadOptions {
            system_dirs: Vec::new(),
            ..Default::default()
        };
        let path = std::path::Path::new("c.toml");
        match crate::Config::<ReferenceSections>::from_text(path, &text, &options) {
            Ok(_) => panic!("accepted: {section}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn the_section_refuses_unknown_keys_bad_colours_and_values_out_of_range_at_their_line() {
        for (section, named) in [
            ("outputs = [\"640x480\"]\nbogus = 1", "bogus"),
            ("background = \"red\"", "#rrggbb"),
            ("device_probe_ms = 5", "device_probe_ms"),
            ("voice_poll_ms = 0", "voice_poll_ms"),
            ("touch_dpi = 5.0", "touch_dpi"),
            ("cursor_size = 4", "cursor_size"),
        ] {
            let e = refused(section);
            let line = 5 + section.lines().count() - 1;
            assert!(e.starts_with(&format!("c.toml:{line}:")), "{section}: {e}");
            assert!(e.contains(named), "{section}: {e}");
        }
    }

    #[test]
    fn every_key_of_the_reference_sections_has_a_protection_order() {
        use crate::SectionGroup;
        let unordered = ReferenceSections::unordered();
        assert!(unordered.is_empty(), "{unordered:#?}");
    }
}

#[cfg(test)]
mod shipped {
    use super::*;

    #[test]
    fn the_shipped_section_parses_to_the_defaults() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../assets/config/compositor.toml"
        );
        let text = std::fs::read_to_string(path).unwrap();
        let file: std::collections::BTreeMap<String, CompositorConfig> =
            toml::from_str(&text).unwrap();
        let parsed = &file["compositor"];
        parsed.validate().unwrap();
        let default = CompositorConfig::default();
        assert_eq!(parsed.outputs, default.outputs);
        assert_eq!(parsed.background, default.background);
        assert_eq!(parsed.frame_interval_ms, default.frame_interval_ms);
        assert_eq!(parsed.reload_check_ms, default.reload_check_ms);
        assert_eq!(parsed.reload_error_notice, default.reload_error_notice);
        assert_eq!(parsed.policy_refused_notice, default.policy_refused_notice);
        assert_eq!(parsed.device_probe_ms, default.device_probe_ms);
        assert_eq!(parsed.voice_poll_ms, default.voice_poll_ms);
        assert_eq!(parsed.touch_dpi, default.touch_dpi);
    }
}
