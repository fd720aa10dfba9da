//! One session's tool definitions, as the server listed them: each tool's definition hash
//! (SHA-256 of its whole listed object — name, description, input schema, annotations, …) and
//! the hash allowed in this session. The first complete listing is the session's baseline; a
//! later listing that changes a tool's hash makes its next call "changed", a tool that was not
//! in the baseline "appeared" until a call of it is allowed, and a tool the server does not list
//! (now) "unlisted". Bounded: at most `max_tools` tools are kept.

use std::collections::HashMap;

use serde_json::Value;
use sha2::{Digest, Sha256};

/// A tool as listed.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDef {
    pub name: String,
    /// SHA-256 (lowercase hex) of the tool object's canonical JSON.
    pub definition: String,
    /// The server's annotations (`readOnlyHint`, `destructiveHint`, …), if it gave any.
    pub annotations: Option<Value>,
}

impl ToolDef {
    /// The tool `object` of a `tools/list` result, or why it is not one.
    pub fn from_listed(object: &Value) -> Result<ToolDef, String> {
        let name = object
            .get("name")
            .and_then(Value::as_str)
            .ok_or("a listed tool has no name")?;
        let annotations = match object.get("annotations") {
            Some(a @ Value::Object(_)) => Some(a.clone()),
            _ => None,
        };
        Ok(ToolDef {
            name: name.to_string(),
            definition: definition_hash(object),
            annotations,
        })
    }
}

/// SHA-256 (lowercase hex) of `object`'s canonical JSON (keys sorted, no spaces): any change to
/// what the server lists for a tool changes it.
pub fn definition_hash(object: &Value) -> String {
    let digest = Sha256::digest(object.to_string().as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// How a call's tool stands against the session's listings (the intent's `listing`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listing {
    /// Listed, and its definition is the one allowed in this session.
    Listed,
    /// Listed with a definition other than the one allowed.
    Changed,
    /// Listed, not in the session's first listing, never allowed yet.
    Appeared,
    /// Not in the server's latest listing.
    Unlisted,
}

impl Listing {
    pub fn as_str(self) -> &'static str {
        match self {
            Listing::Listed => "listed",
            Listing::Changed => "changed",
            Listing::Appeared => "appeared",
            Listing::Unlisted => "unlisted",
        }
    }
}

#[derive(Debug, Clone)]
struct Entry {
    def: ToolDef,
    /// The hash allowed in this session: the baseline's, or the last one a call was allowed
    /// with; `None` for a tool that appeared later and was never allowed.
    allowed: Option<String>,
    /// In the server's latest complete listing.
    listed: bool,
}

/// The session's tools.
#[derive(Debug)]
pub struct Tools {
    entries: HashMap<String, Entry>,
    /// The first complete listing was seen.
    baseline: bool,
    /// Tools of a listing whose pages are still coming, and whether it started at the first page.
    pages: Option<(Vec<ToolDef>, bool)>,
    /// The server said its tools changed (`notifications/tools/list_changed`) since the last
    /// complete listing.
    stale: bool,
    max_tools: usize,
}

impl Tools {
    pub fn new(max_tools: usize) -> Tools {
        Tools {
            entries: HashMap::new(),
            baseline: false,
            pages: None,
            stale: false,
            max_tools,
        }
    }

    /// Takes one page of a `tools/list` result: `first` when the request had no cursor, `last`
    /// when the result has no `nextCursor`. Tools beyond `max_tools` are not kept (their calls
    /// are "unlisted": asked).
    pub fn page(&mut self, tools: Vec<ToolDef>, first: bool, last: bool) {
        if first || self.pages.is_none() {
            self.pages = Some((Vec::new(), first));
        }
        if let Some((acc, _)) = &mut self.pages {
            let room = self.max_tools.saturating_sub(acc.len());
            acc.extend(tools.into_iter().take(room));
        }
        if last && let Some((acc, complete)) = self.pages.take() {
            self.commit(acc, complete);
        }
    }

    fn commit(&mut self, listed: Vec<ToolDef>, complete: bool) {
        if complete {
            for e in self.entries.values_mut() {
                e.listed = false;
            }
            self.stale = false;
        }
        let baseline = !self.baseline && complete;
        for def in listed {
            match self.entries.get_mut(&def.name) {
                Some(e) => {
                    e.def = def;
                    e.listed = true;
                }
                None => {
                    let allowed = baseline.then(|| def.definition.clone());
                    let entry = Entry {
                        def,
                        allowed,
                        listed: true,
                    };
                    self.entries.insert(entry.def.name.clone(), entry);
                }
            }
        }
        if baseline {
            self.baseline = true;
        }
        if self.entries.len() > self.max_tools {
            self.entries.retain(|_, e| e.listed);
        }
    }

    /// Where tool `name` stands, and its definition when listed.
    pub fn listing(&self, name: &str) -> (Listing, Option<&ToolDef>) {
        match self.entries.get(name) {
            Some(e) if e.listed => {
                let listing = match &e.allowed {
                    None => Listing::Appeared,
                    Some(a) if *a != e.def.definition => Listing::Changed,
                    Some(_) => Listing::Listed,
                };
                (listing, Some(&e.def))
            }
            _ => (Listing::Unlisted, None),
        }
    }

    /// A call of `name` with `definition` was allowed: that definition is the session's now.
    pub fn allowed(&mut self, name: &str, definition: &str) {
        if let Some(e) = self.entries.get_mut(name)
            && e.def.definition == definition
        {
            e.allowed = Some(definition.to_string());
        }
    }

    /// The server said its tools changed.
    pub fn mark_stale(&mut self) {
        self.stale = true;
    }

    /// Whether the gateway must list the tools itself before deciding a call: nothing listed
    /// yet, or the server said they changed and nobody listed them since.
    pub fn needs_listing(&self) -> bool {
        !self.baseline || self.stale
    }

    /// How many tools are kept.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn def(name: &str, description: &str) -> ToolDef {
        ToolDef::from_listed(&json!({"name": name, "description": description})).unwrap()
    }

    #[test]
    fn the_first_listing_is_the_baseline_and_later_changes_show() {
        let mut t = Tools::new(100);
        assert!(t.needs_listing());
        t.page(vec![def("a", "x"), def("b", "y")], true, true);
        assert!(!t.needs_listing());
        assert_eq!(t.listing("a").0, Listing::Listed);
        assert_eq!(t.listing("zzz").0, Listing::Unlisted);
        t.mark_stale();
        assert!(t.needs_listing());
        t.page(vec![def("a", "x2"), def("c", "z")], true, true);
        assert_eq!(t.listing("a").0, Listing::Changed);
        assert_eq!(t.listing("b").0, Listing::Unlisted);
        assert_eq!(t.listing("c").0, Listing::Appeared);
        let new_a = t.listing("a").1.unwrap().definition.clone();
        t.allowed("a", &new_a);
        assert_eq!(t.listing("a").0, Listing::Listed);
        let c = t.listing("c").1.unwrap().definition.clone();
        t.allowed("c", &c);
        assert_eq!(t.listing("c").0, Listing::Listed);
    }

    #[test]
    fn pages_add_up_and_the_table_stays_bounded() {
        let mut t = Tools::new(3);
        t.page(vec![def("a", ""), def("b", "")], true, false);
        assert!(t.needs_listing());
        t.page(vec![def("c", ""), def("d", "")], false, true);
        assert_eq!(t.len(), 3);
        assert_eq!(t.listing("d").0, Listing::Unlisted);
        for round in 0..50 {
            let defs = (0..10).map(|i| def(&format!("t{round}-{i}"), "")).collect();
            t.page(defs, true, true);
            assert!(t.len() <= 3, "{}", t.len());
        }
    }

    #[test]
    fn any_change_to_the_listed_object_changes_the_hash() {
        let a = json!({"name": "a", "inputSchema": {"type": "object"}});
        let b = json!({"name": "a", "inputSchema": {"type": "object", "required": ["x"]}});
        assert_ne!(definition_hash(&a), definition_hash(&b));
        let reordered: Value =
            serde_json::from_str(r#"{"inputSchema":{"type":"object"},"name":"a"}"#).unwrap();
        assert_eq!(definition_hash(&a), definition_hash(&reordered));
    }
}
