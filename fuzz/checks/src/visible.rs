//! Client text made visible (`pcp_overlay::visible`), as one line (names) and as text that may
//! span lines (commands, patches): for any string and cap, the output stays within the cap plus
//! the cut mark, keeps no character that would be invisible or reorder the text (a line feed
//! only where lines may be), stacks at most a few combining marks, loses nothing it does not say
//! it cut, and left-to-right isolation only adds marks. Across lines, no more than a few blank
//! lines follow each other, no indent is wider than the limit, and a run of blank lines is said
//! with how many it stands for.

use pcp_overlay::visible::{
    MAX_BLANK_LINES, MAX_CLUSTER_CHARS, MAX_INDENT, is_hidden, ltr_isolated, shown, shown_lines,
    visible_lines, visible_text,
};

const MARK: &str = "<cut {n}>";
/// The blank-lines mark the check gives; a client can write the same text, which is accounted
/// for either way.
const BLANK: &str = "<blank {n}>";

pub fn check(data: &[u8]) {
    let (cap, text) = match data.split_first() {
        Some((&c, rest)) => (usize::from(c) * 4, String::from_utf8_lossy(rest)),
        None => (0, "".into()),
    };
    one_line(&text, cap);
    lines(&text, cap);
}

fn one_line(text: &str, cap: usize) {
    let out = visible_text(text, cap, MARK);
    let s = shown(text, cap);
    // The text shown fits the cap; the mark comes only when something was cut.
    assert!(s.text.chars().count() <= cap, "{cap}: {:?}", s.text);
    if s.cut == 0 {
        assert_eq!(out, s.text);
    } else {
        assert_eq!(out, format!("{}<cut {}>", s.text, s.cut));
        assert!(s.cut <= text.chars().count());
    }
    // Nothing hidden survives.
    if let Some(c) = s.text.chars().find(|&c| is_hidden(c)) {
        panic!("hidden U+{:04X} survived in {:?}", u32::from(c), s.text);
    }
    // Every input character before the cut is there, in order: as itself, or written out
    // (a run written once for all its characters); with nothing cut, nothing else is.
    let kept: Vec<char> = text.chars().take(text.chars().count() - s.cut).collect();
    let out: Vec<char> = s.text.chars().collect();
    assert!(
        accounts_for(&kept, &out, s.cut == 0, false),
        "{text:?} is not all, in order, in {:?}",
        s.text
    );
    // No more than a few combining marks in a row are drawn.
    assert!(
        longest_mark_run(&s.text) <= MAX_CLUSTER_CHARS,
        "{:?}",
        s.text
    );
    // Left-to-right isolation adds only marks.
    assert_eq!(ltr_isolated(&s.text).replace('\u{200e}', ""), s.text);
}

/// The same for text that may span lines.
fn lines(text: &str, cap: usize) {
    let out = visible_lines(text, cap, MARK, BLANK);
    let s = shown_lines(text, cap, BLANK);
    assert!(s.text.chars().count() <= cap, "{cap}: {:?}", s.text);
    if s.cut == 0 {
        assert_eq!(out, s.text);
    } else {
        assert_eq!(out, format!("{}<cut {}>", s.text, s.cut));
        assert!(s.cut <= text.chars().count());
    }
    // Nothing hidden survives but line breaks.
    if let Some(c) = s.text.chars().find(|&c| c != '\n' && is_hidden(c)) {
        panic!("hidden U+{:04X} survived in {:?}", u32::from(c), s.text);
    }
    let shown_lines: Vec<&str> = s.text.split('\n').collect();
    // No more than a few blank lines in a row (a line of spaces is written out, so blank is
    // empty here), and no line indented past the limit with plain spaces.
    let mut empty_run = 0;
    for (i, line) in shown_lines.iter().enumerate() {
        // The last line may be the start of one that was cut (its line break fitted, nothing
        // of it did): not a blank line of the text.
        let cut_here = s.cut > 0 && i + 1 == shown_lines.len();
        empty_run = if line.is_empty() { empty_run + 1 } else { 0 };
        assert!(empty_run <= MAX_BLANK_LINES || cut_here, "{:?}", s.text);
        let indent = line.chars().take_while(|&c| c == ' ').count();
        assert!(indent <= MAX_INDENT, "{indent} spaces: {:?}", s.text);
        assert!(i > 0 || indent == 0, "the first line starts with a space");
        // (The last line may have been cut after an inner space.)
        assert!(
            cut_here || !line.ends_with(' '),
            "a line ends in a plain space: {:?}",
            s.text
        );
    }
    let kept: Vec<char> = text.chars().take(text.chars().count() - s.cut).collect();
    let out: Vec<char> = s.text.chars().collect();
    assert!(
        accounts_for(&kept, &out, s.cut == 0, true),
        "{text:?} is not all, in order, in {:?}",
        s.text
    );
    assert!(
        longest_mark_run(&s.text) <= MAX_CLUSTER_CHARS,
        "{:?}",
        s.text
    );
    assert_eq!(ltr_isolated(&s.text).replace('\u{200e}', ""), s.text);
}

/// Whether `out` starts with `input`, each character as itself or written out (`<U+XXXX>`, or a
/// run of it written once, `<U+XXXX ×n>`), with `lines` a run of blank lines as the mark saying
/// how many (`<blank n>`), and is nothing more when `whole`. A plain `<` and a written-out
/// character both begin with `<`, so every reading is tried.
fn accounts_for(input: &[char], out: &[char], whole: bool, lines: bool) -> bool {
    let mut todo = vec![(0usize, 0usize)];
    let mut tried = std::collections::HashSet::new();
    while let Some((k, i)) = todo.pop() {
        if !tried.insert((k, i)) {
            continue;
        }
        let Some(&c) = input.get(k) else {
            if !whole || i == out.len() {
                return true;
            }
            continue;
        };
        if out.get(i) == Some(&c) {
            todo.push((k + 1, i + 1));
        }
        if let Some((len, n)) = code_at(&out[i..], c)
            && input.len() - k >= n
            && input[k..k + n].iter().all(|&d| d == c)
        {
            todo.push((k + n, i + len));
        }
        if lines
            && let Some((len, n)) = blank_mark_at(&out[i..])
            && let Some(used) = blank_lines(&input[k..], n)
        {
            todo.push((k + used, i + len));
        }
    }
    false
}

/// If `out` starts with the blank-lines mark: its length and how many lines it stands for.
fn blank_mark_at(out: &[char]) -> Option<(usize, usize)> {
    let head: Vec<char> = "<blank ".chars().collect();
    let rest = out.strip_prefix(head.as_slice())?;
    let digits: String = rest.iter().take_while(|d| d.is_ascii_digit()).collect();
    let n: usize = digits.parse().ok()?;
    (rest.get(digits.len()) == Some(&'>') && n > MAX_BLANK_LINES)
        .then_some((head.len() + digits.len() + 1, n))
}

/// If `input` starts with `n` blank lines (nothing but spaces and hidden characters, joined by
/// line feeds, the last one ending at a line feed or the end): how many characters they take,
/// the line feeds between them included and the one after them not.
fn blank_lines(input: &[char], n: usize) -> Option<usize> {
    let mut at = 0;
    for line in 0..n {
        while let Some(&c) = input.get(at).filter(|&&c| c != '\n') {
            if c != ' ' && !is_hidden(c) {
                return None;
            }
            at += 1;
        }
        if line + 1 < n {
            (input.get(at) == Some(&'\n')).then_some(())?;
            at += 1;
        }
    }
    (at == input.len() || input[at] == '\n').then_some(at)
}

/// If `out` starts with `c` written out (`<U+XXXX>` or `<U+XXXX ×n>`): its length in
/// characters and how many characters it stands for.
fn code_at(out: &[char], c: char) -> Option<(usize, usize)> {
    let head: Vec<char> = format!("<U+{:04X}", u32::from(c)).chars().collect();
    if !out.starts_with(&head) {
        return None;
    }
    let rest = &out[head.len()..];
    match rest.first()? {
        '>' => Some((head.len() + 1, 1)),
        ' ' if rest.get(1) == Some(&'\u{d7}') => {
            let digits: String = rest[2..]
                .iter()
                .take_while(|d| d.is_ascii_digit())
                .collect();
            let n: usize = digits.parse().ok()?;
            (rest.get(2 + digits.len()) == Some(&'>')).then_some((head.len() + 3 + digits.len(), n))
        }
        _ => None,
    }
}

/// The most combining marks (general combining ranges) in a row.
fn longest_mark_run(s: &str) -> usize {
    let (mut best, mut run) = (0, 0);
    for c in s.chars() {
        if matches!(u32::from(c),
            0x0300..=0x036f | 0x1ab0..=0x1aff | 0x1dc0..=0x1dff | 0x20d0..=0x20ff | 0xfe20..=0xfe2f)
        {
            run += 1;
            best = best.max(run);
        } else {
            run = 0;
        }
    }
    best
}
