//! Walking a parsed command: every simple command in lists, pipelines, subshells, command and
//! process substitutions, function bodies and here-documents is handed to the rules; redirections
//! are judged by where they write; `cd` moves the folder later relative paths resolve against;
//! `bash -c`, `eval` and wrapper commands are followed, up to [`MAX_NESTING`] deep.

use std::borrow::Cow;
use std::cell::RefCell;
use std::path::PathBuf;

use tree_sitter::{Node, Parser, Tree};

use crate::message::Message;
use crate::phrases as say;
use crate::rules::{self, Inner, Stdin, Verdict};
use crate::words::{Expander, Word, text};
use crate::{Assessment, Context, MAX_COMMAND_BYTES, MAX_NESTING, Reason, Risk};

thread_local! {
    // A parser per thread: making one and loading the grammar costs more than parsing a command.
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

pub(crate) fn parse(command: &str) -> Option<Tree> {
    PARSER.with(|cell| {
        let mut slot = cell.try_borrow_mut().ok()?;
        if slot.is_none() {
            let mut parser = Parser::new();
            parser
                .set_language(&tree_sitter_bash::LANGUAGE.into())
                .ok()?;
            *slot = Some(parser);
        }
        slot.as_mut()?.parse(command, None)
    })
}

/// The text handed to the parser: `command` ended by a newline, which is how a shell reads it.
/// tree-sitter-bash 0.25 takes 10–30 times longer on a pipeline of three or more stages that
/// runs into the end of the input (about 150 µs for `a | b | c`) than on the same text ended
/// by a newline (about 7 µs), and the trees are the same. Left as it is: a command already
/// ending in a newline; one ending in an unescaped backslash, which a newline would turn into a
/// line continuation (the shell keeps a final backslash as a character); and one too long to be
/// parsed at all.
pub(crate) fn terminated(command: &str) -> Cow<'_, str> {
    let backslashes = command.len() - command.trim_end_matches('\\').len();
    if command.ends_with('\n') || backslashes % 2 == 1 || command.len() >= MAX_COMMAND_BYTES {
        Cow::Borrowed(command)
    } else {
        Cow::Owned(format!("{command}\n"))
    }
}

/// Longest command text a reason quotes.
const QUOTE_CHARS: usize = 120;

pub(crate) fn classify(command: &str, ctx: &Context, depth: usize) -> Assessment {
    let source = terminated(command);
    let mut w = Walker::new(&source, ctx, Some(ctx.cwd.clone()), depth);
    w.run();
    w.finish()
}

/// [`classify`] with the shell started in `start` rather than in the working folder.
pub(crate) fn classify_from(command: &str, ctx: &Context, start: &std::path::Path) -> Assessment {
    let source = terminated(command);
    let folder = crate::paths::resolve(&ctx.cwd, &start.to_string_lossy());
    let mut w = Walker::new(&source, ctx, Some(folder), 0);
    w.run();
    w.finish()
}

/// Where a pipeline stage's output or input goes, for `curl … | sh`.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct StageInfo {
    pub downloads: bool,
    pub runs_stdin: bool,
}

struct Walker<'s> {
    src: &'s str,
    ctx: &'s Context,
    cwd: Option<PathBuf>,
    depth: usize,
    reasons: Vec<Reason>,
    /// How many download commands were seen so far (a word whose substitutions raise it was
    /// made by a download).
    downloads: usize,
    /// What the previous stage of a pipeline prints, when it is known now (`echo CODE |
    /// python3`): the next command's standard input.
    piped: Option<String>,
    /// What the last simple command prints, when it is known now.
    output: Option<String>,
}

impl<'s> Walker<'s> {
    fn new(src: &'s str, ctx: &'s Context, cwd: Option<PathBuf>, depth: usize) -> Walker<'s> {
        Walker {
            src,
            ctx,
            cwd,
            depth,
            reasons: Vec::new(),
            downloads: 0,
            piped: None,
            output: None,
        }
    }

    fn run(&mut self) {
        if self.src.len() > MAX_COMMAND_BYTES {
            let why = say::TOO_LONG.with("limit", MAX_COMMAND_BYTES);
            self.push(Risk::High, self.src, why);
            return;
        }
        let Some(tree) = parse(self.src) else {
            self.push(Risk::High, self.src, &say::UNPARSABLE);
            return;
        };
        let root = tree.root_node();
        if root.has_error() {
            let why = match first_error(root) {
                Some(n) => {
                    let p = n.start_position();
                    let at = say::INVALID_SYNTAX_POSITION
                        .with("line", p.row + 1)
                        .with("column", p.column + 1);
                    say::INVALID_SYNTAX.with_phrase("position", at)
                }
                None => say::INVALID_SYNTAX.with("position", ""),
            };
            self.push(Risk::High, self.src, why);
        }
        self.walk(root, 0);
    }

    fn finish(mut self) -> Assessment {
        self.reasons.sort_by_key(|r| std::cmp::Reverse(r.risk));
        let risk = self.reasons.first().map_or(Risk::Safe, |r| r.risk);
        Assessment {
            risk,
            reasons: self.reasons,
        }
    }

    fn push(&mut self, risk: Risk, command: &str, why: impl Into<Message>) {
        let reason = Reason::new(risk, quote(command), why.into());
        // Alike when they read alike in English, whichever phrases they were made of.
        if self
            .reasons
            .iter()
            .any(|r| r.risk == risk && r.why == reason.why && r.command == reason.command)
        {
            return;
        }
        self.reasons.push(reason);
    }

    /// Tree depth guard: tree-sitter nests deeply on inputs like `((((…`; recursion stops here.
    fn too_deep(&mut self, node: Node<'_>, level: usize) -> bool {
        if level > 400 {
            let why = &say::NESTS_TOO_DEEPLY;
            self.push(Risk::High, text(node, self.src), why);
            return true;
        }
        false
    }

    fn walk(&mut self, node: Node<'_>, level: usize) {
        if self.too_deep(node, level) {
            return;
        }
        match node.kind() {
            "comment" => {}
            "command" => {
                self.command(node, &[], level);
            }
            "redirected_statement" => {
                self.redirected(node, level);
            }
            "pipeline" => self.pipeline(node, level),
            "subshell" | "command_substitution" | "process_substitution" => {
                let saved = self.cwd.clone();
                self.walk_children(node, level);
                self.cwd = saved;
            }
            "function_definition" => {
                self.function(node);
                self.walk_children(node, level);
            }
            "variable_assignment" => self.assignment(node, level),
            "declaration_command" | "unset_command" => {
                let (risk, why) = if crate::stages::prints_every_variable(node, self.src) {
                    (Risk::High, &say::PRINTS_ALL_VARIABLES)
                } else {
                    (Risk::Moderate, &say::CHANGES_SHELL_VARIABLES)
                };
                self.push(risk, text(node, self.src), why);
                self.walk_children(node, level);
            }
            "file_redirect" | "heredoc_redirect" | "herestring_redirect" => {
                self.redirect(node, level);
            }
            "ERROR" => {
                self.walk_children(node, level);
            }
            _ => self.walk_children(node, level),
        }
    }

    fn walk_children(&mut self, node: Node<'_>, level: usize) {
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        for child in children {
            self.walk(child, level + 1);
        }
    }

    fn redirected(&mut self, node: Node<'_>, level: usize) -> StageInfo {
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        let body = node.child_by_field_name("body");
        let redirects: Vec<Node<'_>> = children
            .iter()
            .copied()
            .filter(|c| Some(*c) != body)
            .collect();
        match body {
            Some(b) if b.kind() == "command" => self.command(b, &redirects, level + 1),
            // `cd dir && apply_patch <<'EOF'`: the redirections belong to the last command.
            Some(b) if b.kind() == "list" && last_command(b).is_some() => {
                let mut c = b.walk();
                let parts: Vec<Node<'_>> = b.named_children(&mut c).collect();
                let Some((last, rest)) = parts.split_last() else {
                    return StageInfo::default();
                };
                for part in rest {
                    self.walk(*part, level + 1);
                }
                self.command(*last, &redirects, level + 1)
            }
            Some(b) => {
                self.walk(b, level + 1);
                for r in redirects {
                    self.walk(r, level + 1);
                }
                StageInfo::default()
            }
            None => {
                for r in redirects {
                    self.walk(r, level + 1);
                }
                StageInfo::default()
            }
        }
    }

    fn pipeline(&mut self, node: Node<'_>, level: usize) {
        let mut cursor = node.walk();
        let stages: Vec<Node<'_>> = node
            .named_children(&mut cursor)
            .filter(|c| c.kind() != "comment")
            .collect();
        let mut downloaded = false;
        let mut previous_output: Option<String> = None;
        for stage in stages {
            self.piped = previous_output.take();
            self.output = None;
            let info = match stage.kind() {
                "command" => self.command(stage, &[], level + 1),
                "redirected_statement" => self.redirected(stage, level + 1),
                _ => {
                    let before = self.downloads;
                    self.walk(stage, level + 1);
                    StageInfo {
                        downloads: self.downloads > before,
                        runs_stdin: false,
                    }
                }
            };
            previous_output = self.output.take();
            self.piped = None;
            if info.runs_stdin {
                let whole = text(node, self.src);
                if downloaded {
                    self.push(Risk::Critical, whole, &say::PIPES_DOWNLOAD_INTO_INTERPRETER);
                } else {
                    self.push(Risk::High, whole, &say::RUNS_CODE_FROM_PIPE);
                }
            }
            downloaded |= info.downloads;
        }
    }

    /// Walks the command and process substitutions inside an argument, then makes its word:
    /// `Fetched` when a substitution inside it downloads.
    fn argument(&mut self, node: Node<'_>, level: usize) -> Word {
        let before = self.downloads;
        self.walk(node, level + 1);
        let word = self.expander().word(node);
        match word {
            Word::Dyn(t) if self.downloads > before => Word::Fetched(t),
            w => w,
        }
    }

    fn expander(&self) -> Expander<'_> {
        Expander {
            src: self.src,
            ctx: self.ctx,
            cwd: self.cwd.as_deref(),
        }
    }

    fn command(&mut self, node: Node<'_>, outer: &[Node<'_>], level: usize) -> StageInfo {
        let piped = self.piped.take();
        let mut words = Vec::new();
        let mut redirects: Vec<Node<'_>> = outer.to_vec();
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        for child in children {
            match child.kind() {
                "variable_assignment" => self.assignment(child, level + 1),
                "file_redirect" | "heredoc_redirect" | "herestring_redirect" => {
                    redirects.push(child)
                }
                "comment" => {}
                "command_name" => {
                    let inner = child.named_child(0).unwrap_or(child);
                    words.push(self.argument(inner, level));
                }
                _ => words.push(self.argument(child, level)),
            }
        }
        let mut stdin = Stdin::Inherit;
        for r in &redirects {
            if let Some(s) = self.redirect(*r, level) {
                stdin = s;
            }
        }
        if let (Stdin::Inherit, Some(text)) = (&stdin, piped) {
            stdin = Stdin::Text(text);
        }
        if words.is_empty() {
            return StageInfo::default();
        }
        let display = text(node, self.src);
        let info = self.simple(&words, &stdin, display, self.depth);
        self.output = crate::stages::known_output(&words, &stdin);
        info
    }

    /// Judges one simple command's words and follows what it runs inside it.
    fn simple(&mut self, words: &[Word], stdin: &Stdin, display: &str, depth: usize) -> StageInfo {
        if depth > MAX_NESTING {
            self.push(Risk::High, display, &say::NESTS_COMMANDS_TOO_DEEPLY);
            return StageInfo::default();
        }
        let verdict: Verdict = rules::assess(words, stdin, &self.expander());
        for (risk, why) in &verdict.findings {
            self.push(*risk, display, why.clone());
        }
        if verdict.downloads {
            self.downloads += 1;
        }
        let mut info = StageInfo {
            downloads: verdict.downloads,
            runs_stdin: verdict.runs_stdin,
        };
        for inner in verdict.inner {
            match inner {
                Inner::Code(code) => self.nested(&code, display, depth + 1),
                Inner::Words(inner_words) => {
                    let i = self.simple(&inner_words, stdin, display, depth + 1);
                    info.downloads |= i.downloads;
                    info.runs_stdin |= i.runs_stdin;
                }
            }
        }
        if let Some(cd) = verdict.cd {
            self.cwd = cd;
        }
        info
    }

    /// Classifies code a command runs (`bash -c '…'`, `eval`, a here-document fed to a shell).
    fn nested(&mut self, code: &str, display: &str, depth: usize) {
        if depth > MAX_NESTING {
            self.push(Risk::High, display, &say::NESTS_COMMANDS_TOO_DEEPLY);
            return;
        }
        let source = terminated(code);
        let mut inner = Walker::new(&source, self.ctx, self.cwd.clone(), depth);
        inner.run();
        self.downloads += inner.downloads;
        for r in inner.reasons {
            self.push(r.risk, &r.command, r.message);
        }
    }

    fn assignment(&mut self, node: Node<'_>, level: usize) {
        self.walk_children(node, level);
        let name = node
            .child_by_field_name("name")
            .map(|n| text(n, self.src))
            .unwrap_or("");
        if rules::DANGEROUS_VARIABLES.contains(&name) {
            let why = say::SETS_VARIABLE_FOR_LATER_PROGRAMS.with("variable", name);
            self.push(Risk::High, text(node, self.src), why);
        }
    }

    /// Judges a redirection; returns what it feeds to the command's standard input, if anything.
    fn redirect(&mut self, node: Node<'_>, level: usize) -> Option<Stdin> {
        match node.kind() {
            "herestring_redirect" => {
                let mut cursor = node.walk();
                let arg = node.named_children(&mut cursor).last()?;
                Some(match self.argument(arg, level) {
                    Word::Lit(s) => Stdin::Text(s),
                    _ => Stdin::Dynamic,
                })
            }
            "heredoc_redirect" => {
                let mut cursor = node.walk();
                let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
                let mut stdin = Stdin::Text(String::new());
                for c in children {
                    if c.kind() == "heredoc_body" {
                        self.walk(c, level + 1);
                        let mut bc = c.walk();
                        let dynamic = c
                            .named_children(&mut bc)
                            .any(|n| n.kind() != "heredoc_content");
                        stdin = if dynamic {
                            Stdin::Dynamic
                        } else {
                            Stdin::Text(text(c, self.src).to_string())
                        };
                    } else if !matches!(c.kind(), "heredoc_start" | "heredoc_end") {
                        self.walk(c, level + 1);
                    }
                }
                Some(stdin)
            }
            _ => self.file_redirect(node, level),
        }
    }

    fn file_redirect(&mut self, node: Node<'_>, level: usize) -> Option<Stdin> {
        let mut cursor = node.walk();
        let op = node
            .children(&mut cursor)
            .find(|c| !c.is_named())
            .map(|c| c.kind())
            .unwrap_or("");
        let dest = node.child_by_field_name("destination").or_else(|| {
            let mut c = node.walk();
            node.named_children(&mut c)
                .filter(|n| n.kind() != "file_descriptor")
                .last()
        })?;
        let word = self.argument(dest, level);
        let display = text(node, self.src);
        match op {
            "<" => {
                self.secret_input(&word, display);
                Some(Stdin::File)
            }
            ">" | ">|" | "&>" | "<>" => {
                self.write_target(&word, false, display);
                None
            }
            ">>" | "&>>" => {
                self.write_target(&word, true, display);
                None
            }
            ">&" if word
                .lit()
                .is_some_and(|s| !s.chars().all(|c| c.is_ascii_digit()) && s != "-") =>
            {
                self.write_target(&word, false, display);
                None
            }
            _ => None,
        }
    }

    /// `< FILE` where the file is a secret: the command reads it.
    fn secret_input(&mut self, word: &Word, display: &str) {
        let exp = self.expander();
        let Some(path) = word.lit().and_then(|w| exp.resolve(w)) else {
            return;
        };
        let home = self.ctx.home.as_deref();
        if self.ctx.secrets.secret_at(&path, home).is_some() {
            let why = say::READS_SECRET.with("path", path.display());
            self.push(Risk::High, display, why);
        }
    }

    fn write_target(&mut self, word: &Word, append: bool, display: &str) {
        if let Some((risk, why)) = rules::write_finding(word, append, &self.expander()) {
            self.push(risk, display, why);
        }
    }

    /// A function that calls itself from a pipeline or in the background is a fork bomb.
    fn function(&mut self, node: Node<'_>) {
        let Some(name) = node.child_by_field_name("name").map(|n| text(n, self.src)) else {
            return;
        };
        let Some(body) = node.child_by_field_name("body") else {
            return;
        };
        let mut forks = false;
        let mut recursive = false;
        visit(body, &mut |n| {
            if n.kind() == "command"
                && n.child_by_field_name("name")
                    .is_some_and(|c| text(c, self.src) == name)
            {
                recursive = true;
                let parent_kind = n.parent().map(|p| p.kind()).unwrap_or("");
                let backgrounded = n.next_sibling().is_some_and(|s| s.kind() == "&");
                forks |= parent_kind == "pipeline" || backgrounded;
            }
        });
        let display = text(node, self.src);
        if forks {
            self.push(Risk::Critical, display, &say::FORK_BOMB);
        } else if recursive {
            self.push(Risk::High, display, &say::RECURSIVE_FUNCTION);
        }
    }
}

/// Calls `f` on `node` and every descendant, without recursion (trees can be deep).
fn visit<'t>(node: Node<'t>, f: &mut dyn FnMut(Node<'t>)) {
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        f(n);
        let mut cursor = n.walk();
        stack.extend(n.children(&mut cursor));
    }
}

/// The last part of a list when it is a simple command.
fn last_command(list: Node<'_>) -> Option<Node<'_>> {
    let mut c = list.walk();
    let last = list
        .named_children(&mut c)
        .filter(|n| n.kind() != "comment")
        .last()?;
    (last.kind() == "command").then_some(last)
}

fn first_error(root: Node<'_>) -> Option<Node<'_>> {
    let mut found = None;
    visit(root, &mut |n| {
        if found.is_none() && (n.is_error() || n.is_missing()) {
            found = Some(n);
        }
    });
    found
}

/// A command as a reason quotes it: at most [`QUOTE_CHARS`] characters, on one line, without
/// the newline that ends it (see [`terminated`]).
fn quote(command: &str) -> String {
    let one_line: String = command
        .trim_end()
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let mut chars = one_line.chars();
    let short: String = chars.by_ref().take(QUOTE_CHARS).collect();
    if chars.next().is_some() {
        format!("{short}…")
    } else {
        short
    }
}
