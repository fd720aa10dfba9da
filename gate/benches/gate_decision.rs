//! `gate_decision`: one routine intent through `submit`, audit append included (budget: median
//! ≤ 5 µs), and a prompted intent's submit + approve for comparison.

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

criterion_group!(benches, bench);
criterion_main!(benches);
