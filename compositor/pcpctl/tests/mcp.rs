//! `pcpctl mcp` through the real binary, in front of a scripted MCP server
//! (`tests/mcp/scripted_mcp_server.py`), against a real headless compositor on this thread: a
//! read a manifest declares routine runs unasked; a write outside the project asks and a denial
//! leaves the file as it was; a tool whose description changes is asked about as changed (a
//! gateway without pinning would let the second read through); with no compositor every call
//! is a tool error; a hostile server (a line over the limit, garbage, a forged id, a flood of
//! list_changed) costs the client an error at most, never the gateway.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use pcp_compositor::startup;
use pcp_compositor::state::{Compositor, Socket};
use pcp_plugin::PcpHandler;
use serde_json::{Value, json};

const KEY_ESC: u32 = 1;
const KEY_TAB: u32 = 15;
const KEY_ENTER: u32 = 28;
const KEY_LEFTMETA: u32 = 125;

/// A routine read of the scripted server's `read_file`, as a user's manifest would declare it.
const MANIFEST: &str = r#"
[[capability]]
name = "mcp.scripted.read_file"
version = 1
side_effects = "read"
auth_level = "user"
description = "Read a file through the scripted server"
"#;

struct Setup {
    compositor: Option<Compositor>,
    dir: tempfile::TempDir,
}

fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let assets = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets");
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[manifests]\ndirs = [{:?}]\n[state]\npath = {:?}\n[overlay]\nsystem_fonts = false\n\
             [speech]\nenabled = false\n{MANIFEST}",
            assets.join("capabilities.d"),
            dir.path().join("state.sqlite3")
        ),
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("proj")).unwrap();
    let loaded = startup::load(Some(&config)).unwrap();
    let mut options = startup::options(
        loaded,
        vec!["800x600@0,0".parse().unwrap()],
        Some(Socket::Path(dir.path().join("wl"))),
        Some(config),
        true,
    )
    .unwrap();
    options.frame_timer = false;
    Setup {
        compositor: Some(Compositor::new(options).unwrap()),
        dir,
    }
}

fn scripted_server() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/mcp/scripted_mcp_server.py")
}

/// `pcpctl mcp` in front of the scripted server, and its stdout line by line.
struct Gateway {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<Value>,
    next_id: u64,
}

impl Setup {
    fn project(&self) -> PathBuf {
        self.dir.path().join("proj")
    }

    fn gateway(&self, server_args: &[&str]) -> Gateway {
        let mut child = Command::new(env!("CARGO_BIN_EXE_pcpctl"))
            .current_dir(self.project())
            .args([
                "mcp",
                "--name",
                "scripted",
                "--max-message-bytes",
                "100000",
                "--",
            ])
            .arg("python3")
            .arg(scripted_server())
            .args(server_args)
            .env("WAYLAND_DISPLAY", self.dir.path().join("wl"))
            .env_remove("XDG_RUNTIME_DIR")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let v: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("the gateway wrote non-JSON {line:?}: {e}"));
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        let mut g = Gateway {
            child,
            stdin,
            lines,
            next_id: 1,
        };
        g.send(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}}),
        );
        g
    }

    fn pump_until<T>(&mut self, mut done: impl FnMut(&mut Setup) -> Option<T>) -> T {
        let start = Instant::now();
        loop {
            if let Some(t) = done(self) {
                return t;
            }
            assert!(start.elapsed() < Duration::from_secs(30), "timed out");
            match &mut self.compositor {
                Some(c) => c.dispatch(Some(Duration::from_millis(5))).unwrap(),
                None => std::thread::sleep(Duration::from_millis(5)),
            }
        }
    }

    /// Waits for the answer to request `id`, pumping the compositor; notes whether a prompt
    /// came up meanwhile.
    fn answer(&mut self, g: &Gateway, id: u64, prompted: &mut bool) -> Value {
        self.pump_until(|s| {
            if let Some(c) = &mut s.compositor {
                *prompted |= c.state.pcp().gate().active().is_some();
            }
            g.lines.try_iter().find(|v| v["id"] == json!(id))
        })
    }

    fn prompt_extra(&mut self) -> Vec<(String, String)> {
        self.pump_until(|s| {
            let c = s.compositor.as_mut()?;
            c.state.pcp().gate().active().map(|p| p.extra.clone())
        })
    }

    fn press(&mut self, keys: &[u32]) {
        let state = &mut self.compositor.as_mut().unwrap().state;
        state.advance_clock(1000);
        if !state.pcp().ui().wants_keyboard() {
            for (key, pressed) in [
                (KEY_LEFTMETA, true),
                (KEY_ENTER, true),
                (KEY_ENTER, false),
                (KEY_LEFTMETA, false),
            ] {
                state.inject_key(key, pressed);
            }
        }
        for &key in keys {
            state.inject_key(key, true);
            state.inject_key(key, false);
        }
    }
}

impl Gateway {
    fn send(&mut self, v: Value) {
        writeln!(self.stdin, "{v}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Sends a request; returns its id.
    fn request(&mut self, method: &str, params: Value) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    fn call(&mut self, tool: &str, arguments: Value) -> u64 {
        self.request("tools/call", json!({"name": tool, "arguments": arguments}))
    }

    fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap()
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn text(answer: &Value) -> &str {
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or("")
}

#[test]
fn a_declared_read_runs_unasked_and_a_write_outside_the_project_asks() {
    let mut s = setup();
    let mut g = s.gateway(&[]);
    let inside = s.project().join("notes.txt");
    std::fs::write(&inside, "hello").unwrap();
    let mut prompted = false;
    let list = g.request("tools/list", json!({}));
    s.answer(&g, list, &mut prompted);
    let id = g.call("read_file", json!({"path": inside}));
    let a = s.answer(&g, id, &mut prompted);
    assert_eq!(text(&a), "hello", "{a}");
    assert!(!prompted, "a declared routine read must not ask");

    let outside = s.dir.path().join("outside.txt");
    std::fs::write(&outside, "precious").unwrap();
    let id = g.call(
        "write_file",
        json!({"path": outside, "content": "overwritten"}),
    );
    let extra = s.prompt_extra();
    assert!(
        extra
            .iter()
            .any(|(l, v)| l == "server" && v.contains("scripted_mcp_server.py")),
        "{extra:?}"
    );
    assert!(
        extra.iter().any(|(l, v)| l == "tool" && v == "write_file"),
        "{extra:?}"
    );
    s.press(&[KEY_ESC]);
    let a = s.answer(&g, id, &mut prompted);
    assert_eq!(a["result"]["isError"], true, "{a}");
    assert!(
        text(&a).starts_with("pcp-confirm denied this tool call"),
        "{a}"
    );
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "precious");
    // The connection is still there: the next request is answered.
    let id = g.request("ping", json!({}));
    assert_eq!(s.answer(&g, id, &mut prompted)["result"], json!({}));
    // Both calls are in the audit log under the server's name, with their definitions.
    drop(g);
    s.compositor = None;
    let audit = |server: &str| -> Vec<Value> {
        let out = Command::new(env!("CARGO_BIN_EXE_pcpctl"))
            .args(["audit", "--json", "--server", server, "--state"])
            .arg(s.dir.path().join("state.sqlite3"))
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let records = audit("scripted");
    let tools: Vec<&str> = records
        .iter()
        .filter_map(|r| r["mcp"]["tool"].as_str())
        .collect();
    assert_eq!(tools, ["read_file", "write_file"], "{records:?}");
    assert!(records.iter().all(|r| {
        r["mcp"]["definition"]
            .as_str()
            .is_some_and(|d| d.len() == 64)
    }));
    assert!(audit("other").is_empty());
}

#[test]
fn a_description_changed_mid_session_is_caught_at_the_next_call() {
    let mut s = setup();
    let mut g = s.gateway(&["--rug-pull-after", "1"]);
    let file = s.project().join("a.txt");
    std::fs::write(&file, "a").unwrap();
    let mut prompted = false;
    let list = g.request("tools/list", json!({}));
    s.answer(&g, list, &mut prompted);
    let id = g.call("read_file", json!({"path": file}));
    assert_eq!(text(&s.answer(&g, id, &mut prompted)), "a");
    assert!(!prompted);
    // The server has changed read_file's description and said so; the client lists again.
    let list = g.request("tools/list", json!({}));
    let listed = s.answer(&g, list, &mut prompted);
    assert!(listed.to_string().contains("id_rsa"));
    let id = g.call("read_file", json!({"path": file}));
    let extra = s.prompt_extra();
    assert!(
        extra
            .iter()
            .any(|(l, v)| l == "notice" && v.contains("changed since you last allowed")),
        "{extra:?}"
    );
    s.press(&[KEY_ESC]);
    let a = s.answer(&g, id, &mut prompted);
    assert_eq!(a["result"]["isError"], true, "{a}");
}

#[test]
fn with_no_compositor_every_call_is_a_tool_error() {
    let mut s = setup();
    s.compositor = None;
    let mut g = s.gateway(&[]);
    let mut prompted = false;
    let id = g.call("echo", json!({"message": "hi"}));
    let a = s.answer(&g, id, &mut prompted);
    assert_eq!(a["result"]["isError"], true, "{a}");
    assert!(text(&a).contains("no compositor"), "{a}");
}

#[test]
fn a_hostile_server_costs_the_client_an_error_never_the_gateway() {
    let mut s = setup();
    let mut g = s.gateway(&[]);
    let mut prompted = false;
    let list = g.request("tools/list", json!({}));
    s.answer(&g, list, &mut prompted);
    // Each hostile tool is asked about (the family's floor); approve each with Enter.
    let mut approve_and_answer = |s: &mut Setup, g: &mut Gateway, tool: &str, args: Value| {
        let id = g.call(tool, args);
        s.prompt_extra();
        s.press(&[KEY_TAB, KEY_TAB, KEY_ENTER]);
        s.answer(g, id, &mut prompted)
    };
    let a = approve_and_answer(&mut s, &mut g, "huge", json!({"bytes": 200_000}));
    assert!(
        a["error"]["message"]
            .as_str()
            .unwrap()
            .contains("over the gateway's limit"),
        "{a}"
    );
    let a = approve_and_answer(&mut s, &mut g, "garbage", json!({}));
    assert!(
        a["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not acceptable JSON"),
        "{a}"
    );
    let before = g.rss_kib();
    let a = approve_and_answer(&mut s, &mut g, "flood", json!({"count": 200_000}));
    assert_eq!(text(&a), "flooded");
    let after = g.rss_kib();
    assert!(
        after < before + 16 * 1024,
        "RSS grew from {before} KiB to {after} KiB"
    );
    // A forged id is dropped: the call itself is never answered by it, and the gateway lives.
    let id = g.call("wrong_id", json!({}));
    s.prompt_extra();
    s.press(&[KEY_TAB, KEY_TAB, KEY_ENTER]);
    let ping = g.request("ping", json!({}));
    assert_eq!(s.answer(&g, ping, &mut prompted)["result"], json!({}));
    assert!(g.lines.try_iter().all(|v| v["id"] != json!(id)));
    assert!(
        g.child.try_wait().unwrap().is_none(),
        "the gateway is still running"
    );
}
