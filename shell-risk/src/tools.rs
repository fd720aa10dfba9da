//! Tools judged by subcommand: systemd and `service` (stopping services, the firewall, power),
//! `ip`, package managers, containers.

use crate::Risk;
use crate::message::Message;
use crate::phrases as say;
use crate::rules::{Verdict, operands};
use crate::words::Word;

fn with(risk: Risk, why: impl Into<Message>) -> Verdict {
    let mut v = Verdict::default();
    v.add(risk, why);
    v
}

/// Services whose stopping opens the machine: firewalls and security daemons.
const GUARDS: &[&str] = &[
    "ufw",
    "firewalld",
    "nftables",
    "iptables",
    "ip6tables",
    "netfilter-persistent",
    "apparmor",
    "auditd",
    "fail2ban",
    "selinux",
    "clamav",
    "clamd",
];

pub(crate) fn services(name: &str, args: &[Word]) -> Verdict {
    let (ops, _) = operands(args);
    let lits: Vec<&str> = ops.iter().filter_map(|w| w.lit()).collect();
    // `service UNIT VERB` puts the unit first; systemctl puts the verb first.
    let (verb, units): (&str, Vec<&str>) = if name == "service" {
        (
            lits.get(1).copied().unwrap_or("status"),
            lits.first().copied().into_iter().collect(),
        )
    } else {
        (
            lits.first().copied().unwrap_or("list-units"),
            lits.iter().skip(1).copied().collect(),
        )
    };
    let guard = units
        .iter()
        .any(|u| GUARDS.iter().any(|g| u.trim_end_matches(".service") == *g));
    match verb {
        "status" | "show" | "cat" | "list-units" | "list-unit-files" | "list-timers"
        | "list-sockets" | "list-dependencies" | "list-jobs" | "is-active" | "is-enabled"
        | "is-failed" | "is-system-running" | "help" | "get-default" | "--version"
        | "--status-all" | "show-environment" => with(
            Risk::Safe,
            say::ONLY_READS_COMMAND.with("command", format!("{name} {verb}")),
        ),
        v if crate::persist::PERSISTING_VERBS.contains(&v) => with(
            Risk::High,
            say::MAKES_SERVICE_PERSIST.with("command", format!("{name} {verb}")),
        ),
        "stop" | "disable" | "mask" | "kill" if guard => {
            with(Risk::Critical, &say::STOPS_GUARD_SERVICE)
        }
        "stop" | "disable" | "mask" | "kill" | "reset-failed" => {
            with(Risk::High, say::STOPS_SERVICE.with("action", verb))
        }
        "poweroff" | "reboot" | "halt" | "kexec" | "suspend" | "hibernate" | "hybrid-sleep"
        | "isolate" | "rescue" | "emergency" | "default" | "soft-reboot" => {
            with(Risk::Critical, &say::SWITCHES_SYSTEM)
        }
        _ => with(
            Risk::Moderate,
            say::CHANGES_SERVICES.with("command", format!("{name} {verb}")),
        ),
    }
}

pub(crate) fn ip(args: &[Word]) -> Verdict {
    let (ops, _) = operands(args);
    let verb = ops.get(1).and_then(|w| w.lit());
    match verb {
        None | Some("show" | "list" | "ls" | "get" | "lst") => {
            with(Risk::Safe, say::ONLY_READS_COMMAND.with("command", "ip"))
        }
        _ => with(Risk::High, &say::CHANGES_NETWORK),
    }
}

/// Package managers, language tool chains and container tools.
pub(crate) fn packages(name: &str, args: &[Word]) -> Verdict {
    let (ops, flags) = operands(args);
    let sub = ops.first().and_then(|w| w.lit()).unwrap_or("");
    let lits: Vec<&str> = args.iter().filter_map(Word::lit).collect();
    if args.len() == 1 && matches!(lits.first(), Some(&("--version" | "-V" | "-v" | "version"))) {
        return with(
            Risk::Safe,
            say::PRINTS_PROGRAM_VERSION.with("program", name),
        );
    }
    let reads: &[&str] = match name {
        "apt" | "apt-get" | "dnf" | "yum" | "zypper" | "apk" | "snap" | "flatpak" | "brew" => &[
            "list",
            "show",
            "search",
            "policy",
            "info",
            "depends",
            "rdepends",
            "changelog",
            "history",
            "repolist",
        ],
        "pip" | "pip3" => &["list", "show", "freeze", "check", "index", "inspect"],
        "npm" | "pnpm" | "yarn" => &[
            "ls", "list", "view", "info", "outdated", "why", "explain", "audit", "config", "help",
            "bin", "root", "prefix", "search",
        ],
        "gem" => &["list", "search", "info", "contents", "env"],
        "go" => &["version", "env", "doc"],
        "docker" | "podman" => &[
            "ps", "images", "logs", "inspect", "version", "info", "stats", "top", "port",
            "history", "diff", "search",
        ],
        "kubectl" => &[
            "get",
            "describe",
            "logs",
            "explain",
            "version",
            "top",
            "api-resources",
            "cluster-info",
        ],
        _ => &[],
    };
    let removes: &[&str] = match name {
        "apt" | "apt-get" | "dnf" | "yum" | "zypper" | "apk" | "snap" | "flatpak" => {
            &["remove", "purge", "autoremove", "erase", "del", "uninstall"]
        }
        "docker" | "podman" => &["rm", "rmi", "prune"],
        "kubectl" => &["delete", "drain", "cordon"],
        _ => &[],
    };
    if let Some(v) = low_level(name, &flags) {
        return v;
    }
    if matches!(name, "docker" | "podman") && matches!(sub, "run" | "create") {
        let whole = lits.iter().any(|l| {
            matches!(
                *l,
                "--privileged" | "--pid=host" | "--net=host" | "--network=host"
            ) || l.starts_with("/:/")
                || l.starts_with("--volume=/:")
                || l.contains("docker.sock")
        });
        if whole {
            return with(Risk::Critical, &say::CONTAINER_GETS_MACHINE);
        }
    }
    if matches!(name, "docker" | "podman")
        && lits.iter().any(|l| matches!(*l, "prune" | "rm" | "rmi"))
    {
        return with(Risk::High, &say::DELETES_CONTAINERS);
    }
    if reads.contains(&sub) {
        return with(
            Risk::Safe,
            say::ONLY_READS_COMMAND.with("command", format!("{name} {sub}")),
        );
    }
    if removes.contains(&sub) {
        return with(
            Risk::High,
            say::REMOVES_PACKAGES.with("command", format!("{name} {sub}")),
        );
    }
    with(
        Risk::Moderate,
        say::INSTALLS_OR_BUILDS.with("command", format!("{name} {sub}")),
    )
}

/// pacman, dpkg and rpm, which take their verb as a flag.
fn low_level(name: &str, flags: &[&str]) -> Option<Verdict> {
    if name == "pacman" {
        return Some(
            if flags
                .iter()
                .any(|f| f.starts_with("-R") || *f == "--remove")
            {
                with(Risk::High, &say::REMOVES_SYSTEM_PACKAGES)
            } else if flags
                .iter()
                .any(|f| f.starts_with("-Q") || f.starts_with("-Ss") || f.starts_with("-Si"))
            {
                with(
                    Risk::Safe,
                    say::ONLY_READS_COMMAND.with("command", "pacman"),
                )
            } else {
                with(Risk::Moderate, &say::INSTALLS_SYSTEM_PACKAGES)
            },
        );
    }
    if name == "dpkg" || name == "rpm" {
        return Some(
            if flags
                .iter()
                .any(|f| matches!(*f, "-r" | "-P" | "--remove" | "--purge" | "-e" | "--erase"))
            {
                with(Risk::High, &say::REMOVES_SYSTEM_PACKAGES)
            } else if flags.iter().any(|f| {
                matches!(
                    *f,
                    "-l" | "-L"
                        | "-s"
                        | "-S"
                        | "-p"
                        | "--list"
                        | "--listfiles"
                        | "--status"
                        | "--search"
                        | "--get-selections"
                ) || f.starts_with("-q")
            }) {
                with(Risk::Safe, say::ONLY_READS_COMMAND.with("command", name))
            } else {
                with(Risk::Moderate, say::INSTALLS_PACKAGES.with("program", name))
            },
        );
    }
    None
}
