//! Commands that run other code: wrappers that run another command (`sudo`, `env`, `nice`,
//! `xargs`, `timeout`, …), shells and language interpreters that run code they are handed or
//! read on standard input, and awk programs.

use crate::Risk;
use crate::inline::Lang;
use crate::phrases as say;
use crate::rules::{Inner, Stdin, Verdict};
use crate::words::{Expander, Word};

/// Privilege tools: everything they run runs as root.
const ROOT: &[&str] = &[
    "sudo", "doas", "pkexec", "run0", "su", "sudoedit", "sg", "chroot",
];

/// Commands that run the command named by their arguments.
#[rustfmt::skip]
const WRAPPERS: &[&str] = &[
    "env", "nice", "nohup", "time", "timeout", "stdbuf", "ionice", "setsid", "chrt", "taskset",
    "xargs", "command", "builtin", "exec", "watch", "flock", "unbuffer", "systemd-run", "strace",
    "ltrace", "caffeinate",
];

/// Options of wrappers that take a value in the next word.
fn wrapper_value_opts(name: &str) -> &'static [&'static str] {
    match name {
        "sudo" => &[
            "-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T", "-R",
        ],
        "doas" => &["-u", "-C"],
        "pkexec" => &["--user"],
        "env" => &["-u", "-C", "--unset", "--chdir"],
        "nice" => &["-n", "--adjustment"],
        "timeout" => &["-s", "-k", "--signal", "--kill-after"],
        "ionice" => &["-c", "-n", "-p", "-P", "-u"],
        "stdbuf" => &["-i", "-o", "-e"],
        "chrt" => &["-p"],
        "watch" => &["-n", "--interval", "-d"],
        "xargs" => &[
            "-a",
            "-d",
            "-E",
            "-I",
            "-L",
            "-n",
            "-P",
            "-s",
            "--arg-file",
            "--delimiter",
            "--max-args",
            "--max-procs",
            "--max-chars",
            "--max-lines",
            "--replace",
        ],
        "exec" => &["-a"],
        "flock" => &["-w", "-E", "--timeout", "--conflict-exit-code"],
        "taskset" => &[],
        _ => &[],
    }
}

/// `sudo`, `env`, `nice`, `xargs` and the like: the command they run, judged in turn.
pub(crate) fn wrapper(name: &str, args: &[Word]) -> Option<Verdict> {
    if MULTI_CALL.contains(&name) {
        return Some(multi_call(name, args));
    }
    if name == "systemd-run" && crate::persist::timer(args) {
        let mut v = Verdict::default();
        v.add(Risk::High, say::SCHEDULES_COMMAND.with("program", name));
        return Some(v);
    }
    let is_wrapper = ROOT.contains(&name) || WRAPPERS.contains(&name);
    if !is_wrapper {
        return None;
    }
    let mut v = Verdict::default();
    if ROOT.contains(&name) {
        v.add(Risk::Critical, say::RUNS_AS_ROOT.with("program", name));
    }
    if name == "su" {
        if let Some(i) = args
            .iter()
            .position(|a| matches!(a.lit(), Some("-c" | "--command")))
        {
            push_code(&mut v, args.get(i + 1), "su -c");
        }
        return Some(v);
    }
    if name == "command"
        && args
            .first()
            .is_some_and(|a| matches!(a.lit(), Some("-v" | "-V")))
    {
        v.add(Risk::Safe, &say::LOOKS_UP_COMMAND);
        return Some(v);
    }
    let Some(mut i) = skip_options(name, args, &mut v) else {
        return Some(v);
    };
    // `timeout DURATION cmd`, `flock FILE cmd`, `taskset MASK cmd`: one positional before it.
    if matches!(name, "timeout" | "flock" | "taskset") {
        if name == "flock"
            && let Some(j) = args
                .iter()
                .position(|a| matches!(a.lit(), Some("-c" | "--command")))
        {
            push_code(&mut v, args.get(j + 1), "flock -c");
            return Some(v);
        }
        i += 1;
    }
    let rest: Vec<Word> = args.get(i..).unwrap_or(&[]).to_vec();
    if rest.is_empty() {
        if name == "env" {
            // With nothing to run, `env` prints every variable, secrets included.
            v.add(Risk::High, &say::PRINTS_ALL_VARIABLES);
            return Some(v);
        }
        let what = match name {
            "env" => &say::PRINTS_ENVIRONMENT,
            "sudo" | "su" | "doas" | "pkexec" | "run0" => &say::OPENS_ROOT_SHELL,
            _ => &say::RUNS_NOTHING,
        };
        let risk = if v.findings.is_empty() && name != "xargs" {
            Risk::Safe
        } else {
            Risk::Moderate
        };
        if name == "xargs" {
            v.add(Risk::Safe, &say::PRINTS_INPUT);
        } else {
            v.add(risk, what);
        }
        return Some(v);
    }
    let mut inner = rest;
    if name == "xargs" {
        // xargs appends what arrives on its input: arguments known only when it runs.
        inner.push(Word::Dyn("{xargs input}".into()));
    }
    if name == "watch" {
        let code: Vec<&str> = inner.iter().map(Word::text).collect();
        v.inner.push(Inner::Code(code.join(" ")));
        return Some(v);
    }
    v.inner.push(Inner::Words(inner));
    Some(v)
}

/// Steps over a wrapper's own options (and `env`'s assignments) to the command it runs: its
/// index, or `None` when the wrapper was judged whole (`env -S`).
fn skip_options(name: &str, args: &[Word], v: &mut Verdict) -> Option<usize> {
    let value_opts = wrapper_value_opts(name);
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let Some(s) = a.lit() else { break };
        if s == "--" {
            i += 1;
            break;
        }
        if name == "env" && s.contains('=') && !s.starts_with('-') {
            let var = s.split('=').next().unwrap_or("");
            if crate::rules::DANGEROUS_VARIABLES.contains(&var) {
                v.add(
                    Risk::High,
                    say::SETS_VARIABLE_FOR_PROGRAM.with("variable", var),
                );
            }
            i += 1;
            continue;
        }
        if name == "env" && (s == "-S" || s.starts_with("--split-string")) {
            push_code(v, args.get(i + 1), "env -S");
            return None;
        }
        if !s.starts_with('-') || s == "-" {
            break;
        }
        i += 1;
        if value_opts.contains(&s) {
            i += 1;
        }
    }
    Some(i)
}

/// `busybox APPLET ARGS…`: the applet with its arguments, judged as that command; `busybox`
/// alone or with `--list`/`--help` only prints.
fn multi_call(name: &str, args: &[Word]) -> Verdict {
    let mut v = Verdict::default();
    match args.first() {
        None => v.add(Risk::Safe, say::LISTS_APPLETS.with("program", name)),
        Some(Word::Lit(s)) if s.starts_with('-') => {
            v.add(Risk::Safe, say::LISTS_APPLETS.with("program", name))
        }
        Some(Word::Lit(applet)) => {
            v.add(
                Risk::Safe,
                say::RUNS_APPLET
                    .with("program", name)
                    .with("applet", applet),
            );
            v.inner.push(Inner::Words(args.to_vec()));
        }
        Some(_) => v.add(Risk::High, &say::RUNS_DYNAMIC_COMMAND_NAME),
    }
    v
}

fn push_code(v: &mut Verdict, word: Option<&Word>, how: &str) {
    match word {
        Some(Word::Lit(code)) => v.inner.push(Inner::Code(code.clone())),
        Some(Word::Fetched(_)) => v.add(
            Risk::Critical,
            say::RUNS_DOWNLOADED_SCRIPT.with("command", how),
        ),
        Some(Word::Dyn(t)) => v.add(
            Risk::High,
            say::RUNS_DYNAMIC_SHELL_CODE
                .with("command", how)
                .with("code", t),
        ),
        None => v.add(Risk::Moderate, say::NOTHING_TO_RUN.with("command", how)),
    }
}

const SHELLS: &[&str] = &["sh", "bash", "dash", "zsh", "ksh", "mksh", "fish", "ash"];

/// Multi-call binaries: the first argument names the applet, which is what runs.
const MULTI_CALL: &[&str] = &["busybox", "toybox"];
const LANGUAGES: &[&str] = &[
    "python",
    "python2",
    "python3",
    "perl",
    "ruby",
    "node",
    "nodejs",
    "php",
    "lua",
    "deno",
    "bun",
    "Rscript",
    "osascript",
    "tclsh",
    "awk",
    "gawk",
    "mawk",
];

/// Shells and language interpreters: the code they are handed, or what arrives on standard
/// input.
pub(crate) fn interpreter(
    name: &str,
    args: &[Word],
    stdin: &Stdin,
    exp: &Expander<'_>,
) -> Option<Verdict> {
    let shell = SHELLS.contains(&name);
    let lang = Lang::of(name);
    if !shell && !LANGUAGES.contains(&name) && lang.is_none() {
        return None;
    }
    if name.ends_with("awk") {
        return Some(awk(args));
    }
    let mut v = Verdict::default();
    let version = matches!(
        args.first().and_then(Word::lit),
        Some("--version" | "-V" | "--help")
    ) || (lang.is_some() && args.first().and_then(Word::lit) == Some("-v"));
    if args.len() == 1 && version {
        v.add(Risk::Safe, &say::PRINTS_ITS_VERSION);
        return Some(v);
    }
    if let Some(lang) = lang {
        return Some(crate::interp::language(lang, name, args, stdin, exp));
    }
    let inline = if shell { ["-c", "-c"] } else { ["-c", "-e"] };
    let mut i = 0;
    while let Some(a) = args.get(i) {
        match a.lit() {
            Some(s) if inline.contains(&s) || (name == "node" && s == "--eval") => {
                if shell {
                    push_code(&mut v, args.get(i + 1), &format!("{name} -c"));
                } else {
                    v.add(Risk::Moderate, say::RUNS_INLINE_CODE.with("program", name));
                }
                return Some(v);
            }
            Some("-m") if !shell => {
                v.add(Risk::Moderate, say::RUNS_MODULE.with("program", name));
                return Some(v);
            }
            Some("-") | Some("-s") => break,
            Some("-o" | "-O" | "+o" | "+O") if shell => i += 2,
            Some(s) if s.starts_with('-') || s.starts_with('+') => i += 1,
            Some(script) => {
                v.add(Risk::Moderate, say::RUNS_SCRIPT.with("script", script));
                return Some(v);
            }
            None => {
                match a {
                    Word::Fetched(_) => v.add(
                        Risk::Critical,
                        say::RUNS_DOWNLOADED_SCRIPT.with("command", name),
                    ),
                    _ => v.add(
                        Risk::Moderate,
                        say::RUNS_DYNAMIC_SCRIPT.with("program", name),
                    ),
                }
                return Some(v);
            }
        }
    }
    // No script: it runs what arrives on standard input.
    match stdin {
        Stdin::Text(code) if shell => v.inner.push(Inner::Code(code.clone())),
        Stdin::Text(_) => v.add(
            Risk::Moderate,
            say::RUNS_HERE_DOCUMENT.with("program", name),
        ),
        Stdin::Dynamic => v.add(Risk::High, say::RUNS_DYNAMIC_CODE.with("program", name)),
        Stdin::File => v.add(
            Risk::Moderate,
            say::RUNS_SCRIPT_FROM_FILE.with("program", name),
        ),
        Stdin::Inherit => {
            v.add(
                Risk::Moderate,
                say::READS_CODE_FROM_INPUT.with("program", name),
            );
            v.runs_stdin = true;
        }
    }
    Some(v)
}

/// awk is read-only unless its program runs commands, pipes or writes files.
fn awk(args: &[Word]) -> Verdict {
    let mut v = Verdict::default();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        match a.lit() {
            Some("-f" | "--file") => {
                v.add(Risk::Moderate, &say::RUNS_AWK_FILE);
                return v;
            }
            Some("-F" | "-v") => i += 2,
            Some(s) if s.starts_with('-') => i += 1,
            Some(program) => {
                let writes = ["system", "|", ">", "getline", "close", "fflush"]
                    .iter()
                    .any(|k| program.contains(k));
                if writes {
                    v.add(Risk::Moderate, &say::RUNS_AWK_THAT_WRITES);
                } else {
                    v.add(Risk::Safe, &say::READS_TEXT_WITH_AWK);
                }
                return v;
            }
            None => {
                v.add(Risk::Moderate, &say::RUNS_DYNAMIC_AWK);
                return v;
            }
        }
    }
    v.add(Risk::Moderate, &say::RUNS_AWK_WITHOUT_PROGRAM);
    v
}
