//! A reason as data: a phrase from [`crate::phrases`] and its arguments, rendered in English or in
//! a [`Wording`] that replaces some templates. Also what makes a replacement template acceptable:
//! a known key, and only the placeholders its phrase has.

use std::collections::BTreeMap;
use std::fmt;

use serde::ser::{Serialize, SerializeMap, SerializeStruct, Serializer};

use crate::phrases::{self, Phrase};

/// One argument of a phrase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Arg {
    /// Command words, paths, numbers: shown as they are in every wording.
    Text(String),
    /// Another phrase (a deletion's "how", the place it reaches): rendered in the same wording.
    Phrase(Message),
}

/// A phrase with its arguments: what a reason says, before it is put into words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub phrase: &'static Phrase,
    /// Placeholder name → value, in the order given.
    pub args: Vec<(&'static str, Arg)>,
}

impl Phrase {
    /// This phrase with `{name}` filled by `value`, shown as it is.
    pub fn with(&'static self, name: &'static str, value: impl fmt::Display) -> Message {
        Message::from(self).with(name, value)
    }

    /// This phrase with `{name}` filled by another phrase.
    pub fn with_phrase(&'static self, name: &'static str, value: impl Into<Message>) -> Message {
        Message::from(self).with_phrase(name, value)
    }

    /// The names of the placeholders of its English template, in order.
    pub fn placeholders(&self) -> Vec<&'static str> {
        placeholders(self.english).unwrap_or_default()
    }
}

impl From<&'static Phrase> for Message {
    fn from(phrase: &'static Phrase) -> Message {
        Message {
            phrase,
            args: Vec::new(),
        }
    }
}

impl Message {
    /// Fills `{name}` with `value`, shown as it is.
    pub fn with(mut self, name: &'static str, value: impl fmt::Display) -> Message {
        self.args.push((name, Arg::Text(value.to_string())));
        self
    }

    /// Fills `{name}` with another phrase.
    pub fn with_phrase(mut self, name: &'static str, value: impl Into<Message>) -> Message {
        self.args.push((name, Arg::Phrase(value.into())));
        self
    }

    /// The phrase's key.
    pub fn key(&self) -> &'static str {
        self.phrase.key
    }

    /// The message in English, the catalogue's own wording.
    pub fn english(&self) -> String {
        self.render(&Wording::default())
    }

    /// The message in `wording`; nested phrases too. A placeholder with no argument is left as
    /// written, so a mistake shows instead of vanishing.
    pub fn render(&self, wording: &Wording) -> String {
        let mut out = String::new();
        let mut rest = wording.template(self.phrase);
        while let Some(open) = rest.find('{') {
            out.push_str(&rest[..open]);
            let after = &rest[open + 1..];
            let Some(close) = after.find('}') else {
                out.push_str(&rest[open..]);
                return out;
            };
            let name = &after[..close];
            match self.args.iter().find(|(n, _)| *n == name) {
                Some((_, Arg::Text(text))) => out.push_str(text),
                Some((_, Arg::Phrase(inner))) => out.push_str(&inner.render(wording)),
                None => out.push_str(&rest[open..open + close + 2]),
            }
            rest = &after[close + 1..];
        }
        out.push_str(rest);
        out
    }
}

/// Key and arguments, so a client can word the message itself: `{"key": …, "args": {…}}`.
impl Serialize for Message {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        struct Args<'a>(&'a [(&'static str, Arg)]);
        impl Serialize for Args<'_> {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let mut map = serializer.serialize_map(Some(self.0.len()))?;
                for (name, arg) in self.0 {
                    match arg {
                        Arg::Text(text) => map.serialize_entry(name, text)?,
                        Arg::Phrase(inner) => map.serialize_entry(name, inner)?,
                    }
                }
                map.end()
            }
        }
        let mut s = serializer.serialize_struct("Message", 2)?;
        s.serialize_field("key", self.phrase.key)?;
        s.serialize_field("args", &Args(&self.args))?;
        s.end()
    }
}

/// Replacement templates for some phrases; the others keep their English. The default is all
/// English.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Wording {
    templates: BTreeMap<&'static str, String>,
}

/// Why a replacement template was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WordingError {
    /// No phrase has this key.
    UnknownKey(String),
    /// A `{` with no `}` after it.
    Unclosed { key: String },
    /// The template names a placeholder its phrase does not fill.
    UnknownPlaceholder {
        key: String,
        placeholder: String,
        allowed: Vec<&'static str>,
    },
}

impl fmt::Display for WordingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WordingError::UnknownKey(key) => write!(f, "`{key}` is not a phrase's key"),
            WordingError::Unclosed { key } => write!(f, "{key}: a `{{` is never closed by `}}`"),
            WordingError::UnknownPlaceholder {
                key,
                placeholder,
                allowed,
            } => {
                let known = if allowed.is_empty() {
                    "none".to_string()
                } else {
                    let braced: Vec<String> = allowed.iter().map(|a| format!("{{{a}}}")).collect();
                    braced.join(", ")
                };
                write!(
                    f,
                    "{key}: `{{{placeholder}}}` is not one of its placeholders ({known})"
                )
            }
        }
    }
}

impl std::error::Error for WordingError {}

impl Wording {
    /// The template `phrase` is rendered with: the replacement, or its English.
    pub fn template(&self, phrase: &'static Phrase) -> &str {
        self.templates
            .get(phrase.key)
            .map_or(phrase.english, String::as_str)
    }

    /// Replaces the template of the phrase called `key`, if `template` uses only its
    /// placeholders.
    pub fn set(&mut self, key: &str, template: &str) -> Result<(), WordingError> {
        let phrase = phrase_by_key(key).ok_or_else(|| WordingError::UnknownKey(key.into()))?;
        let used = placeholders(template).ok_or_else(|| WordingError::Unclosed {
            key: key.to_string(),
        })?;
        let allowed = phrase.placeholders();
        if let Some(bad) = used.iter().find(|u| !allowed.contains(u)) {
            return Err(WordingError::UnknownPlaceholder {
                key: key.to_string(),
                placeholder: bad.to_string(),
                allowed,
            });
        }
        self.templates.insert(phrase.key, template.to_string());
        Ok(())
    }

    /// A wording from `(key, template)` pairs, each checked as [`Wording::set`] does.
    pub fn from_templates<'a>(
        pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<Wording, WordingError> {
        let mut wording = Wording::default();
        for (key, template) in pairs {
            wording.set(key, template)?;
        }
        Ok(wording)
    }

    /// A level as prompts show it.
    pub fn level(&self, risk: crate::Risk) -> &str {
        self.template(match risk {
            crate::Risk::Safe => &phrases::LEVEL_SAFE,
            crate::Risk::Moderate => &phrases::LEVEL_MODERATE,
            crate::Risk::High => &phrases::LEVEL_HIGH,
            crate::Risk::Critical => &phrases::LEVEL_CRITICAL,
        })
    }
}

/// The phrase called `key`.
pub fn phrase_by_key(key: &str) -> Option<&'static Phrase> {
    phrases::ALL.iter().copied().find(|p| p.key == key)
}

/// The `{names}` in `template`, in order; `None` when a `{` is never closed.
fn placeholders(template: &str) -> Option<Vec<&str>> {
    let mut names = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        let close = after.find('}')?;
        names.push(&after[..close]);
        rest = &after[close + 1..];
    }
    Some(names)
}
