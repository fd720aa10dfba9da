//! `pcpctl mcp --print-config CLIENT`: the snippet that puts the gateway in front of a server in
//! a client's MCP settings, in that client's format, with the path of the `pcpctl` that printed
//! it. With `--url` it points the client at the gateway's loopback endpoint instead.

use anyhow::Result;
use clap::ValueEnum;
use serde_json::{Value, json};

use super::{Args, DEFAULT_DEADLINE_SECONDS, server_name};

/// The MCP clients whose settings format `--print-config` knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Client {
    /// Claude Code: `.mcp.json` in a project, or `claude mcp add-json NAME 'JSON'`.
    ClaudeCode,
    /// Claude Desktop: `claude_desktop_config.json`.
    ClaudeDesktop,
    /// Codex CLI: `~/.codex/config.toml` (`[mcp_servers.NAME]`).
    Codex,
    /// Gemini CLI: `~/.gemini/settings.json` (`mcpServers`).
    Gemini,
    /// VS Code: `.vscode/mcp.json` (`servers`).
    Vscode,
    /// Cursor: `~/.cursor/mcp.json` or a project's `.cursor/mcp.json`.
    Cursor,
}

/// The example server shown when no command follows `--`.
const EXAMPLE: [&str; 4] = [
    "npx",
    "-y",
    "@modelcontextprotocol/server-filesystem",
    "/path/to/allowed/folder",
];

/// Seconds a client should wait for a tool call: more than the gateway's deadline, so the
/// gateway's denial reaches it first.
const CLIENT_TIMEOUT_SECONDS: u64 = 60;

/// The snippet for `client`.
pub fn snippet(client: Client, args: &Args) -> Result<String> {
    let command: Vec<String> = if args.command.is_empty() {
        EXAMPLE.iter().map(|s| s.to_string()).collect()
    } else {
        args.command.clone()
    };
    let name = args.name.clone().unwrap_or_else(|| server_name(&command));
    let exe = std::env::current_exe()?.to_string_lossy().into_owned();
    if let Some(url) = &args.url {
        return Ok(http_snippet(
            client,
            &name,
            &format!("http://{}/mcp", args.listen),
            url,
        ));
    }
    let mut gateway_args = vec!["mcp".to_string(), "--name".into(), name.clone()];
    if args.deadline != DEFAULT_DEADLINE_SECONDS {
        gateway_args.extend(["--deadline".into(), args.deadline.to_string()]);
    }
    gateway_args.push("--".into());
    gateway_args.extend(command);
    let stdio = json!({"command": exe, "args": gateway_args});
    let entry = |mut extra: Value| {
        if let (Some(e), Value::Object(base)) = (extra.as_object_mut(), &stdio) {
            for (k, v) in base {
                e.insert(k.clone(), v.clone());
            }
        }
        extra
    };
    let text = match client {
        Client::ClaudeCode => {
            pretty(json!({"mcpServers": {name: entry(json!({"type": "stdio"}))}}))
        }
        Client::ClaudeDesktop | Client::Cursor => pretty(json!({"mcpServers": {name: stdio}})),
        Client::Gemini => pretty(json!({"mcpServers": {name: entry(
            json!({"timeout": CLIENT_TIMEOUT_SECONDS * 1000}))}})),
        Client::Vscode => pretty(json!({"servers": {name: entry(json!({"type": "stdio"}))}})),
        Client::Codex => codex_toml(&name, &exe, &gateway_args),
    };
    Ok(text)
}

/// The snippet pointing `client` at the gateway serving `local`, in front of `upstream`.
fn http_snippet(client: Client, name: &str, local: &str, upstream: &str) -> String {
    match client {
        Client::Codex => format!(
            "# the gateway runs as: pcpctl mcp --url {upstream}\n[mcp_servers.{}]\nurl = {}\n\
             tool_timeout_sec = {CLIENT_TIMEOUT_SECONDS}\n",
            toml_key(name),
            toml_string(local)
        ),
        Client::Gemini => pretty(json!({"mcpServers": {name: {"httpUrl": local,
            "timeout": CLIENT_TIMEOUT_SECONDS * 1000}}})),
        Client::Vscode => pretty(json!({"servers": {name: {"type": "http", "url": local}}})),
        Client::ClaudeCode => pretty(json!({"mcpServers": {name: {"type": "http", "url": local}}})),
        Client::ClaudeDesktop | Client::Cursor => {
            pretty(json!({"mcpServers": {name: {"url": local}}}))
        }
    }
}

fn pretty(v: Value) -> String {
    serde_json::to_string_pretty(&v).unwrap_or_else(|_| v.to_string())
}

fn codex_toml(name: &str, exe: &str, args: &[String]) -> String {
    let args: Vec<String> = args.iter().map(|a| toml_string(a)).collect();
    // Codex passes MCP servers only the variables it names: the gateway needs the desktop's.
    format!(
        "[mcp_servers.{}]\ncommand = {}\nargs = [{}]\nenv_vars = [\"WAYLAND_DISPLAY\", \"XDG_RUNTIME_DIR\"]\n\
         tool_timeout_sec = {CLIENT_TIMEOUT_SECONDS}\n",
        toml_key(name),
        toml_string(exe),
        args.join(", ")
    )
}

/// A TOML basic string (JSON's escapes are TOML's).
fn toml_string(s: &str) -> String {
    Value::from(s).to_string()
}

/// A TOML key: bare when it can be.
fn toml_key(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        s.to_string()
    } else {
        toml_string(s)
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: Args,
    }

    fn snippet_for(client: Client, extra: &[&str]) -> String {
        let mut argv = vec!["pcpctl", "--name", "fs"];
        argv.extend(extra);
        argv.extend([
            "--",
            "npx",
            "-y",
            "@modelcontextprotocol/server-filesystem",
            "/p q",
        ]);
        let cli = Cli::try_parse_from(argv).unwrap();
        snippet(client, &cli.args).unwrap()
    }

    #[test]
    fn each_client_gets_its_own_format_running_this_gateway_in_front_of_the_server() {
        for client in [
            Client::ClaudeCode,
            Client::ClaudeDesktop,
            Client::Gemini,
            Client::Vscode,
            Client::Cursor,
        ] {
            let v: Value = serde_json::from_str(&snippet_for(client, &[])).unwrap();
            let servers = if client == Client::Vscode {
                &v["servers"]
            } else {
                &v["mcpServers"]
            };
            let args = servers["fs"]["args"].as_array().unwrap();
            assert_eq!(
                args[..4],
                [json!("mcp"), json!("--name"), json!("fs"), json!("--")]
            );
            assert_eq!(args.last().unwrap(), "/p q");
        }
        let codex = snippet_for(Client::Codex, &[]);
        assert!(codex.starts_with("[mcp_servers.fs]\n"), "{codex}");
        assert!(codex.contains("env_vars = [\"WAYLAND_DISPLAY\""), "{codex}");
        assert!(codex.contains("\"/p q\"]"), "{codex}");
    }

    #[test]
    fn the_http_form_points_clients_at_the_loopback_endpoint() {
        let extra = [
            "--url",
            "https://mcp.example.com/mcp",
            "--listen",
            "127.0.0.1:9000",
        ];
        let v: Value = serde_json::from_str(&snippet_for(Client::Gemini, &extra)).unwrap();
        assert_eq!(
            v["mcpServers"]["fs"]["httpUrl"],
            "http://127.0.0.1:9000/mcp"
        );
        let v: Value = serde_json::from_str(&snippet_for(Client::ClaudeCode, &extra)).unwrap();
        assert_eq!(v["mcpServers"]["fs"]["type"], "http");
    }
}
