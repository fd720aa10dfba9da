//! Which characters the font set cannot draw: a character no font has a glyph for is drawn as
//! the `.notdef` glyph (an empty box), so a dialog that names it would ask for a word nobody
//! can read.

use super::{Fonts, Shaped, TextStyle};

impl Shaped {
    /// The characters no font of the set has a glyph for: each is drawn as the font's
    /// `.notdef` glyph (an empty box), whatever it was. White space is not counted.
    pub fn missing_chars(&self) -> Vec<char> {
        let mut missing = Vec::new();
        for run in self.buffer.layout_runs() {
            for g in run.glyphs.iter().filter(|g| g.glyph_id == 0) {
                let chars = run.text.get(g.start..g.end).unwrap_or_default().chars();
                for c in chars.filter(|c| !c.is_whitespace()) {
                    if !missing.contains(&c) {
                        missing.push(c);
                    }
                }
            }
        }
        missing
    }
}

impl Fonts {
    /// The characters of `text` that no font of this set can draw, in regular or bold: the
    /// dialog would show each as an empty box.
    pub fn missing_glyphs(&mut self, text: &str) -> Vec<char> {
        let mut missing = Vec::new();
        for bold in [false, true] {
            let style = TextStyle {
                size: 16.0,
                line_height: 1.2,
                bold,
                max_lines: TextStyle::UNLIMITED,
                middle_ellipsis: false,
                align: None,
            };
            for c in self.shape(text, &style, 1e6).missing_chars() {
                if !missing.contains(&c) {
                    missing.push(c);
                }
            }
        }
        missing
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A font with Hangul (Debian `fonts-nanum`, which `cargo xtask setup` installs).
    const HANGUL: &str = "/usr/share/fonts/truetype/nanum/NanumGothic.ttf";

    #[test]
    fn hangul_is_missing_from_the_bundled_font_and_found_in_one_that_has_it() {
        let mut bundled = Fonts::with_files::<&str>(&[]).unwrap();
        assert_eq!(
            bundled.missing_glyphs("Approve: say “네”, 기차"),
            ['네', '기', '차']
        );
        assert!(bundled.missing_glyphs("yes, rocket").is_empty());
        let mut with_hangul = Fonts::with_files(&[HANGUL]).unwrap();
        assert!(with_hangul.missing_glyphs("say “네”, 기차").is_empty());
    }
}
