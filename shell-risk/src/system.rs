//! Commands by name that have no rule file of their own: disks, power, processes by name,
//! firewalls, accounts, kernel, mounts, downloads, `rsync`, network shells; then the read-only
//! allow-list, then Moderate for everything else.

use crate::phrases as say;
use crate::readonly::{moderate, safe_entry, with};
use crate::rules::{Verdict, has_flag, operands, write_finding};
use crate::words::{Expander, Word};
use crate::{Risk, sed};

/// Everything not handled by a rule of its own.
pub(crate) fn by_name(name: &str, args: &[Word], exp: &Expander<'_>) -> Verdict {
    let lits: Vec<&str> = args.iter().filter_map(Word::lit).collect();
    match name {
        "git" => return crate::git::git(args),
        "sed" => return sed::sed(args, exp),
        "curl" | "wget" | "fetch" | "aria2c" | "http" | "https" | "xh" => {
            return download(name, args, exp);
        }
        _ => {}
    }
    if let Some(v) = machine(name, args) {
        return v;
    }
    match name {
        "ip" => return crate::tools::ip(args),
        "apt" | "apt-get" | "dnf" | "yum" | "pacman" | "zypper" | "apk" | "snap" | "flatpak"
        | "dpkg" | "rpm" | "brew" | "pip" | "pip3" | "npm" | "pnpm" | "yarn" | "cargo" | "gem"
        | "go" | "docker" | "podman" | "kubectl" => {
            return crate::tools::packages(name, args);
        }
        "truncate" => return truncate(args, exp),
        "tar" => return tar(args),
        "crontab" => return crate::persist::crontab(args),
        "at" | "batch" | "atq" | "atrm" => return crate::persist::at(name, args),
        "loginctl" => {
            if let Some(v) = crate::persist::loginctl(args) {
                return v;
            }
        }
        "rsync" => {
            let (ops, fl) = operands(args);
            let deletes = fl
                .iter()
                .any(|f| f.starts_with("--delete") || *f == "--remove-source-files");
            let mut v = moderate(&say::COPIES_FILES_RSYNC);
            if let Some(dest) = ops.last()
                && let Some(f) = write_finding(dest, false, exp)
            {
                let risk = if deletes
                    && f.0 >= Risk::Moderate
                    && !std::ptr::eq(f.1.phrase, &say::WRITES_IN_WORKING_FOLDER)
                {
                    Risk::High.max(f.0)
                } else {
                    f.0
                };
                v.add(
                    risk,
                    if deletes {
                        say::DELETES_NOT_IN_SOURCE.with_phrase("write", f.1)
                    } else {
                        f.1
                    },
                );
            }
            return v;
        }
        "nc" | "ncat" | "netcat" | "socat"
            if lits
                .iter()
                .any(|a| matches!(*a, "-e" | "-c" | "--exec" | "--sh-exec"))
                || lits
                    .iter()
                    .any(|a| a.starts_with("EXEC:") || a.starts_with("SYSTEM:")) =>
        {
            return with(Risk::High, &say::CONNECTS_SHELL_TO_NETWORK);
        }
        _ => {}
    }
    if let Some(v) = safe_entry(name, args) {
        return v;
    }
    if args.len() == 1
        && matches!(
            args[0].lit(),
            Some("--version" | "-V" | "--help" | "version" | "-version")
        )
    {
        return with(
            Risk::Safe,
            say::PRINTS_VERSION_OR_HELP.with("program", name),
        );
    }
    moderate(say::NOT_ON_READ_ONLY_LIST.with("program", name))
}

/// `truncate -s SIZE FILE…`: the size (and `-r`'s reference file) is no path; each file is
/// emptied or cut, which destroys it like a deletion: judged by where it is.
fn truncate(args: &[Word], exp: &Expander<'_>) -> Verdict {
    let mut files: Vec<&Word> = Vec::new();
    let mut i = 0;
    let mut done = false;
    while let Some(a) = args.get(i) {
        i += 1;
        match a.lit() {
            Some("--") if !done => done = true,
            Some("-s" | "--size" | "-r" | "--reference") if !done => i += 1,
            Some(s) if !done && s.starts_with('-') && s.len() > 1 => {}
            _ => files.push(a),
        }
    }
    let mut v = moderate(&say::TRUNCATES_FILES);
    let found = crate::rules::destroys(&files, &say::EMPTIES, false, false, exp);
    v.findings.extend(found.findings);
    v
}

/// `tar`: Moderate (it writes an archive or what it extracts), and with `--remove-files` a
/// deletion of every file it archives.
fn tar(args: &[Word]) -> Verdict {
    let mut v = moderate(say::NOT_ON_READ_ONLY_LIST.with("program", "tar"));
    let lits: Vec<&str> = args.iter().filter_map(Word::lit).collect();
    if !lits.contains(&"--remove-files") {
        return v;
    }
    v.add(Risk::Moderate, &say::ARCHIVES_AND_DELETES);
    // Short options that take the next word as their value, alone or at the end of a cluster
    // (`-czf out.tgz`, or the first word without a dash: `czf out.tgz`).
    let takes_value = |c: char| "fCTXbgFKLNV".contains(c);
    let mut inputs: Vec<Word> = vec![Word::Lit("rm".into()), Word::Lit("-r".into())];
    let mut folder: Option<String> = None;
    let mut i = 0;
    while let Some(a) = args.get(i) {
        i += 1;
        let Some(s) = a.lit() else {
            inputs.push(a.clone());
            continue;
        };
        let old_style = i == 1 && !s.starts_with('-');
        if let Some(long) = s.strip_prefix("--") {
            let (key, value) = long
                .split_once('=')
                .map_or((long, None), |(k, v)| (k, Some(v)));
            let value_next = matches!(key, "file" | "directory" | "files-from" | "exclude-from");
            let value = match value {
                Some(v) => Some(v.to_string()),
                None if value_next => {
                    i += 1;
                    args.get(i - 1).map(|w| w.text().to_string())
                }
                None => None,
            };
            if key == "directory" {
                folder = value;
            } else if key == "files-from" {
                inputs.push(Word::Dyn(format!(
                    "--files-from {}",
                    value.unwrap_or_default()
                )));
            }
        } else if old_style || (s.starts_with('-') && s.len() > 1) {
            let cluster = s.trim_start_matches('-');
            for c in cluster.chars().filter(|c| takes_value(*c)) {
                let value = args.get(i).map(|w| w.text().to_string());
                i += 1;
                match c {
                    'C' => folder = value,
                    'T' => inputs.push(Word::Dyn(format!("-T {}", value.unwrap_or_default()))),
                    _ => {}
                }
            }
        } else {
            inputs.push(Word::Lit(match &folder {
                Some(dir) if !s.starts_with('/') => format!("{dir}/{s}"),
                _ => s.to_string(),
            }));
        }
    }
    v.inner.push(crate::rules::Inner::Words(inputs));
    v
}

fn download(name: &str, args: &[Word], exp: &Expander<'_>) -> Verdict {
    let mut v = moderate(say::DOWNLOADS.with("program", name));
    v.downloads = true;
    let mut i = 0;
    while let Some(a) = args.get(i) {
        i += 1;
        if matches!(
            a.lit(),
            Some("-o" | "--output" | "-O" | "--output-document")
        ) && !(name == "curl" && a.lit() == Some("-O"))
            && let Some(dest) = args.get(i)
            && dest.lit() != Some("-")
            && let Some(f) = write_finding(dest, false, exp)
        {
            v.add(f.0, f.1);
        }
    }
    v
}

/// Disks, power, processes by name, services, firewalls, accounts, the kernel and mounts.
fn machine(name: &str, args: &[Word]) -> Option<Verdict> {
    let sub = args
        .iter()
        .find_map(|a| a.lit().filter(|s| !s.starts_with('-')));
    let lits: Vec<&str> = args.iter().filter_map(Word::lit).collect();
    let flags: Vec<&str> = lits
        .iter()
        .copied()
        .filter(|s| s.starts_with('-'))
        .collect();
    let verdict = match name {
        n if n.starts_with("mkfs") || n.starts_with("mke2fs") => {
            with(Risk::Critical, &say::MAKES_FILE_SYSTEM)
        }
        "mkswap" | "wipefs" | "fdisk" | "sfdisk" | "cfdisk" | "parted" | "gdisk" | "sgdisk"
        | "blkdiscard" | "cryptsetup" | "mdadm" | "zpool" | "pvcreate" | "vgremove"
        | "lvremove" | "badblocks" => {
            if lits
                .iter()
                .any(|a| matches!(*a, "-l" | "--list" | "status" | "list"))
            {
                with(Risk::Safe, say::ONLY_READS_COMMAND.with("command", name))
            } else {
                with(Risk::Critical, &say::WIPES_DISK)
            }
        }
        "shutdown" | "reboot" | "poweroff" | "halt" | "init" | "telinit" | "kexec" => {
            with(Risk::Critical, &say::SHUTS_DOWN)
        }
        "pkill" | "killall" | "killall5" | "skill" | "slay" => {
            with(Risk::High, &say::KILLS_BY_NAME)
        }
        "systemctl" | "service" => crate::tools::services(name, args),
        "ufw" => match sub {
            Some("status" | "show" | "version") => {
                with(Risk::Safe, say::ONLY_READS_COMMAND.with("command", "ufw"))
            }
            Some("disable" | "reset") => with(Risk::Critical, &say::DISABLES_FIREWALL),
            _ => with(Risk::High, &say::CHANGES_FIREWALL),
        },
        "iptables" | "ip6tables" | "nft" | "firewall-cmd" | "iptables-restore" => {
            firewall(name, sub, &flags, &lits)
        }
        "setenforce" | "aa-disable" | "aa-teardown" => {
            with(Risk::Critical, &say::TURNS_OFF_ACCESS_CONTROL)
        }
        "useradd" | "userdel" | "usermod" | "groupadd" | "groupdel" | "passwd" | "chpasswd"
        | "visudo" | "adduser" | "deluser" | "chsh" | "chage" => {
            with(Risk::Critical, &say::CHANGES_ACCOUNTS)
        }
        "sysctl" if !has_flag(&flags, 'w', &["write", "load", "system"]) => with(
            Risk::Safe,
            say::ONLY_READS_COMMAND.with("command", "sysctl"),
        ),
        "modprobe" | "insmod" | "rmmod" | "sysctl" => with(Risk::Critical, &say::CHANGES_KERNEL),
        "umount" | "swapoff" | "swapon" | "losetup" => with(Risk::High, &say::MOUNTS_OR_UNMOUNTS),
        "mount" if !args.is_empty() => with(Risk::High, &say::MOUNTS),
        _ => return None,
    };
    Some(verdict)
}

fn firewall(name: &str, sub: Option<&str>, flags: &[&str], lits: &[&str]) -> Verdict {
    let opens = flags.iter().any(|f| {
        matches!(
            *f,
            "-F" | "--flush" | "-X" | "--delete-chain" | "-P" | "--policy" | "--panic-off"
        )
    }) || lits.iter().any(|a| matches!(*a, "flush" | "ruleset"));
    let reads = flags.iter().any(|f| {
        matches!(
            *f,
            "-L" | "-S" | "--list" | "--list-rules" | "--state" | "--list-all"
        )
    }) || sub == Some("list");
    if opens {
        with(Risk::Critical, &say::OPENS_FIREWALL)
    } else if reads {
        with(Risk::Safe, say::ONLY_READS_COMMAND.with("command", name))
    } else {
        with(Risk::High, &say::CHANGES_FIREWALL)
    }
}
