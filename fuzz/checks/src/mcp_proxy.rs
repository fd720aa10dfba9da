//! The MCP gateway's state machine (`pcp_mcp::Proxy`) under any sequence of client lines,
//! server lines and decisions. An input is lines, each starting with a tag: `C` a line from the
//! client, `S` one from the server, `A`/`D` the desktop allowing/denying the oldest call it was
//! asked about, `K` the oldest asked call cancelled by the client (a `notifications/cancelled`),
//! `X` the server gone. What must hold whatever arrives:
//!
//! - nothing reaches the server but a line the client sent, byte for byte, or the gateway's own
//!   `tools/list`; a `tools/call` (alone or in a batch) only once the desktop allowed it;
//! - a denied or cancelled call never reaches the server, and a denied one is answered with a
//!   tool error (`isError: true`) for its id;
//! - every message written either way is one line of JSON;
//! - the tables stay within their limits.

use std::collections::{HashSet, VecDeque};

use pcp_mcp::{Action, IdKey, Limits, Proxy, Server, Verdict};
use serde_json::Value;

const LIMITS: Limits = Limits {
    max_in_flight: 16,
    max_waiting_calls: 4,
    max_tools: 8,
    max_pages: 3,
};

/// Whether `id`, read back from a message, is `key`. A float id written out and read again may
/// come back one unit off (serde_json reads floats fast, not exactly), so floats compare within
/// that.
fn same_id(id: &Value, key: &IdKey) -> bool {
    if IdKey::of(id) == *key {
        return true;
    }
    match (id.as_f64(), key.0.parse::<f64>()) {
        (Some(a), Ok(b)) if id.is_f64() => (a - b).abs() <= a.abs().max(b.abs()) * 1e-15,
        _ => false,
    }
}

/// Runs the input's events through a proxy, checking every action.
pub fn check(data: &[u8]) {
    let server = Server {
        name: "fuzz".into(),
        command: "fuzz-server".into(),
        cwd: Some("/p".into()),
    };
    let mut proxy = Proxy::new(server, LIMITS, "denied: {reason}", 1);
    let mut state = State::default();
    for line in data.split(|&b| b == b'\n') {
        let Some((&tag, rest)) = line.split_first() else {
            continue;
        };
        let actions = match tag {
            b'C' => {
                state.client_lines.insert(rest.to_vec());
                state.client_sent(rest);
                proxy.from_client(rest)
            }
            b'S' => proxy.from_server(rest),
            b'A' | b'D' => match state.asked.pop_front() {
                Some(key) => {
                    let verdict = if tag == b'A' {
                        Verdict::Allow
                    } else {
                        Verdict::Deny("no".into())
                    };
                    let actions = proxy.decided(&key, verdict);
                    state.check_decided(&key, tag == b'A', &actions);
                    actions
                }
                None => Vec::new(),
            },
            b'K' => match state.asked.front() {
                Some(key) => {
                    let note = format!(
                        r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{}}}}}"#,
                        key.0
                    );
                    state.client_lines.insert(note.clone().into_bytes());
                    proxy.from_client(note.as_bytes())
                }
                None => Vec::new(),
            },
            b'X' => proxy.server_closed("gone"),
            _ => continue,
        };
        // An approval's forward was checked by `check_decided`.
        state.check(&actions, tag == b'S', tag == b'A');
        let (in_flight, calls) = proxy.held();
        assert!(
            in_flight + calls <= LIMITS.max_in_flight + LIMITS.max_pages,
            "tables over their limits"
        );
        assert!(calls <= LIMITS.max_waiting_calls);
        assert!(proxy.tools().len() <= LIMITS.max_tools);
    }
}

#[derive(Default)]
struct State {
    client_lines: HashSet<Vec<u8>>,
    asked: VecDeque<IdKey>,
    /// Calls denied whose id the client has not used again since.
    denied: HashSet<IdKey>,
}

impl State {
    /// The client sent `line`: a request reusing a denied call's id makes that id its own.
    fn client_sent(&mut self, line: &[u8]) {
        let Ok(v) = serde_json::from_slice::<Value>(line) else {
            return;
        };
        let items: Vec<&Value> = match &v {
            Value::Array(items) => items.iter().collect(),
            one => vec![one],
        };
        for item in items {
            if let Some(id) = item.get("id") {
                self.denied.remove(&IdKey::of(id));
            }
        }
    }

    /// What deciding `key` did: an allowed call goes to the server once, as the client sent
    /// it; a denied one is answered with a tool error for its id and goes nowhere else.
    fn check_decided(&mut self, key: &IdKey, allowed: bool, actions: &[Action]) {
        let to_server: Vec<&Vec<u8>> = actions
            .iter()
            .filter_map(|a| match a {
                Action::ToServer(b) => Some(b),
                _ => None,
            })
            .collect();
        if allowed {
            assert!(to_server.len() <= 1);
            for bytes in to_server {
                assert!(
                    self.client_lines.contains(bytes),
                    "an allowed call was changed"
                );
                let v: Value = serde_json::from_slice(bytes).expect("JSON");
                assert!(same_id(&v["id"], key), "another call went to the server");
            }
            return;
        }
        assert!(to_server.is_empty(), "a denied call reached the server");
        let answered = actions.iter().any(|a| match a {
            Action::ToClient(b) => serde_json::from_slice::<Value>(b).is_ok_and(|v| {
                same_id(&v["id"], key) && v["result"]["isError"] == Value::Bool(true)
            }),
            _ => false,
        });
        // A call withdrawn meanwhile is owed nothing.
        if !actions.is_empty() {
            assert!(
                answered,
                "a denied call ({}) was not answered with a tool error",
                key.0
            );
            self.denied.insert(key.clone());
        }
    }

    fn check(&mut self, actions: &[Action], from_server: bool, approval: bool) {
        for action in actions {
            match action {
                Action::ToServer(_) if approval => {}
                Action::ToServer(bytes) => self.to_server(bytes),
                Action::ToClient(bytes) => {
                    assert!(
                        !bytes.contains(&b'\n'),
                        "a message to the client holds a newline"
                    );
                    let v: Value = serde_json::from_slice(bytes).expect("the client is sent JSON");
                    let responses: Vec<&Value> = match &v {
                        Value::Array(items) => items.iter().collect(),
                        one => vec![one],
                    };
                    for r in responses {
                        let forged = from_server
                            && r.get("result").is_some()
                            && r.get("id")
                                .is_some_and(|id| self.denied.contains(&IdKey::of(id)));
                        assert!(!forged, "the server answered a denied call for it");
                    }
                }
                Action::Ask(ask) => {
                    assert!(ask.capability.starts_with("mcp.fuzz."));
                    assert!(ask.capability.len() <= 128);
                    assert!(pcp_mcp::intent::check_params(&ask.params).is_ok());
                    self.asked.push_back(ask.call.clone());
                }
                Action::Cancel(key) => self.asked.retain(|k| k != key),
                Action::Warn(_) => {}
            }
        }
    }

    /// A line to the server: one the client sent, byte for byte, and never a tool call (those go
    /// only through `check_decided`), or the gateway's own listing.
    fn to_server(&self, bytes: &[u8]) {
        assert!(
            !bytes.contains(&b'\n'),
            "a message to the server holds a newline"
        );
        let v: Value = serde_json::from_slice(bytes).expect("the server is sent JSON");
        if !self.client_lines.contains(bytes) {
            assert_eq!(
                v["method"], "tools/list",
                "the server got a line no client sent"
            );
            let id = v["id"].as_str().unwrap_or("");
            assert!(
                id.starts_with("pcp-gateway-"),
                "an own request with id {id}"
            );
            return;
        }
        let items: Vec<&Value> = match &v {
            Value::Array(items) => items.iter().collect(),
            one => vec![one],
        };
        for item in items {
            assert!(
                item.get("method") != Some(&Value::from("tools/call")),
                "a tools/call reached the server without being decided"
            );
        }
    }
}
