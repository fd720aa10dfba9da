//! The server's side of the [`Proxy`]: its answers (a listing read into the tool table, the
//! gateway's own listing kept, an answer to a request nobody sent dropped), its requests and
//! notifications passed on, and what happens when it sends what cannot be read or goes away.

use serde_json::Value;

use super::{Call, Pending, Proxy};
use crate::json::parse_unique;
use crate::message::{self, IdKey, Kind, code};
use crate::proxy::Action;
use crate::tools::ToolDef;

impl Proxy {
    /// One line from the server.
    pub fn from_server(&mut self, line: &[u8]) -> Vec<Action> {
        let v = match parse_unique(line) {
            Ok(v) => v,
            Err(e) => {
                let why = format!("the server sent a message that is not acceptable JSON ({e})");
                return self.fail_all(&why);
            }
        };
        let mut out = Vec::new();
        match &v {
            Value::Array(items) => {
                let mut keep = Vec::new();
                for item in items {
                    if self.server_message(item, &mut out) {
                        keep.push(item.clone());
                    }
                }
                if keep.len() == items.len() {
                    out.push(Action::ToClient(line.to_vec()));
                } else if !keep.is_empty() {
                    out.push(Action::ToClient(
                        Value::Array(keep).to_string().into_bytes(),
                    ));
                }
            }
            single => {
                if self.server_message(single, &mut out) {
                    out.push(Action::ToClient(line.to_vec()));
                }
            }
        }
        out
    }

    /// Handles one message from the server; true when it goes on to the client.
    fn server_message(&mut self, v: &Value, out: &mut Vec<Action>) -> bool {
        match message::kind(v) {
            Kind::Response { id } => {
                let key = IdKey::of(id);
                match self.in_flight.remove(&key) {
                    None => {
                        out.push(Action::Warn(format!(
                            "the server answered a request nobody sent (id {}): dropped",
                            key.0
                        )));
                        false
                    }
                    Some(Pending::Client) => true,
                    Some(Pending::ClientListing { first }) => {
                        self.take_listing(v, first, out);
                        true
                    }
                    Some(Pending::OwnListing { first, page }) => {
                        self.own_listing_answered(v, first, page, out);
                        false
                    }
                }
            }
            Kind::Notification {
                method: "notifications/tools/list_changed",
            } => {
                self.tools.mark_stale();
                true
            }
            Kind::Request { .. } | Kind::Notification { .. } => true,
            Kind::Invalid(why) => {
                out.push(Action::Warn(format!(
                    "the server sent something that is not JSON-RPC 2.0 ({why}): dropped"
                )));
                false
            }
        }
    }

    /// Reads a `tools/list` answer into the tool table; returns its `nextCursor`.
    fn take_listing(&mut self, v: &Value, first: bool, out: &mut Vec<Action>) -> Option<String> {
        let Some(tools) = v["result"].get("tools").and_then(Value::as_array) else {
            if v.get("result").is_some() {
                out.push(Action::Warn(
                    "the server's tools/list result has no tools list".into(),
                ));
            }
            return None;
        };
        let mut defs = Vec::with_capacity(tools.len().min(self.limits.max_tools));
        for t in tools.iter().take(self.limits.max_tools) {
            match ToolDef::from_listed(t) {
                Ok(d) => defs.push(d),
                Err(e) => out.push(Action::Warn(format!("the server listed a bad tool: {e}"))),
            }
        }
        let next = v["result"]
            .get("nextCursor")
            .and_then(Value::as_str)
            .map(str::to_string);
        self.tools.page(defs, first, next.is_none());
        next
    }

    fn own_listing_answered(&mut self, v: &Value, first: bool, page: usize, out: &mut Vec<Action>) {
        let next = self.take_listing(v, first, out);
        match next {
            Some(cursor) if page + 1 < self.limits.max_pages => {
                let request = self.own_listing(Some(&cursor), page + 1);
                out.push(request);
            }
            _ => self.release_parked(out),
        }
    }

    /// The gateway's own listing ended (or failed): every parked call is asked about now.
    fn release_parked(&mut self, out: &mut Vec<Action>) {
        self.listing = false;
        while let Some(key) = self.parked.pop_front() {
            self.ask(key, out);
        }
    }

    /// The server's message could not be read, or it sent more than a line may hold, or it
    /// went away: every request it was to answer gets an error now (a late answer is dropped
    /// as unasked), and calls held for a listing are asked about without it.
    pub fn fail_all(&mut self, why: &str) -> Vec<Action> {
        let mut out = vec![Action::Warn(why.to_string())];
        self.answer_all(why, &mut out);
        out
    }

    /// Answers every request the server was to answer with an error, and asks about the calls
    /// held for a listing.
    fn answer_all(&mut self, why: &str, out: &mut Vec<Action>) {
        let mut keys: Vec<(IdKey, Pending)> = self.in_flight.drain().collect();
        keys.sort_by(|a, b| a.0.cmp(&b.0));
        for (key, pending) in keys {
            if let Pending::OwnListing { .. } = pending {
                continue;
            }
            if let Ok(id) = serde_json::from_str::<Value>(&key.0) {
                out.push(Action::ToClient(message::error_response(
                    &id,
                    code::GATEWAY,
                    why,
                )));
            }
        }
        if self.listing {
            self.release_parked(out);
        }
    }

    /// The server is gone: everything held is answered with an error.
    pub fn server_closed(&mut self, why: &str) -> Vec<Action> {
        let mut out = Vec::new();
        self.answer_all(why, &mut out);
        let calls: Vec<(IdKey, Call)> = self.calls.drain().collect();
        for (key, call) in calls {
            if call.asked.is_some() {
                out.push(Action::Cancel(key));
            }
            out.push(Action::ToClient(message::error_response(
                &call.id,
                code::GATEWAY,
                why,
            )));
        }
        self.parked.clear();
        out
    }
}
