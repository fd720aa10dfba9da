//! The agent's D-Bus object (`org.freedesktop.PolicyKit1.AuthenticationAgent`): checks that the
//! caller is polkitd and that the call is well formed, then hands the request to the state.

use std::collections::HashMap;
use std::sync::Arc;

use zbus::message::Header;
use zbus::names::BusName;
use zbus::{Connection, fdo};

use crate::identity::{self, WireIdentities};
use crate::request::{AgentEvent, AuthRequest, ClosedBy, Refusal, Reply};
use crate::state::Shared;

/// polkitd's well-known name: only its current owner may call the agent.
pub(crate) const POLKIT_NAME: &str = "org.freedesktop.PolicyKit1";

/// The longest cookie accepted. polkitd's are about 70 characters.
const MAX_COOKIE: usize = 512;

/// The errors polkitd understands: `Cancelled` is reported as "dismissed".
#[derive(Debug, zbus::DBusError)]
#[zbus(prefix = "org.freedesktop.PolicyKit1.Error")]
pub(crate) enum PolkitError {
    #[zbus(error)]
    ZBus(zbus::Error),
    Failed(String),
    Cancelled(String),
    NotAuthorized(String),
}

pub(crate) struct AgentObject {
    pub(crate) shared: Arc<Shared>,
    /// Our own uid: its identity is offered first.
    pub(crate) own_uid: u32,
}

#[zbus::interface(name = "org.freedesktop.PolicyKit1.AuthenticationAgent")]
impl AgentObject {
    #[allow(clippy::too_many_arguments)] // the D-Bus method's own signature
    async fn begin_authentication(
        &self,
        #[zbus(header)] header: Header<'_>,
        #[zbus(connection)] bus: &Connection,
        action_id: String,
        message: String,
        icon_name: String,
        details: HashMap<String, String>,
        cookie: String,
        identities: WireIdentities,
    ) -> Result<(), PolkitError> {
        self.check_caller(bus, &header, "BeginAuthentication")
            .await?;
        check_cookie(&cookie).map_err(PolkitError::Failed)?;
        let (identities, skipped) = identity::parse(&identities, self.own_uid)
            .map_err(|e| bad_input(&cookie, format!("malformed identities: {e}")))?;
        if identities.is_empty() {
            let why = format!(
                "no identity the helper can authenticate ({})",
                skipped.join("; ")
            );
            return Err(bad_input(&cookie, why));
        }
        let mut request = AuthRequest {
            cookie,
            action_id,
            message,
            icon_name,
            identities,
            subject_pid: None,
            caller_pid: None,
            program: None,
            command_line: None,
            details,
            skipped_identities: skipped,
        };
        request.read_details();
        let cookie = request.cookie.clone();
        let reply = self.shared.open(request).map_err(PolkitError::Failed)?;
        // polkitd waits without a timeout; the front end's answer (or its timeout) ends this.
        match reply.recv().await {
            Ok(Reply::Authenticated) => Ok(()),
            Ok(Reply::Cancelled) => Err(PolkitError::Cancelled(format!(
                "request {cookie} was dismissed"
            ))),
            Ok(Reply::Failed(why)) => Err(PolkitError::Failed(why)),
            Err(_) => Err(PolkitError::Failed("the agent stopped".into())),
        }
    }

    async fn cancel_authentication(
        &self,
        #[zbus(header)] header: Header<'_>,
        #[zbus(connection)] bus: &Connection,
        cookie: String,
    ) -> Result<(), PolkitError> {
        self.check_caller(bus, &header, "CancelAuthentication")
            .await?;
        if !self
            .shared
            .close(&cookie, Reply::Cancelled, ClosedBy::Polkit)
        {
            // polkitd may cancel a request we have just answered: nothing to do.
            tracing::debug!("polkitd cancelled {cookie}, which is not open");
        }
        Ok(())
    }
}

impl AgentObject {
    /// Refuses (and reports) a call whose sender is not the current owner of polkitd's name:
    /// otherwise any program on the system bus could open a password dialog to phish with.
    async fn check_caller(
        &self,
        bus: &Connection,
        header: &Header<'_>,
        method: &'static str,
    ) -> Result<(), PolkitError> {
        let sender = header.sender().map(|s| s.to_string());
        let verdict = match &sender {
            None => Err("the call has no sender".to_string()),
            Some(sender) => match polkit_owner(bus).await {
                Ok(owner) if owner == *sender => Ok(()),
                Ok(owner) => Err(format!(
                    "{sender} is not polkitd ({POLKIT_NAME} is {owner})"
                )),
                Err(e) => Err(format!("cannot ask who owns {POLKIT_NAME}: {e}")),
            },
        };
        let Err(reason) = verdict else { return Ok(()) };
        tracing::warn!("polkit agent: refused {method} from {sender:?}: {reason}");
        self.shared.emit(AgentEvent::Refused(Refusal {
            method,
            sender,
            reason: reason.clone(),
        }));
        Err(PolkitError::NotAuthorized(reason))
    }
}

async fn polkit_owner(bus: &Connection) -> Result<String, zbus::Error> {
    let dbus = fdo::DBusProxy::new(bus).await?;
    let owner = dbus
        .get_name_owner(BusName::from_static_str(POLKIT_NAME)?)
        .await?;
    Ok(owner.to_string())
}

/// polkitd's cookies are short printable ASCII without spaces. The cookie is written to the
/// helper as one line, so a line break in it would let the caller write the next line too.
pub(crate) fn check_cookie(cookie: &str) -> Result<(), String> {
    if cookie.is_empty() {
        return Err("the cookie is empty".into());
    }
    if cookie.len() > MAX_COOKIE {
        return Err(format!("the cookie is longer than {MAX_COOKIE} bytes"));
    }
    if !cookie.bytes().all(|b| b.is_ascii_graphic()) {
        return Err("the cookie holds bytes other than printable ASCII".into());
    }
    Ok(())
}

fn bad_input(cookie: &str, why: String) -> PolkitError {
    tracing::warn!("polkit agent: refused request {cookie}: {why}");
    PolkitError::Failed(why)
}

#[cfg(test)]
mod tests {
    use super::check_cookie;

    #[test]
    fn cookies_must_be_short_printable_ascii() {
        assert!(check_cookie("1-0e58a1b7567c4871cd0c0d7bac2483e3-1-b524ed4b87dcc15b").is_ok());
        assert!(check_cookie("").is_err());
        assert!(check_cookie("a\nb").is_err());
        assert!(check_cookie("a b").is_err());
        assert!(check_cookie("é").is_err());
        assert!(check_cookie(&"x".repeat(513)).is_err());
    }
}
