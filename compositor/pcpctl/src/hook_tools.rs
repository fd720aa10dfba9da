//! Which intent a harness's tool call becomes: the capability is named by the tool alone, and
//! the parameters are the call's own (command, path, URL, MCP arguments) plus the working
//! folder. Nothing here rates a risk — the gate does, from these parameters
//! (`assets/capabilities.d/60-agents.toml`).

use std::path::Path;

use pcp_protocol::Submission;
use serde_json::{Map, Value, json};

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
/// Read-only tools and the input fields that say what they read.
const READ_TOOLS: &[(&str, &[&str])] = &[
    ("Read", &["file_path"]),
    ("Grep", &["pattern", "path"]),
    ("Glob", &["pattern", "path"]),
    ("LS", &["path"]),
    ("read_file", &["file_path", "absolute_path"]),
    ("read_many_files", &["paths"]),
    ("list_directory", &["dir_path", "path"]),
    ("glob", &["pattern", "dir_path"]),
    ("search_file_content", &["pattern", "dir_path"]),
    ("grep", &["pattern", "dir_path"]),
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
        let dir = match (cwd, workdir) {
            (Some(c), Some(d)) => c.join(d),
            (None, Some(d)) if d.is_absolute() => d.to_path_buf(),
            (Some(c), None) => c.to_path_buf(),
            _ => {
                return Err(format!(
                    "the {tool} call has no working folder (no cwd in the hook input): a shell \
                     command is rated against it"
                ));
            }
        };
        let dir = dir.to_string_lossy().into_owned();
        return Ok(vec![submit(
            "shell.exec",
            json!({"command": command, "cwd": dir}),
        )]);
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
        let paths = patch_paths(&patch);
        if paths.is_empty() {
            return Err("the patch names no file".into());
        }
        return Ok(paths
            .into_iter()
            .map(|p| submit("file.write", json!({"path": p, "cwd": cwd_text})))
            .collect());
    }
    if let Some((_, fields)) = READ_TOOLS.iter().find(|(t, _)| *t == tool) {
        let target: Vec<String> = fields
            .iter()
            .filter_map(|f| input.get(*f).map(display))
            .collect();
        let params = json!({"tool": tool, "target": target.join(" "), "cwd": cwd_text});
        return Ok(vec![submit("agent.read", params)]);
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

/// `mcp__server__tool` → `mcp.server.tool`, named as the gate names every MCP tool call
/// (`pcp_gate::mcp::capability`: lowercase, other characters `_`, at most 128 bytes).
pub fn mcp_capability(tool: &str) -> Option<String> {
    let rest = tool.strip_prefix("mcp__")?;
    let (server, name) = rest.split_once("__")?;
    if server.is_empty() || name.is_empty() {
        return None;
    }
    Some(pcp_gate::mcp::capability(server, name))
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

/// The files a Codex `apply_patch` touches (`*** Add File:`, `*** Update File:`, `*** Delete
/// File:`, `*** Move to:`), in order, each once.
fn patch_paths(patch: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in patch.lines() {
        let path = [
            "*** Add File: ",
            "*** Update File: ",
            "*** Delete File: ",
            "*** Move to: ",
        ]
        .iter()
        .find_map(|p| line.strip_prefix(p));
        if let Some(p) = path.map(str::trim).filter(|p| !p.is_empty())
            && !out.iter().any(|o| o == p)
        {
            out.push(p.to_string());
        }
    }
    out
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
                json!({"command": "rm -rf x", "cwd": "/p/sub"})
            )
        );
        assert_eq!(
            one("shell", json!({"command": ["rm", "-rf", "a b"]})).1["command"],
            "rm -rf 'a b'"
        );
        assert_eq!(one("Edit", json!({"file_path": "/p/a.rs"})).0, "file.write");
        assert_eq!(one("Read", json!({"file_path": "/p/a.rs"})).0, "agent.read");
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
                     +z\n*** End Patch\n";
        let v = intents(
            "apply_patch",
            &json!({"input": patch}),
            Some(Path::new("/p")),
        )
        .unwrap();
        let paths: Vec<&Value> = v.iter().map(|s| &s.params["path"]).collect();
        assert_eq!(paths, [&json!("src/a.rs"), &json!("b.rs")]);
    }

    #[test]
    fn missing_fields_are_named() {
        let e = intents("Bash", &json!({}), Some(Path::new("/p"))).unwrap_err();
        assert!(e.contains("command"), "{e}");
        assert!(
            intents(
                "apply_patch",
                &json!({"input": "nothing"}),
                Some(Path::new("/p"))
            )
            .is_err()
        );
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
