//! Commands that copy, write or change files and processes by their arguments: `dd`,
//! `chmod`/`chown` and the like, `cp`/`mv`/`install`/`ln`, `tee`, `kill`.

use crate::Risk;
use crate::paths::{self, Place};
use crate::phrases as say;
use crate::rules::{Verdict, has_flag, operands, write_finding};
use crate::words::{Expander, Word};

pub(crate) fn dd(args: &[Word], exp: &Expander<'_>) -> Verdict {
    let mut v = Verdict::default();
    v.add(Risk::Moderate, &say::COPIES_RAW_DATA);
    for a in args {
        match a {
            Word::Lit(s) => {
                if let Some(dest) = s.strip_prefix("of=") {
                    let w = Word::Lit(dest.to_string());
                    if let Some((risk, why)) = write_finding(&w, false, exp) {
                        v.add(risk, why);
                    }
                }
            }
            other if other.text().starts_with("of=") => {
                v.add(Risk::High, &say::WRITES_RAW_DATA_DYNAMIC);
            }
            _ => {}
        }
    }
    v
}

pub(crate) fn permissions(name: &str, args: &[Word], exp: &Expander<'_>) -> Verdict {
    let (ops, flags) = operands(args);
    let recursive = has_flag(&flags, 'R', &["recursive"]);
    let mut v = Verdict::default();
    // chmod, chown and chgrp name the mode or owner first; chattr and setfacl take it as
    // option-like words, which `operands` already set aside only when they start with `-`.
    let skip = usize::from(matches!(name, "chmod" | "chown" | "chgrp" | "chattr"));
    if name == "chmod"
        && let Some(Word::Lit(mode)) = ops.first()
        && (mode.contains('s') || (mode.len() == 4 && mode.starts_with(['2', '4', '6'])))
    {
        v.add(Risk::High, &say::SETS_SETUID);
    }
    let verb = if name == "chmod" || name == "chattr" || name == "setfacl" {
        &say::CHANGES_PERMISSIONS_OF
    } else {
        &say::CHANGES_OWNER_OF
    };
    let targets = ops.iter().skip(skip);
    let mut any = false;
    for t in targets {
        any = true;
        let Some(path) = t.lit().and_then(|s| exp.resolve(&paths::glob_base(s).0)) else {
            let risk = if recursive {
                Risk::High
            } else {
                Risk::Moderate
            };
            v.add(risk, say::CHANGES_DYNAMIC_PATHS.with_phrase("verb", verb));
            continue;
        };
        let place = paths::place(&path, exp.ctx);
        let risk = match place {
            Place::Root | Place::Home | Place::System if recursive => Risk::Critical,
            Place::Root | Place::Home | Place::System | Place::Startup => Risk::High,
            Place::Outside | Place::Dotfile | Place::Persistence | Place::WorkingFolder
                if recursive =>
            {
                Risk::High
            }
            _ => Risk::Moderate,
        };
        let phrase = if recursive {
            &say::CHANGES_PLACE_RECURSIVELY
        } else {
            &say::CHANGES_PLACE
        };
        v.add(
            risk,
            phrase
                .with_phrase("verb", verb)
                .with_phrase("place", place.describe())
                .with("path", path.display()),
        );
    }
    if !any {
        v.add(Risk::Moderate, say::CHANGES_FILES.with_phrase("verb", verb));
    }
    v
}

pub(crate) fn copy_like(name: &str, args: &[Word], exp: &Expander<'_>) -> Verdict {
    let (ops, flags) = operands(args);
    let mut v = Verdict::default();
    v.add(Risk::Moderate, say::WRITES_FILES.with("program", name));
    let target_dir = args
        .iter()
        .position(|a| a.lit() == Some("-t"))
        .and_then(|i| args.get(i + 1))
        .or_else(|| {
            flags
                .iter()
                .find_map(|f| f.strip_prefix("--target-directory="))
                .map(|_| &args[0])
        });
    let dest = target_dir.or_else(|| {
        if ops.len() >= 2 {
            ops.last().copied()
        } else {
            None
        }
    });
    if let Some(d) = dest
        && let Some((risk, why)) = write_finding(d, false, exp)
    {
        v.add(risk, why);
    }
    if name == "mv" {
        let sources = ops.len().saturating_sub(usize::from(target_dir.is_none()));
        for s in ops.iter().take(sources) {
            if let Some(path) = s.lit().and_then(|t| exp.resolve(t)) {
                let place = paths::place(&path, exp.ctx);
                let risk = match place {
                    Place::Root | Place::Home | Place::System => Risk::Critical,
                    Place::Startup | Place::Dotfile | Place::WorkingFolder | Place::Persistence => {
                        Risk::High
                    }
                    _ => continue,
                };
                v.add(
                    risk,
                    say::MOVES_AWAY
                        .with_phrase("place", place.describe())
                        .with("path", path.display()),
                );
            }
        }
    }
    v
}

pub(crate) fn tee(args: &[Word], exp: &Expander<'_>) -> Verdict {
    let (ops, flags) = operands(args);
    let append = has_flag(&flags, 'a', &["append"]);
    let mut v = Verdict::safe(&say::COPIES_INPUT);
    for o in ops {
        if let Some((risk, why)) = write_finding(o, append, exp) {
            v.add(risk, why);
        }
    }
    v
}

pub(crate) fn kill(args: &[Word]) -> Verdict {
    let mut v = Verdict::default();
    let mut seen_signal = false;
    let mut targets = 0;
    for a in args {
        match a.lit() {
            Some("-l" | "-L") => return Verdict::safe(&say::LISTS_SIGNALS),
            Some(s) if !seen_signal && s.starts_with('-') && s != "-1" => seen_signal = true,
            Some("-s" | "-n") => {}
            Some("-1") if seen_signal => {
                v.add(Risk::Critical, &say::SIGNALS_EVERY_REACHABLE_PROCESS);
                targets += 1;
            }
            Some("1") | Some("-1") => {
                v.add(Risk::Critical, &say::SIGNALS_INIT);
                targets += 1;
            }
            Some(_) => targets += 1,
            None => {
                v.add(Risk::High, &say::SIGNALS_DYNAMIC_PROCESSES);
                targets += 1;
            }
        }
    }
    if targets > 0 {
        v.add(Risk::Moderate, &say::SENDS_SIGNAL);
    }
    v
}
