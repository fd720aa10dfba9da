//! Text: the font set (bundled DejaVu Sans first, then listed files, then optionally the
//! system's fonts as fallback), shaping with cosmic-text at physical pixel sizes (wrapping,
//! ellipsizing, bidi), and blitting glyph masks into a premultiplied RGBA pixmap with a clip.

use std::collections::HashMap;
use std::path::Path;

use cosmic_text::{
    Align, Attrs, Buffer, BufferLine, Ellipsize, EllipsizeHeightLimit, Family, FontSystem,
    LayoutGlyph, LayoutRun, Metrics, Shaping, SwashCache, SwashContent, Weight, Wrap, fontdb,
};
use tiny_skia::Pixmap;

mod coverage;

use crate::OverlayError;
use crate::config::{Config, Rgba};
use crate::layout::IRect;

/// The bundled regular face (DejaVu Sans; licence in `assets/fonts/LICENSE-DejaVu.txt`).
const BUNDLED_REGULAR: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");
/// The bundled bold face.
const BUNDLED_BOLD: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans-Bold.ttf");
/// The family the dialog asks for; fallback fonts fill in scripts it lacks.
const FAMILY: &str = "DejaVu Sans";
/// Locale for font fallback when none can be read from the environment. Fixed so that a font set
/// without system fonts renders the same pixels everywhere.
const DEFAULT_LOCALE: &str = "en-US";

/// The fonts and the glyph cache. Create once (loading system fonts takes a while) and share.
pub struct Fonts {
    system: FontSystem,
    cache: SwashCache,
    /// Inside [`Fonts::reusing_shapes`]: each text's lines as first shaped, by the text (after
    /// [`display_text`]) and its weight.
    shapes: Option<HashMap<(String, bool), Vec<BufferLine>>>,
}

impl std::fmt::Debug for Fonts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fonts")
            .field("faces", &self.system.db().len())
            .finish()
    }
}

impl Fonts {
    /// Only the bundled font plus `files`, in that order: what tests and goldens use, so a fresh
    /// machine renders the same pixels.
    pub fn with_files<P: AsRef<Path>>(files: &[P]) -> Result<Fonts, OverlayError> {
        Ok(Fonts::from_db(database(files)?, DEFAULT_LOCALE.to_owned()))
    }

    /// The fonts the config asks for: bundled, `extra_fonts`, then the system's if
    /// `system_fonts` is on.
    pub fn from_config(config: &Config) -> Result<Fonts, OverlayError> {
        let mut db = database(&config.extra_fonts)?;
        let locale = if config.system_fonts {
            db.load_system_fonts();
            env_locale()
        } else {
            DEFAULT_LOCALE.to_owned()
        };
        tracing::debug!(faces = db.len(), %locale, "overlay fonts loaded");
        Ok(Fonts::from_db(db, locale))
    }

    fn from_db(mut db: fontdb::Database, locale: String) -> Fonts {
        db.set_sans_serif_family(FAMILY);
        Fonts {
            system: FontSystem::new_with_locale_and_db(locale, db),
            cache: SwashCache::new(),
            shapes: None,
        }
    }

    /// Runs `f` with every text's shaping kept for the texts shaped after it: a text shaped
    /// again with the same characters and weight, at another size or width, is only laid out
    /// anew. cosmic-text shapes in em units, so size and width change the layout, not the
    /// shaping; the whole line is the key (unlike cosmic-text's own run cache, whose key leaves
    /// out a run's direction), so a text is never laid out from another text's shaping. A
    /// dialog's layout tries up to 36 sizes and widths of the same texts. Nothing is kept after
    /// `f`, and each call starts with nothing kept (even after an `f` that panicked), so what
    /// is kept is never more than one content's texts.
    pub fn reusing_shapes<T>(&mut self, f: impl FnOnce(&mut Fonts) -> T) -> T {
        self.shapes = Some(HashMap::new());
        let result = f(self);
        self.shapes = None;
        result
    }

    /// Shapes `text` at `size` physical pixels into lines at most `width` pixels wide.
    pub fn shape(&mut self, text: &str, style: &TextStyle, width: f32) -> Shaped {
        let metrics = Metrics::new(style.size, (style.size * style.line_height).round());
        let mut buffer = Buffer::new(&mut self.system, metrics);
        buffer.set_wrap(Wrap::WordOrGlyph);
        let limit = EllipsizeHeightLimit::Lines(style.max_lines.max(1));
        buffer.set_ellipsize(if style.max_lines == TextStyle::UNLIMITED {
            Ellipsize::None
        } else if style.middle_ellipsis {
            Ellipsize::Middle(limit)
        } else {
            Ellipsize::End(limit)
        });
        buffer.set_size(Some(width.max(1.0)), None);
        let weight = if style.bold {
            Weight::BOLD
        } else {
            Weight::NORMAL
        };
        let attrs = Attrs::new().family(Family::Name(FAMILY)).weight(weight);
        let display = display_text(text);
        let key = (display, style.bold);
        match self.shapes.as_ref().and_then(|shapes| shapes.get(&key)) {
            Some(lines) => {
                buffer.lines = lines.clone();
                for line in &mut buffer.lines {
                    line.set_align(style.align);
                    line.reset_layout();
                }
                buffer.shape_until_scroll(&mut self.system, false);
            }
            None => {
                buffer.set_text(&key.0, &attrs, Shaping::Advanced, style.align);
                buffer.shape_until_scroll(&mut self.system, false);
                if let Some(shapes) = self.shapes.as_mut() {
                    shapes.insert(key, buffer.lines.clone());
                }
            }
        }
        let (mut w, mut lines) = (0.0f32, 0usize);
        for run in buffer.layout_runs() {
            w = w.max(run.line_w);
            lines += 1;
        }
        Shaped {
            height: (lines as f32 * metrics.line_height).ceil() as i32,
            width: w.ceil() as i32,
            lines,
            buffer,
        }
    }

    /// Draws `shaped` with its top-left at (`x`, `y`) in `color`, touching only pixels in `clip`,
    /// and each line only within its own line box: a stack of marks cannot paint over the
    /// lines around it.
    pub fn draw(
        &mut self,
        shaped: &Shaped,
        pixmap: &mut Pixmap,
        x: i32,
        y: i32,
        color: Rgba,
        clip: IRect,
    ) {
        let clip = clip.intersect(&IRect::new(
            0,
            0,
            pixmap.width() as i32,
            pixmap.height() as i32,
        ));
        let stride = pixmap.width() as usize * 4;
        let data = pixmap.data_mut();
        for run in shaped.buffer.layout_runs() {
            let shift = leading_space(&run);
            let top = y + run.line_top.floor() as i32;
            let bottom = y + (run.line_top + run.line_height).ceil() as i32;
            let clip = clip.intersect(&IRect::new(clip.x, top, clip.w, bottom - top));
            if clip.is_empty() {
                continue;
            }
            for glyph in run.glyphs {
                let phys = glyph.physical((x as f32 - shift, y as f32 + run.line_y), 1.0);
                let Some(image) = self.cache.get_image(&mut self.system, phys.cache_key) else {
                    continue;
                };
                let left = phys.x + image.placement.left;
                let top = phys.y - image.placement.top;
                let (gw, gh) = (image.placement.width as i32, image.placement.height as i32);
                let channels = match image.content {
                    SwashContent::Mask => 1,
                    SwashContent::SubpixelMask | SwashContent::Color => 4,
                };
                // Only the glyph's rows and columns inside the clip: bounds worked out once per
                // glyph, not tested per pixel.
                let rows = (clip.y - top).clamp(0, gh)..(clip.bottom() - top).clamp(0, gh);
                let cols = (clip.x - left).clamp(0, gw)..(clip.right() - left).clamp(0, gw);
                for gy in rows {
                    let py = top + gy;
                    for gx in cols.clone() {
                        let px = left + gx;
                        let i = ((gy * gw + gx) as usize) * channels;
                        let src = match image.content {
                            SwashContent::Mask => tint(color, image.data[i]),
                            SwashContent::SubpixelMask => {
                                let d = &image.data[i..i + 3];
                                let m = (u16::from(d[0]) + u16::from(d[1]) + u16::from(d[2])) / 3;
                                tint(color, m as u8)
                            }
                            SwashContent::Color => {
                                let d = &image.data[i..i + 4];
                                let c = Rgba {
                                    r: d[0],
                                    g: d[1],
                                    b: d[2],
                                    a: d[3],
                                };
                                tint(c, 255)
                            }
                        };
                        let o = py as usize * stride + px as usize * 4;
                        blend(&mut data[o..o + 4], src);
                    }
                }
            }
        }
    }
}

/// How to shape one text block.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TextStyle {
    /// Font size in physical pixels.
    pub size: f32,
    /// Line height as a multiple of the size.
    pub line_height: f32,
    pub bold: bool,
    /// Lines before the text is ellipsized; [`TextStyle::UNLIMITED`] wraps it in full.
    pub max_lines: usize,
    /// Ellipsize in the middle (paths) instead of the end.
    pub middle_ellipsis: bool,
    /// `None`: start-aligned by the paragraph's direction (right for RTL text).
    pub align: Option<Align>,
}

impl TextStyle {
    /// `max_lines` for text that is never ellipsized: it wraps onto as many lines as it needs.
    pub const UNLIMITED: usize = usize::MAX;
}

/// Shaped text and its measured size in physical pixels.
#[derive(Debug)]
pub struct Shaped {
    pub width: i32,
    pub height: i32,
    /// Visual lines after wrapping and ellipsizing.
    pub lines: usize,
    buffer: Buffer,
}

impl Shaped {
    /// The text that was shaped (after [`display_text`]).
    pub fn text(&self) -> String {
        self.buffer
            .lines
            .iter()
            .map(|l| l.text())
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Whether every character but white space got a glyph on some line: nothing was
    /// ellipsized away.
    pub fn is_whole(&self) -> bool {
        let mut covered: Vec<Vec<bool>> = self
            .buffer
            .lines
            .iter()
            .map(|l| vec![false; l.text().len()])
            .collect();
        for run in self.buffer.layout_runs() {
            let Some(line) = covered.get_mut(run.line_i) else {
                continue;
            };
            for g in run.glyphs {
                for b in line.iter_mut().take(g.end).skip(g.start) {
                    *b = true;
                }
            }
        }
        self.buffer.lines.iter().zip(&covered).all(|(l, cov)| {
            l.text()
                .char_indices()
                .all(|(i, c)| c.is_whitespace() || cov.get(i).copied().unwrap_or(false))
        })
    }
}

/// `text` made safe to shape: control characters (newlines included) become spaces so no text
/// can fake extra lines, and bidi embedding/override/isolate controls become U+FFFD so none can
/// disguise its real order. The last line of defence for any string: client strings are made
/// visible before they get here ([`crate::visible`]), so they keep every character on screen.
pub fn display_text(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => '\u{fffd}',
            c if c.is_control() => ' ',
            c => c,
        })
        .collect()
}

/// The bundled faces, then `files` in order.
fn database<P: AsRef<Path>>(files: &[P]) -> Result<fontdb::Database, OverlayError> {
    let mut db = fontdb::Database::new();
    db.load_font_data(BUNDLED_REGULAR.to_vec());
    db.load_font_data(BUNDLED_BOLD.to_vec());
    for file in files {
        let path = file.as_ref();
        let before = db.len();
        db.load_font_file(path).map_err(|e| OverlayError::Font {
            path: path.to_owned(),
            message: e.to_string(),
        })?;
        if db.len() == before {
            return Err(OverlayError::Font {
                path: path.to_owned(),
                message: "no usable font face in the file".into(),
            });
        }
    }
    Ok(db)
}

/// How far a left-to-right line starts with whitespace: cosmic-text keeps the space at a wrap
/// point at the start of an ellipsized line, which would indent it.
fn leading_space(run: &LayoutRun<'_>) -> f32 {
    if run.rtl {
        return 0.0;
    }
    let is_space = |g: &LayoutGlyph| {
        run.text
            .get(g.start..g.end)
            .is_some_and(|t| t.chars().all(char::is_whitespace))
    };
    match (run.glyphs.first(), run.glyphs.iter().find(|g| !is_space(g))) {
        (Some(first), Some(ink)) if is_space(first) => (ink.x - first.x).max(0.0),
        _ => 0.0,
    }
}

/// Premultiplies `color` at `coverage`.
fn tint(color: Rgba, coverage: u8) -> [u8; 4] {
    let a = mul(color.a, coverage);
    [mul(color.r, a), mul(color.g, a), mul(color.b, a), a]
}

/// `a × b / 255`, rounded.
fn mul(a: u8, b: u8) -> u8 {
    let t = u32::from(a) * u32::from(b) + 128;
    ((t + (t >> 8)) >> 8) as u8
}

/// Source-over of a premultiplied pixel onto `dst`.
fn blend(dst: &mut [u8], src: [u8; 4]) {
    let inv = 255 - src[3];
    for k in 0..4 {
        dst[k] = src[k].saturating_add(mul(dst[k], inv));
    }
}

/// The locale from `LC_ALL`/`LC_MESSAGES`/`LANG` (`ja_JP.UTF-8` → `ja-JP`), for system fallback.
fn env_locale() -> String {
    ["LC_ALL", "LC_MESSAGES", "LANG"]
        .iter()
        .filter_map(|k| std::env::var(k).ok())
        .find(|v| !v.is_empty() && v != "C" && v != "POSIX")
        .and_then(|v| v.split('.').next().map(|s| s.replace('_', "-")))
        .unwrap_or_else(|| DEFAULT_LOCALE.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn style(max_lines: usize) -> TextStyle {
        TextStyle {
            size: 15.0,
            line_height: 1.3,
            bold: false,
            max_lines,
            middle_ellipsis: false,
            align: None,
        }
    }

    #[test]
    fn display_text_defuses_newlines_and_bidi_overrides() {
        assert_eq!(display_text("a\nb\tc"), "a b c");
        assert_eq!(
            display_text("report\u{202e}fdp.exe"),
            "report\u{fffd}fdp.exe"
        );
        assert_eq!(display_text("שלום עולם"), "שלום עולם");
    }

    #[test]
    fn long_text_wraps_and_is_ellipsized_to_max_lines() {
        let mut f = Fonts::with_files::<&str>(&[]).unwrap();
        let long = "word ".repeat(200);
        let s = f.shape(&long, &style(3), 300.0);
        assert_eq!(s.lines, 3);
        assert!(s.width <= 300, "{}", s.width);
        let short = f.shape("Delete", &style(3), 300.0);
        assert_eq!(short.lines, 1);
        assert!(short.width > 20 && short.width < 80, "{}", short.width);
    }

    #[test]
    fn unbreakable_text_breaks_at_glyphs() {
        let mut f = Fonts::with_files::<&str>(&[]).unwrap();
        let s = f.shape(&"x".repeat(400), &style(2), 200.0);
        assert_eq!(s.lines, 2);
        assert!(s.width <= 200, "{}", s.width);
    }

    /// One laid-out glyph: its line, direction, font, glyph, x and width (in 1/64 px) and the
    /// text it covers.
    type Glyph = (usize, bool, fontdb::ID, u16, i32, i32, usize, usize);

    /// Every glyph of every line: where it is and what it is, enough to tell two layouts apart.
    fn glyphs(shaped: &Shaped) -> Vec<Glyph> {
        shaped
            .buffer
            .layout_runs()
            .flat_map(|run| {
                run.glyphs.iter().map(move |g| {
                    (
                        run.line_i,
                        run.rtl,
                        g.font_id,
                        g.glyph_id,
                        (g.x * 64.0).round() as i32,
                        (g.w * 64.0).round() as i32,
                        g.start,
                        g.end,
                    )
                })
            })
            .collect()
    }

    #[test]
    fn reused_shaping_lays_out_as_fresh_shaping() {
        // The same characters in left-to-right and right-to-left text (what cosmic-text's own
        // run cache mixed up), a text and its prefix, marks, and text that wraps and is cut.
        let texts = [
            "report.pdf",
            "\u{5e9}\u{5dc}\u{5d5}\u{5dd} report.pdf",
            "report.pdf \u{5e9}\u{5dc}\u{5d5}\u{5dd}",
            "report",
            "a\u{301}\u{301}\u{301}\u{301} b",
            "Delete /home/user/some/long/path/that/wraps/report.pdf and everything under it",
            "\u{627}\u{644}\u{633}\u{644}\u{627}\u{645} 123 abc",
        ];
        let sizes = [9.0f32, 14.0, 21.5];
        let widths = [60.0f32, 180.0, 900.0];
        let mut fresh = Fonts::with_files::<&str>(&[]).unwrap();
        let mut reusing = Fonts::with_files::<&str>(&[]).unwrap();
        reusing.reusing_shapes(|reusing| {
            for &size in &sizes {
                for &width in &widths {
                    for bold in [false, true] {
                        for text in texts {
                            let style = TextStyle {
                                size,
                                bold,
                                ..style(3)
                            };
                            let a = fresh.shape(text, &style, width);
                            let b = reusing.shape(text, &style, width);
                            let what = format!("{text:?} at {size} px, {width} wide, bold {bold}");
                            assert_eq!(glyphs(&a), glyphs(&b), "{what}");
                            assert_eq!(
                                (a.width, a.height, a.lines),
                                (b.width, b.height, b.lines),
                                "{what}"
                            );
                        }
                    }
                }
            }
            let kept = reusing.shapes.as_ref().map_or(0, HashMap::len);
            assert_eq!(kept, 2 * texts.len(), "one shaping per text and weight");
        });
        assert!(reusing.shapes.is_none(), "nothing kept after the scope");
    }

    #[test]
    fn blending_is_source_over() {
        let mut px = [0u8, 0, 255, 255];
        blend(&mut px, tint(Rgba::parse("#ff0000").unwrap(), 128));
        assert_eq!(px, [128, 0, 127, 255]);
        assert_eq!(mul(255, 255), 255);
        assert_eq!(mul(0, 255), 0);
    }

    #[test]
    fn unlimited_text_is_never_ellipsized() {
        let mut f = Fonts::with_files::<&str>(&[]).unwrap();
        let long = format!("{}; rm -rf ~", "word ".repeat(200));
        let cut = f.shape(&long, &style(3), 300.0);
        assert!(!cut.is_whole());
        let whole = f.shape(&long, &style(TextStyle::UNLIMITED), 300.0);
        assert!(whole.is_whole());
        assert!(whole.lines > 20, "{}", whole.lines);
        assert!(whole.text().ends_with("; rm -rf ~"));
    }

    #[test]
    fn a_stack_of_marks_paints_only_inside_its_line_and_box() {
        let mut f = Fonts::with_files::<&str>(&[]).unwrap();
        // Made visible, a stack is cut to a few marks; drawn raw, 40 of them would tower over
        // the lines above. The line box keeps them in.
        let text = format!("Z{}", "\u{301}".repeat(40));
        let shaped = f.shape(&text, &style(1), 200.0);
        let mut pixmap = tiny_skia::Pixmap::new(200, 300).unwrap();
        let (x, y) = (10, 200);
        let clip = IRect::new(x, y, 100, shaped.height);
        f.draw(&shaped, &mut pixmap, x, y, Rgba::BLACK, clip);
        let inked = |r: std::ops::Range<u32>| {
            r.flat_map(|py| (0..200).map(move |px| (px, py)))
                .filter(|&(px, py)| pixmap.pixel(px, py).unwrap().alpha() > 0)
                .count()
        };
        assert!(inked(y as u32..(y + shaped.height) as u32) > 0, "drawn");
        assert_eq!(inked(0..y as u32), 0, "nothing above the line");
        assert_eq!(inked((y + shaped.height) as u32..300), 0, "nothing below");
        // Unclipped, the same text would have painted above (the test can fail).
        let mut free = tiny_skia::Pixmap::new(200, 300).unwrap();
        let mut probe = Fonts::with_files::<&str>(&[]).unwrap();
        let all = IRect::new(0, 0, 200, 300);
        let s = probe.shape(&text, &style(1), 200.0);
        draw_unclipped_lines(&mut probe, &s, &mut free, x, y, all);
        let above = (0..y as u32)
            .flat_map(|py| (0..200).map(move |px| (px, py)))
            .filter(|&(px, py)| free.pixel(px, py).unwrap().alpha() > 0)
            .count();
        assert!(
            above > 0,
            "40 marks reach above their line when not clipped"
        );
    }

    /// Draws every glyph with only `clip`, as the drawing did before lines had their own box.
    fn draw_unclipped_lines(
        f: &mut Fonts,
        shaped: &Shaped,
        pixmap: &mut tiny_skia::Pixmap,
        x: i32,
        y: i32,
        clip: IRect,
    ) {
        for run in shaped.buffer.layout_runs() {
            for glyph in run.glyphs {
                let phys = glyph.physical((x as f32, y as f32 + run.line_y), 1.0);
                let Some(image) = f.cache.get_image(&mut f.system, phys.cache_key) else {
                    continue;
                };
                let left = phys.x + image.placement.left;
                let top = phys.y - image.placement.top;
                for gy in 0..image.placement.height as i32 {
                    for gx in 0..image.placement.width as i32 {
                        let (px, py) = (left + gx, top + gy);
                        let i = (gy * image.placement.width as i32 + gx) as usize;
                        if clip.contains(f64::from(px), f64::from(py))
                            && image.content == SwashContent::Mask
                            && image.data[i] > 0
                        {
                            let c = tiny_skia::PremultipliedColorU8::from_rgba(0, 0, 0, 255);
                            if let Some(c) = c {
                                pixmap.pixels_mut()[(py * 200 + px) as usize] = c;
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn a_missing_font_file_is_named() {
        let e = Fonts::with_files(&["/nonexistent/font.ttf"]).unwrap_err();
        assert!(e.to_string().contains("/nonexistent/font.ttf"), "{e}");
    }
}
