//! What Ruby names do: Kernel methods that run commands or evaluate code, `File`, `Dir`,
//! `FileUtils`, `IO`, `Open3`, `Pathname`, `ENV`, network classes, and the reflective methods
//! (`send`, `instance_eval`, `const_get`) that call code by a computed name. Methods of other
//! receivers only compute.

use super::script::{Tok, effects as script_effects};
use super::script_tables::{
    after, args, before, command, copy, delete_all, groups, rename, run, static_str, write_all,
};
use super::{Effect, Lang, Why};

/// Libraries whose loading means the network.
const NETWORK_LIBS: &[&str] = &[
    "net/http",
    "net/https",
    "open-uri",
    "socket",
    "net/ftp",
    "net/smtp",
    "net/pop",
    "net/imap",
    "httparty",
    "faraday",
    "rest-client",
    "excon",
    "typhoeus",
    "httpclient",
    "net/ssh",
];
/// Classes whose use is network access.
const NETWORK_CLASSES: &[&str] = &[
    "Net::HTTP",
    "Net::FTP",
    "Net::SMTP",
    "Net::SSH",
    "TCPSocket",
    "UDPSocket",
    "Socket",
    "TCPServer",
    "UNIXSocket",
    "OpenURI",
    "HTTParty",
    "Faraday",
    "RestClient",
    "Excon",
    "URI.open",
];
/// Methods that call code by a computed name or evaluate text.
const REFLECTIVE: &[&str] = &[
    "send",
    "public_send",
    "__send__",
    "instance_eval",
    "instance_exec",
    "class_eval",
    "module_eval",
    "class_exec",
    "instance_variable_set",
    "define_method",
    "method",
    "const_get",
    "constantize",
    "eval",
    "binding",
    "instance_method",
    "singleton_method",
    "remove_const",
    "const_set",
];

pub(in crate::inline) fn judge_ruby(toks: &[Tok], out: &mut Vec<Effect>) {
    for (i, t) in toks.iter().enumerate() {
        match t {
            Tok::Ident(w) if after(toks, i, ".") || after(toks, i, "&.") => {
                method(toks, i, w, out);
            }
            Tok::Ident(w) if w == "ENV" => env(toks, i, out),
            Tok::Ident(w) if w.starts_with(|c: char| c.is_uppercase()) => {
                if NETWORK_CLASSES
                    .iter()
                    .any(|c| w == c || w.starts_with(&format!("{c}::")))
                {
                    out.push(Effect::Network(w.clone()));
                }
                if matches!(w.as_str(), "ObjectSpace" | "Fiddle" | "FFI" | "DL") {
                    out.push(Effect::Unreadable(Why::Native, w.clone()));
                }
            }
            // Not a definition (`def system`), a symbol (`:system`) or a key (`system: 1`).
            Tok::Ident(w)
                if !after(toks, i, "def") && !after(toks, i, ":") && !before(toks, i, ":") =>
            {
                kernel(toks, i, w, out)
            }
            Tok::Command { text, dynamic } => command(text, *dynamic, out),
            _ => {}
        }
    }
}

/// `ENV['NAME']`, `ENV.fetch('NAME')`, and the whole environment otherwise.
fn env(toks: &[Tok], i: usize, out: &mut Vec<Effect>) {
    let key = |j: usize| match toks.get(j) {
        Some(Tok::Str {
            text,
            dynamic: false,
        }) => Some(text.clone()),
        _ => None,
    };
    let name = if before(toks, i, "[") {
        key(i + 2)
    } else if before(toks, i, ".")
        && matches!(toks.get(i + 2), Some(Tok::Ident(m)) if m == "fetch" || m == "key?" || m == "include?")
    {
        key(i + 4).or_else(|| key(i + 3))
    } else {
        None
    };
    out.push(match name {
        Some(n) => Effect::SecretVariable(n),
        None => Effect::AllVariables,
    });
}

/// Kernel methods called without a receiver.
fn kernel(toks: &[Tok], i: usize, w: &str, out: &mut Vec<Effect>) {
    let a = args(toks, i);
    match w {
        "system" | "spawn" | "exec" => run(a, out),
        "fork" | "trap" | "at_exit" | "exit!" | "syscall" | "set_trace_func" | "abort!" => {
            out.push(Effect::Unknown(w.to_string()))
        }
        "eval" | "instance_eval" | "class_eval" | "module_eval" => {
            match groups(a).first().and_then(|g| static_str(g)) {
                Some(code) => out.extend(script_effects(Lang::Ruby, &code)),
                None => out.push(Effect::Unreadable(Why::DynamicCode, w.to_string())),
            }
        }
        w if REFLECTIVE.contains(&w) => {
            out.push(Effect::Unreadable(Why::Reflection, w.to_string()))
        }
        "load" => out.push(Effect::Unreadable(Why::NotRead, "load".into())),
        "require" | "require_relative" | "gem" => match groups(a).first().map(|g| static_str(g)) {
            Some(Some(lib)) => library(&lib, out),
            Some(None) => out.push(Effect::Unreadable(Why::DynamicImport, w.to_string())),
            None => {}
        },
        "open" => open(a, out),
        "readlines" | "gets" | "puts" | "print" | "p" | "pp" | "printf" => {}
        _ => {}
    }
}

/// A library loaded by `require` or `-r`.
pub(super) fn library(lib: &str, out: &mut Vec<Effect>) {
    if NETWORK_LIBS.contains(&lib) {
        out.push(Effect::Network(lib.to_string()));
    } else if matches!(lib, "fiddle" | "ffi" | "dl") {
        out.push(Effect::Unreadable(Why::Native, lib.to_string()));
    }
}

/// `open(path, mode)`: a command when the path starts with `|`, a write when the mode writes.
fn open(a: &[Tok], out: &mut Vec<Effect>) {
    let gs = groups(a);
    let path = gs.first().and_then(|g| static_str(g));
    let mode = gs.get(1).and_then(|g| static_str(g));
    match (path, gs.len()) {
        (Some(p), _) if p.starts_with('|') => out.push(Effect::Shell(Some(p[1..].to_string()))),
        (Some(p), 1) => out.push(Effect::Read(p)),
        (p @ Some(_), _)
            if mode
                .as_deref()
                .is_some_and(|m| m.starts_with('r') && !m.contains('+')) =>
        {
            if let Some(p) = p {
                out.push(Effect::Read(p));
            }
        }
        (Some(p), _) => out.push(Effect::Write(Some(p))),
        (None, _) => out.push(Effect::Exec(None)),
    }
}

/// `Receiver.method(…)`: by the receiver when it is a class the tables know, else by the
/// method's name alone (reflection, Pathname's deletes and writes).
fn method(toks: &[Tok], i: usize, m: &str, out: &mut Vec<Effect>) {
    let receiver = match i.checked_sub(2).map(|r| &toks[r]) {
        Some(Tok::Ident(r)) => r.as_str(),
        _ => "",
    };
    let a = args(toks, i);
    match (receiver, m) {
        ("File", "read" | "readlines" | "foreach" | "binread") => {
            if let Some(p) = groups(a).first().and_then(|g| static_str(g)) {
                out.push(Effect::Read(p));
            }
        }
        ("File" | "IO", "open" | "new") => open(a, out),
        (
            "File" | "IO",
            "write" | "binwrite" | "truncate" | "mkfifo" | "chmod" | "chown" | "lchmod" | "lchown"
            | "utime",
        ) => write_all(a, out),
        ("File", "delete" | "unlink") | ("Dir", "rmdir" | "delete" | "unlink") => {
            delete_all(a, out)
        }
        ("File", "rename") => rename(a, out),
        ("File", "symlink" | "link") => copy(a, out),
        ("Dir", "mkdir") => write_all(a, out),
        ("Dir", "chdir") => out.push(Effect::ChangesFolder),
        ("IO", "popen")
        | ("Open3", _)
        | ("Process", "spawn" | "exec")
        | ("Kernel", "system" | "spawn" | "exec" | "`") => run(a, out),
        ("IO", "read" | "readlines" | "foreach") => {
            match groups(a).first().and_then(|g| static_str(g)) {
                Some(p) if p.starts_with('|') => out.push(Effect::Shell(Some(p[1..].to_string()))),
                Some(p) => out.push(Effect::Read(p)),
                None => out.push(Effect::Exec(None)),
            }
        }
        ("IO", "sysopen" | "pipe")
        | ("Process", "kill" | "daemon" | "setrlimit")
        | ("Kernel", _) => out.push(Effect::Unknown(format!("{receiver}.{m}"))),
        (
            "FileUtils",
            "rm"
            | "rm_r"
            | "rm_rf"
            | "rm_f"
            | "remove"
            | "remove_dir"
            | "remove_entry"
            | "remove_entry_secure"
            | "rmdir"
            | "rmtree"
            | "remove_file",
        ) => delete_all(a, out),
        (
            "FileUtils",
            "mkdir" | "mkdir_p" | "makedirs" | "mkpath" | "touch" | "chmod" | "chmod_R" | "chown"
            | "chown_R",
        ) => write_all(a, out),
        (
            "FileUtils",
            "cp" | "cp_r" | "copy" | "copy_entry" | "copy_file" | "install" | "ln" | "ln_s"
            | "ln_sf" | "symlink" | "link" | "cp_lr",
        ) => copy(a, out),
        ("FileUtils", "mv" | "move") => rename(a, out),
        ("FileUtils", "pwd" | "compare_file" | "identical?" | "cmp" | "uptodate?") => {}
        ("FileUtils", _) => out.push(Effect::Unknown(format!("FileUtils.{m}"))),
        ("Marshal", "load" | "restore")
        | ("YAML" | "Psych", "unsafe_load" | "unsafe_load_file") => out.push(Effect::Unreadable(
            Why::Deserializes,
            format!("{receiver}.{m}"),
        )),
        ("URI", "open") => out.push(Effect::Network("URI.open".into())),
        ("JSON" | "YAML" | "Psych", "load_file" | "parse_file")
        | ("CSV", "read" | "foreach" | "readlines") => {
            if let Some(p) = groups(a).first().and_then(|g| static_str(g)) {
                out.push(Effect::Read(p));
            }
        }
        ("CSV", "open") => open(a, out),
        (_, "rmtree" | "unlink" | "rmdir" | "delete_all") if receiver != "Hash" => {
            out.push(Effect::Delete(None))
        }
        (_, "binwrite" | "make_symlink" | "make_link" | "mkpath") => out.push(Effect::Write(None)),
        (_, m) if REFLECTIVE.contains(&m) => {
            out.push(Effect::Unreadable(Why::Reflection, m.to_string()))
        }
        _ => {}
    }
}
