//! Client text made visible and bounded, before it is shaped or spoken: every character that
//! would be invisible, or would change the direction, spacing or stacking of the text around it,
//! is written out as its code point (`<U+200F>`), runs of the same one are counted
//! (`<U+00A0 ×12>`), stacks of combining marks keep only a few marks per character (the rest are
//! written out too), and the length is capped with a visible mark saying how much was cut.
//!
//! The same function serves the dialog and the spoken question, so what the user hears is what
//! the user sees.

use unicode_segmentation::UnicodeSegmentation;

/// Most code points one user-perceived character may draw; the rest of a longer stack of
/// combining marks is written out as code points, so it cannot paint over the lines around it.
pub const MAX_CLUSTER_CHARS: usize = 4;

/// Inserted by [`ltr_isolated`]: LEFT-TO-RIGHT MARK. A client's own marks never survive
/// [`visible_text`], so every one left in a string is ours.
const LRM: char = '\u{200e}';

/// Whether `c` is written out as its code point instead of drawn: it would draw nothing, draw
/// something that looks like a plain space, or change the order or joining of what is around it.
pub fn is_hidden(c: char) -> bool {
    if c.is_control() || (c.is_whitespace() && c != ' ') {
        // Newlines, tabs and C1 controls; NBSP, thin spaces, line and paragraph separators.
        return true;
    }
    let u = u32::from(c);
    // Noncharacters.
    if (0xfdd0..=0xfdef).contains(&u) || u & 0xfffe == 0xfffe {
        return true;
    }
    matches!(u,
        0x00ad                  // soft hyphen
        | 0x034f                // combining grapheme joiner
        | 0x061c                // ARABIC LETTER MARK
        | 0x0600..=0x0605       // Arabic number signs (format)
        | 0x06dd | 0x070f | 0x0890..=0x0891 | 0x08e2
        | 0x115f..=0x1160       // Hangul fillers
        | 0x17b4..=0x17b5       // Khmer inherent vowels
        | 0x180b..=0x180f       // Mongolian variation selectors, vowel separator
        | 0x200b..=0x200f       // zero-width space/joiners, LRM, RLM
        | 0x202a..=0x202e       // bidi embeddings and overrides
        | 0x2060..=0x206f       // word joiner, invisible operators, bidi isolates, deprecated
        | 0x2800                // braille blank: looks like a space
        | 0x3164 | 0xffa0       // Hangul fillers
        | 0xfe00..=0xfe0f       // variation selectors
        | 0xfeff                // zero-width no-break space (BOM)
        | 0xfff0..=0xfffb       // interlinear annotation
        | 0xe000..=0xf8ff       // private use: any font may draw anything there
        | 0x110bd | 0x110cd
        | 0x13430..=0x1343f     // Egyptian hieroglyph format controls
        | 0x1bca0..=0x1bca3     // shorthand format controls
        | 0x1d173..=0x1d17a     // musical format controls
        | 0xe0000..=0xe0fff     // tags and variation selectors supplement
        | 0xf0000..=0x10ffff    // supplementary private use
    )
}

/// Whether `c` lies in one of the blocks that hold only combining marks. Code points Unicode
/// assigned there after this build's segmentation tables are not known to extend the character
/// before them, so each counts as a character of its own; a font or shaper with newer data may
/// still stack them. A run of them is therefore cut like a stack of known marks.
fn in_combining_block(c: char) -> bool {
    matches!(u32::from(c),
        0x0300..=0x036f         // Combining Diacritical Marks
        | 0x1ab0..=0x1aff       // … Extended
        | 0x1dc0..=0x1dff       // … Supplement
        | 0x20d0..=0x20ff       // … for Symbols
        | 0xfe20..=0xfe2f       // Combining Half Marks
    )
}

/// `text` with every hidden character written out and its length capped at `max_chars`
/// characters of output. When something is cut, `cut_mark` is appended with `{n}` replaced by
/// the number of input characters not shown. The mark itself is not counted in `max_chars`.
///
/// ASCII spaces are kept, except runs of three or more and those at either end, which are
/// counted like any hidden character (a value padded with spaces shows where it really ends).
pub fn visible_text(text: &str, max_chars: usize, cut_mark: &str) -> String {
    let shown = shown(text, max_chars);
    let mut s = shown.text;
    if shown.cut > 0 {
        s.push_str(&cut_mark.replace("{n}", &shown.cut.to_string()));
    }
    s
}

/// Text made visible, before any cut mark is added.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shown {
    /// At most the asked number of characters.
    pub text: String,
    /// How many input characters did not fit (0: nothing was cut).
    pub cut: usize,
}

/// [`visible_text`] without the mark: what fits, and how much did not.
pub fn shown(text: &str, max_chars: usize) -> Shown {
    let mut out = Writer {
        out: String::new(),
        len: 0,
        max: max_chars,
        run: None,
    };
    let mut consumed = 0usize;
    let mut cut = false;
    // The ASCII spaces left in the run being read, and whether that run is written out.
    let (mut spaces_left, mut spaces_coded) = (0usize, false);
    // Characters from the combining blocks in a row, this one included, whatever clusters the
    // segmentation made of them.
    let mut marks_in_row = 0usize;
    'clusters: for (start, cluster) in text.grapheme_indices(true) {
        for (i, (offset, c)) in cluster.char_indices().enumerate() {
            marks_in_row = if in_combining_block(c) {
                marks_in_row + 1
            } else {
                0
            };
            if c == ' ' {
                if spaces_left == 0 {
                    let at = start + offset;
                    let n = text.as_bytes()[at..]
                        .iter()
                        .take_while(|&&b| b == b' ')
                        .count();
                    spaces_left = n;
                    spaces_coded = n >= 3 || at == 0 || at + n == text.len();
                }
                spaces_left -= 1;
            }
            let coded = is_hidden(c)
                || (c == ' ' && spaces_coded)
                || i >= MAX_CLUSTER_CHARS
                || marks_in_row >= MAX_CLUSTER_CHARS;
            let written = if coded { out.code(c) } else { out.plain(c) };
            if !written {
                cut = true;
                break 'clusters;
            }
            consumed += 1;
        }
    }
    out.flush();
    let cut = if cut {
        text.chars().count().saturating_sub(consumed)
    } else {
        0
    };
    Shown { text: out.out, cut }
}

/// `text` (already made visible) laid out left to right whatever its letters: a leading
/// left-to-right mark fixes the paragraph direction, and one after every separator (`/`, `\`,
/// space, `.`, `,`, `;`, `:`, `=`, …) keeps the segments between them in their real order, so
/// right-to-left letters cannot make `a/b/c` look like `a/c/b`. For identities, paths and
/// parameter values.
pub fn ltr_isolated(text: &str) -> String {
    let mut s = String::with_capacity(text.len() + 3 * text.len() / 8 + 3);
    s.push(LRM);
    for c in text.chars() {
        s.push(c);
        if is_separator(c) {
            s.push(LRM);
        }
    }
    s
}

/// Characters between the segments of a path, an id or a list.
fn is_separator(c: char) -> bool {
    matches!(
        c,
        '/' | '\\'
            | ' '
            | '.'
            | ','
            | ';'
            | ':'
            | '='
            | '|'
            | '&'
            | '@'
            | '#'
            | '?'
            | '!'
            | '-'
            | '_'
    )
}

/// Accumulates output, counting written characters and merging runs of one written-out code
/// point.
struct Writer {
    out: String,
    len: usize,
    max: usize,
    /// A run of one code point waiting to be written: the character and how many.
    run: Option<(char, usize)>,
}

impl Writer {
    /// Writes `c` as itself. False if it does not fit.
    fn plain(&mut self, c: char) -> bool {
        self.flush();
        if self.len + 1 > self.max {
            return false;
        }
        self.out.push(c);
        self.len += 1;
        true
    }

    /// Writes `c` as its code point, merged into a run of the same. False if it does not fit
    /// (the run so far is kept).
    fn code(&mut self, c: char) -> bool {
        let n = match self.run {
            Some((r, n)) if r == c => n + 1,
            _ => {
                self.flush();
                1
            }
        };
        if self.len + code_len(c, n) > self.max {
            return false;
        }
        self.run = Some((c, n));
        true
    }

    /// Writes the pending run (it always fits: `code` checked).
    fn flush(&mut self) {
        let Some((c, n)) = self.run.take() else {
            return;
        };
        if n == 1 {
            self.out.push_str(&format!("<U+{:04X}>", u32::from(c)));
        } else {
            self.out
                .push_str(&format!("<U+{:04X} \u{d7}{n}>", u32::from(c)));
        }
        self.len += code_len(c, n);
    }
}

/// Characters in `<U+XXXX>` or `<U+XXXX ×n>`.
fn code_len(c: char, n: usize) -> usize {
    let hex = format!("{:04X}", u32::from(c)).len();
    let base = 4 + hex; // "<U+" + hex + ">"
    if n == 1 {
        base
    } else {
        base + 2 + n.to_string().len() // " ×" + digits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CUT: &str = "… [{n} more]";

    fn v(s: &str) -> String {
        visible_text(s, 1000, CUT)
    }

    #[test]
    fn ordinary_text_is_unchanged() {
        for s in [
            "Delete /home/u/report.pdf",
            "파일 삭제",
            "שלום עולם",
            "Café déjà vu",
            "a  b",
        ] {
            assert_eq!(v(s), s);
        }
    }

    #[test]
    fn bidi_and_invisible_characters_are_written_out() {
        assert_eq!(v("report\u{202e}fdp.exe"), "report<U+202E>fdp.exe");
        assert_eq!(v("/home/\u{200f}u"), "/home/<U+200F>u");
        assert_eq!(
            v("a\u{61c}b\u{200b}c\u{2066}d"),
            "a<U+061C>b<U+200B>c<U+2066>d"
        );
        assert_eq!(v("x\u{feff}y\u{ad}z"), "x<U+FEFF>y<U+00AD>z");
        assert_eq!(v("line\nnext\t"), "line<U+000A>next<U+0009>");
        assert_eq!(v("tag\u{e0041}"), "tag<U+E0041>");
        assert_eq!(v("pua\u{e000}"), "pua<U+E000>");
        assert_eq!(v("\u{2028}"), "<U+2028>");
    }

    #[test]
    fn nbsp_padding_is_counted_so_the_tail_shows() {
        let s = format!("/tmp/x{}; rm -rf ~", "\u{a0}".repeat(200));
        assert_eq!(v(&s), "/tmp/x<U+00A0 ×200>; rm -rf ~");
        let s = format!("/tmp/x{}; rm -rf ~", " ".repeat(50));
        assert_eq!(v(&s), "/tmp/x<U+0020 ×50>; rm -rf ~");
        assert_eq!(v(" lead and trail  "), "<U+0020>lead and trail<U+0020 ×2>");
    }

    #[test]
    fn combining_stacks_are_cut_to_a_few_marks() {
        let s = format!("a{}b", "\u{301}".repeat(60));
        assert_eq!(v(&s), "a\u{301}\u{301}\u{301}<U+0301 ×57>b");
        // Two marks (Vietnamese) are left alone.
        assert_eq!(v("ệ"), "ệ");
        assert_eq!(v("e\u{323}\u{302}"), "e\u{323}\u{302}");
    }

    #[test]
    fn a_run_of_marks_this_unicode_data_does_not_know_is_cut_like_a_stack() {
        // U+1AEB and U+1AED are in Combining Diacritical Marks Extended but unknown to the
        // segmentation tables: each is a cluster of its own, yet a newer shaper stacks them.
        let s = "\u{1aeb}\u{1aeb}\u{1aeb}\u{1aed}\u{1acb}f\u{1aeb}";
        assert_eq!(v(s), "\u{1aeb}\u{1aeb}\u{1aeb}<U+1AED><U+1ACB>f\u{1aeb}");
        let s = format!("x{}y", "\u{1aeb}".repeat(40));
        assert_eq!(v(&s), "x\u{1aeb}\u{1aeb}\u{1aeb}<U+1AEB ×37>y");
    }

    #[test]
    fn length_is_capped_with_a_visible_mark() {
        let s = "x".repeat(5000);
        let out = visible_text(&s, 100, CUT);
        assert_eq!(out, format!("{}… [4900 more]", "x".repeat(100)));
        // A run of codes that does not fit is cut as a whole and counted.
        let s = format!("abc{}", "\u{200b}".repeat(10));
        assert_eq!(visible_text(&s, 12, CUT), "abc<U+200B>… [9 more]");
        assert_eq!(visible_text(&s, 10, CUT), "abc… [10 more]");
        assert_eq!(visible_text(&s, 17, CUT), "abc<U+200B ×10>");
        // Nothing is cut: no mark.
        assert_eq!(visible_text("abc", 3, CUT), "abc");
        assert_eq!(visible_text("", 0, CUT), "");
        assert_eq!(visible_text("a", 0, CUT), "… [1 more]");
    }

    #[test]
    fn the_output_never_exceeds_the_cap_plus_the_mark() {
        let inputs = [
            "\u{200b}\u{200c}".repeat(500),
            format!("a{}", "\u{301}\u{302}".repeat(300)),
            " \u{a0}".repeat(400),
            "💣\u{fe0f}".repeat(100),
        ];
        for s in &inputs {
            for max in [0, 1, 7, 8, 9, 50, 333] {
                let out = visible_text(s, max, "");
                assert!(out.chars().count() <= max, "{max}: {out}");
            }
        }
    }

    #[test]
    fn ltr_isolation_marks_the_start_and_every_separator() {
        assert_eq!(
            ltr_isolated("/a/b"),
            "\u{200e}/\u{200e}a/\u{200e}b".to_string()
        );
        assert_eq!(ltr_isolated(""), "\u{200e}");
    }
}
