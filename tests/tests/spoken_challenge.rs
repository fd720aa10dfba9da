//! A screen-reader user hears the challenge word from the compositor's own voice. With a screen
//! reader running (a private session bus, Debian's at-spi2-core, accessibility turned on as a
//! screen reader does at start), a destructive prompt's spoken question — espeak-ng through the
//! real cpal playback path into the ALSA file sink — says the word the dialog shows: the Korean
//! Vosk model, decoding the captured question with a grammar of the pack's challenge words and
//! the question's own words, hears the shown word after the last "네". The accessibility tree
//! never holds the word, and its voice line says to say the word heard.
//!
//! One test per binary: it sets the process's session bus and ALSA files.

mod harness;

use std::path::Path;

use pcp_overlay::VoiceState;
use pcp_speech::{Config, PhrasePack, SpeechEngine};
use serde_json::json;

use harness::dbus::{private_session_bus, turn_accessibility_on, use_session_bus};
use harness::voice::{alsa, capture_from, config, model, placeholder};
use harness::{Fixture, audio, intent};

/// Words of the pack's spoken sentences that the model knows, besides the answers and the
/// challenge words: what the rest of the question is decoded as, so that it is not forced onto
/// a challenge word.
const QUESTION_WORDS: &[&str] = &["또는", "라고", "말씀", "해", "주세요"];

/// The playback the ALSA file sink recorded, as mono samples at `rate` Hz for the model.
fn played_at(path: &Path, rate: u32) -> Vec<i16> {
    let device = pcp_speech::prompt::output_config().expect("the output device");
    let bytes = std::fs::read(path).expect("the captured question");
    let samples: Vec<f32> = match device.format {
        cpal::SampleFormat::I16 => bytes
            .chunks_exact(2)
            .map(|b| f32::from(i16::from_le_bytes([b[0], b[1]])) / 32768.0)
            .collect(),
        cpal::SampleFormat::F32 => bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect(),
        other => panic!("playback format {other} not handled by the test"),
    };
    let mut mono = Vec::new();
    pcp_speech::convert::downmix(&samples, usize::from(device.channels), &mut mono);
    let mut converter =
        pcp_speech::convert::Converter::new(device.rate, rate).expect("a resampler");
    let mut out = Vec::new();
    converter.push(&mono, &mut out).expect("resampled");
    converter.flush(&mut out).expect("resampled");
    out
}

/// What the Korean model hears in `samples` with a grammar of `words` (those it knows).
fn heard(samples: &[i16], words: &[String]) -> Vec<String> {
    let dir = pcp_speech::model::find_model(None, "ko").expect("the Korean model");
    let mut model = vosk::Model::new(dir.to_string_lossy()).expect("the model loads");
    let known: Vec<&str> = words
        .iter()
        .map(String::as_str)
        .filter(|w| model.find_word(w).is_some())
        .collect();
    let mut rec =
        vosk::Recognizer::new_with_grammar(&model, 16_000.0, &known).expect("a recognizer");
    let mut text = Vec::new();
    for chunk in samples.chunks(4000) {
        if rec.accept_waveform(chunk).expect("decoded") == vosk::DecodingState::Finalized
            && let Some(r) = rec.result().single()
        {
            text.extend(r.text.split_whitespace().map(str::to_string));
        }
    }
    if let Some(r) = rec.final_result().single() {
        text.extend(r.text.split_whitespace().map(str::to_string));
    }
    text
}

#[test]
fn with_a_screen_reader_the_question_says_the_challenge_word_and_the_tree_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let _g = alsa(dir.path(), &placeholder(dir.path()));
    let (_bus, address) = private_session_bus();
    use_session_bus(&address);
    turn_accessibility_on(&address);

    let cfg = Config {
        speak_prompt: true,
        challenge: Config::for_language("ko").challenge,
        ..config()
    };
    assert!(
        !cfg.speak_challenge,
        "the shipped default reads no word aloud"
    );
    let engine = SpeechEngine::with_model(cfg, model()).expect("engine");
    let mut fx = Fixture::with_devices(
        &["1920x1080@0,0"],
        "accessibility = true\n",
        Some(engine),
        None,
    );
    fx.pump_until("the screen reader to read the compositor", |fx| {
        fx.screen_reader_running()
    });
    // The microphone hears silence: the question is what this test listens to.
    capture_from(&audio::silence(dir.path(), &harness::voice::encoding()).unwrap());

    let c = fx.submit(intent("file.delete", json!({"path": "/tmp/report.txt"})));
    let (threshold, _) = fx.pending(&c);
    assert_eq!(threshold, "voice+visual");
    let shown = fx
        .dialog_challenge()
        .expect("a destructive prompt shows a challenge word");
    // The question is spoken before the microphone opens.
    fx.pump_until("the question to be spoken and listening to start", |fx| {
        fx.dialog_live().map(|l| l.voice) == Some(VoiceState::Listening)
    });
    let reading = fx.accessible_reading().expect("accessibility is on");
    assert_eq!(
        reading.dialog.as_ref().and_then(|d| d.voice.as_deref()),
        Some("Listening… to approve, say “네” and the word you heard; to deny, say “아니요”")
    );
    assert!(
        !format!("{reading:?}").contains(&shown),
        "the word is on the accessibility bus: {reading:?}"
    );
    // The shown word is not in the accessibility tree the adapter publishes either.
    let tree = format!("{:?}", pcp_plugin::a11y::tree_of(&reading));
    assert!(!tree.contains(&shown), "{tree}");
    drop(fx);

    let pack = PhrasePack::load(None, "ko").unwrap();
    let mut grammar: Vec<String> = pack.challenge_words().to_vec();
    let words = pack.answer_words().clone();
    grammar.extend([
        words.approve.clone(),
        words.deny.clone(),
        words.cancel.clone(),
    ]);
    grammar.extend(QUESTION_WORDS.iter().map(|w| w.to_string()));
    let question = played_at(&dir.path().join("played.raw"), 16_000);
    assert!(
        question.iter().any(|s| s.unsigned_abs() > 1000),
        "a question was played"
    );
    let text = heard(&question, &grammar);
    eprintln!("shown {shown:?}; the model heard in the question: {text:?}");
    // "…승인하려면 네, 기차라고 말씀해 주세요.": the word is said right after the last "네".
    let last_yes = text
        .iter()
        .rposition(|w| *w == words.approve)
        .unwrap_or_else(|| panic!("no {} heard in {text:?}", words.approve));
    assert_eq!(
        text.get(last_yes + 1),
        Some(&shown),
        "the word after the last {} in {text:?}",
        words.approve
    );
}
