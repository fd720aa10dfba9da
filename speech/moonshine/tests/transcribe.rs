//! The binding against the real library and the English model that `cargo xtask setup` unpacks
//! into the project cache, on speech espeak-ng makes here.

use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;

use pcp_moonshine::{Arch, SAMPLE_RATE, Transcriber};

fn model_dir() -> PathBuf {
    let var = |n: &str| {
        std::env::var_os(n)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let cache = var("PCP_CACHE_DIR")
        .or_else(|| var("XDG_CACHE_HOME").map(|d| d.join("pcp")))
        .or_else(|| var("HOME").map(|d| d.join(".cache/pcp")))
        .expect("a cache folder");
    cache.join("models/moonshine-tiny-en")
}

/// `text` said by espeak-ng's American English voice, as 16 kHz float samples with `pad_s` of
/// silence on each side.
fn say(text: &str, pad_s: f32) -> Vec<f32> {
    let dir = tempfile::tempdir().unwrap();
    let wav = dir.path().join("said.wav");
    let raw = dir.path().join("said.raw");
    assert!(
        Command::new("espeak-ng")
            .args(["-v", "en-us", "-w"])
            .arg(&wav)
            .arg(text)
            .status()
            .unwrap()
            .success()
    );
    let pad = format!("{pad_s}");
    assert!(
        Command::new("sox")
            .arg("-R")
            .arg(&wav)
            .args([
                "-t", "raw", "-r", "16000", "-e", "float", "-b", "32", "-c", "1"
            ])
            .arg(&raw)
            .args(["pad", &pad, &pad])
            .status()
            .unwrap()
            .success()
    );
    std::fs::read(&raw)
        .unwrap()
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

#[test]
fn a_spoken_word_is_transcribed_at_once_and_through_a_stream() {
    let model = Arc::new(Transcriber::load(&model_dir(), Arch::Tiny, &[]).unwrap());
    let audio = say("yes", 0.5);
    let lines = model.transcribe(&audio, SAMPLE_RATE).unwrap();
    let text: Vec<&str> = lines.iter().map(|l| l.text.as_str()).collect();
    assert_eq!(text, ["Yes."], "{lines:?}");
    assert!(lines.iter().all(|l| l.complete));

    let stream = model.stream().unwrap();
    for block in audio.chunks(320) {
        stream.add_audio(block, SAMPLE_RATE).unwrap();
        stream.transcribe(false).unwrap();
    }
    let forced = stream.transcribe(true).unwrap();
    assert_eq!(
        forced.last().map(|l| l.text.as_str()),
        Some("Yes."),
        "{forced:?}"
    );
    // A restarted stream holds nothing of the audio before.
    stream.stop().unwrap();
    stream.start().unwrap();
    stream.add_audio(&vec![0.0; 8000], SAMPLE_RATE).unwrap();
    assert!(
        stream
            .transcribe(true)
            .unwrap()
            .iter()
            .all(|l| l.text.is_empty())
    );
}

#[test]
fn silence_and_a_bad_rate_decide_nothing_and_fail_cleanly() {
    let model = Transcriber::load(&model_dir(), Arch::Tiny, &[]).unwrap();
    let lines = model.transcribe(&vec![0.0; 16_000], SAMPLE_RATE).unwrap();
    assert!(lines.iter().all(|l| l.text.is_empty()), "{lines:?}");
    assert!(model.transcribe(&[0.0; 100], u32::MAX).is_err());
}

#[test]
fn an_unknown_option_or_a_broken_model_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    for f in [
        "encoder_model.ort",
        "decoder_model_merged.ort",
        "tokenizer.bin",
    ] {
        std::fs::write(dir.path().join(f), b"not a model").unwrap();
    }
    assert!(Transcriber::load(dir.path(), Arch::Tiny, &[]).is_err());
    let option = [("no_such_option".to_string(), "1".to_string())];
    let e = Transcriber::load(&model_dir(), Arch::Tiny, &option);
    // Unknown options are refused by the library (named in its message) or ignored; either
    // way nothing crashes. Which one this release does is pinned here.
    assert!(e.is_err(), "the library accepted an unknown option");
}
