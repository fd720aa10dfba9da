//! What voice costs when nobody is answering, and what loading on demand costs the first prompt:
//! - resident memory (RSS, from /proc/self/status) of this process with no engine, with an idle
//!   voice-enabled engine (model not loaded), with the model loaded, and after the engine has
//!   released it (`unload_after_s`), in English (Moonshine) and then Korean (Vosk) — printed,
//!   since criterion measures time. The recognizers' libraries are linked, so "no engine"
//!   already has them mapped, with the pages their start-up code touched;
//! - `model_load/en`, `model_load/ko`: loading the English and the Korean model (with the
//!   default options) from the page cache, the worst case of a first prompt that speaks no
//!   question;
//! - `first_prompt_extra_delay`: how much later the first prompt can listen because the model
//!   loads while the question is spoken (the question played at real speed, as a device does),
//!   against a model that was already loaded.

use std::hint::black_box;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use criterion::{Criterion, SamplingMode, criterion_group, criterion_main};
use pcp_speech::keeper::ModelKeeper;
use pcp_speech::models::{find, load};
use pcp_speech::prompt::synthesize;
use pcp_speech::{Config, KeeperState, PhrasePack, SpeechEngine};

/// The resident set size of this process, in MB.
fn rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn wait_for(engine: &SpeechEngine, want: &KeeperState) {
    let until = Instant::now() + Duration::from_secs(120);
    while engine.model_state() != *want {
        assert!(Instant::now() < until, "model never became {want:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The resident set size once it has not fallen for a second (at most 30 s).
fn settled_rss_mb() -> f64 {
    let until = Instant::now() + Duration::from_secs(30);
    let mut last = rss_mb();
    let mut steady_since = Instant::now();
    while Instant::now() < until && steady_since.elapsed() < Duration::from_secs(1) {
        std::thread::sleep(Duration::from_millis(100));
        let now = rss_mb();
        if now < last {
            steady_since = Instant::now();
        }
        last = now;
    }
    last
}

fn memory(lang: &str) {
    let before = rss_mb();
    let config = Config {
        unload_after_s: 1,
        ..Config::for_language(lang)
    };
    let engine = SpeechEngine::start(config);
    std::thread::sleep(Duration::from_millis(200));
    let idle = rss_mb();
    engine.prepare();
    wait_for(&engine, &KeeperState::Ready);
    let loaded = rss_mb();
    wait_for(&engine, &KeeperState::Unloaded);
    // The state turns `Unloaded` before the model is freed and the heap trimmed (a new prompt
    // may start the next load meanwhile); freeing ~500 MB takes a while on a busy machine, so
    // read the memory once it has stopped falling for a second.
    let released = settled_rss_mb();
    println!(
        "resident memory, `{lang}` ({}): {before:.1} MB without voice, {idle:.1} MB with an idle voice-enabled \
         engine (+{:.1}), {loaded:.1} MB with the model loaded (+{:.1}), {released:.1} MB after \
         it was released (+{:.1} over no voice)",
        find(None, lang).map_or("no model".into(), |f| format!("{f:?}")),
        idle - before,
        loaded - before,
        released - before
    );
}

fn bench(c: &mut Criterion) {
    memory("en");
    memory("ko");
    let config = Config::for_language("ko");
    let found = find(None, &config.language).expect("the Korean model (cargo xtask setup)");
    let pack = PhrasePack::load(None, &config.language).unwrap();

    let mut group = c.benchmark_group("model");
    // Seconds per iteration: one iteration per sample.
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .measurement_time(Duration::from_secs(40));
    for lang in ["en", "ko"] {
        let config = Config::for_language(lang);
        let found = find(None, lang).expect("the models (cargo xtask setup)");
        group.bench_function(format!("model_load/{lang}"), |b| {
            b.iter(|| black_box(load(&found, &config).unwrap()))
        });
    }

    // The default question for a typical action, as the worker speaks it.
    let question = config.question("report.txt 파일을 삭제합니다");
    group.bench_function("first_prompt_extra_delay", |b| {
        b.iter_custom(|iters| {
            let mut extra = Duration::ZERO;
            for _ in 0..iters {
                let keeper = ModelKeeper::new(found.clone(), &config, pack.clone(), None);
                let stop = AtomicBool::new(false);
                let asked = Instant::now();
                keeper.prepare();
                // What the worker does before it listens: synthesize the question, play it at
                // real speed (a device takes the audio's length), pause `after_prompt_ms`.
                let speech = synthesize(&question, &config).unwrap();
                std::thread::sleep(Duration::from_millis(
                    speech.duration_ms() + config.after_prompt_ms,
                ));
                let spoken = asked.elapsed();
                let lease = keeper
                    .lease(asked + Duration::from_secs(60), &stop)
                    .unwrap();
                // With a loaded model the worker listens right after the question.
                extra += asked.elapsed().saturating_sub(spoken);
                black_box(lease.model().sample_rate());
            }
            extra
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
