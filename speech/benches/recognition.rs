//! Recognition speed with the Korean model: real-time factor of grammar decoding, the cost of a
//! new recognizer (prompt start → listening), and end of the spoken answer → decision.

use std::hint::black_box;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use pcp_speech::model::find_model;
use pcp_speech::recognize::AnswerRecognizer;
use pcp_speech::{Config, PhrasePack, SpeechModel};

/// Feed size: 20 ms at 16 kHz, as the capture path hands it over.
const BLOCK: usize = 320;

/// "아니요" with 0.5 s of silence before and 1.5 s after, 16 kHz mono i16 (espeak-ng + sox -R).
fn fixture(dir: &Path) -> Vec<i16> {
    let spoken = dir.join("a.wav");
    let raw = dir.join("a.raw");
    let ok = Command::new("espeak-ng")
        .args(["-v", "ko", "-w"])
        .arg(&spoken)
        .arg("아니요")
        .status();
    assert!(ok.is_ok_and(|s| s.success()), "espeak-ng");
    let ok = Command::new("sox")
        .arg("-R")
        .arg(&spoken)
        .args(["-r", "16000", "-c", "1", "-b", "16", "-e", "signed-integer"])
        .arg(&raw)
        .args(["pad", "0.5", "1.5"])
        .status();
    assert!(ok.is_ok_and(|s| s.success()), "sox");
    let bytes = std::fs::read(&raw).unwrap();
    bytes
        .chunks_exact(2)
        .map(|b| i16::from_le_bytes([b[0], b[1]]))
        .collect()
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let audio = fixture(dir.path());
    let model = SpeechModel::load(&find_model(None, "ko").unwrap()).unwrap();
    let pack = Arc::new(PhrasePack::load(None, "ko").unwrap());
    let config = Config::for_language("ko");
    let audio_s = audio.len() as f64 / 16_000.0;
    // Every decoder phase decodes all the audio: a partial never holds long enough to decide.
    let undecided = Config {
        stable_partial_ms: u64::MAX / 32_000,
        ..Config::for_language("ko")
    };

    c.bench_function("recognizer_new", |b| {
        b.iter(|| black_box(AnswerRecognizer::new(&model, pack.clone(), &config).unwrap()))
    });

    // Decoding cost of the whole fixture, decisions ignored: divide by `audio_s` for the RTF.
    let mut group = c.benchmark_group("rtf");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(20));
    // The shipped two phases, each on its own thread (the default) and one after the other: the
    // wall time a second core saves.
    for (how, parallel) in [("phases_in_parallel", true), ("phases_in_turn", false)] {
        let undecided = Config {
            parallel_phases: parallel,
            ..undecided.clone()
        };
        group.bench_function(format!("decode_{audio_s:.2}s_of_audio_{how}"), |b| {
            b.iter_batched(
                || AnswerRecognizer::new(&model, pack.clone(), &undecided).unwrap(),
                |mut rec| {
                    for block in audio.chunks(BLOCK) {
                        black_box(rec.feed(block).unwrap());
                    }
                    black_box(rec.finish())
                },
                BatchSize::PerIteration,
            )
        });
    }
    group.finish();

    // End of the answer (last sample above −40 dBFS) → decision.
    let end = audio.iter().rposition(|s| s.unsigned_abs() > 328).unwrap();
    let end_block = end / BLOCK + 1;
    let mut rec = AnswerRecognizer::new(&model, pack.clone(), &config).unwrap();
    let mut decided_at = None;
    for (i, block) in audio.chunks(BLOCK).enumerate() {
        if rec.feed(block).unwrap().is_some() {
            decided_at = Some((i + 1) * BLOCK);
            break;
        }
    }
    let decided_at = decided_at.expect("the fixture is decided");
    println!(
        "end of answer at {} ms of audio, decided at {} ms: audio lag {} ms (plus the compute time below)",
        end / 16,
        decided_at / 16,
        (decided_at as i64 - end as i64) / 16
    );
    let mut group = c.benchmark_group("end_of_answer_to_decision");
    group
        .sample_size(30)
        .measurement_time(Duration::from_secs(15));
    group.bench_function("compute_after_end", |b| {
        b.iter_batched(
            || {
                let mut rec = AnswerRecognizer::new(&model, pack.clone(), &config).unwrap();
                for block in audio.chunks(BLOCK).take(end_block) {
                    assert!(
                        rec.feed(block).unwrap().is_none(),
                        "decided before the answer ended"
                    );
                }
                rec
            },
            |mut rec| {
                for block in audio.chunks(BLOCK).skip(end_block) {
                    if let Some(h) = rec.feed(block).unwrap() {
                        return black_box(Some(h));
                    }
                }
                None
            },
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
