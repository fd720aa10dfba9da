//! What the prompt of an MCP tool call lists under its description: the server and the command
//! it was started with, the tool as the server spells it, each argument (`arguments.path`), the
//! working folder and why the definition is not the one allowed before. The gate's own lines
//! come first and arguments are always named `arguments.…`, so no argument can pass for them.

use serde_json::Value;

use super::config::McpConfig;
use super::{HIDDEN_PARAMS, Notice};
use crate::capability::{Capability, display_value};

/// The prompt's lines for an MCP tool call of `cap` with `params`.
pub(crate) fn prompt_lines(
    cap: &Capability,
    params: &Value,
    notice: Option<Notice>,
    config: &McpConfig,
) -> Vec<(String, String)> {
    let mut lines = Vec::new();
    if let Some(n) = notice {
        lines.push((config.notice_label.clone(), n.text(config).to_string()));
    }
    let text = |key: &str| params.get(key).and_then(Value::as_str);
    if let Some(server) = text("server") {
        let shown = match text("command") {
            Some(command) => format!("{server} — {command}"),
            None => server.to_string(),
        };
        lines.push((config.server_label.clone(), shown));
    }
    if let Some(tool) = text("tool") {
        lines.push((config.tool_label.clone(), tool.to_string()));
    }
    match params.get("arguments") {
        Some(Value::Object(args)) if args.len() <= config.max_argument_lines => {
            for (key, value) in args {
                lines.push((format!("arguments.{key}"), display_value(value)));
            }
        }
        Some(other) => lines.push(("arguments".into(), other.to_string())),
        None => {}
    }
    let shown =
        |k: &str| cap.description.names(k) || cap.target.as_ref().is_some_and(|t| t.names(k));
    if let Value::Object(map) = params {
        for (key, value) in map {
            if !HIDDEN_PARAMS.contains(&key.as_str()) && !shown(key) {
                lines.push((key.clone(), display_value(value)));
            }
        }
    }
    lines
}
