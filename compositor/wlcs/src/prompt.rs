//! A prompt waiting in the non-blocking dialog throughout a test (`PCP_WLCS_PROMPT=1`): a real
//! intent, submitted over pcp-intent-v1 by a client of the test's compositor (on a thread of
//! its own, which blocks on its answer until the compositor goes), so the gate asks and the
//! dialog is up, drawn and taking input on its own area while WLCS runs the test.
//!
//! Where it waits: the output is [`OUTPUT`](crate::server::OUTPUT) wide, as wide as
//! `[overlay] large_output_width`, so the dialog appears near the focal point of the moment and
//! stays there while the pointer works elsewhere on that output. The focal point is moved to the
//! output's bottom-right corner first: WLCS puts its windows and its pointer and touch points
//! within about 1000 logical pixels of the top-left corner, so the dialog never covers one,
//! and any test whose outcome changes with it up is a regression of "the dialog does not block
//! the desktop". It is the real dialog, not hidden or moved off the output.

use std::os::unix::net::UnixStream;
use std::thread::JoinHandle;

use pcp_compositor::state::State;
use pcp_protocol::{IntentClient, IntentEvent, Submission};

use crate::server::ServerError;

/// The capability asked for: a privileged write, which the default policy shows in the
/// non-blocking dialog (visual, no voice), answered within `[timeouts] visual_seconds`.
pub const CAPABILITY: &str = "settings.change";

/// The intent's client, waiting on its own thread.
pub struct Prompt {
    thread: JoinHandle<()>,
}

impl Prompt {
    /// Moves the focal point to the output's bottom-right corner and submits the intent from a
    /// new client of `state`'s compositor. The dialog is up once the compositor has served the
    /// client's requests (its loop must run for that).
    pub fn submit(state: &mut State) -> Result<Prompt, ServerError> {
        let corner = state.backend().outputs.first().map(|o| {
            let (w, h) = o.spec.logical_size();
            (f64::from(o.spec.x + w - 1), f64::from(o.spec.y + h - 1))
        });
        let (x, y) = corner.ok_or(ServerError::Compositor("no output".into()))?;
        state.set_focus_hint(x, y);
        let (ours, theirs) = UnixStream::pair().map_err(ServerError::Folder)?;
        state
            .insert_client(theirs)
            .map_err(|e| ServerError::Compositor(e.to_string()))?;
        let thread = std::thread::Builder::new()
            .name("pcp-wlcs-prompt".into())
            .spawn(move || ask(ours))
            .map_err(ServerError::Thread)?;
        Ok(Prompt { thread })
    }

    /// Waits for the client's thread, which ends when its connection does.
    pub fn join(self) {
        if self.thread.join().is_err() {
            tracing::error!("the prompt's client thread panicked");
        }
    }
}

/// The client: submits, then reads events until the answer (a timeout in a long test) or the
/// end of the connection.
fn ask(stream: UnixStream) {
    let connection = match wayland_client::Connection::from_socket(stream) {
        Ok(c) => c,
        Err(e) => {
            tracing::error!("the prompt's client cannot connect: {e}");
            return;
        }
    };
    let mut client = match IntentClient::from_connection(connection) {
        Ok(c) => c,
        Err(e) => {
            tracing::error!("the prompt's client has no pcp-intent-v1: {e}");
            return;
        }
    };
    let submission = Submission {
        capability: CAPABILITY.into(),
        params: serde_json::json!({"key": "wlcs.conformance", "value": "a prompt waits"}),
        target: None,
        steps: Vec::new(),
    };
    if let Err(e) = client.submit(&submission) {
        tracing::error!("the prompt's intent was not submitted: {e}");
        return;
    }
    loop {
        match client.next_event() {
            Ok(IntentEvent::Final { decision, .. }) => {
                tracing::warn!("the waiting prompt was decided during the test: {decision:?}");
                return;
            }
            Ok(IntentEvent::Pending { .. }) => {}
            // The compositor went at the end of the test.
            Err(_) => return,
        }
    }
}
