//! The decision engine. `Engine` is the only code that holds the gate mutably. `Engine::run`
//! takes one command and returns what it caused: it hands submissions to the gate
//! (`Gate::submit`), modality events to `Gate::respond` and the passing of time to `Gate::tick`,
//! brings the [`ConfirmUi`] in line with the gate (`ConfirmUi::sync`) and applies what that sync
//! returns, until nothing is left. The engine calls no host code and no front end: it has no
//! access to either, so nothing can re-enter it while it runs. The loop that drives it is the
//! crate's ([`crate::run`]): it hands each command to the engine and, once the engine has
//! returned, drains the effects to the host and the front ends.

use std::any::Any;
use std::collections::HashMap;
use std::time::Duration;

use pcp_config::{PluginSections, Proposed};
use pcp_gate::{Decision, FailedExecution, Gate, GateConfig, IntentId, Outcome, ProtectionFact};

use crate::effects::{self, Command, Decided, Delivery, Effect, Out, Refusal, Request, Ticket};
use crate::policy::Proposal;
use crate::ui::GateView;
use crate::{ConfirmUi, PcpHandler, PromptEvent};

/// A backstop: each round applies what the last sync returned, and a sync returns events only
/// for a step that cannot run or a prompt that cannot be shown — each ends a modality or a
/// prompt, so rounds are bounded by the prompts and their modalities. More rounds than this is
/// a bug, logged as one.
const MAX_ROUNDS: usize = 256;

/// The capabilities a host performs itself unless it says otherwise
/// ([`Pcp::performs`](crate::Pcp::performs)), only after approval.
pub const BUILTIN_CAPABILITIES: [&str; 4] = [
    "window.close",
    "window.move",
    "output.configure",
    "session.logout",
];

/// The capability whose performing ends the session ([`Effect::EndSession`]).
const LOGOUT: &str = "session.logout";

/// What the engine reads of the world for one run: the host's clock, where the dialog may go,
/// and what can answer.
pub(crate) struct World {
    pub now_ms: i64,
    pub outputs: Vec<pcp_overlay::Output>,
    /// The host's focal point, else where the seat's input last was, else the first output's
    /// centre.
    pub focus: pcp_overlay::Point,
    pub input_devices: Option<usize>,
}

impl World {
    /// The world as the host reports it now, the focal point filled in from the seat's input.
    pub(crate) fn now<D: PcpHandler>(state: &mut D) -> World {
        let now_ms = state.now_ms();
        let around = state.surroundings();
        let pcp = state.pcp();
        let focus = around.focus.or(pcp.seat_focus).unwrap_or_else(|| {
            around
                .outputs
                .first()
                .map_or(pcp_overlay::Point { x: 0.0, y: 0.0 }, |o| {
                    pcp_overlay::Point {
                        x: f64::from(o.rect.x) + f64::from(o.rect.w) / 2.0,
                        y: f64::from(o.rect.y) + f64::from(o.rect.h) / 2.0,
                    }
                })
        });
        let world = World {
            now_ms,
            outputs: around.outputs.clone(),
            focus,
            input_devices: around.input_devices,
        };
        pcp.last_seen = Some(around);
        world
    }
}

/// An intent of a front end waiting for the user.
struct Ask {
    ticket: Ticket,
}

/// The engine; see the [module documentation](self).
pub(crate) struct Engine {
    gate: Gate,
    ui: ConfirmUi,
    /// The capabilities the host performs after approval (`Out::Execute`).
    performs: Vec<String>,
    /// Open prompts by gate id, and the other way round.
    asks: HashMap<IntentId, Ask>,
    tickets: HashMap<Ticket, IntentId>,
    /// The policy-change prompt waiting for the user.
    policy_prompt: Option<IntentId>,
    /// A proposal nobody could answer yet, offered again when that may have changed.
    deferred: Option<(GateConfig, Vec<ProtectionFact>)>,
    /// The sections of the proposal that waits (asked about, or deferred): the plugin's, and
    /// the host's, which the engine only carries.
    proposed: Option<(PluginSections, Box<dyn Any + Send>)>,
    /// The host's sections of the policy that last took effect, until the host takes them.
    applied_host: Option<Box<dyn Any + Send>>,
    /// What became of the last proposal.
    last_proposal: Option<Proposal>,
    /// The plugin's own sections as last applied to the UI.
    sections: PluginSections,
}

impl Engine {
    /// The engine of `gate` and `ui`, the UI made from `sections`, the plugin's sections of the
    /// policy the gate has in force.
    pub(crate) fn new(gate: Gate, ui: ConfirmUi, sections: PluginSections) -> Engine {
        Engine {
            gate,
            ui,
            performs: BUILTIN_CAPABILITIES.iter().map(|c| c.to_string()).collect(),
            asks: HashMap::new(),
            tickets: HashMap::new(),
            policy_prompt: None,
            deferred: None,
            proposed: None,
            applied_host: None,
            last_proposal: None,
            sections,
        }
    }

    /// The gate, to read.
    pub fn gate(&self) -> &Gate {
        &self.gate
    }

    /// The confirmation UI, to read.
    pub fn ui(&self) -> &ConfirmUi {
        &self.ui
    }

    /// The confirmation UI, to change its devices or settings (then run `Command::Refresh`).
    pub(crate) fn ui_mut(&mut self) -> &mut ConfirmUi {
        &mut self.ui
    }

    pub(crate) fn set_performs(&mut self, capabilities: Vec<String>) {
        self.performs = capabilities;
    }

    pub(crate) fn take_proposal(&mut self) -> Option<Proposal> {
        self.last_proposal.take()
    }

    pub(crate) fn take_applied_host(&mut self) -> Option<Box<dyn Any + Send>> {
        self.applied_host.take()
    }

    /// Commits buffered audit records.
    pub(crate) fn flush(&mut self) -> Result<(), pcp_gate::StoreError> {
        self.gate.flush()
    }

    /// Verifies a token for an executor (`Gate::verify_token`: it spends the token's nonce).
    pub(crate) fn gate_for_tokens(&mut self) -> &mut Gate {
        &mut self.gate
    }

    /// Runs `command` and settles: see the [module documentation](self).
    pub fn run(&mut self, command: Command, world: &World) -> Vec<Out> {
        let now = world.now_ms;
        let mut out = Vec::new();
        if let Some(n) = world.input_devices {
            self.ui.set_input_devices(n);
        }
        let events = match command {
            Command::Request(request) => {
                self.request(*request, now, &mut out);
                Vec::new()
            }
            Command::Events(events) => events,
            Command::Wakeup => {
                let mut events = self.ui.timers(now);
                events.extend(self.ui.device_events());
                events
            }
            Command::Refresh => Vec::new(),
            Command::ProposePolicy { proposed } => {
                let Proposed {
                    gate,
                    plugin,
                    host,
                    facts,
                } = *proposed;
                self.proposed = Some((plugin, host));
                let proposal = self.offer(gate, facts, now, &mut out);
                self.last_proposal = Some(proposal);
                Vec::new()
            }
            Command::Executed { decided, result } => {
                match result {
                    Ok(()) => {
                        if decided.outcome.capability == LOGOUT {
                            self.end_session(&mut out);
                        }
                        out.push(Out::Front(Delivery::Decided(decided)));
                    }
                    Err(e) => {
                        let reason =
                            format!("approved, but the compositor could not perform it: {e}");
                        out.push(self.not_carried_out(*decided, reason, now));
                    }
                }
                Vec::new()
            }
        };
        self.settle(events, world, &mut out);
        self.entry_news(&mut out);
        out
    }

    /// A front end's request: none of them answers a prompt.
    fn request(&mut self, request: Request, now: i64, out: &mut Vec<Out>) {
        match request {
            Request::Submit { ticket, intent } => {
                self.submit(ticket, intent, now, out);
            }
            Request::Refuse {
                ticket,
                intent,
                why,
            } => {
                let outcome = match &why {
                    Refusal::Unreadable(r) => self.gate.refuse_unreadable(intent, r, now),
                    Refusal::IdentityChanged(c) => {
                        self.gate.refuse_changed_identity(intent, c, now)
                    }
                };
                out.push(decided(ticket, outcome));
            }
            Request::Cancel(ticket) => {
                if let Some(id) = self.tickets.get(&ticket).copied()
                    && let Some(outcome) = self.gate.cancel(id, now)
                {
                    self.finish(outcome, out);
                }
            }
            Request::AuthenticationFailed { ticket, reason } => {
                if let Some(id) = self.tickets.get(&ticket).copied()
                    && let Some(outcome) = self.gate.authentication_failed(id, reason, now)
                {
                    self.finish(outcome, out);
                }
            }
            Request::Undeliverable { decided, reason } => {
                out.push(self.not_carried_out(*decided, reason, now));
            }
            Request::Entry { ticket, update } => {
                // News for a prompt that has ended meanwhile is dropped.
                if let Some(id) = self.tickets.get(&ticket).copied() {
                    self.ui.update_entry(id, update);
                }
            }
        }
    }

    /// What the user did in a front end's entry: the lines typed and the accounts asked for go
    /// to the front end whose prompt it is, and only there.
    fn entry_news(&mut self, out: &mut Vec<Out>) {
        for (id, text) in self.ui.take_submitted() {
            if let Some(ask) = self.asks.get(&id) {
                out.push(Out::Front(Delivery::EntrySubmitted {
                    ticket: ask.ticket,
                    text,
                }));
            }
        }
        for id in self.ui.take_account_switches() {
            if let Some(ask) = self.asks.get(&id) {
                out.push(Out::Front(Delivery::EntryNextAccount {
                    ticket: ask.ticket,
                }));
            }
        }
    }

    fn submit(&mut self, ticket: Ticket, intent: pcp_gate::Intent, now: i64, out: &mut Vec<Out>) {
        if self.tickets.contains_key(&ticket) {
            // A front end's bug: two open intents under one number could be answered crosswise.
            tracing::error!("a front end reused the open ticket {ticket:?}: refused");
            let outcome = self
                .gate
                .refuse_unreadable(intent, "its ticket is already open", now);
            out.push(decided(ticket, outcome));
            return;
        }
        // The availability the UI last learned (probes and hotplug): no device is touched here.
        self.gate.set_available(self.ui.availability());
        match self.gate.submit(intent, now) {
            Decision::Execute(outcome) | Decision::Deny(outcome) => {
                out.push(self.answer(ticket, outcome));
            }
            Decision::Confirm {
                id,
                threshold,
                plan,
            } => {
                self.asks.insert(id, Ask { ticket });
                self.tickets.insert(ticket, id);
                out.push(Out::Front(Delivery::Pending {
                    ticket,
                    id,
                    threshold,
                    modalities: plan.modalities,
                }));
            }
        }
    }

    /// A decided outcome for a front end: performed by the host first when it is an approval
    /// of a capability the host performs.
    fn answer(&self, ticket: Ticket, outcome: Outcome) -> Out {
        // By the capability the gate decided on: an approval the host performs goes to the host
        // even if it carried nothing to run, which then fails closed (`execution_failed`).
        let execute = outcome.approved && self.performs.contains(&outcome.capability);
        let d = Box::new(Decided { ticket, outcome });
        if execute {
            Out::Execute(d)
        } else {
            Out::Front(Delivery::Decided(d))
        }
    }

    /// A decided prompt: the policy prompt's outcome settles the policy, a front end's goes to
    /// its ticket.
    fn finish(&mut self, outcome: Outcome, out: &mut Vec<Out>) {
        self.ui.decided(&outcome);
        self.ui.entry_ended(outcome.id);
        if self.policy_prompt == Some(outcome.id) {
            self.policy_prompt = None;
            self.policy_settled(outcome.approved, outcome.reason, out);
            return;
        }
        let Some(ask) = self.asks.remove(&outcome.id) else {
            return;
        };
        self.tickets.remove(&ask.ticket);
        out.push(self.answer(ask.ticket, outcome));
    }

    /// An approval that could not be carried out: audited as `execution_failed` (linked to
    /// the approval's record) before the front end hears it, so the log says what it was told.
    fn not_carried_out(&mut self, decided: Decided, reason: String, now: i64) -> Out {
        // An approval that carried nothing to run (a gate bug) is still audited: the record
        // links to the approval's own, which names the params and who asked.
        let nothing;
        let (params, client) = match &decided.outcome.run {
            Some(run) => (&run.params, &run.client),
            None => {
                nothing = (serde_json::Value::Null, pcp_gate::ClientIdentity::default());
                (&nothing.0, &nothing.1)
            }
        };
        let failed = FailedExecution {
            capability: &decided.outcome.capability,
            params,
            client,
            approval_seq: decided.outcome.audit_seq,
            reason: &reason,
        };
        // An audit failure is logged by the gate; the front end is told the same either way.
        let seq = self.gate.record_execution_failed(failed, now).ok();
        let outcome = effects::failed(&decided.outcome, reason, seq);
        Out::Front(Delivery::Decided(Box::new(Decided { outcome, ..decided })))
    }

    fn end_session(&mut self, out: &mut Vec<Out>) {
        // The session ends here: its "Allow until logout" choices end with it.
        if let Err(e) = self.gate.end_session() {
            tracing::error!("the session's audit records could not be committed: {e}");
        }
        out.push(Out::Host(Effect::EndSession));
    }

    /// Applies `events` to the gate, lets its deadlines pass, and brings the UI in line, until
    /// nothing is left.
    fn settle(&mut self, mut events: Vec<PromptEvent>, world: &World, out: &mut Vec<Out>) {
        let now = world.now_ms;
        for _ in 0..MAX_ROUNDS {
            let mut outcomes = Vec::new();
            for e in events.drain(..) {
                match self.gate.respond(e.prompt, e.event, now) {
                    Ok(Some(outcome)) => outcomes.push(outcome),
                    Ok(None) => {}
                    // The prompt ended (or moved back in the queue) before its event arrived.
                    Err(err) => {
                        tracing::debug!(
                            "{:?} for prompt {} not applied: {err}",
                            e.event,
                            e.prompt.0
                        )
                    }
                }
            }
            outcomes.extend(self.gate.tick(now));
            for outcome in outcomes {
                self.finish(outcome, out);
            }
            events = self
                .ui
                .sync(GateView::of(&self.gate), &world.outputs, world.focus, now);
            let available = self.ui.availability();
            let before = self.gate.available();
            self.gate.set_available(available);
            // A policy nobody could answer is proposed again when that may have changed.
            let mut again = false;
            if before != available
                && let Some((config, facts)) = self.deferred.take()
            {
                let proposal = self.offer(config, facts, now, out);
                again = matches!(proposal, Proposal::Asking(_) | Proposal::Applied);
            }
            let changes = self.ui.take_changes();
            if let Some(shown) = changes.shown {
                out.push(Out::Host(Effect::DialogShown(shown)));
            }
            if changes.keyboard.is_some() {
                out.push(Out::Host(Effect::KeyboardFocus));
            }
            if changes.damaged {
                out.push(Out::Host(Effect::Damage));
            }
            self.ui.publish_accessibility();
            if events.is_empty() && !again {
                return;
            }
        }
        tracing::error!("the prompt loop did not settle after {MAX_ROUNDS} rounds: {events:?}");
    }

    /// Hands a proposed policy to the gate: see [`Proposal`].
    fn offer(
        &mut self,
        config: GateConfig,
        facts: Vec<ProtectionFact>,
        now: i64,
        out: &mut Vec<Out>,
    ) -> Proposal {
        self.deferred = None;
        // A proposal that waits is cancelled by a newer one, whatever becomes of it.
        self.policy_prompt = None;
        let kept = (config.clone(), facts.clone());
        match self.gate.propose_policy(config, facts, now) {
            Decision::Execute(outcome) => {
                tracing::info!("policy applied: {}", outcome.reason);
                self.policy_settled(true, outcome.reason, out);
                Proposal::Applied
            }
            Decision::Confirm { id, .. } => {
                tracing::info!(
                    "the changed policy lowers protection: asking the user (prompt {})",
                    id.0
                );
                self.policy_prompt = Some(id);
                Proposal::Asking(id)
            }
            Decision::Deny(outcome) => {
                // The gate refuses a proposal only when nothing can show and answer its prompt.
                tracing::warn!(
                    "policy change not asked ({:?}): {}",
                    outcome.resolution,
                    outcome.reason
                );
                self.deferred = Some(kept);
                self.policy_settled(false, outcome.reason.clone(), out);
                Proposal::Deferred(outcome.reason)
            }
        }
    }

    fn policy_settled(&mut self, applied: bool, reason: String, out: &mut Vec<Out>) {
        if applied {
            if let Some((plugin, host)) = self.proposed.take() {
                self.apply_sections(plugin);
                self.applied_host = Some(host);
            }
        } else if self.deferred.is_none() {
            // Refused (not deferred): its sections will never apply.
            self.proposed = None;
        }
        out.push(Out::Host(Effect::PolicySettled { applied, reason }));
    }

    /// A new policy is in force: each of the plugin's own sections that changed applies (as
    /// proposed and approved, not as the file may be now). The dialog's settings wait for the
    /// dialog to go; voice and haptics restart now.
    fn apply_sections(&mut self, new: PluginSections) {
        let old = &self.sections;
        if old.overlay != new.overlay {
            self.ui.set_overlay_config(new.overlay.clone());
        }
        if old.speech != new.speech {
            let engine = crate::start_voice(new.speech.clone());
            tracing::info!(
                "[speech] changed: voice is {}",
                if engine.is_some() { "on" } else { "off" }
            );
            self.ui.set_speech_engine(engine);
        }
        if old.haptics != new.haptics {
            let backend = Box::new(pcp_haptics::EvdevHaptics::discover(&new.haptics));
            self.ui.set_haptics_config(backend, new.haptics.clone());
        }
        self.sections = new;
    }

    /// When the engine next has work, from `now` on the host's clock (`None`: nothing until
    /// something happens).
    pub fn next_wakeup(&self, now: i64) -> Option<Duration> {
        let gate = [self.gate.next_deadline(), self.gate.store().flush_due_at()]
            .into_iter()
            .flatten()
            .min()
            .map(|at| Duration::from_millis((at - now).max(0) as u64));
        let ui = self.ui.next_wakeup(GateView::of(&self.gate), now);
        gate.into_iter().chain(ui).min()
    }
}

fn decided(ticket: Ticket, outcome: Outcome) -> Out {
    Out::Front(Delivery::Decided(Box::new(Decided { ticket, outcome })))
}
