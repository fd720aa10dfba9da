//! The polkit subject the agent registers for: a logind session, or a process (pid, start time
//! and uid) where there is no logind session.

use std::collections::HashMap;

use zbus::Connection;
use zbus::zvariant::{OwnedObjectPath, Value};

use crate::error::StartError;

/// Whom polkitd sends our agent requests for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Subject {
    /// A logind session id: every process of the session is covered. polkitd only lets a
    /// process inside that session register for it.
    Session(String),
    /// One process (usually the compositor itself), named by pid and start time so a recycled
    /// pid is not mistaken for it.
    Process { pid: u32, start_time: u64, uid: u32 },
}

/// Which subject to register for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum SubjectChoice {
    /// Our logind session when logind knows this process, else this process.
    #[default]
    Auto,
    /// A given subject (tests: the shell that runs `pkcheck`; the `[polkit]` config's override).
    Fixed(Subject),
}

impl Subject {
    /// The `unix-process` subject of process `pid` as its owner sees it: start time from
    /// `/proc/PID/stat` and uid from `/proc/PID/status`.
    pub fn process(pid: u32) -> Result<Self, StartError> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map_err(|e| StartError::Subject(format!("cannot read /proc/{pid}/stat: {e}")))?;
        let start_time = start_time_from_stat(&stat)
            .ok_or_else(|| StartError::Subject(format!("/proc/{pid}/stat has no start time")))?;
        let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
            .map_err(|e| StartError::Subject(format!("cannot read /proc/{pid}/status: {e}")))?;
        let uid = real_uid_from_status(&status)
            .ok_or_else(|| StartError::Subject(format!("/proc/{pid}/status has no Uid line")))?;
        Ok(Self::Process {
            pid,
            start_time,
            uid,
        })
    }

    /// This process's own `unix-process` subject.
    pub fn own_process() -> Result<Self, StartError> {
        Self::process(std::process::id())
    }

    /// Parses the `[polkit]` config's subject override: `unix-session:ID` or `unix-process:PID`
    /// (the process must exist: its start time and uid are read now).
    pub fn parse(text: &str) -> Result<Self, StartError> {
        let bad = || {
            StartError::Subject(format!(
                "{text:?} is neither unix-session:ID nor unix-process:PID"
            ))
        };
        match text.split_once(':').ok_or_else(bad)? {
            ("unix-session", id) if !id.is_empty() => Ok(Self::Session(id.to_owned())),
            ("unix-process", pid) => Self::process(pid.parse().map_err(|_| bad())?),
            _ => Err(bad()),
        }
    }

    /// The subject as polkit's `(sa{sv})`: kind and details. polkit reads `uid` as int32.
    pub(crate) fn to_dbus(&self) -> (&'static str, HashMap<&'static str, Value<'_>>) {
        match self {
            Self::Session(id) => (
                "unix-session",
                HashMap::from([("session-id", Value::from(id.as_str()))]),
            ),
            Self::Process {
                pid,
                start_time,
                uid,
            } => (
                "unix-process",
                HashMap::from([
                    ("pid", Value::from(*pid)),
                    ("start-time", Value::from(*start_time)),
                    ("uid", Value::from(i32::try_from(*uid).unwrap_or(-1))),
                ]),
            ),
        }
    }
}

/// Field 22 of `/proc/PID/stat` (start time in clock ticks since boot). The command name (field
/// 2) is in parentheses and may itself hold spaces and parentheses, so fields are counted from
/// the last `)`.
pub(crate) fn start_time_from_stat(stat: &str) -> Option<u64> {
    let (_, rest) = stat.rsplit_once(')')?;
    // After `)`: field 3 (state) is the first, so field 22 is the 20th.
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// The real uid of process `pid`, from `/proc/PID/status` (`None` when it is gone or
/// unreadable).
pub fn real_uid(pid: u32) -> Option<u32> {
    real_uid_from_status(&std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?)
}

/// The real uid: the first number of the `Uid:` line of `/proc/PID/status`.
fn real_uid_from_status(status: &str) -> Option<u32> {
    status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Resolves [`SubjectChoice::Auto`]: our logind session if logind runs and places this process in
/// a session, else this process. A missing logind is ordinary (containers, tests, sessions
/// without systemd), so it only decides the fallback.
pub(crate) async fn resolve(
    bus: &Connection,
    choice: &SubjectChoice,
) -> Result<Subject, StartError> {
    if let SubjectChoice::Fixed(subject) = choice {
        return Ok(subject.clone());
    }
    match logind_session(bus).await {
        Ok(id) => return Ok(Subject::Session(id)),
        Err(why) => tracing::info!("polkit agent: no logind session ({why}): unix-process subject"),
    }
    Subject::own_process()
}

async fn logind_session(bus: &Connection) -> Result<String, String> {
    const LOGIN1: &str = "org.freedesktop.login1";
    let manager = zbus::Proxy::new(
        bus,
        LOGIN1,
        "/org/freedesktop/login1",
        "org.freedesktop.login1.Manager",
    )
    .await
    .map_err(|e| e.to_string())?;
    let path: OwnedObjectPath = manager
        .call("GetSessionByPID", &(std::process::id()))
        .await
        .map_err(|e| format!("logind has no session for us: {e}"))?;
    let session = zbus::Proxy::new(bus, LOGIN1, path, "org.freedesktop.login1.Session")
        .await
        .map_err(|e| e.to_string())?;
    let id: String = session
        .get_property("Id")
        .await
        .map_err(|e| format!("cannot read the session's id: {e}"))?;
    if id.is_empty() {
        return Err("logind gave an empty session id".into());
    }
    Ok(id)
}

#[cfg(test)]
mod tests {
    use super::{Subject, real_uid_from_status, start_time_from_stat};

    #[test]
    fn start_time_is_field_22_even_with_parentheses_in_the_name() {
        let stat = "42 (a) b (c)) S 1 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 279492 1 2";
        assert_eq!(start_time_from_stat(stat), Some(279_492));
        assert_eq!(start_time_from_stat("42 (x) S 1"), None);
        assert_eq!(start_time_from_stat("no parenthesis"), None);
    }

    #[test]
    fn real_uid_is_the_first_of_the_uid_line() {
        assert_eq!(
            real_uid_from_status("Name:\tx\nUid:\t1001\t0\t0\t0\n"),
            Some(1001)
        );
        assert_eq!(real_uid_from_status("Name:\tx\n"), None);
    }

    #[test]
    fn the_config_override_parses_sessions_and_live_processes() {
        assert_eq!(
            Subject::parse("unix-session:c2").ok(),
            Some(Subject::Session("c2".into()))
        );
        let own = format!("unix-process:{}", std::process::id());
        assert_eq!(Subject::parse(&own).ok(), Subject::own_process().ok());
        for bad in ["c2", "unix-session:", "unix-process:x", "unix-user:0"] {
            let err = Subject::parse(bad).expect_err(bad).to_string();
            assert!(
                err.contains("neither unix-session:ID nor unix-process:PID"),
                "{err}"
            );
        }
    }

    #[test]
    fn own_process_matches_this_process() {
        let Subject::Process { pid, uid, .. } = Subject::own_process().expect("own subject") else {
            panic!("own_process gave a session");
        };
        assert_eq!(pid, std::process::id());
        // SAFETY: getuid has no preconditions and cannot fail.
        assert_eq!(uid, unsafe { libc::getuid() });
    }
}
