//! Path patterns for the secret list: `~/…` (under the home folder), `/…` (absolute) or a bare
//! name (`*.pem`, matched against every component of a path). A component may hold `*` (any run
//! of characters but `/`), `?` (one character) and `[…]` classes (`[!…]` or `[^…]` negated,
//! `a-z` ranges); a component `**` stands for any number of components. A pattern names a path
//! and everything under it, so `~/.aws` covers `~/.aws/credentials`.

use std::fmt;
use std::path::{Component, Path};

/// Where a pattern starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Anchor {
    /// `/…`: at the root.
    Root,
    /// `~/…`: in the home folder.
    Home,
    /// A bare name: any component of a path.
    Name,
}

/// One component of a pattern, with fast forms for the common shapes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Comp {
    Lit(String),
    /// `*SUFFIX` with no other special character.
    Suffix(String),
    /// `PREFIX*` with no other special character.
    Prefix(String),
    Glob(String),
    /// `**`.
    Any,
}

/// A compiled path pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathGlob {
    pub(crate) text: String,
    pub(crate) anchor: Anchor,
    pub(crate) comps: Vec<Comp>,
}

/// Why a pattern was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GlobError {
    pub pattern: String,
    pub message: &'static str,
}

impl fmt::Display for GlobError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`: {}", self.pattern, self.message)
    }
}

impl std::error::Error for GlobError {}

fn has_special(s: &str) -> bool {
    s.contains(['*', '?', '['])
}

impl PathGlob {
    /// Compiles `text`: `~/…`, `/…` or a name without `/`.
    pub fn new(text: &str) -> Result<PathGlob, GlobError> {
        let err = |message| GlobError {
            pattern: text.to_string(),
            message,
        };
        let (anchor, rest) = if let Some(rest) = text.strip_prefix("~/") {
            (Anchor::Home, rest)
        } else if let Some(rest) = text.strip_prefix('/') {
            (Anchor::Root, rest)
        } else if text.contains('/') {
            return Err(err(
                "a pattern with a `/` must start with `~/` or `/` (a bare name matches anywhere)",
            ));
        } else {
            (Anchor::Name, text)
        };
        let mut comps = Vec::new();
        for part in rest.split('/').filter(|p| !p.is_empty() && *p != ".") {
            if part == ".." {
                return Err(err("`..` is not allowed in a pattern"));
            }
            comps.push(compile_comp(part).map_err(err)?);
        }
        if comps.is_empty() || comps.iter().all(|c| *c == Comp::Any) {
            return Err(err("the pattern names nothing (it would match every path)"));
        }
        if anchor == Anchor::Name && comps.len() != 1 {
            return Err(err("a bare name must be one component"));
        }
        Ok(PathGlob {
            text: text.to_string(),
            anchor,
            comps,
        })
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether `path` (absolute, resolved) is named by the pattern or lies under what it names.
    pub(crate) fn covers(&self, path: &[&str], home: Option<&[&str]>) -> bool {
        match self.anchor {
            Anchor::Name => path.iter().any(|c| comp_matches(&self.comps[0], c)),
            Anchor::Root => prefix_match(&self.comps, path),
            Anchor::Home => match home {
                Some(h) if path.starts_with(h) => prefix_match(&self.comps, &path[h.len()..]),
                _ => false,
            },
        }
    }

    /// Whether something the pattern names lies at or under the folder `path` (absolute,
    /// resolved), or the folder lies under it. Bare names do not count: any folder may hold a
    /// file so named. With `skip_hidden`, a secret reached only through a hidden component
    /// below the folder does not count (what `rg` and `ag` skip).
    pub(crate) fn under(&self, path: &[&str], home: Option<&[&str]>, skip_hidden: bool) -> bool {
        let rest: &[&str] = match (self.anchor, home) {
            (Anchor::Name, _) => return false,
            (Anchor::Root, _) => path,
            (Anchor::Home, Some(h)) if h.starts_with(path) => {
                // The folder holds the home folder itself.
                return !skip_hidden || !self.hidden_from(0, &h[path.len()..]);
            }
            (Anchor::Home, Some(h)) if path.starts_with(h) => &path[h.len()..],
            (Anchor::Home, _) => return false,
        };
        reaches(&self.comps, rest, &mut |left| {
            !skip_hidden || !self.hidden_from(self.comps.len() - left, &[])
        })
    }

    /// Whether a path the shell pattern `word` (absolute components, some holding `*`, `?` or
    /// `[…]`) expands to could be named by this pattern, or lie under what it names. A bare name
    /// counts only against a last component that holds a literal character (`*` alone could be
    /// anything, and `cat src/*` is not taken for reading `src/x.pem`).
    pub(crate) fn may_hit(&self, word: &[&str], home: Option<&[&str]>) -> bool {
        match (self.anchor, home) {
            (Anchor::Name, _) => word.last().is_some_and(|last| {
                last.chars().any(|c| !"*?[]".contains(c)) && compatible(last, &self.comps[0])
            }),
            (Anchor::Root, _) => seq_may_hit(&self.comps, word),
            (Anchor::Home, Some(h)) => {
                h.len() <= word.len()
                    && h.iter()
                        .zip(word)
                        .all(|(hc, wc)| compatible(wc, &Comp::Lit(hc.to_string())))
                    && seq_may_hit(&self.comps, &word[h.len()..])
            }
            (Anchor::Home, None) => false,
        }
    }

    /// Whether this is a bare `*SUFFIX` name that every name ending in `end` matches.
    pub(crate) fn exempts_ending(&self, end: &str) -> bool {
        match (self.anchor, self.comps.first()) {
            (Anchor::Name, Some(Comp::Suffix(s))) => !s.is_empty() && end.ends_with(s.as_str()),
            _ => false,
        }
    }

    /// Whether the way from pattern component `from` on (after the folders `between`) passes a
    /// hidden name.
    fn hidden_from(&self, from: usize, between: &[&str]) -> bool {
        between.iter().any(|c| c.starts_with('.'))
            || self.comps[from..].iter().any(|c| match c {
                Comp::Lit(s) | Comp::Prefix(s) => s.starts_with('.'),
                Comp::Glob(s) => s.starts_with('.'),
                Comp::Suffix(_) | Comp::Any => false,
            })
    }
}

fn compile_comp(part: &str) -> Result<Comp, &'static str> {
    if part == "**" {
        return Ok(Comp::Any);
    }
    if part.contains("**") {
        return Err("`**` must be a whole component");
    }
    if let Some(open) = part.find('[') {
        let closed = part[open..].find(']').is_some_and(|c| c > 1);
        if !closed {
            return Err("a `[` class is never closed");
        }
    }
    if !has_special(part) {
        return Ok(Comp::Lit(part.to_string()));
    }
    if let Some(suffix) = part.strip_prefix('*')
        && !has_special(suffix)
    {
        return Ok(Comp::Suffix(suffix.to_string()));
    }
    if let Some(prefix) = part.strip_suffix('*')
        && !has_special(prefix)
    {
        return Ok(Comp::Prefix(prefix.to_string()));
    }
    Ok(Comp::Glob(part.to_string()))
}

/// Whether one path component matches one pattern component (`**` matches any one).
pub(crate) fn comp_matches(comp: &Comp, name: &str) -> bool {
    match comp {
        Comp::Lit(s) => s == name,
        Comp::Suffix(s) => name.ends_with(s.as_str()),
        Comp::Prefix(s) => name.starts_with(s.as_str()),
        Comp::Glob(g) => glob_match(g, name),
        Comp::Any => true,
    }
}

/// Whether `comps` match a leading run of `path` (the path, or something under it).
fn prefix_match(comps: &[Comp], path: &[&str]) -> bool {
    match comps.split_first() {
        None => true,
        Some((Comp::Any, rest)) => (0..=path.len()).any(|skip| prefix_match(rest, &path[skip..])),
        Some((c, rest)) => match path.split_first() {
            Some((first, tail)) => comp_matches(c, first) && prefix_match(rest, tail),
            None => false,
        },
    }
}

/// Whether `path` matches a leading run of `comps` (the pattern reaches at or under the path),
/// or `comps` match a leading run of `path`; `accept` is asked with how many components are
/// left over (0 when the path lies under the pattern).
fn reaches(comps: &[Comp], path: &[&str], accept: &mut dyn FnMut(usize) -> bool) -> bool {
    let Some((first, tail)) = path.split_first() else {
        return accept(comps.len());
    };
    match comps.split_first() {
        None => accept(0),
        Some((Comp::Any, rest)) => {
            // `**` may take this component and stay, or end here.
            reaches(comps, tail, accept) || reaches(rest, path, accept)
        }
        Some((c, rest)) => comp_matches(c, first) && reaches(rest, tail, accept),
    }
}

/// Whether pattern components `comps` and word components `word` could name the same path, or
/// the word something under what the pattern names.
fn seq_may_hit(comps: &[Comp], word: &[&str]) -> bool {
    match (comps.split_first(), word.split_first()) {
        (None, _) => true,
        (Some(_), None) => false,
        (Some((Comp::Any, rest)), Some((_, tail))) => {
            seq_may_hit(rest, word) || seq_may_hit(comps, tail)
        }
        (Some(_), Some((w, _))) if *w == "**" => true,
        (Some((c, rest)), Some((w, tail))) => compatible(w, c) && seq_may_hit(rest, tail),
    }
}

/// Whether some name matches both the word component `word` (maybe a shell pattern) and the
/// pattern component `comp`: exact for a literal word; for two patterns, their fixed beginnings
/// and endings must agree.
fn compatible(word: &str, comp: &Comp) -> bool {
    if !has_special(word) {
        return comp_matches(comp, word);
    }
    // The shell's `*`, `?` and `[…]` never match a leading dot.
    let hidden = match comp {
        Comp::Lit(s) | Comp::Prefix(s) | Comp::Glob(s) => s.starts_with('.'),
        Comp::Suffix(_) | Comp::Any => false,
    };
    if hidden && !word.starts_with('.') {
        return false;
    }
    let fixed = |s: &str| -> (String, String) {
        let start: String = s.chars().take_while(|c| !"*?[".contains(*c)).collect();
        let end_rev: String = s
            .chars()
            .rev()
            .take_while(|c| !"*?]".contains(*c))
            .collect();
        (start, end_rev.chars().rev().collect())
    };
    let (ws, we) = fixed(word);
    let (ps, pe) = match comp {
        Comp::Any => return true,
        Comp::Lit(l) => return glob_match(word, l),
        Comp::Suffix(s) => (String::new(), s.clone()),
        Comp::Prefix(p) => (p.clone(), String::new()),
        Comp::Glob(g) => fixed(g),
    };
    let agree = |a: &str, b: &str, f: fn(&str, &str) -> bool| f(a, b) || f(b, a);
    agree(&ws, &ps, |a, b| a.starts_with(b)) && agree(&we, &pe, |a, b| a.ends_with(b))
}

/// Shell-style matching of one name: `*`, `?`, `[…]` classes.
pub(crate) fn glob_match(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = name.chars().collect();
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        let step = match p.get(pi) {
            Some('*') => {
                star = Some((pi, ti));
                pi += 1;
                continue;
            }
            Some('?') => Some(pi + 1),
            Some('[') => class_match(&p, pi, t[ti]),
            Some(&c) if c == t[ti] => Some(pi + 1),
            _ => None,
        };
        match (step, star) {
            (Some(next), _) => {
                pi = next;
                ti += 1;
            }
            (None, Some((sp, st))) => {
                pi = sp + 1;
                ti = st + 1;
                star = Some((sp, st + 1));
            }
            (None, None) => return false,
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

/// Matches `c` against the class opening at `p[open]`; the index after the class, or `None`.
fn class_match(p: &[char], open: usize, c: char) -> Option<usize> {
    let mut i = open + 1;
    let negated = matches!(p.get(i), Some('!' | '^'));
    if negated {
        i += 1;
    }
    let mut hit = false;
    let mut first = true;
    while let Some(&x) = p.get(i) {
        if x == ']' && !first {
            return (hit != negated).then_some(i + 1);
        }
        first = false;
        if p.get(i + 1) == Some(&'-') && p.get(i + 2).is_some_and(|e| *e != ']') {
            hit |= (x..=p[i + 2]).contains(&c);
            i += 3;
        } else {
            hit |= x == c;
            i += 1;
        }
    }
    // Never closed (refused when compiling; in a word it is a literal `[`).
    (c == '[').then_some(open + 1)
}

/// The components of an absolute, resolved path as text.
pub(crate) fn components(path: &Path) -> Vec<&str> {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_str().unwrap_or("\u{fffd}")),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(text: &str) -> PathGlob {
        PathGlob::new(text).unwrap()
    }

    const HOME: &[&str] = &["home", "u"];

    fn path(text: &str) -> Vec<&str> {
        text.split('/').filter(|s| !s.is_empty()).collect()
    }

    #[test]
    fn names_globs_and_classes_match_like_a_shell() {
        assert!(glob_match("id_*", "id_rsa"));
        assert!(!glob_match("id_*", "xid_rsa"));
        assert!(glob_match("*.p[e]m", "a.pem"));
        assert!(glob_match("key[0-9]", "key7"));
        assert!(!glob_match("key[!0-9]", "key7"));
        assert!(glob_match("a?c", "abc"));
        assert!(glob_match("*", ""));
    }

    #[test]
    fn a_pattern_covers_what_it_names_and_everything_under_it() {
        let aws = p("~/.aws");
        assert!(aws.covers(&path("/home/u/.aws/credentials"), Some(HOME)));
        assert!(aws.covers(&path("/home/u/.aws"), Some(HOME)));
        assert!(!aws.covers(&path("/home/u/.awsx"), Some(HOME)));
        assert!(!aws.covers(&path("/home/u/.aws"), None));
        let pem = p("*.pem");
        assert!(pem.covers(&path("/srv/certs/a.pem"), Some(HOME)));
        let cookies = p("~/.mozilla/**/cookies.sqlite");
        assert!(cookies.covers(
            &path("/home/u/.mozilla/firefox/x/cookies.sqlite"),
            Some(HOME)
        ));
        assert!(!cookies.covers(&path("/home/u/.mozilla/firefox/x/places"), Some(HOME)));
        assert!(p("/proc/*/environ").covers(&path("/proc/self/environ"), None));
    }

    #[test]
    fn a_folder_holds_the_secrets_below_it() {
        let ssh = p("~/.ssh/id_*");
        assert!(ssh.under(&path("/home/u"), Some(HOME), false));
        assert!(ssh.under(&path("/"), Some(HOME), false));
        assert!(ssh.under(&path("/home/u/.ssh"), Some(HOME), false));
        assert!(!ssh.under(&path("/home/u/proj"), Some(HOME), false));
        // rg skips hidden folders: the home folder's `.ssh` is not read.
        assert!(!ssh.under(&path("/home/u"), Some(HOME), true));
        assert!(ssh.under(&path("/home/u/.ssh"), Some(HOME), true));
        let cookies = p("~/.mozilla/**/cookies.sqlite");
        assert!(cookies.under(&path("/home/u/.mozilla/firefox/x"), Some(HOME), false));
        assert!(!p("*.pem").under(&path("/home/u"), Some(HOME), false));
    }

    #[test]
    fn bad_patterns_are_refused_with_why() {
        for (bad, why) in [
            ("a/b", "must start with"),
            ("~/**", "names nothing"),
            ("~/[ab", "never closed"),
            ("~/../x", "`..`"),
            ("~/a**", "whole component"),
            ("", "names nothing"),
        ] {
            let e = PathGlob::new(bad).unwrap_err();
            assert!(e.to_string().contains(why), "{bad}: {e}");
        }
    }
}
