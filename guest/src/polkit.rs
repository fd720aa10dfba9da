//! polkit in the VM: the system bus and Debian's polkitd beside the session, the user's
//! password, and a shell as the user that runs `pkexec` when the script says so. The guest has no
//! logind (it needs systemd as PID 1), so polkitd cannot tie `pkexec` to a session: the
//! compositor's agent registers for that shell's process instead (`[polkit] subject`, the
//! override the headless polkit tests use), and `pkexec`, whose subject is its parent, finds it.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::install::{USER, User, run};

/// The session user's password, typed on the guest's keyboard: letters and digits only, each a
/// QEMU key code of its own.
pub const PASSWORD: &str = "pcpvm2026";

/// What `pkexec` runs: it prints the uid it ran as.
const COMMAND: &str = "/usr/bin/id -u";

/// The daemons and the waiting shell.
pub struct Polkit {
    daemons: Vec<Child>,
    requester: Child,
    /// The shell reads a line from it, then runs `pkexec`.
    go: PathBuf,
    /// What the shell and `pkexec` print.
    printed: PathBuf,
}

impl Drop for Polkit {
    fn drop(&mut self) {
        for child in self.daemons.iter_mut().chain([&mut self.requester]) {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Sets the user's password, puts the user in `sudo` (Debian's polkit rule makes its members
/// the admins `pkexec` asks for), starts the system bus and polkitd, and the shell that will
/// run `pkexec`. Returns them with the `[polkit]` section the session's config needs.
pub fn start(user: &User, out: &Path) -> Result<(Polkit, String)> {
    let mut chpasswd = Command::new("chpasswd")
        .stdin(Stdio::piped())
        .spawn()
        .context("cannot run chpasswd")?;
    chpasswd
        .stdin
        .take()
        .context("chpasswd has no stdin")?
        .write_all(format!("{USER}:{PASSWORD}\n").as_bytes())?;
    if !chpasswd.wait()?.success() {
        bail!("chpasswd could not set {USER}'s password");
    }
    run(Command::new("usermod").args(["--append", "--groups", "sudo", USER]))?;
    std::fs::create_dir_all("/run/dbus")?;
    let mut daemons = Vec::new();
    let mut bus = Command::new("dbus-daemon")
        .args(["--system", "--nofork", "--nopidfile", "--print-address=1"])
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(out.join("system-bus.log"))?)
        .spawn()
        .context("cannot start dbus-daemon --system")?;
    let stdout = bus.stdout.take().context("dbus-daemon has no stdout")?;
    daemons.push(bus);
    // It prints its address once it listens.
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line)?;
    if line.trim().is_empty() {
        bail!("dbus-daemon --system exited without listening");
    }
    let polkitd = Command::new("/usr/lib/polkit-1/polkitd")
        .arg("--no-debug")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(out.join("polkitd.log"))?)
        .spawn()
        .context("cannot start polkitd")?;
    daemons.push(polkitd);
    wait_for_polkitd(Duration::from_secs(120))?;

    let go = PathBuf::from("/tmp/pcp-pkexec-go");
    let _ = std::fs::remove_file(&go);
    run(Command::new("mkfifo").arg(&go))?;
    user.own(&go)?;
    let printed = out.join("pkexec.log");
    let log = std::fs::File::create(&printed)?;
    let mut shell = Command::new("/bin/sh");
    shell
        .args([
            "-c",
            &format!(
                "read go < {}; /usr/bin/pkexec --disable-internal-agent {COMMAND}; echo \"exit $?\"",
                go.display()
            ),
        ])
        .current_dir(&user.home)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", &user.home)
        .env("USER", USER)
        .env("LOGNAME", USER)
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log);
    user.apply(&mut shell);
    let requester = shell
        .spawn()
        .context("cannot start the shell that runs pkexec")?;
    let section = format!(
        "\n# Written by the guest: the agent answers for the shell that runs pkexec (the guest has\n\
         # no logind session to register for).\n\
         [polkit]\nenabled = true\nsubject = \"unix-process:{}\"\n",
        requester.id()
    );
    Ok((
        Polkit {
            daemons,
            requester,
            go,
            printed,
        },
        section,
    ))
}

/// Waits until polkitd owns its name on the system bus.
fn wait_for_polkitd(within: Duration) -> Result<()> {
    let start = Instant::now();
    loop {
        let out = Command::new("dbus-send")
            .args([
                "--system",
                "--print-reply",
                "--dest=org.freedesktop.DBus",
                "/org/freedesktop/DBus",
                "org.freedesktop.DBus.NameHasOwner",
                "string:org.freedesktop.PolicyKit1",
            ])
            .output()
            .context("cannot run dbus-send")?;
        if String::from_utf8_lossy(&out.stdout).contains("boolean true") {
            return Ok(());
        }
        if start.elapsed() > within {
            bail!(
                "polkitd did not take its name on the system bus within {} s",
                within.as_secs()
            );
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

impl Polkit {
    /// The shell runs `pkexec` now.
    pub fn run_pkexec(&self) -> Result<()> {
        // The shell is blocked opening the FIFO for reading, so this open does not block.
        let mut fifo = std::fs::OpenOptions::new()
            .write(true)
            .open(&self.go)
            .with_context(|| format!("cannot open {}", self.go.display()))?;
        fifo.write_all(b"go\n")?;
        Ok(())
    }

    /// What the shell printed once `pkexec` has ended (`None`: not yet).
    pub fn finished(&mut self) -> Result<Option<String>> {
        if self.requester.try_wait()?.is_none() {
            return Ok(None);
        }
        Ok(Some(std::fs::read_to_string(&self.printed)?))
    }
}
