//! A flood of intents against the headless compositor: 50 connections submitting 10,000 intents
//! in all (routine approvals, unknown capabilities, prompts refused `rate_limited` — each
//! connection stays under `[queue] disconnect_after`), pipelined in batches. Measured in the same
//! run, idle and during the flood: another client's routine intent round trip, and one
//! event-loop round followed by an injected key reaching the dialog on screen (a real device's
//! key waits at most one round, so this is the key's latency; a frame is 16.7 ms at 60 Hz).
//! The compositor's resident memory is printed before the flood and after it (after the flood's
//! clients are gone), also after `malloc_trim`, which hands back what the allocator only caches.

#[path = "../tests/harness/mod.rs"]
mod harness;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use pcp_protocol::client::{IntentClient, IntentEvent};
use serde_json::json;

use harness::{Fixture, KEY_TAB, intent};

const CONNECTIONS: usize = 50;
const INTENTS: usize = 10_000;
/// Intents each connection sends before it reads their decisions.
const BATCH: usize = 20;
/// Prompts a connection asks for (each refused `rate_limited`: one is on screen already), kept
/// under the default `[queue] disconnect_after` of 20 so the flood keeps its connections.
const PROMPTS_PER_CONNECTION: usize = 10;

/// The resident set of this process (the compositor and its in-process clients), in KiB.
fn rss_kib() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: u64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    // SAFETY: sysconf with a constant name.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as u64;
    pages * page / 1024
}

fn trim() {
    // SAFETY: glibc's malloc_trim takes a pad size and touches only the allocator's state.
    unsafe { libc::malloc_trim(0) };
}

/// The flood's clients, on threads: each submits in batches until it has sent its quota (none:
/// until told to stop).
struct Flood {
    stop: Arc<AtomicBool>,
    decided: Arc<AtomicUsize>,
    threads: Vec<JoinHandle<()>>,
}

impl Flood {
    fn start(socket: PathBuf, per_connection: Option<usize>) -> Flood {
        let stop = Arc::new(AtomicBool::new(false));
        let decided = Arc::new(AtomicUsize::new(0));
        let threads = (0..CONNECTIONS)
            .map(|n| {
                let (socket, stop, decided) = (socket.clone(), stop.clone(), decided.clone());
                std::thread::spawn(move || {
                    let mut client = IntentClient::connect_to(&socket).unwrap();
                    let mut sent = 0;
                    let quota = per_connection.unwrap_or(usize::MAX);
                    while sent < quota && !stop.load(Ordering::Relaxed) {
                        let batch = BATCH.min(quota - sent);
                        let mut handles = Vec::with_capacity(batch);
                        for i in sent..sent + batch {
                            let s = match i % 20 {
                                // Every other tenth a prompt, refused while one is on screen.
                                0 if i / 20 < PROMPTS_PER_CONNECTION => intent(
                                    "settings.change",
                                    json!({"key": format!("flood{n}"), "value": i}),
                                ),
                                1 | 11 => intent("flood.unknown", json!({"n": i})),
                                _ => intent(
                                    "file.write",
                                    json!({"path": format!("/tmp/flood/{n}/{i}"), "content": "x".repeat(512)}),
                                ),
                            };
                            handles.push(client.submit(&s).unwrap());
                        }
                        let mut open = handles.len();
                        while open > 0 {
                            if let IntentEvent::Final { .. } = client.next_event().unwrap() {
                                open -= 1;
                                decided.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                        for h in handles {
                            h.destroy();
                        }
                        sent += batch;
                    }
                })
            })
            .collect();
        Flood {
            stop,
            decided,
            threads,
        }
    }

    fn decided(&self) -> usize {
        self.decided.load(Ordering::Relaxed)
    }

    fn done(&self) -> bool {
        self.threads.iter().all(JoinHandle::is_finished)
    }
}

/// A routine intent from its own client, served by this thread until it is approved.
fn routine_round_trip(fx: &mut Fixture, client: &mut Option<IntentClient>) -> Duration {
    let mut c = client.take().unwrap();
    let start = Instant::now();
    let asking = std::thread::spawn(move || {
        let h = c
            .submit(&intent("file.read", json!({"path": "/etc/hostname"})))
            .unwrap();
        let d = c.wait(&h).unwrap();
        assert!(d.approved, "{d:?}");
        h.destroy();
        c
    });
    while !asking.is_finished() {
        fx.dispatch(Duration::from_micros(200));
    }
    let elapsed = start.elapsed();
    *client = Some(asking.join().unwrap());
    elapsed
}

/// One event-loop round, then Tab pressed and released; the time until the dialog's focus moved.
fn round_then_key(fx: &mut Fixture) -> Duration {
    let before = fx.dialog_live().unwrap().focus;
    let start = Instant::now();
    fx.dispatch(Duration::ZERO);
    fx.inject_key(KEY_TAB, true);
    fx.inject_key(KEY_TAB, false);
    let elapsed = start.elapsed();
    assert_ne!(
        fx.dialog_live().unwrap().focus,
        before,
        "the key reached the dialog"
    );
    elapsed
}

fn connect(fx: &mut Fixture) -> Option<IntentClient> {
    let path = fx.socket_path();
    let connecting = std::thread::spawn(move || IntentClient::connect_to(&path));
    while !connecting.is_finished() {
        fx.pump();
    }
    Some(connecting.join().unwrap().unwrap())
}

fn flood(c: &mut Criterion) {
    let mut fx = Fixture::new(&["1920x1080@0,0"]);
    // A prompt on screen holding the keyboard, past its guard: the keys' target.
    let holder = fx.submit(intent(
        "settings.change",
        json!({"key": "holder", "value": "1"}),
    ));
    fx.pending(&holder);
    fx.press_focus_shortcut();
    fx.advance_clock(1000);
    let mut routine = connect(&mut fx);

    // Warm up everything a flood touches (connections, audit batches, the dialog's drawing).
    let warm = Flood::start(fx.socket_path(), Some(BATCH));
    while !warm.done() {
        fx.dispatch(Duration::from_micros(200));
    }
    fx.render();
    fx.pcp_mut().flush().unwrap();
    for _ in 0..20 {
        fx.pump();
    }
    trim();
    let before = rss_kib();

    let mut group = c.benchmark_group("flood");
    group.bench_function("idle: routine intent round trip", |b| {
        b.iter_custom(|iters| {
            (0..iters)
                .map(|_| routine_round_trip(&mut fx, &mut routine))
                .sum()
        })
    });
    group.bench_function("idle: event-loop round + key to the dialog", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| round_then_key(&mut fx)).sum())
    });

    // The flood runs until the measurements are done and at least INTENTS were decided.
    let started = Instant::now();
    let flood = Flood::start(fx.socket_path(), None);
    // Let every connection get going.
    while flood.decided() < CONNECTIONS * BATCH {
        fx.dispatch(Duration::from_micros(200));
    }
    let mut rounds = Vec::new();
    group.bench_function("flood: event-loop round + key to the dialog", |b| {
        b.iter_custom(|iters| {
            (0..iters)
                .map(|_| {
                    let t = round_then_key(&mut fx);
                    rounds.push(t);
                    t
                })
                .sum()
        })
    });
    let mut trips = Vec::new();
    group.bench_function("flood: routine intent round trip", |b| {
        b.iter_custom(|iters| {
            (0..iters)
                .map(|_| {
                    let t = routine_round_trip(&mut fx, &mut routine);
                    trips.push(t);
                    t
                })
                .sum()
        })
    });
    group.finish();
    let during = flood.decided();
    while flood.decided() < INTENTS {
        fx.dispatch(Duration::from_micros(200));
    }
    flood.stop.store(true, Ordering::Relaxed);
    while !flood.done() {
        fx.dispatch(Duration::from_micros(200));
    }
    let took = started.elapsed();
    let decided = flood.decided();
    for t in flood.threads {
        t.join().unwrap();
    }
    // The holder's prompt is still on screen: the flood did not end or replace it.
    assert!(
        fx.gate()
            .active()
            .is_some_and(|p| p.intent.params["key"] == "holder")
    );
    fx.pcp_mut().flush().unwrap();
    for _ in 0..20 {
        fx.pump();
    }
    let after_raw = rss_kib();
    trim();
    let after = rss_kib();
    rounds.sort();
    trips.sort();
    let frame = Duration::from_micros(16_667);
    let over = rounds.iter().filter(|t| **t > frame).count();
    let median = |v: &[Duration]| v.get(v.len() / 2).copied().unwrap_or_default();
    let worst = |v: &[Duration]| v.last().copied().unwrap_or_default();
    println!(
        "flood: {decided} intents decided from {CONNECTIONS} connections in {took:.2?}, \
         {during} of them while the flood measurements ran"
    );
    println!(
        "flood: round + key during the flood: median {:.2?}, worst {:.2?}, {over} of {} over \
         one 60 Hz frame",
        median(&rounds),
        worst(&rounds),
        rounds.len()
    );
    println!(
        "flood: another client's routine intent during the flood: median {:.2?}, worst {:.2?} \
         ({} round trips, each approved)",
        median(&trips),
        worst(&trips),
        trips.len()
    );
    println!(
        "flood: resident memory before {before} KiB, after {after_raw} KiB ({:+.1} %), \
         after malloc_trim {after} KiB ({:+.1} %)",
        (after_raw as f64 / before as f64 - 1.0) * 100.0,
        (after as f64 / before as f64 - 1.0) * 100.0,
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(Duration::from_secs(3));
    targets = flood
}
criterion_main!(benches);
