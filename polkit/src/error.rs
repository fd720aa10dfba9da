//! The errors of starting the agent and of the front end's calls.

/// Why the agent did not start. The session logs it and carries on without an agent.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("cannot connect to the system bus: {0}")]
    Bus(#[source] zbus::Error),
    #[error("cannot name the polkit subject: {0}")]
    Subject(String),
    #[error(
        "another polkit authentication agent is already registered for {subject}; \
         this session carries on without ours"
    )]
    AlreadyRegistered { subject: String },
    #[error("polkitd refused to register the agent for {subject}: {reason}")]
    Register { subject: String, reason: String },
}

/// Why a front end's call about a request was refused. The request itself is untouched unless
/// the variant says otherwise.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum AgentError {
    #[error("no polkit request with cookie {0:?} is open")]
    UnknownCookie(String),
    #[error("uid {uid} is not one of the identities polkitd offered for this request")]
    NoSuchIdentity { uid: u32 },
    #[error("a password attempt is already running for this request")]
    AttemptRunning,
    #[error("PAM has already accepted this request; answer it")]
    AlreadyAuthenticated,
    #[error("all {0} password attempts are used")]
    TriesExhausted(u32),
    #[error("the helper is not waiting for an answer")]
    NoPrompt,
    #[error(
        "PAM has not accepted a password for this request, so it cannot be approved; \
         polkitd was answered Failed"
    )]
    NotAuthenticated,
    #[error("{0}")]
    BadSecret(&'static str),
}
