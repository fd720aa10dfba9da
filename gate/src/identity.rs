//! Who asks, as the kernel and the sandbox know it: the verified identity of a client (its
//! sandbox from `wp_security_context_v1`, or its process from the socket's credentials), the
//! self-declared app id kept apart as unverified text, and the app key that friction history,
//! prompt slots and tokens are keyed by.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The sandbox a client connected through, from the compositor's `wp_security_context_v1`
/// listener. The sandbox engine (e.g. `pcp` for `pcpctl run`, `flatpak`) set these when it made
/// the listening socket; the client inside cannot change them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SandboxIdentity {
    /// The sandbox engine, e.g. `pcp` or `flatpak`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
    /// The app the sandbox runs, as the engine names it (e.g. `org.mozilla.firefox`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub app_id: Option<String>,
    /// This instance of the sandbox (one per `flatpak run` / `pcpctl run`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instance_id: Option<String>,
}

/// Who asked: from the socket's credentials, `/proc` and the security context the client
/// connected through, never from a request. Only [`ClientIdentity::declared_app_id`] comes from
/// the client itself, and nothing the gate decides depends on it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientIdentity {
    /// A key unique to the client connection (never shared by two clients).
    pub id: String,
    /// The sandbox the client connected through; `None` for an unconfined client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxIdentity>,
    /// The connecting process, from the socket's credentials (`SO_PEERCRED` / a pidfd).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uid: Option<u32>,
    /// The full path of the connecting process's executable (`/proc/PID/exe`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub executable: Option<String>,
    /// When the connecting process started, in clock ticks after boot (`/proc/PID/stat` field
    /// 22). With the pid it names one process for the machine's uptime: a pid reused by another
    /// process has another start time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<u64>,
    /// What the client calls itself (`xdg_toplevel.set_app_id`). Unverified: any client can
    /// claim any name, so it is only ever shown as secondary text and never keys anything.
    /// (Audit records written before it was renamed call it `app_id`.)
    #[serde(default, alias = "app_id", skip_serializing_if = "Option::is_none")]
    pub declared_app_id: Option<String>,
}

/// How much of a client's identity is known, from the most trustworthy source down.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IdentityKind {
    /// The client connected through a sandbox's security context: the engine named it.
    Sandboxed,
    /// An unconfined process known by uid and executable from the kernel.
    Unconfined,
    /// Nothing verified: the client is known only by its connection.
    Unknown,
}

impl IdentityKind {
    pub fn as_str(self) -> &'static str {
        match self {
            IdentityKind::Sandboxed => "sandboxed",
            IdentityKind::Unconfined => "unconfined",
            IdentityKind::Unknown => "unknown",
        }
    }
}

/// Why a client's connecting process is no longer the one that connected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProcessChange {
    /// The process is gone (or its `/proc` entry can no longer be read).
    #[error("the connecting process {pid} is gone")]
    Gone { pid: u32 },
    /// Another process now has the pid.
    #[error("pid {pid} now belongs to another process (started at tick {now}, not {then})")]
    PidReused { pid: u32, then: u64, now: u64 },
    /// The process replaced its program (`execve`) since it connected.
    #[error("the connecting process {pid} now runs {now}, not {then}")]
    Exec { pid: u32, then: String, now: String },
}

impl ClientIdentity {
    /// A client known only by a name (replay traces, tests).
    pub fn named(name: &str) -> ClientIdentity {
        ClientIdentity {
            id: name.to_string(),
            ..ClientIdentity::default()
        }
    }

    /// How much of this identity is verified.
    pub fn kind(&self) -> IdentityKind {
        if self.sandbox.is_some() {
            IdentityKind::Sandboxed
        } else if self.uid.is_some() && self.executable.is_some() {
            IdentityKind::Unconfined
        } else {
            IdentityKind::Unknown
        }
    }

    /// The verified app identity that friction history, prompt slots and tokens are keyed by:
    ///
    /// - `sandbox:ENGINE:APP_ID` for a sandboxed client with an app id (every instance of the
    ///   app shares it), else `sandbox-instance:ENGINE:INSTANCE_ID`;
    /// - `exe:UID:/full/path` for an unconfined client (the uid and the executable);
    /// - `connection:ID` when nothing is verified (never shared by two clients).
    ///
    /// The self-declared app id never enters it. Every part but the last has `%` and `:`
    /// escaped, so two different identities never give the same key.
    pub fn app_key(&self) -> String {
        if let Some(sandbox) = &self.sandbox {
            let engine = escape(sandbox.engine.as_deref().unwrap_or(""));
            if let Some(app) = &sandbox.app_id {
                return format!("sandbox:{engine}:{app}");
            }
            if let Some(instance) = &sandbox.instance_id {
                return format!("sandbox-instance:{engine}:{instance}");
            }
        } else if let (Some(uid), Some(exe)) = (self.uid, &self.executable) {
            return format!("exe:{uid}:{exe}");
        }
        format!("connection:{}", self.id)
    }

    /// The verified name to show a user: the sandbox's app id (else its instance id), else the
    /// full executable path, else the connection id. Never the self-declared app id.
    pub fn display_name(&self) -> &str {
        if let Some(sandbox) = &self.sandbox
            && let Some(name) = sandbox.app_id.as_ref().or(sandbox.instance_id.as_ref())
        {
            return name;
        }
        if self.uid.is_some()
            && let Some(exe) = &self.executable
        {
            return exe;
        }
        &self.id
    }

    /// Whether `current` (the identity read again now, for the same connection) is still the
    /// process that connected: same pid, same start time (not a reused pid), same executable
    /// (no `execve` since). `Ok` when nothing is known to compare (a sandboxed client's identity
    /// is the security context's and does not change).
    pub fn process_change(&self, current: &ClientIdentity) -> Result<(), ProcessChange> {
        let Some(pid) = self.pid else {
            return Ok(());
        };
        if current.pid != Some(pid) {
            return Err(ProcessChange::Gone { pid });
        }
        if let Some(then) = self.start_time {
            match current.start_time {
                None => return Err(ProcessChange::Gone { pid }),
                Some(now) if now != then => {
                    return Err(ProcessChange::PidReused { pid, then, now });
                }
                Some(_) => {}
            }
        }
        if let Some(then) = &self.executable {
            match &current.executable {
                None => return Err(ProcessChange::Gone { pid }),
                Some(now) if now != then => {
                    return Err(ProcessChange::Exec {
                        pid,
                        then: then.clone(),
                        now: now.clone(),
                    });
                }
                Some(_) => {}
            }
        }
        Ok(())
    }
}

impl fmt::Display for ClientIdentity {
    /// The verified name with what backs it: `pcp app org.example (sandboxed)`, or
    /// `/usr/bin/foo (pid 12, uid 1000)`, or the connection id.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind() {
            IdentityKind::Sandboxed => {
                let engine = self
                    .sandbox
                    .as_ref()
                    .and_then(|s| s.engine.as_deref())
                    .unwrap_or("unnamed sandbox");
                write!(f, "{} ({engine})", self.display_name())
            }
            IdentityKind::Unconfined => {
                write!(f, "{}", self.display_name())?;
                if let (Some(pid), Some(uid)) = (self.pid, self.uid) {
                    write!(f, " (pid {pid}, uid {uid})")?;
                }
                Ok(())
            }
            IdentityKind::Unknown => f.write_str(&self.id),
        }
    }
}

/// `%` and `:` percent-escaped, so a part of an app key cannot imitate a separator.
fn escape(part: &str) -> String {
    part.replace('%', "%25").replace(':', "%3A")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unconfined(pid: u32, exe: &str) -> ClientIdentity {
        ClientIdentity {
            id: format!("wl-{pid}"),
            pid: Some(pid),
            uid: Some(1000),
            executable: Some(exe.into()),
            start_time: Some(500),
            ..ClientIdentity::default()
        }
    }

    fn sandboxed(engine: &str, app: Option<&str>, instance: Option<&str>) -> ClientIdentity {
        ClientIdentity {
            id: "wl-7".into(),
            sandbox: Some(SandboxIdentity {
                engine: Some(engine.into()),
                app_id: app.map(Into::into),
                instance_id: instance.map(Into::into),
            }),
            ..unconfined(7, "/usr/bin/bwrap")
        }
    }

    #[test]
    fn the_app_key_is_verified_and_ignores_the_declared_app_id() {
        let mut a = unconfined(10, "/usr/bin/agent");
        let b = ClientIdentity {
            declared_app_id: Some("org.mozilla.firefox".into()),
            ..unconfined(11, "/usr/bin/agent")
        };
        a.declared_app_id = Some("something.else".into());
        assert_eq!(a.app_key(), "exe:1000:/usr/bin/agent");
        assert_eq!(
            a.app_key(),
            b.app_key(),
            "the same program, whatever it says"
        );
        assert_ne!(
            a.app_key(),
            unconfined(10, "/usr/bin/firefox").app_key(),
            "another program"
        );
        let other_user = ClientIdentity {
            uid: Some(1001),
            ..unconfined(10, "/usr/bin/agent")
        };
        assert_ne!(a.app_key(), other_user.app_key());
    }

    #[test]
    fn sandboxed_clients_are_keyed_by_engine_and_app_id() {
        let one = sandboxed("pcp", Some("org.example.Agent"), Some("1"));
        let two = sandboxed("pcp", Some("org.example.Agent"), Some("2"));
        assert_eq!(one.app_key(), "sandbox:pcp:org.example.Agent");
        assert_eq!(
            one.app_key(),
            two.app_key(),
            "instances of one app share it"
        );
        assert_ne!(
            one.app_key(),
            sandboxed("flatpak", Some("org.example.Agent"), None).app_key()
        );
        // The sandbox's launcher runs the same executable for every app: it never keys.
        assert_ne!(
            one.app_key(),
            sandboxed("pcp", Some("org.example.Other"), None).app_key()
        );
        assert_eq!(
            sandboxed("pcp", None, Some("abc")).app_key(),
            "sandbox-instance:pcp:abc"
        );
        let bare = sandboxed("pcp", None, None);
        assert_eq!(bare.app_key(), "connection:wl-7");
    }

    #[test]
    fn separators_in_a_part_cannot_forge_another_key() {
        let a = sandboxed("a:b", Some("c"), None);
        let b = sandboxed("a", Some("b:c"), None);
        assert_ne!(a.app_key(), b.app_key());
        assert_eq!(a.app_key(), "sandbox:a%3Ab:c");
    }

    #[test]
    fn nothing_known_is_keyed_by_the_connection_alone() {
        let a = ClientIdentity {
            declared_app_id: Some("org.example".into()),
            ..ClientIdentity::named("wl-1")
        };
        let b = ClientIdentity {
            declared_app_id: Some("org.example".into()),
            ..ClientIdentity::named("wl-2")
        };
        assert_eq!(a.kind(), IdentityKind::Unknown);
        assert_ne!(a.app_key(), b.app_key());
        // A uid without an executable is not an app identity either.
        let c = ClientIdentity {
            uid: Some(1000),
            ..ClientIdentity::named("wl-3")
        };
        assert_eq!(c.app_key(), "connection:wl-3");
    }

    #[test]
    fn the_shown_name_is_never_the_declared_one() {
        let mut c = unconfined(42, "/usr/bin/agent");
        c.declared_app_id = Some("org.mozilla.firefox".into());
        assert_eq!(c.display_name(), "/usr/bin/agent");
        assert_eq!(c.to_string(), "/usr/bin/agent (pid 42, uid 1000)");
        let s = sandboxed("pcp", Some("org.example.Agent"), None);
        assert_eq!(s.display_name(), "org.example.Agent");
        assert_eq!(s.to_string(), "org.example.Agent (pcp)");
        let mut u = ClientIdentity::named("wl-9");
        u.declared_app_id = Some("org.mozilla.firefox".into());
        assert_eq!(u.display_name(), "wl-9");
    }

    #[test]
    fn a_reused_pid_or_an_exec_is_a_process_change() {
        let then = unconfined(42, "/usr/bin/agent");
        assert_eq!(then.process_change(&then.clone()), Ok(()));
        let reused = ClientIdentity {
            start_time: Some(900),
            ..then.clone()
        };
        assert_eq!(
            then.process_change(&reused),
            Err(ProcessChange::PidReused {
                pid: 42,
                then: 500,
                now: 900
            })
        );
        let exec = unconfined(42, "/usr/bin/firefox");
        assert!(matches!(
            then.process_change(&exec),
            Err(ProcessChange::Exec { .. })
        ));
        let gone = ClientIdentity {
            start_time: None,
            executable: None,
            ..then.clone()
        };
        assert_eq!(
            then.process_change(&gone),
            Err(ProcessChange::Gone { pid: 42 })
        );
    }

    #[test]
    fn old_records_with_app_id_still_read() {
        let old = r#"{"id":"wl-1","pid":3,"uid":1000,"executable":"/bin/x","app_id":"org.old"}"#;
        let c: ClientIdentity = serde_json::from_str(old).unwrap();
        assert_eq!(c.declared_app_id.as_deref(), Some("org.old"));
        assert_eq!(c.sandbox, None);
        let text = serde_json::to_string(&c).unwrap();
        assert!(text.contains(r#""declared_app_id":"org.old""#), "{text}");
        let back: ClientIdentity = serde_json::from_str(&text).unwrap();
        assert_eq!(back, c);
    }
}
