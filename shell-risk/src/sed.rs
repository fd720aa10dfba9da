//! `sed`: read-only unless it edits in place or its script writes files (`w`, `s///w`) or runs
//! commands (`e`, `s///e`). The script is read with a small scanner of sed's own grammar; what it
//! cannot read counts as not read-only.

use crate::Risk;
use crate::phrases as say;
use crate::rules::{Verdict, write_finding};
use crate::words::{Expander, Word};

pub(crate) fn sed(args: &[Word], exp: &Expander<'_>) -> Verdict {
    let mut v = Verdict::default();
    let mut scripts: Vec<&Word> = Vec::new();
    let mut files: Vec<&Word> = Vec::new();
    let mut in_place = false;
    let mut from_file = false;
    let mut i = 0;
    while let Some(a) = args.get(i) {
        i += 1;
        let Some(s) = a.lit() else {
            if scripts.is_empty() {
                scripts.push(a);
            } else {
                files.push(a);
            }
            continue;
        };
        if s == "--in-place" || s.starts_with("--in-place=") {
            in_place = true;
        } else if s == "--expression" || s == "--file" {
            from_file |= s == "--file";
            if let Some(n) = args.get(i) {
                scripts.push(n);
            }
            i += 1;
        } else if let Some(e) = s.strip_prefix("--expression=") {
            let _ = e;
            scripts.push(a);
        } else if s.starts_with("--") {
        } else if let Some(cluster) = s.strip_prefix('-').filter(|c| !c.is_empty()) {
            // `-i` takes an optional suffix glued to it: nothing after it is a flag.
            let upto = cluster.find('i').map_or(cluster, |p| &cluster[..p]);
            in_place |= cluster.contains('i') && !upto.contains(['e', 'f']);
            if upto.ends_with('e') || upto.ends_with('f') {
                from_file |= upto.ends_with('f');
                if let Some(n) = args.get(i) {
                    scripts.push(n);
                }
                i += 1;
            } else if upto.ends_with('l') {
                i += 1;
            }
        } else if scripts.is_empty() {
            scripts.push(a);
        } else {
            files.push(a);
        }
    }
    if in_place {
        v.add(Risk::Moderate, &say::SED_IN_PLACE);
        for f in &files {
            if let Some(found) = write_finding(f, false, exp) {
                v.add(found.0, found.1);
            }
        }
    }
    if from_file {
        v.add(Risk::Moderate, &say::SED_SCRIPT_FILE);
    }
    for s in scripts {
        let text = s.text();
        let text = text.strip_prefix("--expression=").unwrap_or(text);
        if s.lit().is_none() || !script_only_reads(text) {
            v.add(Risk::Moderate, &say::SED_MAY_WRITE);
        }
    }
    if v.findings.is_empty() {
        v.add(Risk::Safe, say::ONLY_READS_COMMAND.with("command", "sed"));
    }
    v
}

/// Whether a sed script has no `w`, `W`, `e` commands and no `w`/`e` flag on `s`.
fn script_only_reads(script: &str) -> bool {
    let b: Vec<char> = script.chars().collect();
    let mut i = 0;
    loop {
        while i < b.len() && (b[i].is_whitespace() || b[i] == ';') {
            i += 1;
        }
        if i >= b.len() {
            return true;
        }
        let Some(next) = address(&b, i) else {
            return false;
        };
        i = next;
        if b.get(i) == Some(&',') {
            let Some(next) = address(&b, i + 1) else {
                return false;
            };
            i = next;
        }
        while i < b.len() && (b[i].is_whitespace() || b[i] == '!') {
            i += 1;
        }
        let Some(&c) = b.get(i) else { return false };
        i += 1;
        match c {
            '{' | '}' => {}
            's' | 'y' => {
                let Some(&delim) = b.get(i) else { return false };
                i += 1;
                for _ in 0..2 {
                    let Some(next) = skip_delimited(&b, i, delim) else {
                        return false;
                    };
                    i = next;
                }
                while i < b.len() && b[i].is_ascii_alphanumeric() {
                    if matches!(b[i], 'w' | 'W' | 'e') {
                        return false;
                    }
                    i += 1;
                }
            }
            'a' | 'i' | 'c' | '#' | ':' | 'b' | 't' | 'T' | 'r' | 'R' => {
                while i < b.len()
                    && b[i] != '\n'
                    && !(matches!(c, ':' | 'b' | 't' | 'T') && b[i] == ';')
                {
                    i += 1;
                }
            }
            'p' | 'P' | 'd' | 'D' | 'n' | 'N' | 'g' | 'G' | 'h' | 'H' | 'x' | 'l' | '=' | 'q'
            | 'Q' | 'z' | 'F' => {
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
            }
            _ => return false,
        }
    }
}

/// Skips one address (`12`, `$`, `/re/I`, `\%re%`, `first~step`); `None` if it is malformed.
fn address(b: &[char], mut i: usize) -> Option<usize> {
    match b.get(i) {
        Some(c) if c.is_ascii_digit() => {
            while i < b.len() && (b[i].is_ascii_digit() || b[i] == '~') {
                i += 1;
            }
        }
        Some('$') => i += 1,
        Some('/') => {
            i = skip_delimited(b, i + 1, '/')?;
            while i < b.len() && matches!(b[i], 'I' | 'M') {
                i += 1;
            }
        }
        Some('\\') => {
            let delim = *b.get(i + 1)?;
            i = skip_delimited(b, i + 2, delim)?;
        }
        _ => {}
    }
    Some(i)
}

/// The index after the next unescaped `delim` from `i`.
fn skip_delimited(b: &[char], mut i: usize, delim: char) -> Option<usize> {
    while i < b.len() {
        if b[i] == '\\' {
            i += 2;
            continue;
        }
        if b[i] == delim {
            return Some(i + 1);
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::script_only_reads;

    #[test]
    fn scripts_that_write_or_run_are_caught() {
        assert!(script_only_reads("s/foo/bar/g"));
        assert!(!script_only_reads("s/a/b/w out.txt"));
        assert!(!script_only_reads("1e rm -rf /"));
        assert!(!script_only_reads("/x/w /tmp/y"));
        assert!(script_only_reads("/error/p"));
        assert!(script_only_reads("1,20p"));
        assert!(script_only_reads("s|/usr/local|/opt|g; /^#/d"));
        assert!(!script_only_reads("s/x/y/e"));
    }
}
