//! The forger: a process of the `polkitd` user (the only user the system bus lets call an
//! authentication agent) that is not polkitd itself, calling the compositor's agent object
//! directly. Prints `FORGED <method> <reply>` for each call.

use std::collections::HashMap;

use zbus::zvariant::Value;

const AGENT: &str = "org.freedesktop.PolicyKit1.AuthenticationAgent";
const PATH: &str = "/org/pcp/confirm/PolkitAgent";
const COOKIE: &str = "7-forged-7-pcp";

/// `forge` role: PCP_TARGET is the agent's unique bus name.
pub fn run() -> i32 {
    let target = std::env::var("PCP_TARGET").unwrap_or_default();
    let calls = zbus::block_on(async {
        let bus = zbus::Connection::system().await?;
        // SAFETY: getuid has no preconditions.
        let uid = unsafe { libc::getuid() };
        let identities = vec![("unix-user", HashMap::from([("uid", Value::from(uid))]))];
        let details = HashMap::from([("polkit.subject-pid", "1")]);
        let begin = bus
            .call_method(
                Some(target.as_str()),
                PATH,
                Some(AGENT),
                "BeginAuthentication",
                &(
                    "org.pcp.test.self",
                    "Please type your password again",
                    "",
                    details,
                    COOKIE,
                    identities,
                ),
            )
            .await
            .err();
        let cancel = bus
            .call_method(
                Some(target.as_str()),
                PATH,
                Some(AGENT),
                "CancelAuthentication",
                &(COOKIE,),
            )
            .await
            .err();
        Ok::<_, zbus::Error>([
            ("BeginAuthentication", begin),
            ("CancelAuthentication", cancel),
        ])
    });
    match calls {
        Ok(calls) => {
            for (method, error) in calls {
                let reply = match error {
                    None => "ok".to_string(),
                    Some(zbus::Error::MethodError(name, _, _)) => name.to_string(),
                    Some(other) => other.to_string(),
                };
                println!("FORGED {method} {reply}");
            }
            0
        }
        Err(e) => {
            println!("FORGE-ERROR {e}");
            1
        }
    }
}
