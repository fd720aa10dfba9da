//! `gate_decision`: one routine intent through `submit`, audit append included (budget: median
//! ≤ 5 µs), and a prompted intent's submit + approve for comparison. `gate_flood`: 10,000
//! refused intents (unknown capability, 16 KiB of parameters each) and 10,000 routine ones
//! through the gate per iteration, with the process's resident memory and the store's buffer
//! printed before and after every flood — they must stay flat.

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use pcp_gate::{
    Answer, ClientIdentity, Decision, Gate, GateConfig, Intent, Modality, ModalityEvent,
};
use serde_json::json;

fn gate(dir: &Path) -> Gate {
    let assets = Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets/capabilities.d");
    let path = dir.join("config.toml");
    let text = format!(
        "[manifests]\ndirs = [{assets:?}]\n[state]\npath = {:?}\n",
        dir.join("state.sqlite3")
    );
    std::fs::write(&path, text).expect("write bench config");
    Gate::open(GateConfig::load(&path).expect("bench config")).expect("open gate")
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut g = gate(dir.path());
    let client = ClientIdentity::named("bench");
    let params = json!({"path": "/home/u/notes.txt"});
    let mut now = 0i64;
    c.bench_function("gate_decision/routine", |b| {
        b.iter(|| {
            now += 1;
            let intent = Intent::new("file.write", params.clone(), client.clone());
            black_box(g.submit(intent, now))
        })
    });
    // The same without the path rating `file.write` asks for (`classify = "path"`): what every
    // routine intent costs.
    let window = json!({"window": "w"});
    now += 1;
    let first = g.submit(
        Intent::new("window.close", window.clone(), client.clone()),
        now,
    );
    assert!(matches!(first, Decision::Execute(_)), "{first:?}");
    c.bench_function("gate_decision/routine_unclassified", |b| {
        b.iter(|| {
            now += 1;
            let intent = Intent::new("window.close", window.clone(), client.clone());
            black_box(g.submit(intent, now))
        })
    });
    let mut n = 0u64;
    c.bench_function("gate_decision/visual_prompt_approved", |b| {
        b.iter(|| {
            now += 1;
            n += 1;
            // New parameters each time, so friction never takes over and every one is prompted.
            let p = json!({"window": "w", "output": format!("out-{n}")});
            let Decision::Confirm { id, .. } =
                g.submit(Intent::new("window.move", p, client.clone()), now)
            else {
                panic!("expected a prompt");
            };
            black_box(g.respond(
                id,
                ModalityEvent::Answer(Modality::Visual, Answer::Approve),
                now,
            ))
        })
    });
}

/// The process's resident memory in KiB, from `/proc/self/status`.
fn resident_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS in /proc/self/status")
}

const FLOOD: usize = 10_000;

fn flood(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut g = gate(dir.path());
    let blob = "x".repeat(16 * 1024);
    // Clients with distinct names, so a per-client limit can never be what refuses them.
    let clients: Vec<ClientIdentity> = (0..50)
        .map(|i| ClientIdentity::named(&format!("flood-{i}")))
        .collect();
    let mut now = 0i64;
    let mut group = c.benchmark_group("gate_flood");
    group.sample_size(10);
    let mut floods = 0u32;
    let mut first_kib = None;
    group.bench_function("10k_unknown_capability_16KiB_params", |b| {
        b.iter(|| {
            let before = resident_kib();
            first_kib.get_or_insert(before);
            for i in 0..FLOOD {
                now += 1;
                let intent = Intent::new(
                    "disk.format",
                    json!({"device": "/dev/sda", "blob": blob, "n": i}),
                    clients[i % clients.len()].clone(),
                );
                black_box(g.submit(intent, now));
            }
            floods += 1;
            let after = resident_kib();
            if floods.is_multiple_of(10) {
                eprintln!(
                    "flood {floods}: resident {before} → {after} KiB (first {} KiB); store \
                     buffer {} records, {} bytes",
                    first_kib.unwrap_or(before),
                    g.store().buffered(),
                    g.store().buffered_bytes()
                );
            }
        })
    });
    let routine = json!({"path": "/home/u/notes.txt"});
    group.bench_function("10k_routine", |b| {
        b.iter(|| {
            for i in 0..FLOOD {
                now += 1;
                let intent = Intent::new("file.write", routine.clone(), clients[i % 50].clone());
                black_box(g.submit(intent, now));
            }
        })
    });
    group.finish();
    g.flush().expect("flush");
    eprintln!(
        "after every flood: resident {} KiB (first flood began at {} KiB); {} floods of {FLOOD} \
         refused intents",
        resident_kib(),
        first_kib.unwrap_or(0),
        floods
    );
}

criterion_group!(benches, bench, flood);
criterion_main!(benches);
