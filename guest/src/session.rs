//! Bringing the session up in the guest: udev, the scripted user's devices, the compositor on
//! the udev backend, the real apps; and the helpers every step uses (screendumps, waiting for the
//! dialog, touching Approve, submitting an intent).

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::Args;
use crate::devices::{Mouse, Rumble, TouchScreen};
use crate::host::Host;
use crate::install::{self, System, User};
use crate::procs::{self, Decided, Dialog, Log, Submitted};

/// The first GPU's preferred mode (QEMU's `xres`/`yres`): the touch screen's size.
pub const TOUCH_SIZE: (i32, i32) = (1280, 800);
/// Longer than the dialog's 750 ms click guard, with room for the emulated CPU.
pub const READ: Duration = Duration::from_millis(1500);
/// How long a finger rests on Approve.
pub const PRESS: Duration = Duration::from_millis(80);

/// A lit output, from the compositor's `output NAME: WxH@RHz at X,Y` line.
#[derive(Debug, Clone, PartialEq)]
pub struct Lit {
    pub name: String,
    pub rect: (i32, i32, i32, i32),
}

/// Where the compositor keeps its state store in the guest (`[state] path` of the session's
/// config, written by `cargo xtask session-test`).
const STATE_DIR: &str = "/tmp/pcp-state";

pub struct Session<'a> {
    pub host: &'a mut Host,
    pub out: PathBuf,
    pcpctl: PathBuf,
    /// The environment of clients: the Wayland socket and the runtime folder.
    pub env: Vec<(String, String)>,
    /// Who the session, its apps and `pcpctl` run as.
    user: User,
    /// seatd, kept until the session ends.
    system: System,
    /// The user's session bus.
    bus: Child,
    /// How the session was installed and started, for the summary.
    pub started_as: String,
    pub log: Log,
    compositor: Child,
    pub touch: TouchScreen,
    pub mouse: Mouse,
    pub rumble: Option<Rumble>,
    /// polkitd and the shell that runs `pkexec`, or why they could not start.
    pub polkit: std::result::Result<crate::polkit::Polkit, String>,
    pub outputs: Vec<Lit>,
    apps: Vec<(String, Child)>,
    shots: usize,
}

/// Runs a command to its end; an error names it.
fn run(cmd: &mut Command) -> Result<()> {
    let status = cmd
        .status()
        .with_context(|| format!("cannot run {cmd:?}"))?;
    if !status.success() {
        bail!("{cmd:?} failed ({status})");
    }
    Ok(())
}

/// Sets the calling thread's nice level (Linux applies it per thread). The scripted user's
/// reactions — reading the compositor's log, playing the answer — run above the session they
/// test, so a busy emulated CPU delays the session, not the user. Threads that start processes
/// stay at the default: children would inherit it.
pub fn set_thread_nice(nice: i32) {
    // SAFETY: gettid and setpriority have no memory preconditions.
    unsafe {
        let tid = libc::gettid();
        libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, nice);
    }
}

/// Seconds since the guest's kernel started.
pub fn uptime() -> f64 {
    std::fs::read_to_string("/proc/uptime")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0.0)
}

/// Starts systemd-udevd and fills its database, as a session's system would have.
/// The guest runs in a chroot of the host's root, where udevadm would ignore every request
/// ("Running in chroot"): it is the system's root here.
fn udevadm(args: &[&str]) -> Result<()> {
    run(Command::new("udevadm")
        .args(args)
        .env("SYSTEMD_IGNORE_CHROOT", "1"))
}

/// Starts systemd-udevd and fills its database, as a session's system would have: without it
/// libinput sees no device and the GPUs have no seat.
fn start_udev() -> Result<()> {
    run(Command::new("/usr/lib/systemd/systemd-udevd")
        .arg("--daemon")
        .env("SYSTEMD_IGNORE_CHROOT", "1"))?;
    for kind in ["subsystems", "devices"] {
        udevadm(&["trigger", "--action=add", &format!("--type={kind}")])?;
    }
    udevadm(&["settle", "--timeout=120"])
}

/// Writes what `program args` prints to `file`, for a person reading why a run failed.
pub fn diagnostics(file: &std::path::Path, program: &str, args: &[&str]) {
    let text = match Command::new(program)
        .args(args)
        .env("SYSTEMD_IGNORE_CHROOT", "1")
        .output()
    {
        Ok(o) => format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ),
        Err(e) => format!("cannot run {program}: {e}"),
    };
    let _ = std::fs::write(file, text);
}

/// Parses `… output NAME: WxH@RHz at X,Y`.
fn parse_lit(line: &str) -> Option<Lit> {
    let rest = line.split_once(" output ")?.1;
    let (name, rest) = rest.split_once(": ")?;
    let (size, rest) = rest.split_once('@')?;
    let (w, h) = size.split_once('x')?;
    let (x, y) = rest.split_once(" at ")?.1.trim().split_once(',')?;
    Some(Lit {
        name: name.to_string(),
        rect: (
            x.parse().ok()?,
            y.trim().parse().ok()?,
            w.parse().ok()?,
            h.parse().ok()?,
        ),
    })
}

impl<'a> Session<'a> {
    /// udev, the devices, the compositor (until it listens with its outputs lit).
    pub fn start(args: &Args, host: &'a mut Host) -> Result<Session<'a>> {
        host.log(&format!(
            "guest driver up {:.1} s after the kernel started",
            uptime()
        ));
        start_udev().context("starting udev")?;
        for card in ["/dev/dri/card0", "/dev/dri/card1"] {
            if !std::path::Path::new(card).exists() {
                bail!("{card} is missing: the virtio-gpu module did not bind");
            }
        }
        let touch = TouchScreen::new(TOUCH_SIZE)?;
        let mouse = Mouse::new()?;
        let ff_log = std::fs::File::create(args.out.join("ff-effects.log"))?;
        let rumble = Rumble::plug(ff_log)?;
        udevadm(&["settle", "--timeout=60"])?;
        diagnostics(
            &args.out.join("udev-db.txt"),
            "udevadm",
            &["info", "--export-db"],
        );
        host.log(&format!(
            "udev and the uinput devices ready at {:.1} s",
            uptime()
        ));

        let system = System::install(args, host)?;
        let user = system.user.clone();
        let runtime = user.runtime_dir();
        // Made here, so its mode is ours to set; one that exists already is not changed.
        if !runtime.exists() {
            std::fs::create_dir_all(&runtime)?;
            std::fs::set_permissions(
                &runtime,
                std::os::unix::fs::PermissionsExt::from_mode(0o700),
            )?;
        }
        for dir in [&runtime, &PathBuf::from(STATE_DIR)] {
            std::fs::create_dir_all(dir)?;
            user.own(dir)?;
        }
        let (bus, bus_address) =
            install::start_session_bus(&user, &args.out.join("session-bus.log"))?;
        let home = user.home.clone();
        let at_home = |dir: &str| home.join(dir).display().to_string();
        let env: Vec<(String, String)> = [
            ("XDG_RUNTIME_DIR", runtime.display().to_string()),
            ("WAYLAND_DISPLAY", "pcp-0".into()),
            ("HOME", home.display().to_string()),
            ("USER", install::USER.into()),
            ("LOGNAME", install::USER.into()),
            ("XDG_CACHE_HOME", at_home(".cache")),
            ("XDG_CONFIG_HOME", at_home(".config")),
            ("XDG_STATE_HOME", at_home(".local/state")),
            ("DBUS_SESSION_BUS_ADDRESS", bus_address),
            ("LANG", "C.UTF-8".into()),
            ("NO_COLOR", "1".into()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        // The session's config where the compositor looks without `--config`: a display
        // manager passes no arguments.
        let config_dir = home.join(".config/pcp");
        for dir in [".cache", ".config", ".config/pcp", ".local", ".local/state"] {
            let dir = home.join(dir);
            std::fs::create_dir_all(&dir)?;
            user.own(&dir)?;
        }
        let config = config_dir.join("config.toml");
        std::fs::copy(&args.config, &config)
            .with_context(|| format!("cannot copy the session's config to {}", config.display()))?;
        // polkitd beside the session, its agent the compositor: a failure here fails the admin
        // step only, saying why.
        let polkit = match crate::polkit::start(&user, &args.out) {
            Ok((polkit, section)) => {
                let mut file = std::fs::OpenOptions::new().append(true).open(&config)?;
                std::io::Write::write_all(&mut file, section.as_bytes())?;
                host.log(&format!("polkitd up at {:.1} s", uptime()));
                Ok(polkit)
            }
            Err(e) => {
                host.log(&format!("polkitd not started: {e:#}"));
                Err(format!("{e:#}"))
            }
        };
        user.own(&config)?;
        // The microphone is ALSA's default capture device, so the compositor opens it directly:
        // naming a card makes cpal open every sound device to find it, which takes seconds of
        // the voice step's deadline on the emulated CPU.
        let asoundrc = home.join(".asoundrc");
        std::fs::write(&asoundrc, crate::audio::ASOUNDRC)?;
        user.own(&asoundrc)?;
        let entry = std::fs::read_to_string(install::SESSION_ENTRY)
            .with_context(|| format!("the package installed no {}", install::SESSION_ENTRY))?;
        let exec = install::session_command(&entry)?;
        let started_as = format!(
            "the session: {} installed with dpkg -i, started as {} (uid {}) through seatd with \
             the Exec line of {}: {exec:?}",
            args.deb.file_name().unwrap_or_default().to_string_lossy(),
            install::USER,
            user.uid,
            install::SESSION_ENTRY
        );
        host.log(&started_as);
        let mut cmd = Command::new(&exec[0]);
        cmd.args(&exec[1..])
            .current_dir(&home)
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .envs(env.iter().map(|(k, v)| (k, v)))
            .env("LIBSEAT_BACKEND", "seatd")
            .env(
                "RUST_LOG",
                "info,pcp_speech=debug,pcp_compositor::voice=debug",
            );
        user.apply(&mut cmd);
        // A crash leaves a core in the output folder, for gdb on the host.
        let _ = std::fs::write(
            "/proc/sys/kernel/core_pattern",
            format!("{}/core.%e.%p", args.out.display()),
        );
        let _ = std::fs::write("/proc/sys/fs/suid_dumpable", "1");
        // SAFETY: setrlimit between fork and exec only changes the child's own limit.
        unsafe {
            cmd.pre_exec(|| {
                let unlimited = libc::rlimit {
                    rlim_cur: libc::RLIM_INFINITY,
                    rlim_max: libc::RLIM_INFINITY,
                };
                libc::setrlimit(libc::RLIMIT_CORE, &unlimited);
                Ok(())
            });
        }
        let started = Instant::now();
        let (compositor, log) = procs::spawn_logged(&mut cmd, &args.out.join("compositor.log"))?;
        let mut session = Session {
            host,
            out: args.out.clone(),
            pcpctl: PathBuf::from("/usr/bin/pcpctl"),
            env,
            user,
            system,
            bus,
            started_as,
            log,
            compositor,
            touch,
            mouse,
            rumble: Some(rumble),
            polkit,
            outputs: Vec::new(),
            apps: Vec::new(),
            shots: 0,
        };
        session
            .log
            .wait(0, "listening on WAYLAND_DISPLAY", Duration::from_secs(120))
            .context("the compositor did not start")?;
        session.outputs = session
            .log
            .find(0, " output ")
            .iter()
            .filter_map(|l| parse_lit(l))
            .collect();
        let at = started.elapsed().as_secs_f64();
        let names: Vec<String> = session
            .outputs
            .iter()
            .map(|o| format!("{} {:?}", o.name, o.rect))
            .collect();
        session.host.log(&format!(
            "compositor listening {at:.1} s after its start; outputs lit: {}",
            names.join(", ")
        ));
        Ok(session)
    }

    /// Outputs lit after log line `from` (a display plugged in).
    pub fn newly_lit(&self, from: usize) -> Vec<Lit> {
        self.log
            .find(from, " output ")
            .iter()
            .filter_map(|l| parse_lit(l))
            .collect()
    }

    /// A screendump of every head, `NN-name-gpuN.png`.
    pub fn shot(&mut self, name: &str) -> Result<()> {
        self.shots += 1;
        let name = format!("{:02}-{name}", self.shots);
        self.host.ask(&format!("shot {name}"))?;
        Ok(())
    }

    /// Starts a client app; its output goes to `NAME.log`.
    pub fn start_app(&mut self, name: &str, program: &str, args: &[&str]) -> Result<()> {
        let file = std::fs::File::create(self.out.join(format!("{name}.log")))?;
        let mut cmd = Command::new(program);
        cmd.args(args)
            .current_dir(&self.user.home)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .env("GDK_BACKEND", "wayland")
            .env("NO_AT_BRIDGE", "1")
            .stdin(Stdio::null())
            .stdout(file.try_clone()?)
            .stderr(file);
        self.user.apply(&mut cmd);
        let child = cmd
            .spawn()
            .with_context(|| format!("cannot start {program}"))?;
        self.apps.push((name.to_string(), child));
        Ok(())
    }

    /// How the compositor exited, if it has.
    pub fn compositor_exited(&mut self) -> Option<String> {
        match self.compositor.try_wait() {
            Ok(Some(status)) => Some(format!("the compositor exited ({status})")),
            _ => None,
        }
    }

    /// The apps that have exited, with how.
    pub fn exited_apps(&mut self) -> Vec<String> {
        self.apps
            .iter_mut()
            .filter_map(|(name, c)| match c.try_wait() {
                Ok(Some(status)) => Some(format!("{name} exited ({status})")),
                _ => None,
            })
            .collect()
    }

    pub fn submit(&self, capability: &str, params: &str) -> Result<Submitted> {
        let mut cmd = Command::new(&self.pcpctl);
        cmd.current_dir(&self.user.home)
            .envs(self.env.iter().map(|(k, v)| (k, v)));
        self.user.apply(&mut cmd);
        Submitted::start(cmd, capability, params)
    }

    /// What each modality said in the newest audit record of `capability` (`pcpctl audit`
    /// on the compositor's state store), as `modality result` pairs in order.
    pub fn audited_results(&self, capability: &str) -> Result<Vec<String>> {
        let record = self.audited_record(capability)?;
        Ok(record["modality_results"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|r| {
                        format!(
                            "{} {}",
                            r["modality"].as_str().unwrap_or("?"),
                            r["result"].as_str().unwrap_or("?")
                        )
                    })
                    .collect()
            })
            .unwrap_or_default())
    }

    /// The newest audit record of `capability`, as `pcpctl audit --json` prints it.
    pub fn audited_record(&self, capability: &str) -> Result<serde_json::Value> {
        // As the session's user: pcpctl refuses a state folder another user owns.
        let mut cmd = Command::new(&self.pcpctl);
        cmd.args(["audit", "--json", "--state"])
            .arg(PathBuf::from(STATE_DIR).join("state.sqlite3"))
            .current_dir(&self.user.home)
            .envs(self.env.iter().map(|(k, v)| (k, v)));
        self.user.apply(&mut cmd);
        let out = cmd.output().context("cannot run pcpctl audit")?;
        if !out.status.success() {
            bail!(
                "pcpctl audit failed ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        let text = String::from_utf8_lossy(&out.stdout);
        text.lines()
            .rev()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .find(|r| r["capability"] == capability)
            .with_context(|| format!("the audit log has no record of {capability}"))
    }

    /// Waits for the dialog to be placed after log line `from`.
    pub fn dialog_after(&self, from: usize, within: Duration) -> Result<(usize, Dialog)> {
        let (i, line) = self.log.wait(from, "dialog placed on ", within)?;
        Ok((i, procs::parse_dialog(&line)?))
    }

    /// Waits for the dialog of `submitted` (placed after log line `from`); fails at once when
    /// the intent was decided without one.
    pub fn prompt(&self, from: usize, submitted: &mut Submitted) -> Result<(usize, Dialog)> {
        let start = Instant::now();
        loop {
            if let Ok(found) = self.dialog_after(from, Duration::ZERO) {
                return Ok(found);
            }
            if let Some(decided) = submitted.finished() {
                let d = decided?;
                bail!(
                    "decided {} (modalities {:?}) without a dialog",
                    d.resolution,
                    d.modalities
                );
            }
            if start.elapsed() > Duration::from_secs(60) {
                bail!("no dialog within 60 s of the submission");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Touches the dialog's Approve button (it must be on the first output, where the touch
    /// screen is).
    pub fn touch_approve(&mut self, dialog: &Dialog) -> Result<()> {
        self.touch_point(dialog, dialog.approve)
    }

    /// Touches global logical point `p` of the dialog's output (the first output, where the
    /// touch screen is).
    pub fn touch_point(&mut self, dialog: &Dialog, p: (f64, f64)) -> Result<()> {
        let first = self.outputs.first().context("no output")?.clone();
        if dialog.output != first.name {
            bail!(
                "the dialog is on {}, the touch screen on {}",
                dialog.output,
                first.name
            );
        }
        let (x, y, w, h) = first.rect;
        let local = (p.0 - f64::from(x), p.1 - f64::from(y));
        self.touch.tap(local, (w, h), PRESS)
    }

    /// Touches Approve until the intent is decided, as a person does when a touch did not take
    /// (one too early for the click guard only extends it): up to four touches, 6 s apart.
    /// Checks the resolution; returns the decision and the number of touches.
    pub fn approve(
        &mut self,
        dialog: &Dialog,
        mut submitted: Submitted,
        expected: &str,
    ) -> Result<(Decided, u32)> {
        for touches in 1..=4 {
            self.touch_approve(dialog)?;
            let start = Instant::now();
            while start.elapsed() < Duration::from_secs(6) {
                if let Some(d) = submitted.finished() {
                    let d = d?;
                    if d.resolution != expected {
                        bail!(
                            "decided {} (modalities {:?}), expected {expected}",
                            d.resolution,
                            d.modalities
                        );
                    }
                    return Ok((d, touches));
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        let d = self.decided(submitted, expected)?;
        Ok((d, 4))
    }

    /// Writes every thread's backtrace of the compositor (gdb, attached briefly) to
    /// `NAME-backtrace.txt`, for a person reading why it stopped answering.
    pub fn backtrace(&self, name: &str) {
        diagnostics(
            &self.out.join(format!("{name}-backtrace.txt")),
            "gdb",
            &[
                "-p",
                &self.compositor.id().to_string(),
                "-batch",
                "-ex",
                "thread apply all bt",
            ],
        );
    }

    /// Waits for a decision and checks its resolution.
    pub fn decided(&self, submitted: Submitted, expected: &str) -> Result<Decided> {
        let d = submitted.wait(Duration::from_secs(90))?;
        if d.resolution != expected {
            bail!(
                "decided {} (modalities {:?}), expected {expected}",
                d.resolution,
                d.modalities
            );
        }
        Ok(d)
    }

    /// Ends the apps and the compositor (SIGTERM: it writes its batched audit records) and
    /// copies the audit database to the output folder.
    pub fn end(&mut self) -> Vec<String> {
        let mut notes = Vec::new();
        for (name, child) in &mut self.apps {
            if let Ok(Some(status)) = child.try_wait() {
                notes.push(format!("{name} had exited ({status})"));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        // SAFETY: signalling our own child by its pid.
        unsafe {
            libc::kill(self.compositor.id() as i32, libc::SIGTERM);
        }
        let start = Instant::now();
        loop {
            match self.compositor.try_wait() {
                Ok(Some(status)) => {
                    if !status.success() {
                        notes.push(format!("the compositor exited {status}"));
                    }
                    break;
                }
                _ if start.elapsed() > Duration::from_secs(30) => {
                    notes.push("the compositor did not end on SIGTERM within 30 s".into());
                    let _ = self.compositor.kill();
                    let _ = self.compositor.wait();
                    break;
                }
                _ => std::thread::sleep(Duration::from_millis(50)),
            }
        }
        let _ = self.bus.kill();
        let _ = self.bus.wait();
        self.system.stop();
        diagnostics(&self.out.join("dmesg.log"), "dmesg", &[]);
        for file in ["state.sqlite3", "state.sqlite3-wal", "token.key"] {
            let from = PathBuf::from(STATE_DIR).join(file);
            if from.exists()
                && let Err(e) = std::fs::copy(&from, self.out.join(file))
            {
                notes.push(format!("cannot copy {}: {e}", from.display()));
            }
        }
        notes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lit_output_line_gives_its_name_and_place() {
        let line = "2025-01-01T00:00:00.1Z  INFO pcp_compositor::udev: output Virtual-1: \
                    1280x800@60Hz at 0,0";
        assert_eq!(
            parse_lit(line),
            Some(Lit {
                name: "Virtual-1".into(),
                rect: (0, 0, 1280, 800)
            })
        );
        assert_eq!(parse_lit("output removed"), None);
    }
}
