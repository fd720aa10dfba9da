//! The real device path: fixtures → an ALSA `file` PCM over a `null` slave (assets/alsa) → cpal
//! capture → resampling → Vosk with the Korean model; and the spoken question through the same
//! PCM's playback side into a file. The plugin runs faster than real time, which is why timeouts
//! also count captured audio.
//!
//! ALSA reads the file names from the environment when a PCM opens, so every test holds `ALSA`
//! while it sets them and uses audio: nothing else in this binary touches the environment.

mod common;

use std::path::Path;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use common::{
    device_config, device_encoding, listen_device, model, point_alsa_at, silence, speech,
};
use pcp_speech::{Config, ReportAnswer, SpeechEngine, SpeechEvent, SpokenAnswer, Unavailable};

static ALSA: Mutex<()> = Mutex::new(());

fn alsa(capture: &Path, playback: &Path) -> MutexGuard<'static, ()> {
    let guard = ALSA.lock().unwrap_or_else(|e| e.into_inner());
    // The plugin opens its input file even to list formats: give it silence until a fixture.
    if !capture.exists() {
        std::fs::write(capture, [0u8; 8192]).unwrap();
    }
    // SAFETY: only tests holding `ALSA` read or write the environment in this binary.
    unsafe { point_alsa_at(capture, playback) };
    guard
}

#[test]
fn answers_through_cpal_capture() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.raw");
    let cfg = device_config();
    for (text, want) in [
        ("아니요", ReportAnswer::Deny),
        ("취소", ReportAnswer::Cancel),
        ("네", ReportAnswer::Approve),
    ] {
        let placeholder = dir.path().join("none.raw");
        let _g = alsa(&placeholder, &out);
        let enc = device_encoding(&cfg);
        let raw = speech(
            dir.path(),
            &format!("{want:?}.raw"),
            text,
            44_100,
            2,
            enc,
            (0.5, 1.5),
        );
        // SAFETY: `_g` holds the environment lock.
        unsafe { std::env::set_var("PCP_ALSA_CAPTURE_FILE", &raw) };
        let report = listen_device(&cfg);
        assert_eq!(report.answer, want, "{text}: {report:?}");
        assert!(
            report.audio_ms < 10_000,
            "decided before the timeout: {report:?}"
        );
    }
}

#[test]
fn silence_times_out_after_ten_seconds_of_captured_audio() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = device_config();
    let placeholder = dir.path().join("none.raw");
    let _g = alsa(&placeholder, &dir.path().join("out.raw"));
    let raw = silence(dir.path(), "s.raw", 1.0, 44_100, 2, device_encoding(&cfg));
    // SAFETY: `_g` holds the environment lock.
    unsafe { std::env::set_var("PCP_ALSA_CAPTURE_FILE", &raw) };
    // The file ends after 1 s; the plugin then repeats its last (silent) period.
    let report = listen_device(&cfg);
    assert_eq!(report.answer, ReportAnswer::None, "{report:?}");
    assert_eq!(report.audio_ms, 10_000, "{report:?}");
}

#[test]
fn other_speech_through_the_device_never_approves() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = Config {
        timeout_ms: 4000,
        ..device_config()
    };
    let placeholder = dir.path().join("none.raw");
    let _g = alsa(&placeholder, &dir.path().join("out.raw"));
    let enc = device_encoding(&cfg);
    for (i, text) in ["안녕하세요 오늘 날씨가 좋네요", "컴퓨터를 켜 주세요"]
        .iter()
        .enumerate()
    {
        let raw = speech(
            dir.path(),
            &format!("{i}.raw"),
            text,
            44_100,
            2,
            enc,
            (0.3, 1.0),
        );
        // SAFETY: `_g` holds the environment lock.
        unsafe { std::env::set_var("PCP_ALSA_CAPTURE_FILE", &raw) };
        let report = listen_device(&cfg);
        assert_ne!(report.answer, ReportAnswer::Approve, "{text}: {report:?}");
    }
}

/// Samples of a raw playback capture, as f32, whatever format the device chose.
fn read_raw(path: &Path, format: cpal::SampleFormat) -> Vec<f32> {
    let bytes = std::fs::read(path).unwrap();
    match format {
        cpal::SampleFormat::I16 => bytes
            .chunks_exact(2)
            .map(|b| i16::from_le_bytes([b[0], b[1]]) as f32 / 32768.0)
            .collect(),
        cpal::SampleFormat::F32 => bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect(),
        other => panic!("playback format {other} not handled by the test"),
    }
}

#[test]
fn spoken_question_is_played_then_the_answer_is_heard() {
    let dir = tempfile::tempdir().unwrap();
    let played = dir.path().join("played.raw");
    let placeholder = dir.path().join("none.raw");
    let _g = alsa(&placeholder, &played);
    let cfg = Config {
        speak_prompt: true,
        ..device_config()
    };
    let raw = speech(
        dir.path(),
        "answer.raw",
        "아니요",
        44_100,
        2,
        device_encoding(&cfg),
        (0.5, 1.5),
    );
    // SAFETY: `_g` holds the environment lock.
    unsafe { std::env::set_var("PCP_ALSA_CAPTURE_FILE", &raw) };

    let engine = SpeechEngine::with_model(cfg.clone(), model()).unwrap();
    // The pack's question, in the pack's voice, with its answer words.
    let question = engine.config().question("파일을 삭제합니다");
    assert_eq!(
        question,
        "파일을 삭제합니다. 진행할까요? 네, 아니요, 또는 취소라고 말씀해 주세요."
    );
    let expected = pcp_speech::prompt::synthesize(&question, engine.config()).unwrap();
    assert_eq!(engine.available(), Ok(()));
    let events = events_to_the_end(engine.ask(&question));
    let last = events.last().cloned();
    assert!(
        matches!(
            &last,
            Some(SpeechEvent::Heard {
                answer: SpokenAnswer::Deny,
                ..
            })
        ),
        "{events:?}"
    );
    assert!(
        events
            .iter()
            .any(|e| matches!(e, SpeechEvent::Listening { .. })),
        "{events:?}"
    );
    assert!(
        events
            .iter()
            .any(|e| matches!(e, SpeechEvent::Listening { level } if *level > 0.3)),
        "the answer raised the level: {events:?}"
    );

    // The question reached the output: non-silent and as long as what espeak-ng made.
    let device = pcp_speech::prompt::output_config().unwrap();
    let samples = read_raw(&played, device.format);
    let channels = usize::from(device.channels);
    let loud: Vec<usize> = samples
        .chunks_exact(channels)
        .enumerate()
        .filter(|(_, f)| f[0].abs() > 0.01)
        .map(|(i, _)| i)
        .collect();
    assert!(!loud.is_empty(), "the question was silent");
    let span_ms = (loud[loud.len() - 1] - loud[0]) as u64 * 1000 / u64::from(device.rate);
    let want_ms = expected.duration_ms();
    assert!(
        span_ms * 10 >= want_ms * 8 && span_ms <= want_ms,
        "played {span_ms} ms of sound, synthesized {want_ms} ms"
    );
}

#[test]
fn availability_names_what_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let _g = alsa(&dir.path().join("none.raw"), &dir.path().join("out.raw"));
    let engine = SpeechEngine::with_model(device_config(), model()).unwrap();
    assert_eq!(engine.available(), Ok(()));
    let cfg = Config {
        input_device: "no such microphone".into(),
        ..device_config()
    };
    let engine = SpeechEngine::with_model(cfg, model()).unwrap();
    assert!(
        matches!(engine.available(), Err(Unavailable::NoInputDevice(n)) if n.contains("no such microphone"))
    );
    let mut listener = engine.ask("질문");
    let guard = Instant::now() + Duration::from_secs(30);
    let mut last = None;
    while !listener.is_done() && Instant::now() < guard {
        if let Some(e) = listener.poll() {
            last = Some(e);
        }
    }
    assert!(
        matches!(&last, Some(SpeechEvent::Unavailable { reason }) if reason.contains("no such microphone")),
        "{last:?}"
    );
    let off = SpeechEngine::with_model(
        Config {
            enabled: false,
            ..device_config()
        },
        model(),
    )
    .unwrap();
    assert_eq!(off.available(), Err(Unavailable::Disabled));
}

#[test]
fn shutdown_stops_listening_and_waits_for_the_worker() {
    let dir = tempfile::tempdir().unwrap();
    let placeholder = dir.path().join("none.raw");
    let _g = alsa(&placeholder, &dir.path().join("out.raw"));
    // A timeout far beyond this test, so only shutdown can end the worker.
    let cfg = Config {
        timeout_ms: 3_600_000,
        ..device_config()
    };
    let raw = silence(dir.path(), "s.raw", 1.0, 44_100, 2, device_encoding(&cfg));
    // SAFETY: `_g` holds the environment lock.
    unsafe { std::env::set_var("PCP_ALSA_CAPTURE_FILE", &raw) };
    let engine = SpeechEngine::with_model(cfg, model()).unwrap();
    let mut listener = engine.ask("질문");
    // A guard against a hang, not a timing assertion.
    let guard = Instant::now() + Duration::from_secs(30);
    let mut listening = false;
    while !listening && Instant::now() < guard {
        match listener.poll() {
            Some(SpeechEvent::Listening { .. }) => listening = true,
            Some(other) => panic!("ended before shutdown: {other:?}"),
            None => std::thread::sleep(Duration::from_millis(5)),
        }
    }
    assert!(listening, "the worker never started listening");
    engine.shutdown();
    // The worker has ended by now: every event is queued, then the channel is closed, with no
    // waiting.
    let mut last = None;
    while let Some(e) = listener.poll() {
        last = Some(e);
    }
    assert!(listener.is_done(), "the worker still runs after shutdown");
    assert!(
        matches!(&last, Some(SpeechEvent::Unavailable { .. })),
        "{last:?}"
    );
}

/// Other speech and then "네", in one listening window: the listener reports the first as
/// missed (and plays the cue), goes on listening, and hears the second, counting both.
#[test]
fn a_missed_utterance_is_reported_and_the_repeat_is_heard() {
    let dir = tempfile::tempdir().unwrap();
    let played = dir.path().join("played.raw");
    let placeholder = dir.path().join("none.raw");
    let _g = alsa(&placeholder, &played);
    let cfg = device_config();
    let encoding = device_encoding(&cfg);
    let other = speech(
        dir.path(),
        "other.raw",
        "음악을 틀어 줘",
        44_100,
        2,
        encoding,
        (0.3, 3.0),
    );
    let yes = speech(dir.path(), "yes.raw", "네", 44_100, 2, encoding, (0.3, 1.5));
    let mut both = std::fs::read(&other).unwrap();
    both.extend(std::fs::read(&yes).unwrap());
    let raw = dir.path().join("both.raw");
    std::fs::write(&raw, both).unwrap();
    // SAFETY: `_g` holds the environment lock.
    unsafe { std::env::set_var("PCP_ALSA_CAPTURE_FILE", &raw) };
    let engine = SpeechEngine::with_model(cfg, model()).unwrap();
    let events = events_to_the_end(engine.ask("질문"));
    let missed = events
        .iter()
        .position(|e| matches!(e, SpeechEvent::Missed { transcript } if !transcript.is_empty()));
    let heard = events.iter().position(|e| {
        matches!(
            e,
            SpeechEvent::Heard {
                answer: SpokenAnswer::Approve,
                utterances,
                ..
            } if *utterances >= 2
        )
    });
    assert!(
        matches!((missed, heard), (Some(m), Some(h)) if m < h),
        "{events:?}"
    );
    // The question is not spoken (`speak_prompt` is off): what reached the output is the cue.
    drop(engine);
    let device = pcp_speech::prompt::output_config().unwrap();
    let samples = read_raw(&played, device.format);
    assert!(
        samples.iter().any(|s| s.abs() > 0.05),
        "the cue was played: {} samples",
        samples.len()
    );
}

/// Every event `listener` reports until it ends (a guard of 60 s against a hang, not a timing
/// assertion).
fn events_to_the_end(mut listener: pcp_speech::Listener) -> Vec<SpeechEvent> {
    let mut events = Vec::new();
    let guard = Instant::now() + Duration::from_secs(60);
    while !listener.is_done() && Instant::now() < guard {
        match listener.poll() {
            Some(e) => events.push(e),
            None => std::thread::sleep(Duration::from_millis(5)),
        }
    }
    events
}
