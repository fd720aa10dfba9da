//! Who is asking: a client's identity from its socket credentials and `/proc/PID/exe`, never from
//! anything the client says.

use pcp_gate::ClientIdentity;
use wayland_server::{Client, DisplayHandle};

/// The identity of `client`: pid, uid and executable from the kernel; `app_id` from its toplevel
/// when the compositor knows one. A client whose credentials cannot be read is known only by its
/// connection id (shown as such), which is never mistaken for another client.
pub fn client_identity(
    dh: &DisplayHandle,
    client: &Client,
    app_id: Option<String>,
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
                app_id,
            }
        }
        Err(e) => {
            tracing::warn!("no socket credentials for a client: {e}");
            ClientIdentity {
                id,
                app_id,
                ..ClientIdentity::default()
            }
        }
    }
}

/// The executable of a running process, from the kernel's `/proc/PID/exe` link.
pub fn executable_of(pid: u32) -> Option<String> {
    std::fs::read_link(format!("/proc/{pid}/exe"))
        .ok()
        .map(|p| p.to_string_lossy().into_owned())
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
}
