//! JSON as the agent CLIs' settings files hold it, read with the place of every value: Claude
//! Code's and Codex's files are plain JSON, Gemini CLI's may hold `//` and `/* */` comments
//! (it strips them before `JSON.parse`). `pcpctl hook install` edits such a file by replacing or
//! inserting text at these places, so every other byte — comments, key order, spacing — stays as
//! it was; an error names the line and column, and the file is never touched then.

use std::fmt;
use std::ops::Range;

use serde_json::{Map, Value};

/// A value and the bytes it spans.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub span: Range<usize>,
    pub kind: Kind,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// Members in the order written (a key given twice is kept twice).
    Object(Vec<Member>),
    Array(Vec<Node>),
    Scalar(Value),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Member {
    pub key: String,
    pub value: Node,
}

/// Why a text is not such JSON, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.column, self.message)
    }
}

/// Reads `text` whole; `comments` allows `//` and `/* */` comments between tokens.
pub fn parse(text: &str, comments: bool) -> Result<Node, Error> {
    let mut p = Parser {
        text,
        bytes: text.as_bytes(),
        at: 0,
        comments,
        depth: 0,
    };
    p.space()?;
    let node = p.value()?;
    p.space()?;
    if p.at < p.bytes.len() {
        return Err(p.error("more text after the end of the JSON value"));
    }
    Ok(node)
}

/// The 1-based line and column (in characters) of byte `at` of `text`.
pub fn position(text: &str, at: usize) -> (usize, usize) {
    let before = &text[..at.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[start..].chars().count() + 1)
}

impl Node {
    /// The value, as serde_json would read it (a key given twice: the last counts, as in
    /// `JSON.parse`).
    pub fn to_value(&self) -> Value {
        match &self.kind {
            Kind::Scalar(v) => v.clone(),
            Kind::Array(items) => Value::Array(items.iter().map(Node::to_value).collect()),
            Kind::Object(members) => {
                let mut map = Map::new();
                for m in members {
                    map.insert(m.key.clone(), m.value.to_value());
                }
                Value::Object(map)
            }
        }
    }

    /// The members of an object, `None` for any other value.
    pub fn members(&self) -> Option<&[Member]> {
        match &self.kind {
            Kind::Object(m) => Some(m),
            _ => None,
        }
    }

    /// The items of an array, `None` for any other value.
    pub fn items(&self) -> Option<&[Node]> {
        match &self.kind {
            Kind::Array(items) => Some(items),
            _ => None,
        }
    }

    /// The value of `key` in an object: the last one given, and how many times it was given.
    pub fn get(&self, key: &str) -> (Option<&Node>, usize) {
        let found: Vec<&Member> = self
            .members()
            .unwrap_or_default()
            .iter()
            .filter(|m| m.key == key)
            .collect();
        (found.last().map(|m| &m.value), found.len())
    }
}

/// Largest nesting the reader follows (the CLIs' settings nest a few levels).
const MAX_DEPTH: usize = 128;

struct Parser<'t> {
    text: &'t str,
    bytes: &'t [u8],
    at: usize,
    comments: bool,
    depth: usize,
}

impl Parser<'_> {
    fn error(&self, message: impl Into<String>) -> Error {
        let (line, column) = position(self.text, self.at);
        Error {
            line,
            column,
            message: message.into(),
        }
    }

    /// Skips white space and, when allowed, comments.
    fn space(&mut self) -> Result<(), Error> {
        loop {
            match self.bytes.get(self.at) {
                Some(b' ' | b'\t' | b'\n' | b'\r') => self.at += 1,
                Some(b'/') if self.bytes.get(self.at + 1) == Some(&b'/') => {
                    if !self.comments {
                        return Err(self.error("a comment, which this file may not hold"));
                    }
                    while self.bytes.get(self.at).is_some_and(|&b| b != b'\n') {
                        self.at += 1;
                    }
                }
                Some(b'/') if self.bytes.get(self.at + 1) == Some(&b'*') => {
                    if !self.comments {
                        return Err(self.error("a comment, which this file may not hold"));
                    }
                    let end = self.text[self.at + 2..]
                        .find("*/")
                        .ok_or_else(|| self.error("a comment that never ends"))?;
                    self.at += 2 + end + 2;
                }
                _ => return Ok(()),
            }
        }
    }

    fn value(&mut self) -> Result<Node, Error> {
        let start = self.at;
        let kind = match self.bytes.get(self.at) {
            Some(b'{') => self.nested(Self::object)?,
            Some(b'[') => self.nested(Self::array)?,
            Some(b'"') => Kind::Scalar(Value::String(self.string()?)),
            Some(b't') => self.literal("true", Value::Bool(true))?,
            Some(b'f') => self.literal("false", Value::Bool(false))?,
            Some(b'n') => self.literal("null", Value::Null)?,
            Some(b'-' | b'0'..=b'9') => self.number()?,
            Some(_) => return Err(self.error("expected a JSON value")),
            None => return Err(self.error("the text ends where a value should be")),
        };
        Ok(Node {
            span: start..self.at,
            kind,
        })
    }

    fn nested(&mut self, f: fn(&mut Self) -> Result<Kind, Error>) -> Result<Kind, Error> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error(format!("nested deeper than {MAX_DEPTH} levels")));
        }
        let kind = f(self);
        self.depth -= 1;
        kind
    }

    fn object(&mut self) -> Result<Kind, Error> {
        self.at += 1;
        let mut members = Vec::new();
        self.space()?;
        if self.bytes.get(self.at) == Some(&b'}') {
            self.at += 1;
            return Ok(Kind::Object(members));
        }
        loop {
            self.space()?;
            if self.bytes.get(self.at) != Some(&b'"') {
                return Err(self.error("expected a key in double quotes (no trailing comma)"));
            }
            let key = self.string()?;
            self.space()?;
            if self.bytes.get(self.at) != Some(&b':') {
                return Err(self.error("expected `:` after the key"));
            }
            self.at += 1;
            self.space()?;
            let value = self.value()?;
            members.push(Member { key, value });
            self.space()?;
            match self.bytes.get(self.at) {
                Some(b',') => self.at += 1,
                Some(b'}') => {
                    self.at += 1;
                    return Ok(Kind::Object(members));
                }
                _ => return Err(self.error("expected `,` or `}`")),
            }
        }
    }

    fn array(&mut self) -> Result<Kind, Error> {
        self.at += 1;
        let mut items = Vec::new();
        self.space()?;
        if self.bytes.get(self.at) == Some(&b']') {
            self.at += 1;
            return Ok(Kind::Array(items));
        }
        loop {
            self.space()?;
            items.push(self.value()?);
            self.space()?;
            match self.bytes.get(self.at) {
                Some(b',') => self.at += 1,
                Some(b']') => {
                    self.at += 1;
                    return Ok(Kind::Array(items));
                }
                _ => return Err(self.error("expected `,` or `]`")),
            }
        }
    }

    fn literal(&mut self, word: &str, value: Value) -> Result<Kind, Error> {
        if self.text[self.at..].starts_with(word) {
            self.at += word.len();
            Ok(Kind::Scalar(value))
        } else {
            Err(self.error("expected a JSON value"))
        }
    }

    /// A string token, read by serde_json (escapes, surrogates, control characters).
    fn string(&mut self) -> Result<String, Error> {
        let start = self.at;
        let mut i = self.at + 1;
        loop {
            match self.bytes.get(i) {
                Some(b'"') => break,
                Some(b'\\') => i += 2,
                Some(_) => i += 1,
                None => return Err(self.error("a string that never ends")),
            }
        }
        let token = &self.text[start..=i];
        let s = serde_json::from_str::<String>(token).map_err(|e| self.error(e.to_string()))?;
        self.at = i + 1;
        Ok(s)
    }

    fn number(&mut self) -> Result<Kind, Error> {
        let start = self.at;
        let end = self.bytes[start..]
            .iter()
            .position(|b| !matches!(b, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))
            .map_or(self.bytes.len(), |n| start + n);
        let token = &self.text[start..end];
        let value = serde_json::from_str::<Value>(token)
            .ok()
            .filter(Value::is_number)
            .ok_or_else(|| self.error(format!("`{token}` is not a JSON number")))?;
        self.at = end;
        Ok(Kind::Scalar(value))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn values_and_their_places_are_read() {
        let text = r#"{"a": [1, "x\n", {"b": null}], "c": true}"#;
        let node = parse(text, false).unwrap();
        assert_eq!(
            node.to_value(),
            json!({"a": [1, "x\n", {"b": null}], "c": true})
        );
        let (a, n) = node.get("a");
        assert_eq!(n, 1);
        assert_eq!(&text[a.unwrap().span.clone()], r#"[1, "x\n", {"b": null}]"#);
        assert_eq!(node.span, 0..text.len());
    }

    #[test]
    fn comments_only_where_allowed() {
        let text = "// top\n{\"a\": /* inline */ 1 // end\n}\n";
        assert_eq!(parse(text, true).unwrap().to_value(), json!({"a": 1}));
        let e = parse(text, false).unwrap_err();
        assert_eq!((e.line, e.column), (1, 1));
        assert!(e.message.contains("comment"), "{e}");
    }

    #[test]
    fn errors_name_line_and_column() {
        for (text, line, column) in [
            ("{\n  \"a\": 1,\n}", 3, 1),
            ("{\"a\" 1}", 1, 6),
            ("[1, 2", 1, 6),
            ("{\"a\": tru}", 1, 7),
            ("{} x", 1, 4),
            ("{\"a\": \"\u{1}\"}", 1, 7),
            ("{\"a\": 01}", 1, 7),
        ] {
            let e = parse(text, true).unwrap_err();
            assert_eq!((e.line, e.column), (line, column), "{text:?}: {e}");
        }
    }

    #[test]
    fn a_key_given_twice_counts_twice_and_the_last_wins() {
        let node = parse(r#"{"a": 1, "a": 2}"#, false).unwrap();
        let (a, n) = node.get("a");
        assert_eq!((a.unwrap().to_value(), n), (json!(2), 2));
        assert_eq!(node.to_value(), json!({"a": 2}));
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let text = "[".repeat(10_000);
        assert!(parse(&text, false).is_err());
    }
}
