//! The MCP gateway's message handling, with no I/O, so that it can be tested, fuzzed and
//! benchmarked alone (`pcpctl mcp` does the I/O): stdio framing with a size limit
//! ([`framing`]), JSON-RPC messages read with no key twice ([`json`], [`message`]), the
//! session's tool definitions and their hashes ([`tools`]), and the [`proxy::Proxy`] that holds
//! every `tools/call` until the desktop decides and passes everything else through unchanged.
//! A call becomes the intent `mcp.SERVER.TOOL` (named by `pcp_gate::mcp::capability`) whose
//! parameters are checked as the compositor will read them ([`intent`]).

pub mod framing;
pub mod intent;
pub mod json;
pub mod message;
pub mod proxy;
pub mod tools;

pub use message::IdKey;
pub use proxy::{Action, Ask, Limits, Proxy, Server, Verdict};
pub use tools::{Listing, ToolDef, Tools};

/// What a denied call's tool result says by default; `{reason}` is the desktop's reason.
pub const DEFAULT_DENIAL: &str = "pcp-confirm denied this tool call: {reason}";

/// The largest message the gateway reads by default (either side), in bytes.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;
