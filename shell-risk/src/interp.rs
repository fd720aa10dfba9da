//! The command lines of the interpreters whose inline code is read (`python`, `node`, `deno`,
//! `bun`, `perl`, `ruby`, `php`): where the code is (`-c`, `-e`, `-E`, `-p`, `--eval`, `-r`,
//! `deno eval`, a here-document, known text on a pipe), the modules they load first (`-M`,
//! `-r`), and the files Perl's and Ruby's `-i` edit in place. The code itself is rated by
//! [`crate::inline`].

use crate::Risk;
use crate::inline::{self, Effect, Lang};
use crate::phrases as say;
use crate::rules::{Stdin, Verdict};
use crate::words::{Expander, Word};

/// What a command line says about the code it runs.
#[derive(Default)]
struct Line<'a> {
    /// Inline code, in order (`perl -e A -e B` runs both).
    code: Vec<Word>,
    /// Modules or libraries loaded before the code (`perl -MLWP::Simple`, `ruby -rnet/http`).
    modules: Vec<String>,
    /// It edits its file arguments in place (`perl -i`, `ruby -i`).
    in_place: bool,
    /// The words after the code or script: files for `-n`/`-p`, or the script's arguments.
    rest: Vec<&'a Word>,
    /// A script file (or module) it runs instead of inline code.
    script: Option<&'a Word>,
    module: Option<String>,
}

/// Rates `name ARGS` for an interpreter of `lang`.
pub(crate) fn language(
    lang: Lang,
    name: &str,
    args: &[Word],
    stdin: &Stdin,
    exp: &Expander<'_>,
) -> Verdict {
    let line = match lang {
        Lang::Python => python(args),
        Lang::JavaScript => javascript(name, args),
        Lang::Perl | Lang::Ruby => perl_or_ruby(lang, args),
        Lang::Php => php(args),
    };
    let mut v = Verdict::default();
    for m in &line.modules {
        let effects = match lang {
            Lang::Perl => inline::module_effects(Lang::Perl, m),
            Lang::Ruby => inline::module_effects(Lang::Ruby, m),
            _ => Vec::new(),
        };
        inline::apply_all(&mut v, lang, effects, exp);
    }
    if line.in_place {
        let files: Vec<Effect> = line
            .rest
            .iter()
            .map(|w| Effect::Write(w.lit().map(str::to_string)))
            .collect();
        inline::apply_all(&mut v, lang, files, exp);
    }
    if !line.code.is_empty() {
        let mut texts = Vec::new();
        for w in &line.code {
            match w.lit() {
                Some(t) => texts.push(t),
                None => v.add(
                    Risk::High,
                    say::RUNS_CODE_FROM_DYNAMIC_TEXT.with("program", name),
                ),
            }
        }
        if !texts.is_empty() {
            let rated = inline::rate(lang, name, &texts.join("\n"), exp);
            v.findings.extend(rated.findings);
            v.inner.extend(rated.inner);
        }
        return v;
    }
    if line.module.is_some() {
        v.add(Risk::Moderate, say::RUNS_MODULE.with("program", name));
        return v;
    }
    if let Some(script) = line.script {
        match script {
            Word::Fetched(_) => v.add(
                Risk::Critical,
                say::RUNS_DOWNLOADED_SCRIPT.with("command", name),
            ),
            Word::Dyn(_) => v.add(
                Risk::Moderate,
                say::RUNS_DYNAMIC_SCRIPT.with("program", name),
            ),
            Word::Lit(s) => v.add(Risk::Moderate, say::RUNS_SCRIPT.with("script", s)),
        }
        return v;
    }
    // No code on the command line: it runs what arrives on standard input.
    match stdin {
        Stdin::Text(code) => {
            let rated = inline::rate(lang, name, code, exp);
            v.findings.extend(rated.findings);
            v.inner.extend(rated.inner);
        }
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
    v
}

/// `python [-OPTIONS] (-c CODE | -m MODULE | SCRIPT | -) ARGS`.
fn python(args: &[Word]) -> Line<'_> {
    let mut line = Line::default();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        i += 1;
        let Some(s) = a.lit() else {
            line.script = Some(a);
            break;
        };
        if s == "-" || !s.starts_with('-') {
            if s != "-" {
                line.script = Some(a);
            }
            break;
        }
        if s.starts_with("--") {
            continue;
        }
        // A cluster: flags, then at most one option that takes a value (`-c`, `-m`, `-W`, `-X`).
        let cluster = &s[1..];
        for (at, c) in cluster.char_indices() {
            let rest = &cluster[at + c.len_utf8()..];
            match c {
                'c' | 'm' => {
                    let value = if rest.is_empty() {
                        i += 1;
                        args.get(i - 1)
                    } else {
                        None
                    };
                    if c == 'c' {
                        line.code.push(match value {
                            Some(w) => w.clone(),
                            None => Word::Lit(rest.to_string()),
                        });
                    } else {
                        line.module =
                            Some(value.map_or(rest.to_string(), |w| w.text().to_string()));
                    }
                    line.rest = args.get(i..).unwrap_or(&[]).iter().collect();
                    return line;
                }
                'W' | 'X' | 'Q' => {
                    if rest.is_empty() {
                        i += 1;
                    }
                    break;
                }
                _ => {}
            }
        }
    }
    line.rest = args.get(i..).unwrap_or(&[]).iter().collect();
    line
}

/// `node [OPTIONS] (-e|-p|--eval|--print CODE | SCRIPT | -)`, `deno eval [OPTIONS] CODE`,
/// `bun (-e|-p|--eval|--print) CODE`.
fn javascript<'a>(name: &str, args: &'a [Word]) -> Line<'a> {
    let mut line = Line::default();
    let mut i = 0;
    let deno = name.starts_with("deno");
    if deno {
        match args.first().and_then(Word::lit) {
            Some("eval") => i = 1,
            _ => {
                line.script = args
                    .iter()
                    .find(|a| a.lit().is_none_or(|s| !s.starts_with('-')));
                return line;
            }
        }
    }
    let value_options = [
        "-r",
        "--require",
        "--import",
        "--loader",
        "--experimental-loader",
        "--env-file",
        "-C",
        "--conditions",
        "--title",
        "--inspect-port",
        "--ext",
        "--input-type",
    ];
    while let Some(a) = args.get(i) {
        i += 1;
        let Some(s) = a.lit() else {
            line.script = Some(a);
            break;
        };
        match s {
            "-e" | "--eval" | "-p" | "--print" | "-pe" => {
                if let Some(code) = args.get(i) {
                    line.code.push(code.clone());
                }
                i += 1;
                break;
            }
            s if s.starts_with("--eval=") || s.starts_with("--print=") => {
                let code = s.split_once('=').map_or("", |(_, c)| c);
                line.code.push(Word::Lit(code.to_string()));
                break;
            }
            s if value_options.contains(&s) => i += 1,
            "-" | "--" => break,
            s if s.starts_with('-') => {}
            _ if deno => {
                line.code.push(a.clone());
                break;
            }
            _ => {
                line.script = Some(a);
                break;
            }
        }
    }
    line.rest = args.get(i..).unwrap_or(&[]).iter().collect();
    line
}

/// `perl` and `ruby` switches, clustered as they take them: `-e CODE`, `-ne`, `-pi.bak -e`,
/// `-MModule`, `-rlib`, `-I dir`, `-F:`, `-0777`, `-l`, then files.
fn perl_or_ruby(lang: Lang, args: &[Word]) -> Line<'_> {
    let mut line = Line::default();
    let mut i = 0;
    // Switches whose value is the rest of the cluster, or the next word when it is empty.
    let takes_value: &str = if lang == Lang::Perl {
        "eEMmIxdD"
    } else {
        "erIECx"
    };
    // Switches whose value can only be the rest of the cluster.
    let rest_only = "iFx";
    // Switches followed by optional digits, after which the cluster goes on (`-l0`, `-0777`).
    let digits: &str = if lang == Lang::Perl { "l0CT" } else { "0WT" };
    while let Some(a) = args.get(i) {
        i += 1;
        let Some(s) = a.lit() else {
            if line.code.is_empty() {
                line.script = Some(a);
            }
            break;
        };
        if s == "--" || s == "-" || !s.starts_with('-') || s.starts_with("--") {
            if s.starts_with("--") && s != "--" {
                continue;
            }
            if !s.starts_with('-') {
                i -= 1;
            }
            break;
        }
        let cluster = &s[1..];
        let mut skip_digits = false;
        for (at, c) in cluster.char_indices() {
            let rest = &cluster[at + c.len_utf8()..];
            if skip_digits && c.is_ascii_digit() {
                continue;
            }
            skip_digits = digits.contains(c);
            if skip_digits {
                continue;
            }
            if takes_value.contains(c) {
                let value: Option<&Word> = if rest.is_empty() {
                    i += 1;
                    args.get(i - 1)
                } else {
                    None
                };
                match c {
                    'e' | 'E' if !(lang == Lang::Ruby && c == 'E') => line.code.push(match value {
                        Some(w) => w.clone(),
                        // `-e'code'` attached: the rest of the word is the code.
                        None => Word::Lit(rest.to_string()),
                    }),
                    'M' | 'm' | 'r' => {
                        let m = value.map_or(rest, |w| w.text());
                        let m = m.trim_start_matches('-');
                        let m = m.split(['=', ' ']).next().unwrap_or(m);
                        line.modules.push(m.to_string());
                    }
                    _ => {}
                }
                break;
            }
            if rest_only.contains(c) {
                if c == 'i' {
                    line.in_place = true;
                }
                break;
            }
        }
    }
    let rest: Vec<&Word> = args.get(i..).unwrap_or(&[]).iter().collect();
    if line.code.is_empty() {
        line.script = rest.first().copied();
        line.rest = rest.into_iter().skip(1).collect();
    } else {
        line.rest = rest;
    }
    line
}

/// `php [-r CODE | -B/-R/-E CODE | -f FILE | FILE]`.
fn php(args: &[Word]) -> Line<'_> {
    let mut line = Line::default();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        i += 1;
        match a.lit() {
            Some("-r" | "-B" | "-R" | "-E") => {
                if let Some(code) = args.get(i) {
                    line.code.push(code.clone());
                }
                i += 1;
            }
            Some("-f") => {
                line.script = args.get(i);
                i += 1;
            }
            Some("-d" | "-c" | "-S" | "-t" | "-z") => i += 1,
            Some("--") => break,
            Some(s) if s.starts_with('-') => {}
            _ => {
                if line.code.is_empty() && line.script.is_none() {
                    line.script = Some(a);
                }
                break;
            }
        }
    }
    line.rest = args.get(i..).unwrap_or(&[]).iter().collect();
    line
}
