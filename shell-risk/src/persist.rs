//! Persistence: commands that make something run later on its own — crontab changes, `at` and
//! `batch`, timers from `systemd-run`, services made to start by themselves (`systemctl
//! enable|link|edit|set-property|add-wants`, user or system) and lingering user services. Each is
//! High: a hijacked agent's way to outlive the session. Writes to the places such programs live
//! (`~/.local/bin`, `~/.config/autostart`, another repository's git hooks) are judged by path
//! (`paths::Place::Persistence`, `Place::Startup`).

use crate::Risk;
use crate::phrases as say;
use crate::readonly::with;
use crate::rules::{Verdict, has_flag, operands};
use crate::words::Word;

/// `crontab`: only listing (`-l`) reads; installing a file, reading a table on standard input
/// (`crontab -`), editing and removing all change what runs later.
pub(crate) fn crontab(args: &[Word]) -> Verdict {
    let (ops, flags) = operands(args);
    // `-u USER` names whose table; its value is not an operand.
    let user_value = args
        .iter()
        .position(|a| a.lit() == Some("-u"))
        .and_then(|i| args.get(i + 1));
    let ops: Vec<&&Word> = ops
        .iter()
        .filter(|o| user_value.is_none_or(|u| !std::ptr::eq(**o, u)))
        .collect();
    if has_flag(&flags, 'r', &[]) {
        return with(Risk::High, &say::REMOVES_CRON_JOBS);
    }
    if has_flag(&flags, 'l', &[]) && ops.is_empty() && !has_flag(&flags, 'e', &[]) {
        return with(
            Risk::Safe,
            say::ONLY_READS_COMMAND.with("command", "crontab -l"),
        );
    }
    with(Risk::High, &say::CHANGES_CRON_JOBS)
}

/// `at`, `batch`: schedule what arrives on standard input, unless they only list (`at -l`,
/// `atq`) or print a job (`at -c`).
pub(crate) fn at(name: &str, args: &[Word]) -> Verdict {
    let (_, flags) = operands(args);
    if name == "atq" || (name == "at" && has_flag(&flags, 'l', &[]) || has_flag(&flags, 'c', &[])) {
        return with(Risk::Safe, say::ONLY_READS_COMMAND.with("command", name));
    }
    if name == "atrm" || (name == "at" && has_flag(&flags, 'r', &[]) || has_flag(&flags, 'd', &[]))
    {
        return with(
            Risk::Moderate,
            say::NOT_ON_READ_ONLY_LIST.with("program", name),
        );
    }
    if args.len() == 1 && matches!(args[0].lit(), Some("-V" | "--version")) {
        return with(Risk::Safe, &say::PRINTS_ITS_VERSION);
    }
    with(Risk::High, say::SCHEDULES_COMMAND.with("program", name))
}

/// `systemctl` verbs that make a unit start on its own.
pub(crate) const PERSISTING_VERBS: &[&str] = &[
    "enable",
    "reenable",
    "link",
    "edit",
    "set-property",
    "add-wants",
    "add-requires",
    "preset",
    "preset-all",
    "set-default",
];

/// `loginctl enable-linger`: the user's services keep running (and start at boot) without a
/// login.
pub(crate) fn loginctl(args: &[Word]) -> Option<Verdict> {
    let (ops, _) = operands(args);
    (ops.first().and_then(|o| o.lit()) == Some("enable-linger"))
        .then(|| with(Risk::High, &say::ENABLES_LINGER))
}

/// `systemd-run` with a timer (`--on-calendar`, `--on-active`, …) schedules its command.
pub(crate) fn timer(args: &[Word]) -> bool {
    args.iter().filter_map(Word::lit).any(|a| {
        a.starts_with("--on-")
            || a.starts_with("--timer-property")
            || a.starts_with("--path-property")
    })
}
