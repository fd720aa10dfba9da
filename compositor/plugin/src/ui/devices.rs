//! What can answer a prompt now, as last learned — never probed on the decision path. Outputs
//! come from each sync, input devices from the host's hotplug, the haptic device from its
//! backend's own state, and the microphone and speech model from a probe thread: it probes
//! every `device_probe_ms` (reporting only changes), at once when asked (a prompt that needs
//! voice is shown, a sound device was plugged in or out), and wakes the event loop when it has
//! something to say. The dispatch thread never waits for it.

use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::thread::JoinHandle;
use std::time::Duration;

use calloop::ping::Ping;
use pcp_speech::{Unavailable, Voice};

/// How soon the probe thread looks again while the speech model is still loading, so voice is
/// offered shortly after the model is ready rather than a whole probe interval later.
const LOADING_RECHECK: Duration = Duration::from_millis(250);

/// What the probe thread is asked.
enum Request {
    /// Probe now and report the result whatever it is.
    Probe,
}

/// The probe thread of one speech engine.
struct Prober {
    requests: Sender<Request>,
    results: Receiver<pcp_speech::Availability>,
    thread: Option<JoinHandle<()>>,
}

impl Prober {
    fn start(engine: Arc<dyn Voice>, interval: Duration, wake: Ping) -> Option<Prober> {
        let (requests, inbox) = mpsc::channel();
        let (outbox, results) = mpsc::channel();
        let spawned = std::thread::Builder::new()
            .name("pcp-device-probe".into())
            .spawn(move || probe_loop(&*engine, interval, &inbox, &outbox, &wake));
        match spawned {
            Ok(thread) => Some(Prober {
                requests,
                results,
                thread: Some(thread),
            }),
            Err(e) => {
                tracing::error!("cannot start the device probe thread, voice stays off: {e}");
                None
            }
        }
    }
}

impl Drop for Prober {
    fn drop(&mut self) {
        // Closing the request channel ends the thread after its current probe.
        let (closed, _) = mpsc::channel();
        self.requests = closed;
        if let Some(thread) = self.thread.take()
            && thread.join().is_err()
        {
            tracing::error!("the device probe thread panicked");
        }
    }
}

fn probe_loop(
    engine: &dyn Voice,
    interval: Duration,
    inbox: &Receiver<Request>,
    outbox: &Sender<pcp_speech::Availability>,
    wake: &Ping,
) {
    let mut last: Option<pcp_speech::Availability> = None;
    loop {
        let wait = match &last {
            Some(Err(Unavailable::ModelLoading)) => LOADING_RECHECK.min(interval),
            _ => interval,
        };
        let asked = match inbox.recv_timeout(wait) {
            Ok(Request::Probe) => true,
            Err(RecvTimeoutError::Timeout) => false,
            Err(RecvTimeoutError::Disconnected) => return,
        };
        let now = engine.available();
        if asked || last.as_ref() != Some(&now) {
            last = Some(now.clone());
            if outbox.send(now).is_err() {
                return;
            }
            wake.ping();
        }
    }
}

/// The devices the UI knows about.
pub(crate) struct Devices {
    input: bool,
    output: bool,
    voice: pcp_speech::Availability,
    /// Set while the dialog's fonts cannot draw the phrase pack's words: voice is off whatever
    /// the probe says.
    undrawable: Option<pcp_speech::Availability>,
    prober: Option<Prober>,
    interval: Duration,
    wake: Ping,
}

impl Devices {
    pub fn new(engine: Option<&Arc<dyn Voice>>, interval: Duration, wake: Ping) -> Devices {
        let mut devices = Devices {
            input: true,
            output: true,
            voice: Err(Unavailable::Disabled),
            undrawable: None,
            prober: None,
            interval,
            wake,
        };
        devices.set_engine(engine);
        devices
    }

    /// Probes `engine` from now on (`None`: voice is off).
    pub fn set_engine(&mut self, engine: Option<&Arc<dyn Voice>>) {
        self.prober = None;
        self.voice = Err(Unavailable::Disabled);
        if let Some(engine) = engine {
            self.voice = Err(Unavailable::ModelLoading);
            self.prober = Prober::start(Arc::clone(engine), self.interval, self.wake.clone());
            self.probe_voice();
        }
    }

    /// Asks the probe thread to look at the microphone and model now; the answer comes later
    /// through [`Devices::take_voice_reports`].
    pub fn probe_voice(&self) {
        if let Some(p) = &self.prober {
            let _ = p.requests.send(Request::Probe);
        }
    }

    /// The probe results that arrived since the last call, oldest first; the last one is kept.
    pub fn take_voice_reports(&mut self) -> Vec<pcp_speech::Availability> {
        let mut reports = Vec::new();
        if let Some(p) = &self.prober {
            loop {
                match p.results.try_recv() {
                    Ok(r) => reports.push(r),
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => {
                        tracing::error!("the device probe thread ended: voice is off");
                        reports.push(Err(Unavailable::NoModel("the probe thread ended".into())));
                        self.prober = None;
                        break;
                    }
                }
            }
        }
        if let Some(last) = reports.last() {
            self.voice = last.clone();
        }
        reports
    }

    /// The last known state of the microphone and model (voice is off while the dialog cannot
    /// draw the phrase pack's words).
    pub fn voice(&self) -> &pcp_speech::Availability {
        self.undrawable.as_ref().unwrap_or(&self.voice)
    }

    /// Why the dialog cannot draw the phrase pack's words (`None`: it can).
    pub fn set_undrawable(&mut self, why: Option<Unavailable>) {
        self.undrawable = why.map(Err);
    }

    pub fn set_input(&mut self, available: bool) {
        self.input = available;
    }

    pub fn input(&self) -> bool {
        self.input
    }

    pub fn set_output(&mut self, available: bool) {
        self.output = available;
    }

    pub fn output(&self) -> bool {
        self.output
    }
}
