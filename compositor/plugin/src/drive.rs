//! The one loop that decides prompts. [`apply`] hands modality events to the gate
//! (`Gate::respond`) and lets its deadlines pass (`Gate::tick`), delivers the outcomes, then
//! brings the [`ConfirmUi`](crate::ConfirmUi) in line with the gate (`ConfirmUi::sync`) and
//! applies what that sync returns, until nothing is left; then it sets the plugin's one timer.
//! Nothing else calls the gate's answering methods, and the UI never calls the loop: it is not
//! re-entered, by construction.
//!
//! Event sources call in: client requests ([`crate::intent`]), seat input
//! ([`crate::input`]), the timer and the device probe ([`on_wakeup`]), and the host when the
//! outputs, input devices or focal point change ([`refresh`]).

use std::cell::Cell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use calloop::LoopHandle;
use calloop::timer::{TimeoutAction, Timer};
use pcp_gate::{Answer, IntentId, ModalityEvent};

use crate::intent::{self, Approved};
use crate::ui::GateView;
use crate::{Pcp, PcpHandler, PromptEvent};

/// A backstop: each round applies what the last sync returned, and a sync returns events only
/// for a step that cannot run or a prompt that cannot be shown — each ends a modality or a
/// prompt, so rounds are bounded by the prompts and their modalities. More rounds than this is
/// a bug, logged as one.
const MAX_ROUNDS: usize = 256;

/// Applies `events` (from input or devices) to the gate and settles: see the
/// [module documentation](self).
pub fn apply<D: PcpHandler>(state: &mut D, mut events: Vec<PromptEvent>) {
    for _ in 0..MAX_ROUNDS {
        let now = state.now_ms();
        let mut outcomes = Vec::new();
        let pcp = state.pcp();
        for e in events.drain(..) {
            // The gate keeps no prompt once it is decided: what an approval runs is read first.
            let approved = approves(e.event)
                .then(|| pcp.gate.prompt(e.prompt))
                .flatten()
                .map(|p| Approved {
                    capability: p.intent.capability.clone(),
                    params: p.params.clone(),
                    client: p.intent.client.clone(),
                });
            match pcp.gate.respond(e.prompt, e.event, now) {
                Ok(Some(outcome)) => outcomes.push((outcome, approved)),
                Ok(None) => {}
                // The prompt ended (or moved back in the queue) before its event arrived.
                Err(err) => {
                    tracing::debug!("{:?} for prompt {} not applied: {err}", e.event, e.prompt.0)
                }
            }
        }
        outcomes.extend(pcp.gate.tick(now).into_iter().map(|o| (o, None)));
        for (outcome, approved) in outcomes {
            state.pcp().ui.decided(&outcome);
            intent::deliver(state, outcome, approved);
        }
        let around = state.surroundings();
        let pcp = state.pcp();
        events = pcp.ui.sync(GateView::of(&pcp.gate), &around, now);
        let available = pcp.ui.availability();
        let before = pcp.gate.available();
        pcp.gate.set_available(available);
        // A policy nobody could answer is proposed again when that may have changed.
        let mut again = false;
        if before != available
            && let Some((config, facts)) = pcp.policy.deferred.take()
        {
            again = matches!(
                crate::policy::offer(state, config, facts),
                crate::policy::Proposal::Asking(_) | crate::policy::Proposal::Applied
            );
        }
        let pcp = state.pcp();
        let changes = pcp.ui.take_changes();
        if let Some(shown) = changes.shown {
            state.dialog_shown(shown);
        }
        if let Some(focused) = changes.keyboard {
            state.dialog_keyboard_focus(focused);
        }
        if changes.damaged {
            state.dialog_damaged();
        }
        state.pcp().ui.publish_accessibility();
        if events.is_empty() && !again {
            rearm(state);
            return;
        }
    }
    tracing::error!("the prompt loop did not settle after {MAX_ROUNDS} rounds: {events:?}");
    rearm(state);
}

/// Settles with no new event: call it when the outputs, the seat's input devices or the focal
/// point changed, or a config was reloaded.
pub fn refresh<D: PcpHandler>(state: &mut D) {
    apply(state, Vec::new());
}

/// The plugin's timer fired or a device has news (the test harness calls it after moving its
/// clock): time-driven and device events go to the loop.
pub fn on_wakeup<D: PcpHandler>(state: &mut D) {
    let now = state.now_ms();
    let ui = &mut state.pcp().ui;
    let mut events = ui.timers(now);
    events.extend(ui.device_events());
    apply(state, events);
}

/// The client withdrew intent `id` (a cancel request, or its object was destroyed).
pub(crate) fn cancel<D: PcpHandler>(state: &mut D, id: IntentId) {
    let now = state.now_ms();
    if let Some(outcome) = state.pcp().gate.cancel(id, now) {
        state.pcp().ui.decided(&outcome);
        intent::deliver(state, outcome, None);
    }
    refresh(state);
}

fn approves(event: ModalityEvent) -> bool {
    matches!(
        event,
        ModalityEvent::Answer(_, Answer::Approve) | ModalityEvent::Parent(Answer::Approve)
    )
}

/// When the plugin next has work, from `now` on the host's clock.
pub(crate) fn next_wakeup(pcp: &Pcp, now: i64) -> Option<Duration> {
    let gate = [pcp.gate.next_deadline(), pcp.gate.store().flush_due_at()]
        .into_iter()
        .flatten()
        .min()
        .map(|at| Duration::from_millis((at - now).max(0) as u64));
    let ui = pcp.ui.next_wakeup(GateView::of(&pcp.gate), now);
    gate.into_iter().chain(ui).min()
}

fn rearm<D: PcpHandler>(state: &mut D) {
    let now = state.now_ms();
    let pcp = state.pcp();
    let wait = next_wakeup(pcp, now);
    pcp.wakeup.set(wait);
}

/// The plugin's one timer on the host's event loop (none before `Pcp::use_event_loop`).
#[derive(Default)]
pub(crate) struct Wakeup {
    arm: Option<Box<dyn FnMut(Option<Duration>)>>,
    /// When the armed timer fires (wall time), to leave it alone when nothing changed.
    armed_for: Option<Instant>,
}

/// A timer armed again this close to where it already is, is left alone.
const REARM_SLACK: Duration = Duration::from_millis(1);

impl Wakeup {
    pub fn on_loop<D: PcpHandler>(handle: LoopHandle<'static, D>) -> Wakeup {
        let token = Rc::new(Cell::new(None));
        let arm = move |wait: Option<Duration>| {
            if let Some(old) = token.take() {
                handle.remove(old);
            }
            let Some(wait) = wait else {
                return;
            };
            let fired = Rc::clone(&token);
            let inserted = handle.insert_source(Timer::from_duration(wait), move |_, _, state| {
                // Dropped after this callback: the loop below arms a new one if needed.
                fired.set(None);
                on_wakeup(state);
                TimeoutAction::Drop
            });
            match inserted {
                Ok(t) => token.set(Some(t)),
                Err(e) => tracing::error!("cannot arm the prompt timer: {e}"),
            }
        };
        Wakeup {
            arm: Some(Box::new(arm)),
            armed_for: None,
        }
    }

    fn set(&mut self, wait: Option<Duration>) {
        let Some(arm) = &mut self.arm else {
            return;
        };
        let wall = Instant::now();
        let target = wait.map(|w| wall + w);
        let unchanged = match (self.armed_for, target) {
            (None, None) => true,
            // A timer already fired is gone even if its time looks the same.
            (Some(a), Some(b)) => a > wall && a.max(b) - a.min(b) <= REARM_SLACK,
            _ => false,
        };
        if unchanged {
            return;
        }
        self.armed_for = target;
        arm(wait);
    }
}
