//! The installed system the session runs on, made the way a machine gets it: the package
//! installed with `dpkg -i` into the guest's root (a writable layer over the host's), an ordinary
//! user in the groups a desktop login gives, seatd handing that user the seat, a session D-Bus as
//! `dbus-user-session` would start it, the package's own English voice model (or a Korean one
//! where the compositor looks for system Vosk models),
//! and the session's command read from the `.desktop` file a display manager reads.

use std::ffi::CString;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::Args;
use crate::host::Host;

/// The session's user: not root, in the groups a desktop login gives for sound, input and video.
pub const USER: &str = "pcp";
const GROUPS: &str = "audio,input,video";

/// The session entry the package installs, where display managers find it.
pub const SESSION_ENTRY: &str = "/usr/share/wayland-sessions/pcp-compositor.desktop";

/// Where the compositor looks for Vosk models the package does not ship
/// (`speech::model::SYSTEM_MODELS`).
const SYSTEM_MODELS: &str = "/usr/share/vosk";

/// The session's user, by number.
#[derive(Debug, Clone)]
pub struct User {
    pub uid: u32,
    pub gid: u32,
    pub groups: Vec<u32>,
    pub home: PathBuf,
}

impl User {
    /// `/run/user/UID`, as logind or seatd's login makes it.
    pub fn runtime_dir(&self) -> PathBuf {
        PathBuf::from(format!("/run/user/{}", self.uid))
    }

    /// Makes `cmd` run as this user: its groups, then its group, then its uid (in that order:
    /// each step needs the privilege the next one drops).
    pub fn apply(&self, cmd: &mut Command) {
        let (uid, gid, groups) = (self.uid, self.gid, self.groups.clone());
        // SAFETY: setgroups, setgid and setuid between fork and exec touch only the child.
        unsafe {
            cmd.pre_exec(move || {
                let list: Vec<libc::gid_t> = groups.clone();
                if libc::setgroups(list.len(), list.as_ptr()) != 0
                    || libc::setgid(gid) != 0
                    || libc::setuid(uid) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }

    /// Makes `path` (and what `create_dir_all` made of it) the user's own.
    pub fn own(&self, path: &Path) -> Result<()> {
        let c = CString::new(path.as_os_str().as_encoded_bytes())?;
        // SAFETY: a C string without interior NULs.
        if unsafe { libc::chown(c.as_ptr(), self.uid, self.gid) } != 0 {
            bail!(
                "cannot give {} to {USER}: {}",
                path.display(),
                std::io::Error::last_os_error()
            );
        }
        Ok(())
    }
}

/// The installed system: the session's user and the seat daemon serving it.
pub struct System {
    pub user: User,
    seatd: Child,
}

impl System {
    /// Installs the package, makes the user, puts the model in place and starts seatd, with a
    /// line in the host's log for each.
    pub fn install(args: &Args, host: &mut Host) -> Result<System> {
        let start = Instant::now();
        let printed = install_package(&args.deb)?;
        std::fs::write(args.out.join("dpkg.log"), &printed)?;
        host.log(&format!(
            "installed {} with dpkg -i in {:.1} s",
            args.deb.display(),
            start.elapsed().as_secs_f64()
        ));
        host.log(&check_installed_help()?);
        let user = make_user()?;
        let model = match &args.model {
            Some(model) => install_model(model)?.display().to_string(),
            None => "the package's".into(),
        };
        host.log(&format!(
            "user {USER} (uid {}, groups {:?}); voice model {model}",
            user.uid, user.groups,
        ));
        let seatd = start_seatd("video", &args.out.join("seatd.log"))?;
        Ok(System { user, seatd })
    }

    /// Stops seatd once the session has ended.
    pub fn stop(&mut self) {
        let _ = self.seatd.kill();
        let _ = self.seatd.wait();
    }
}

/// Runs `cmd` to its end; returns what it printed, or an error naming it and what it said.
pub fn run(cmd: &mut Command) -> Result<String> {
    let out = cmd
        .output()
        .with_context(|| format!("cannot run {cmd:?}"))?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if !out.status.success() {
        bail!("{cmd:?} failed ({}): {}", out.status, text.trim());
    }
    Ok(text)
}

/// `dpkg -i` of the package; returns dpkg's output, for the log. man-db's index is not
/// rebuilt (its documented switch, `/var/lib/man-db/auto-update`, is removed first, as in
/// container images): under the emulated CPU its trigger costs minutes, and `man` finds the
/// pages without the index.
pub fn install_package(deb: &Path) -> Result<String> {
    match std::fs::remove_file("/var/lib/man-db/auto-update") {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => bail!("cannot switch man-db's index updates off: {e}"),
    }
    run(Command::new("dpkg")
        .arg("-i")
        .arg(deb)
        .env("DEBIAN_FRONTEND", "noninteractive"))
    .context("installing the package")
}

/// What a person checks first after installing: `man pcpctl` finds its page, and `pcpctl
/// <TAB>` in bash offers the subcommands. Returns what each gave, for the log.
pub fn check_installed_help() -> Result<String> {
    let page = run(Command::new("man").args(["-w", "pcpctl"]))?;
    if !page.trim().ends_with("pcpctl.1.gz") {
        bail!(
            "`man -w pcpctl` found {:?}, not the package's page",
            page.trim()
        );
    }
    let script = r#"
        . /usr/share/bash-completion/completions/pcpctl
        spec=$(complete -p pcpctl) || exit 3
        function=$(printf '%s\n' "$spec" | sed -n 's/.*-F \([^ ]*\).*/\1/p')
        COMP_WORDS=(pcpctl "") COMP_CWORD=1 COMP_LINE="pcpctl " COMP_POINT=7
        "$function" pcpctl "" pcpctl
        printf '%s\n' "${COMPREPLY[@]}"
    "#;
    let offered = run(Command::new("bash").args(["-c", script]))?;
    for subcommand in ["submit", "hook", "validate"] {
        if !offered.lines().any(|l| l.trim() == subcommand) {
            bail!("`pcpctl <TAB>` in bash does not offer {subcommand}: {offered:?}");
        }
    }
    Ok(format!(
        "man -w pcpctl: {}; pcpctl <TAB>: {}",
        page.trim(),
        offered.split_whitespace().collect::<Vec<_>>().join(" ")
    ))
}

/// Creates the session's user (with a home) and reads back its ids.
pub fn make_user() -> Result<User> {
    let known = Command::new("id")
        .arg(USER)
        .output()
        .is_ok_and(|o| o.status.success());
    if !known {
        run(Command::new("useradd").args([
            "--create-home",
            "--user-group",
            "--groups",
            GROUPS,
            "--shell",
            "/bin/sh",
            USER,
        ]))?;
    }
    let number = |flag: &str| -> Result<Vec<u32>> {
        let text = run(Command::new("id").arg(flag).arg(USER))?;
        text.split_whitespace()
            .map(|n| {
                n.parse()
                    .with_context(|| format!("`id {flag} {USER}` printed {n:?}"))
            })
            .collect()
    };
    let uid = *number("-u")?.first().context("no uid")?;
    let gid = *number("-g")?.first().context("no gid")?;
    let groups = number("-G")?;
    let home = PathBuf::from(format!("/home/{USER}"));
    Ok(User {
        uid,
        gid,
        groups,
        home,
    })
}

/// Makes a Vosk model in the project cache appear as a system model, the way an administrator
/// installs one (the package ships only the English model; docs/getting-started.md says how to
/// add one).
pub fn install_model(model: &Path) -> Result<PathBuf> {
    let name = model.file_name().context("the model path has no name")?;
    let to = Path::new(SYSTEM_MODELS).join(name);
    std::fs::create_dir_all(&to).with_context(|| format!("cannot create {}", to.display()))?;
    run(Command::new("mount").arg("--bind").arg(model).arg(&to))?;
    Ok(to)
}

/// The command line of the session entry's `Exec` key, split as the desktop entry
/// specification splits it (quotes, backslash escapes). A field code (`%f`, `%U`, …) would need
/// a file or URL a login never passes, so one is refused rather than guessed at.
pub fn session_command(entry: &str) -> Result<Vec<String>> {
    let exec = entry
        .lines()
        .skip_while(|l| l.trim() != "[Desktop Entry]")
        .skip(1)
        .take_while(|l| !l.trim_start().starts_with('['))
        .find_map(|l| l.strip_prefix("Exec="))
        .context("the session entry has no Exec key in [Desktop Entry]")?;
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quoted = false;
    let mut chars = exec.trim().chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                quoted = !quoted;
                in_word = true;
            }
            '\\' if quoted => word.push(chars.next().context("Exec ends in a backslash")?),
            '%' => match chars.next() {
                Some('%') => word.push('%'),
                code => bail!("Exec has the field code %{}", code.unwrap_or(' ')),
            },
            c if c.is_whitespace() && !quoted => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if quoted {
        bail!("Exec has an unclosed quote: {exec}");
    }
    if in_word {
        words.push(word);
    }
    if words.is_empty() {
        bail!("Exec is empty");
    }
    Ok(words)
}

/// Starts seatd, giving the seat to the members of `group`, and waits for its socket.
pub fn start_seatd(group: &str, log: &Path) -> Result<Child> {
    let file = std::fs::File::create(log)?;
    let child = Command::new("seatd")
        .args(["-g", group])
        .stdin(Stdio::null())
        .stdout(file.try_clone()?)
        .stderr(file)
        .spawn()
        .context("cannot start seatd")?;
    wait_for(Path::new("/run/seatd.sock"), Duration::from_secs(30)).context("seatd")?;
    Ok(child)
}

/// Starts the user's session bus (as `dbus-user-session` would at login) at
/// `RUNTIME/bus`; returns it and its address.
pub fn start_session_bus(user: &User, log: &Path) -> Result<(Child, String)> {
    let socket = user.runtime_dir().join("bus");
    let address = format!("unix:path={}", socket.display());
    let file = std::fs::File::create(log)?;
    let mut cmd = Command::new("dbus-daemon");
    cmd.args(["--session", "--nofork", "--nopidfile", "--address"])
        .arg(&address)
        .env_clear()
        .env("HOME", &user.home)
        .env("PATH", "/usr/bin:/bin")
        .env("XDG_RUNTIME_DIR", user.runtime_dir())
        .stdin(Stdio::null())
        .stdout(file.try_clone()?)
        .stderr(file);
    user.apply(&mut cmd);
    let child = cmd.spawn().context("cannot start the session bus")?;
    wait_for(&socket, Duration::from_secs(60)).context("the session bus")?;
    Ok((child, address))
}

fn wait_for(path: &Path, within: Duration) -> Result<()> {
    let start = Instant::now();
    while !path.exists() {
        if start.elapsed() > within {
            bail!("{} did not appear within {within:?}", path.display());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exec_line_is_split_as_the_desktop_entry_spec_says() {
        let entry = "[Desktop Entry]\nName=x\nExec=pcp-session \"--a b\" c\\d 100%%\n\
                     [Desktop Action other]\nExec=nope\n";
        assert_eq!(
            session_command(entry).unwrap(),
            ["pcp-session", "--a b", "c\\d", "100%"]
        );
    }

    #[test]
    fn the_shipped_entry_starts_pcp_session() {
        let entry = include_str!("../../assets/wayland-sessions/pcp-compositor.desktop");
        assert_eq!(session_command(entry).unwrap(), ["pcp-session"]);
    }

    #[test]
    fn a_field_code_an_empty_exec_or_no_exec_is_refused() {
        for (entry, why) in [
            ("[Desktop Entry]\nExec=pcp-session %U\n", "field code"),
            ("[Desktop Entry]\nExec=  \n", "empty"),
            ("[Desktop Entry]\nName=x\n", "no Exec"),
            ("[Desktop Entry]\nExec=\"pcp\n", "unclosed"),
        ] {
            let e = session_command(entry).unwrap_err().to_string();
            assert!(e.contains(why), "{entry:?}: {e}");
        }
    }
}
