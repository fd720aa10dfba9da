//! The plugin's one timer on the host's event loop: armed for the engine's next deadline after
//! each run, left alone when that did not move, and firing [`crate::on_wakeup`].

use std::cell::Cell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use calloop::LoopHandle;
use calloop::timer::{TimeoutAction, Timer};

use crate::PcpHandler;

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
                crate::on_wakeup(state);
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

    pub(crate) fn set(&mut self, wait: Option<Duration>) {
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
