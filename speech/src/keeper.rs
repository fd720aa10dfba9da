//! When the speech model (Vosk or Moonshine, see `models`) is in memory: it is loaded when a prompt with a voice step begins (so the
//! load overlaps the spoken question), lent to that prompt's listener, and released after
//! `[speech] unload_after_s` without a voice prompt, giving the memory back to the system. A
//! listener whose model is still loading waits for it, within its deadline; voice is never
//! reported as listening before the model can listen.
//!
//! No thread of the keeper may still be inside libvosk when the process exits (libvosk's
//! exit-time teardown then crashes it), so [`ModelKeeper::shutdown`] — also run on drop — waits
//! for a load under way and for the unloading thread. A panic while loading is a failed load
//! (voice unavailable with its message), never a load that never ends.
//!
//! Released, the model's heap goes back to the system (`malloc_trim`), and so do the pages of
//! the recognizers' libraries that loading and listening touched (`MADV_PAGEOUT`): libmoonshine
//! and its ONNX Runtime are ~65 MB of code and data, and an idle compositor keeps none of it
//! resident.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use tracing::{debug, info, warn};

use crate::config::Config;
use crate::models::{FoundModel, RecognizerModel, load as load_model};
use crate::phrases::PhrasePack;

/// How often a waiting listener looks at its stop flag.
const STOP_POLL: Duration = Duration::from_millis(20);

/// Where the model stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeeperState {
    /// Not in memory; the next prompt loads it.
    Unloaded,
    Loading,
    Ready,
    /// It cannot be loaded (no model, a broken one, a pack that does not fit it).
    Failed(String),
}

/// Why a listener got no model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeaseError {
    /// The model cannot be loaded: the reason.
    Failed(String),
    /// The deadline passed while it was loading.
    TimedOut,
    /// The listener was stopped while waiting.
    Stopped,
}

/// How the model is obtained.
enum Source {
    /// Loaded from `found` on demand, with `config`'s options for its recognizer, checked
    /// against `pack`.
    Dir {
        found: FoundModel,
        config: Box<Config>,
        pack: Box<PhrasePack>,
    },
    /// Given at creation and never released.
    Fixed,
    /// Nothing to load (the slot holds the reason).
    Broken,
}

enum Slot {
    Unloaded,
    Loading,
    Ready(Arc<dyn RecognizerModel>),
    Failed(String),
}

struct State {
    slot: Slot,
    /// Listeners holding the model now.
    leases: usize,
    /// When the last lease ended (or the load finished).
    idle_since: Instant,
    loader: Option<JoinHandle<()>>,
    janitor: Option<JoinHandle<()>>,
    closing: bool,
    loads: u64,
}

struct Shared {
    source: Source,
    unload_after: Option<Duration>,
    state: Mutex<State>,
    changed: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A poisoned lock only means a thread panicked while holding it; the state is still
        // consistent (every change is a single assignment).
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The model's keeper: loads on demand, lends, unloads when idle. Not `Clone`: its drop shuts
/// it down.
pub struct ModelKeeper {
    shared: Arc<Shared>,
}

/// A listener's hold on the loaded model; while any lease exists the model stays loaded.
pub struct Lease {
    model: Arc<dyn RecognizerModel>,
    shared: Arc<Shared>,
}

impl Lease {
    /// The loaded model.
    pub fn model(&self) -> &dyn RecognizerModel {
        self.model.as_ref()
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        let mut state = self.shared.lock();
        state.leases = state.leases.saturating_sub(1);
        state.idle_since = Instant::now();
        self.shared.changed.notify_all();
    }
}

impl ModelKeeper {
    /// A keeper that loads `found` (with `config`'s options for its recognizer) when first
    /// asked and unloads it after `unload_after` without a lease (`None`: never).
    pub fn new(
        found: FoundModel,
        config: &Config,
        pack: PhrasePack,
        unload_after: Option<Duration>,
    ) -> ModelKeeper {
        let keeper = Self::with(
            Source::Dir {
                found,
                config: Box::new(config.clone()),
                pack: Box::new(pack),
            },
            Slot::Unloaded,
            unload_after,
        );
        if unload_after.is_some() {
            let shared = Arc::clone(&keeper.shared);
            let spawned = thread::Builder::new()
                .name("pcp-vosk-unload".into())
                .spawn(move || janitor(&shared));
            match spawned {
                Ok(handle) => keeper.shared.lock().janitor = Some(handle),
                Err(e) => warn!(
                    "could not start the model unloading thread ({e}): the speech model will stay loaded once loaded"
                ),
            }
        }
        keeper
    }

    /// A keeper over a model that is already loaded; it is never released.
    pub fn fixed(model: Arc<dyn RecognizerModel>) -> ModelKeeper {
        Self::with(Source::Fixed, Slot::Ready(model), None)
    }

    /// A keeper that can never load anything, for `reason` (no model found, no phrase pack).
    pub fn broken(reason: String) -> ModelKeeper {
        Self::with(Source::Broken, Slot::Failed(reason), None)
    }

    fn with(source: Source, slot: Slot, unload_after: Option<Duration>) -> ModelKeeper {
        ModelKeeper {
            shared: Arc::new(Shared {
                source,
                unload_after,
                state: Mutex::new(State {
                    slot,
                    leases: 0,
                    idle_since: Instant::now(),
                    loader: None,
                    janitor: None,
                    closing: false,
                    loads: 0,
                }),
                changed: Condvar::new(),
            }),
        }
    }

    /// Where the model stands now.
    pub fn state(&self) -> KeeperState {
        match &self.shared.lock().slot {
            Slot::Unloaded => KeeperState::Unloaded,
            Slot::Loading => KeeperState::Loading,
            Slot::Ready(_) => KeeperState::Ready,
            Slot::Failed(reason) => KeeperState::Failed(reason.clone()),
        }
    }

    /// `Err` with the reason when the model cannot be loaded (an unloaded model that can be
    /// loaded is fine: a prompt loads it).
    pub fn loadable(&self) -> Result<(), String> {
        match &self.shared.lock().slot {
            Slot::Failed(reason) => Err(reason.clone()),
            _ => Ok(()),
        }
    }

    /// How many loads have started (tests and benchmarks watch unloading with it).
    pub fn loads(&self) -> u64 {
        self.shared.lock().loads
    }

    /// Starts loading the model now unless it is loaded, loading or cannot be loaded. Returns
    /// at once.
    pub fn prepare(&self) {
        let mut state = self.shared.lock();
        start_load(&self.shared, &mut state);
    }

    /// The model for one listener: starts loading it if needed and waits until it is loaded,
    /// it fails, `deadline` passes or `stop` is set.
    pub fn lease(&self, deadline: Instant, stop: &AtomicBool) -> Result<Lease, LeaseError> {
        let mut state = self.shared.lock();
        start_load(&self.shared, &mut state);
        loop {
            if state.closing {
                return Err(LeaseError::Failed("voice is shutting down".into()));
            }
            match &state.slot {
                Slot::Ready(model) => {
                    let model = Arc::clone(model);
                    state.leases += 1;
                    return Ok(Lease {
                        model,
                        shared: Arc::clone(&self.shared),
                    });
                }
                Slot::Failed(reason) => return Err(LeaseError::Failed(reason.clone())),
                Slot::Unloaded | Slot::Loading => {}
            }
            if stop.load(Ordering::Relaxed) {
                return Err(LeaseError::Stopped);
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(LeaseError::TimedOut);
            }
            let wait = (deadline - now).min(STOP_POLL);
            state = self
                .shared
                .changed
                .wait_timeout(state, wait)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// Waits until no thread of the keeper is inside Vosk: a load under way ends (a Vosk load
    /// cannot be interrupted: up to ~2 s) and the unloading thread stops. The model stays as it
    /// is; calling it twice is harmless.
    pub fn shutdown(&self) {
        let (loader, janitor) = {
            let mut state = self.shared.lock();
            state.closing = true;
            self.shared.changed.notify_all();
            (state.loader.take(), state.janitor.take())
        };
        for (what, handle) in [("loading", loader), ("unloading", janitor)] {
            if let Some(handle) = handle
                && handle.join().is_err()
            {
                warn!("the speech model {what} thread panicked");
            }
        }
    }
}

impl Drop for ModelKeeper {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Starts the loading thread if the model is unloaded and loadable.
fn start_load(shared: &Arc<Shared>, state: &mut State) {
    if state.closing || !matches!(state.slot, Slot::Unloaded) {
        return;
    }
    let Source::Dir { .. } = &shared.source else {
        return;
    };
    // A previous load's thread has ended (its slot was filled); reap it.
    if let Some(old) = state.loader.take() {
        let _ = old.join();
    }
    state.slot = Slot::Loading;
    state.loads += 1;
    let target = Arc::clone(shared);
    let spawned = thread::Builder::new()
        .name("pcp-vosk-load".into())
        .spawn(move || load(&target));
    match spawned {
        Ok(handle) => state.loader = Some(handle),
        Err(e) => {
            state.slot = Slot::Failed(format!("could not start the model loading thread: {e}"));
            shared.changed.notify_all();
        }
    }
}

/// The loading thread: loads and checks the model, then fills the slot.
fn load(shared: &Shared) {
    let Source::Dir {
        found,
        config,
        pack,
    } = &shared.source
    else {
        return;
    };
    let started = Instant::now();
    let result = catch_unwind(AssertUnwindSafe(|| {
        load_model(found, config).and_then(|m| m.check_pack(pack).map(|()| m))
    }))
    .unwrap_or_else(|_| {
        Err(crate::error::SpeechError::BrokenModel {
            path: found.path().to_path_buf(),
            reason: "loading it panicked".into(),
        })
    });
    let mut state = shared.lock();
    state.slot = match result {
        Ok(model) => {
            info!(
                ms = started.elapsed().as_millis() as u64,
                recognizer = model.kind(),
                "speech model ready"
            );
            Slot::Ready(model)
        }
        Err(e) => {
            warn!("voice confirmation unavailable: {e}");
            Slot::Failed(e.to_string())
        }
    };
    state.idle_since = Instant::now();
    shared.changed.notify_all();
}

/// The unloading thread: releases the model once it has had no lease for `unload_after`.
fn janitor(shared: &Shared) {
    let Some(unload_after) = shared.unload_after else {
        return;
    };
    let mut state = shared.lock();
    loop {
        if state.closing {
            return;
        }
        let idle_ready = matches!(state.slot, Slot::Ready(_)) && state.leases == 0;
        if !idle_ready {
            state = shared
                .changed
                .wait(state)
                .unwrap_or_else(|e| e.into_inner());
            continue;
        }
        let due = state.idle_since + unload_after;
        let now = Instant::now();
        if now < due {
            state = shared
                .changed
                .wait_timeout(state, due - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
            continue;
        }
        let released = std::mem::replace(&mut state.slot, Slot::Unloaded);
        drop(state);
        // Freed outside the lock: a new prompt may start the next load meanwhile.
        drop(released);
        give_back_memory();
        debug!("speech model released after {unload_after:?} without a voice prompt");
        state = shared.lock();
    }
}

/// Returns freed heap memory to the system (the model is hundreds of megabytes in many
/// allocations that the allocator would otherwise keep), and the pages of the recognizers'
/// libraries (see [`page_out_libraries`]).
pub(crate) fn give_back_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks the allocator's own free lists.
    unsafe {
        libc::malloc_trim(0);
    }
    page_out_libraries();
}

/// The libraries whose pages an idle engine gives back: the recognizers' and ONNX Runtime's.
const RECOGNIZER_LIBRARIES: &[&str] = &["libmoonshine.so", "libonnxruntime", "libvosk.so"];

/// Asks the kernel to reclaim the pages of the recognizers' libraries mapped into this process
/// (`MADV_PAGEOUT`, Linux 5.4 and later). Their code and read-only data were touched by loading
/// and listening, and without memory pressure they would stay resident for good. Reclaiming is
/// only advice: a page still in use, or dirty without swap, stays; one reclaimed is read again
/// from the file when the next prompt needs it. An older kernel refuses the advice, and the
/// pages stay.
pub(crate) fn page_out_libraries() {
    let Ok(maps) = std::fs::read_to_string("/proc/self/maps") else {
        return;
    };
    for line in maps.lines() {
        let mut fields = line.split_whitespace();
        let (Some(range), Some(path)) = (fields.next(), fields.nth(4)) else {
            continue;
        };
        let name = path.rsplit('/').next().unwrap_or_default();
        if !RECOGNIZER_LIBRARIES.iter().any(|l| name.starts_with(l)) {
            continue;
        }
        let Some((start, end)) = range.split_once('-') else {
            continue;
        };
        let (Ok(start), Ok(end)) = (
            usize::from_str_radix(start, 16),
            usize::from_str_radix(end, 16),
        ) else {
            continue;
        };
        // SAFETY: a range this process has mapped (from its own maps); MADV_PAGEOUT changes no
        // contents, only which pages are resident.
        unsafe {
            libc::madvise(
                start as *mut libc::c_void,
                end.saturating_sub(start),
                libc::MADV_PAGEOUT,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_broken_keeper_fails_every_lease_at_once() {
        let keeper = ModelKeeper::broken("no model".into());
        assert_eq!(keeper.state(), KeeperState::Failed("no model".into()));
        assert_eq!(keeper.loadable(), Err("no model".into()));
        let stop = AtomicBool::new(false);
        let deadline = Instant::now() + Duration::from_secs(5);
        assert_eq!(
            keeper.lease(deadline, &stop).err(),
            Some(LeaseError::Failed("no model".into()))
        );
        keeper.prepare();
        assert_eq!(keeper.loads(), 0);
    }

    #[test]
    fn a_missing_model_directory_fails_the_load_with_its_path() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("vosk-model-none");
        let pack = PhrasePack::load(None, "ko").unwrap();
        let keeper = ModelKeeper::new(
            FoundModel::Vosk(missing),
            &Config::default(),
            pack,
            Some(Duration::from_secs(1)),
        );
        assert_eq!(keeper.state(), KeeperState::Unloaded);
        assert_eq!(keeper.loadable(), Ok(()));
        let stop = AtomicBool::new(false);
        let deadline = Instant::now() + Duration::from_secs(5);
        match keeper.lease(deadline, &stop) {
            Err(LeaseError::Failed(reason)) => {
                assert!(reason.contains("vosk-model-none"), "{reason}")
            }
            other => panic!("{:?}", other.err()),
        }
        assert_eq!(keeper.loads(), 1);
        assert!(keeper.loadable().is_err());
    }
}
