//! What a tool call's intent must satisfy before it is sent: the protocol reads parameters
//! strictly (no key twice, no control character the dialog cannot show) and carries at most
//! 1 MiB. A call that breaks either is refused here, with the reason, rather than sent: the
//! compositor would end the gateway's connection for it.

use pcp_protocol::MAX_FD_BYTES;
use pcp_protocol::wire::parse_strict;
use serde_json::Value;

/// Checks `params` as the compositor will read them.
pub fn check_params(params: &Value) -> Result<(), String> {
    let text = params.to_string();
    // The memfd document wraps params in `{"params": …}`.
    if text.len() + 16 > MAX_FD_BYTES {
        return Err(format!(
            "its arguments are {} bytes, over the {MAX_FD_BYTES} bytes the desktop takes",
            text.len()
        ));
    }
    parse_strict(text.as_bytes(), "params")
        .map(|_| ())
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn oversized_or_unshowable_params_are_named() {
        assert!(check_params(&json!({"arguments": {"a": "b"}})).is_ok());
        let e = check_params(&json!({"arguments": {"a": "\u{7}"}})).unwrap_err();
        assert!(e.contains("control character"), "{e}");
        let big = "x".repeat(MAX_FD_BYTES);
        assert!(
            check_params(&json!({"arguments": {"a": big}}))
                .unwrap_err()
                .contains("bytes")
        );
    }
}
