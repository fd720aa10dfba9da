//! The config file as one typed document: the gate's sections and the sections of whoever
//! embeds the gate (the plugin's `[overlay]`, a host's `[compositor]`), read in one pass over
//! the text so that every error, in any section, names the file's line and column. A top-level
//! key no one declares is refused at that key. The gate knows no section but its own: the
//! embedder says which others exist ([`Sections`]).

use std::marker::PhantomData;
use std::path::Path;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, Visitor};

use super::ConfigFile;
use crate::error::ConfigError;

/// Sections of the config file that are not the gate's: their names and how each is read.
/// `()` is none; a pair is both of its members'.
pub trait Sections: Default {
    /// The top-level keys these sections are.
    fn names() -> Vec<&'static str>;
    /// Reads section `name`, one of [`Sections::names`], from the value `map` is at
    /// (`map.next_value()`, so errors inside carry their own place in the file).
    fn read<'de, A: MapAccess<'de>>(&mut self, name: &str, map: &mut A) -> Result<(), A::Error>;
}

impl Sections for () {
    fn names() -> Vec<&'static str> {
        Vec::new()
    }

    fn read<'de, A: MapAccess<'de>>(&mut self, name: &str, _: &mut A) -> Result<(), A::Error> {
        Err(de::Error::custom(format!("unknown section `{name}`")))
    }
}

impl<A: Sections, B: Sections> Sections for (A, B) {
    fn names() -> Vec<&'static str> {
        let mut names = A::names();
        names.extend(B::names());
        names
    }

    fn read<'de, M: MapAccess<'de>>(&mut self, name: &str, map: &mut M) -> Result<(), M::Error> {
        if A::names().contains(&name) {
            self.0.read(name, map)
        } else {
            self.1.read(name, map)
        }
    }
}

/// The gate's top-level keys, as [`ConfigFile`] names them.
pub const GATE_SECTIONS: [&str; 15] = [
    "gate",
    "safety",
    "timeouts",
    "friction",
    "queue",
    "tokens",
    "audit",
    "state",
    "session",
    "manifests",
    "policy_change",
    "shell_risk",
    "mcp",
    "capability",
    "rule",
];

impl ConfigFile {
    /// Reads the gate's section `name` (one of [`GATE_SECTIONS`]).
    fn read<'de, A: MapAccess<'de>>(&mut self, name: &str, map: &mut A) -> Result<(), A::Error> {
        match name {
            "gate" => self.gate = map.next_value()?,
            "safety" => self.safety = map.next_value()?,
            "timeouts" => self.timeouts = map.next_value()?,
            "friction" => self.friction = map.next_value()?,
            "queue" => self.queue = map.next_value()?,
            "tokens" => self.tokens = map.next_value()?,
            "audit" => self.audit = map.next_value()?,
            "state" => self.state = map.next_value()?,
            "session" => self.session = map.next_value()?,
            "manifests" => self.manifests = map.next_value()?,
            "policy_change" => self.policy_change = map.next_value()?,
            "shell_risk" => self.shell_risk = map.next_value()?,
            "mcp" => self.mcp = map.next_value()?,
            "capability" => self.capabilities = map.next_value()?,
            "rule" => self.rules = map.next_value()?,
            other => return Err(de::Error::custom(format!("unknown section `{other}`"))),
        }
        Ok(())
    }
}

/// A whole config file: the gate's sections and `S`, each left at its default when absent.
#[derive(Debug, Default)]
pub struct Document<S> {
    pub gate: ConfigFile,
    pub sections: S,
}

/// Parses `text` (of `path`, for messages) as one document of the gate's sections and `S`.
pub fn parse<S: Sections>(path: &Path, text: &str) -> Result<Document<S>, ConfigError> {
    toml::from_str(text).map_err(|e| ConfigError::from_toml(path, text, &e))
}

impl<'de, S: Sections> Deserialize<'de> for Document<S> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(DocumentVisitor(PhantomData))
    }
}

struct DocumentVisitor<S>(PhantomData<S>);

impl<'de, S: Sections> Visitor<'de> for DocumentVisitor<S> {
    type Value = Document<S>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a table of config sections")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Document<S>, A::Error> {
        let mut known: Vec<&'static str> = GATE_SECTIONS.to_vec();
        known.extend(S::names());
        let mut document = Document::<S>::default();
        while let Some(name) = map.next_key_seed(SectionName { known: &known })? {
            if GATE_SECTIONS.contains(&name.as_str()) {
                document.gate.read(&name, &mut map)?;
            } else {
                document.sections.read(&name, &mut map)?;
            }
        }
        Ok(document)
    }
}

/// A top-level key, refused (at the key) unless some section is called that.
struct SectionName<'a> {
    known: &'a [&'static str],
}

impl<'de> DeserializeSeed<'de> for SectionName<'_> {
    type Value = String;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<String, D::Error> {
        let name = String::deserialize(deserializer)?;
        if self.known.contains(&name.as_str()) {
            return Ok(name);
        }
        let expected: Vec<String> = self.known.iter().map(|k| format!("`{k}`")).collect();
        Err(de::Error::custom(format!(
            "unknown section `{name}`, expected one of {}",
            expected.join(", ")
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gate_reads_every_section_its_file_type_has() {
        let fields = crate::fields::field_paths::<ConfigFile>();
        let mut top: Vec<&str> = fields
            .iter()
            .map(|f| f.split('.').next().unwrap())
            .collect();
        top.dedup();
        let mut listed = GATE_SECTIONS.to_vec();
        listed.sort();
        top.sort();
        top.dedup();
        assert_eq!(top, listed);
    }

    #[test]
    fn every_key_of_the_gates_sections_has_a_protection_order() {
        // Capabilities and deny rules are compared as declarations, not as keys.
        let rules = crate::policy::gate_rules();
        let unordered: Vec<String> = crate::fields::field_paths::<ConfigFile>()
            .into_iter()
            .filter(|k| k != "capability" && k != "rule")
            .filter(|k| !rules.iter().any(|r| r.matches(k)))
            .collect();
        assert!(
            unordered.is_empty(),
            "keys with no order in policy::gate_rules (a change to them would count as \
             lowering without saying why): {unordered:?}"
        );
    }

    #[test]
    fn an_undeclared_section_is_refused_at_its_header() {
        let text = "[timeouts]\nvoice_seconds = 5\n\n[overlya]\nx = 1\n";
        let e = parse::<()>(Path::new("c.toml"), text)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("c.toml:4:"), "{e}");
        assert!(e.contains("unknown section `overlya`"), "{e}");
        let doc = parse::<()>(Path::new("c.toml"), "[timeouts]\nvoice_seconds = 5\n").unwrap();
        assert_eq!(doc.gate.timeouts.voice_seconds, 5);
    }

    #[test]
    fn an_error_inside_a_section_names_its_own_line() {
        let text = "[queue]\nmax_pending = 2\nper_clinet = 1\n";
        let e = parse::<()>(Path::new("c.toml"), text)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("c.toml:3:"), "{e}");
        assert!(e.contains("per_clinet"), "{e}");
    }
}
