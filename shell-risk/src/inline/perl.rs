//! What Perl names do: the builtins that delete, write, run commands, reach the network or
//! evaluate code; `open`'s modes; modules by what loading them brings; `%ENV`; references and
//! typeglobs that call code by a computed name. Every other builtin (print, split, map, sort,
//! sprintf, regular expressions without `/e`, …) only computes.

use super::script::{Tok, effects as script_effects};
use super::script_tables::{
    after, args, before, command, copy, delete_all, groups, rename, run, static_str, write_all,
};
use super::{Effect, Lang, Why};

/// Modules that reach the network.
const NETWORK_MODULES: &[&str] = &[
    "LWP",
    "HTTP::Tiny",
    "HTTP::Request",
    "HTTP::Lite",
    "Net::",
    "IO::Socket",
    "Socket",
    "Mojo::UserAgent",
    "WWW::",
    "Furl",
    "AnyEvent::HTTP",
    "URI::Fetch",
];
/// Modules that run commands or native code.
const RUNNING_MODULES: &[&str] = &[
    "IPC::",
    "Proc::",
    "Expect",
    "Inline",
    "FFI::",
    "XSLoader",
    "DynaLoader",
    "B",
    "Safe",
];

/// Judges a module loaded by `use`, `require` or `-M`.
pub(super) fn module(name: &str, out: &mut Vec<Effect>) {
    let starts = |list: &[&str]| {
        list.iter().any(|m| {
            name == m.trim_end_matches("::")
                || name.starts_with(m) && (m.ends_with("::") || name[m.len()..].starts_with("::"))
        })
    };
    if starts(NETWORK_MODULES) {
        out.push(Effect::Network(name.to_string()));
    } else if starts(RUNNING_MODULES) {
        out.push(Effect::Unreadable(Why::Native, name.to_string()));
    }
}

pub(in crate::inline) fn judge_perl(toks: &[Tok], out: &mut Vec<Effect>) {
    for (i, t) in toks.iter().enumerate() {
        match t {
            // Not a method (`->open`), a hash key (`{exec}`) or a fat-comma key (`exec => 1`).
            Tok::Ident(w)
                if !(after(toks, i, "->")
                    || before(toks, i, "=>")
                    || after(toks, i, "{") && before(toks, i, "}")) =>
            {
                builtin(toks, i, w, out);
            }
            Tok::Var(v) if v == "%ENV" => out.push(Effect::AllVariables),
            Tok::Var(v) if v == "$ENV" => match (toks.get(i + 1), toks.get(i + 2), toks.get(i + 3))
            {
                (
                    Some(Tok::Punct(o)),
                    Some(
                        Tok::Ident(n)
                        | Tok::Str {
                            text: n,
                            dynamic: false,
                        },
                    ),
                    Some(Tok::Punct(c)),
                ) if o == "{" && c == "}" => out.push(Effect::SecretVariable(n.clone())),
                _ => out.push(Effect::AllVariables),
            },
            Tok::Command { text, dynamic } => command(text, *dynamic, out),
            Tok::SubstCode { twice: true, .. } => {
                out.push(Effect::Unreadable(Why::DynamicCode, "s///ee".into()))
            }
            Tok::SubstCode { code, twice: false } => out.extend(script_effects(Lang::Perl, code)),
            Tok::Punct(p) if p == "&" && matches!(toks.get(i + 1), Some(Tok::Var(_))) => {
                out.push(Effect::Unreadable(Why::Reflection, "&$…".into()))
            }
            Tok::Punct(p) if p == "->" && matches!(toks.get(i + 1), Some(Tok::Var(_))) => {
                out.push(Effect::Unreadable(Why::Reflection, "->$…".into()))
            }
            Tok::Punct(p)
                if p == "*"
                    && before(toks, i, "{")
                    && (i == 0
                        || !matches!(&toks[i - 1], Tok::Number | Tok::Var(_) | Tok::Punct(_))) =>
            {
                out.push(Effect::Unreadable(Why::Reflection, "*{…}".into()))
            }
            _ => {}
        }
    }
}

fn builtin(toks: &[Tok], i: usize, w: &str, out: &mut Vec<Effect>) {
    let a = args(toks, i);
    let name = w.rsplit("::").next().unwrap_or(w);
    let qualified = w.contains("::");
    match (name, qualified) {
        ("system" | "exec", false) => run(a, out),
        ("readpipe", false) => out.push(Effect::Shell(None)),
        ("unlink" | "rmdir", false) | ("rmtree" | "remove_tree", _) => delete_all(a, out),
        ("mkdir" | "make_path" | "mkpath" | "chmod" | "chown" | "utime" | "truncate", _) => {
            write_all(a, out)
        }
        ("symlink" | "link" | "copy" | "cp" | "syscopy", _) => copy(a, out),
        ("rename" | "move" | "mv", _) => rename(a, out),
        ("open" | "sysopen", false) => open(a, name == "sysopen", out),
        ("eval", false) => match toks.get(i + 1) {
            Some(Tok::Punct(p)) if p == "{" => {}
            _ => match groups(a).first().and_then(|g| static_str(g)) {
                Some(code) => out.extend(script_effects(Lang::Perl, &code)),
                None => out.push(Effect::Unreadable(Why::DynamicCode, "eval".into())),
            },
        },
        ("do", false) if !before(toks, i, "{") => {
            out.push(Effect::Unreadable(Why::NotRead, "do FILE".into()))
        }
        ("use" | "no" | "require", false) => match toks.get(i + 1) {
            Some(Tok::Ident(m)) => module(m, out),
            Some(Tok::Number) | None => {}
            Some(Tok::Str { .. }) => {
                out.push(Effect::Unreadable(Why::NotRead, format!("{w} FILE")))
            }
            Some(_) => out.push(Effect::Unreadable(Why::DynamicImport, w.to_string())),
        },
        (
            "socket" | "connect" | "bind" | "listen" | "accept" | "send" | "recv" | "gethostbyname"
            | "getaddrinfo" | "socketpair" | "shutdown",
            false,
        ) => out.push(Effect::Network(w.to_string())),
        (
            "kill" | "fork" | "syscall" | "chroot" | "dump" | "setpgrp" | "setpriority" | "pipe"
            | "dbmopen" | "msgsnd" | "shmwrite" | "semop" | "ioctl" | "fcntl",
            false,
        ) => out.push(Effect::Unknown(w.to_string())),
        ("chdir", false) => out.push(Effect::ChangesFolder),
        ("can" | "__PACKAGE__", _) if after(toks, i, "->") => {}
        _ if w.starts_with("CORE::GLOBAL") => {
            out.push(Effect::Unreadable(Why::Reflection, w.to_string()))
        }
        _ if qualified => module(w.rsplit_once("::").map_or(w, |(m, _)| m), out),
        _ => {}
    }
}

/// `open(FH, MODE, PATH)` and `open(FH, "MODE PATH")`: a read, a write or a command.
fn open(a: &[Tok], sys: bool, out: &mut Vec<Effect>) {
    let gs = groups(a);
    let rest = gs.get(1..).unwrap_or(&[]);
    if sys {
        // sysopen(FH, PATH, FLAGS): a write unless the flags say read-only.
        let path = rest.first().and_then(|g| static_str(g));
        let flags = rest.get(1).map(|g| format!("{g:?}")).unwrap_or_default();
        let writes = ["O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND"]
            .iter()
            .any(|f| flags.contains(f));
        out.push(match (writes, path) {
            (false, Some(p)) => Effect::Read(p),
            (_, p) => Effect::Write(p),
        });
        return;
    }
    match rest {
        [mode, target, more @ ..] => {
            let m = static_str(mode).unwrap_or_default();
            let m = m.trim();
            let path = static_str(target);
            if m.contains('|') {
                let mut line = path.map(|p| vec![p]);
                for g in more {
                    match (&mut line, static_str(g)) {
                        (Some(l), Some(s)) => l.push(s),
                        _ => line = None,
                    }
                }
                out.push(Effect::Shell(line.map(|l| l.join(" "))));
            } else if m.starts_with('<') && !m.contains('+') {
                if let Some(p) = path {
                    out.push(Effect::Read(p));
                }
            } else {
                out.push(Effect::Write(path));
            }
        }
        [spec] => match static_str(spec) {
            Some(s) => {
                let s = s.trim();
                if s.starts_with('|') || s.ends_with('|') {
                    out.push(Effect::Shell(Some(s.trim_matches('|').trim().to_string())));
                } else if let Some(p) = s
                    .strip_prefix(">>")
                    .or_else(|| s.strip_prefix('>'))
                    .or_else(|| s.strip_prefix("+<"))
                {
                    out.push(Effect::Write(Some(p.trim().to_string())));
                } else {
                    out.push(Effect::Read(s.trim_start_matches('<').trim().to_string()));
                }
            }
            None => out.push(Effect::Exec(None)),
        },
        _ => {}
    }
}
