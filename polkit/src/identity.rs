//! The identities polkitd offers for a request: which users may authenticate, checked, named and
//! put in the order the dialog offers them (the user's own first, then root, then the others).

use std::collections::HashMap;
use std::ffi::CStr;

use zbus::zvariant::{OwnedValue, Value};

/// A user who may authenticate for a request (polkit's `unix-user` identity).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    pub uid: u32,
    /// The login name, which `polkit-agent-helper-1` takes.
    pub name: String,
}

/// polkit's wire form of identities: `a(sa{sv})`, kind and details.
pub(crate) type WireIdentities = Vec<(String, HashMap<String, OwnedValue>)>;

/// Parses polkitd's identities and orders them: `own_uid` first, then root, then the rest in
/// polkitd's order; duplicates dropped. Identities the helper cannot authenticate (groups,
/// netgroups, users without a passwd entry) are left out and named in the second list, so the
/// front end can log them. Malformed details are an error naming the entry.
pub(crate) fn parse(
    wire: &WireIdentities,
    own_uid: u32,
) -> Result<(Vec<Identity>, Vec<String>), String> {
    let mut uids = Vec::new();
    let mut skipped = Vec::new();
    for (i, (kind, details)) in wire.iter().enumerate() {
        if kind != "unix-user" {
            skipped.push(format!("identity {i} is a {kind:?}, not a unix-user"));
            continue;
        }
        let uid = details
            .get("uid")
            .ok_or_else(|| format!("identity {i} (unix-user) has no uid"))?;
        let uid = match &**uid {
            Value::U32(u) => *u,
            // polkit itself sends uint32; int32 is accepted when it is not negative.
            Value::I32(u) => u32::try_from(*u)
                .map_err(|_| format!("identity {i} (unix-user) has a negative uid {u}"))?,
            other => {
                return Err(format!(
                    "identity {i} (unix-user) has a uid of type {}, not uint32",
                    other.value_signature()
                ));
            }
        };
        if !uids.contains(&uid) {
            uids.push(uid);
        }
    }
    // A stable sort on (not own, not root) keeps polkitd's order among the others.
    uids.sort_by_key(|&uid| (uid != own_uid, uid != 0));
    let mut identities = Vec::new();
    for uid in uids {
        match user_name(uid) {
            // The name is one line of the helper's input: nothing but printable ASCII.
            Some(name) if !name.is_empty() && name.bytes().all(|b| b.is_ascii_graphic()) => {
                identities.push(Identity { uid, name })
            }
            Some(name) => skipped.push(format!("uid {uid}'s name {name:?} is not a plain name")),
            None => skipped.push(format!("uid {uid} has no passwd entry")),
        }
    }
    Ok((identities, skipped))
}

/// The login name of `uid` from the passwd database (NSS), or `None`.
pub(crate) fn user_name(uid: u32) -> Option<String> {
    let mut buf = vec![0u8; 4096];
    loop {
        // SAFETY: all-zero is a valid `passwd` (null pointers, zero ids); it is only read after
        // getpwuid_r filled it.
        let mut pwd: libc::passwd = unsafe { std::mem::zeroed() };
        let mut result: *mut libc::passwd = std::ptr::null_mut();
        // SAFETY: every pointer is valid for the call and `buf.len()` is the buffer's size.
        let rc = unsafe {
            libc::getpwuid_r(
                uid,
                &mut pwd,
                buf.as_mut_ptr().cast(),
                buf.len(),
                &mut result,
            )
        };
        if rc == libc::ERANGE && buf.len() < 1 << 20 {
            buf.resize(buf.len() * 2, 0);
            continue;
        }
        if rc != 0 || result.is_null() || pwd.pw_name.is_null() {
            return None;
        }
        // SAFETY: on success pw_name points to a NUL-terminated string inside `buf`.
        let name = unsafe { CStr::from_ptr(pwd.pw_name) };
        return name.to_str().ok().map(str::to_owned);
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use zbus::zvariant::{OwnedValue, Value};

    use super::{WireIdentities, parse};

    fn user(uid: Value<'static>) -> (String, HashMap<String, OwnedValue>) {
        let v = OwnedValue::try_from(uid).expect("a plain value");
        ("unix-user".into(), HashMap::from([("uid".to_string(), v)]))
    }

    #[test]
    fn own_uid_first_then_root_then_the_rest_in_order() {
        // uid 0 (root) always has a passwd entry; 65534 (nobody) does on Debian.
        let wire: WireIdentities = vec![
            user(Value::U32(65534)),
            user(Value::U32(0)),
            ("unix-group".into(), HashMap::new()),
            user(Value::U32(0)),
        ];
        let (ids, skipped) = parse(&wire, 65534).expect("valid identities");
        let uids: Vec<u32> = ids.iter().map(|i| i.uid).collect();
        assert_eq!(uids, [65534, 0]);
        assert_eq!(ids[1].name, "root");
        assert_eq!(skipped, ["identity 2 is a \"unix-group\", not a unix-user"]);
        let (ids, _) = parse(&wire, 1234).expect("valid identities");
        assert_eq!(
            ids[0].uid, 0,
            "root comes before others when the user is not offered"
        );
    }

    #[test]
    fn bad_uids_are_named() {
        let err = parse(&vec![user(Value::from("root"))], 0).expect_err("a string uid");
        assert!(
            err.contains("identity 0") && err.contains("type s"),
            "{err}"
        );
        let err = parse(&vec![user(Value::I32(-1))], 0).expect_err("a negative uid");
        assert!(err.contains("negative"), "{err}");
        let no_uid: WireIdentities = vec![("unix-user".into(), HashMap::new())];
        assert!(
            parse(&no_uid, 0)
                .expect_err("no uid")
                .contains("has no uid")
        );
        let (ids, skipped) = parse(&vec![user(Value::U32(4_000_000_000))], 0).expect("parsed");
        assert!(ids.is_empty() && skipped[0].contains("no passwd entry"));
    }
}
