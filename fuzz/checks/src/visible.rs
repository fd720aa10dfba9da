//! Client text made visible (`pcp_overlay::visible`): for any string and cap, the output stays
//! within the cap plus the cut mark, keeps no character that would be invisible or reorder the
//! text, stacks at most a few combining marks, loses nothing it does not say it cut, and
//! left-to-right isolation only adds marks.

use pcp_overlay::visible::{MAX_CLUSTER_CHARS, is_hidden, ltr_isolated, shown, visible_text};

const MARK: &str = "<cut {n}>";

pub fn check(data: &[u8]) {
    let (cap, text) = match data.split_first() {
        Some((&c, rest)) => (usize::from(c) * 4, String::from_utf8_lossy(rest)),
        None => (0, "".into()),
    };
    let out = visible_text(&text, cap, MARK);
    let s = shown(&text, cap);
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
        accounts_for(&kept, &out, s.cut == 0),
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

/// Whether `out` starts with `input`, each character as itself or written out (`<U+XXXX>`, or a
/// run of it written once, `<U+XXXX ×n>`), and is nothing more when `whole`. A plain `<` and a
/// written-out character both begin with `<`, so both readings are tried.
fn accounts_for(input: &[char], out: &[char], whole: bool) -> bool {
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
    }
    false
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
