//! The read-only side: `find` (read-only unless it deletes, writes lists or runs a command per
//! file) and the allow-list of read-only commands with the flags that would make each one write.

use crate::Risk;
use crate::message::Message;
use crate::phrases as say;
use crate::rules::{Inner, Verdict, operands, write_finding};
use crate::words::{Expander, Word};

/// `find`: read-only unless it deletes, writes lists, or runs a command per file.
pub(crate) fn find(args: &[Word], exp: &Expander<'_>) -> Verdict {
    let mut v = Verdict::default();
    let roots: Vec<&Word> = args
        .iter()
        .take_while(|a| {
            a.lit()
                .is_none_or(|s| !s.starts_with('-') && s != "(" && s != "!")
        })
        .collect();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        i += 1;
        match a.lit() {
            Some("-exec" | "-execdir" | "-ok" | "-okdir") => {
                let mut cmd = Vec::new();
                while let Some(w) = args.get(i) {
                    i += 1;
                    match w.lit() {
                        Some(";" | "+") => break,
                        // `{}` is each file found: something inside the search roots.
                        Some(s) if s.contains("{}") => {
                            cmd.extend(found_files(&roots, s));
                        }
                        _ => cmd.push(w.clone()),
                    }
                }
                if cmd.is_empty() {
                    v.add(Risk::Moderate, &say::RUNS_EMPTY_EXEC);
                } else {
                    v.inner.push(Inner::Words(cmd));
                }
            }
            Some("-delete") => {
                let mut rm = vec![Word::Lit("rm".into()), Word::Lit("-r".into())];
                if roots.is_empty() {
                    rm.push(Word::Lit(".".into()));
                }
                for r in &roots {
                    // find deletes what is *inside* its roots.
                    rm.push(match r {
                        Word::Lit(s) => Word::Lit(format!("{}/*", s.trim_end_matches('/'))),
                        other => (*other).clone(),
                    });
                }
                v.inner.push(Inner::Words(rm));
            }
            Some("-fprint" | "-fprint0" | "-fprintf" | "-fls") => {
                if let Some(w) = args.get(i)
                    && let Some(f) = write_finding(w, false, exp)
                {
                    v.add(f.0, f.1);
                }
            }
            _ => {}
        }
    }
    if v.findings.is_empty() && v.inner.is_empty() {
        v.add(Risk::Safe, say::ONLY_READS_COMMAND.with("command", "find"));
    }
    v
}

/// What `{}` stands for in `find -exec`: files inside each literal search root (as a glob under
/// it), or a word known only when it runs.
fn found_files(roots: &[&Word], placeholder: &str) -> Vec<Word> {
    if placeholder != "{}" {
        return vec![Word::Dyn(placeholder.to_string())];
    }
    if roots.is_empty() {
        return vec![Word::Lit("./*".to_string())];
    }
    roots
        .iter()
        .map(|r| match r {
            Word::Lit(s) => Word::Lit(format!("{}/*", s.trim_end_matches('/'))),
            other => (*other).clone(),
        })
        .collect()
}

/// A read-only command and the flags that would make it write or run something.
struct SafeEntry {
    name: &'static str,
    short: &'static str,
    long: &'static [&'static str],
    /// Most operands it may have and still only read (`uniq in out` writes `out`).
    max_operands: usize,
}

const fn safe(name: &'static str) -> SafeEntry {
    SafeEntry {
        name,
        short: "",
        long: &[],
        max_operands: usize::MAX,
    }
}

#[rustfmt::skip]
const SAFE: &[SafeEntry] = &[
    safe("ls"),
    safe("dir"),
    safe("cat"),
    safe("tac"),
    safe("nl"),
    safe("head"),
    safe("tail"),
    safe("less"),
    safe("more"),
    safe("wc"),
    safe("grep"),
    safe("egrep"),
    safe("fgrep"),
    safe("zgrep"),
    safe("zcat"),
    safe("ag"),
    safe("ack"),
    safe("pwd"),
    safe("echo"),
    safe("printf"),
    safe("true"),
    safe("false"),
    safe(":"),
    safe("which"),
    safe("type"),
    safe("whereis"),
    safe("whoami"),
    safe("id"),
    safe("groups"),
    safe("uname"),
    safe("cal"),
    safe("uptime"),
    safe("df"),
    safe("du"),
    safe("free"),
    safe("ps"),
    safe("pgrep"),
    safe("pidof"),
    safe("printenv"),
    safe("stat"),
    safe("realpath"),
    safe("readlink"),
    safe("dirname"),
    safe("basename"),
    safe("cut"),
    safe("tr"),
    safe("fold"),
    safe("fmt"),
    safe("column"),
    safe("comm"),
    safe("diff"),
    safe("cmp"),
    safe("jq"),
    safe("seq"),
    safe("test"),
    safe("["),
    safe("[["),
    safe("sha1sum"),
    safe("sha256sum"),
    safe("sha512sum"),
    safe("md5sum"),
    safe("b2sum"),
    safe("cksum"),
    safe("od"),
    safe("hexdump"),
    safe("strings"),
    safe("man"),
    safe("whatis"),
    safe("rev"),
    safe("expand"),
    safe("paste"),
    safe("join"),
    safe("lsof"),
    safe("lsblk"),
    safe("findmnt"),
    safe("lscpu"),
    safe("lsusb"),
    safe("lspci"),
    safe("lsmod"),
    safe("nproc"),
    safe("arch"),
    safe("locale"),
    safe("tty"),
    safe("who"),
    safe("w"),
    safe("getent"),
    safe("sleep"),
    safe("wait"),
    safe("jobs"),
    safe("history"),
    safe("file"),
    safe("nm"),
    safe("readelf"),
    safe("objdump"),
    safe("ss"),
    safe("netstat"),
    safe("cd"),
    safe("help"),
    safe("tput"),
    safe("clear"),
    safe("numfmt"),
    safe("sum"),
    safe("base64"),
    safe("iconv"),
    safe("diff3"),
    safe("sdiff"),
    safe("env"),
    SafeEntry {
        name: "rg",
        short: "",
        long: &["pre", "pre-glob"],
        max_operands: usize::MAX,
    },
    SafeEntry {
        name: "sort",
        short: "o",
        long: &["output", "compress-program"],
        max_operands: usize::MAX,
    },
    SafeEntry {
        name: "uniq",
        short: "",
        long: &[],
        max_operands: 1,
    },
    SafeEntry {
        name: "tree",
        short: "o",
        long: &[],
        max_operands: usize::MAX,
    },
    SafeEntry {
        name: "date",
        short: "s",
        long: &["set"],
        max_operands: 0,
    },
    SafeEntry {
        name: "hostname",
        short: "Fb",
        long: &["file", "boot"],
        max_operands: 0,
    },
    SafeEntry {
        name: "xxd",
        short: "",
        long: &[],
        max_operands: 1,
    },
    SafeEntry {
        name: "yq",
        short: "i",
        long: &["inplace"],
        max_operands: usize::MAX,
    },
    SafeEntry {
        name: "journalctl",
        short: "",
        long: &[
            "vacuum-size",
            "vacuum-time",
            "vacuum-files",
            "rotate",
            "flush",
            "relinquish-var",
            "sync",
        ],
        max_operands: usize::MAX,
    },
    SafeEntry {
        name: "mount",
        short: "",
        long: &[],
        max_operands: 0,
    },
    SafeEntry {
        name: "sysctl",
        short: "wp",
        long: &["write", "load", "system"],
        max_operands: usize::MAX,
    },
];

pub(crate) fn safe_entry(name: &str, args: &[Word]) -> Option<Verdict> {
    let entry = SAFE.iter().find(|e| e.name == name)?;
    let (ops, flags) = operands(args);
    let bad_flag = flags.iter().any(|f| {
        if let Some(l) = f.strip_prefix("--") {
            entry.long.contains(&l.split('=').next().unwrap_or(l))
        } else {
            f.chars().skip(1).any(|c| entry.short.contains(c))
        }
    });
    // `date +FORMAT` only formats.
    let counted = ops
        .iter()
        .filter(|o| !(name == "date" && o.lit().is_some_and(|s| s.starts_with('+'))))
        .count();
    if bad_flag || counted > entry.max_operands {
        return Some(moderate(say::WRITING_OPTIONS.with("program", name)));
    }
    Some(Verdict {
        findings: vec![(Risk::Safe, say::ONLY_READS_COMMAND.with("command", name))],
        ..Verdict::default()
    })
}

pub(crate) fn moderate(why: impl Into<Message>) -> Verdict {
    let mut v = Verdict::default();
    v.add(Risk::Moderate, why);
    v
}

pub(crate) fn with(risk: Risk, why: impl Into<Message>) -> Verdict {
    let mut v = Verdict::default();
    v.add(risk, why);
    v
}
