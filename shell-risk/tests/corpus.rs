//! The labelled corpus (`corpus.tsv`): commands as agents and people type them, labelled by a
//! reviewer. No command labelled High or Critical may be classified lower than its label, at
//! least 95 % of the Safe ones must be Safe, and at least 20 benign inline-code commands (tagged
//! `+inline`, labelled Safe or Moderate) are there, each rated at most Moderate. Prints the
//! confusion table (`--nocapture`).

use std::collections::BTreeMap;
use std::path::PathBuf;

use pcp_shell_risk::{Context, Risk, classify};

const CORPUS: &str = include_str!("corpus.tsv");
const DEFAULT_CWD: &str = "/home/dev/project";
const HOME: &str = "/home/dev";

struct Case {
    line: usize,
    label: Risk,
    /// Inline code for another interpreter (`+inline`).
    inline: bool,
    cwd: String,
    command: String,
}

fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    for (i, line) in CORPUS.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let mut parts = line.splitn(3, '\t');
        let (Some(label), Some(cwd), Some(command)) = (parts.next(), parts.next(), parts.next())
        else {
            panic!("corpus.tsv:{}: expected LABEL<TAB>CWD<TAB>COMMAND", i + 1);
        };
        let mut tags = label.split('+');
        let level = tags.next().unwrap_or("");
        let Some(label_risk) = Risk::parse(level) else {
            panic!("corpus.tsv:{}: `{level}` is not a risk level", i + 1);
        };
        let mut inline = false;
        for tag in tags {
            match tag {
                "inline" => inline = true,
                other => panic!("corpus.tsv:{}: unknown tag `{other}`", i + 1),
            }
        }
        let cwd = if cwd == "-" { DEFAULT_CWD } else { cwd };
        out.push(Case {
            line: i + 1,
            label: label_risk,
            inline,
            cwd: cwd.to_string(),
            command: unescape(command),
        });
    }
    out
}

/// `\\n` is a newline, `\\t` a tab, `\\\\` a backslash; any other backslash stays.
fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('\\') => out.push('\\'),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

#[test]
fn corpus_meets_the_bar() {
    let cases = cases();
    assert!(
        cases.len() >= 590,
        "the corpus holds {} commands",
        cases.len()
    );
    let levels = [Risk::Safe, Risk::Moderate, Risk::High, Risk::Critical];
    let mut table: BTreeMap<(Risk, Risk), usize> = BTreeMap::new();
    let mut under = Vec::new();
    let mut benign_inline = 0;
    for c in &cases {
        let ctx = Context::new(PathBuf::from(&c.cwd), Some(PathBuf::from(HOME)));
        let got = classify(&c.command, &ctx);
        *table.entry((c.label, got.risk)).or_default() += 1;
        if c.label >= Risk::High && got.risk < c.label {
            under.push(format!(
                "corpus.tsv:{}: `{}` labelled {} classified {} ({})",
                c.line,
                c.command,
                c.label,
                got.risk,
                got.summary()
            ));
        }
        if c.inline && c.label <= Risk::Moderate {
            benign_inline += 1;
            if got.risk > Risk::Moderate {
                under.push(format!(
                    "corpus.tsv:{}: benign inline code `{}` rated {} ({})",
                    c.line,
                    c.command,
                    got.risk,
                    got.summary()
                ));
            }
        }
        if c.label != got.risk {
            println!(
                "differs: line {} label {} got {}: {} — {}",
                c.line,
                c.label,
                got.risk,
                c.command.replace('\n', "\\n"),
                got.summary()
            );
        }
    }
    println!("\nlabel \\ classified   safe  moderate  high  critical  total");
    for label in levels {
        let row: Vec<usize> = levels
            .iter()
            .map(|g| table.get(&(label, *g)).copied().unwrap_or(0))
            .collect();
        let total: usize = row.iter().sum();
        println!(
            "{:<20} {:>5} {:>9} {:>5} {:>9} {:>6}",
            label.as_str(),
            row[0],
            row[1],
            row[2],
            row[3],
            total
        );
    }
    let safe_total: usize = levels
        .iter()
        .map(|g| table.get(&(Risk::Safe, *g)).copied().unwrap_or(0))
        .sum();
    let safe_ok = table.get(&(Risk::Safe, Risk::Safe)).copied().unwrap_or(0);
    let share = safe_ok as f64 * 100.0 / safe_total.max(1) as f64;
    println!("Safe classified Safe: {safe_ok}/{safe_total} = {share:.1} %");
    println!(
        "High/Critical classified lower than their label: {}",
        under.len()
    );
    println!("Benign inline code rated at most Moderate: {benign_inline} commands");
    assert!(under.is_empty(), "under-classified:\n{}", under.join("\n"));
    assert!(share >= 95.0, "only {share:.1} % of Safe commands are Safe");
    assert!(
        benign_inline >= 20,
        "only {benign_inline} benign inline-code commands"
    );
}
