//! The private world the test runs in (as root, inside `unshare --mount`): copies of /etc and
//! polkit's actions bind-mounted over the real ones, the test users with passwords, the test
//! actions and admin rule, a private /run/dbus with its own `dbus-daemon --system`, and polkitd.
//! Everything, a private /tmp with the scratch folder included, vanishes with the mount
//! namespace.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const USER: &str = "pcptest";
pub const USER_PW: &str = "s3cret-pw";
pub const ADMIN: &str = "pcpadmin";
pub const ADMIN_PW: &str = "adm1n-pw";
pub const POLKITD: &str = "/usr/lib/polkit-1/polkitd";

const POLICY: &str = include_str!("org.pcp.test.policy");

pub struct World {
    pub dir: PathBuf,
    /// This test binary, copied where the test users may run it.
    pub exe: PathBuf,
    daemons: Vec<Child>,
}

fn run(program: &str, args: &[&str]) -> Result<(), String> {
    let out = Command::new(program)
        .args(args)
        .output()
        .map_err(|e| format!("cannot run {program}: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    Err(format!(
        "`{program} {}` failed ({}): {}",
        args.join(" "),
        out.status,
        String::from_utf8_lossy(&out.stderr).trim()
    ))
}

fn set_password(user: &str, password: &str) -> Result<(), String> {
    use std::io::Write;
    let mut child = Command::new("chpasswd")
        .stdin(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run chpasswd: {e}"))?;
    let mut stdin = child.stdin.take().ok_or("chpasswd has no stdin")?;
    writeln!(stdin, "{user}:{password}").map_err(|e| format!("chpasswd: {e}"))?;
    drop(stdin);
    let status = child.wait().map_err(|e| format!("chpasswd: {e}"))?;
    if !status.success() {
        return Err(format!("chpasswd failed for {user}: {status}"));
    }
    Ok(())
}

fn chmod(path: &Path, mode: u32) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .map_err(|e| format!("cannot chmod {}: {e}", path.display()))
}

impl World {
    /// Builds the world. Must run as root in a fresh mount namespace.
    pub fn build() -> Result<Self, String> {
        run("mount", &["--make-rprivate", "/"])?;
        // A private /tmp: the test users need one they can write (the host's may be anyone's
        // mode: another job on this machine once left it 0700), and nothing leaks out of it.
        run(
            "mount",
            &["-t", "tmpfs", "-o", "mode=1777", "tmpfs", "/tmp"],
        )?;
        let dir = PathBuf::from("/tmp/pcp-polkit-test");
        std::fs::create_dir_all(&dir).map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
        let mut world = Self {
            dir: dir.clone(),
            exe: dir.join("pcp-polkit-test"),
            daemons: Vec::new(),
        };
        chmod(&dir, 0o755)?;
        let d = dir.to_string_lossy().into_owned();
        run("cp", &["-a", "/etc", &format!("{d}/etc")])?;
        run("mount", &["--bind", &format!("{d}/etc"), "/etc"])?;
        run("cp", &["-a", "/usr/share/polkit-1", &format!("{d}/pk")])?;
        run(
            "mount",
            &["--bind", &format!("{d}/pk"), "/usr/share/polkit-1"],
        )?;
        std::fs::create_dir_all("/run/dbus").map_err(|e| format!("/run/dbus: {e}"))?;
        run("mount", &["-t", "tmpfs", "tmpfs", "/run/dbus"])?;
        for (user, pw) in [(USER, USER_PW), (ADMIN, ADMIN_PW)] {
            if run("id", &["-u", user]).is_err() {
                run("useradd", &["-M", "-s", "/bin/sh", user])?;
            }
            set_password(user, pw)?;
        }
        let write = |path: &str, text: &str| {
            std::fs::write(path, text).map_err(|e| format!("cannot write {path}: {e}"))
        };
        write("/usr/share/polkit-1/actions/org.pcp.test.policy", POLICY)?;
        std::fs::create_dir_all("/etc/polkit-1/rules.d").map_err(|e| format!("rules.d: {e}"))?;
        // One action offers two accounts, the subject's own and the admin's, so that choosing
        // between them can be tested.
        let rule = format!(
            "polkit.addAdminRule(function(a, s) {{\n\
             \x20 if (a.id == \"org.pcp.test.choose\") return [\"unix-user:{ADMIN}\", \"unix-user:{USER}\"];\n\
             \x20 return [\"unix-user:{ADMIN}\"];\n}});\n"
        );
        write("/etc/polkit-1/rules.d/00-pcp-test.rules", &rule)?;
        let exe = std::env::current_exe().map_err(|e| format!("where is this test? {e}"))?;
        std::fs::copy(&exe, &world.exe).map_err(|e| format!("cannot copy the test: {e}"))?;
        chmod(&world.exe, 0o755)?;
        world.start_daemons()?;
        Ok(world)
    }

    fn start_daemons(&mut self) -> Result<(), String> {
        // Our own processes and the users' must find the private bus at its standard path.
        // SAFETY: single-threaded here (before any case starts a thread).
        unsafe { std::env::remove_var("DBUS_SYSTEM_BUS_ADDRESS") };
        let mut dbus = Command::new("dbus-daemon")
            .args(["--system", "--nofork", "--nopidfile", "--print-address=1"])
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start dbus-daemon: {e}"))?;
        let out = dbus.stdout.take();
        self.daemons.push(dbus);
        // It prints its address once it listens.
        let mut line = String::new();
        let mut reader = BufReader::new(out.ok_or("dbus-daemon has no stdout")?);
        reader
            .read_line(&mut line)
            .map_err(|e| format!("dbus-daemon: {e}"))?;
        if line.trim().is_empty() {
            return Err("dbus-daemon --system exited without listening".into());
        }
        let log = std::fs::File::create(self.dir.join("polkitd.log"))
            .map_err(|e| format!("polkitd.log: {e}"))?;
        let polkitd = Command::new(POLKITD)
            .arg("--no-debug")
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(|e| format!("cannot start polkitd: {e}"))?;
        self.daemons.push(polkitd);
        self.wait_for_polkitd()
    }

    fn wait_for_polkitd(&self) -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(20);
        let bus = zbus::block_on(zbus::Connection::system())
            .map_err(|e| format!("cannot reach the private system bus: {e}"))?;
        loop {
            let owner = zbus::block_on(async {
                let dbus = zbus::fdo::DBusProxy::new(&bus).await?;
                let name = zbus::names::BusName::from_static_str("org.freedesktop.PolicyKit1")?;
                dbus.name_has_owner(name).await.map_err(zbus::Error::from)
            });
            if let Ok(true) = owner {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "polkitd did not take its name within 20 s ({owner:?}); its log: {}",
                    self.polkitd_log()
                ));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Stops polkitd and waits until its name is free.
    pub fn stop_polkitd(&self) -> Result<(), String> {
        let polkitd = self.daemons.get(1).ok_or("polkitd was not started")?;
        let pid = libc::pid_t::try_from(polkitd.id()).map_err(|e| e.to_string())?;
        // SAFETY: kill has no memory preconditions; polkitd is our unreaped child.
        unsafe { libc::kill(pid, libc::SIGTERM) };
        let bus = zbus::block_on(zbus::Connection::system()).map_err(|e| e.to_string())?;
        for _ in 0..100 {
            let owned = zbus::block_on(async {
                let dbus = zbus::fdo::DBusProxy::new(&bus).await?;
                let name = zbus::names::BusName::from_static_str("org.freedesktop.PolicyKit1")?;
                dbus.name_has_owner(name).await.map_err(zbus::Error::from)
            });
            if let Ok(false) = owned {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Err("polkitd's name was still owned 10 s after SIGTERM".into())
    }

    pub fn polkitd_log(&self) -> String {
        std::fs::read_to_string(self.dir.join("polkitd.log")).unwrap_or_default()
    }
}

impl Drop for World {
    fn drop(&mut self) {
        for daemon in self.daemons.iter_mut().rev() {
            let _ = daemon.kill();
            let _ = daemon.wait();
        }
        // The bind mounts die with the namespace; the copies under `dir` are ours to remove.
        let _ = Command::new("umount")
            .args(["/etc", "/usr/share/polkit-1"])
            .status();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
