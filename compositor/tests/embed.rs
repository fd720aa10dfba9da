//! The embedding guide walks through the compiled example: every Rust block of
//! `docs/embedding.md` is quoted verbatim from `examples/embed.rs` (or, for a host's build
//! script, from this package's own `build.rs`), so the two cannot drift apart; and the example
//! decides a prompt on a touch, as the guide says it does.

use std::path::Path;

#[test]
fn every_code_block_of_the_guide_is_in_the_example() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("../docs/embedding.md")).unwrap();
    let example = std::fs::read_to_string(root.join("examples/embed.rs")).unwrap();
    let build = std::fs::read_to_string(root.join("build.rs")).unwrap();
    // Each block without the indent of its fence (a block inside a list item is indented).
    let mut blocks: Vec<String> = Vec::new();
    let mut open: Option<(usize, String)> = None;
    for line in doc.lines() {
        match open.as_mut() {
            None if line.trim_start() == "```rust,ignore" => {
                open = Some((line.len() - line.trim_start().len(), String::new()));
            }
            Some((_, block)) if line.trim_start() == "```" => {
                blocks.push(std::mem::take(block));
                open = None;
            }
            Some((indent, block)) => {
                block.push_str(line.get(*indent..).unwrap_or(""));
                block.push('\n');
            }
            None => {}
        }
    }
    assert!(blocks.len() >= 5, "the guide quotes the example");
    for block in blocks {
        assert!(
            example.contains(&block) || build.contains(&block),
            "docs/embedding.md quotes code examples/embed.rs does not have:\n{block}"
        );
    }
}

/// The example as the guide runs it: a client's prompt is shown, and a tap on Approve with one
/// finger (`touch 0 X Y` on its standard input, through `pcp_plugin::input::touch_down` and
/// `touch_up`) approves it. `cargo test` builds the example beside the test binaries.
#[test]
fn the_example_decides_a_prompt_on_a_touch() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::{Command, Stdio};

    let exe = std::env::current_exe().unwrap();
    let example = exe
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("examples/embed");
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/embed.rs");
    let built = std::fs::metadata(&example).and_then(|m| m.modified());
    let written = std::fs::metadata(&source)
        .and_then(|m| m.modified())
        .unwrap();
    assert!(
        built.is_ok_and(|b| b >= written),
        "{} is not built from the current source: `cargo test -p pcp-compositor` (without \
         --test) builds the examples",
        example.display()
    );
    let dir = tempfile::tempdir().unwrap();
    let runtime = dir.path().join("runtime");
    std::fs::create_dir(&runtime).unwrap();
    std::fs::set_permissions(
        &runtime,
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .unwrap();
    let caps = Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets/capabilities.d");
    // A guard of 1 ms: the test taps at once instead of waiting out the 750 ms.
    let config = dir.path().join("embed.toml");
    std::fs::write(
        &config,
        format!(
            "[manifests]\ndirs = [{caps:?}]\n[state]\npath = {:?}\n[overlay]\nguard_delay_ms = \
             1\n[speech]\nenabled = false\n",
            dir.path().join("state/state.sqlite3")
        ),
    )
    .unwrap();
    std::fs::set_permissions(&config, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let mut child = Command::new(&example)
        .arg(&config)
        .env("XDG_RUNTIME_DIR", &runtime)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let socket = lines
        .by_ref()
        .map_while(Result::ok)
        .find_map(|l| l.strip_prefix("WAYLAND_DISPLAY=").map(str::to_string))
        .expect("the example names its socket");
    let mut client = pcp_protocol::client::IntentClient::connect_to(&runtime.join(socket)).unwrap();
    let handle = client
        .submit(&pcp_protocol::client::Submission {
            capability: "settings.change".into(),
            params: serde_json::json!({"key": "k", "value": "v"}),
            target: None,
            steps: Vec::new(),
        })
        .unwrap();
    // Pending: the dialog is up. Then where Approve is, and a finger's tap there.
    assert!(matches!(
        client.next_event(),
        Ok(pcp_protocol::client::IntentEvent::Pending { .. })
    ));
    writeln!(stdin, "where").unwrap();
    let approve = lines
        .by_ref()
        .map_while(Result::ok)
        .find_map(|l| l.strip_prefix("approve ").map(str::to_string))
        .expect("the example says where Approve is");
    writeln!(stdin, "touch 0 {approve}").unwrap();
    let decision = client.wait(&handle).unwrap();
    assert!(decision.approved, "{decision:?}");
    writeln!(stdin, "quit").unwrap();
    drop(stdin);
    assert!(child.wait().unwrap().success());
}
