//! pcp-confirm's polkit authentication agent: registers with polkitd for the session, turns each
//! `BeginAuthentication` into a request for a front end, runs the PAM conversation through
//! `polkit-agent-helper-1` and answers polkitd. See `docs/polkit.md`.
//!
//! The agent never approves by itself: polkitd authorizes only after the helper (root, after
//! PAM accepted a password) has told it so *and* the agent's reply is success.

mod agent;
mod dbus;
mod error;
mod helper;
mod identity;
mod request;
mod secret;
mod state;
mod subject;

pub use agent::{Agent, AgentConfig};
pub use error::{AgentError, StartError};
pub use helper::HelperConfig;
pub use identity::Identity;
pub use request::{
    AgentEvent, Answer, AttemptEnd, AuthRequest, ClosedBy, MessageKind, Prompt, Refusal, Reply,
};
pub use secret::Secret;
pub use state::EventSink;
pub use subject::{Subject, SubjectChoice, real_uid};
