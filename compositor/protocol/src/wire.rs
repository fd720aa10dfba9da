//! What travels on the wire besides the generated code: the size limits, a multi-step intent's
//! [`Step`], and intent parameters — inline JSON text for small ones, a sealed memfd for large
//! ones. Both sides use these: a client to send (and to read a large token back), the compositor
//! to check everything a client sends; each error says which rule was broken.
//!
//! Client JSON is parsed strictly ([`parse_strict`]): a duplicate key (which a lenient parser
//! resolves by keeping the last one, so what one reader shows another never saw) or a control
//! character (a NUL breaks the spoken question) is refused, naming where. A string value may hold
//! line feeds and tabs (a multi-line command, a patch: the dialog shows every line); keys and
//! targets, which name things on one line, may not.

mod strict;

use std::fs::File;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::FileExt;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use strict::control_character;
pub use strict::{check_value, parse_strict, value_control};

/// Inline params and steps together may be at most this many bytes (Smithay 0.7's server drops a
/// client whose message exceeds its 4 KiB buffer; the rest of the message needs room too).
pub const MAX_INLINE_BYTES: usize = 3072;

/// `submit_fd` carries at most this many bytes.
pub const MAX_FD_BYTES: usize = 1024 * 1024;

/// One step of a multi-step intent as it travels: a capability and its parameters (a JSON
/// object; `null` counts as `{}`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    pub capability: String,
    #[serde(default)]
    pub params: Value,
}

/// Why a request's parameters were refused; each maps to one protocol error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParamsError {
    #[error("capability `{0}` is not a valid name (1-128 bytes of a-z, 0-9, '.', '_', '-')")]
    InvalidCapability(String),
    #[error(
        "inline params and steps are {0} bytes, over the {MAX_INLINE_BYTES}-byte limit; use submit_fd"
    )]
    InlineTooLarge(usize),
    #[error("{0}")]
    InvalidJson(String),
    #[error("target holds the control character U+{0:04X}")]
    InvalidTarget(u32),
    #[error("{0}")]
    BadFd(String),
    #[error("submit_fd size {0} is over the {MAX_FD_BYTES}-byte limit")]
    FdTooLarge(usize),
}

/// A capability name as manifests write them: lowercase ASCII, digits, `.`, `_`, `-`.
pub fn check_capability(name: &str) -> Result<(), ParamsError> {
    let ok = !name.is_empty()
        && name.len() <= 128
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"._-".contains(&b));
    if ok {
        Ok(())
    } else {
        Err(ParamsError::InvalidCapability(
            name.escape_debug().to_string(),
        ))
    }
}

/// A target hint names one thing on one line of the dialog: no control character at all, not
/// even the line feed and tab a parameter value may hold.
pub fn check_target(target: Option<&str>) -> Result<(), ParamsError> {
    match target.and_then(control_character) {
        Some(c) => Err(ParamsError::InvalidTarget(c as u32)),
        None => Ok(()),
    }
}

/// Parses `submit`'s inline params (empty means `{}`) and optional steps.
pub fn parse_inline(params: &str, steps: Option<&str>) -> Result<(Value, Vec<Step>), ParamsError> {
    let total = params.len() + steps.map_or(0, str::len);
    if total > MAX_INLINE_BYTES {
        return Err(ParamsError::InlineTooLarge(total));
    }
    let params = if params.trim().is_empty() {
        Value::Object(Default::default())
    } else {
        parse_object(params, "params")?
    };
    let steps = match steps {
        Some(text) => parse_steps(parse_strict(text.as_bytes(), "steps").map_err(|e| {
            ParamsError::InvalidJson(format!("steps is not acceptable JSON: {e}"))
        })?)?,
        None => Vec::new(),
    };
    Ok((params, steps))
}

/// Reads `submit_fd`'s document `{"params": {...}, "steps": [...]}` from a sealed memfd, with
/// positioned reads: the file offset, which the client shares (it keeps the same open file), is
/// neither used nor moved.
pub fn read_fd(fd: OwnedFd, size: u32) -> Result<(Value, Vec<Step>), ParamsError> {
    let size = size as usize;
    if size > MAX_FD_BYTES {
        return Err(ParamsError::FdTooLarge(size));
    }
    // Without these seals the client could change the bytes after we read (and the user saw) them.
    let required = libc::F_SEAL_WRITE | libc::F_SEAL_SHRINK | libc::F_SEAL_SEAL;
    // SAFETY: fcntl on a descriptor we own, with an integer command and no pointer arguments.
    let seals = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GET_SEALS) };
    if seals < 0 {
        return Err(ParamsError::BadFd(format!(
            "the fd is not a sealable memfd: {}",
            std::io::Error::last_os_error()
        )));
    }
    if seals & required != required {
        return Err(ParamsError::BadFd(
            "the memfd must be sealed with F_SEAL_WRITE, F_SEAL_SHRINK and F_SEAL_SEAL".into(),
        ));
    }
    let file = File::from(fd);
    let len = file
        .metadata()
        .map_err(|e| ParamsError::BadFd(format!("cannot stat the memfd: {e}")))?
        .len();
    if len < size as u64 {
        return Err(ParamsError::BadFd(format!(
            "the memfd holds {len} bytes, fewer than the {size} announced"
        )));
    }
    let mut text = vec![0u8; size];
    file.read_exact_at(&mut text, 0)
        .map_err(|e| ParamsError::BadFd(format!("cannot read the memfd: {e}")))?;
    let doc = parse_strict(&text, "memfd")
        .map_err(|e| ParamsError::InvalidJson(format!("the memfd is not acceptable JSON: {e}")))?;
    let Value::Object(mut doc) = doc else {
        return Err(ParamsError::InvalidJson(
            "the memfd must hold a JSON object {\"params\": …, \"steps\": …}".into(),
        ));
    };
    if let Some(key) = doc.keys().find(|k| *k != "params" && *k != "steps") {
        return Err(ParamsError::InvalidJson(format!(
            "unknown key `{key}` in the memfd document (only params and steps)"
        )));
    }
    let params = match doc.remove("params") {
        None | Some(Value::Null) => Value::Object(Default::default()),
        Some(v @ Value::Object(_)) => v,
        Some(_) => {
            return Err(ParamsError::InvalidJson(
                "params in the memfd must be a JSON object".into(),
            ));
        }
    };
    let steps = match doc.remove("steps") {
        None | Some(Value::Null) => Vec::new(),
        Some(v) => parse_steps(v)?,
    };
    Ok((params, steps))
}

fn parse_object(text: &str, what: &str) -> Result<Value, ParamsError> {
    match parse_strict(text.as_bytes(), what) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(_) => Err(ParamsError::InvalidJson(format!(
            "{what} must be a JSON object"
        ))),
        Err(e) => Err(ParamsError::InvalidJson(format!(
            "{what} is not acceptable JSON: {e}"
        ))),
    }
}

fn parse_steps(value: Value) -> Result<Vec<Step>, ParamsError> {
    let Value::Array(items) = value else {
        return Err(ParamsError::InvalidJson(
            "steps must be a JSON array".into(),
        ));
    };
    items
        .into_iter()
        .enumerate()
        .map(|(i, item)| {
            let step: Step = serde_json::from_value(item).map_err(|e| {
                ParamsError::InvalidJson(format!(
                    "steps[{i}] must be {{\"capability\": string, \"params\": object}}: {e}"
                ))
            })?;
            check_capability(&step.capability)?;
            if !matches!(step.params, Value::Object(_) | Value::Null) {
                return Err(ParamsError::InvalidJson(format!(
                    "steps[{i}].params must be a JSON object"
                )));
            }
            Ok(step)
        })
        .collect()
}

/// Writes `{"params": …, "steps": …}` into a new memfd and seals it, for `submit_fd`.
pub fn sealed_memfd(params: &Value, steps: &[Step]) -> std::io::Result<(OwnedFd, u32)> {
    let doc = serde_json::json!({ "params": params, "steps": steps });
    let text = serde_json::to_vec(&doc).map_err(std::io::Error::other)?;
    sealed_bytes(&text)
}

/// Reads the first `size` bytes of a file descriptor (a memfd the compositor sent), with a
/// positioned read that leaves the file offset alone.
pub fn read_all(fd: OwnedFd, size: u32) -> std::io::Result<Vec<u8>> {
    let file = File::from(fd);
    let mut bytes = vec![0u8; size as usize];
    file.read_exact_at(&mut bytes, 0)?;
    Ok(bytes)
}

/// Puts `text` in a new memfd sealed against any change; returns it and its length.
pub fn sealed_bytes(text: &[u8]) -> std::io::Result<(OwnedFd, u32)> {
    use std::io::Write;
    use std::os::fd::FromRawFd;

    let size = u32::try_from(text.len()).map_err(std::io::Error::other)?;
    // SAFETY: memfd_create with a NUL-terminated name; the result is checked before use.
    let raw = unsafe {
        libc::memfd_create(
            c"pcp-intent-params".as_ptr(),
            libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING,
        )
    };
    if raw < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `raw` is a fresh descriptor nobody else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    let mut file = File::from(fd);
    file.write_all(text)?;
    let seals = libc::F_SEAL_WRITE | libc::F_SEAL_SHRINK | libc::F_SEAL_GROW | libc::F_SEAL_SEAL;
    // SAFETY: fcntl with integer arguments on a descriptor we own.
    if unsafe { libc::fcntl(file.as_raw_fd(), libc::F_ADD_SEALS, seals) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok((OwnedFd::from(file), size))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn capability_names_follow_the_manifest_rules() {
        assert!(check_capability("file.delete").is_ok());
        assert!(check_capability("a-b_c.9").is_ok());
        assert!(check_capability("").is_err());
        assert!(check_capability("File.Delete").is_err());
        assert!(check_capability(&"a".repeat(129)).is_err());
    }

    #[test]
    fn inline_params_must_be_an_object_within_the_limit() {
        let (p, s) = parse_inline(r#"{"path":"/a"}"#, None).unwrap();
        assert_eq!(p, json!({"path": "/a"}));
        assert!(s.is_empty());
        assert_eq!(parse_inline("", None).unwrap().0, json!({}));
        assert!(matches!(
            parse_inline("{", None),
            Err(ParamsError::InvalidJson(_))
        ));
        assert!(matches!(
            parse_inline("[1]", None),
            Err(ParamsError::InvalidJson(_))
        ));
        let big = format!(r#"{{"x":"{}"}}"#, "a".repeat(MAX_INLINE_BYTES));
        assert!(matches!(
            parse_inline(&big, None),
            Err(ParamsError::InlineTooLarge(_))
        ));
    }

    #[test]
    fn steps_are_checked_one_by_one() {
        let steps = r#"[{"capability":"file.write","params":{"path":"/a"}}]"#;
        let (_, s) = parse_inline("{}", Some(steps)).unwrap();
        assert_eq!(s.len(), 1);
        let err = parse_inline("{}", Some(r#"[{"capability":"x","params":3}]"#)).unwrap_err();
        assert!(err.to_string().contains("steps[0].params"), "{err}");
        assert!(parse_inline("{}", Some(r#"{"a":1}"#)).is_err());
    }

    #[test]
    fn a_key_given_twice_is_refused_at_any_depth() {
        for (params, steps, place) in [
            (r#"{"path":"/a","path":"/"}"#, None, "params"),
            (r#"{"a":[{"b":1,"b":2}]}"#, None, "params.a[0]"),
            (
                "{}",
                Some(r#"[{"capability":"x","params":{"p":1,"p":2}}]"#),
                "steps[0].params",
            ),
            (
                "{}",
                Some(r#"[{"capability":"x","capability":"y","params":{}}]"#),
                "steps[0]",
            ),
        ] {
            let err = parse_inline(params, steps).unwrap_err();
            assert!(matches!(err, ParamsError::InvalidJson(_)), "{err}");
            assert!(err.to_string().contains("appears twice"), "{err}");
            assert!(err.to_string().contains(place), "{err}");
        }
        let doc = br#"{"params":{"path":"/a"},"params":{"path":"/"}}"#;
        let (fd, size) = sealed_bytes(doc).unwrap();
        let err = read_fd(fd, size).unwrap_err();
        assert!(err.to_string().contains("`params` appears twice"), "{err}");
    }

    #[test]
    fn control_characters_are_refused_in_keys_values_and_steps() {
        for (params, steps, what) in [
            (r#"{"path":"/tmp/x\u0000; rm -rf ~"}"#, None, "U+0000"),
            (r#"{"a":{"b":["ok","\u001b[2J"]}}"#, None, "U+001B"),
            ("{\"a\":\"\u{85}\"}", None, "U+0085"),
            (r#"{"pa\u0007th":"/x"}"#, None, "U+0007"),
            (r#"{"text":"two\r\nlines"}"#, None, "U+000D"),
            (r#"{"li\nne":"x"}"#, None, "U+000A"),
            (r#"{"ta\tb":"x"}"#, None, "U+0009"),
            (r#"{"text":"a\u000bb"}"#, None, "U+000B"),
            (
                "{}",
                Some(r#"[{"capability":"x","params":{"p":"\u007f"}}]"#),
                "U+007F",
            ),
        ] {
            let err = parse_inline(params, steps).unwrap_err();
            assert!(matches!(err, ParamsError::InvalidJson(_)), "{err}");
            assert!(err.to_string().contains(what), "{what}: {err}");
        }
        // Characters a dialog must show visibly are not control characters: they pass here.
        assert!(parse_inline(r#"{"p":"a\u200fb\u00a0c"}"#, None).is_ok());
        assert_eq!(
            check_target(Some("a\nb")),
            Err(ParamsError::InvalidTarget(10))
        );
        let (fd, size) = sealed_memfd(&json!({"deep": [{"k": "\u{0}"}]}), &[]).unwrap();
        let err = read_fd(fd, size).unwrap_err();
        assert!(err.to_string().contains("memfd.params.deep[0].k"), "{err}");
        assert_eq!(
            check_target(Some("a\tb")),
            Err(ParamsError::InvalidTarget(9))
        );
        assert_eq!(check_target(Some("/tmp/x")), Ok(()));
    }

    #[test]
    fn reading_a_memfd_leaves_the_shared_file_offset_alone() {
        let (fd, size) = sealed_memfd(&json!({"path": "/a"}), &[]).unwrap();
        let mine = fd.try_clone().unwrap();
        // SAFETY: lseek on a descriptor we own.
        assert_eq!(
            unsafe { libc::lseek(mine.as_raw_fd(), 3, libc::SEEK_SET) },
            3
        );
        read_fd(fd, size).unwrap();
        // SAFETY: as above.
        assert_eq!(
            unsafe { libc::lseek(mine.as_raw_fd(), 0, libc::SEEK_CUR) },
            3
        );
    }

    #[test]
    fn a_sealed_memfd_round_trips_and_an_unsealed_file_is_refused() {
        let params = json!({"blob": "x".repeat(200_000)});
        let (fd, size) = sealed_memfd(&params, &[]).unwrap();
        let (p, _) = read_fd(fd, size).unwrap();
        assert_eq!(p, params);

        let file = tempfile::tempfile().unwrap();
        let err = read_fd(OwnedFd::from(file), 2).unwrap_err();
        assert!(matches!(err, ParamsError::BadFd(_)), "{err}");

        let (fd, _) = sealed_memfd(&json!({}), &[]).unwrap();
        assert!(matches!(
            read_fd(fd, (MAX_FD_BYTES + 1) as u32),
            Err(ParamsError::FdTooLarge(_))
        ));
        let (fd, size) = sealed_memfd(&json!({}), &[]).unwrap();
        assert!(matches!(read_fd(fd, size + 10), Err(ParamsError::BadFd(_))));
    }
}
