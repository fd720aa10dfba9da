//! The agent a session starts: the connection to the system bus, registration with polkitd for
//! one subject, the front end's calls, and unregistration when it is dropped.

use std::sync::Arc;
use std::time::Duration;

use zbus::Connection;

use crate::dbus::{AgentObject, POLKIT_NAME};
use crate::error::{AgentError, StartError};
use crate::helper::HelperConfig;
use crate::request::{AgentEvent, Answer};
use crate::secret::Secret;
use crate::state::{EventSink, Shared};
use crate::subject::{self, Subject, SubjectChoice};

const AUTHORITY_PATH: &str = "/org/freedesktop/PolicyKit1/Authority";
const AUTHORITY: &str = "org.freedesktop.PolicyKit1.Authority";

/// How to start the agent.
#[derive(Clone, Debug)]
pub struct AgentConfig {
    pub subject: SubjectChoice,
    /// Password attempts per request before it fails (the default: 3).
    pub max_tries: u32,
    pub helper: HelperConfig,
    /// Where our object lives on the bus.
    pub object_path: String,
    /// polkitd localises messages to it; `None`: `LC_ALL`, `LC_MESSAGES`, `LANG`, else `C`.
    pub locale: Option<String>,
}

impl Default for AgentConfig {
    fn default() -> Self {
        Self {
            subject: SubjectChoice::Auto,
            max_tries: 3,
            helper: HelperConfig::default(),
            object_path: "/org/pcp/confirm/PolkitAgent".into(),
            locale: None,
        }
    }
}

/// A registered authentication agent. Requests arrive as [`AgentEvent`]s in the sink given to
/// [`Agent::start`]; the front end answers them with the methods here, naming each by cookie.
/// Dropping it answers every open request Cancelled and unregisters.
pub struct Agent {
    bus: Connection,
    shared: Arc<Shared>,
    subject: Subject,
    object_path: String,
}

impl Agent {
    /// Connects to the system bus, serves the agent object and registers it for the configured
    /// subject. Fails when another agent holds the subject ([`StartError::AlreadyRegistered`]);
    /// the session logs that and carries on without an agent.
    pub fn start(config: AgentConfig, sink: EventSink) -> Result<Self, StartError> {
        // SAFETY: getuid has no preconditions and cannot fail.
        let own_uid = unsafe { libc::getuid() };
        let shared = Arc::new(Shared::new(sink, config.max_tries, config.helper.clone()));
        let object = AgentObject {
            shared: Arc::clone(&shared),
            own_uid,
        };
        let locale = config.locale.clone().unwrap_or_else(default_locale);
        let (bus, subject) = zbus::block_on(async {
            let bus = zbus::connection::Builder::system()
                .map_err(StartError::Bus)?
                // Our own calls (registration) must not hang the session if polkitd does.
                .method_timeout(Duration::from_secs(25))
                .build()
                .await
                .map_err(StartError::Bus)?;
            let subject = subject::resolve(&bus, &config.subject).await?;
            bus.object_server()
                .at(config.object_path.as_str(), object)
                .await
                .map_err(StartError::Bus)?;
            register(&bus, &subject, &locale, &config.object_path).await?;
            Ok::<_, StartError>((bus, subject))
        })?;
        tracing::info!(
            "polkit agent registered for {subject:?} at {}",
            config.object_path
        );
        Ok(Self {
            bus,
            shared,
            subject,
            object_path: config.object_path,
        })
    }

    /// [`Agent::start`] with a standard channel as the sink.
    pub fn start_with_channel(
        config: AgentConfig,
    ) -> Result<(Self, std::sync::mpsc::Receiver<AgentEvent>), StartError> {
        let (tx, rx) = std::sync::mpsc::channel();
        let sink: EventSink = Box::new(move |event| {
            // The front end stopped listening: its requests end when the agent is dropped.
            let _ = tx.send(event);
        });
        Ok((Self::start(config, sink)?, rx))
    }

    /// The subject we are registered for.
    pub fn subject(&self) -> &Subject {
        &self.subject
    }

    /// Our unique name on the system bus (tests address the object through it).
    pub fn bus_name(&self) -> Option<String> {
        self.bus.unique_name().map(|n| n.to_string())
    }

    /// Starts a password attempt for the request as `uid` (one of its identities): the helper
    /// runs and its prompts arrive as [`AgentEvent::Prompt`]. A helper that cannot start counts
    /// as a failed try and is reported as [`crate::AttemptEnd::Broken`].
    pub fn authenticate(&self, cookie: &str, uid: u32) -> Result<(), AgentError> {
        self.shared.authenticate(cookie, uid)
    }

    /// Asks for another of the request's identities: the running attempt, if nothing was typed
    /// into it yet, is stopped without counting a try, and one as `uid` starts. While PAM is
    /// weighing a typed secret the switch is refused ([`AgentError::AttemptRunning`]).
    pub fn switch_identity(&self, cookie: &str, uid: u32) -> Result<(), AgentError> {
        self.shared.drop_unanswered_attempt(cookie, uid)?;
        self.shared.authenticate(cookie, uid)
    }

    /// Answers the helper's current prompt. The secret goes to the helper's stdin and nowhere
    /// else, and is zeroed once written.
    pub fn respond(&self, cookie: &str, secret: Secret) -> Result<(), AgentError> {
        self.shared.respond(cookie, secret)
    }

    /// Ends the request: polkitd gets its reply now (see [`Answer`]). A running helper is stopped.
    pub fn answer(&self, cookie: &str, answer: Answer) -> Result<(), AgentError> {
        self.shared.answer(cookie, answer)
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        self.shared.close_all();
        let subject = self.subject.to_dbus();
        let path = self.object_path.as_str();
        let done = zbus::block_on(async {
            let authority =
                zbus::Proxy::new(&self.bus, POLKIT_NAME, AUTHORITY_PATH, AUTHORITY).await?;
            authority
                .call::<_, _, ()>("UnregisterAuthenticationAgent", &(subject, path))
                .await
        });
        if let Err(e) = done {
            tracing::warn!("polkit agent: cannot unregister: {e}");
        }
    }
}

async fn register(
    bus: &Connection,
    subject: &Subject,
    locale: &str,
    path: &str,
) -> Result<(), StartError> {
    let registration = async {
        let authority = zbus::Proxy::new(bus, POLKIT_NAME, AUTHORITY_PATH, AUTHORITY).await?;
        authority
            .call::<_, _, ()>(
                "RegisterAuthenticationAgent",
                &(subject.to_dbus(), locale, path),
            )
            .await
    };
    registration
        .await
        .map_err(|e| registration_error(subject, e))
}

/// polkitd says `org.freedesktop.PolicyKit1.Error.Failed: An authentication agent already
/// exists for the given subject` when the subject is taken.
fn registration_error(subject: &Subject, e: zbus::Error) -> StartError {
    let subject = format!("{subject:?}");
    if let zbus::Error::MethodError(name, Some(text), _) = &e
        && name.as_str() == "org.freedesktop.PolicyKit1.Error.Failed"
        && text.contains("already exists")
    {
        return StartError::AlreadyRegistered { subject };
    }
    StartError::Register {
        subject,
        reason: e.to_string(),
    }
}

fn default_locale() -> String {
    ["LC_ALL", "LC_MESSAGES", "LANG"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|s| !s.is_empty()))
        .unwrap_or_else(|| "C".into())
}
