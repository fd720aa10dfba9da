//! Who is asking: a client's identity taken from its socket when it connects — the connecting
//! process as a pidfd (`SO_PEERPIDFD`, else `pidfd_open` of the `SO_PEERCRED` pid), its uid, its
//! full executable path and start time, and the sandbox it connected through
//! (`wp_security_context_v1`) — and checked again at every submit, so that a process that exited
//! (its pid perhaps reused) or ran another program since it connected is never named as the one
//! that connected. Nothing the client says enters it: its toplevel's app id is kept as declared
//! text only.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::net::UnixStream;

use pcp_gate::{ClientIdentity, ProcessChange, SandboxIdentity};
use wayland_server::{Client, DisplayHandle};

/// The identity of one client connection, taken when it connected. Keep it in the client's
/// data (see `docs/embedding.md`) and give it to the plugin through
/// [`PcpHandler::connection`](crate::PcpHandler::connection).
#[derive(Debug)]
pub struct ConnectionIdentity {
    /// pid, uid, executable, start time and sandbox at connect (no id, no declared app id).
    identity: ClientIdentity,
    /// A pidfd of the connecting process: it tells whether that very process is still alive,
    /// whatever happened to its pid number. `None` when the kernel gave none (then the start
    /// time is read again at each check).
    pidfd: Option<OwnedFd>,
    /// `/proc/PID` of the connecting process, opened at connect while its pidfd showed it
    /// alive. The folder stays bound to that very process, not to its pid number: `exe` read
    /// through it is that process's program, and reading it fails once the process has exited,
    /// whoever has the number since. It makes the check one `readlinkat`.
    proc_dir: Option<OwnedFd>,
}

impl ConnectionIdentity {
    /// The identity of the process at the other end of `stream` (a client socket just
    /// accepted), in `sandbox` when it connected through a security context's listener.
    /// Credentials that cannot be read leave the connection known by its id only.
    pub fn of_stream(stream: &UnixStream, sandbox: Option<SandboxIdentity>) -> ConnectionIdentity {
        let fd = stream.as_raw_fd();
        let cred = peer_credentials(fd);
        if let Err(e) = &cred {
            tracing::warn!("no socket credentials for a client: {e}");
        }
        let (pid, uid) = match cred {
            Ok(c) => (u32::try_from(c.pid).ok().filter(|p| *p > 0), Some(c.uid)),
            Err(_) => (None, None),
        };
        // The socket's own pidfd names the process that connected even if it is already gone;
        // `pidfd_open` afterwards is the fallback for kernels before 6.5.
        let pidfd = peer_pidfd(fd)
            .ok()
            .or_else(|| pid.and_then(|p| pidfd_open(p).ok()));
        let proc_dir = pidfd.as_ref().and(pid).and_then(|p| open_proc_dir(p).ok());
        let executable = pid.and_then(executable_of);
        let start_time = pid.and_then(start_time_of);
        let mut connection = ConnectionIdentity {
            identity: ClientIdentity {
                id: String::new(),
                sandbox,
                pid,
                uid,
                executable,
                start_time,
                declared_app_id: None,
            },
            pidfd,
            proc_dir,
        };
        // Between accept and the reads above the process may have gone and its pid been
        // reused: the pidfd (taken first) says so, and then the `/proc` folder opened by
        // number may be another process's.
        if pid.is_some() && !connection.alive() {
            tracing::warn!("a client's connecting process exited as it connected");
            connection.proc_dir = None;
        }
        connection
    }

    /// The identity seen at connect (its `id` and `declared_app_id` are empty).
    pub fn identity(&self) -> &ClientIdentity {
        &self.identity
    }

    /// Whether the connection has a pidfd of its process (else the checks read the start time).
    pub fn has_pidfd(&self) -> bool {
        self.pidfd.is_some()
    }

    /// Whether the connecting process is still the one that connected and runs the program it
    /// ran then. A sandboxed client's identity is its security context's (the sandbox engine
    /// vouches for it, whatever runs inside): nothing to check. Costs one `readlinkat` through
    /// the process's `/proc` folder while nothing changed; otherwise (or without that folder)
    /// two `poll`s of the pidfd around a `readlink`, plus a `/proc/PID/stat` read without a
    /// pidfd, which also name what changed.
    pub fn check(&self) -> Result<(), ProcessChange> {
        let c = &self.identity;
        if c.sandbox.is_some() {
            return Ok(());
        }
        let Some(pid) = c.pid else {
            return Ok(());
        };
        if let (Some(dir), Some(then)) = (&self.proc_dir, &c.executable) {
            let mut link = [0u8; libc::PATH_MAX as usize];
            // Read through the folder bound to the process that connected: the same program
            // means the same living process, unchanged.
            if exe_in(dir, &mut link) == Some(then.as_bytes()) {
                return Ok(());
            }
        }
        if !self.alive() {
            return Err(ProcessChange::Gone { pid });
        }
        let now = ClientIdentity {
            pid: Some(pid),
            executable: executable_of(pid),
            start_time: match &self.pidfd {
                Some(_) => c.start_time,
                None => start_time_of(pid),
            },
            ..c.clone()
        };
        // The executable was read from the pid: the process must still have been alive after it
        // (else the pid may have been someone else's by then).
        if !self.alive() {
            return Err(ProcessChange::Gone { pid });
        }
        c.process_change(&now)
    }

    /// The identity to decide and audit with: the one seen at connect, named `id` and with the
    /// client's own (unverified) app id.
    pub fn for_submit(&self, id: String, declared_app_id: Option<String>) -> ClientIdentity {
        ClientIdentity {
            id,
            declared_app_id,
            ..self.identity.clone()
        }
    }

    /// The connecting process has not exited (a pidfd polls readable once it has). Without a
    /// pidfd, only the start-time comparison in [`check`](Self::check) can tell.
    fn alive(&self) -> bool {
        let Some(fd) = &self.pidfd else {
            return true;
        };
        let mut p = libc::pollfd {
            fd: fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd, a zero timeout.
        let n = unsafe { libc::poll(&mut p, 1, 0) };
        // An error is not proof of life: fail closed.
        n == 0
    }
}

/// The sandbox a `wp_security_context_v1` listener stands for, as the gate keeps it.
pub fn sandbox_of(
    context: &smithay::wayland::security_context::SecurityContext,
) -> SandboxIdentity {
    SandboxIdentity {
        engine: context.sandbox_engine.clone(),
        app_id: context.app_id.clone(),
        instance_id: context.instance_id.clone(),
    }
}

/// Whether a client may see privileged globals (layer-shell, the security-context manager,
/// and any input-injection or screen-capture global): only one that did not connect through a
/// security context. A host passes this, with the client's [`ConnectionIdentity`], to each
/// such global's filter (Smithay's `new_with_filter` / `can_view`); a client with no known
/// connection is refused (fail closed).
pub fn may_see_privileged_globals(connection: Option<&ConnectionIdentity>) -> bool {
    connection.is_some_and(|c| c.identity.sandbox.is_none())
}

/// The identity of `client` read now from its socket credentials and `/proc`, for a host that
/// keeps no [`ConnectionIdentity`]: it cannot tell an exec or a reused pid since connect, so
/// hosts should take the identity at connect instead.
pub fn client_identity(
    dh: &DisplayHandle,
    client: &Client,
    declared_app_id: Option<String>,
) -> ClientIdentity {
    let id = format!("wl-{:?}", client.id());
    match client.get_credentials(dh) {
        Ok(cred) => {
            let pid = u32::try_from(cred.pid).ok();
            ClientIdentity {
                id,
                pid,
                uid: Some(cred.uid),
                executable: pid.and_then(executable_of),
                start_time: pid.and_then(start_time_of),
                declared_app_id,
                ..ClientIdentity::default()
            }
        }
        Err(e) => {
            tracing::warn!("no socket credentials for a client: {e}");
            ClientIdentity {
                id,
                declared_app_id,
                ..ClientIdentity::default()
            }
        }
    }
}

fn peer_credentials(fd: i32) -> std::io::Result<libc::ucred> {
    let mut cred = libc::ucred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: `cred` is a ucred and `len` its size.
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&mut cred as *mut libc::ucred).cast(),
            &mut len,
        )
    };
    if r != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(cred)
}

/// `SO_PEERPIDFD` (Linux 6.5): a pidfd of the process that connected, taken by the kernel at
/// `connect()`.
fn peer_pidfd(fd: i32) -> std::io::Result<OwnedFd> {
    let mut pidfd: libc::c_int = -1;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: `pidfd` is a c_int and `len` its size.
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_PEERPIDFD,
            (&mut pidfd as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    if r != 0 || pidfd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: the kernel gave us this new descriptor.
    Ok(unsafe { OwnedFd::from_raw_fd(pidfd) })
}

/// `pidfd_open(2)` (Linux 5.3).
fn pidfd_open(pid: u32) -> std::io::Result<OwnedFd> {
    let pid = libc::pid_t::try_from(pid).map_err(std::io::Error::other)?;
    // SAFETY: a plain syscall with no pointers.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    let fd = i32::try_from(fd).map_err(std::io::Error::other)?;
    // SAFETY: the kernel gave us this new descriptor.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// `/proc/PID` as a path descriptor.
fn open_proc_dir(pid: u32) -> std::io::Result<OwnedFd> {
    let path = std::ffi::CString::new(format!("/proc/{pid}")).map_err(std::io::Error::other)?;
    // SAFETY: a NUL-terminated path and plain flags.
    let fd = unsafe {
        libc::open(
            path.as_ptr(),
            libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: the kernel gave us this new descriptor.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The `exe` link in a `/proc/PID` folder, read into `buf`; `None` when it cannot be read
/// (the process is gone) or does not fit.
fn exe_in<'b>(dir: &OwnedFd, buf: &'b mut [u8]) -> Option<&'b [u8]> {
    // SAFETY: a valid descriptor, a NUL-terminated name, and `buf` with its length.
    let n = unsafe {
        libc::readlinkat(
            dir.as_raw_fd(),
            c"exe".as_ptr(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    let n = usize::try_from(n).ok().filter(|n| *n < buf.len())?;
    buf.get(..n)
}

/// The executable of a running process, from the kernel's `/proc/PID/exe` link.
pub fn executable_of(pid: u32) -> Option<String> {
    std::fs::read_link(format!("/proc/{pid}/exe"))
        .ok()
        .map(|p| p.to_string_lossy().into_owned())
}

/// When a process started, in clock ticks after boot: field 22 of `/proc/PID/stat`. The
/// command name (field 2) is in parentheses and may itself hold spaces and `)`, so the fields
/// are counted from the last `)`.
pub fn start_time_of(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_start_time(&stat)
}

fn parse_start_time(stat: &str) -> Option<u64> {
    let after_comm = &stat[stat.rfind(')')? + 1..];
    // After the command name come field 3 (state) onwards: field 22 is the 20th of those.
    after_comm.split_whitespace().nth(19)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn our_own_executable_is_read_from_proc() {
        let exe = executable_of(std::process::id()).unwrap();
        let expected = std::env::current_exe().unwrap();
        assert_eq!(exe, expected.to_string_lossy());
        assert_eq!(executable_of(u32::MAX), None);
    }

    #[test]
    fn the_start_time_is_field_22_even_after_a_hostile_command_name() {
        let stat = "77 (a) b (c) S 1 77 77 0 -1 4194560 10 0 0 0 1 2 0 0 20 0 1 0 123456 \
                    1000 50 18446744073709551615";
        assert_eq!(parse_start_time(stat), Some(123456));
        assert_eq!(parse_start_time("77 (x) S 1"), None);
        let ours = start_time_of(std::process::id()).unwrap();
        assert_eq!(start_time_of(std::process::id()), Some(ours), "stable");
        assert_eq!(start_time_of(u32::MAX), None);
    }

    /// A python3 process connected to a fresh socket, then running `then` (it has `os` and
    /// `sys`; its standard input is a pipe): the child and this side's end of its connection.
    fn python_client(then: &str) -> (std::process::Child, std::os::unix::net::UnixStream) {
        let listener_dir = tempfile::tempdir().unwrap();
        let path = listener_dir.path().join("s");
        let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let child = std::process::Command::new("python3")
            .arg("-c")
            .arg(format!(
                "import os,socket,sys; s=socket.socket(socket.AF_UNIX); s.connect({:?}); {then}",
                path.to_str().unwrap()
            ))
            .stdin(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let (stream, _) = listener.accept().unwrap();
        (child, stream)
    }

    #[test]
    fn a_process_that_runs_another_program_after_connecting_is_caught() {
        let (mut child, stream) =
            python_client("sys.stdin.readline(); os.execv('/bin/sleep', ['sleep', '30'])");
        let conn = ConnectionIdentity::of_stream(&stream, None);
        assert!(conn.proc_dir.is_some(), "the fast check is in use");
        assert_eq!(conn.check(), Ok(()));
        use std::io::Write;
        child.stdin.take().unwrap().write_all(b"exec\n").unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let change = loop {
            match conn.check() {
                Ok(()) if std::time::Instant::now() < deadline => {
                    std::thread::sleep(std::time::Duration::from_millis(5))
                }
                other => break other,
            }
        };
        let _ = child.kill();
        child.wait().unwrap();
        match change {
            Err(ProcessChange::Exec { pid, then, now }) => {
                assert_eq!(pid, child.id());
                assert!(then.contains("python3"), "{then}");
                assert!(now.ends_with("sleep"), "{now}");
            }
            other => panic!("the exec was not seen: {other:?}"),
        }
        assert_eq!(conn.check(), Err(ProcessChange::Gone { pid: child.id() }));
    }

    #[test]
    fn a_connection_names_its_peer_and_notices_it_exit() {
        // The peer is a child process holding one end of a socket pair.
        let (ours, theirs) = UnixStream::pair().unwrap();
        let conn = ConnectionIdentity::of_stream(&ours, None);
        // A socket pair's peer is this very process.
        assert_eq!(conn.identity().pid, Some(std::process::id()));
        assert!(
            conn.has_pidfd(),
            "pidfd_open at least exists on this kernel"
        );
        assert_eq!(conn.check(), Ok(()));
        drop(theirs);

        let (mut child, stream) = python_client("sys.stdin.read()");
        let conn = ConnectionIdentity::of_stream(&stream, None);
        assert_eq!(conn.identity().pid, Some(child.id()));
        assert!(
            conn.identity()
                .executable
                .as_deref()
                .unwrap()
                .contains("python3")
        );
        assert_eq!(conn.check(), Ok(()));
        drop(child.stdin.take());
        child.wait().unwrap();
        assert_eq!(conn.check(), Err(ProcessChange::Gone { pid: child.id() }));
    }
}
