//! Secrets a command reads, copies, sends or prints (the lists are [`crate::secrets`]): a
//! secret file named by any argument (`cat`, `base64`, `cp`, `scp`, `curl -F f=@KEY`, `tar`), a
//! folder holding secrets read whole (`grep -r`, `tar c`, `cp -r`, `rsync -a`) or served
//! (`python3 -m http.server -d ~`), a secret variable printed (`printenv NAME`, `echo $NAME`,
//! `env` alone), secret keys exported (`gpg --export-secret-keys`) and tokens printed by the
//! tools that keep them (`gh auth token`, `pass show`). Every one is High: what an agent reads
//! reaches its model provider, so reading a secret is already sending it.

use std::path::{Path, PathBuf};

use crate::Risk;
use crate::glob::components;
use crate::paths::glob_base;
use crate::phrases as say;
use crate::rules::{Verdict, has_flag, operands};
use crate::words::{Expander, Word};

/// Commands whose arguments name files they do not read the contents of (or that only print
/// the names), `git`, whose arguments are revisions and paths inside its repository, and
/// `source`, which loads a file into the shell without showing it.
#[rustfmt::skip]
const NO_CONTENT: &[&str] = &[
    "ls", "dir", "stat", "file", "du", "realpath", "readlink", "dirname", "basename", "test",
    "[", "[[", "chmod", "chown", "chgrp", "chattr", "lsattr", "getfacl", "setfacl", "touch",
    "mkdir", "rm", "unlink", "shred", "srm", "rmdir", "echo", "printf", "print", "ssh",
    "ssh-add", "ssh-keygen", "ssh-copy-id", "cd", "pushd", "which", "type", "command", "find",
    "lsof", "md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum",
    "cksum", "sum", "git", "tree", "true", "false", "sleep", "kill", "printenv", "env", "set",
    "ps", "source", ".",
];

/// Commands that send what they read to another machine.
#[rustfmt::skip]
const SENDERS: &[&str] = &[
    "scp", "sftp", "curl", "wget", "nc", "ncat", "netcat", "socat", "rclone", "http", "https",
    "xh", "httpie", "mail", "mailx", "sendmail", "mutt", "telnet", "ftp", "lftp", "aria2c",
    "gsutil", "gh", "s3cmd", "transfer", "croc", "magic-wormhole", "wormhole",
];

/// Commands that copy what they read somewhere else.
#[rustfmt::skip]
const COPIERS: &[&str] = &[
    "cp", "mv", "install", "ln", "tar", "zip", "7z", "7za", "dd", "rsync", "gzip", "bzip2", "xz",
    "zstd", "cpio", "ar", "base64", "openssl", "gpg", "age",
];

/// Commands whose first operand is a pattern or program, not a file.
const SCRIPT_FIRST: &[&str] = &[
    "grep", "egrep", "fgrep", "zgrep", "rg", "ag", "ack", "sed", "awk", "gawk", "mawk", "jq", "yq",
];

/// Tools that keep secrets, and the subcommands that print one.
#[rustfmt::skip]
const STORED: &[(&str, &[&str])] = &[
    ("secret-tool", &["lookup", "search"]),
    ("pass", &["show", "-c", "--clip", "otp"]),
    ("gopass", &["show", "cat", "otp"]),
    ("keyring", &["get"]),
    ("kwallet-query", &["-r", "--read-password"]),
    ("op", &["read", "get", "item"]),
    ("bw", &["get"]),
    ("gh", &["auth token"]),
    ("glab", &["auth token"]),
    ("gcloud", &["auth print-access-token", "auth print-identity-token", "auth application-default print-access-token"]),
    ("az", &["account get-access-token"]),
    ("aws", &["configure get", "configure export-credentials", "sts get-session-token", "ecr get-login-password"]),
    ("kubectl", &["config view --raw", "--raw"]),
    ("git", &["credential fill", "credential-cache", "credential-store get"]),
    ("docker-credential-secretservice", &["get"]),
    ("docker-credential-pass", &["get"]),
];

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Reads,
    Copies,
    Sends,
}

/// Adds what `name args` does with secrets to `v`.
pub(crate) fn add(v: &mut Verdict, name: &str, args: &[Word], exp: &Expander<'_>) {
    printed_variables(v, name, args, exp);
    stored_secrets(v, name, args);
    if matches!(name, "gpg" | "gpg2")
        && let Some(option) = args
            .iter()
            .filter_map(Word::lit)
            .find(|a| a.starts_with("--export-secret"))
    {
        v.add(
            Risk::High,
            say::EXPORTS_SECRET_KEYS
                .with("program", name)
                .with("option", option),
        );
    }
    served_folder(v, name, args, exp);
    if NO_CONTENT.contains(&name) {
        return;
    }
    let (ops, flags) = operands(args);
    let remote = |w: &str| remote_spec(w);
    let kind = if SENDERS.contains(&name)
        || (name == "rsync" && ops.iter().any(|o| o.lit().is_some_and(remote)))
    {
        Kind::Sends
    } else if COPIERS.contains(&name) {
        Kind::Copies
    } else {
        Kind::Reads
    };
    let whole = recursive(name, &flags, args);
    let skip_first = SCRIPT_FIRST.contains(&name)
        && !args.iter().any(|a| {
            matches!(
                a.lit(),
                Some("-e" | "-f" | "--regexp" | "--file" | "--expression")
            )
        });
    let mut first_operand = true;
    let mut named_folder = false;
    // What a copy writes to is not read: `cp .env.example .env`.
    let destination = if matches!(name, "cp" | "mv" | "install" | "ln" | "rsync" | "scp")
        && !args
            .iter()
            .any(|a| matches!(a.lit(), Some("-t" | "--target-directory")))
        && ops.len() >= 2
    {
        ops.last().copied()
    } else {
        None
    };
    for word in args {
        if destination.is_some_and(|d| std::ptr::eq(d, word)) {
            continue;
        }
        let Some(text) = word.lit() else {
            continue;
        };
        let is_operand = !text.starts_with('-') || text == "-";
        if is_operand && std::mem::take(&mut first_operand) && skip_first {
            continue;
        }
        for candidate in candidates(text) {
            // Code and patterns, not paths: what a file name almost never holds.
            if remote(candidate)
                || candidate.contains("://")
                || candidate
                    .contains(['\n', ';', '(', ')', '{', '}', '"', '\'', '$', '`', '|', '&'])
            {
                continue;
            }
            named_folder |= is_operand;
            judge(v, name, kind, whole, candidate, exp);
        }
    }
    // `rg foo`, `grep -r foo`: with no folder named they read the current one.
    if let Some(skip_hidden) = whole
        && !named_folder
        && let Some(cwd) = exp.cwd
    {
        folder(v, name, kind, cwd, skip_hidden, exp);
    }
}

/// The paths a word may name: itself, what follows `=` (`--file=PATH`, `if=PATH`), what
/// follows `@` or `<` (curl's `-F f=@PATH`, `-d @PATH`, `-F f=<PATH`).
fn candidates(text: &str) -> Vec<&str> {
    let mut out = Vec::with_capacity(2);
    if text.starts_with('-') {
        if let Some((_, value)) = text.split_once('=') {
            out.push(strip(value));
        } else if !text.starts_with("--")
            && let Some((_, value)) = text.split_once('@')
        {
            out.push(value);
        }
    } else if let Some((_, value)) = text.split_once('=') {
        // `if=PATH`, `f=@PATH`: the value (a file name holding `=` is rare).
        out.push(strip(value));
    } else {
        out.push(strip(text));
    }
    out.retain(|c| !c.is_empty());
    out
}

/// `host:path` or `user@host:path` (scp, rsync): a path on another machine.
fn remote_spec(word: &str) -> bool {
    match word.find(':') {
        Some(colon) => !word[..colon].contains('/') && colon > 0,
        None => false,
    }
}

/// Whether `name` reads whole folders it is given, and whether it skips hidden files there.
fn recursive(name: &str, flags: &[&str], args: &[Word]) -> Option<bool> {
    let lits: Vec<&str> = args.iter().filter_map(Word::lit).collect();
    let r =
        has_flag(flags, 'r', &["recursive", "dereference-recursive"]) || has_flag(flags, 'R', &[]);
    match name {
        "grep" | "egrep" | "fgrep" | "zgrep" => {
            let recurse = r
                || lits.windows(2).any(|w| w == ["-d", "recurse"])
                || lits.contains(&"--directories=recurse");
            recurse.then_some(false)
        }
        "rg" => {
            let hidden = has_flag(flags, '.', &["hidden", "unrestricted"])
                || flags.iter().any(|f| f.starts_with("-uu"));
            Some(!hidden)
        }
        "ag" => Some(!(has_flag(flags, 'u', &["hidden", "unrestricted"]))),
        "ack" => Some(false),
        "tar" => {
            let mode = lits
                .first()
                .filter(|f| !f.starts_with('-'))
                .copied()
                .unwrap_or("");
            let creates = mode.contains(['c', 'r', 'u'])
                || has_flag(flags, 'c', &["create", "append", "update"])
                || has_flag(flags, 'r', &[])
                || has_flag(flags, 'u', &[]);
            creates.then_some(false)
        }
        "zip" => has_flag(flags, 'r', &["recurse-paths"]).then_some(false),
        "7z" | "7za" => lits.first().is_some_and(|s| *s == "a").then_some(false),
        "cp" | "scp" => (r || has_flag(flags, 'a', &["archive"])).then_some(false),
        "rsync" => (r || has_flag(flags, 'a', &["archive"])).then_some(false),
        "rclone" | "cpio" | "zstd" => Some(false),
        _ => None,
    }
}

/// Judges one path a command names.
fn judge(
    v: &mut Verdict,
    name: &str,
    kind: Kind,
    whole: Option<bool>,
    text: &str,
    exp: &Expander<'_>,
) {
    let expanded;
    let text = match (text.strip_prefix("~/"), &exp.ctx.home) {
        (Some(rest), Some(home)) => {
            expanded = home.join(rest);
            expanded.to_str().unwrap_or(text)
        }
        _ => text,
    };
    let (base, glob) = glob_base(text);
    let Some(path) = exp.resolve(if glob { text } else { &base }) else {
        return;
    };
    let secrets = &exp.ctx.secrets;
    let home = exp.ctx.home.as_deref();
    if glob {
        let comps = components(&path);
        if let Some(pattern) = secrets.secret_in_glob(&comps, home) {
            let why = say::MAY_READ_SECRET
                .with("path", path.display())
                .with("pattern", pattern);
            v.add(Risk::High, why);
            return;
        }
        if let (Some(skip_hidden), Some(base)) = (whole, exp.resolve(&base)) {
            folder(v, name, kind, &base, skip_hidden, exp);
        }
        return;
    }
    if secrets.secret_at(&path, home).is_some() {
        let shown = path.display();
        let why = match kind {
            Kind::Reads => say::READS_SECRET.with("path", shown),
            Kind::Copies => say::COPIES_SECRET.with("path", shown).with("program", name),
            Kind::Sends => say::SENDS_SECRET.with("path", shown).with("program", name),
        };
        v.add(Risk::High, why);
        return;
    }
    if let Some(skip_hidden) = whole {
        folder(v, name, kind, &path, skip_hidden, exp);
    }
}

/// A folder read whole: High when it holds a secret.
fn folder(
    v: &mut Verdict,
    name: &str,
    kind: Kind,
    path: &Path,
    skip_hidden: bool,
    exp: &Expander<'_>,
) {
    let home = exp.ctx.home.as_deref();
    let Some(pattern) = exp.ctx.secrets.secret_under(path, home, skip_hidden) else {
        return;
    };
    let why = if kind == Kind::Sends {
        say::SENDS_FOLDER_WITH_SECRETS.with("program", name)
    } else {
        (&say::READS_FOLDER_WITH_SECRETS).into()
    };
    v.add(
        Risk::High,
        why.with("path", path.display()).with("pattern", pattern),
    );
}

/// `printenv NAME`, `echo "$NAME"`, and the commands that print every variable.
fn printed_variables(v: &mut Verdict, name: &str, args: &[Word], exp: &Expander<'_>) {
    let secrets = &exp.ctx.secrets;
    let (ops, flags) = operands(args);
    match name {
        "echo" | "printf" | "print" => {
            for a in args {
                for var in variables(a.text()) {
                    if secrets.is_secret_env(var) {
                        v.add(
                            Risk::High,
                            say::PRINTS_SECRET_VARIABLE.with("variable", var),
                        );
                    }
                }
            }
        }
        "printenv" if ops.is_empty() => v.add(Risk::High, &say::PRINTS_ALL_VARIABLES),
        "printenv" => {
            for var in ops.iter().filter_map(|o| o.lit()) {
                if secrets.is_secret_env(var) {
                    v.add(
                        Risk::High,
                        say::PRINTS_SECRET_VARIABLE.with("variable", var),
                    );
                }
            }
        }
        "set" if args.is_empty() => v.add(Risk::High, &say::PRINTS_ALL_VARIABLES),
        "ps" => {
            // BSD-style options (no dash) with `e` add each process's environment.
            let bsd_e = ops
                .iter()
                .filter_map(|o| o.lit())
                .any(|o| o.chars().all(|c| c.is_ascii_alphabetic()) && o.contains('e'));
            if bsd_e || flags.contains(&"--env") {
                v.add(Risk::High, &say::PRINTS_PROCESS_ENVIRONMENTS);
            }
        }
        _ => {}
    }
}

/// The names of the variables `$NAME` and `${NAME…}` in a word's source text.
pub(crate) fn variables(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'$' {
            i += 1;
            continue;
        }
        let start = if bytes.get(i + 1) == Some(&b'{') {
            i + 2
        } else {
            i + 1
        };
        let start = if bytes.get(start) == Some(&b'!') {
            start + 1
        } else {
            start
        };
        let end = start
            + bytes[start.min(bytes.len())..]
                .iter()
                .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
                .count();
        if end > start {
            out.push(&text[start..end]);
        }
        i = end.max(i + 1);
    }
    out
}

/// Tools that print a secret they keep (`gh auth token`, `pass show`, `secret-tool lookup`).
fn stored_secrets(v: &mut Verdict, name: &str, args: &[Word]) {
    let Some((_, subs)) = STORED.iter().find(|(n, _)| *n == name) else {
        return;
    };
    let lits: Vec<&str> = args.iter().filter_map(Word::lit).collect();
    let line = lits.join(" ");
    let hit = subs.iter().find(|sub| {
        let words: Vec<&str> = sub.split(' ').collect();
        lits.windows(words.len()).any(|w| w == words.as_slice())
    });
    // `pass NAME` with no subcommand shows the entry NAME.
    let pass_entry = name == "pass"
        && lits.first().is_some_and(|f| {
            !f.starts_with('-')
                && !matches!(
                    *f,
                    "ls" | "list"
                        | "find"
                        | "search"
                        | "init"
                        | "git"
                        | "insert"
                        | "edit"
                        | "generate"
                        | "rm"
                        | "mv"
                        | "cp"
                        | "help"
                        | "version"
                        | "grep"
                )
        });
    if hit.is_some() || pass_entry {
        let command = format!("{name} {line}");
        v.add(
            Risk::High,
            say::PRINTS_STORED_SECRET.with("command", command.trim_end()),
        );
    }
}

/// `python3 -m http.server [-d DIR]`, `php -S ADDR [-t DIR]`: a folder served to the network.
fn served_folder(v: &mut Verdict, name: &str, args: &[Word], exp: &Expander<'_>) {
    let lits: Vec<&str> = args.iter().filter_map(Word::lit).collect();
    let python = name.starts_with("python")
        && lits
            .windows(2)
            .any(|w| w[0] == "-m" && matches!(w[1], "http.server" | "SimpleHTTPServer"));
    let php = name == "php" && lits.contains(&"-S");
    if !python && !php {
        return;
    }
    let option = if php {
        &["-t"][..]
    } else {
        &["-d", "--directory"][..]
    };
    let dir = lits
        .windows(2)
        .find(|w| option.contains(&w[0]))
        .map(|w| w[1])
        .or_else(|| lits.iter().find_map(|l| l.strip_prefix("--directory=")));
    let path: Option<PathBuf> = match dir {
        Some(d) => match (d.strip_prefix("~/"), &exp.ctx.home) {
            (Some(rest), Some(home)) => Some(home.join(rest)),
            _ => exp.resolve(d),
        },
        None => exp.cwd.map(Path::to_path_buf),
    };
    let Some(path) = path else {
        v.add(Risk::High, &say::SERVES_UNKNOWN_FOLDER);
        return;
    };
    let home = exp.ctx.home.as_deref();
    if let Some(pattern) = exp.ctx.secrets.secret_under(&path, home, false) {
        v.add(
            Risk::High,
            say::SERVES_FOLDER_WITH_SECRETS
                .with("path", path.display())
                .with("pattern", pattern),
        );
    }
}

fn strip(s: &str) -> &str {
    s.trim_start_matches(['@', '<'])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variables_are_found_in_words() {
        assert_eq!(
            variables("$A ${B_C} x$D-e ${!E} $1"),
            ["A", "B_C", "D", "E", "1"]
        );
        assert!(variables("no dollars").is_empty());
    }

    #[test]
    fn candidates_look_inside_options_and_curl_forms() {
        assert_eq!(candidates("f=@/k"), ["/k"]);
        assert_eq!(candidates("@key"), ["key"]);
        assert_eq!(candidates("--file=/k"), ["/k"]);
        assert_eq!(candidates("-d@/k"), ["/k"]);
        assert!(candidates("-rf").is_empty());
        assert!(remote_spec("host:/x") && remote_spec("u@h:x") && !remote_spec("./a:b"));
    }
}
