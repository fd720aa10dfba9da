//! Client text made visible and bounded, before it is shaped or spoken: every character that
//! would be invisible, or would change the direction, spacing or stacking of the text around it,
//! is written out as its code point (`<U+200F>`), runs of the same one are counted
//! (`<U+00A0 ×12>`), stacks of combining marks keep only a few marks per character (the rest are
//! written out too), and the length is capped with a visible mark saying how much was cut.
//! Text that may span lines ([`visible_lines`]: commands, patches) keeps its line breaks, but no
//! line can be pushed out of sight: long runs of blank lines become one line saying how many,
//! and long indents and tabs are counted.
//!
//! The same functions serve the dialog and the spoken question, so what the user hears is what
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

/// `text` as one line, with every hidden character written out (line feeds and tabs too) and
/// its length capped at `max_chars` characters of output. When something is cut, `cut_mark` is
/// appended with `{n}` replaced by the number of input characters not shown. The mark itself is
/// not counted in `max_chars`. For names, which never span lines.
///
/// ASCII spaces are kept, except runs of three or more and those at either end, which are
/// counted like any hidden character (a value padded with spaces shows where it really ends).
pub fn visible_text(text: &str, max_chars: usize, cut_mark: &str) -> String {
    with_mark(shown(text, max_chars), cut_mark)
}

/// Most blank lines in a row [`visible_lines`] shows as they are; a longer run is one line of
/// the blank-lines mark saying how many. Code keeps up to two blank lines between its parts.
pub const MAX_BLANK_LINES: usize = 2;

/// Most spaces that indent a line after a line break which [`visible_lines`] keeps as spaces;
/// a longer indent is counted like any run (`<U+0020 ×40>`), so no line starts out of view.
pub const MAX_INDENT: usize = 16;

/// `text` as [`visible_text`] makes it, except that a line feed stays a line break: for client
/// text that may span lines (a multi-line command, a patch). Nothing can push a line out of
/// sight: a run of more than [`MAX_BLANK_LINES`] blank lines (lines of nothing but spaces and
/// hidden characters) becomes one line, `blank_mark` with `{n}` replaced by how many; an indent
/// of more than [`MAX_INDENT`] spaces, spaces at the end of a line and tabs anywhere are counted
/// like any hidden character. The first line is treated as a name's would be.
pub fn visible_lines(text: &str, max_chars: usize, cut_mark: &str, blank_mark: &str) -> String {
    with_mark(shown_lines(text, max_chars, blank_mark), cut_mark)
}

fn with_mark(shown: Shown, cut_mark: &str) -> String {
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
    let mut out = Writer::new(max_chars);
    let mut consumed = 0usize;
    let whole = write_line(&mut out, text, true, &mut consumed);
    out.finish(text, whole, consumed)
}

/// [`visible_lines`] without the cut mark: what fits, and how much did not.
pub fn shown_lines(text: &str, max_chars: usize, blank_mark: &str) -> Shown {
    let mut out = Writer::new(max_chars);
    let mut consumed = 0usize;
    let lines: Vec<&str> = text.split('\n').collect();
    let mut i = 0;
    let whole = loop {
        let Some(line) = lines.get(i) else {
            break true;
        };
        if i > 0 {
            if !out.line_break() {
                break false;
            }
            consumed += 1;
        }
        let blanks = lines[i..].iter().take_while(|l| is_blank(l)).count();
        if blanks > MAX_BLANK_LINES {
            // The run and the line feeds inside it, as one line saying how many.
            if !out.literal(&blank_mark.replace("{n}", &blanks.to_string())) {
                break false;
            }
            consumed += lines[i..i + blanks]
                .iter()
                .map(|l| l.chars().count())
                .sum::<usize>()
                + blanks
                - 1;
            i += blanks;
            continue;
        }
        if !write_line(&mut out, line, i == 0, &mut consumed) {
            break false;
        }
        i += 1;
    };
    out.finish(text, whole, consumed)
}

/// Whether a line shows nothing: only spaces and hidden characters (tabs, NBSP, zero-width
/// and other look-alikes of blank).
fn is_blank(line: &str) -> bool {
    line.chars().all(|c| c == ' ' || is_hidden(c))
}

/// Writes one line of `text` (no line feed is special in it): false when it did not all fit.
/// `first` says the line starts the text, where leading spaces are counted; a later line keeps
/// an indent of up to [`MAX_INDENT`] spaces. Counts the input characters written in `consumed`.
fn write_line(out: &mut Writer, line: &str, first: bool, consumed: &mut usize) -> bool {
    // The ASCII spaces left in the run being read, and whether that run is written out.
    let (mut spaces_left, mut spaces_coded) = (0usize, false);
    // Characters from the combining blocks in a row, this one included, whatever clusters the
    // segmentation made of them.
    let mut marks_in_row = 0usize;
    for (start, cluster) in line.grapheme_indices(true) {
        for (i, (offset, c)) in cluster.char_indices().enumerate() {
            marks_in_row = if in_combining_block(c) {
                marks_in_row + 1
            } else {
                0
            };
            if c == ' ' {
                if spaces_left == 0 {
                    let at = start + offset;
                    let n = line.as_bytes()[at..]
                        .iter()
                        .take_while(|&&b| b == b' ')
                        .count();
                    spaces_left = n;
                    let indent = at == 0 && !first && n <= MAX_INDENT && n < line.len();
                    spaces_coded = !indent && (n >= 3 || at == 0 || at + n == line.len());
                }
                spaces_left -= 1;
            }
            let coded = is_hidden(c)
                || (c == ' ' && spaces_coded)
                || i >= MAX_CLUSTER_CHARS
                || marks_in_row >= MAX_CLUSTER_CHARS;
            let written = if coded { out.code(c) } else { out.plain(c) };
            if !written {
                return false;
            }
            *consumed += 1;
        }
    }
    true
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

/// Characters between the segments of a path, an id or a list; a line break starts a new
/// paragraph, whose direction the mark after it fixes too.
fn is_separator(c: char) -> bool {
    matches!(
        c,
        '\n' | '/'
            | '\\'
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
    fn new(max: usize) -> Writer {
        Writer {
            out: String::new(),
            len: 0,
            max,
            run: None,
        }
    }

    /// The text written, and how many characters of `input` were not (`whole`: none).
    fn finish(mut self, input: &str, whole: bool, consumed: usize) -> Shown {
        self.flush();
        let cut = if whole {
            0
        } else {
            input.chars().count().saturating_sub(consumed)
        };
        Shown {
            text: self.out,
            cut,
        }
    }

    /// Writes a line break. False if it does not fit.
    fn line_break(&mut self) -> bool {
        self.plain('\n')
    }

    /// Writes `text` (the dialog's own) whole. False if it does not fit.
    fn literal(&mut self, text: &str) -> bool {
        self.flush();
        let n = text.chars().count();
        if self.len + n > self.max {
            return false;
        }
        self.out.push_str(text);
        self.len += n;
        true
    }

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

    fn lines(s: &str) -> String {
        visible_lines(s, 1000, CUT, "[{n} blank]")
    }

    #[test]
    fn line_breaks_stay_and_indents_up_to_a_limit_are_kept() {
        let heredoc = "cat <<'EOF' > notes.txt\nfirst\n    indented\n\nEOF";
        assert_eq!(lines(heredoc), heredoc);
        // Tabs are counted wherever they are; spaces at a line's end show where it ends.
        assert_eq!(
            lines("a\n\t\tb\nc  \nd"),
            "a\n<U+0009 ×2>b\nc<U+0020 ×2>\nd"
        );
        // The first line starts the text: its leading spaces are counted, as a name's.
        assert_eq!(lines("  x\n  y"), "<U+0020 ×2>x\n  y");
        let deep = format!("x\n{}rm -rf ~", " ".repeat(MAX_INDENT + 1));
        assert_eq!(
            lines(&deep),
            format!("x\n<U+0020 ×{}>rm -rf ~", MAX_INDENT + 1)
        );
        // One line for names: a line feed is written out there.
        assert_eq!(visible_text("a\nb", 100, CUT), "a<U+000A>b");
    }

    #[test]
    fn a_long_run_of_blank_lines_is_one_line_saying_how_many() {
        let pushed = format!("echo hi{}rm -rf ~", "\n".repeat(201));
        assert_eq!(lines(&pushed), "echo hi\n[200 blank]\nrm -rf ~");
        // Blank is anything that shows nothing: spaces, tabs, NBSP, zero-width characters.
        let look_alike = format!(
            "ls\n{}rm -rf ~",
            "  \t\n\u{a0}\u{200b}\n\u{3164}\n\u{2800}\n".repeat(50)
        );
        assert_eq!(lines(&look_alike), "ls\n[200 blank]\nrm -rf ~");
        // Up to two blank lines are shown as they are (code keeps two between its parts).
        assert_eq!(lines("a\n\n\nb"), "a\n\n\nb");
        assert_eq!(lines("a\n \n\u{a0}\nb"), "a\n<U+0020>\n<U+00A0>\nb");
        // At either end too.
        assert_eq!(lines("\n\n\nx"), "[3 blank]\nx");
        assert_eq!(lines("x\n\n\n"), "x\n[3 blank]");
    }

    #[test]
    fn a_multi_line_text_is_cut_like_any_other() {
        let s = "one\ntwo\nthree";
        assert_eq!(visible_lines(s, 7, CUT, "[{n}]"), "one\ntwo… [6 more]");
        assert_eq!(visible_lines(s, 8, CUT, "[{n}]"), "one\ntwo\n… [5 more]");
        // A blank-lines mark that does not fit is cut with the lines it stands for.
        let s = format!("ab{}cd", "\n".repeat(10));
        assert_eq!(visible_lines(&s, 4, CUT, "[{n} blank]"), "ab\n… [11 more]");
        assert_eq!(
            visible_lines(&s, 20, CUT, "[{n} blank]"),
            "ab\n[9 blank]\ncd"
        );
        for max in [0, 1, 2, 3, 5, 9, 13, 14, 15] {
            let out = shown_lines(&s, max, "[{n} blank]");
            assert!(out.text.chars().count() <= max, "{max}: {out:?}");
        }
    }

    #[test]
    fn ltr_isolation_marks_the_start_and_every_separator() {
        assert_eq!(
            ltr_isolated("/a/b"),
            "\u{200e}/\u{200e}a/\u{200e}b".to_string()
        );
        assert_eq!(ltr_isolated(""), "\u{200e}");
        assert_eq!(ltr_isolated("a\nb"), "\u{200e}a\n\u{200e}b");
    }
}
