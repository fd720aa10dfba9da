//! Judging JavaScript calls, references and `process.env` lookups (the reader's walk hands each
//! such node here).

use tree_sitter::Node;

use super::super::{Effect, Lang, Why, read};
use super::js_names::{Meaning, meaning};
use super::{Reader, Val, text};

impl Reader<'_> {
    pub(super) fn call(&mut self, node: Node<'_>) {
        let function = node
            .child_by_field_name("function")
            .or_else(|| node.child_by_field_name("constructor"));
        let Some(function) = function else {
            return;
        };
        if function.kind() == "import" {
            if self.first_str(node).is_none() {
                self.push(Effect::Unreadable(Why::DynamicImport, "import()".into()));
            } else if let Some(Val::Name(m)) = self.value(node) {
                self.imported(&m);
            }
            return;
        }
        let Some(full) = self.dotted(function) else {
            return;
        };
        if full == "require" {
            match self.first_str(node) {
                Some(_) => {
                    if let Some(m) = self.dotted(node) {
                        self.imported(&m);
                    }
                }
                None => self.push(Effect::Unreadable(Why::DynamicImport, full)),
            }
            return;
        }
        let path = |r: &Self, n: usize| r.str_args(node).into_iter().nth(n).flatten();
        match meaning(&full) {
            Meaning::Delete => {
                let p = path(self, 0);
                self.push(Effect::Delete(p));
            }
            Meaning::Empty => {
                let p = path(self, 0).map(|p| format!("{}/*", p.trim_end_matches('/')));
                self.push(Effect::Delete(p));
            }
            Meaning::Move => {
                let (from, to) = (path(self, 0), path(self, 1));
                self.push(Effect::Delete(from));
                self.push(Effect::Write(to));
            }
            Meaning::WriteFirst => {
                let p = path(self, 0);
                self.push(Effect::Write(p));
            }
            Meaning::WriteSecond => {
                if let Some(from) = path(self, 0) {
                    self.push(Effect::Read(from));
                }
                let to = path(self, 1);
                self.push(Effect::Write(to));
            }
            Meaning::WritesSecondOnly => {
                let to = path(self, 1);
                self.push(Effect::Write(to));
            }
            Meaning::Read => {
                if let Some(p) = path(self, 0) {
                    self.push(Effect::Read(p));
                }
            }
            Meaning::Open => {
                let flags = path(self, 1).unwrap_or_else(|| "r".into());
                let p = path(self, 0);
                let has_flags = self.args(node).len() > 1;
                if has_flags && (path(self, 1).is_none() || flags.contains(['w', 'a', '+'])) {
                    self.push(Effect::Write(p));
                } else if let Some(p) = p {
                    self.push(Effect::Read(p));
                }
            }
            Meaning::Shell => {
                let code = path(self, 0);
                self.push(Effect::Shell(code));
            }
            Meaning::Exec => self.exec(node),
            Meaning::Fork => match path(self, 0) {
                Some(module) => self.push(Effect::Exec(Some(vec!["node".into(), module]))),
                None => self.push(Effect::Exec(None)),
            },
            Meaning::Run => self.push(Effect::Exec(None)),
            Meaning::Eval => self.eval(node, &full),
            Meaning::Network => self.push(Effect::Network(full)),
            Meaning::Native => self.push(Effect::Unreadable(Why::Native, full)),
            Meaning::Reflection => self.push(Effect::Unreadable(Why::Reflection, full)),
            Meaning::Environment => self.push(Effect::AllVariables),
            Meaning::ChangesFolder => self.push(Effect::ChangesFolder),
            Meaning::Unknown => self.push(Effect::Unknown(full)),
            Meaning::Harmless => {}
        }
    }

    /// `spawn('rm', ['-rf', x])`, `execFileSync('git', ['status'])`, with `{shell: true}` a
    /// command line.
    fn exec(&mut self, call: Node<'_>) {
        let args = self.args(call);
        let program = args.first().and_then(|a| match self.value(*a) {
            Some(Val::Str(s)) => Some(s),
            _ => None,
        });
        let list = args.get(1).filter(|a| a.kind() == "array");
        let shell = args.iter().any(|a| {
            a.kind() == "object" && text(*a, self.src).replace(' ', "").contains("shell:true")
        });
        let rest: Option<Vec<String>> = match list {
            Some(array) => {
                let mut cursor = array.walk();
                array
                    .named_children(&mut cursor)
                    .map(|i| match self.value(i) {
                        Some(Val::Str(s)) => Some(s),
                        _ => None,
                    })
                    .collect()
            }
            None if args.get(1).is_some_and(|a| a.kind() != "object") => None,
            None => Some(Vec::new()),
        };
        match (program, rest) {
            (Some(p), Some(rest)) if shell => {
                let line = std::iter::once(p).chain(rest).collect::<Vec<_>>().join(" ");
                self.push(Effect::Shell(Some(line)));
            }
            (Some(p), Some(rest)) => {
                self.push(Effect::Exec(Some(std::iter::once(p).chain(rest).collect())));
            }
            _ => self.push(Effect::Exec(None)),
        }
    }

    /// `eval('…')`, `new Function('…')`, `setTimeout('…')`, `vm.runInThisContext('…')`: code
    /// given now is read in turn; a function handed to `setTimeout` is ordinary code.
    fn eval(&mut self, call: Node<'_>, full: &str) {
        let args = self.args(call);
        let code_arg = if full == "Function" {
            args.last()
        } else {
            args.first()
        };
        let timer = matches!(full, "setTimeout" | "setInterval");
        match code_arg {
            Some(a)
                if timer
                    && matches!(
                        a.kind(),
                        "arrow_function"
                            | "function_expression"
                            | "identifier"
                            | "member_expression"
                    ) => {}
            Some(a) => match self.value(*a) {
                Some(Val::Str(code)) if !full.contains("Worker") => {
                    for e in read(Lang::JavaScript, &code, self.depth + 1) {
                        self.push(e);
                    }
                }
                _ => self.push(Effect::Unreadable(Why::DynamicCode, full.to_string())),
            },
            None if timer || full == "Function" => {}
            None => self.push(Effect::Unreadable(Why::DynamicCode, full.to_string())),
        }
    }

    /// A name referred to without being called: a dangerous function handed on, the
    /// environment, a secret variable.
    pub(super) fn reference(&mut self, node: Node<'_>) {
        let parent = node.parent();
        let kind = parent.map(|p| p.kind()).unwrap_or("");
        let is_field =
            |field: &str| parent.and_then(|p| p.child_by_field_name(field)) == Some(node);
        let called = matches!(kind, "call_expression" | "new_expression")
            && (is_field("function") || is_field("constructor"));
        let chain =
            matches!(kind, "member_expression" | "subscript_expression") && is_field("object");
        let defined = matches!(
            kind,
            "variable_declarator"
                | "formal_parameters"
                | "function_declaration"
                | "import_specifier"
                | "namespace_import"
                | "import_clause"
                | "pair_pattern"
                | "shorthand_property_identifier_pattern"
                | "arrow_function"
                | "catch_clause"
        ) && !is_field("value")
            || (kind == "assignment_expression" && is_field("left"));
        let Some(full) = self.dotted(node) else {
            return;
        };
        if let Some(var) = full
            .strip_prefix("process.env.")
            .or_else(|| full.strip_prefix("Bun.env."))
            .or_else(|| full.strip_prefix("import.meta.env."))
        {
            if !chain || var.contains('.') {
                self.push(Effect::SecretVariable(
                    var.split('.').next().unwrap_or(var).to_string(),
                ));
            }
            return;
        }
        if called || chain || defined {
            return;
        }
        let e = match meaning(&full) {
            Meaning::Delete | Meaning::Empty | Meaning::Move => Effect::Delete(None),
            Meaning::WriteFirst
            | Meaning::WriteSecond
            | Meaning::WritesSecondOnly
            | Meaning::Open => Effect::Write(None),
            Meaning::Shell | Meaning::Exec | Meaning::Fork | Meaning::Run => Effect::Exec(None),
            Meaning::Eval | Meaning::Native | Meaning::Reflection => {
                Effect::Unreadable(Why::PassesFunction, full)
            }
            Meaning::Network => Effect::Network(full),
            Meaning::Environment => Effect::AllVariables,
            Meaning::Unknown => Effect::Unknown(full),
            Meaning::Read | Meaning::ChangesFolder | Meaning::Harmless => return,
        };
        self.push(e);
    }

    /// `obj[expr]`: a computed name on a module or global the gate reads is unreadable.
    pub(super) fn subscript(&mut self, node: Node<'_>) {
        let Some(object) = node.child_by_field_name("object") else {
            return;
        };
        let index_known = node
            .child_by_field_name("index")
            .is_some_and(|i| matches!(self.value(i), Some(Val::Str(_))));
        if index_known {
            self.reference(node);
            return;
        }
        if let Some(o) = self.dotted(object) {
            if o == "process.env" || o == "Bun.env" {
                self.push(Effect::AllVariables);
            } else if meaning(&o) != Meaning::Harmless
                || self.names.contains_key(&o)
                || is_module(&o)
            {
                self.push(Effect::Unreadable(Why::Reflection, format!("{o}[…]")));
            }
        }
    }
}

/// Whether `name` is a module the tables read (a computed name on it could be anything).
fn is_module(name: &str) -> bool {
    matches!(
        name,
        "fs" | "child_process"
            | "process"
            | "os"
            | "Deno"
            | "Bun"
            | "globalThis"
            | "global"
            | "require"
            | "module"
            | "vm"
    )
}
