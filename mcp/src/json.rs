//! JSON-RPC messages as the gateway reads them: a JSON text with no key twice in one object (at
//! any depth). Readers differ on which of two equal keys counts, so what the dialog shows could
//! differ from what the server runs; such a message is refused, never forwarded. Control
//! characters are the protocol's business (`pcp_protocol::wire`), checked only on what goes to
//! the gate: file contents carry tabs and newlines.

use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// Parses `text`, refusing a key given twice in one object; the error names where.
pub fn parse_unique(text: &[u8]) -> Result<Value, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_slice(text);
    let value = Unique.deserialize(&mut de)?;
    de.end()?;
    Ok(value)
}

struct Unique;

impl<'de> DeserializeSeed<'de> for Unique {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, de: D) -> Result<Value, D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Unique {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
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

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
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
        while let Some(item) = seq.next_element_seed(Unique)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut members = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if members.contains_key(&key) {
                return Err(de::Error::custom(format_args!(
                    "the key `{}` appears twice in one object",
                    key.escape_debug()
                )));
            }
            let value = map.next_value_seed(Unique)?;
            members.insert(key, value);
        }
        Ok(Value::Object(members))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_twice_is_refused_at_any_depth_and_control_characters_pass() {
        assert!(parse_unique(br#"{"a":1,"a":2}"#).is_err());
        let e = parse_unique(br#"{"p":{"x":[{"k":1,"k":1}]}}"#).unwrap_err();
        assert!(e.to_string().contains("`k` appears twice"), "{e}");
        let v = parse_unique(b"{\"c\":\"a\\nb\\t\\u001b\"}").unwrap();
        assert_eq!(v["c"], "a\nb\t\u{1b}");
        assert!(parse_unique(b"{} x").is_err());
    }
}
