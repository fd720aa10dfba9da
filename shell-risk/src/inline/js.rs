//! JavaScript inline code (`node -e`, `node -p`, `deno eval`, `bun -e`), read with
//! tree-sitter-javascript: `require`, `import` and declarations give names their meaning
//! (`const {rmSync} = require('node:fs')`, `import * as cp from 'child_process'`), then every
//! call, reference and string is judged by the tables in [`js_names`]. `eval`, `Function`, `vm`,
//! `require` or `import()` of a computed name, and computed access to globals are unreadable.

mod js_names;

use std::collections::HashMap;

use tree_sitter::Node;

use super::{Effect, Lang, Why, path_like};
use js_names::{Meaning, canonical_module, meaning};

/// What a name stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Val {
    /// A module or function by its dotted name (`fs`, `fs.rmSync`, `child_process.exec`).
    Name(String),
    /// A string known now.
    Str(String),
}

/// The effects of JavaScript `code`.
pub(super) fn effects(code: &str, depth: usize) -> Vec<Effect> {
    let Some(tree) = super::parse(Lang::JavaScript, code) else {
        return vec![Effect::Unreadable(Why::Unparsable, String::new())];
    };
    let root = tree.root_node();
    let mut r = Reader {
        src: code,
        depth,
        nesting: std::cell::Cell::new(0),
        names: HashMap::new(),
        out: Vec::new(),
    };
    if root.has_error() {
        r.push(Effect::Unreadable(Why::Unparsable, String::new()));
    }
    r.walk(root, 0);
    r.out
}

struct Reader<'s> {
    src: &'s str,
    depth: usize,
    /// How deep `value` and `dotted` have recursed (an expression of thousands of terms must
    /// not exhaust the stack: past [`super::MAX_EXPRESSION_DEPTH`] a value is unknown).
    nesting: std::cell::Cell<usize>,
    names: HashMap<String, Val>,
    out: Vec<Effect>,
}

fn text<'s>(node: Node<'_>, src: &'s str) -> &'s str {
    src.get(node.byte_range()).unwrap_or("")
}

/// Globals that mean something without being imported.
const GLOBALS: &[&str] = &[
    "eval",
    "Function",
    "fetch",
    "XMLHttpRequest",
    "WebSocket",
    "EventSource",
    "process",
    "require",
    "module",
    "globalThis",
    "global",
    "Deno",
    "Bun",
    "setTimeout",
    "setInterval",
    "Reflect",
    "navigator",
    "Worker",
    "importScripts",
];

impl<'s> Reader<'s> {
    fn push(&mut self, e: Effect) {
        if !self.out.contains(&e) {
            self.out.push(e);
        }
    }

    fn walk(&mut self, node: Node<'_>, level: usize) {
        if level > 300 {
            self.push(Effect::Unreadable(Why::Nests, String::new()));
            return;
        }
        match node.kind() {
            "import_statement" => self.import(node),
            "variable_declarator" => {
                let (name, value) = (
                    node.child_by_field_name("name"),
                    node.child_by_field_name("value"),
                );
                if let (Some(n), Some(v)) = (name, value) {
                    self.bind_pattern(n, v);
                }
            }
            "assignment_expression" => {
                if let (Some(l), Some(r)) = (
                    node.child_by_field_name("left"),
                    node.child_by_field_name("right"),
                ) {
                    self.bind_pattern(l, r);
                }
            }
            "call_expression" | "new_expression" => self.call(node),
            "identifier" | "member_expression" => self.reference(node),
            "subscript_expression" => self.subscript(node),
            "string" | "template_string" => {
                if let Some(s) = self.string_value(node)
                    && path_like(&s)
                {
                    self.push(Effect::Read(s));
                }
            }
            _ => {}
        }
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        for child in children {
            self.walk(child, level + 1);
        }
    }

    /// `import x from 'm'`, `import * as x from 'm'`, `import {a as b} from 'm'`.
    fn import(&mut self, node: Node<'_>) {
        let Some(source) = node
            .child_by_field_name("source")
            .and_then(|s| self.string_value(s))
        else {
            return;
        };
        let module = canonical_module(&source);
        self.imported(&module);
        let mut cursor = node.walk();
        let clauses: Vec<Node<'_>> = node
            .named_children(&mut cursor)
            .filter(|c| c.kind() == "import_clause")
            .collect();
        for clause in clauses {
            let mut c2 = clause.walk();
            for part in clause.named_children(&mut c2) {
                match part.kind() {
                    "identifier" => self.bind(text(part, self.src), Val::Name(module.clone())),
                    "namespace_import" => {
                        if let Some(id) = part.named_child(0) {
                            self.bind(text(id, self.src), Val::Name(module.clone()));
                        }
                    }
                    "named_imports" => {
                        let mut c3 = part.walk();
                        for spec in part.named_children(&mut c3) {
                            let name = spec.child_by_field_name("name").map(|n| text(n, self.src));
                            let alias =
                                spec.child_by_field_name("alias").map(|n| text(n, self.src));
                            if let Some(n) = name {
                                let full = format!("{module}.{}", n.trim_matches(['"', '\'']));
                                self.bind(alias.unwrap_or(n), Val::Name(full));
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
    }

    /// What loading `module` says by itself.
    fn imported(&mut self, module: &str) {
        match meaning(module) {
            Meaning::Network => self.push(Effect::Network(module.to_string())),
            Meaning::Native | Meaning::Eval => {
                self.push(Effect::Unreadable(Why::Native, module.to_string()))
            }
            _ => {}
        }
    }

    fn bind(&mut self, name: &str, val: Val) {
        self.names.insert(name.to_string(), val);
    }

    /// `const x = …`, `const {a, b: c} = require('m')`, `x = …`.
    fn bind_pattern(&mut self, pattern: Node<'_>, value: Node<'_>) {
        match pattern.kind() {
            "identifier" => {
                let name = text(pattern, self.src).to_string();
                match self.value(value) {
                    Some(v) => self.bind(&name, v),
                    None => {
                        self.names.remove(&name);
                    }
                }
            }
            "object_pattern" => {
                let base = match self.value(value) {
                    Some(Val::Name(m)) => Some(m),
                    _ => None,
                };
                let mut cursor = pattern.walk();
                for prop in pattern.named_children(&mut cursor) {
                    let (key, local) = match prop.kind() {
                        "shorthand_property_identifier_pattern" => {
                            (text(prop, self.src), text(prop, self.src))
                        }
                        "pair_pattern" => match (
                            prop.child_by_field_name("key"),
                            prop.child_by_field_name("value"),
                        ) {
                            (Some(k), Some(v)) if v.kind() == "identifier" => {
                                (text(k, self.src), text(v, self.src))
                            }
                            _ => continue,
                        },
                        _ => continue,
                    };
                    match &base {
                        Some(m) => self.bind(local, Val::Name(format!("{m}.{key}"))),
                        None => {
                            self.names.remove(local);
                        }
                    }
                }
            }
            _ => {}
        }
    }

    /// The dotted name an expression refers to.
    fn dotted(&self, node: Node<'_>) -> Option<String> {
        let level = self.nesting.get();
        if level > super::MAX_EXPRESSION_DEPTH {
            return None;
        }
        self.nesting.set(level + 1);
        let found = self.dotted_of(node);
        self.nesting.set(level);
        found
    }

    fn dotted_of(&self, node: Node<'_>) -> Option<String> {
        match node.kind() {
            "identifier" => {
                let n = text(node, self.src);
                match self.names.get(n) {
                    Some(Val::Name(d)) => Some(d.clone()),
                    Some(Val::Str(_)) => None,
                    None => GLOBALS.contains(&n).then(|| n.to_string()),
                }
            }
            "member_expression" => {
                let object = node.child_by_field_name("object")?;
                let prop = text(node.child_by_field_name("property")?, self.src);
                Some(format!("{}.{prop}", self.dotted(object)?))
            }
            "subscript_expression" => {
                let object = self.dotted(node.child_by_field_name("object")?)?;
                match self.value(node.child_by_field_name("index")?) {
                    Some(Val::Str(k)) => Some(format!("{object}.{k}")),
                    _ => None,
                }
            }
            "call_expression" => {
                // `require('fs')`, `await import('fs')`.
                let f = node.child_by_field_name("function")?;
                let is_loader =
                    f.kind() == "import" || self.dotted(f).as_deref() == Some("require");
                if !is_loader {
                    return None;
                }
                Some(canonical_module(&self.first_str(node)?))
            }
            "await_expression" | "parenthesized_expression" => self.dotted(node.named_child(0)?),
            _ => None,
        }
    }

    fn value(&self, node: Node<'_>) -> Option<Val> {
        let level = self.nesting.get();
        if level > super::MAX_EXPRESSION_DEPTH {
            return None;
        }
        self.nesting.set(level + 1);
        let found = self.value_of(node);
        self.nesting.set(level);
        found
    }

    fn value_of(&self, node: Node<'_>) -> Option<Val> {
        match node.kind() {
            "string" | "template_string" => self.string_value(node).map(Val::Str),
            "binary_expression" => {
                let op = node.child_by_field_name("operator").map(|o| o.kind());
                let l = self.value(node.child_by_field_name("left")?)?;
                let r = self.value(node.child_by_field_name("right")?)?;
                match (op, l, r) {
                    (Some("+"), Val::Str(a), Val::Str(b)) => Some(Val::Str(a + &b)),
                    _ => None,
                }
            }
            "call_expression" => self.call_value(node),
            "identifier" => self
                .names
                .get(text(node, self.src))
                .cloned()
                .or_else(|| self.dotted(node).map(Val::Name)),
            "member_expression" | "subscript_expression" => {
                let d = self.dotted(node)?;
                match d.as_str() {
                    "process.env.HOME" | "Deno.env.HOME" => Some(Val::Str("~".into())),
                    _ => Some(Val::Name(d)),
                }
            }
            "await_expression" | "parenthesized_expression" => self.value(node.named_child(0)?),
            _ => None,
        }
    }

    fn string_value(&self, node: Node<'_>) -> Option<String> {
        let mut cursor = node.walk();
        let mut out = String::new();
        for c in node.named_children(&mut cursor) {
            match c.kind() {
                "string_fragment" => out.push_str(text(c, self.src)),
                "escape_sequence" => {
                    let t = text(c, self.src);
                    match t {
                        "\\n" => out.push('\n'),
                        "\\t" => out.push('\t'),
                        _ => out.push_str(t.get(1..).unwrap_or("")),
                    }
                }
                "template_substitution" => return None,
                _ => {}
            }
        }
        Some(out)
    }

    /// Calls whose result is a known string or module.
    fn call_value(&self, node: Node<'_>) -> Option<Val> {
        if let Some(module) = self.dotted(node) {
            return Some(Val::Name(module));
        }
        let f = self.dotted(node.child_by_field_name("function")?)?;
        let args = self.str_args(node);
        let all = || -> Option<Vec<String>> { args.iter().cloned().collect() };
        match f.as_str() {
            "path.join" | "path.resolve" | "path.posix.join" => Some(Val::Str(
                all()?.iter().fold(String::new(), |a, b| join(&a, b)),
            )),
            "os.homedir" => Some(Val::Str("~".into())),
            "process.cwd" | "Deno.cwd" => Some(Val::Str(".".into())),
            "path.normalize" | "String" => args.into_iter().next().flatten().map(Val::Str),
            _ => None,
        }
    }

    fn args<'t>(&self, call: Node<'t>) -> Vec<Node<'t>> {
        let Some(args) = call.child_by_field_name("arguments") else {
            return Vec::new();
        };
        let mut cursor = args.walk();
        args.named_children(&mut cursor)
            .filter(|a| a.kind() != "comment")
            .collect()
    }

    fn str_args(&self, call: Node<'_>) -> Vec<Option<String>> {
        self.args(call)
            .into_iter()
            .map(|a| match self.value(a) {
                Some(Val::Str(s)) => Some(s),
                _ => None,
            })
            .collect()
    }

    fn first_str(&self, call: Node<'_>) -> Option<String> {
        self.str_args(call).into_iter().next().flatten()
    }
}

mod calls;

/// Joins path pieces as `path.join` does (an absolute piece starts over, as `path.resolve`).
fn join(a: &str, b: &str) -> String {
    if a.is_empty() || b.starts_with('/') {
        b.to_string()
    } else if a.ends_with('/') {
        format!("{a}{b}")
    } else {
        format!("{a}/{b}")
    }
}

#[cfg(test)]
mod tests;
