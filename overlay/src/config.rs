//! The `[overlay]` section of the compositor config: theme choice and palettes, accessibility
//! settings (text scale, reduced motion, following the desktop's contrast), every string the
//! dialog shows, the clickjacking-guard delays and the layout and text limits. The shipped default file is
//! `assets/config/overlay.toml`; a test checks it parses to [`Config::default`].

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::content::Risk;
pub use crate::strings::Strings;

/// The overlay's configuration. Unknown keys are errors; missing keys take their defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// Which palette to draw with.
    pub theme: ThemeName,
    /// Milliseconds the dialog must be visible and unmoved before input counts.
    pub guard_delay_ms: u64,
    /// How far an early press pushes the moment input starts to count, in milliseconds.
    pub guard_early_press_extension_ms: u64,
    /// Cap on the total extension early presses can add after one arming, in milliseconds.
    pub guard_max_extension_ms: u64,
    /// Approving these risk classes needs Approve held down this long (0 = a click is enough).
    pub hold_to_approve_ms: u64,
    /// Risk classes whose Approve must be held.
    pub hold_risks: Vec<Risk>,
    /// Widest the dialog gets, in logical pixels.
    pub max_width: u32,
    /// Smallest space kept between the dialog and the output's edges, in logical pixels.
    pub margin: u32,
    /// Most pixels the dialog's buffer may have (width × height, physical). On a very tall or
    /// very dense output the body scrolls sooner instead; content whose fixed part cannot fit
    /// is refused (a denial). Bounds the memory and drawing time one prompt can cost.
    pub max_buffer_pixels: u32,
    /// Smallest height of a touch target (the buttons), in logical pixels.
    pub min_target: u32,
    /// Base text size in logical pixels; headings and small print scale from it.
    pub font_size: f32,
    /// Multiplies every text size (and the dialog's width with it) for readability.
    pub text_scale: TextScale,
    /// No animations: the voice level meter is not drawn moving and a press-and-hold shows its
    /// progress in quarters.
    pub reduced_motion: bool,
    /// Use the high-contrast palette whenever the desktop asks for high contrast (the host
    /// tells the dialog, e.g. from the appearance portal), whatever `theme` says.
    pub follow_desktop_contrast: bool,
    /// Outputs at least this wide (logical pixels) get the dialog near the focal point instead of
    /// centred.
    pub large_output_width: u32,
    /// Most steps a multi-step intent may have; content with more is refused (fail closed).
    pub max_steps: u32,
    /// Most extra parameters a prompt may list; content with more is refused (fail closed).
    pub max_extra_params: u32,
    /// Most characters of a client string (the action, the target, a step, a parameter value)
    /// shown or spoken, counted after invisible characters are written out; the rest is cut with
    /// the `cut` mark.
    pub max_text_chars: u32,
    /// The same for short client strings: the self-declared app id and parameter names.
    pub max_name_chars: u32,
    /// Every string the dialog shows.
    pub text: Strings,
    /// The three palettes.
    pub themes: Themes,
    /// Load the system's fonts as fallback after the bundled one (CJK, other scripts).
    pub system_fonts: bool,
    /// Extra font files loaded after the bundled font and before the system's.
    pub extra_fonts: Vec<String>,
    /// The font package that draws each phrase pack's language (by language code), named when
    /// the dialog's fonts cannot draw the pack's words.
    pub font_packages: std::collections::BTreeMap<String, String>,
    /// Risk classes whose dialog is modal: no client gets pointer, touch or keys while it is up,
    /// and it has the keyboard at once. Every other dialog leaves the desktop usable.
    pub modal_for: Vec<Risk>,
    /// Logical pixels around the dialog that take pointer and touch input for it alone, so a
    /// client under its edge never receives a press meant for it.
    pub input_margin: u32,
    /// The compositor shortcut that gives the dialog the keyboard (`Mod+Mod+Key`: modifiers
    /// `Super`, `Ctrl`, `Alt`, `Shift`, then an XKB key name); no client ever receives it.
    pub focus_shortcut: String,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            theme: ThemeName::Dark,
            guard_delay_ms: 750,
            guard_early_press_extension_ms: 500,
            guard_max_extension_ms: 1500,
            hold_to_approve_ms: 800,
            hold_risks: Vec::new(),
            max_width: 560,
            margin: 16,
            max_buffer_pixels: 16_777_216,
            min_target: 48,
            font_size: 15.0,
            text_scale: TextScale(1.0),
            reduced_motion: false,
            follow_desktop_contrast: true,
            large_output_width: 2560,
            max_steps: 32,
            max_extra_params: 64,
            max_text_chars: 2000,
            max_name_chars: 64,
            text: Strings::default(),
            themes: Themes::default(),
            system_fonts: true,
            extra_fonts: Vec::new(),
            font_packages: [
                ("ko", "fonts-nanum"),
                ("ja", "fonts-noto-cjk"),
                ("zh", "fonts-noto-cjk"),
            ]
            .into_iter()
            .map(|(l, p)| (l.to_string(), p.to_string()))
            .collect(),
            modal_for: Vec::new(),
            input_margin: 24,
            focus_shortcut: "Super+Return".into(),
        }
    }
}

impl Config {
    /// Fewest pixels `max_buffer_pixels` may allow: a 560 × 400 dialog at scale 1.
    pub const MIN_BUFFER_PIXELS: u32 = 560 * 400;
    /// Most pixels `max_buffer_pixels` may allow: a 16384 × 16384 buffer (1 GiB).
    pub const MAX_BUFFER_PIXELS: u32 = 16384 * 16384;
    /// Range of `font_size`, in logical pixels.
    pub const FONT_SIZE_RANGE: (f32, f32) = (6.0, 96.0);
    /// Range of `max_width`, in logical pixels.
    pub const MAX_WIDTH_RANGE: (u32, u32) = (240, 8192);
    /// Range of `min_target`, in logical pixels.
    pub const MIN_TARGET_RANGE: (u32, u32) = (16, 512);

    /// Checks the sizes no dialog can be drawn with; on failure returns the dotted key and what
    /// is wrong with it. Without this a cap of 0 would load and then deny every prompt.
    pub fn validate(&self) -> Result<(), (String, String)> {
        fn within<T: PartialOrd + fmt::Display>(
            key: &str,
            v: T,
            (low, high): (T, T),
        ) -> Result<(), (String, String)> {
            if v >= low && v <= high {
                Ok(())
            } else {
                Err((
                    format!("overlay.{key}"),
                    format!("{v} is not between {low} and {high}"),
                ))
            }
        }
        within(
            "max_buffer_pixels",
            self.max_buffer_pixels,
            (Self::MIN_BUFFER_PIXELS, Self::MAX_BUFFER_PIXELS),
        )?;
        // NaN fails both comparisons and is refused too.
        within("font_size", self.font_size, Self::FONT_SIZE_RANGE)?;
        within("max_width", self.max_width, Self::MAX_WIDTH_RANGE)?;
        within("min_target", self.min_target, Self::MIN_TARGET_RANGE)?;
        Ok(())
    }

    /// The palette of the configured theme.
    pub fn palette(&self) -> &Palette {
        self.themes.get(self.theme)
    }

    /// A client string as the dialog shows it and the spoken question should say it: invisible
    /// and direction-changing characters written out, capped at `max_text_chars` with the `cut`
    /// mark (see [`crate::visible::visible_text`]).
    pub fn visible_text(&self, text: &str) -> String {
        crate::visible::visible_text(text, self.max_text_chars as usize, &self.text.cut)
    }

    /// The same for short strings (names), capped at `max_name_chars`.
    pub fn visible_name(&self, text: &str) -> String {
        crate::visible::visible_text(text, self.max_name_chars as usize, &self.text.cut)
    }
}

/// The text scale factor, 0.5–3.0.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "f64", into = "f64")]
pub struct TextScale(f32);

impl TextScale {
    /// Smallest and largest factor accepted.
    pub const RANGE: (f32, f32) = (0.5, 3.0);

    /// The factor; `None` outside [`TextScale::RANGE`].
    pub fn new(factor: f32) -> Option<TextScale> {
        (Self::RANGE.0..=Self::RANGE.1)
            .contains(&factor)
            .then_some(TextScale(factor))
    }

    /// The factor.
    pub fn get(self) -> f32 {
        self.0
    }
}

impl TryFrom<f64> for TextScale {
    type Error = String;
    fn try_from(v: f64) -> Result<Self, Self::Error> {
        TextScale::new(v as f32).ok_or_else(|| {
            format!(
                "text_scale {v} is outside {}–{}",
                TextScale::RANGE.0,
                TextScale::RANGE.1
            )
        })
    }
}

impl From<TextScale> for f64 {
    fn from(s: TextScale) -> f64 {
        f64::from(s.0)
    }
}

/// The name of a palette.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ThemeName {
    Light,
    Dark,
    HighContrast,
}

impl ThemeName {
    /// Parses `light`, `dark` or `high-contrast`; `None` for anything else.
    pub fn parse(name: &str) -> Option<ThemeName> {
        match name {
            "light" => Some(ThemeName::Light),
            "dark" => Some(ThemeName::Dark),
            "high-contrast" => Some(ThemeName::HighContrast),
            _ => None,
        }
    }
}

/// The three palettes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Themes {
    pub light: Palette,
    pub dark: Palette,
    pub high_contrast: Palette,
}

impl Themes {
    /// The palette called `name`.
    pub fn get(&self, name: ThemeName) -> &Palette {
        match name {
            ThemeName::Light => &self.light,
            ThemeName::Dark => &self.dark,
            ThemeName::HighContrast => &self.high_contrast,
        }
    }
}

impl Default for Themes {
    fn default() -> Self {
        let c = |s: &str| Rgba::parse(s).unwrap_or(Rgba::BLACK);
        Themes {
            light: Palette {
                card: c("#fbfbfc"),
                border: c("#c4c7cf"),
                text: c("#1b1d22"),
                muted: c("#555b66"),
                button: c("#e8eaee"),
                button_text: c("#1b1d22"),
                disabled_text: c("#8d929c"),
                focus: c("#1f5fd1"),
                meter: c("#1f8a4c"),
                track: c("#dcdfe4"),
                badge: c("#1f5fd1"),
                badge_text: c("#ffffff"),
                routine: c("#1f8a4c"),
                privileged: c("#a05a00"),
                destructive: c("#c01c28"),
                system: c("#7b2fbf"),
            },
            dark: Palette {
                card: c("#24262b"),
                border: c("#44474f"),
                text: c("#f2f3f5"),
                muted: c("#aab0bb"),
                button: c("#363941"),
                button_text: c("#f2f3f5"),
                disabled_text: c("#767b85"),
                focus: c("#78aeff"),
                meter: c("#4cd07d"),
                track: c("#3b3e46"),
                badge: c("#3d6fd6"),
                badge_text: c("#ffffff"),
                routine: c("#4cd07d"),
                privileged: c("#f0a53a"),
                destructive: c("#ff6b6b"),
                system: c("#c48cff"),
            },
            high_contrast: Palette {
                card: c("#000000"),
                border: c("#ffffff"),
                text: c("#ffffff"),
                muted: c("#ffffff"),
                button: c("#000000"),
                button_text: c("#ffffff"),
                disabled_text: c("#9a9a9a"),
                focus: c("#ffff00"),
                meter: c("#00ff66"),
                track: c("#5a5a5a"),
                badge: c("#ffff00"),
                badge_text: c("#000000"),
                routine: c("#00ff66"),
                privileged: c("#ffb000"),
                destructive: c("#ff4040"),
                system: c("#ff66ff"),
            },
        }
    }
}

/// The colours of one theme. Risk colours are used for the card's edge stripe, the risk label
/// and Approve's border, so the class is visible even without reading.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Palette {
    pub card: Rgba,
    pub border: Rgba,
    pub text: Rgba,
    pub muted: Rgba,
    pub button: Rgba,
    pub button_text: Rgba,
    pub disabled_text: Rgba,
    pub focus: Rgba,
    pub meter: Rgba,
    pub track: Rgba,
    pub badge: Rgba,
    pub badge_text: Rgba,
    pub routine: Rgba,
    pub privileged: Rgba,
    pub destructive: Rgba,
    pub system: Rgba,
}

impl Palette {
    /// The colour of a risk class.
    pub fn risk(&self, risk: Risk) -> Rgba {
        match risk {
            Risk::Routine => self.routine,
            Risk::Privileged => self.privileged,
            Risk::Destructive => self.destructive,
            Risk::System => self.system,
        }
    }
}

/// A straight-alpha colour written `#rrggbb` or `#rrggbbaa` in config.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Rgba {
    pub r: u8,
    pub g: u8,
    pub b: u8,
    pub a: u8,
}

impl Rgba {
    /// Opaque black.
    pub const BLACK: Rgba = Rgba {
        r: 0,
        g: 0,
        b: 0,
        a: 255,
    };

    /// Parses `#rrggbb` or `#rrggbbaa`; `None` for anything else.
    pub fn parse(s: &str) -> Option<Rgba> {
        let hex = s.strip_prefix('#')?;
        if !(hex.len() == 6 || hex.len() == 8) || !hex.is_ascii() {
            return None;
        }
        let byte = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).ok();
        Some(Rgba {
            r: byte(0)?,
            g: byte(2)?,
            b: byte(4)?,
            a: if hex.len() == 8 { byte(6)? } else { 255 },
        })
    }

    /// The tiny-skia colour.
    pub fn to_skia(self) -> tiny_skia::Color {
        tiny_skia::Color::from_rgba8(self.r, self.g, self.b, self.a)
    }
}

impl TryFrom<String> for Rgba {
    type Error = String;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        Rgba::parse(&s).ok_or_else(|| format!("colour {s:?} is not #rrggbb or #rrggbbaa"))
    }
}

impl From<Rgba> for String {
    fn from(c: Rgba) -> String {
        c.to_string()
    }
}

impl fmt::Display for Rgba {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.a == 255 {
            write!(f, "#{:02x}{:02x}{:02x}", self.r, self.g, self.b)
        } else {
            write!(
                f,
                "#{:02x}{:02x}{:02x}{:02x}",
                self.r, self.g, self.b, self.a
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct File {
        overlay: Config,
    }

    #[test]
    fn shipped_default_file_parses_to_the_defaults() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../assets/config/overlay.toml");
        let text = std::fs::read_to_string(path).unwrap();
        let file: File = toml::from_str(&text).unwrap();
        assert_eq!(file.overlay, Config::default());
    }

    #[test]
    fn text_scale_is_range_checked_where_it_is_read() {
        let c: Config = toml::from_str("text_scale = 1.5").unwrap();
        assert_eq!(c.text_scale.get(), 1.5);
        let err = toml::from_str::<Config>("reduced_motion = true\ntext_scale = 5.0")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("line 2") && err.contains("text_scale 5"),
            "{err}"
        );
    }

    #[test]
    fn colours_parse_and_reject() {
        assert_eq!(
            Rgba::parse("#10203040"),
            Some(Rgba {
                r: 0x10,
                g: 0x20,
                b: 0x30,
                a: 0x40
            })
        );
        assert_eq!(Rgba::parse("#102030").map(|c| c.a), Some(255));
        for bad in ["102030", "#12345", "#gg0000", "#1020304050", "#ééé"] {
            assert_eq!(Rgba::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn unknown_key_and_bad_colour_are_errors_that_say_where() {
        let err = toml::from_str::<Config>("colour = 1")
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown field `colour`"), "{err}");
        let err = toml::from_str::<Config>("[themes.dark]\ncard = \"red\"")
            .unwrap_err()
            .to_string();
        assert!(err.contains("\"red\""), "{err}");
    }
}
