//! The gateway's state machine between one MCP client and one server, with no I/O: each line
//! from either side, and each decision of the desktop, gives the [`Action`]s to carry out. A
//! `tools/call` is held and asked about ([`Action::Ask`]); only an allowed one reaches the
//! server, byte for byte as the client sent it. Everything else passes through unchanged, except
//! what cannot be read (refused with a JSON-RPC error, never forwarded) and server answers to
//! requests nobody sent (dropped). Every table is bounded by [`Limits`].

use std::collections::{HashMap, VecDeque};

use serde_json::{Value, json};

use crate::json::parse_unique;
use crate::message::{self, IdKey, Kind, code};
use crate::tools::Tools;

mod server;

/// How much the gateway keeps at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Requests forwarded and not answered yet, tool calls waiting included; more are refused.
    pub max_in_flight: usize,
    /// Tool calls waiting for a listing or the desktop's decision; more are refused.
    pub max_waiting_calls: usize,
    /// Tools kept per session.
    pub max_tools: usize,
    /// Pages of one listing the gateway fetches itself.
    pub max_pages: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_in_flight: 1024,
            max_waiting_calls: 64,
            max_tools: 1024,
            max_pages: 64,
        }
    }
}

/// The server the gateway stands in front of, as the dialog names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Server {
    /// Its name in the client's settings (`--name`).
    pub name: String,
    /// The command it was started with (or its URL).
    pub command: String,
    /// The working folder its paths are rated against; `None` when unknown.
    pub cwd: Option<String>,
}

/// A tool call to ask the desktop about.
#[derive(Debug, Clone, PartialEq)]
pub struct Ask {
    pub call: IdKey,
    pub capability: String,
    pub params: Value,
}

/// What the I/O around the proxy does next.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Write this message (one line, no newline) to the server.
    ToServer(Vec<u8>),
    /// Write this message (one line, no newline) to the client.
    ToClient(Vec<u8>),
    /// Ask the desktop; answer with [`Proxy::decided`].
    Ask(Ask),
    /// Withdraw an ask still waiting (the client cancelled the call).
    Cancel(IdKey),
    /// Something worth a line in the log.
    Warn(String),
}

/// The desktop's answer about a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Allow,
    /// Denied, with the reason the client is told.
    Deny(String),
}

/// A request the server has not answered yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pending {
    /// The client's: its answer goes back unchanged.
    Client,
    /// The client's `tools/list` (`first`: without a cursor): its answer is read, then passed on.
    ClientListing { first: bool },
    /// The gateway's own `tools/list`: its answer is read and kept here.
    OwnListing { first: bool, page: usize },
}

/// A tool call held by the gateway.
#[derive(Debug)]
struct Call {
    id: Value,
    /// The request as the client sent it: forwarded unchanged when allowed.
    request: Vec<u8>,
    tool: String,
    arguments: Value,
    /// The definition asked about, once asked (`Some(None)`: asked, tool not listed).
    asked: Option<Option<String>>,
}

/// One session between a client and a server.
#[derive(Debug)]
pub struct Proxy {
    server: Server,
    limits: Limits,
    /// What a denied call's tool result says: `{reason}` is the desktop's reason.
    denial: String,
    tools: Tools,
    in_flight: HashMap<IdKey, Pending>,
    calls: HashMap<IdKey, Call>,
    /// Calls waiting for the gateway's own listing, in the order they came.
    parked: VecDeque<IdKey>,
    /// The gateway's own listing is under way.
    listing: bool,
    own_prefix: String,
    own_seq: u64,
}

impl Proxy {
    /// A session in front of `server`. `denial` words a denied call's result (`{reason}`);
    /// `nonce` makes the gateway's own request ids unlike any a client sends.
    pub fn new(server: Server, limits: Limits, denial: &str, nonce: u64) -> Proxy {
        Proxy {
            server,
            limits,
            denial: denial.to_string(),
            tools: Tools::new(limits.max_tools),
            in_flight: HashMap::new(),
            calls: HashMap::new(),
            parked: VecDeque::new(),
            listing: false,
            own_prefix: format!("pcp-gateway-{nonce:016x}-"),
            own_seq: 0,
        }
    }

    /// The tool table (for tests and the fuzz target's bounds).
    pub fn tools(&self) -> &Tools {
        &self.tools
    }

    /// Requests forwarded and unanswered, and calls held: what the limits bound.
    pub fn held(&self) -> (usize, usize) {
        (self.in_flight.len(), self.calls.len())
    }

    /// Whether the call `key` is held (waiting for a listing or a decision).
    pub fn holds(&self, key: &IdKey) -> bool {
        self.calls.contains_key(key)
    }

    /// One line from the client.
    pub fn from_client(&mut self, line: &[u8]) -> Vec<Action> {
        let v = match parse_unique(line) {
            Ok(v) => v,
            Err(e) => return vec![Action::ToClient(unreadable(line, &e))],
        };
        if let Value::Array(items) = &v {
            return self.client_batch(line, items);
        }
        let mut out = Vec::new();
        match message::kind(&v) {
            Kind::Request {
                id,
                method: "tools/call",
            } => self.call(id, &v, line, &mut out),
            Kind::Request { id, method } => {
                let pending = match method {
                    "tools/list" => Pending::ClientListing {
                        first: v["params"].get("cursor").is_none(),
                    },
                    _ => Pending::Client,
                };
                match self.admit(id) {
                    Ok(key) => {
                        self.in_flight.insert(key, pending);
                        out.push(Action::ToServer(line.to_vec()));
                    }
                    Err(refusal) => out.push(Action::ToClient(refusal)),
                }
            }
            Kind::Notification {
                method: "notifications/cancelled",
            } => self.cancelled(&v, line, &mut out),
            // A tool call without an id would run unasked on a server that takes it: dropped
            // (a notification gets no answer).
            Kind::Notification {
                method: "tools/call",
            } => out.push(Action::Warn(
                "the client sent tools/call as a notification (no id): dropped, never forwarded"
                    .into(),
            )),
            Kind::Notification { .. } | Kind::Response { .. } => {
                out.push(Action::ToServer(line.to_vec()));
            }
            Kind::Invalid(why) => {
                let id = v.get("id").cloned().unwrap_or(Value::Null);
                let text = format!("not a JSON-RPC 2.0 message: {why}");
                out.push(Action::ToClient(message::error_response(
                    &id,
                    code::INVALID_REQUEST,
                    &text,
                )));
            }
        }
        out
    }

    /// A request id the client may use now: not in use, and room in the tables.
    fn admit(&self, id: &Value) -> Result<IdKey, Vec<u8>> {
        let key = IdKey::of(id);
        let refuse = |text: &str| message::error_response(id, code::INVALID_REQUEST, text);
        if self.in_flight.contains_key(&key) || self.calls.contains_key(&key) {
            return Err(refuse(
                "this request id is already in use by a request not answered yet",
            ));
        }
        if self.in_flight.len() + self.calls.len() >= self.limits.max_in_flight {
            let text = format!(
                "more than {} requests are waiting for the server: try again later",
                self.limits.max_in_flight
            );
            return Err(message::error_response(id, code::GATEWAY, &text));
        }
        Ok(key)
    }

    /// A batch from the client: passed on unless it holds a tool call (or a member that is not
    /// JSON-RPC 2.0), which cannot be held back alone; then each request in it is refused and
    /// nothing is forwarded.
    fn client_batch(&mut self, line: &[u8], items: &[Value]) -> Vec<Action> {
        // A member that is not JSON-RPC 2.0 could still be a tool call to a lenient server
        // (`"jsonrpc": "1.0"`): it refuses the batch like a tool call does.
        let held_back = |v: &Value| match message::kind(v) {
            Kind::Request { method, .. } | Kind::Notification { method } => method == "tools/call",
            Kind::Invalid(_) => true,
            Kind::Response { .. } => false,
        };
        let requests = items.iter().filter_map(|v| match message::kind(v) {
            Kind::Request { id, method } => Some((id, method)),
            _ => None,
        });
        if items.iter().any(held_back) || items.is_empty() {
            let text = "a batch holding tools/call, or anything that is not JSON-RPC 2.0, is not \
                        taken by the pcp-confirm gateway: send each tool call alone";
            let refusals: Vec<Action> = requests
                .map(|(id, _)| {
                    Action::ToClient(message::error_response(id, code::INVALID_REQUEST, text))
                })
                .collect();
            if refusals.is_empty() {
                let e = message::error_response(&Value::Null, code::INVALID_REQUEST, text);
                return vec![Action::ToClient(e)];
            }
            return refusals;
        }
        // Admitted one by one, so a batch cannot pass the limits or use an id twice; a refusal
        // takes back the ones admitted before it.
        let mut admitted = Vec::new();
        for (id, method) in requests {
            let pending = if method == "tools/list" {
                Pending::ClientListing { first: true }
            } else {
                Pending::Client
            };
            match self.admit(id) {
                Ok(key) => {
                    self.in_flight.insert(key.clone(), pending);
                    admitted.push(key);
                }
                Err(refusal) => {
                    for key in admitted {
                        self.in_flight.remove(&key);
                    }
                    return vec![Action::ToClient(refusal)];
                }
            }
        }
        vec![Action::ToServer(line.to_vec())]
    }

    /// `notifications/cancelled` for a held call withdraws it here (the server never saw it);
    /// for anything else it goes on to the server.
    fn cancelled(&mut self, v: &Value, line: &[u8], out: &mut Vec<Action>) {
        let key = v["params"].get("requestId").map(IdKey::of);
        match key.and_then(|k| self.calls.remove(&k).map(|c| (k, c))) {
            Some((key, call)) => {
                self.parked.retain(|k| *k != key);
                if call.asked.is_some() {
                    out.push(Action::Cancel(key));
                }
            }
            None => out.push(Action::ToServer(line.to_vec())),
        }
    }

    /// A `tools/call`: held, and asked about once the tools are known.
    fn call(&mut self, id: &Value, v: &Value, line: &[u8], out: &mut Vec<Action>) {
        let key = match self.admit(id) {
            Ok(key) => key,
            Err(refusal) => return out.push(Action::ToClient(refusal)),
        };
        if self.calls.len() >= self.limits.max_waiting_calls {
            let reason = format!(
                "more than {} tool calls are waiting for the desktop",
                self.limits.max_waiting_calls
            );
            return out.push(Action::ToClient(message::tool_error(
                id,
                &self.denied(&reason),
            )));
        }
        let params = &v["params"];
        let Some(tool) = params.get("name").and_then(Value::as_str) else {
            let text = "tools/call needs params.name, the tool's name as a string";
            return out.push(Action::ToClient(message::error_response(
                id,
                code::INVALID_PARAMS,
                text,
            )));
        };
        let arguments = match params.get("arguments") {
            None | Some(Value::Null) => json!({}),
            Some(a @ Value::Object(_)) => a.clone(),
            Some(_) => {
                let text = "tools/call's params.arguments must be a JSON object";
                return out.push(Action::ToClient(message::error_response(
                    id,
                    code::INVALID_PARAMS,
                    text,
                )));
            }
        };
        let call = Call {
            id: id.clone(),
            request: line.to_vec(),
            tool: tool.to_string(),
            arguments,
            asked: None,
        };
        self.calls.insert(key.clone(), call);
        if self.tools.needs_listing() {
            self.parked.push_back(key);
            if !self.listing {
                self.listing = true;
                out.push(self.own_listing(None, 0));
            }
            return;
        }
        self.ask(key, out);
    }

    /// The gateway's own `tools/list` request (page `page`, after `cursor`).
    fn own_listing(&mut self, cursor: Option<&str>, page: usize) -> Action {
        self.own_seq += 1;
        let id = Value::String(format!("{}{}", self.own_prefix, self.own_seq));
        let params = match cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let first = cursor.is_none();
        self.in_flight
            .insert(IdKey::of(&id), Pending::OwnListing { first, page });
        Action::ToServer(message::request(&id, "tools/list", params))
    }

    /// Asks about held call `key` with what is known of its tool now.
    fn ask(&mut self, key: IdKey, out: &mut Vec<Action>) {
        let Some(call) = self.calls.get_mut(&key) else {
            return;
        };
        let (listing, def) = self.tools.listing(&call.tool);
        let mut params = json!({
            "arguments": call.arguments,
            "cwd": self.server.cwd,
            "server": self.server.name,
            "command": self.server.command,
            "tool": call.tool,
            "listing": listing.as_str(),
        });
        if let Some(def) = def {
            params["definition"] = Value::from(def.definition.clone());
            if let Some(a) = &def.annotations {
                params["annotations"] = a.clone();
            }
        }
        call.asked = Some(def.map(|d| d.definition.clone()));
        if let Err(e) = crate::intent::check_params(&params) {
            let id = call.id.clone();
            self.calls.remove(&key);
            let reason = format!("the call cannot be put before you: {e}");
            return out.push(Action::ToClient(message::tool_error(
                &id,
                &self.denied(&reason),
            )));
        }
        let capability = pcp_gate::mcp::capability(&self.server.name, &call.tool);
        out.push(Action::Ask(Ask {
            call: key,
            capability,
            params,
        }));
    }

    fn denied(&self, reason: &str) -> String {
        self.denial.replace("{reason}", reason)
    }

    /// The desktop decided about call `key`: an allowed call goes to the server as the client
    /// sent it; a denied one is answered with a tool error. A call no longer held (cancelled)
    /// is forgotten.
    pub fn decided(&mut self, key: &IdKey, verdict: Verdict) -> Vec<Action> {
        let Some(call) = self.calls.remove(key) else {
            return Vec::new();
        };
        match verdict {
            Verdict::Allow => {
                if let Some(Some(definition)) = &call.asked {
                    self.tools.allowed(&call.tool, definition);
                }
                self.in_flight.insert(key.clone(), Pending::Client);
                vec![Action::ToServer(call.request)]
            }
            Verdict::Deny(reason) => {
                let text = self.denied(&reason);
                vec![Action::ToClient(message::tool_error(&call.id, &text))]
            }
        }
    }

    /// A client line longer than the gateway reads: refused (its id cannot be read).
    pub fn client_too_large(&self, limit: usize) -> Vec<Action> {
        let text = format!("the message is over the gateway's limit of {limit} bytes");
        vec![Action::ToClient(message::error_response(
            &Value::Null,
            code::INVALID_REQUEST,
            &text,
        ))]
    }
}

/// The answer to a client line that is not acceptable JSON: with its id when a lenient reading
/// finds one (a key twice), else as a parse error.
fn unreadable(line: &[u8], e: &serde_json::Error) -> Vec<u8> {
    let lenient: Option<Value> = serde_json::from_slice(line).ok();
    let id = lenient
        .as_ref()
        .and_then(|v| v.get("id"))
        .filter(|id| id.is_string() || id.is_number());
    match id {
        Some(id) => message::error_response(
            id,
            code::INVALID_REQUEST,
            &format!("the message is refused: {e}; nothing was forwarded"),
        ),
        None => message::error_response(
            &Value::Null,
            code::PARSE_ERROR,
            &format!("the message is not JSON: {e}"),
        ),
    }
}
