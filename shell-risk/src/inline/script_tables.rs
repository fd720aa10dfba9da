//! Reading a token stream of Perl, Ruby or PHP: the arguments of a call, their strings when
//! known now, and the effects shared by the three languages (commands in backticks, file
//! operations with known or unknown paths). Each language's tables are in its own file.

use super::Effect;
pub(super) use super::perl::judge_perl;
pub(super) use super::php::judge_php;
pub(super) use super::ruby::judge_ruby;
use super::script::Tok;

/// The tokens of the arguments of the call whose name is at `at`: up to the end of the
/// statement (`;`, a closing bracket that was not opened here, a postfix `if`/`unless`, a
/// newline-ended Ruby statement is not seen: the tokenizer drops newlines), or the closing
/// parenthesis when the arguments are parenthesized.
pub(super) fn args(toks: &[Tok], at: usize) -> &[Tok] {
    let start = at + 1;
    let mut depth = 0usize;
    let parenthesized = matches!(toks.get(start), Some(Tok::Punct(p)) if p == "(");
    for (j, t) in toks.iter().enumerate().skip(start) {
        match t {
            Tok::Punct(p) if matches!(p.as_str(), "(" | "[" | "{") => depth += 1,
            Tok::Punct(p) if matches!(p.as_str(), ")" | "]" | "}") => {
                if depth == 0 {
                    return &toks[start..j];
                }
                depth -= 1;
                if depth == 0 && parenthesized {
                    return &toks[start..=j];
                }
            }
            Tok::Punct(p) if p == ";" && depth == 0 => return &toks[start..j],
            Tok::Ident(w)
                if depth == 0
                    && matches!(
                        w.as_str(),
                        "if" | "unless" | "or" | "and" | "do" | "for" | "foreach" | "while"
                    ) =>
            {
                return &toks[start..j];
            }
            _ => {}
        }
    }
    &toks[start.min(toks.len())..]
}

/// Splits arguments at top-level commas (and `=>`), dropping the outer parentheses.
pub(super) fn groups(args: &[Tok]) -> Vec<&[Tok]> {
    let inner = match (args.first(), args.last()) {
        (Some(Tok::Punct(a)), Some(Tok::Punct(b))) if a == "(" && b == ")" && args.len() >= 2 => {
            &args[1..args.len() - 1]
        }
        _ => args,
    };
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (j, t) in inner.iter().enumerate() {
        match t {
            Tok::Punct(p) if matches!(p.as_str(), "(" | "[" | "{") => depth += 1,
            Tok::Punct(p) if matches!(p.as_str(), ")" | "]" | "}") => {
                depth = depth.saturating_sub(1)
            }
            Tok::Punct(p) if (p == "," || p == "=>") && depth == 0 => {
                out.push(&inner[start..j]);
                start = j + 1;
            }
            _ => {}
        }
    }
    if start < inner.len() {
        out.push(&inner[start..]);
    }
    out
}

/// The string a group of tokens makes when it is known now: one static string (or several
/// joined by `.`/`+`), maybe inside `glob(…)` or brackets.
pub(super) fn static_str(group: &[Tok]) -> Option<String> {
    if let Some(path) = ruby_path(group) {
        return Some(path);
    }
    let mut out = String::new();
    let mut any = false;
    for t in group {
        match t {
            Tok::Str {
                text,
                dynamic: false,
            } => {
                out.push_str(text);
                any = true;
            }
            Tok::Punct(p) if matches!(p.as_str(), "(" | ")" | "[" | "]" | "." | "+") => {}
            Tok::Ident(w)
                if matches!(
                    w.as_str(),
                    "glob" | "my" | "new" | "Pathname" | "File::join"
                ) => {}
            _ => return None,
        }
    }
    any.then_some(out)
}

/// Ruby's `File.expand_path("~/x")` and `File.join("a", "b")` with strings known now.
fn ruby_path(group: &[Tok]) -> Option<String> {
    let [
        Tok::Ident(class),
        Tok::Punct(dot),
        Tok::Ident(method),
        args @ ..,
    ] = group
    else {
        return None;
    };
    if class != "File" || dot != "." {
        return None;
    }
    let parts = static_strs(args)?;
    match method.as_str() {
        "expand_path" | "absolute_path" | "realpath" => parts.into_iter().next(),
        "join" => Some(parts.join("/")),
        _ => None,
    }
}

/// Every argument's static string; `None` when one is not known now.
pub(super) fn static_strs(args: &[Tok]) -> Option<Vec<String>> {
    groups(args).into_iter().map(static_str).collect()
}

/// A command in backticks (or `qx`, `%x`): its command line.
pub(super) fn command(text: &str, dynamic: bool, out: &mut Vec<Effect>) {
    out.push(Effect::Shell((!dynamic).then(|| text.to_string())));
}

/// `system("cmd")` or `system("prog", "arg", …)`: a command line or an argument list.
pub(super) fn run(args: &[Tok], out: &mut Vec<Effect>) {
    match static_strs(args) {
        Some(list) if list.len() == 1 => out.push(Effect::Shell(list.into_iter().next())),
        Some(list) if !list.is_empty() => out.push(Effect::Exec(Some(list))),
        _ => out.push(Effect::Exec(None)),
    }
}

/// Deletes every path argument (unknown ones as unknown).
pub(super) fn delete_all(args: &[Tok], out: &mut Vec<Effect>) {
    let gs = groups(args);
    if gs.is_empty() {
        out.push(Effect::Delete(None));
    }
    for g in gs {
        out.push(Effect::Delete(static_str(g)));
    }
}

/// Writes every path argument, skipping leading numbers (modes, owners, times).
pub(super) fn write_all(args: &[Tok], out: &mut Vec<Effect>) {
    let gs: Vec<&[Tok]> = groups(args)
        .into_iter()
        .skip_while(|g| g.iter().all(|t| matches!(t, Tok::Number | Tok::Punct(_))))
        .collect();
    if gs.is_empty() {
        out.push(Effect::Write(None));
    }
    for g in gs {
        out.push(Effect::Write(static_str(g)));
    }
}

/// Reads the first path and writes the second (copy, link).
pub(super) fn copy(args: &[Tok], out: &mut Vec<Effect>) {
    let gs = groups(args);
    if let Some(from) = gs.first().and_then(|g| static_str(g)) {
        out.push(Effect::Read(from));
    }
    out.push(Effect::Write(
        gs.last()
            .filter(|_| gs.len() > 1)
            .and_then(|g| static_str(g)),
    ));
}

/// Moves the first path to the second (rename, move).
pub(super) fn rename(args: &[Tok], out: &mut Vec<Effect>) {
    let gs = groups(args);
    out.push(Effect::Delete(gs.first().and_then(|g| static_str(g))));
    out.push(Effect::Write(gs.get(1).and_then(|g| static_str(g))));
}

/// Whether the token before `at` is `p`.
pub(super) fn after(toks: &[Tok], at: usize, p: &str) -> bool {
    at > 0 && matches!(&toks[at - 1], Tok::Punct(x) if x == p)
}

/// Whether the token after `at` is `p`.
pub(super) fn before(toks: &[Tok], at: usize, p: &str) -> bool {
    matches!(toks.get(at + 1), Some(Tok::Punct(x)) if x == p)
}
