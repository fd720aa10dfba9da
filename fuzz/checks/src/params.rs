//! Intent parameters as a client sends them (`pcp_protocol::wire`): inline JSON text with
//! optional steps (`submit`), and a document in a memfd (`submit_fd`). No panic; what parses
//! inline is an object with valid steps, passes the client's own check (`check_value`), and
//! arrives the same through a sealed memfd, line feeds and tabs in its strings included; a memfd
//! that is not sealed, or holds fewer bytes than announced, is refused as a bad fd; announcing
//! fewer bytes than it holds reads only those.
//!
//! An input is a flags byte (bit 0: steps are given; bit 1: the memfd is sealed; bits 2–3: the
//! announced size is exact, fewer or more than the document by the next two bytes, little
//! endian), then the inline params, the inline steps and the memfd document, each ended by a
//! 0xFF byte (never part of UTF-8 text), so seeds are written as plain JSON.

use std::io::Write;
use std::os::fd::{FromRawFd, OwnedFd};

use pcp_protocol::wire::{
    MAX_FD_BYTES, MAX_INLINE_BYTES, ParamsError, Step, check_capability, check_value, parse_inline,
    read_fd, sealed_bytes, sealed_memfd,
};
use serde_json::Value;

/// How the announced size differs from the document's length.
enum Announced {
    Exact,
    Fewer(u16),
    More(u16),
}

pub fn check(data: &[u8]) {
    let [flags, d0, d1, rest @ ..] = data else {
        return;
    };
    let delta = u16::from_le_bytes([*d0, *d1]);
    let announced = match (flags >> 2) & 3 {
        1 => Announced::Fewer(delta),
        2 | 3 => Announced::More(delta),
        _ => Announced::Exact,
    };
    let mut parts = rest.splitn(3, |b| *b == 0xFF);
    let params = parts.next().unwrap_or_default();
    let steps = parts.next().unwrap_or_default();
    let doc = parts.next().unwrap_or_default();
    if let (Ok(params), Ok(steps)) = (std::str::from_utf8(params), std::str::from_utf8(steps)) {
        inline(params, (flags & 1 != 0).then_some(steps));
    }
    document(doc, &announced, flags & 2 != 0);
}

fn inline(text: &str, steps_text: Option<&str>) {
    let total = text.len() + steps_text.map_or(0, str::len);
    let parsed = parse_inline(text, steps_text);
    if total > MAX_INLINE_BYTES {
        assert_eq!(parsed, Err(ParamsError::InlineTooLarge(total)));
        return;
    }
    let Ok((params, steps)) = parsed else {
        return;
    };
    assert!(params.is_object(), "{params}");
    assert_eq!(check_value(&params, "params"), Ok(()));
    for s in &steps {
        assert_eq!(check_capability(&s.capability), Ok(()));
        assert!(matches!(s.params, Value::Object(_) | Value::Null));
        assert_eq!(check_value(&s.params, "steps"), Ok(()));
    }
    // What a client could send inline arrives the same through a sealed memfd: every key and
    // every string (a multi-line one too); numbers may differ in a float's last digit.
    let (fd, size) = sealed_memfd(&params, &steps).expect("a sealed memfd");
    let (fd_params, fd_steps) = read_fd(fd, size).expect("the memfd reads back");
    assert_eq!(shape(&fd_params), shape(&params));
    assert_eq!(capabilities(&fd_steps), capabilities(&steps));
}

/// `v` with every number replaced by `null`.
fn shape(v: &Value) -> Value {
    match v {
        Value::Number(_) => Value::Null,
        Value::Array(items) => Value::Array(items.iter().map(shape).collect()),
        Value::Object(members) => {
            Value::Object(members.iter().map(|(k, v)| (k.clone(), shape(v))).collect())
        }
        other => other.clone(),
    }
}

fn document(bytes: &[u8], announced: &Announced, sealed: bool) {
    let len = bytes.len();
    let size = match *announced {
        Announced::Exact => len,
        Announced::Fewer(n) => len.saturating_sub(usize::from(n)),
        Announced::More(n) => len + usize::from(n).max(1),
    };
    let Ok(size32) = u32::try_from(size) else {
        return;
    };
    let fd = if sealed {
        sealed_bytes(bytes).expect("a sealed memfd").0
    } else {
        unsealed(bytes)
    };
    let read = read_fd(fd, size32);
    if size > MAX_FD_BYTES {
        assert_eq!(read, Err(ParamsError::FdTooLarge(size)));
        return;
    }
    if !sealed || size > len {
        assert!(matches!(read, Err(ParamsError::BadFd(_))), "{read:?}");
        return;
    }
    // Only the announced bytes count: the same as a memfd of exactly those.
    let (prefix, prefix_size) = sealed_bytes(&bytes[..size]).expect("a sealed memfd");
    let alone = read_fd(prefix, prefix_size);
    assert_eq!(read.is_ok(), alone.is_ok(), "{read:?} / {alone:?}");
    if let (Ok((p, s)), Ok((q, t))) = (&read, &alone) {
        assert!(p.is_object());
        assert_eq!(keys(p), keys(q));
        assert_eq!(capabilities(s), capabilities(t));
        for step in s {
            assert_eq!(check_capability(&step.capability), Ok(()));
        }
    }
}

/// A memfd holding `bytes` that a client forgot to seal.
fn unsealed(bytes: &[u8]) -> OwnedFd {
    // SAFETY: memfd_create with a NUL-terminated name; the result is checked before use.
    let raw = unsafe { libc::memfd_create(c"pcp-fuzz".as_ptr(), libc::MFD_CLOEXEC) };
    assert!(
        raw >= 0,
        "memfd_create: {}",
        std::io::Error::last_os_error()
    );
    // SAFETY: `raw` is a fresh descriptor nobody else owns.
    let mut file = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(raw) });
    file.write_all(bytes).expect("writes the memfd");
    OwnedFd::from(file)
}

fn keys(v: &Value) -> Vec<&String> {
    v.as_object()
        .map(|m| m.keys().collect())
        .unwrap_or_default()
}

fn capabilities(steps: &[Step]) -> Vec<&str> {
    steps.iter().map(|s| s.capability.as_str()).collect()
}
