//! `[mcp]`: how the gate reads and shows an MCP tool call — the words on its prompt (the
//! server, the tool, a changed or new definition) and which argument names hold shell commands
//! and paths. Every list only raises protection when it grows.

use serde::{Deserialize, Serialize};

/// `[mcp]` of the config file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct McpConfig {
    /// The prompt line naming the server and the command it was started with.
    pub server_label: String,
    /// The prompt line naming the tool as the server spells it.
    pub tool_label: String,
    /// The label of the line that says the tool's definition is not the one allowed before.
    pub notice_label: String,
    /// Said when the tool's definition (name, description, input schema, annotations) differs
    /// from the one the user last allowed, or changed since the session's first listing.
    pub changed: String,
    /// Said when the tool was not in the server's first listing of the session.
    pub appeared: String,
    /// Said when the server never listed the tool the client calls.
    pub unlisted: String,
    /// Argument names whose values are shell commands, rated like `shell.exec`'s `command`
    /// (compared ignoring case, `_` and `-`).
    pub command_arguments: Vec<String>,
    /// Argument names whose values are paths (a string, a list of strings, or `file://` URIs).
    pub path_arguments: Vec<String>,
    /// Endings of argument names that hold paths too (`sourcePath`, `config_file`, `out_dir`).
    pub path_suffixes: Vec<String>,
    /// Most strings of one call's arguments the gate rates; a call with more counts as High
    /// (a visual prompt at least), as its arguments cannot all be read.
    pub max_rated_strings: usize,
    /// Most top-level arguments the prompt lists one per line; more are shown as one JSON line.
    pub max_argument_lines: usize,
}

impl Default for McpConfig {
    fn default() -> Self {
        let list = |items: &[&str]| items.iter().map(|s| s.to_string()).collect();
        McpConfig {
            server_label: "server".into(),
            tool_label: "tool".into(),
            notice_label: "notice".into(),
            changed: "this tool's description changed since you last allowed it".into(),
            appeared: "this tool appeared after the session started: the server did not list it \
                       at first"
                .into(),
            unlisted: "the server does not list this tool".into(),
            command_arguments: list(&[
                "command",
                "cmd",
                "commands",
                "script",
                "shell",
                "shell_command",
                "command_line",
                "bash",
            ]),
            path_arguments: list(&[
                "path",
                "paths",
                "file",
                "files",
                "filename",
                "source",
                "sources",
                "destination",
                "dest",
                "target",
                "directory",
                "dir",
                "folder",
                "uri",
                "root",
                "cwd",
                "workdir",
            ]),
            path_suffixes: list(&["path", "paths", "file", "dir", "directory", "folder", "uri"]),
            max_rated_strings: 256,
            max_argument_lines: 16,
        }
    }
}

/// An argument name as the lists compare it: lowercase, without `_` and `-`
/// (`file_path`, `filePath` and `file-path` are one name).
pub(crate) fn normalized(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect()
}

impl McpConfig {
    /// Whether an argument named `name` holds a shell command.
    pub(crate) fn is_command(&self, name: &str) -> bool {
        let n = normalized(name);
        self.command_arguments.iter().any(|c| normalized(c) == n)
    }

    /// Whether an argument named `name` holds a path.
    pub(crate) fn is_path(&self, name: &str) -> bool {
        let n = normalized(name);
        self.path_arguments.iter().any(|p| normalized(p) == n)
            || self
                .path_suffixes
                .iter()
                .any(|s| n.len() > s.len() && n.ends_with(&normalized(s)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_compare_without_case_or_separators() {
        let c = McpConfig::default();
        assert!(c.is_path("file_path"));
        assert!(c.is_path("filePath"));
        assert!(c.is_path("sourcePath"));
        assert!(c.is_path("destination"));
        assert!(c.is_command("Command"));
        assert!(c.is_command("shell-command"));
        assert!(!c.is_path("content"));
        assert!(!c.is_command("message"));
    }
}
