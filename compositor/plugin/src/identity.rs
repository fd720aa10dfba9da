//! Who is asking: a client's identity from its socket credentials and `/proc/PID/exe`, never
//! from anything the client says (its toplevel's app id is kept as declared text only), and the
//! process start time (`/proc/PID/stat`) that tells a reused pid apart.

use pcp_gate::ClientIdentity;
use wayland_server::{Client, DisplayHandle};

/// The identity of `client`: pid and uid from the socket, executable from `/proc`;
/// `declared_app_id` from its toplevel when the compositor knows one (unverified). A client
/// whose credentials cannot be read is known only by its connection id (shown as such), which is
/// never mistaken for another client. The start time is not read here: `/proc/PID/stat` costs
/// about half a protocol round trip (measured in `tests/benches/e2e.rs`), so it belongs to the
/// connection, read once (see [`start_time_of`]).
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
}
