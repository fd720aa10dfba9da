//! The strict reading of client JSON: [`parse_strict`] for the text a client sends, and
//! [`check_value`], the same rules for a value a client is about to send. A key given twice in
//! one object, a control character in a key, or one other than a line feed or a tab in a string
//! is refused, naming where (`params.a[2].b`).

use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::ParamsError;

/// Parses JSON text refusing what a client must never send: a key given twice in one object,
/// and a control character (Unicode category Cc: U+0000–U+001F, U+007F–U+009F, escaped or not)
/// in any key, or in any string value other than a line feed or a tab ([`value_control`]), at
/// any depth. `root` names the document in messages, which give the
/// path of the offending member (e.g. `params.a[2].b`) and serde_json's line and column.
pub fn parse_strict(text: &[u8], root: &str) -> Result<Value, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_slice(text);
    let value = Strict {
        path: &JsonPath::Root(root),
    }
    .deserialize(&mut de)?;
    de.end()?;
    Ok(value)
}

/// The first control character of `text`, if any.
pub(super) fn control_character(text: &str) -> Option<char> {
    text.chars().find(|c| c.is_control())
}

/// The first control character a string value may not hold: any but the line feed (U+000A) and
/// the tab (U+0009), which multi-line commands and patches need. Every other one (carriage
/// return, escape, NUL, C1 controls) is refused: none is needed to say what an action does, and
/// each could make what is shown or spoken differ from what is run.
pub fn value_control(text: &str) -> Option<char> {
    text.chars()
        .find(|&c| c.is_control() && c != '\n' && c != '\t')
}

/// Checks a value a client is about to send against the rules [`parse_strict`] holds the
/// compositor to, so that a client can refuse it with the same message before it costs the
/// connection: no control character in a key, none but a line feed or a tab in a string. `root`
/// names the value in the message (`params`, `steps`).
pub fn check_value(value: &Value, root: &str) -> Result<(), ParamsError> {
    check_at(value, &JsonPath::Root(root))
}

fn check_at(value: &Value, path: &JsonPath<'_>) -> Result<(), ParamsError> {
    match value {
        Value::String(s) => match value_control(s) {
            Some(c) => Err(ParamsError::InvalidJson(format!(
                "the string at {path} holds the control character U+{:04X}",
                c as u32
            ))),
            None => Ok(()),
        },
        Value::Array(items) => items
            .iter()
            .enumerate()
            .try_for_each(|(i, item)| check_at(item, &JsonPath::Index(path, i))),
        Value::Object(members) => members.iter().try_for_each(|(key, item)| {
            if let Some(c) = control_character(key) {
                return Err(ParamsError::InvalidJson(format!(
                    "a key in {path} holds the control character U+{:04X}",
                    c as u32
                )));
            }
            check_at(item, &JsonPath::Key(path, key))
        }),
        Value::Null | Value::Bool(_) | Value::Number(_) => Ok(()),
    }
}

/// Where a value sits in the document, as a chain of references to its parents: reading a
/// member costs nothing, and the text (e.g. `params.a[2].b`) is written only for an error.
enum JsonPath<'p> {
    Root(&'p str),
    Index(&'p JsonPath<'p>, usize),
    Key(&'p JsonPath<'p>, &'p str),
}

impl fmt::Display for JsonPath<'_> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            JsonPath::Root(root) => f.write_str(root),
            JsonPath::Index(parent, i) => write!(f, "{parent}[{i}]"),
            JsonPath::Key(parent, key) => write!(f, "{parent}.{key}"),
        }
    }
}

/// A JSON value at `path`, checked as it is built.
struct Strict<'p> {
    path: &'p JsonPath<'p>,
}

impl<'de> DeserializeSeed<'de> for Strict<'_> {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, de: D) -> Result<Value, D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Strict<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "a JSON value at {}", self.path)
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        if let Some(c) = value_control(v) {
            return Err(E::custom(format_args!(
                "the string at {} holds the control character U+{:04X}",
                self.path, c as u32
            )));
        }
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        if let Some(c) = value_control(&v) {
            return Err(E::custom(format_args!(
                "the string at {} holds the control character U+{:04X}",
                self.path, c as u32
            )));
        }
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        loop {
            let path = JsonPath::Index(self.path, items.len());
            match seq.next_element_seed(Strict { path: &path })? {
                Some(item) => items.push(item),
                None => return Ok(Value::Array(items)),
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut members = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if let Some(c) = control_character(&key) {
                return Err(de::Error::custom(format_args!(
                    "a key in {} holds the control character U+{:04X}",
                    self.path, c as u32
                )));
            }
            if members.contains_key(&key) {
                return Err(de::Error::custom(format_args!(
                    "the key `{key}` appears twice in {}",
                    self.path
                )));
            }
            let path = JsonPath::Key(self.path, &key);
            let value = map.next_value_seed(Strict { path: &path })?;
            members.insert(key, value);
        }
        Ok(Value::Object(members))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::wire::{parse_inline, read_fd, sealed_memfd};

    #[test]
    fn values_may_hold_line_feeds_and_tabs_and_nothing_else_below_space() {
        let heredoc = r#"{"command":"cat <<'EOF' > f\n\tindented\nEOF\n","deep":[{"x":"a\tb"}]}"#;
        let (p, _) = parse_inline(heredoc, None).unwrap();
        assert_eq!(p["command"], "cat <<'EOF' > f\n\tindented\nEOF\n");
        let (fd, size) = sealed_memfd(&p, &[]).unwrap();
        assert_eq!(read_fd(fd, size).unwrap().0, p);
        let steps = r#"[{"capability":"x","params":{"p":"two\nlines"}}]"#;
        assert!(parse_inline("{}", Some(steps)).is_ok());
        // Every other control character is refused, in values as in keys.
        for c in (0u32..0x20).chain(0x7f..0xa0) {
            let c = char::from_u32(c).unwrap();
            let value = json!({ "v": format!("a{c}b") });
            let sent = serde_json::to_string(&value).unwrap();
            let parsed = parse_inline(&sent, None);
            let checked = check_value(&value, "params");
            if c == '\n' || c == '\t' {
                assert!(parsed.is_ok() && checked.is_ok(), "U+{:04X}", c as u32);
            } else {
                let want = format!("U+{:04X}", c as u32);
                for e in [parsed.unwrap_err(), checked.unwrap_err()] {
                    assert!(e.to_string().contains(&want), "{want}: {e}");
                    assert!(e.to_string().contains("params.v"), "{e}");
                }
            }
        }
        let e = check_value(&json!({"a": [{"k\n": 1}]}), "params").unwrap_err();
        assert!(e.to_string().contains("a key in params.a[0]"), "{e}");
    }
}
