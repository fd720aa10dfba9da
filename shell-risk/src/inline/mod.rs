//! Inline code handed to another interpreter (`python3 -c`, `node -e`, `perl -e`, `ruby -e`,
//! `php -r`, `deno eval`, `bun -e`, or a here-document or known text piped to one), rated by
//! what it does. Python and JavaScript are read with their tree-sitter grammars; Perl, Ruby and
//! PHP, which have no grammar here, with a tokenizer and tables of what each name does
//! ([`script`]). A reader reports [`Effect`]s; this module turns them into findings: deleting or
//! writing outside the working folder, a process it starts (its command line rated like any
//! other command when it is a literal), the network, a secret, or code that cannot be read make
//! the command High; code that only computes, prints or reads inside the project stays Moderate.

mod js;
mod perl;
mod php;
mod python;
mod ruby;
mod script;
mod script_tables;

use std::cell::RefCell;

use tree_sitter::{Language, Parser, Tree};

use crate::Risk;
use crate::paths::{self, Place};
use crate::phrases as say;
use crate::rules::{Inner, Verdict, destroys, write_finding};
use crate::words::{Expander, Word};

/// The languages whose inline code is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lang {
    Python,
    JavaScript,
    Perl,
    Ruby,
    Php,
}

impl Lang {
    /// The language a program runs, by its name (`python3.12`, `nodejs`, `deno`).
    pub(crate) fn of(program: &str) -> Option<Lang> {
        let base = program.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
        match base {
            "python" | "pypy" => Some(Lang::Python),
            "node" | "nodejs" | "deno" | "bun" => Some(Lang::JavaScript),
            "perl" => Some(Lang::Perl),
            "ruby" => Some(Lang::Ruby),
            "php" => Some(Lang::Php),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Lang::Python => "Python",
            Lang::JavaScript => "JavaScript",
            Lang::Perl => "Perl",
            Lang::Ruby => "Ruby",
            Lang::Php => "PHP",
        }
    }
}

/// Something inline code does. A path or command line is `None` when it is known only when the
/// code runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Effect {
    Delete(Option<String>),
    Write(Option<String>),
    /// Reads a file: only a secret matters.
    Read(String),
    /// Runs a shell command line.
    Shell(Option<String>),
    /// Runs a program with these arguments.
    Exec(Option<Vec<String>>),
    Network(String),
    /// Code the gate cannot read (dynamic evaluation, native calls, reflection): why, and the
    /// name that made it so.
    Unreadable(Why, String),
    /// Calls a function of a module the gate reads that is not known to be harmless.
    Unknown(String),
    SecretVariable(String),
    AllVariables,
    /// Changes its own folder: relative paths after it are unknown.
    ChangesFolder,
}

/// Why code cannot be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Why {
    Unparsable,
    DynamicCode,
    DynamicImport,
    Reflection,
    Native,
    Deserializes,
    Nests,
    NotRead,
    PassesFunction,
}

impl Why {
    fn phrase(self) -> &'static say::Phrase {
        match self {
            Why::Unparsable => &say::WHY_UNPARSABLE,
            Why::DynamicCode => &say::WHY_DYNAMIC_CODE,
            Why::DynamicImport => &say::WHY_DYNAMIC_IMPORT,
            Why::Reflection => &say::WHY_REFLECTION,
            Why::Native => &say::WHY_NATIVE,
            Why::Deserializes => &say::WHY_DESERIALIZES,
            Why::Nests => &say::WHY_NESTS,
            Why::NotRead => &say::WHY_NOT_READ,
            Why::PassesFunction => &say::WHY_PASSES_FUNCTION,
        }
    }
}

/// How deep an expression is followed to work out a value or a name.
const MAX_EXPRESSION_DEPTH: usize = 64;

/// How deep code may nest (`exec("exec('…')")`) before it counts as unreadable.
const MAX_CODE_NESTING: usize = 4;

/// Rates `code` in `lang`, run by `program` (as the command names it), in the shell's folder.
pub(crate) fn rate(lang: Lang, program: &str, code: &str, exp: &Expander<'_>) -> Verdict {
    let mut v = Verdict::default();
    v.add(
        Risk::Moderate,
        say::RUNS_INLINE_CODE.with("program", program),
    );
    apply_all(&mut v, lang, read(lang, code, 0), exp);
    v
}

/// What loading a module or library on the command line brings (`perl -MLWP::Simple`, `ruby
/// -rsocket`).
pub(crate) fn module_effects(lang: Lang, name: &str) -> Vec<Effect> {
    let mut out = Vec::new();
    match lang {
        Lang::Perl => perl::module(name, &mut out),
        Lang::Ruby => ruby::library(name, &mut out),
        _ => {}
    }
    out
}

/// Adds the findings of `effects` to `v`.
pub(crate) fn apply_all(v: &mut Verdict, lang: Lang, effects: Vec<Effect>, exp: &Expander<'_>) {
    let mut cwd_known = true;
    for effect in effects {
        apply(v, lang, effect, exp, &mut cwd_known);
    }
}

/// The effects of `code`; a parse failure is one [`Effect::Unreadable`].
pub(crate) fn read(lang: Lang, code: &str, depth: usize) -> Vec<Effect> {
    if depth > MAX_CODE_NESTING {
        return vec![Effect::Unreadable(Why::Nests, String::new())];
    }
    match lang {
        Lang::Python => python::effects(code, depth),
        Lang::JavaScript => js::effects(code, depth),
        Lang::Perl | Lang::Ruby | Lang::Php => script::effects(lang, code),
    }
}

fn apply(v: &mut Verdict, lang: Lang, effect: Effect, exp: &Expander<'_>, cwd_known: &mut bool) {
    let language = lang.name();
    let known = |p: &str| *cwd_known || p.starts_with('/') || p.starts_with("~/") || p == "~";
    match effect {
        Effect::Delete(Some(p)) if known(&p) => {
            let word = Word::Lit(expand(&p, exp));
            let found = destroys(&[&word], &say::DELETES_RECURSIVELY, true, false, exp);
            v.findings.extend(found.findings);
        }
        Effect::Write(Some(p)) if known(&p) => write(v, &expand(&p, exp), exp),
        Effect::Delete(_) => v.add(
            Risk::High,
            say::CODE_DELETES_DYNAMIC.with("language", language),
        ),
        Effect::Write(_) => v.add(
            Risk::High,
            say::CODE_WRITES_DYNAMIC.with("language", language),
        ),
        Effect::Read(p) => {
            if !known(&p) {
                return;
            }
            let expanded = expand(&p, exp);
            if let Some(path) = exp.resolve(&expanded)
                && exp
                    .ctx
                    .secrets
                    .secret_at(&path, exp.ctx.home.as_deref())
                    .is_some()
            {
                v.add(Risk::High, say::READS_SECRET.with("path", path.display()));
            }
        }
        Effect::Shell(Some(code)) => {
            v.add(
                Risk::Moderate,
                say::CODE_STARTS_PROCESS.with("language", language),
            );
            v.inner.push(Inner::Code(code));
        }
        Effect::Exec(Some(argv)) if !argv.is_empty() => {
            v.add(
                Risk::Moderate,
                say::CODE_STARTS_PROCESS.with("language", language),
            );
            v.inner
                .push(Inner::Words(argv.into_iter().map(Word::Lit).collect()));
        }
        Effect::Shell(None) | Effect::Exec(_) => v.add(
            Risk::High,
            say::CODE_RUNS_DYNAMIC_COMMAND.with("language", language),
        ),
        Effect::Network(what) => v.add(
            Risk::High,
            say::CODE_USES_NETWORK
                .with("language", language)
                .with("what", what),
        ),
        Effect::Unreadable(why, name) => v.add(
            Risk::High,
            say::CODE_UNREADABLE
                .with("language", language)
                .with_phrase("why", why.phrase().with("name", name)),
        ),
        Effect::Unknown(name) => v.add(
            Risk::High,
            say::CODE_CALLS_UNKNOWN
                .with("language", language)
                .with("name", name),
        ),
        Effect::SecretVariable(name) if exp.ctx.secrets.is_secret_env(&name) => v.add(
            Risk::High,
            say::CODE_READS_SECRET_VARIABLE.with("variable", name),
        ),
        Effect::SecretVariable(_) => {}
        Effect::AllVariables => v.add(Risk::High, &say::CODE_READS_ALL_VARIABLES),
        Effect::ChangesFolder => *cwd_known = false,
    }
}

/// `~` and `~/…` as the home folder (interpreters do not expand them, but `expanduser` does, and
/// reading it so is the stricter choice).
fn expand(path: &str, exp: &Expander<'_>) -> String {
    match (&exp.ctx.home, path) {
        (Some(home), "~") => home.to_string_lossy().into_owned(),
        (Some(home), p) if p.starts_with("~/") => home.join(&p[2..]).to_string_lossy().into_owned(),
        _ => path.to_string(),
    }
}

/// A write by inline code: as a redirection to the same path would be, and High whenever it is
/// outside the working folder (a redirection there is only Moderate; code that writes outside
/// the project is not routine).
fn write(v: &mut Verdict, path: &str, exp: &Expander<'_>) {
    let word = Word::Lit(path.to_string());
    let Some((risk, why)) = write_finding(&word, false, exp) else {
        return;
    };
    let inside = exp.resolve(path).is_some_and(|p| {
        matches!(
            paths::place(&p, exp.ctx),
            Place::Inside | Place::WorkingFolder
        )
    });
    let risk = if inside { risk } else { risk.max(Risk::High) };
    v.add(risk, why);
}

thread_local! {
    // One parser per grammar and thread: loading a grammar costs more than parsing a line.
    static PYTHON: RefCell<Option<Parser>> = const { RefCell::new(None) };
    static JAVASCRIPT: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

/// Parses `code` with the cached parser of `lang` (Python or JavaScript), ended by a newline as
/// an interpreter reads a file (tree-sitter-python takes about a third longer on a line that
/// runs into the end of the input; the trees are the same).
pub(crate) fn parse(lang: Lang, code: &str) -> Option<Tree> {
    if !code.ends_with('\n') {
        return parse(lang, &format!("{code}\n"));
    }
    let (cell, language): (
        &'static std::thread::LocalKey<RefCell<Option<Parser>>>,
        Language,
    ) = match lang {
        Lang::Python => (&PYTHON, tree_sitter_python::LANGUAGE.into()),
        Lang::JavaScript => (&JAVASCRIPT, tree_sitter_javascript::LANGUAGE.into()),
        _ => return None,
    };
    cell.with(|cell| {
        let mut slot = cell.try_borrow_mut().ok()?;
        if slot.is_none() {
            let mut parser = Parser::new();
            parser.set_language(&language).ok()?;
            *slot = Some(parser);
        }
        slot.as_mut()?.parse(code, None)
    })
}

/// Whether a string looks like a path someone means (not a word or a sentence).
pub(crate) fn path_like(s: &str) -> bool {
    !s.is_empty()
        && !s.contains('\n')
        && !s.contains("://")
        && (s.starts_with('/') || s.starts_with('~') || s.starts_with("./") || s.starts_with("../"))
}

#[cfg(test)]
mod tests;
