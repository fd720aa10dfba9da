//! What one JSON-RPC 2.0 message is, read from its parsed value: a request (an id and a
//! method), a notification (a method, no id), a response (an id and a result or an error), or
//! not JSON-RPC at all. Ids are compared as their JSON text (`IdKey`).

use serde_json::Value;

/// A request's id as the gateway keys it: its JSON text (`7`, `"abc"`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct IdKey(pub String);

impl IdKey {
    pub fn of(id: &Value) -> IdKey {
        IdKey(id.to_string())
    }
}

/// What a message is.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind<'a> {
    Request {
        id: &'a Value,
        method: &'a str,
    },
    Notification {
        method: &'a str,
    },
    Response {
        id: &'a Value,
    },
    /// Not a JSON-RPC 2.0 message; says why.
    Invalid(String),
}

/// The kind of the message `v`.
pub fn kind(v: &Value) -> Kind<'_> {
    let Value::Object(map) = v else {
        return Kind::Invalid("a JSON-RPC message is a JSON object".into());
    };
    if map.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Kind::Invalid("the message does not say \"jsonrpc\": \"2.0\"".into());
    }
    let id = map.get("id");
    let answered = map.contains_key("result") || map.contains_key("error");
    if let Some(method) = map.get("method") {
        // One message is a request or a response, never both: a peer that sends both could
        // have the other side read it either way (a "request" carrying a result for an id).
        if answered {
            return Kind::Invalid("a message holds both a method and a result or error".into());
        }
        let Some(method) = method.as_str() else {
            return Kind::Invalid("the method is not a string".into());
        };
        return match id {
            None => Kind::Notification { method },
            Some(id @ (Value::String(_) | Value::Number(_))) => Kind::Request { id, method },
            Some(_) => Kind::Invalid("a request's id must be a string or a number".into()),
        };
    }
    match id {
        Some(id @ (Value::String(_) | Value::Number(_) | Value::Null)) if answered => {
            Kind::Response { id }
        }
        _ => Kind::Invalid("neither a request, a notification nor a response".into()),
    }
}

/// `{"jsonrpc":"2.0","id":ID,"error":{"code":CODE,"message":MESSAGE}}` as one line.
pub fn error_response(id: &Value, code: i64, message: &str) -> Vec<u8> {
    let v = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": code, "message": message},
    });
    v.to_string().into_bytes()
}

/// A tool call's answer that says it failed: `isError: true` with `text` as its content, the
/// way a client shows a tool's own error to the model and the user.
pub fn tool_error(id: &Value, text: &str) -> Vec<u8> {
    let v = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "result": {"content": [{"type": "text", "text": text}], "isError": true},
    });
    v.to_string().into_bytes()
}

/// A request from the gateway itself: `{"jsonrpc":"2.0","id":ID,"method":M,"params":P}`.
pub fn request(id: &Value, method: &str, params: Value) -> Vec<u8> {
    let v = serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    v.to_string().into_bytes()
}

/// JSON-RPC's error codes the gateway answers with.
pub mod code {
    pub const PARSE_ERROR: i64 = -32700;
    pub const INVALID_REQUEST: i64 = -32600;
    pub const INVALID_PARAMS: i64 = -32602;
    /// Implementation-defined server errors: the gateway's own failures.
    pub const GATEWAY: i64 = -32000;
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_request_carrying_a_result_is_neither() {
        for v in [
            json!({"jsonrpc": "2.0", "id": 3, "method": "x", "result": {"content": []}}),
            json!({"jsonrpc": "2.0", "id": 3, "method": "x", "error": {"code": 1}}),
            json!({"jsonrpc": "2.0", "method": "x", "result": {}}),
        ] {
            assert!(matches!(kind(&v), Kind::Invalid(_)), "{v}");
        }
    }

    #[test]
    fn kinds() {
        let r = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call"});
        assert!(matches!(
            kind(&r),
            Kind::Request {
                method: "tools/call",
                ..
            }
        ));
        let n = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        assert!(matches!(kind(&n), Kind::Notification { .. }));
        let s = json!({"jsonrpc": "2.0", "id": "a", "result": {}});
        assert!(matches!(kind(&s), Kind::Response { .. }));
        for bad in [
            json!([]),
            json!({"id": 1, "method": "x"}),
            json!({"jsonrpc": "2.0", "id": {}, "method": "x"}),
            json!({"jsonrpc": "2.0", "id": 1}),
            json!({"jsonrpc": "2.0", "method": 3}),
        ] {
            assert!(matches!(kind(&bad), Kind::Invalid(_)), "{bad}");
        }
        assert_eq!(IdKey::of(&json!(7)), IdKey("7".into()));
        assert_ne!(IdKey::of(&json!("7")), IdKey::of(&json!(7)));
    }
}
