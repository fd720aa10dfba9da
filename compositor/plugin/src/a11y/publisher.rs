//! The accessibility adapter's side: a thread per adapter, fed readings through a bounded
//! channel the compositor never waits on, and the handlers AccessKit calls there — the first
//! tree when a screen reader turns accessibility on, and the refusal of every action.
//!
//! Until a screen reader turns accessibility on, readings are only kept for the first tree: the
//! adapter's thread is not woken for them. A prompt's countdown changes the reading every
//! second, and each hand-over woke that thread twice — on battery-powered hardware with no
//! screen reader that was power spent on nothing.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex, PoisonError};

use accesskit::{ActionHandler, ActionRequest, ActivationHandler, DeactivationHandler, TreeUpdate};

use super::{Reading, tree_of};

/// Readings waiting for the adapter before it counts as stalled and is replaced.
const CHANNEL_BOUND: usize = 64;

/// Refuses every action assistive software asks for. It runs on the AccessKit adapter's own
/// thread and holds nothing but a count: it cannot answer a prompt or move the focus.
struct Refuse {
    refused: Arc<AtomicU64>,
}

impl ActionHandler for Refuse {
    fn do_action(&mut self, request: ActionRequest) {
        let refused = self.refused.fetch_add(1, Ordering::Relaxed) + 1;
        // Any process on the accessibility bus can send these: the log names the 1st, 2nd,
        // 4th, 8th… so that a flood of them cannot flood the log.
        if refused.is_power_of_two() {
            tracing::info!(
                "refused {:?} on node {} from assistive software ({refused} refused so far): \
                 only the seat, the voice and the haptic double tap answer prompts",
                request.action,
                request.target_node.0
            );
        }
    }
}

/// What the publisher and one adapter share.
pub(crate) struct Shared {
    /// A screen reader has turned accessibility on: readings go to the adapter's thread.
    active: AtomicBool,
    /// The latest reading, for the first tree when a screen reader turns accessibility on.
    latest: Mutex<Reading>,
}

impl Shared {
    fn new() -> Shared {
        Shared {
            active: AtomicBool::new(false),
            latest: Mutex::new(Reading {
                window: String::new(),
                dialog: None,
                announcement: String::new(),
                keyboard: false,
            }),
        }
    }
}

/// Gives the adapter the latest reading when a screen reader turns accessibility on.
struct Activate {
    shared: Arc<Shared>,
}

impl ActivationHandler for Activate {
    fn request_initial_tree(&mut self) -> Option<TreeUpdate> {
        // Active first, then the latest reading: the publisher stores a reading before it looks
        // at `active`, so a reading is either in this tree or sent to the adapter after it.
        self.shared.active.store(true, Ordering::SeqCst);
        let latest = self
            .shared
            .latest
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        Some(tree_of(&latest))
    }
}

struct Deactivate {
    shared: Arc<Shared>,
}

impl DeactivationHandler for Deactivate {
    fn deactivate_accessibility(&mut self) {
        self.shared.active.store(false, Ordering::SeqCst);
    }
}

/// The body of an adapter's thread: applies readings until the channel closes.
type AdapterThread = fn(Receiver<Reading>, Arc<AtomicU64>, Arc<Shared>);

/// Publishes readings to the accessibility bus without ever waiting on it.
pub(crate) struct Publisher {
    sender: Option<SyncSender<Reading>>,
    /// Shared with the current adapter.
    shared: Arc<Shared>,
    /// The last reading went to an active adapter (after accessibility was turned on, the
    /// same reading is sent once more, with the keyboard focus the first tree cannot carry).
    delivered: bool,
    /// What runs on the adapter's thread ([`run_adapter`]; tests put in a stalling one).
    adapter: AdapterThread,
    /// The last reading handed over (an unchanged one is not sent again).
    last: Option<Reading>,
    refused: Arc<AtomicU64>,
    restarts: u64,
}

impl Publisher {
    /// A publisher whose adapter thread starts now.
    pub fn new() -> Publisher {
        Publisher::with_adapter(run_adapter)
    }

    fn with_adapter(adapter: AdapterThread) -> Publisher {
        let mut p = Publisher {
            sender: None,
            shared: Arc::new(Shared::new()),
            delivered: false,
            adapter,
            last: None,
            refused: Arc::new(AtomicU64::new(0)),
            restarts: 0,
        };
        p.sender = p.start();
        p
    }

    /// Whether a screen reader (or other assistive software) has turned accessibility on and
    /// reads the tree now.
    pub fn screen_reader(&self) -> bool {
        self.shared.active.load(Ordering::SeqCst)
    }

    /// How many actions assistive software asked for and was refused.
    pub fn refused(&self) -> u64 {
        self.refused.load(Ordering::Relaxed)
    }

    /// How many times a stalled adapter was dropped and started again.
    pub fn restarts(&self) -> u64 {
        self.restarts
    }

    /// Hands `reading` to the adapter when it differs from the last one; never blocks. A full
    /// channel means the adapter is stuck on D-Bus: it is dropped (its thread ends once it
    /// gets loose) and a new one gets this reading first.
    pub fn publish(&mut self, reading: Reading) {
        let active = self.shared.active.load(Ordering::SeqCst);
        if self.last.as_ref() == Some(&reading) && (self.delivered || !active) {
            return;
        }
        *self
            .shared
            .latest
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = reading.clone();
        // Checked again after storing it: see `Activate`.
        if !self.shared.active.load(Ordering::SeqCst) {
            self.last = Some(reading);
            self.delivered = false;
            return;
        }
        let Some(sender) = &self.sender else {
            self.restart(reading);
            return;
        };
        match sender.try_send(reading.clone()) {
            Ok(()) => {
                self.last = Some(reading);
                self.delivered = true;
            }
            Err(TrySendError::Full(_)) => {
                tracing::warn!(
                    "the accessibility adapter is not keeping up ({CHANNEL_BOUND} updates \
                     waiting): starting a new one"
                );
                self.restart(reading);
            }
            Err(TrySendError::Disconnected(_)) => {
                tracing::warn!("the accessibility adapter stopped: starting a new one");
                self.restart(reading);
            }
        }
    }

    /// A new adapter, which starts from `reading` (its first tree, when a screen reader turns
    /// accessibility on, is made from it).
    fn restart(&mut self, reading: Reading) {
        self.restarts += 1;
        self.shared = Arc::new(Shared::new());
        *self
            .shared
            .latest
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = reading.clone();
        self.sender = self.start();
        self.last = Some(reading);
        self.delivered = false;
    }

    fn start(&self) -> Option<SyncSender<Reading>> {
        let (sender, receiver) = sync_channel(CHANNEL_BOUND);
        let refused = Arc::clone(&self.refused);
        let shared = Arc::clone(&self.shared);
        let adapter = self.adapter;
        let spawned = std::thread::Builder::new()
            .name("pcp-a11y".into())
            .spawn(move || adapter(receiver, refused, shared));
        match spawned {
            Ok(_) => Some(sender),
            Err(e) => {
                tracing::error!("cannot start the accessibility adapter's thread: {e}");
                None
            }
        }
    }
}

/// The adapter's thread: applies each reading until the publisher drops the channel.
fn run_adapter(readings: Receiver<Reading>, refused: Arc<AtomicU64>, shared: Arc<Shared>) {
    let mut adapter = accesskit_unix::Adapter::new(
        Activate {
            shared: Arc::clone(&shared),
        },
        Refuse { refused },
        Deactivate { shared },
    );
    while let Ok(reading) = readings.recv() {
        adapter.update_if_active(|| tree_of(&reading));
        adapter.update_window_focus_state(reading.keyboard);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicBool;
    use std::time::Duration;

    use super::*;

    fn reading(n: u32) -> Reading {
        Reading {
            window: "Confirmation".into(),
            dialog: None,
            announcement: format!("announcement {n}"),
            keyboard: false,
        }
    }

    static STALLED: AtomicBool = AtomicBool::new(true);

    /// An adapter stuck on D-Bus with a screen reader on: it reads nothing while `STALLED`.
    fn stuck(readings: Receiver<Reading>, _: Arc<AtomicU64>, shared: Arc<Shared>) {
        shared.active.store(true, Ordering::SeqCst);
        while STALLED.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(5));
        }
        while readings.recv().is_ok() {}
    }

    #[test]
    fn a_stalled_adapter_is_replaced_and_publishing_never_waits() {
        // A publisher that waited on the adapter would never return from the loop below.
        let mut p = Publisher::with_adapter(stuck);
        while !p.shared.active.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(1));
        }
        for n in 0..=CHANNEL_BOUND as u32 {
            p.publish(reading(n));
        }
        // The first `CHANNEL_BOUND` readings filled the channel; the next one replaced the
        // adapter, and the new one has it.
        assert_eq!(p.restarts(), 1);
        assert_eq!(p.last, Some(reading(CHANNEL_BOUND as u32)));
        // An unchanged reading is not sent again (the new adapter, stuck too, would otherwise
        // fill up and be replaced as well).
        for _ in 0..CHANNEL_BOUND {
            p.publish(reading(CHANNEL_BOUND as u32));
        }
        assert_eq!(p.restarts(), 1);
        STALLED.store(false, Ordering::Relaxed);
    }

    static RECEIVED: AtomicU64 = AtomicU64::new(0);

    /// An adapter that counts the readings it is handed; no screen reader turns it on.
    fn counting(readings: Receiver<Reading>, _: Arc<AtomicU64>, _: Arc<Shared>) {
        while readings.recv().is_ok() {
            RECEIVED.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn readings_wake_the_adapter_only_once_a_screen_reader_is_on() {
        let mut p = Publisher::with_adapter(counting);
        for n in 0..200 {
            p.publish(reading(n));
        }
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(
            RECEIVED.load(Ordering::SeqCst),
            0,
            "no screen reader, no hand-over"
        );
        // A screen reader turns accessibility on: the first tree is the latest reading…
        let mut activate = Activate {
            shared: Arc::clone(&p.shared),
        };
        let first = activate.request_initial_tree();
        assert_eq!(first, Some(tree_of(&reading(199))));
        // …the same reading goes over once more (for the keyboard focus), and changes follow.
        p.publish(reading(199));
        p.publish(reading(199));
        p.publish(reading(200));
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while RECEIVED.load(Ordering::SeqCst) < 2 && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(RECEIVED.load(Ordering::SeqCst), 2);
        // Turned off again: nothing more is handed over.
        Deactivate {
            shared: Arc::clone(&p.shared),
        }
        .deactivate_accessibility();
        p.publish(reading(201));
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(RECEIVED.load(Ordering::SeqCst), 2);
    }
}
