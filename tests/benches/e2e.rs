//! End-to-end benchmarks on the headless compositor: a routine intent's protocol round trip
//! against a bare `wl_display.sync` round trip on the same compositor in the same run, and intent
//! arrival → dialog pixels in the output buffer; what the per-submit identity check costs (it is
//! part of the routine round trip: the harness's clients connect through the socket).
//!
//! The round trips are measured twice. With the client and the compositor on two CPUs, as an
//! agent and the desktop run on any multi-core machine, the figure is the latency the agent
//! sees. With both on one CPU, every microsecond either side spends is in the figure: it is the
//! CPU cost of a round trip.

#[path = "../tests/harness/mod.rs"]
mod harness;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use pcp_protocol::client::{IntentClient, IntentEvent};
use serde_json::json;

use harness::{Fixture, intent};

/// A compositor serving on its own thread until dropped.
struct Served {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
    socket: std::path::PathBuf,
}

impl Served {
    /// A compositor with voice off, or with voice on as the session runs it: a speech engine
    /// that loads its model only for a voice prompt, its microphone the ALSA file device. Its
    /// thread, and the threads it starts (audit writer, speech), run on `cpu`.
    fn start(voice: bool, cpu: usize) -> Served {
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rx) = std::sync::mpsc::channel();
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            run_on(&[cpu]);
            // The model this machine has (`cargo xtask setup`), named: the default language
            // follows the locale, for which there may be no model.
            let speech = voice
                .then(|| pcp_speech::SpeechEngine::start(pcp_speech::Config::for_language("ko")));
            let mut fx = Fixture::with_devices(&["1920x1080@0,0"], "", speech, None);
            if voice {
                assert!(
                    fx.voice_availability().is_ok(),
                    "voice is offered: {:?}",
                    fx.voice_availability()
                );
            }
            tx.send(fx.socket_path()).unwrap();
            while !flag.load(Ordering::Relaxed) {
                fx.dispatch(Duration::from_millis(50));
            }
        });
        Served {
            stop,
            thread: Some(thread),
            socket: rx.recv().unwrap(),
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Points ALSA's default capture at a second of silence (the ALSA `file` PCM), so a
/// compositor with voice on has a microphone here; the folder holding it lives as long as the
/// returned guard.
fn microphone_of_silence() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let set = |env: Vec<(String, std::ffi::OsString)>| {
        for (key, value) in env {
            // SAFETY: set on the bench's main thread before any compositor or audio thread
            // exists; nothing reads the environment concurrently.
            unsafe { std::env::set_var(key, value) };
        }
    };
    // Opened once with a placeholder to learn the encoding the device opens with.
    let placeholder = dir.path().join("empty.raw");
    std::fs::write(&placeholder, []).unwrap();
    set(harness::alsa_file_env(
        &placeholder,
        &dir.path().join("played.raw"),
    ));
    let encoding = harness::audio::encoding(&pcp_speech::Config::default()).unwrap();
    let silence = harness::audio::silence(dir.path(), &encoding).unwrap();
    set(harness::alsa_file_env(
        &silence,
        &dir.path().join("played.raw"),
    ));
    dir
}

/// The CPUs this process may run on.
fn allowed_cpus() -> Vec<usize> {
    // SAFETY: `set` is a plain bit set the call fills in; its size is passed with it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of_val(&set), &mut set) != 0 {
            return Vec::new();
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&cpu| libc::CPU_ISSET(cpu, &set))
            .collect()
    }
}

/// Keeps the calling thread (and threads it starts later) on `cpus`.
fn run_on(cpus: &[usize]) {
    // SAFETY: as above; pid 0 is the calling thread.
    let ok = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &cpu in cpus {
            libc::CPU_SET(cpu, &mut set);
        }
        libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set) == 0
    };
    assert!(ok, "could not keep the thread on CPUs {cpus:?}");
}

fn round_trips(c: &mut Criterion) {
    let _microphone = microphone_of_silence();
    let cpus = allowed_cpus();
    let (Some(&first), Some(&last)) = (cpus.first(), cpus.last()) else {
        panic!("no CPU in this process's affinity mask");
    };
    if first == last {
        eprintln!("one CPU only: the round trips on two CPUs are not measured");
    } else {
        round_trips_on(
            c,
            "protocol, client and compositor on two CPUs",
            first,
            last,
        );
    }
    round_trips_on(c, "protocol, client and compositor on one CPU", last, last);
    run_on(&cpus);
}

/// The round trips with the compositors on `server_cpu` and the client (this thread) on
/// `client_cpu`.
fn round_trips_on(c: &mut Criterion, name: &str, server_cpu: usize, client_cpu: usize) {
    let served = Served::start(false, server_cpu);
    let voiced = Served::start(true, server_cpu);
    run_on(&[client_cpu]);
    let mut client = IntentClient::connect_to(&served.socket).unwrap();
    let mut voiced_client = IntentClient::connect_to(&voiced.socket).unwrap();
    let mut group = c.benchmark_group(name);
    group.bench_function("wl_display.sync round trip", |b| {
        b.iter(|| client.roundtrip().unwrap())
    });
    let routine = intent("file.write", json!({"path": "/tmp/bench"}));
    let submit = |client: &mut IntentClient| {
        let h = client.submit(&routine).unwrap();
        let d = client.wait(&h).unwrap();
        assert!(d.approved);
        h.destroy();
    };
    group.bench_function("routine intent submit → approved", |b| {
        b.iter(|| submit(&mut client))
    });
    // Voice on costs a routine intent nothing: devices are known from the probe, not asked
    // per submit.
    group.bench_function("wl_display.sync round trip, voice on", |b| {
        b.iter(|| voiced_client.roundtrip().unwrap())
    });
    group.bench_function("routine intent submit → approved, voice on", |b| {
        b.iter(|| submit(&mut voiced_client))
    });
    group.finish();
}

/// What identifying the asking process costs at each submit: the check the plugin runs (one
/// `readlinkat` of `exe` through the process's `/proc` folder held from connect), and the two
/// `/proc` reads by pid on their own (the start time is read only at connect, or at each check
/// where no pidfd exists).
fn identity_checks(c: &mut Criterion) {
    let pid = std::process::id();
    let mut group = c.benchmark_group("identity");
    // A socket pair's peer is this process: the connection names it.
    let (ours, _theirs) = std::os::unix::net::UnixStream::pair().unwrap();
    let connection = pcp_plugin::identity::ConnectionIdentity::of_stream(&ours, None);
    assert!(connection.has_pidfd());
    group.bench_function("ConnectionIdentity::check (readlinkat in /proc/PID)", |b| {
        b.iter(|| assert!(connection.check().is_ok()))
    });
    group.bench_function("/proc/PID/exe", |b| {
        b.iter(|| assert!(pcp_plugin::identity::executable_of(pid).is_some()))
    });
    group.bench_function("/proc/PID/stat start time", |b| {
        b.iter(|| assert!(pcp_plugin::identity::start_time_of(pid).is_some()))
    });
    group.finish();
}

fn arrival_to_pixels(c: &mut Criterion) {
    let mut fx = Fixture::new(&["1920x1080@0,0"]);
    // Connecting takes round trips: connect on a thread while this one serves.
    let path = fx.socket_path();
    let connecting = std::thread::spawn(move || IntentClient::connect_to(&path));
    while !connecting.is_finished() {
        fx.pump();
    }
    let mut client = connecting.join().unwrap().unwrap();
    let privileged = intent("settings.change", json!({"key": "bench", "value": "1"}));
    c.bench_function(
        "intent arrival → overlay pixels in the output buffer",
        |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let h = client.submit(&privileged).unwrap();
                    // The request is on the socket: from here to the composited pixels.
                    let start = Instant::now();
                    while !fx.dialog_open() {
                        fx.dispatch(Duration::ZERO);
                    }
                    fx.render();
                    total += start.elapsed();
                    let (x, y) = {
                        let r = fx.dialog_rect().unwrap();
                        (r.x + r.w / 2, r.y + 4)
                    };
                    let px = fx.capture(0).pixel(x as u32, y as u32);
                    assert!(!harness::is_background(px), "the dialog is in the buffer");
                    h.cancel();
                    loop {
                        fx.dispatch(Duration::ZERO);
                        client.poll().unwrap();
                        if let Some(IntentEvent::Final { .. }) = client.take_event() {
                            break;
                        }
                    }
                    h.destroy();
                }
                total
            })
        },
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(Duration::from_secs(4));
    targets = round_trips, identity_checks, arrival_to_pixels
}
criterion_main!(benches);
