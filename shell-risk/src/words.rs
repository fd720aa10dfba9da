//! Turning tree-sitter-bash argument nodes into words: a literal (quotes removed, escapes undone,
//! `~`, `$HOME` and `$PWD` expanded from the context) or a dynamic word, known only when the
//! shell runs (any other variable, `$(…)`, arithmetic, brace expansion).

use std::path::{Path, PathBuf};

use tree_sitter::Node;

use crate::paths::{self, Context};

/// One word of a simple command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Word {
    /// Its value is known now.
    Lit(String),
    /// Its value is known only when the command runs; holds the source text.
    Dyn(String),
    /// Known only when the command runs, and made by a download (`$(curl …)`, `<(wget …)`).
    Fetched(String),
}

impl Word {
    pub(crate) fn lit(&self) -> Option<&str> {
        match self {
            Word::Lit(s) => Some(s),
            Word::Dyn(_) | Word::Fetched(_) => None,
        }
    }

    /// The value if literal, else the source text: for messages.
    pub(crate) fn text(&self) -> &str {
        match self {
            Word::Lit(s) | Word::Dyn(s) | Word::Fetched(s) => s,
        }
    }
}

/// The source text of `node` (empty if it is not UTF-8, which the caller input always is).
pub(crate) fn text<'s>(node: Node<'_>, src: &'s str) -> &'s str {
    src.get(node.byte_range()).unwrap_or("")
}

/// Expands what the word builder can know now.
pub(crate) struct Expander<'a> {
    pub src: &'a str,
    pub ctx: &'a Context,
    /// The shell's current folder (after any `cd`); `None` once it is unknown.
    pub cwd: Option<&'a Path>,
}

impl Expander<'_> {
    /// The word an argument node stands for.
    pub(crate) fn word(&self, node: Node<'_>) -> Word {
        let mut out = String::new();
        if self.append(node, &mut out, true) {
            Word::Lit(out)
        } else {
            Word::Dyn(text(node, self.src).to_string())
        }
    }

    /// Appends the value of `node` to `out`; false when it is dynamic.
    fn append(&self, node: Node<'_>, out: &mut String, first: bool) -> bool {
        let raw = text(node, self.src);
        match node.kind() {
            "word" | "number" => {
                let unescaped = unescape(raw, false);
                if first && (unescaped == "~" || unescaped.starts_with("~/")) {
                    match &self.ctx.home {
                        Some(home) => {
                            out.push_str(&home.to_string_lossy());
                            out.push_str(&unescaped[1..]);
                            true
                        }
                        None => false,
                    }
                } else if first && unescaped.starts_with('~') {
                    false
                } else {
                    out.push_str(&unescaped);
                    true
                }
            }
            "raw_string" => {
                out.push_str(raw.get(1..raw.len().saturating_sub(1)).unwrap_or(""));
                true
            }
            "string" => self.append_pieces(node, out, 1, 1, true),
            "concatenation" => self.append_pieces(node, out, 0, 0, false),
            "simple_expansion" | "expansion" => match self.variable(raw) {
                Some(value) => {
                    out.push_str(&value);
                    true
                }
                None => false,
            },
            "string_content" => {
                out.push_str(&unescape(raw, true));
                true
            }
            _ => false,
        }
    }

    /// Appends a string's or concatenation's pieces, with the raw text between named children
    /// (`skip_start`/`skip_end` bytes of quotes trimmed).
    fn append_pieces(
        &self,
        node: Node<'_>,
        out: &mut String,
        skip_start: usize,
        skip_end: usize,
        quoted: bool,
    ) -> bool {
        let start = node.start_byte() + skip_start;
        let end = node.end_byte().saturating_sub(skip_end).max(start);
        let mut pos = start;
        let mut cursor = node.walk();
        for (i, child) in node.named_children(&mut cursor).enumerate() {
            if child.start_byte() > pos {
                let gap = self.src.get(pos..child.start_byte()).unwrap_or("");
                out.push_str(&unescape(gap, quoted));
            }
            if !self.append(child, out, !quoted && i == 0) {
                return false;
            }
            pos = child.end_byte();
        }
        if end > pos {
            out.push_str(&unescape(self.src.get(pos..end).unwrap_or(""), quoted));
        }
        true
    }

    /// `$HOME`, `${HOME}`, `$PWD`, `${PWD}`: the only variables known before the command runs.
    fn variable(&self, raw: &str) -> Option<String> {
        let name = raw
            .strip_prefix("${")
            .and_then(|s| s.strip_suffix('}'))
            .or_else(|| raw.strip_prefix('$'))?;
        match name {
            "HOME" => self.ctx.home.as_ref().map(|h| h.to_string_lossy().into()),
            "PWD" => self.cwd.map(|c| c.to_string_lossy().into()),
            _ => None,
        }
    }

    /// Resolves a literal path against the current folder; `None` when the folder is unknown
    /// and the path is relative.
    pub(crate) fn resolve(&self, path: &str) -> Option<PathBuf> {
        if path.starts_with('/') {
            return Some(paths::resolve(Path::new("/"), path));
        }
        self.cwd.map(|c| paths::resolve(c, path))
    }
}

/// Undoes backslash escapes: outside quotes every `\x` is `x`; inside double quotes only `\$`,
/// `` \` ``, `\"`, `\\` and a backslash-newline are escapes.
fn unescape(raw: &str, in_double_quotes: bool) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.peek().copied() {
            Some('\n') => {
                chars.next();
            }
            Some(n) if !in_double_quotes || matches!(n, '$' | '`' | '"' | '\\') => {
                out.push(n);
                chars.next();
            }
            _ => out.push('\\'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_follow_the_quoting() {
        assert_eq!(unescape(r"a\ b\\c", false), r"a b\c");
        assert_eq!(unescape(r#"a\nb\"c"#, true), r#"a\nb"c"#);
    }
}
