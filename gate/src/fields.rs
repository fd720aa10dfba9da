//! Every key of a config type, by its dotted path, found through the type's own `Deserialize`
//! (the field names serde itself reads): for the tests that every key of a config section has a
//! protection order, so that a field added without one fails them. Values are read from the
//! type's default where it has one, so types that check their values read valid ones.

use std::cell::RefCell;

use serde::Serialize;
use serde::de::value::StrDeserializer;
use serde::de::{self, DeserializeOwned, DeserializeSeed, IntoDeserializer, Visitor};

/// The dotted path of every key `T` reads: a struct's fields, those of the structs inside it
/// (`tap.max_tap_ms`), and an `Option`'s inner type's. Lists, maps and enums are single keys.
/// Panics naming the path when the type cannot be walked (it reads itself in a way this does not
/// imitate).
pub fn field_paths<T: DeserializeOwned + Serialize + Default>() -> Vec<String> {
    let out = RefCell::new(Vec::new());
    let default = toml::Value::try_from(T::default()).ok();
    let lister = Lister {
        path: "",
        default: default.as_ref(),
        out: &out,
    };
    if let Err(ListError(e)) = T::deserialize(lister) {
        panic!("{} cannot be listed: {e}", std::any::type_name::<T>());
    }
    out.into_inner()
}

#[derive(Debug)]
struct ListError(String);

impl std::fmt::Display for ListError {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ListError {}

impl ListError {
    fn of(e: toml::de::Error) -> ListError {
        ListError(e.to_string())
    }
}

impl de::Error for ListError {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        ListError(msg.to_string())
    }
}

#[derive(Clone, Copy)]
struct Lister<'a> {
    path: &'a str,
    /// The value at this path in the type's default, if it writes one.
    default: Option<&'a toml::Value>,
    out: &'a RefCell<Vec<String>>,
}

impl Lister<'_> {
    fn leaf(&self) {
        self.out.borrow_mut().push(self.path.to_string());
    }
}

macro_rules! leaf {
    ($($method:ident => $visit:ident($($value:expr)?)),* $(,)?) => {
        $(fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ListError> {
            self.leaf();
            match self.default {
                Some(value) => value.clone().deserialize_any(visitor).map_err(ListError::of),
                None => visitor.$visit($($value)?),
            }
        })*
    };
}

impl<'de> de::Deserializer<'de> for Lister<'_> {
    type Error = ListError;

    leaf! {
        deserialize_bool => visit_bool(false),
        deserialize_i8 => visit_i8(1),
        deserialize_i16 => visit_i16(1),
        deserialize_i32 => visit_i32(1),
        deserialize_i64 => visit_i64(1),
        deserialize_u8 => visit_u8(1),
        deserialize_u16 => visit_u16(1),
        deserialize_u32 => visit_u32(1),
        deserialize_u64 => visit_u64(1),
        deserialize_f32 => visit_f32(1.0),
        deserialize_f64 => visit_f64(1.0),
        deserialize_char => visit_char('a'),
        deserialize_str => visit_str(""),
        deserialize_string => visit_str(""),
        deserialize_bytes => visit_bytes(&[]),
        deserialize_byte_buf => visit_bytes(&[]),
        deserialize_unit => visit_unit(),
        deserialize_any => visit_str(""),
        deserialize_ignored_any => visit_unit(),
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ListError> {
        visitor.visit_str("")
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ListError> {
        visitor.visit_some(self)
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value, ListError> {
        self.leaf();
        visitor.visit_unit()
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value, ListError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ListError> {
        self.leaf();
        if let Some(value) = self.default {
            return value
                .clone()
                .deserialize_any(visitor)
                .map_err(ListError::of);
        }
        visitor.visit_seq(
            de::value::SeqDeserializer::<std::iter::Empty<()>, ListError>::new(std::iter::empty()),
        )
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        _: usize,
        visitor: V,
    ) -> Result<V::Value, ListError> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: usize,
        visitor: V,
    ) -> Result<V::Value, ListError> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ListError> {
        self.leaf();
        if let Some(value) = self.default {
            return value
                .clone()
                .deserialize_any(visitor)
                .map_err(ListError::of);
        }
        visitor.visit_map(de::value::MapDeserializer::<
            std::iter::Empty<((), ())>,
            ListError,
        >::new(std::iter::empty()))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ListError> {
        visitor.visit_map(Fields {
            lister: self,
            fields,
            next: 0,
            path: String::new(),
        })
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ListError> {
        self.leaf();
        if let Some(value) = self.default {
            let read = value.clone().deserialize_enum(name, variants, visitor);
            return read.map_err(ListError::of);
        }
        let first = variants.first().copied().unwrap_or("");
        visitor.visit_enum(first.into_deserializer())
    }
}

/// A struct's fields, each read by a lister one level down.
struct Fields<'a> {
    lister: Lister<'a>,
    fields: &'static [&'static str],
    next: usize,
    path: String,
}

impl<'de> de::MapAccess<'de> for Fields<'_> {
    type Error = ListError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, ListError> {
        let Some(field) = self.fields.get(self.next) else {
            return Ok(None);
        };
        self.next += 1;
        self.path = if self.lister.path.is_empty() {
            field.to_string()
        } else {
            format!("{}.{field}", self.lister.path)
        };
        let name: StrDeserializer<'_, ListError> = field.into_deserializer();
        seed.deserialize(name).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, ListError> {
        let field = self.path.rsplit('.').next().unwrap_or_default();
        seed.deserialize(Lister {
            path: &self.path,
            default: self.lister.default.and_then(|d| d.get(field)),
            out: self.lister.out,
        })
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::*;

    #[derive(Deserialize, Serialize, Default)]
    #[allow(dead_code)]
    struct Inner {
        a: u32,
        b: Option<String>,
    }

    #[derive(Deserialize, Serialize, Default)]
    #[allow(dead_code)]
    #[serde(rename_all = "lowercase")]
    enum Level {
        #[default]
        Low,
        High,
    }

    #[derive(Deserialize, Serialize, Default)]
    #[allow(dead_code)]
    struct Outer {
        level: Level,
        inner: Inner,
        maybe: Option<Inner>,
        list: Vec<u8>,
        #[serde(rename = "renamed")]
        x: f64,
    }

    #[test]
    fn every_key_is_listed_by_the_name_serde_reads() {
        assert_eq!(
            field_paths::<Outer>(),
            [
                "level", "inner.a", "inner.b", "maybe.a", "maybe.b", "list", "renamed"
            ]
        );
    }
}
