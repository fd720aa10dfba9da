//! Proposing a changed config as the new policy, at a start or on a reload. A policy that lowers
//! protection anywhere — the gate's sections, the plugin's or the host's, each compared through
//! its sections' protection orders (`pcp_config::Section`) — is asked about (voice + visual, on
//! the dialog like any prompt) and applies only when the user approves it; until then the policy
//! in force stays, every section included. When a policy takes effect the plugin applies its own
//! sections (`[overlay]`, `[speech]`, `[haptics]`) and hands the host its own. See
//! `docs/embedding.md`.

use pcp_config::Proposed;
use pcp_gate::IntentId;

use crate::PcpHandler;
use crate::effects::Command;

/// What became of a proposed policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Proposal {
    /// Nothing in it lowers protection: it is in force now ([`Effect::PolicySettled`](crate::Effect::PolicySettled) says
    /// `applied`).
    Applied,
    /// It lowers protection: the policy-change prompt `IntentId` waits for the user; the policy
    /// in force stays until then.
    Asking(IntentId),
    /// Nobody can answer the prompt now (no output or input device); the policy in force stays,
    /// and the proposal is made again when what can answer changes.
    Deferred(String),
}

/// Proposes the policy in the files at a start ([`pcp_config::Started::proposal`]): call it
/// once the host's outputs and input devices are known (after the first [`crate::refresh`]).
/// `None` when the files are the policy in force.
pub fn start<D: PcpHandler>(state: &mut D, found: Option<Proposed>) -> Option<Proposal> {
    propose(state, found?)
}

/// Proposes a changed config ([`pcp_config::Config::into_proposal`]) in place of the policy in
/// force: see [`Proposal`]. A proposal replaces any that waits. When it takes effect the plugin
/// applies its own sections and keeps the host's for [`crate::Pcp::take_applied_sections`].
/// `None` when called while the plugin drains effects: the proposal then runs once the drain is
/// done.
pub fn propose<D: PcpHandler>(state: &mut D, proposed: Proposed) -> Option<Proposal> {
    let nested = state.pcp().draining;
    let proposed = Box::new(proposed);
    crate::run_command(state, Command::ProposePolicy { proposed });
    if nested {
        return None;
    }
    state.pcp().engine.take_proposal()
}
