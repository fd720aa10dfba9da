//! The strict client JSON parser (`pcp_protocol::wire::parse_strict`) that inline params, steps
//! and memfd documents go through, against a lenient parse that keeps every member: the strict
//! parser accepts exactly the documents with no key twice in one object and no control character
//! in any key, nor in any string but a line feed or a tab, at any depth, and then gives the same
//! value; what it refuses for its own rules names the document; what it accepts writes back out
//! and parses to the same value. The check a client makes before sending
//! (`wire::check_value`) refuses exactly what the parser refuses for a control character.
//! An input is the document's bytes as a client would send them.

use pcp_protocol::wire::{check_value, parse_strict};
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// The name the document is given; the strict parser's own refusals must carry it.
const ROOT: &str = "fuzzdoc";

/// A JSON value as written, every member of an object kept in order (duplicates included).
#[derive(Debug)]
enum Raw {
    Null,
    Bool(bool),
    Number(Number),
    String(String),
    Array(Vec<Raw>),
    Object(Vec<(String, Raw)>),
}

impl<'de> Deserialize<'de> for Raw {
    fn deserialize<D: Deserializer<'de>>(de: D) -> Result<Raw, D::Error> {
        de.deserialize_any(RawVisitor)
    }
}

struct RawVisitor;

impl<'de> Visitor<'de> for RawVisitor {
    type Value = Raw;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Raw, E> {
        Ok(Raw::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Raw, E> {
        Ok(Raw::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Raw, E> {
        Ok(Raw::Number(v.into()))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Raw, E> {
        Ok(Number::from_f64(v).map_or(Raw::Null, Raw::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Raw, E> {
        Ok(Raw::String(v.to_owned()))
    }

    fn visit_unit<E>(self) -> Result<Raw, E> {
        Ok(Raw::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Raw, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Raw::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Raw, A::Error> {
        let mut members = Vec::new();
        while let Some((k, v)) = map.next_entry::<String, Raw>()? {
            members.push((k, v));
        }
        Ok(Raw::Object(members))
    }
}

impl Raw {
    /// Whether the strict rules hold everywhere: no key twice in an object, no control character
    /// in a key, none but a line feed or a tab in a string.
    fn is_strict(&self) -> bool {
        self.unique_keys() && self.clean()
    }

    fn unique_keys(&self) -> bool {
        match self {
            Raw::Null | Raw::Bool(_) | Raw::Number(_) | Raw::String(_) => true,
            Raw::Array(items) => items.iter().all(Raw::unique_keys),
            Raw::Object(members) => {
                let mut keys: Vec<&str> = members.iter().map(|(k, _)| k.as_str()).collect();
                keys.sort_unstable();
                keys.windows(2).all(|w| w[0] != w[1])
                    && members.iter().all(|(_, v)| v.unique_keys())
            }
        }
    }

    fn clean(&self) -> bool {
        let key = |s: &str| !s.chars().any(char::is_control);
        let value = |s: &str| !s.chars().any(|c| c.is_control() && c != '\n' && c != '\t');
        match self {
            Raw::Null | Raw::Bool(_) | Raw::Number(_) => true,
            Raw::String(s) => value(s),
            Raw::Array(items) => items.iter().all(Raw::clean),
            Raw::Object(members) => members.iter().all(|(k, v)| key(k) && v.clean()),
        }
    }

    fn clone_value(&self) -> Value {
        match self {
            Raw::Null => Value::Null,
            Raw::Bool(b) => Value::Bool(*b),
            Raw::Number(n) => Value::Number(n.clone()),
            Raw::String(s) => Value::String(s.clone()),
            Raw::Array(items) => Value::Array(items.iter().map(Raw::clone_value).collect()),
            Raw::Object(members) => Value::Object(
                members
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone_value()))
                    .collect::<Map<_, _>>(),
            ),
        }
    }

    fn into_value(self) -> Value {
        match self {
            Raw::Null => Value::Null,
            Raw::Bool(b) => Value::Bool(b),
            Raw::Number(n) => Value::Number(n),
            Raw::String(s) => Value::String(s),
            Raw::Array(items) => Value::Array(items.into_iter().map(Raw::into_value).collect()),
            Raw::Object(members) => Value::Object(
                members
                    .into_iter()
                    .map(|(k, v)| (k, v.into_value()))
                    .collect::<Map<_, _>>(),
            ),
        }
    }
}

/// Parses `text` leniently, keeping every member, to the end of the input.
fn lenient(text: &[u8]) -> Result<Raw, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_slice(text);
    let raw = Raw::deserialize(&mut de)?;
    de.end()?;
    Ok(raw)
}

pub fn check(data: &[u8]) {
    let strict = parse_strict(data, ROOT);
    let Ok(raw) = lenient(data) else {
        assert!(strict.is_err(), "accepted what is not JSON: {strict:?}");
        return;
    };
    if raw.unique_keys() {
        // Without duplicates the value is the same whoever reads it: the client's own check
        // agrees with the parser on control characters.
        let clean = raw.clean();
        let checked = check_value(&raw.clone_value(), ROOT);
        assert_eq!(checked.is_ok(), clean, "{checked:?}");
        if let Err(e) = checked {
            assert!(
                e.to_string().contains(ROOT),
                "the refusal does not say where: {e}"
            );
        }
    }
    if !raw.is_strict() {
        let e = strict.expect_err("accepted a duplicate key or a control character");
        let message = e.to_string();
        assert!(
            message.contains(ROOT),
            "the refusal does not say where: {message}"
        );
        return;
    }
    let value = strict.expect("refused JSON that keeps the strict rules");
    assert_eq!(value, raw.into_value());
    // What was accepted writes back out to text the strict parser accepts as the same value
    // (numbers aside: serde_json's float parsing may differ in the last digit on the way back).
    let text = serde_json::to_vec(&value).expect("a JSON value serialises");
    let again = parse_strict(&text, ROOT).expect("what was accepted, written out, is accepted");
    assert_eq!(shape(&again), shape(&value));
}

/// `v` with every number replaced by `null`.
fn shape(v: &Value) -> Value {
    match v {
        Value::Number(_) => Value::Null,
        Value::Array(items) => Value::Array(items.iter().map(shape).collect()),
        Value::Object(members) => {
            Value::Object(members.iter().map(|(k, v)| (k.clone(), shape(v))).collect())
        }
        other => other.clone(),
    }
}
