//! Judging Python calls, references, strings and `os.environ` lookups (the reader's walk hands
//! each such node here).

use tree_sitter::Node;

use super::super::{Effect, Lang, Why, path_like, read};
use super::names::{Meaning, PATH_DELETES, PATH_MOVES, PATH_READS, PATH_WRITES, SAVES, meaning};
use super::{Reader, Val, text};

impl Reader<'_> {
    pub(super) fn call(&mut self, node: Node<'_>) {
        let Some(function) = node.child_by_field_name("function") else {
            return;
        };
        if function.kind() == "attribute" && self.method(node, function) {
            return;
        }
        let Some(full) = self.dotted(function) else {
            return;
        };
        let path = |r: &Self, n: usize| r.path_arg(node, n);
        match meaning(&full) {
            Meaning::Delete => {
                let p = path(self, 0);
                self.push(Effect::Delete(p));
            }
            Meaning::Move => {
                let (from, to) = (path(self, 0), path(self, 1));
                self.push(Effect::Delete(from));
                self.push(Effect::Write(to));
            }
            Meaning::WriteFirst => {
                let p = path(self, 0);
                if p.as_deref() != Some(":memory:") {
                    self.push(Effect::Write(p));
                }
            }
            Meaning::WriteSecond => {
                if let Some(from) = path(self, 0) {
                    self.push(Effect::Read(from));
                }
                let to = path(self, 1);
                self.push(Effect::Write(to));
            }
            Meaning::Open => self.open(node, &full),
            Meaning::Shell => {
                let code = self.first_str(node);
                self.push(Effect::Shell(code));
            }
            Meaning::Exec => self.exec(node),
            Meaning::Run => self.push(Effect::Exec(None)),
            Meaning::Eval => match self.first_str(node) {
                Some(code) => {
                    for e in read(Lang::Python, &code, self.depth + 1) {
                        self.push(e);
                    }
                }
                // `compile(…)` handed to `exec` is judged where it is compiled.
                None if self.positional(node, 0).is_some_and(|a| {
                    a.kind() == "call"
                        && a.child_by_field_name("function")
                            .and_then(|f| self.dotted(f))
                            .is_some_and(|f| f == "compile")
                }) => {}
                None => self.push(Effect::Unreadable(Why::DynamicCode, full)),
            },
            Meaning::Import => match self.first_str(node) {
                Some(module) => self.imported(&module),
                None => self.push(Effect::Unreadable(Why::DynamicImport, full)),
            },
            Meaning::Load => self.push(Effect::Unreadable(Why::Deserializes, full)),
            Meaning::Reflection => self.push(Effect::Unreadable(Why::Reflection, full)),
            Meaning::GetAttr => self.getattr(node),
            Meaning::Network => self.push(Effect::Network(full)),
            Meaning::Native => self.push(Effect::Unreadable(Why::Native, full)),
            Meaning::Unknown => self.push(Effect::Unknown(full)),
            Meaning::Harmless => self.environ_call(node, &full),
        }
    }

    /// `X.m(…)` where `X` is a path (`Path('x').unlink()`), or a method whose name alone says it
    /// deletes or writes a file, or saves to a path given now. True when it was judged here.
    fn method(&mut self, call: Node<'_>, function: Node<'_>) -> bool {
        let (Some(object), Some(attr)) = (
            function.child_by_field_name("object"),
            function.child_by_field_name("attribute"),
        ) else {
            return false;
        };
        let method = text(attr, self.src);
        let receiver = match self.value(object) {
            Some(Val::Path(p)) => Some(Some(p)),
            // A module or function: judged by its dotted name.
            Some(Val::Name(_)) => return false,
            _ if self
                .dotted(object)
                .is_some_and(|d| meaning(&d) != Meaning::Harmless) =>
            {
                return false;
            }
            _ => None,
        };
        let known = receiver.is_some();
        let path = receiver.flatten();
        if PATH_DELETES.contains(&method) || method == "rmtree" {
            self.push(Effect::Delete(path));
        } else if PATH_WRITES.contains(&method) {
            self.push(Effect::Write(path));
        } else if known && PATH_MOVES.contains(&method) {
            let to = self.path_arg(call, 0);
            self.push(Effect::Delete(path));
            self.push(Effect::Write(to));
        } else if known && PATH_READS.contains(&method) {
            if let Some(p) = path {
                self.push(Effect::Read(p));
            }
        } else if known && method == "open" {
            let mode = self.mode(call, 0);
            self.push(if writes(mode.as_deref()) {
                Effect::Write(path)
            } else {
                match path {
                    Some(p) => Effect::Read(p),
                    None => return true,
                }
            });
        } else if SAVES.contains(&method) {
            for n in 0..3 {
                if let Some(p) = self
                    .path_arg(call, n)
                    .filter(|p| path_like(p) || p.contains('/'))
                {
                    self.push(Effect::Write(Some(p)));
                }
            }
            return false;
        } else {
            return false;
        }
        true
    }

    /// `open(path, mode)` and its kin: a write when the mode writes (or is not known now).
    fn open(&mut self, call: Node<'_>, full: &str) {
        let path = self.path_arg(call, 0);
        let writes_now = if full == "os.open" {
            let flags = self
                .positional(call, 1)
                .map(|f| text(f, self.src).to_string())
                .unwrap_or_default();
            ["O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND"]
                .iter()
                .any(|f| flags.contains(f))
        } else {
            writes(self.mode(call, 1).as_deref())
        };
        match (writes_now, path) {
            (true, p) => self.push(Effect::Write(p)),
            (false, Some(p)) => self.push(Effect::Read(p)),
            (false, None) => {}
        }
    }

    /// An `open` mode: the positional argument at `at`, or `mode=`; `r` when absent.
    fn mode(&self, call: Node<'_>, at: usize) -> Option<String> {
        let node = self
            .keyword(call, "mode")
            .or_else(|| self.positional(call, at));
        match node {
            None => Some("r".into()),
            Some(n) => match self.value(n) {
                Some(Val::Str(s)) => Some(s),
                _ => None,
            },
        }
    }

    /// `subprocess.run([...])`, `Popen("…", shell=True)`: the program and its arguments, or the
    /// command line.
    fn exec(&mut self, call: Node<'_>) {
        let shell = self
            .keyword(call, "shell")
            .is_some_and(|v| text(v, self.src) != "False");
        let Some(first) = self
            .positional(call, 0)
            .or_else(|| self.keyword(call, "args"))
        else {
            self.push(Effect::Exec(None));
            return;
        };
        if let Some(Val::Str(line)) = self.value(first) {
            self.push(Effect::Shell(Some(line)));
            return;
        }
        let argv = match first.kind() {
            "list" | "tuple" => {
                let mut cursor = first.walk();
                let items: Option<Vec<String>> = first
                    .named_children(&mut cursor)
                    .map(|i| match self.value(i) {
                        Some(Val::Str(s) | Val::Path(s)) => Some(s),
                        _ => None,
                    })
                    .collect();
                items
            }
            _ => None,
        };
        match argv {
            Some(argv) if shell => self.push(Effect::Shell(Some(argv.join(" ")))),
            argv => self.push(Effect::Exec(argv)),
        }
    }

    /// `getattr(obj, 'name')` is the reference `obj.name`; a computed name is unreadable.
    fn getattr(&mut self, call: Node<'_>) {
        let object = self.positional(call, 0).and_then(|o| self.dotted(o));
        let name = self.positional(call, 1).and_then(|n| match self.value(n) {
            Some(Val::Str(s)) => Some(s),
            _ => None,
        });
        match (object, name) {
            (Some(o), Some(n)) => {
                let full = format!("{o}.{n}");
                self.referenced(&full);
            }
            (_, Some(n)) if n.starts_with("__") => {
                self.push(Effect::Unreadable(Why::Reflection, n));
            }
            (_, Some(_)) => {}
            _ => self.push(Effect::Unreadable(Why::Reflection, "getattr".into())),
        }
    }

    /// A name referred to without being called: a dangerous function handed on, dunder
    /// reflection, the whole environment.
    pub(super) fn reference(&mut self, node: Node<'_>) {
        let parent = node.parent();
        let kind = parent.map(|p| p.kind()).unwrap_or("");
        let called =
            kind == "call" && parent.and_then(|p| p.child_by_field_name("function")) == Some(node);
        let part_of_chain = kind == "attribute"
            && parent.and_then(|p| p.child_by_field_name("object")) == Some(node);
        let defined = matches!(
            kind,
            "import_statement"
                | "import_from_statement"
                | "dotted_name"
                | "aliased_import"
                | "keyword_argument"
                | "parameters"
                | "function_definition"
                | "class_definition"
        ) || (kind == "assignment"
            && parent.and_then(|p| p.child_by_field_name("left")) == Some(node));
        let name = text(node, self.src);
        if node.kind() == "identifier" && name == "__builtins__" {
            self.push(Effect::Unreadable(Why::Reflection, name.to_string()));
        }
        if node.kind() == "attribute"
            && let Some(attr) = node.child_by_field_name("attribute")
        {
            let a = text(attr, self.src);
            if a.starts_with("__")
                && a.ends_with("__")
                && !matches!(a, "__name__" | "__doc__" | "__file__" | "__version__")
            {
                self.push(Effect::Unreadable(Why::Reflection, a.to_string()));
            }
        }
        if called || part_of_chain || defined {
            return;
        }
        let Some(full) = self.dotted(node) else {
            return;
        };
        if full == "os.environ" || full == "os.environb" {
            let subscripted = kind == "subscript";
            if !subscripted {
                self.push(Effect::AllVariables);
            }
            return;
        }
        self.referenced(&full);
    }

    /// `full` handed on instead of called: what calling it with unknown arguments would do.
    fn referenced(&mut self, full: &str) {
        let e = match meaning(full) {
            Meaning::Delete | Meaning::Move => Effect::Delete(None),
            Meaning::WriteFirst | Meaning::WriteSecond => Effect::Write(None),
            Meaning::Shell | Meaning::Exec | Meaning::Run => Effect::Exec(None),
            Meaning::Eval
            | Meaning::Import
            | Meaning::Load
            | Meaning::Reflection
            | Meaning::GetAttr => Effect::Unreadable(Why::PassesFunction, full.to_string()),
            Meaning::Network => Effect::Network(full.to_string()),
            Meaning::Native => Effect::Unreadable(Why::Native, full.to_string()),
            Meaning::Unknown => Effect::Unknown(full.to_string()),
            Meaning::Open | Meaning::Harmless => return,
        };
        self.push(e);
    }

    /// A string that names a path: a secret named anywhere in the code counts as read.
    pub(super) fn string(&mut self, node: Node<'_>) {
        if node
            .parent()
            .is_some_and(|p| p.kind() == "concatenated_string")
        {
            return;
        }
        if let Some(s) = self.string_value(node)
            && path_like(&s)
        {
            self.push(Effect::Read(s));
        }
    }

    /// `os.environ['NAME']`.
    pub(super) fn subscript(&mut self, node: Node<'_>) {
        if !self.is_environ(node.child_by_field_name("value")) {
            return;
        }
        match self.subscript_key(node) {
            Some(key) => self.push(Effect::SecretVariable(key)),
            None => self.push(Effect::AllVariables),
        }
    }

    /// `os.getenv('NAME')`, `os.environ.get('NAME')`: the variable it reads.
    fn environ_call(&mut self, call: Node<'_>, full: &str) {
        if matches!(
            full,
            "os.getenv" | "os.environ.get" | "os.getenvb" | "os.environb.get"
        ) {
            match self.first_str(call) {
                Some(name) => self.push(Effect::SecretVariable(name)),
                None => self.push(Effect::AllVariables),
            }
        } else if matches!(
            full,
            "os.environ.items" | "os.environ.copy" | "os.environ.values"
        ) {
            self.push(Effect::AllVariables);
        } else if full == "os.chdir" {
            self.push(Effect::ChangesFolder);
        }
    }

    /// The path argument at `n`, when known now.
    fn path_arg(&self, call: Node<'_>, n: usize) -> Option<String> {
        match self.value(self.positional(call, n)?) {
            Some(Val::Str(s) | Val::Path(s)) => Some(s),
            _ => None,
        }
    }
}

/// Whether an `open` mode writes; an unknown mode counts as writing.
fn writes(mode: Option<&str>) -> bool {
    mode.is_none_or(|m| m.contains(['w', 'a', 'x', '+']))
}
