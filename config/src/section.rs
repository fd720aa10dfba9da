//! One section of the config file as a type: its name, what serde cannot check about it, and how
//! each of its keys orders protection. From those the section's facts for the gate follow, and a
//! test that fails when a key has no order ([`unordered`]).

use pcp_gate::ProtectionFact;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// How the values of one key order protection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protection {
    /// A larger number is more protection (a longer guard).
    LargerRaises,
    /// A larger number is less protection (a longer listening window).
    LargerLowers,
    /// `true` is more protection (voice on).
    TrueRaises,
    /// `true` is less protection (a haptic double tap alone may confirm).
    TrueLowers,
    /// A list whose members each add protection (risks that need press-and-hold).
    MembersRaise,
    /// Any change lowers protection (a device, a model, a wording the user reads).
    AnyChangeLowers,
    /// Nothing to do with protection (a colour, a capture interval): a change applies at once.
    /// Never for what the user reads on the dialog or what decides which input counts.
    Unrelated,
}

/// A value the section's type accepted but the section refuses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid {
    /// The key, dotted below the section (`tap.max_tap_ms`).
    pub key: String,
    pub reason: String,
}

impl Invalid {
    pub fn new(key: impl Into<String>, reason: impl Into<String>) -> Invalid {
        Invalid {
            key: key.into(),
            reason: reason.into(),
        }
    }
}

/// Refuses a `{name}` in the text at `key` that is not one of `allowed` (see
/// [`pcp_template::check_placeholders`]).
pub fn check_placeholders(key: &str, template: &str, allowed: &[&str]) -> Result<(), Invalid> {
    pcp_template::check_placeholders(template, allowed).map_err(|reason| Invalid::new(key, reason))
}

/// A section of the config file: `[NAME]`, read into `Self` (unknown keys refused, absent ones
/// at their default).
pub trait Section: Serialize + DeserializeOwned + Default + Clone + PartialEq + 'static {
    /// The section's name in the file.
    const NAME: &'static str;
    /// How each key orders protection: its path dotted below the section, `*` standing for one
    /// segment (`cue.*`). The first pattern that matches a key orders it. Every key needs one
    /// (see [`unordered`]).
    const PROTECTION: &'static [(&'static str, Protection)];

    /// What serde cannot check: ranges, names, templates.
    fn validate(&self) -> Result<(), Invalid> {
        Ok(())
    }
}

/// A section whatever its type, for code that goes through all of a document's sections.
pub trait AnySection {
    fn name(&self) -> &'static str;
    fn check(&self) -> Result<(), Invalid>;
    /// One fact per key, for the gate to compare policies by.
    fn facts(&self) -> Vec<ProtectionFact>;
}

impl<S: Section> AnySection for S {
    fn name(&self) -> &'static str {
        S::NAME
    }

    fn check(&self) -> Result<(), Invalid> {
        self.validate()
    }

    fn facts(&self) -> Vec<ProtectionFact> {
        facts(self)
    }
}

/// The keys of `S` that no pattern of [`Section::PROTECTION`] orders, and the patterns that
/// order no key (left over from a key that is gone): both empty for a section whose every key
/// has been thought about.
pub fn unordered<S: Section>() -> (Vec<String>, Vec<&'static str>) {
    let keys = pcp_gate::fields::field_paths::<S>();
    let missing = keys
        .iter()
        .filter(|k| order_of::<S>(k).is_none())
        .cloned()
        .collect();
    let stale = S::PROTECTION
        .iter()
        .map(|(pattern, _)| *pattern)
        .filter(|p| !keys.iter().any(|k| matches(p, k)))
        .collect();
    (missing, stale)
}

fn order_of<S: Section>(key: &str) -> Option<Protection> {
    S::PROTECTION
        .iter()
        .find(|(pattern, _)| matches(pattern, key))
        .map(|(_, order)| *order)
}

fn matches(pattern: &str, key: &str) -> bool {
    let (mut p, mut k) = (pattern.split('.'), key.split('.'));
    loop {
        match (p.next(), k.next()) {
            (None, None) => return true,
            (Some(a), Some(b)) if a == "*" || a == b => {}
            _ => return false,
        }
    }
}

/// The facts of `section`: for each key, its value as the section takes effect (defaults filled
/// in, so writing out a default changes nothing), ranked by its order. A fact's name is the
/// key's full dotted name (`speech.enabled`). A key with no order, or a value its order cannot
/// rank, counts as lowering on any change.
pub fn facts<S: Section>(section: &S) -> Vec<ProtectionFact> {
    let table = match toml::Value::try_from(section) {
        Ok(toml::Value::Table(t)) => t,
        Ok(_) | Err(_) => {
            // Cannot happen for a struct; if it did, every key reads as unset, and a change to
            // an unset key lowers protection.
            tracing::error!("[{}] cannot be turned into facts", S::NAME);
            toml::Table::new()
        }
    };
    pcp_gate::fields::field_paths::<S>()
        .into_iter()
        .map(|key| {
            let name = format!("{}.{key}", S::NAME);
            let value = lookup(&table, &key);
            let text = value.map_or_else(|| "(not set)".to_string(), value_text);
            let order = order_of::<S>(&key).unwrap_or(Protection::AnyChangeLowers);
            if order == Protection::Unrelated {
                return ProtectionFact::unrelated(&name, &text);
            }
            // A value that cannot be ranked ranks lowest: any change to it lowers protection.
            let rank = value.and_then(|v| rank_of(v, order)).unwrap_or(i64::MIN);
            let rank = if order == Protection::AnyChangeLowers {
                0
            } else {
                rank
            };
            ProtectionFact::new(&name, &text, rank)
        })
        .collect()
}

fn lookup<'a>(table: &'a toml::Table, dotted: &str) -> Option<&'a toml::Value> {
    let mut parts = dotted.split('.');
    let mut value = table.get(parts.next()?)?;
    for part in parts {
        value = value.as_table()?.get(part)?;
    }
    Some(value)
}

fn value_text(value: &toml::Value) -> String {
    match value {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Numbers rank in thousandths, so that fractional millimetres and decibels order too.
fn rank_of(value: &toml::Value, order: Protection) -> Option<i64> {
    let number = match value {
        toml::Value::Integer(i) => Some(*i as f64),
        toml::Value::Float(f) => Some(*f),
        _ => None,
    };
    let milli = |n: f64| (n * 1000.0).round() as i64;
    match order {
        Protection::LargerRaises => number.map(milli),
        Protection::LargerLowers => number.map(|n| -milli(n)),
        Protection::TrueRaises => value.as_bool().map(i64::from),
        Protection::TrueLowers => value.as_bool().map(|b| i64::from(!b)),
        // Members added raise; the same count with other members is a change of equal rank,
        // which the gate counts as lowering.
        Protection::MembersRaise => value.as_array().map(|a| a.len() as i64),
        Protection::AnyChangeLowers | Protection::Unrelated => Some(0),
    }
}

/// Declares a group of sections as one struct, each field a [`Section`], and makes it a group
/// the document reads ([`pcp_gate::config::document::Sections`]) and goes through
/// ([`crate::SectionGroup`]). A host's own sections are such a struct:
///
/// ```ignore
/// pcp_config::sections! {
///     /// This compositor's sections.
///     pub struct MySections { compositor: MyCompositorSection, polkit: PolkitSection }
/// }
/// ```
#[macro_export]
macro_rules! sections {
    ($(#[$meta:meta])* $vis:vis struct $name:ident {
        $($(#[$fmeta:meta])* $field:ident : $ty:ty),* $(,)?
    }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Default, PartialEq)]
        $vis struct $name {
            $($(#[$fmeta])* pub $field: $ty),*
        }

        impl $crate::document::Sections for $name {
            fn names() -> Vec<&'static str> {
                vec![$(<$ty as $crate::Section>::NAME),*]
            }

            fn read<'de, A: $crate::serde::de::MapAccess<'de>>(
                &mut self,
                name: &str,
                map: &mut A,
            ) -> Result<(), A::Error> {
                $(if name == <$ty as $crate::Section>::NAME {
                    self.$field = map.next_value()?;
                    return Ok(());
                })*
                Err(<A::Error as $crate::serde::de::Error>::custom(
                    format!("unknown section `{name}`"),
                ))
            }
        }

        impl $crate::SectionGroup for $name {
            fn each(&self) -> Vec<&dyn $crate::AnySection> {
                vec![$(&self.$field),*]
            }

            fn unordered() -> Vec<String> {
                let mut out = Vec::new();
                $(
                    let (missing, stale) = $crate::section::unordered::<$ty>();
                    let name = <$ty as $crate::Section>::NAME;
                    out.extend(missing.into_iter().map(|k| format!("{name}.{k}: no order")));
                    out.extend(stale.into_iter().map(|p| format!("{name}.{p}: orders no key")));
                )*
                out
            }
        }
    };
}
