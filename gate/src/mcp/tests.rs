//! The MCP rating's rules: annotations only raise the family's floor, a manifest by name
//! decides, commands and paths raise, and a changed, new or unlisted definition asks.

use std::path::Path;

use serde_json::{Value, json};

use super::*;
use crate::capability::Origin;
use crate::registry::Registry;
use crate::threshold;
use crate::types::{SafetyLevel, Threshold};

const MANIFESTS: &str = r#"
[[capability]]
name = "mcp.*"
version = 1
side_effects = "write"
auth_level = "privileged"
description = "Let the agent run an MCP tool"
extra_params = "show"

[[capability]]
name = "mcp.fs.read_text_file"
version = 1
side_effects = "read"
auth_level = "user"
description = "Read a file"
extra_params = "show"
"#;

const HASH_A: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
const HASH_B: &str = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

fn registry() -> Registry {
    let mut r = Registry::default();
    r.add_text(Path::new("m.toml"), MANIFESTS, Origin::User)
        .unwrap();
    r
}

/// The threshold `params` get for `capability`, with `pinned` as the allowed definition.
fn rated(capability: &str, params: Value, pinned: Option<&str>) -> (Threshold, McpRating) {
    let r = registry();
    let cap = r.lookup(capability).unwrap();
    let exact = r.get(capability).is_some();
    let rules = Rules {
        config: &McpConfig::default(),
        secrets: &Secrets::builtin(),
    };
    let rating = rate(&cap, exact, &params, pinned, &rules).unwrap();
    let t = threshold::threshold(
        rating.side_effects,
        rating.auth_level,
        SafetyLevel::Moderate,
    );
    (t, rating)
}

fn home() -> String {
    std::env::var("HOME").unwrap_or_else(|_| "/root".into())
}

#[test]
fn annotations_raise_the_family_floor_and_never_lower_it() {
    let call = |annotations: Value| {
        rated(
            "mcp.any.tool",
            json!({"arguments": {}, "cwd": "/p", "annotations": annotations}),
            None,
        )
    };
    let (t, r) = call(json!({"readOnlyHint": true}));
    assert_eq!(
        t,
        Threshold::Visual,
        "readOnlyHint must not lower the floor"
    );
    assert_eq!(r.side_effects, SideEffects::Write);
    let (t, r) = call(json!({"destructiveHint": true}));
    assert_eq!(
        (t, r.side_effects),
        (Threshold::VoiceVisual, SideEffects::Destructive)
    );
    let (t, r) = call(json!({"openWorldHint": true}));
    assert_eq!(
        (t, r.side_effects),
        (Threshold::Visual, SideEffects::Network)
    );
    // The spec's defaults (absent, or false) are no claim either way.
    let (t, _) = call(json!({"destructiveHint": false, "openWorldHint": "yes"}));
    assert_eq!(t, Threshold::Visual);
}

#[test]
fn a_manifest_by_name_decides_over_annotations() {
    let (t, r) = rated(
        "mcp.fs.read_text_file",
        json!({"arguments": {"path": "/p/a.txt"}, "cwd": "/p",
               "annotations": {"destructiveHint": true}}),
        None,
    );
    assert_eq!(t, Threshold::None);
    assert_eq!(r.side_effects, SideEffects::Read);
}

#[test]
fn written_paths_and_commands_are_rated_like_the_hooks() {
    let bashrc = format!("{}/.bashrc", home());
    let (t, r) = rated(
        "mcp.fs.write_file",
        json!({"arguments": {"path": bashrc, "content": "x"}, "cwd": "/p"}),
        None,
    );
    assert_eq!(
        (t, r.side_effects),
        (Threshold::VoiceVisual, SideEffects::System)
    );
    assert_eq!(r.classified.unwrap().risk, Risk::Critical);
    let (t, _) = rated(
        "mcp.fs.write_file",
        json!({"arguments": {"path": "/p/notes.txt", "content": "x"}, "cwd": "/p"}),
        None,
    );
    assert_eq!(t, Threshold::Visual, "inside the folder: the floor");
    let (t, r) = rated(
        "mcp.shell.execute_command",
        json!({"arguments": {"command": "rm -rf /tmp/elsewhere"}, "cwd": "/p"}),
        None,
    );
    assert_eq!(
        (t, r.side_effects),
        (Threshold::VoiceVisual, SideEffects::Destructive)
    );
    let (t, _) = rated(
        "mcp.shell.execute_command",
        json!({"arguments": {"command": "ls"}, "cwd": "/p"}),
        None,
    );
    assert_eq!(t, Threshold::Visual, "a safe command keeps the floor");
}

#[test]
fn a_path_in_an_unknown_argument_still_counts() {
    let (t, _) = rated(
        "mcp.odd.tool",
        json!({"arguments": {"x": {"y": "/etc/shadow"}}, "cwd": "/p"}),
        None,
    );
    assert_eq!(t, Threshold::VoiceVisual);
}

#[test]
fn a_changed_or_new_definition_asks_even_a_routine_read() {
    let params = |listing: &str, definition: &str| {
        json!({"arguments": {"path": "/p/a"}, "cwd": "/p", "definition": definition,
               "listing": listing})
    };
    let read = "mcp.fs.read_text_file";
    let (t, r) = rated(read, params("listed", HASH_A), Some(HASH_A));
    assert_eq!((t, r.notice), (Threshold::None, None));
    let (t, r) = rated(read, params("listed", HASH_B), Some(HASH_A));
    assert_eq!((t, r.notice), (Threshold::Visual, Some(Notice::Changed)));
    let (t, r) = rated(read, params("changed", HASH_B), None);
    assert_eq!((t, r.notice), (Threshold::Visual, Some(Notice::Changed)));
    let (t, r) = rated(read, params("appeared", HASH_B), None);
    assert_eq!((t, r.notice), (Threshold::Visual, Some(Notice::Appeared)));
    let (t, r) = rated(read, params("unlisted", HASH_B), None);
    assert_eq!((t, r.notice), (Threshold::Visual, Some(Notice::Unlisted)));
    // The first call of a tool nobody allowed yet is not "changed": nothing was allowed.
    let (t, r) = rated(read, params("listed", HASH_B), None);
    assert_eq!((t, r.notice), (Threshold::None, None));
}

#[test]
fn malformed_parameters_are_named() {
    let r = registry();
    let cap = r.lookup("mcp.a.b").unwrap();
    let rules = Rules {
        config: &McpConfig::default(),
        secrets: &Secrets::builtin(),
    };
    let err = |params: Value| rate(&cap, false, &params, None, &rules).unwrap_err();
    assert!(err(json!({"arguments": "x"})).contains("`arguments`"));
    assert!(err(json!({"cwd": "rel"})).contains("`cwd`"));
    assert!(err(json!({"definition": "xyz"})).contains("`definition`"));
    assert!(err(json!({"listing": "fine"})).contains("`listing`"));
    assert!(err(json!({"server": 3})).contains("`server`"));
}

#[test]
fn raise_keeps_the_higher_class() {
    let floor = (SideEffects::Write, AuthLevel::Privileged);
    assert_eq!(raise(floor, (SideEffects::Read, AuthLevel::User)), floor);
    assert_eq!(
        raise(floor, (SideEffects::System, AuthLevel::Privileged)),
        (SideEffects::System, AuthLevel::Privileged)
    );
    assert_eq!(raise((SideEffects::Read, AuthLevel::User), floor), floor);
}

#[test]
fn capability_names_fit_the_protocol() {
    assert_eq!(capability("GitHub", "get.issue"), "mcp.github.get_issue");
    assert_eq!(capability("", "x"), "mcp._.x");
    let long = capability("s", &"t".repeat(300));
    assert_eq!(long.len(), 128);
    assert_ne!(long, capability("s", &"t".repeat(301)));
    assert!(long.starts_with("mcp.s.ttt"));
}

#[test]
fn reading_a_secret_through_a_routine_read_asks_naming_it() {
    let key = format!("{}/.ssh/id_rsa", home());
    let (t, r) = rated(
        "mcp.fs.read_text_file",
        json!({"arguments": {"path": key}, "cwd": "/p"}),
        None,
    );
    assert_eq!(t, Threshold::Visual, "a secret read is never routine");
    let c = r.classified.unwrap();
    assert!(
        c.assessment
            .reasons
            .iter()
            .any(|x| x.command.contains("id_rsa")),
        "{c:?}"
    );
    let (t, _) = rated(
        "mcp.fs.read_text_file",
        json!({"arguments": {"path": "/p/notes.txt"}, "cwd": "/p"}),
        None,
    );
    assert_eq!(t, Threshold::None, "an ordinary read stays routine");
}
