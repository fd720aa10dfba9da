//! Which intent a harness's tool call becomes: the capability is named by the tool alone, and
//! the parameters are the call's own (command, path, URL, MCP arguments) plus the working
//! folder. Nothing here rates a risk — the gate does, from these parameters
//! (`assets/capabilities.d/60-agents.toml`).

use std::path::Path;

use pcp_protocol::Submission;
use serde_json::{Map, Value, json};

use crate::hook_patch;

/// Claude Code's, Codex's and Gemini CLI's shell tools.
const SHELL_TOOLS: &[&str] = &[
    "Bash",
    "exec_command",
    "shell",
    "local_shell",
    "run_shell_command",
];
/// File edit and write tools, and the input field naming the file.
const WRITE_TOOLS: &[(&str, &str)] = &[
    ("Write", "file_path"),
    ("Edit", "file_path"),
    ("MultiEdit", "file_path"),
    ("NotebookEdit", "notebook_path"),
    ("write_file", "file_path"),
    ("replace", "file_path"),
];
/// Read-only tools: the input fields that say what they read (shown), where the path is, and
/// how they read it — one file's contents, everything under a folder, or names only.
struct ReadTool {
    name: &'static str,
    shown: &'static [&'static str],
    /// The fields holding the path (the first present wins); none present: the working folder.
    path: &'static [&'static str],
    /// A glob pattern relative to the path (`Glob`'s `pattern`).
    pattern: Option<&'static str>,
    reads: &'static str,
}

const READ_TOOLS: &[ReadTool] = &[
    ReadTool {
        name: "Read",
        shown: &["file_path"],
        path: &["file_path"],
        pattern: None,
        reads: "file",
    },
    ReadTool {
        name: "Grep",
        shown: &["pattern", "path"],
        path: &["path"],
        pattern: None,
        reads: "tree",
    },
    ReadTool {
        name: "Glob",
        shown: &["pattern", "path"],
        path: &["path"],
        pattern: Some("pattern"),
        reads: "names",
    },
    ReadTool {
        name: "LS",
        shown: &["path"],
        path: &["path"],
        pattern: None,
        reads: "names",
    },
    ReadTool {
        name: "read_file",
        shown: &["file_path", "absolute_path"],
        path: &["absolute_path", "file_path"],
        pattern: None,
        reads: "file",
    },
    ReadTool {
        name: "read_many_files",
        shown: &["paths"],
        path: &["paths"],
        pattern: None,
        reads: "file",
    },
    ReadTool {
        name: "list_directory",
        shown: &["dir_path", "path"],
        path: &["dir_path", "path"],
        pattern: None,
        reads: "names",
    },
    ReadTool {
        name: "glob",
        shown: &["pattern", "dir_path"],
        path: &["dir_path", "path"],
        pattern: Some("pattern"),
        reads: "names",
    },
    ReadTool {
        name: "search_file_content",
        shown: &["pattern", "dir_path"],
        path: &["dir_path", "path"],
        pattern: None,
        reads: "tree",
    },
    ReadTool {
        name: "grep",
        shown: &["pattern", "dir_path"],
        path: &["dir_path", "path"],
        pattern: None,
        reads: "tree",
    },
];

/// The intents one tool call becomes (several for a patch that touches several files), or an
/// error naming what is missing from the tool call. `cwd` is the harness's working folder, `None`
/// when its input named none: a file write then says `cwd: null` (the gate counts the path as
/// outside the working folder) and a shell command needs a folder of its own.
pub fn intents(tool: &str, input: &Value, cwd: Option<&Path>) -> Result<Vec<Submission>, String> {
    let cwd_text = cwd.map_or(Value::Null, |c| Value::from(c.to_string_lossy()));
    let submit = |capability: &str, mut params: Value| {
        // Unknown folders are left out of what only shows it (`{cwd}` stays visible), and said
        // as null where the gate rates a path against it.
        if capability != "file.write"
            && let Some(map) = params.as_object_mut()
        {
            map.retain(|k, v| k != "cwd" || !v.is_null());
        }
        Submission {
            capability: capability.to_string(),
            params,
            target: None,
            steps: Vec::new(),
        }
    };
    if SHELL_TOOLS.contains(&tool) {
        let command =
            shell_command(input).ok_or_else(|| format!("the {tool} call has no command"))?;
        let workdir = input
            .get("workdir")
            .or_else(|| input.get("dir_path"))
            .or_else(|| input.get("directory"))
            .and_then(Value::as_str)
            .map(Path::new);
        // The working folder stays the harness's; a folder of the call's own (Codex's
        // `workdir`) is only where the command starts (`dir`), so `workdir: "/"` does not make
        // the whole disk "inside the working folder".
        let (folder, start) = match (cwd, workdir) {
            (Some(c), Some(d)) => (c.to_path_buf(), Some(c.join(d))),
            (None, Some(d)) if d.is_absolute() => (d.to_path_buf(), None),
            (Some(c), None) => (c.to_path_buf(), None),
            _ => {
                return Err(format!(
                    "the {tool} call has no working folder (no cwd in the hook input): a shell \
                     command is rated against it"
                ));
            }
        };
        let start = start.filter(|s| *s != folder);
        // A shell call that only applies a Codex patch is the files the patch touches.
        let base = start.as_deref().unwrap_or(&folder);
        if let Some(files) = hook_patch::from_command(&command, cwd, base) {
            return Ok(files);
        }
        let mut params = json!({"command": command, "cwd": folder.to_string_lossy()});
        if let Some(s) = start {
            params["dir"] = Value::from(s.to_string_lossy());
        }
        return Ok(vec![submit("shell.exec", params)]);
    }
    if let Some((_, field)) = WRITE_TOOLS.iter().find(|(t, _)| *t == tool) {
        let path = string(input, field).ok_or_else(|| format!("the {tool} call has no {field}"))?;
        return Ok(vec![submit(
            "file.write",
            json!({"path": path, "cwd": cwd_text}),
        )]);
    }
    if tool == "apply_patch" {
        let patch = string(input, "input")
            .or_else(|| string(input, "patch"))
            .or_else(|| string(input, "command"))
            .ok_or("the apply_patch call has no patch")?;
        // With no working folder known the paths stay as written, and the gate counts them as
        // outside it.
        let start = cwd.unwrap_or(Path::new(""));
        if let Some(files) = hook_patch::from_text(&patch, cwd, start) {
            return Ok(files);
        }
        // Not readable as a patch: a command the gate rates High, with the text it was given.
        let dir = cwd.ok_or("the apply_patch call has no working folder")?;
        let command = format!("apply_patch {}", quote(&patch));
        let params = json!({"command": command, "cwd": dir.to_string_lossy()});
        return Ok(vec![submit("shell.exec", params)]);
    }
    if let Some(read) = READ_TOOLS.iter().find(|t| t.name == tool) {
        return Ok(vec![submit("agent.read", read_params(read, input, cwd))]);
    }
    if matches!(tool, "WebFetch" | "web_fetch") {
        let url = string(input, "url")
            .or_else(|| string(input, "prompt"))
            .ok_or_else(|| format!("the {tool} call has no url"))?;
        return Ok(vec![submit("network.fetch", json!({"url": url}))]);
    }
    if matches!(tool, "WebSearch" | "google_web_search" | "web_search") {
        let query =
            string(input, "query").ok_or_else(|| format!("the {tool} call has no query"))?;
        return Ok(vec![submit("agent.web.search", json!({"query": query}))]);
    }
    if let Some(name) = mcp_capability(tool) {
        let params = json!({"arguments": input, "cwd": cwd_text});
        return Ok(vec![submit(&name, params)]);
    }
    let params = json!({"tool": tool, "input": display(input), "cwd": cwd_text});
    Ok(vec![submit("agent.tool", params)])
}

/// `mcp__server__tool` → `mcp.server.tool`, each part lowercased to the gate's name alphabet.
pub fn mcp_capability(tool: &str) -> Option<String> {
    let rest = tool.strip_prefix("mcp__")?;
    let (server, name) = rest.split_once("__")?;
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| {
                let c = c.to_ascii_lowercase();
                if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    let (server, name) = (clean(server), clean(name));
    if server.is_empty() || name.is_empty() {
        return None;
    }
    Some(format!("mcp.{server}.{name}"))
}

/// The shell command of a shell tool call: a string, or Codex's argv array (`["bash", "-lc",
/// "…"]` gives the script; any other argv is quoted back into one command line).
fn shell_command(input: &Value) -> Option<String> {
    let value = input.get("command").or_else(|| input.get("cmd"))?;
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Array(items) => {
            let argv: Option<Vec<&str>> = items.iter().map(Value::as_str).collect();
            let argv = argv?;
            let shells = ["bash", "sh", "zsh", "/bin/bash", "/bin/sh", "/usr/bin/bash"];
            if argv.len() == 3 && shells.contains(&argv[0]) && matches!(argv[1], "-c" | "-lc") {
                return Some(argv[2].to_string());
            }
            Some(argv.iter().map(|a| quote(a)).collect::<Vec<_>>().join(" "))
        }
        _ => None,
    }
}

/// Single-quotes a word for the shell unless it is plain.
fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

fn string(input: &Value, key: &str) -> Option<String> {
    input.get(key).and_then(Value::as_str).map(str::to_string)
}

fn display(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A read tool's parameters: what it shows (`target`), the path or paths the gate rates, how
/// it reads them, and the working folder (left out when unknown: the gate then counts every
/// path as outside it).
fn read_params(read: &ReadTool, input: &Value, cwd: Option<&Path>) -> Value {
    let target: Vec<String> = read
        .shown
        .iter()
        .filter_map(|f| input.get(*f).map(display))
        .collect();
    let folder = read.path.iter().find_map(|f| input.get(*f));
    let pattern = read.pattern.and_then(|p| string(input, p));
    let path: Value = match (folder, pattern) {
        (Some(Value::Array(items)), _) => Value::Array(items.clone()),
        (folder, Some(pattern)) if !pattern.starts_with('/') && !pattern.starts_with('~') => {
            let base = folder
                .and_then(Value::as_str)
                .map(str::to_string)
                .or_else(|| cwd.map(|c| c.to_string_lossy().into_owned()));
            Value::from(match base {
                Some(b) => format!("{}/{pattern}", b.trim_end_matches('/')),
                None => pattern,
            })
        }
        (_, Some(pattern)) => Value::from(pattern),
        (Some(v), None) => v.clone(),
        (None, None) => {
            Value::from(cwd.map_or_else(|| ".".to_string(), |c| c.to_string_lossy().into_owned()))
        }
    };
    let mut params =
        json!({"tool": read.name, "target": target.join(" "), "path": path, "reads": read.reads});
    if let Some(c) = cwd {
        params["cwd"] = Value::from(c.to_string_lossy());
    }
    params
}

/// The tool call's fields: `tool_name` and `tool_input` (an object; absent is `{}`).
pub fn tool_call(event: &Map<String, Value>) -> Result<(String, Value), String> {
    let tool = event
        .get("tool_name")
        .and_then(Value::as_str)
        .ok_or("the hook input has no tool_name")?
        .to_string();
    let input = match event.get("tool_input") {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(v @ Value::Object(_)) => v.clone(),
        Some(_) => return Err("the hook input's tool_input is not an object".into()),
    };
    Ok((tool, input))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(tool: &str, input: Value) -> (String, Value) {
        let mut v = intents(tool, &input, Some(Path::new("/p"))).unwrap();
        assert_eq!(v.len(), 1);
        let s = v.remove(0);
        (s.capability, s.params)
    }

    #[test]
    fn tools_become_capabilities_by_name_alone() {
        assert_eq!(
            one("Bash", json!({"command": "ls", "description": "list"})),
            ("shell.exec".into(), json!({"command": "ls", "cwd": "/p"}))
        );
        assert_eq!(
            one(
                "shell",
                json!({"command": ["bash", "-lc", "rm -rf x"], "workdir": "sub"})
            ),
            (
                "shell.exec".into(),
                json!({"command": "rm -rf x", "cwd": "/p", "dir": "/p/sub"})
            )
        );
        assert_eq!(
            one("shell", json!({"command": ["rm", "-rf", "a b"]})).1["command"],
            "rm -rf 'a b'"
        );
        assert_eq!(one("Edit", json!({"file_path": "/p/a.rs"})).0, "file.write");
        assert_eq!(
            one("Read", json!({"file_path": "/p/a.rs"})),
            (
                "agent.read".into(),
                json!({"tool": "Read", "target": "/p/a.rs", "path": "/p/a.rs", "reads": "file",
                       "cwd": "/p"})
            )
        );
        assert_eq!(
            one("WebFetch", json!({"url": "https://x"})).0,
            "network.fetch"
        );
        assert_eq!(
            one("mcp__GitHub__delete_repo", json!({})).0,
            "mcp.github.delete_repo"
        );
        assert_eq!(one("TodoWrite", json!({"todos": []})).0, "agent.tool");
    }

    #[test]
    fn a_patch_asks_once_per_file() {
        let patch = "*** Begin Patch\n*** Update File: src/a.rs\n@@\n-x\n+y\n*** Add File: b.rs\n\
                     +z\n*** Delete File: c.rs\n*** End Patch\n";
        let caps = |v: Vec<Submission>| -> Vec<(String, Value)> {
            v.into_iter()
                .map(|s| (s.capability, s.params["path"].clone()))
                .collect()
        };
        let want = vec![
            ("file.write".to_string(), json!("/p/src/a.rs")),
            ("file.write".to_string(), json!("/p/b.rs")),
            ("agent.file.delete".to_string(), json!("/p/c.rs")),
        ];
        let tool = intents(
            "apply_patch",
            &json!({"input": patch}),
            Some(Path::new("/p")),
        );
        assert_eq!(caps(tool.unwrap()), want);
        // Codex 0.171 sends the same patch as a shell call with a here-document.
        let command = format!("apply_patch <<'EOF'\n{patch}EOF\n");
        for (name, input) in [
            ("Bash", json!({"command": command})),
            ("exec_command", json!({"cmd": command})),
            ("shell", json!({"command": ["bash", "-lc", command]})),
        ] {
            let v = intents(name, &input, Some(Path::new("/p"))).unwrap();
            assert_eq!(caps(v), want, "{name}");
        }
        // A patch that cannot be read stays a command (the gate rates it High).
        let v = intents(
            "apply_patch",
            &json!({"input": "nothing"}),
            Some(Path::new("/p")),
        );
        assert_eq!(v.unwrap()[0].capability, "shell.exec");
        let v = intents(
            "Bash",
            &json!({"command": "apply_patch <<'EOF'\nnothing\nEOF"}),
            Some(Path::new("/p")),
        );
        assert_eq!(v.unwrap()[0].capability, "shell.exec");
    }

    #[test]
    fn read_tools_send_their_paths_and_how_they_read() {
        let read = |tool: &str, input: Value| one(tool, input).1;
        let g = read("Grep", json!({"pattern": "x"}));
        assert_eq!(
            (g["path"].clone(), g["reads"].clone()),
            (json!("/p"), json!("tree"))
        );
        let g = read("Grep", json!({"pattern": "x", "path": "/q"}));
        assert_eq!(g["path"], "/q");
        let g = read("Glob", json!({"pattern": "**/*.rs"}));
        assert_eq!(
            (g["path"].clone(), g["reads"].clone()),
            (json!("/p/**/*.rs"), json!("names"))
        );
        let g = read("Glob", json!({"pattern": "/home/u/.ssh/*"}));
        assert_eq!(g["path"], "/home/u/.ssh/*");
        let g = read("read_many_files", json!({"paths": ["a", "b"]}));
        assert_eq!(g["path"], json!(["a", "b"]));
        let g = read("read_file", json!({"absolute_path": "/k"}));
        assert_eq!(
            (g["path"].clone(), g["reads"].clone()),
            (json!("/k"), json!("file"))
        );
        assert_eq!(read("LS", json!({"path": "/q"}))["reads"], "names");
    }

    #[test]
    fn missing_fields_are_named() {
        let e = intents("Bash", &json!({}), Some(Path::new("/p"))).unwrap_err();
        assert!(e.contains("command"), "{e}");
        assert!(mcp_capability("mcp__x").is_none());
    }

    #[test]
    fn an_unknown_working_folder_is_said_as_such() {
        let write = intents("Write", &json!({"file_path": "/p/a.rs"}), None).unwrap();
        assert_eq!(write[0].params, json!({"path": "/p/a.rs", "cwd": null}));
        let read = intents("Read", &json!({"file_path": "/p/a.rs"}), None).unwrap();
        assert!(read[0].params.get("cwd").is_none(), "{:?}", read[0].params);
        let e = intents("Bash", &json!({"command": "ls"}), None).unwrap_err();
        assert!(e.contains("no working folder"), "{e}");
        let abs = intents("shell", &json!({"command": "ls", "workdir": "/q"}), None).unwrap();
        assert_eq!(abs[0].params["cwd"], "/q");
    }
}
