//! The `owner` role: a process of the `polkitd` user that takes `org.freedesktop.PolicyKit1`
//! once polkitd has stopped, so the agent takes its calls as polkitd's, and sends malformed
//! ones. polkitd itself never sends these; the bus policy lets only the `polkitd` user own the
//! name, so this is the only sender whose bad input the agent's own checks ever see.

use std::collections::HashMap;
use std::io::Read;

use zbus::fdo::RequestNameFlags;
use zbus::zvariant::Value;

type Ids<'a> = Vec<(&'a str, HashMap<&'a str, Value<'a>>)>;

fn user(uid: Value<'_>) -> Ids<'_> {
    vec![("unix-user", HashMap::from([("uid", uid)]))]
}

pub fn run() -> i32 {
    let target = std::env::var("PCP_TARGET").unwrap_or_default();
    let calls: Vec<(&str, &str, Ids)> = vec![
        ("cookie-with-space", "1-a b", user(Value::U32(0))),
        ("cookie-with-newline", "1-a\nroot", user(Value::U32(0))),
        ("uid-as-string", "1-owner-1", user(Value::from("root"))),
        ("negative-uid", "1-owner-2", user(Value::I32(-5))),
        (
            "only-a-group",
            "1-owner-3",
            vec![("unix-group", HashMap::from([("gid", Value::U32(0))]))],
        ),
        ("no-identities", "1-owner-4", Vec::new()),
        ("a-good-request", "1-owner-5", user(Value::U32(0))),
    ];
    let result = zbus::block_on(async {
        let bus = zbus::Connection::system().await?;
        // Serve nothing, but answer: the agent's unregistration on drop gets an error at once
        // instead of waiting for its timeout.
        let _ = bus.object_server();
        bus.request_name_with_flags(
            "org.freedesktop.PolicyKit1",
            RequestNameFlags::DoNotQueue.into(),
        )
        .await?;
        println!("OWNER has the name");
        for (what, cookie, ids) in calls {
            let details = HashMap::from([("polkit.subject-pid", "1")]);
            let args = ("org.pcp.test.self", "msg", "", details, cookie, ids);
            let reply = bus
                .call_method(
                    Some(target.as_str()),
                    "/org/pcp/confirm/PolkitAgent",
                    Some("org.freedesktop.PolicyKit1.AuthenticationAgent"),
                    "BeginAuthentication",
                    &args,
                )
                .await;
            match reply {
                Ok(_) => println!("OWNER {what} ok"),
                Err(zbus::Error::MethodError(name, text, _)) => {
                    println!("OWNER {what} {name}: {}", text.unwrap_or_default())
                }
                Err(e) => println!("OWNER {what} {e}"),
            }
        }
        println!("OWNER done");
        // Keep the name until the harness is done with the agent: were it free, the agent's
        // unregistration would make the bus start a new polkitd outside the test's control.
        let _ = std::io::stdin().read_to_end(&mut Vec::new());
        Ok::<_, zbus::Error>(())
    });
    match result {
        Ok(()) => 0,
        Err(e) => {
            println!("OWNER-ERROR {e}");
            2
        }
    }
}
