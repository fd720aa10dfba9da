//! `cargo xtask check-docs`: the README and every page in `docs/` say only what is there. Every
//! relative link resolves (the file exists; a `#anchor` is a heading of that page), and every
//! quoted command of the project's programs names subcommands and `--flags` that the program's
//! own `--help` lists (`cargo xtask` commands against xtask's usage). Findings name file:line.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

/// The programs whose quoted commands are checked, with the cargo build that makes each one and
/// where it lands under the target's `debug/` folder.
const PROGRAMS: [(&str, &str); 5] = [
    ("pcpctl", "pcpctl"),
    ("pcp-compositor", "pcp-compositor"),
    ("pcp-listen", "pcp-listen"),
    ("pcp-overlay-render", "pcp-overlay-render"),
    ("pcp-harness", "examples/pcp-harness"),
];

/// `cargo xtask` is checked against its own usage text, not a built binary.
const XTASK: &str = "cargo xtask";

/// A link or command in the docs that does not hold, named by where it is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub file: PathBuf,
    pub line: usize,
    pub message: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.file.display(), self.line, self.message)
    }
}

/// Builds the programs, then checks links and commands of `README.md` and `docs/` under `root`.
pub fn run(root: &Path, cache: &Path, xtask_usage: &str) -> Result<()> {
    crate::cargo(
        &[
            "build",
            "--package",
            "pcpctl",
            "--package",
            "pcp-compositor",
            "--package",
            "pcp-speech",
            "--package",
            "pcp-overlay",
            "--bins",
        ],
        cache,
    )?;
    crate::cargo(
        &[
            "build",
            "--package",
            "pcp-tests",
            "--example",
            "pcp-harness",
        ],
        cache,
    )?;
    let bin_dir = crate::target_dir().join("debug");
    let mut helps = BinaryHelp::new(bin_dir, xtask_usage);
    let findings = check(root, &mut |program, path| helps.help(program, path))?;
    report(root, &findings)
}

/// Prints each finding and fails when there is any.
pub fn report(root: &Path, findings: &[Finding]) -> Result<()> {
    for finding in findings {
        let shown = Finding {
            file: finding
                .file
                .strip_prefix(root)
                .unwrap_or(&finding.file)
                .to_path_buf(),
            ..finding.clone()
        };
        eprintln!("{shown}");
    }
    if !findings.is_empty() {
        bail!(
            "the docs have {} broken link(s) or command(s), listed above",
            findings.len()
        );
    }
    eprintln!("xtask: every link and quoted command in README.md and docs/ holds");
    Ok(())
}

/// The pages checked: `README.md` and every `.md` file under `docs/`, in a stable order.
pub fn pages(root: &Path) -> Result<Vec<PathBuf>> {
    let mut found = vec![root.join("README.md")];
    let mut folders = vec![root.join("docs")];
    while let Some(folder) = folders.pop() {
        let entries = std::fs::read_dir(&folder)
            .with_context(|| format!("cannot read {}", folder.display()))?;
        for entry in entries {
            let path = entry
                .with_context(|| format!("cannot read {}", folder.display()))?
                .path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                found.push(path);
            }
        }
    }
    found[1..].sort();
    Ok(found)
}

/// Checks every page under `root`; `help(program, subcommands)` gives the `--help` text of
/// `program subcommands... --help`.
pub fn check(
    root: &Path,
    help: &mut dyn FnMut(&str, &[String]) -> Result<String>,
) -> Result<Vec<Finding>> {
    let mut parsed = BTreeMap::new();
    for page in pages(root)? {
        let text = std::fs::read_to_string(&page)
            .with_context(|| format!("cannot read {}", page.display()))?;
        parsed.insert(page, Markdown::parse(&text));
    }
    let mut findings = Vec::new();
    for (page, doc) in &parsed {
        for link in &doc.links {
            if let Some(message) = check_link(page, &link.target, &parsed) {
                findings.push(Finding {
                    file: page.clone(),
                    line: link.line,
                    message,
                });
            }
        }
        for quoted in &doc.commands {
            for invocation in invocations(&quoted.text) {
                if let Some(message) = check_invocation(&invocation, help) {
                    findings.push(Finding {
                        file: page.clone(),
                        line: quoted.line,
                        message,
                    });
                }
            }
        }
    }
    Ok(findings)
}

/// One page's links, headings' anchors and quoted command texts.
#[derive(Debug, Default)]
pub struct Markdown {
    pub links: Vec<Link>,
    pub anchors: Vec<String>,
    pub commands: Vec<Quoted>,
}

/// A link's target as written, and its line (1-based).
#[derive(Debug, PartialEq, Eq)]
pub struct Link {
    pub line: usize,
    pub target: String,
}

/// Text that may hold a command: a code span, or a logical line of a code block.
#[derive(Debug, PartialEq, Eq)]
pub struct Quoted {
    pub line: usize,
    pub text: String,
}

impl Markdown {
    /// Reads links and code spans outside code blocks, headings' anchors, and the logical lines
    /// (joined at a trailing `\`) inside code blocks.
    pub fn parse(text: &str) -> Markdown {
        let mut doc = Markdown::default();
        let mut seen_slugs: HashMap<String, usize> = HashMap::new();
        let mut fence: Option<String> = None;
        let mut paragraph: Vec<(usize, &str)> = Vec::new();
        let mut continued: Option<(usize, String)> = None;
        for (index, line) in text.lines().enumerate() {
            let number = index + 1;
            let trimmed = line.trim_start();
            if let Some(marker) = &fence {
                if trimmed.starts_with(marker.as_str()) {
                    fence = None;
                    continue;
                }
                let (start, mut joined) = continued.take().unwrap_or((number, String::new()));
                match line.trim_end().strip_suffix('\\') {
                    Some(head) => {
                        joined.push_str(head);
                        joined.push(' ');
                        continued = Some((start, joined));
                    }
                    None => {
                        joined.push_str(line);
                        doc.commands.push(Quoted {
                            line: start,
                            text: joined,
                        });
                    }
                }
                continue;
            }
            if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
                doc.flush_paragraph(&mut paragraph);
                fence = Some(trimmed[..3].to_string());
                continue;
            }
            if let Some(heading) = heading_text(line) {
                doc.flush_paragraph(&mut paragraph);
                let base = slug(heading);
                let count = seen_slugs.entry(base.clone()).or_insert(0);
                doc.anchors.push(match *count {
                    0 => base,
                    n => format!("{base}-{n}"),
                });
                *count += 1;
                continue;
            }
            if line.trim().is_empty() {
                doc.flush_paragraph(&mut paragraph);
            } else {
                paragraph.push((number, line));
            }
        }
        doc.flush_paragraph(&mut paragraph);
        doc
    }

    /// Code spans may run over line breaks, so a paragraph is read as a whole; links are read
    /// with the code spans taken out (a `[x](y)` inside backticks is an example, not a link).
    fn flush_paragraph(&mut self, paragraph: &mut Vec<(usize, &str)>) {
        let mut outside = String::new();
        let mut line_of = Vec::new();
        let mut span: Option<(usize, usize, String)> = None;
        for (number, line) in paragraph.drain(..) {
            let chars: Vec<char> = line.chars().collect();
            let mut i = 0;
            while i < chars.len() {
                if chars[i] == '`' {
                    let run = chars[i..].iter().take_while(|c| **c == '`').count();
                    match &mut span {
                        Some((ticks, start, text)) if *ticks == run => {
                            self.commands.push(Quoted {
                                line: *start,
                                text: std::mem::take(text),
                            });
                            span = None;
                        }
                        Some((_, _, text)) => text.extend(&chars[i..i + run]),
                        None => span = Some((run, number, String::new())),
                    }
                    i += run;
                    continue;
                }
                match &mut span {
                    Some((_, _, text)) => text.push(chars[i]),
                    None => {
                        outside.push(chars[i]);
                        line_of.push(number);
                    }
                }
                i += 1;
            }
            match &mut span {
                Some((_, _, text)) => text.push(' '),
                None => {
                    outside.push('\n');
                    line_of.push(number);
                }
            }
        }
        for (offset, target) in link_targets(&outside) {
            let line = outside[..offset].chars().count();
            self.links.push(Link {
                line: line_of.get(line).copied().unwrap_or(0),
                target,
            });
        }
    }
}

/// A heading's text: `#` to `######`, a space, then the text (closing `#`s dropped).
fn heading_text(line: &str) -> Option<&str> {
    let hashes = line.chars().take_while(|c| *c == '#').count();
    if !(1..=6).contains(&hashes) {
        return None;
    }
    let rest = line[hashes..].strip_prefix(' ')?;
    Some(rest.trim().trim_end_matches('#').trim_end())
}

/// The anchor a heading gets on GitHub and in mdBook: lower case, letters, digits, `-` and `_`
/// kept, spaces made `-`, everything else dropped.
pub fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// Every `](target)` in the text with its byte offset: inline links and images.
fn link_targets(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = text[from..].find("](") {
        let start = from + at + 2;
        let Some(len) = text[start..].find(')') else {
            break;
        };
        // A title after the target ("… "title"") is not part of it.
        let target = text[start..start + len]
            .split_whitespace()
            .next()
            .unwrap_or("");
        found.push((from + at, target.to_string()));
        from = start + len;
    }
    found
}

/// Why a link from `page` to `target` does not resolve, or `None` when it does.
fn check_link(page: &Path, target: &str, parsed: &BTreeMap<PathBuf, Markdown>) -> Option<String> {
    if target.is_empty() {
        return Some("a link with no target".into());
    }
    if target.contains("://") || target.starts_with("mailto:") {
        return None;
    }
    let (path, anchor) = match target.split_once('#') {
        Some((path, anchor)) => (path, Some(anchor)),
        None => (target, None),
    };
    let file = if path.is_empty() {
        page.to_path_buf()
    } else {
        page.parent()?.join(path)
    };
    if !file.exists() {
        return Some(format!("link to {target}: {path} does not exist"));
    }
    let anchor = anchor?;
    let normalized = normalize(&file);
    let Some(doc) = parsed
        .iter()
        .find(|(p, _)| normalize(p) == normalized)
        .map(|(_, d)| d)
    else {
        return Some(format!(
            "link to {target}: anchors are checked only in README.md and docs/, and {path} is neither"
        ));
    };
    if doc.anchors.iter().any(|a| a == anchor) {
        None
    } else {
        Some(format!(
            "link to {target}: no heading of {} makes the anchor #{anchor}",
            if path.is_empty() { "this page" } else { path }
        ))
    }
}

/// `a/b/../c` as `a/c`, without touching the file system (the target exists already).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// One program named in a quoted command, with the words that follow it up to the end of that
/// command (a pipe, `;`, `&&`, a redirection, a comment, or `--` before a child command).
#[derive(Debug, PartialEq, Eq)]
pub struct Invocation {
    pub program: String,
    pub args: Vec<String>,
}

/// The invocations of the checked programs in one quoted text. `cargo run -p X` and `cargo
/// build -p X` name a package, not a command; `--bin X -- ARGS` and `--example X -- ARGS` run X
/// with ARGS.
pub fn invocations(text: &str) -> Vec<Invocation> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let mut found = Vec::new();
    for (i, word) in words.iter().enumerate() {
        let previous = i.checked_sub(1).map(|p| words[p]);
        if *word == "cargo" && words.get(i + 1) == Some(&"xtask") {
            found.push(Invocation {
                program: XTASK.into(),
                args: command_words(&words[i + 2..]),
            });
            continue;
        }
        let Some(program) = program_named(word) else {
            continue;
        };
        let args = match previous {
            Some("--bin" | "--example") => match words[i + 1..].iter().position(|w| *w == "--") {
                Some(dashes) => command_words(&words[i + 2 + dashes..]),
                None => continue,
            },
            Some("-p" | "--package" | "--path") => continue,
            _ => command_words(&words[i + 1..]),
        };
        found.push(Invocation {
            program: program.into(),
            args,
        });
    }
    found
}

/// The checked program a word names: its name alone or a path ending in it (not `NAME=path`).
fn program_named(word: &str) -> Option<&'static str> {
    if word.contains('=') {
        return None;
    }
    PROGRAMS
        .iter()
        .map(|(name, _)| *name)
        .find(|name| word == *name || word.ends_with(&format!("/{name}")))
}

/// The words of one command: up to a pipe outside `[...]`, `;`, `&&`, `||`, a redirection, a
/// `#` comment or a lone `--` (the rest belongs to the program it starts).
fn command_words(words: &[&str]) -> Vec<String> {
    let mut depth: i32 = 0;
    let mut out = Vec::new();
    for word in words {
        let stop = matches!(*word, "--" | ";" | "&&" | "||")
            || word.starts_with('#')
            || word.starts_with('>')
            || word.starts_with("2>")
            || (*word == "|" && depth <= 0);
        if stop {
            break;
        }
        depth += word.matches('[').count() as i32 - word.matches(']').count() as i32;
        out.push((*word).to_string());
    }
    out
}

/// Why the invocation does not match the program's `--help`, or `None` when it does.
fn check_invocation(
    invocation: &Invocation,
    help: &mut dyn FnMut(&str, &[String]) -> Result<String>,
) -> Option<String> {
    let shown = |path: &[String]| {
        std::iter::once(invocation.program.as_str())
            .chain(path.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut path: Vec<String> = Vec::new();
    let mut text = match help(&invocation.program, &path) {
        Ok(text) => text,
        Err(e) => return Some(format!("{}: {e:#}", invocation.program)),
    };
    for word in &invocation.args {
        let subcommands = subcommands(&text);
        if subcommands.is_empty() || !is_word(word) {
            break;
        }
        if !subcommands.iter().any(|s| s == word) {
            return Some(format!(
                "`{} {word}`: {} has no subcommand `{word}` (it has: {})",
                shown(&path),
                shown(&path),
                subcommands.join(", ")
            ));
        }
        // `cargo xtask` has one level of commands, and passes some flags on to the programs it
        // starts: only its command is checked.
        if invocation.program == XTASK {
            return None;
        }
        path.push(word.clone());
        text = match help(&invocation.program, &path) {
            Ok(text) => text,
            Err(e) => return Some(format!("{}: {e:#}", shown(&path))),
        };
    }
    if invocation.program == XTASK {
        return None;
    }
    for flag in invocation.args.iter().filter_map(|w| long_flag(w)) {
        if !lists_flag(&text, flag) {
            return Some(format!(
                "`{} {flag}`: `{} --help` lists no {flag}",
                shown(&path),
                shown(&path)
            ));
        }
    }
    None
}

/// A subcommand-shaped word: lower case letters, digits and `-`, starting with a letter.
fn is_word(word: &str) -> bool {
    word.starts_with(|c: char| c.is_ascii_lowercase())
        && word
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// `--name` in a word like `[--name`, `--name=VALUE` or `--name]...`.
fn long_flag(word: &str) -> Option<&str> {
    let word = word.trim_start_matches(['[', '(']);
    let rest = word.strip_prefix("--")?;
    let len = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .unwrap_or(rest.len());
    (len > 0 && rest.starts_with(|c: char| c.is_ascii_alphabetic())).then(|| &word[..2 + len])
}

/// Whether help text lists the flag as a whole word (`--out` does not match `--output`).
fn lists_flag(help: &str, flag: &str) -> bool {
    help.match_indices(flag).any(|(at, _)| {
        let after = help[at + flag.len()..].chars().next();
        let before = help[..at].chars().next_back();
        !after.is_some_and(|c| c.is_ascii_alphanumeric() || c == '-')
            && !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '-')
    })
}

/// The subcommands a help text lists: clap's `Commands:` section (without `help`), or xtask's
/// `usage: cargo xtask <a|b|c>` line.
pub fn subcommands(help: &str) -> Vec<String> {
    if let Some(line) = help.lines().find(|l| l.starts_with("usage: cargo xtask <")) {
        let inner = line
            .trim_start_matches("usage: cargo xtask <")
            .trim_end()
            .trim_end_matches('>');
        return inner.split('|').map(str::to_string).collect();
    }
    let mut found = Vec::new();
    let mut inside = false;
    for line in help.lines() {
        if line.trim_end() == "Commands:" {
            inside = true;
            continue;
        }
        if !inside {
            continue;
        }
        if line.trim().is_empty() || !line.starts_with("  ") {
            break;
        }
        // An entry is indented two spaces; its description's continuation lines are indented
        // further.
        if let Some(name) = line
            .strip_prefix("  ")
            .filter(|l| !l.starts_with(' '))
            .and_then(|l| l.split_whitespace().next())
            && name != "help"
        {
            found.push(name.to_string());
        }
    }
    found
}

/// `--help` of the built programs, each asked once.
struct BinaryHelp<'a> {
    bin_dir: PathBuf,
    xtask_usage: &'a str,
    seen: HashMap<(String, Vec<String>), String>,
}

impl<'a> BinaryHelp<'a> {
    fn new(bin_dir: PathBuf, xtask_usage: &'a str) -> Self {
        BinaryHelp {
            bin_dir,
            xtask_usage,
            seen: HashMap::new(),
        }
    }

    fn help(&mut self, program: &str, path: &[String]) -> Result<String> {
        if program == XTASK {
            return Ok(self.xtask_usage.to_string());
        }
        let key = (program.to_string(), path.to_vec());
        if let Some(text) = self.seen.get(&key) {
            return Ok(text.clone());
        }
        let file = PROGRAMS
            .iter()
            .find(|(name, _)| *name == program)
            .map(|(_, file)| self.bin_dir.join(file))
            .with_context(|| format!("{program} is not a program this check knows"))?;
        let out = Command::new(&file)
            .args(path)
            .arg("--help")
            .output()
            .with_context(|| format!("cannot run {}", file.display()))?;
        if !out.status.success() {
            bail!(
                "`{program} {} --help` failed ({}): {}",
                path.join(" "),
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        self.seen.insert(key, text.clone());
        Ok(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PCPCTL_HELP: &str = "Talk to pcp-confirm

Usage: pcpctl <COMMAND>

Commands:
  validate  Check a config file
  audit     Print the audit log, or verify its hash chain
            (`pcpctl audit verify`).
  help      Print this message

Options:
  -h, --help     Print help
";
    const AUDIT_HELP: &str = "Usage: pcpctl audit [OPTIONS] [COMMAND]

Commands:
  verify  Verify the chain

Options:
      --json          One JSON object a line
      --state <FILE>  The state file
";
    const VERIFY_HELP: &str = "Usage: pcpctl audit verify [OPTIONS]

Options:
      --state <FILE>  The state file
";

    fn fake_help(program: &str, path: &[String]) -> Result<String> {
        let path: Vec<&str> = path.iter().map(String::as_str).collect();
        match (program, path.as_slice()) {
            ("pcpctl", []) => Ok(PCPCTL_HELP.into()),
            ("pcpctl", ["audit"]) => Ok(AUDIT_HELP.into()),
            ("pcpctl", ["audit", "verify"]) => Ok(VERIFY_HELP.into()),
            ("pcpctl", ["validate"]) => Ok("Options:\n      --config <F>\n".into()),
            ("cargo xtask", []) => Ok("usage: cargo xtask <setup|test|demo>\n".into()),
            _ => bail!("no help for {program} {path:?}"),
        }
    }

    fn write(root: &Path, file: &str, text: &str) {
        let path = root.join(file);
        std::fs::create_dir_all(path.parent().expect("a file has a folder")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }

    fn messages(root: &Path) -> Vec<String> {
        check(root, &mut fake_help)
            .expect("the pages read")
            .into_iter()
            .map(|f| {
                format!(
                    "{}:{}: {}",
                    f.file.strip_prefix(root).expect("under root").display(),
                    f.line,
                    f.message
                )
            })
            .collect()
    }

    #[test]
    fn slugs_follow_github() {
        assert_eq!(
            slug("Listening once: `pcp-listen`"),
            "listening-once-pcp-listen"
        );
        assert_eq!(
            slug("The display step, and why it plugs a new card in"),
            "the-display-step-and-why-it-plugs-a-new-card-in"
        );
        assert_eq!(
            slug("Voice confirmation (`pcp-speech`)"),
            "voice-confirmation-pcp-speech"
        );
    }

    #[test]
    fn good_links_and_commands_pass() {
        let dir = tempfile::tempdir().expect("tempdir");
        write(
            dir.path(),
            "README.md",
            "# Top\n\nSee [a](docs/a.md#second-part), [the code](src/) and\n[here](#top).\n\
             Run `pcpctl audit verify --state F` or `cargo xtask demo`.\n",
        );
        write(
            dir.path(),
            "docs/a.md",
            "# A\n\n## Second part\n\n```sh\npcpctl validate \\\n  --config F  # checks it\n```\n\
             [back](../README.md#top) [web](https://example.org/x#y)\n",
        );
        std::fs::create_dir_all(dir.path().join("src")).expect("mkdir");
        assert_eq!(messages(dir.path()), Vec::<String>::new());
    }

    #[test]
    fn a_broken_link_an_anchor_and_a_command_are_named_with_their_line() {
        let dir = tempfile::tempdir().expect("tempdir");
        write(
            dir.path(),
            "README.md",
            "# Top\n\nA [gone](docs/gone.md) page\nand a [bad anchor](docs/a.md#nowhere).\n\
             `pcpctl listen`\n",
        );
        write(
            dir.path(),
            "docs/a.md",
            "# A\n\n```sh\npcpctl audit \\\n  verify --json\ncargo xtask bake\n```\n",
        );
        assert_eq!(
            messages(dir.path()),
            [
                "README.md:3: link to docs/gone.md: docs/gone.md does not exist",
                "README.md:4: link to docs/a.md#nowhere: no heading of docs/a.md makes the \
                 anchor #nowhere",
                "README.md:5: `pcpctl listen`: pcpctl has no subcommand `listen` (it has: \
                 validate, audit)",
                "docs/a.md:4: `pcpctl audit verify --json`: `pcpctl audit verify --help` lists \
                 no --json",
                "docs/a.md:6: `cargo xtask bake`: cargo xtask has no subcommand `bake` (it has: \
                 setup, test, demo)",
            ]
        );
    }

    #[test]
    fn cargo_package_names_are_not_commands_but_arguments_after_dashes_are() {
        assert_eq!(
            invocations("cargo build -p pcpctl --bin pcpctl"),
            Vec::<Invocation>::new()
        );
        assert_eq!(
            invocations("cargo run -p pcpctl --bin pcpctl -- audit --json | jq . # x"),
            [Invocation {
                program: "pcpctl".into(),
                args: vec!["audit".into(), "--json".into()]
            }]
        );
        assert_eq!(
            invocations("PCPCTL=target/debug/pcpctl target/debug/pcpctl [--a | --b] x"),
            [Invocation {
                program: "pcpctl".into(),
                args: vec!["[--a".into(), "|".into(), "--b]".into(), "x".into()]
            }]
        );
    }

    #[test]
    fn links_inside_code_spans_are_not_links() {
        let doc = Markdown::parse("Write `[x](nowhere.md)` for a link; see [y](y.md).\n");
        assert_eq!(
            doc.links,
            [Link {
                line: 1,
                target: "y.md".into()
            }]
        );
    }

    #[test]
    fn flags_match_whole_words_only() {
        assert!(lists_flag("  --out <FILE>\n  --output <SPEC>", "--out"));
        assert!(!lists_flag("  --output <SPEC>", "--out"));
        assert_eq!(long_flag("[--params"), Some("--params"));
        assert_eq!(long_flag("--since=12h"), Some("--since"));
        assert_eq!(long_flag("--"), None);
    }
}
