//! Python inline code, read with tree-sitter-python: imports and simple assignments give names
//! their meaning (`import shutil as s`, `from os import system`, `p = Path('~/x')`), then every
//! call, reference and string is judged by the tables in [`names`]. What the reader cannot follow (`eval` of text it does not have, `getattr` with a
//! computed name, `__import__` of a variable, dunder reflection) is unreadable.

use std::collections::HashMap;

use tree_sitter::Node;

use super::{Effect, Lang, Why};
use names::{IMPORTS, Meaning, NATIVE, NETWORK, meaning, prefixed};

/// What a name stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Val {
    /// A module or function, by its dotted name (`os`, `shutil.rmtree`).
    Name(String),
    /// A string known now.
    Str(String),
    /// A `pathlib` path known now.
    Path(String),
}

/// The effects of Python `code`.
pub(super) fn effects(code: &str, depth: usize) -> Vec<Effect> {
    let Some(tree) = super::parse(Lang::Python, code) else {
        return vec![Effect::Unreadable(Why::Unparsable, String::new())];
    };
    let root = tree.root_node();
    let mut r = Reader {
        src: code,
        depth,
        nesting: std::cell::Cell::new(0),
        names: HashMap::new(),
        stars: Vec::new(),
        out: Vec::new(),
    };
    if root.has_error() {
        r.out
            .push(Effect::Unreadable(Why::Unparsable, String::new()));
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
    /// Modules imported with `from M import *`.
    stars: Vec<String>,
    out: Vec<Effect>,
}

fn text<'s>(node: Node<'_>, src: &'s str) -> &'s str {
    src.get(node.byte_range()).unwrap_or("")
}

fn in_list(list: &[&str], name: &str) -> bool {
    list.contains(&name)
}

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
            "import_from_statement" => self.import_from(node),
            "assignment" => self.assignment(node),
            "for_statement" => self.for_binding(node),
            "list_comprehension"
            | "set_comprehension"
            | "dictionary_comprehension"
            | "generator_expression" => {
                // The loop variables come after the body in the text: bind them first.
                let mut cursor = node.walk();
                let clauses: Vec<Node<'_>> = node
                    .named_children(&mut cursor)
                    .filter(|c| c.kind() == "for_in_clause")
                    .collect();
                for clause in clauses {
                    self.for_binding(clause);
                }
            }
            "call" => self.call(node),
            "attribute" | "identifier" => self.reference(node),
            "string" => self.string(node),
            "subscript" => self.subscript(node),
            _ => {}
        }
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        for child in children {
            self.walk(child, level + 1);
        }
    }

    fn import(&mut self, node: Node<'_>) {
        let mut cursor = node.walk();
        for name in node.children_by_field_name("name", &mut cursor) {
            let (dotted, alias) = match name.kind() {
                "aliased_import" => (
                    name.child_by_field_name("name").map(|n| text(n, self.src)),
                    name.child_by_field_name("alias").map(|n| text(n, self.src)),
                ),
                _ => (Some(text(name, self.src)), None),
            };
            let Some(dotted) = dotted else { continue };
            self.imported(dotted);
            match alias {
                Some(a) => self.bind(a, Val::Name(dotted.to_string())),
                None => {
                    let first = dotted.split('.').next().unwrap_or(dotted);
                    self.bind(first, Val::Name(first.to_string()));
                }
            }
        }
    }

    fn import_from(&mut self, node: Node<'_>) {
        let Some(module) = node.child_by_field_name("module_name") else {
            return;
        };
        let module = text(module, self.src).to_string();
        let mut cursor = node.walk();
        let mut any = false;
        for name in node.children_by_field_name("name", &mut cursor) {
            any = true;
            let (n, alias) = match name.kind() {
                "aliased_import" => (
                    name.child_by_field_name("name").map(|n| text(n, self.src)),
                    name.child_by_field_name("alias").map(|n| text(n, self.src)),
                ),
                _ => (Some(text(name, self.src)), None),
            };
            let Some(n) = n else { continue };
            let full = format!("{module}.{n}");
            self.imported(&full);
            self.bind(alias.unwrap_or(n), Val::Name(full));
        }
        if !any {
            // `from M import *`.
            self.imported(&module);
            self.stars.push(module);
        }
    }

    /// What importing `dotted` says by itself: the network, native code.
    fn imported(&mut self, dotted: &str) {
        if let Some(m) = prefixed(NETWORK, dotted) {
            self.push(Effect::Network(m));
        } else if dotted == "urllib" {
            self.push(Effect::Network(dotted.to_string()));
        }
        if let Some(m) = prefixed(NATIVE, dotted) {
            self.push(Effect::Unreadable(Why::Native, m));
        }
    }

    fn bind(&mut self, name: &str, val: Val) {
        self.names.insert(name.to_string(), val);
    }

    fn assignment(&mut self, node: Node<'_>) {
        let (Some(left), Some(right)) = (
            node.child_by_field_name("left"),
            node.child_by_field_name("right"),
        ) else {
            return;
        };
        if left.kind() == "subscript" && self.is_environ(left.child_by_field_name("value")) {
            return;
        }
        if left.kind() != "identifier" {
            return;
        }
        let name = text(left, self.src).to_string();
        match self.value(right) {
            Some(v) => self.bind(&name, v),
            None => {
                self.names.remove(&name);
            }
        }
    }

    /// The dotted name an expression refers to, through imports and assignments.
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
                    Some(_) => None,
                    None => Some(self.star_name(n).unwrap_or_else(|| n.to_string())),
                }
            }
            "attribute" => {
                let object = node.child_by_field_name("object")?;
                let attr = text(node.child_by_field_name("attribute")?, self.src);
                Some(format!("{}.{attr}", self.dotted(object)?))
            }
            "call" => {
                // `__import__('os')`, `importlib.import_module('os')`.
                let f = self.dotted(node.child_by_field_name("function")?)?;
                if in_list(IMPORTS, &f) {
                    return self.first_str(node);
                }
                None
            }
            "parenthesized_expression" => self.dotted(node.named_child(0)?),
            _ => None,
        }
    }

    /// Whether the leftmost name of `node` was imported or assigned here (so a dotted name of it
    /// means something), or is a builtin with a meaning.
    fn rooted(&self, node: Node<'_>) -> bool {
        let mut n = node;
        while n.kind() == "attribute" {
            match n.child_by_field_name("object") {
                Some(o) => n = o,
                None => return false,
            }
        }
        if n.kind() != "identifier" {
            return false;
        }
        let name = text(n, self.src);
        self.names.contains_key(name)
            || self.star_name(name).is_some()
            || meaning(name) != Meaning::Harmless
    }

    /// `for X in glob.glob('build/*.o')`, `for X in Path('build').glob('*.o')`: `X` stands for
    /// the files the pattern finds.
    fn for_binding(&mut self, node: Node<'_>) {
        let (Some(left), Some(right)) = (
            node.child_by_field_name("left"),
            node.child_by_field_name("right"),
        ) else {
            return;
        };
        if left.kind() != "identifier" {
            return;
        }
        let name = text(left, self.src).to_string();
        let pattern = (|| {
            if right.kind() != "call" {
                return None;
            }
            let function = right.child_by_field_name("function")?;
            if let Some(f) = self.dotted(function)
                && matches!(f.as_str(), "glob.glob" | "glob.iglob")
            {
                return self.first_str(right);
            }
            let object = function.child_by_field_name("object")?;
            let method = text(function.child_by_field_name("attribute")?, self.src);
            match (self.value(object), method) {
                (Some(Val::Path(base)), "glob") => Some(join(&base, &self.first_str(right)?)),
                (Some(Val::Path(base)), "rglob") => {
                    Some(join(&join(&base, "**"), &self.first_str(right)?))
                }
                _ => None,
            }
        })();
        match pattern {
            Some(p) => self.bind(&name, Val::Str(p)),
            None => {
                self.names.remove(&name);
            }
        }
    }

    /// A bare name imported by `from M import *` with a meaning here: `M.name`.
    fn star_name(&self, name: &str) -> Option<String> {
        self.stars.iter().find_map(|m| {
            let full = format!("{m}.{name}");
            (meaning(&full) != Meaning::Harmless).then_some(full)
        })
    }

    /// The value of an expression when it is known now.
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
            "string" | "concatenated_string" => self.string_value(node).map(Val::Str),
            "binary_operator" => {
                let op = node.child_by_field_name("operator").map(|o| o.kind())?;
                let l = self.value(node.child_by_field_name("left")?)?;
                let r = self.value(node.child_by_field_name("right")?)?;
                match (op, l, r) {
                    ("+", Val::Str(a), Val::Str(b)) => Some(Val::Str(a + &b)),
                    ("/", Val::Path(a), Val::Str(b) | Val::Path(b)) => {
                        Some(Val::Path(join(&a, &b)))
                    }
                    _ => None,
                }
            }
            "call" => self.call_value(node),
            "subscript" => {
                // `os.environ['HOME']`.
                let key = self.subscript_key(node)?;
                (self.is_environ(node.child_by_field_name("value")) && key == "HOME")
                    .then(|| Val::Str("~".into()))
            }
            "identifier" => self.names.get(text(node, self.src)).cloned().or_else(|| {
                self.rooted(node)
                    .then(|| self.dotted(node).map(Val::Name))
                    .flatten()
            }),
            "attribute" if self.rooted(node) => self.dotted(node).map(Val::Name),
            "parenthesized_expression" => self.value(node.named_child(0)?),
            _ => None,
        }
    }

    fn string_value(&self, node: Node<'_>) -> Option<String> {
        if node.kind() == "concatenated_string" {
            let mut cursor = node.walk();
            let mut out = String::new();
            for s in node.named_children(&mut cursor) {
                out.push_str(&self.string_value(s)?);
            }
            return Some(out);
        }
        let mut cursor = node.walk();
        let mut out = String::new();
        let mut raw = false;
        for c in node.named_children(&mut cursor) {
            match c.kind() {
                "string_start" => raw = text(c, self.src).to_ascii_lowercase().contains('r'),
                "string_content" => {
                    let t = text(c, self.src);
                    out.push_str(&if raw { t.to_string() } else { unescape(t) });
                }
                "interpolation" => return None,
                _ => {}
            }
        }
        Some(out)
    }

    /// The value of a call whose result is known: paths and path functions, `__import__`.
    fn call_value(&self, node: Node<'_>) -> Option<Val> {
        let function = node.child_by_field_name("function")?;
        if function.kind() == "attribute"
            && let Some(object) = function.child_by_field_name("object")
            && let Some(Val::Path(p)) = self.value(object)
        {
            let method = text(function.child_by_field_name("attribute")?, self.src);
            return match method {
                "expanduser" | "resolve" | "absolute" => Some(Val::Path(p)),
                "joinpath" => Some(Val::Path(join(&p, &self.first_str(node)?))),
                _ => None,
            };
        }
        let f = self.dotted(function)?;
        let args = self.str_args(node);
        match f.as_str() {
            "pathlib.Path" | "pathlib.PurePath" | "pathlib.PosixPath" | "Path" => {
                let parts: Option<Vec<String>> = args.into_iter().collect();
                Some(Val::Path(
                    parts?.iter().fold(String::new(), |a, b| join(&a, b)),
                ))
            }
            "pathlib.Path.home" | "Path.home" => Some(Val::Path("~".into())),
            "pathlib.Path.cwd" | "Path.cwd" | "os.getcwd" => Some(Val::Path(".".into())),
            "os.path.join" => {
                let parts: Option<Vec<String>> = args.into_iter().collect();
                Some(Val::Str(
                    parts?.iter().fold(String::new(), |a, b| join(&a, b)),
                ))
            }
            "os.path.expanduser" | "os.path.abspath" | "os.path.realpath" | "os.path.normpath"
            | "os.path.expandvars" | "str" | "os.fspath" => {
                args.into_iter().next().flatten().map(Val::Str)
            }
            "os.getenv" | "os.environ.get" => (args.first().cloned().flatten().as_deref()
                == Some("HOME"))
            .then(|| Val::Str("~".into())),
            f if in_list(IMPORTS, f) => self.first_str(node).map(Val::Name),
            _ => None,
        }
    }

    /// Each positional argument's string value, in order (`None` where not known now).
    fn str_args(&self, call: Node<'_>) -> Vec<Option<String>> {
        let Some(args) = call.child_by_field_name("arguments") else {
            return Vec::new();
        };
        let mut cursor = args.walk();
        args.named_children(&mut cursor)
            .filter(|a| a.kind() != "keyword_argument" && a.kind() != "comment")
            .map(|a| match self.value(a) {
                Some(Val::Str(s) | Val::Path(s)) => Some(s),
                _ => None,
            })
            .collect()
    }

    fn first_str(&self, call: Node<'_>) -> Option<String> {
        self.str_args(call).into_iter().next().flatten()
    }

    /// A keyword argument's node.
    fn keyword<'t>(&self, call: Node<'t>, name: &str) -> Option<Node<'t>> {
        let args = call.child_by_field_name("arguments")?;
        let mut cursor = args.walk();
        let found = args
            .named_children(&mut cursor)
            .filter(|a| a.kind() == "keyword_argument")
            .find(|a| {
                a.child_by_field_name("name")
                    .is_some_and(|n| text(n, self.src) == name)
            });
        found.and_then(|a| a.child_by_field_name("value"))
    }

    /// The n-th positional argument's node.
    fn positional<'t>(&self, call: Node<'t>, n: usize) -> Option<Node<'t>> {
        let args = call.child_by_field_name("arguments")?;
        let mut cursor = args.walk();
        args.named_children(&mut cursor)
            .filter(|a| !matches!(a.kind(), "keyword_argument" | "comment"))
            .nth(n)
    }

    fn is_environ(&self, node: Option<Node<'_>>) -> bool {
        node.and_then(|n| self.dotted(n))
            .is_some_and(|d| d == "os.environ" || d == "os.environb")
    }

    fn subscript_key(&self, node: Node<'_>) -> Option<String> {
        let key = node.child_by_field_name("subscript")?;
        match self.value(key) {
            Some(Val::Str(s)) => Some(s),
            _ => None,
        }
    }
}

/// Joins path pieces as `os.path.join` does: an absolute piece starts over.
fn join(a: &str, b: &str) -> String {
    if a.is_empty() || b.starts_with('/') {
        b.to_string()
    } else if a.ends_with('/') {
        format!("{a}{b}")
    } else {
        format!("{a}/{b}")
    }
}

/// Undoes the common backslash escapes of a Python string.
fn unescape(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('\n') => {}
            Some(o @ ('\\' | '\'' | '"')) => out.push(o),
            Some(o) => {
                out.push('\\');
                out.push(o);
            }
            None => out.push('\\'),
        }
    }
    out
}

mod calls;
mod names;

#[cfg(test)]
mod tests;
