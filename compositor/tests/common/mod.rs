//! What the tests that run `pcp-compositor` as a process share: submitting an intent as a client
//! would (pcp-protocol's `IntentClient`, the library `pcpctl submit` is built on) and waiting for
//! its decision.

// Each test file uses a different part.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::thread::JoinHandle;

use pcp_protocol::{Decision, IntentClient, Submission};
use serde_json::Value;

/// Submits `capability` with `params` on the socket `runtime/socket` and waits for the decision.
pub fn submit(runtime: &Path, socket: &str, capability: &str, params: Value) -> Decision {
    let path = runtime.join(socket);
    submit_at(&path, capability, params)
}

/// Like [`submit`], on its own thread (for a prompt answered while the test waits).
pub fn submit_in_background(
    runtime: &Path,
    socket: &str,
    capability: &str,
    params: Value,
) -> JoinHandle<Decision> {
    let path: PathBuf = runtime.join(socket);
    let capability = capability.to_string();
    std::thread::spawn(move || submit_at(&path, &capability, params))
}

fn submit_at(path: &Path, capability: &str, params: Value) -> Decision {
    let mut client = IntentClient::connect_to(path)
        .unwrap_or_else(|e| panic!("connecting to {}: {e}", path.display()));
    let submission = Submission {
        capability: capability.to_string(),
        params,
        target: None,
        steps: Vec::new(),
    };
    let handle = client.submit(&submission).expect("submit");
    client.wait(&handle).expect("a decision")
}
