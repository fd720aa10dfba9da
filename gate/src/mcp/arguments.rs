//! Which strings of an MCP tool call's arguments are shell commands and which are paths, for
//! servers the gate has never seen: an argument whose name `[mcp]` lists (`command`, `path`,
//! `source`, `destination`, …, or a name ending like one: `sourcePath`) is one, at any depth;
//! and any other string that looks like a path — absolute, in the home folder, climbing out of
//! the working folder, or a `file://` URI — is rated as a path too. A name decides for a whole
//! value (a list of paths, an argv); nothing here lowers a class, so a false match only asks more.

use serde_json::Value;

use super::config::McpConfig;

/// How a string is rated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// A shell command, rated like `shell.exec`'s.
    Command,
    /// A file or folder the tool reads or writes.
    Path,
}

/// One string to rate, and where it sits in the arguments (`arguments.edits[0].path`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Subject {
    pub role: Role,
    pub at: String,
    pub text: String,
}

/// The strings to rate; `overflow` when the arguments held more than the gate rates.
#[derive(Debug, Default)]
pub(crate) struct Found {
    pub subjects: Vec<Subject>,
    pub overflow: bool,
}

/// Longest string taken for a path by its looks alone (longer text is content, not a path).
const MAX_LOOKS_LIKE_PATH: usize = 4096;
/// Deepest nesting walked; anything deeper counts as overflow.
const MAX_DEPTH: usize = 32;

/// The commands and paths in `arguments`.
pub(crate) fn find(arguments: &Value, config: &McpConfig) -> Found {
    let mut walk = Walk {
        config,
        found: Found::default(),
        seen: 0,
    };
    walk.value("arguments", arguments, None, 0);
    walk.found
}

struct Walk<'a> {
    config: &'a McpConfig,
    found: Found,
    /// Strings looked at so far.
    seen: usize,
}

impl Walk<'_> {
    fn value(&mut self, at: &str, value: &Value, role: Option<Role>, depth: usize) {
        if depth > MAX_DEPTH {
            self.found.overflow = true;
            return;
        }
        match value {
            Value::String(s) => self.string(at, s, role),
            Value::Array(items) if role == Some(Role::Command) && all_strings(items) => {
                let argv: Vec<&str> = items.iter().filter_map(Value::as_str).collect();
                self.string(at, &join_argv(&argv), role);
            }
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    self.value(&format!("{at}[{i}]"), item, role, depth + 1);
                }
            }
            Value::Object(map) => {
                for (key, item) in map {
                    let role = if self.config.is_command(key) {
                        Some(Role::Command)
                    } else if self.config.is_path(key) {
                        Some(Role::Path)
                    } else {
                        None
                    };
                    self.value(&format!("{at}.{key}"), item, role, depth + 1);
                }
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }

    fn string(&mut self, at: &str, text: &str, role: Option<Role>) {
        self.seen += 1;
        if self.seen > self.config.max_rated_strings {
            self.found.overflow = true;
            return;
        }
        let subject = match role {
            Some(Role::Command) => Some((Role::Command, text.to_string())),
            Some(Role::Path) => path_of(text, true).map(|p| (Role::Path, p)),
            None => path_of(text, false).map(|p| (Role::Path, p)),
        };
        if let Some((role, text)) = subject {
            self.found.subjects.push(Subject {
                role,
                at: at.to_string(),
                text,
            });
        }
    }
}

fn all_strings(items: &[Value]) -> bool {
    !items.is_empty() && items.iter().all(Value::is_string)
}

/// The path `text` names: a `file://` URI's path, or `text` itself when it is named a path
/// (`named`) or looks like one. Other URIs (`https://…`) are not paths.
fn path_of(text: &str, named: bool) -> Option<String> {
    if let Some(rest) = strip_prefix_ignore_case(text, "file://") {
        // `file:///x`, `file://localhost/x`: the path starts at the first slash.
        let path = &rest[rest.find('/')?..];
        return Some(percent_decoded(path));
    }
    if has_scheme(text) {
        return None;
    }
    if named {
        return (!text.is_empty()).then(|| text.to_string());
    }
    let looks = text.len() <= MAX_LOOKS_LIKE_PATH
        && !text.contains('\n')
        && (text.starts_with('/')
            || text == "~"
            || text.starts_with("~/")
            || text == ".."
            || text.starts_with("../"));
    looks.then(|| text.to_string())
}

fn strip_prefix_ignore_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &text[prefix.len()..])
}

/// `scheme://…` with a scheme of letters, digits, `+`, `-`, `.` (RFC 3986).
fn has_scheme(text: &str) -> bool {
    match text.find("://") {
        Some(i) if i > 0 => text[..i]
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c)),
        _ => false,
    }
}

/// `%2F`-style escapes decoded (an invalid escape stays as written; invalid UTF-8 is replaced).
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| char::from(b).to_digit(16);
        if bytes[i] == b'%'
            && let (Some(hi), Some(lo)) = (
                bytes.get(i + 1).copied().and_then(hex),
                bytes.get(i + 2).copied().and_then(hex),
            )
        {
            out.push((hi * 16 + lo) as u8);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// An argv as one shell command line, each word quoted unless plain.
pub(crate) fn join_argv(argv: &[&str]) -> String {
    let shells = ["bash", "sh", "zsh", "/bin/bash", "/bin/sh", "/usr/bin/bash"];
    if argv.len() == 3 && shells.contains(&argv[0]) && matches!(argv[1], "-c" | "-lc") {
        return argv[2].to_string();
    }
    argv.iter()
        .map(|word| {
            let plain = !word.is_empty()
                && word
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
            if plain {
                word.to_string()
            } else {
                format!("'{}'", word.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn subjects(arguments: Value) -> Vec<(Role, String, String)> {
        find(&arguments, &McpConfig::default())
            .subjects
            .into_iter()
            .map(|s| (s.role, s.at, s.text))
            .collect()
    }

    #[test]
    fn named_arguments_and_path_looking_strings_are_found_at_any_depth() {
        let got = subjects(json!({
            "path": "notes.txt",
            "content": "/etc/passwd is a file\nsecond line",
            "edits": [{"oldText": "a", "newText": "~/.bashrc"}],
            "paths": ["a", "/b"],
            "command": ["rm", "-rf", "x y"],
            "url": "https://example.com/x",
            "uri": "file:///home/u/My%20Doc.txt",
        }));
        assert!(got.contains(&(Role::Path, "arguments.path".into(), "notes.txt".into())));
        assert!(got.contains(&(
            Role::Path,
            "arguments.edits[0].newText".into(),
            "~/.bashrc".into()
        )));
        assert!(got.contains(&(Role::Path, "arguments.paths[1]".into(), "/b".into())));
        assert!(got.contains(&(
            Role::Command,
            "arguments.command".into(),
            "rm -rf 'x y'".into()
        )));
        assert!(got.contains(&(
            Role::Path,
            "arguments.uri".into(),
            "/home/u/My Doc.txt".into()
        )));
        assert!(!got.iter().any(|(_, at, _)| at == "arguments.content"));
        assert!(!got.iter().any(|(_, at, _)| at == "arguments.url"));
    }

    #[test]
    fn too_many_strings_or_too_deep_overflow() {
        let many: Vec<Value> = (0..300).map(|i| json!(format!("s{i}"))).collect();
        assert!(find(&json!({"x": many}), &McpConfig::default()).overflow);
        let mut deep = json!("/etc/x");
        for _ in 0..40 {
            deep = json!([deep]);
        }
        assert!(find(&json!({"x": deep}), &McpConfig::default()).overflow);
        assert!(!find(&json!({"x": "y"}), &McpConfig::default()).overflow);
    }
}
