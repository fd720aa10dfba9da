//! English voice: the Moonshine model `cargo xtask setup` unpacks, through the same listening
//! path as live capture (WAV → resampler → the recognizer and the phrase rule), on speech
//! espeak-ng makes here.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, OnceLock};

use pcp_speech::listen::{Ending, Round, round_from_wav, round_from_wavs};
use pcp_speech::models::{FoundModel, RecognizerModel, find, load_configured};
use pcp_speech::{Config, PhrasePack, SpokenAnswer};

fn config() -> Config {
    Config::for_language("en")
}

fn model() -> Arc<dyn RecognizerModel> {
    static MODEL: OnceLock<Arc<dyn RecognizerModel>> = OnceLock::new();
    MODEL
        .get_or_init(|| load_configured(&config()).expect("the English model (cargo xtask setup)"))
        .clone()
}

fn pack() -> Arc<PhrasePack> {
    Arc::new(PhrasePack::load(None, "en").unwrap())
}

/// `text` said by espeak-ng's `voice`, as a 48 kHz mono WAV with `lead` s of silence before and
/// 1.5 s after.
fn say(dir: &Path, name: &str, voice: &str, text: &str, lead: f32) -> PathBuf {
    let spoken = dir.join(format!("{name}.espeak.wav"));
    let status = Command::new("espeak-ng")
        .args(["-v", voice, "-w"])
        .arg(&spoken)
        .arg(text)
        .status()
        .unwrap();
    assert!(status.success());
    let out = dir.join(format!("{name}.wav"));
    let status = Command::new("sox")
        .arg("-R")
        .arg(&spoken)
        .args(["-r", "48000", "-c", "1", "-b", "16"])
        .arg(&out)
        .args(["pad", &lead.to_string(), "1.5"])
        .status()
        .unwrap();
    assert!(status.success());
    out
}

fn decided(round: &Round) -> Option<SpokenAnswer> {
    match &round.ending {
        Ending::Heard(h) => Some(h.answer),
        _ => None,
    }
}

#[test]
fn an_english_locale_finds_the_moonshine_model() {
    match find(None, "en").unwrap() {
        FoundModel::Moonshine(dir) => assert!(dir.ends_with("moonshine-tiny-en"), "{dir:?}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(model().kind(), "moonshine");
    assert_eq!(model().sample_rate(), 16_000);
}

#[test]
fn the_named_answers_decide_and_other_speech_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("yes", Some(SpokenAnswer::Approve)),
        ("no", Some(SpokenAnswer::Deny)),
        // espeak-ng's "cancel" is written "Kensel." (the pack's `heard_as`).
        ("cancel", Some(SpokenAnswer::Cancel)),
        ("never mind", Some(SpokenAnswer::Cancel)),
        ("yesterday", None),
        ("the weather is nice today", None),
    ];
    for (i, (text, want)) in cases.into_iter().enumerate() {
        let wav = say(dir.path(), &format!("c{i}"), "en-us", text, 0.6);
        let round = round_from_wav(model().as_ref(), pack(), &config(), None, &wav).unwrap();
        assert_eq!(decided(&round), want, "{text}: {:?}", round.judged);
    }
}

#[test]
fn an_approval_on_a_challenge_prompt_needs_the_shown_word() {
    let dir = tempfile::tempdir().unwrap();
    let with_word = say(dir.path(), "right", "en-us", "yes, rocket", 0.6);
    let round = round_from_wav(
        model().as_ref(),
        pack(),
        &config(),
        Some("rocket"),
        &with_word,
    )
    .unwrap();
    assert_eq!(
        decided(&round),
        Some(SpokenAnswer::Approve),
        "{:?}",
        round.judged
    );
    // The same words on a prompt that shows another word, and "yes" alone: nothing.
    let round = round_from_wav(
        model().as_ref(),
        pack(),
        &config(),
        Some("pencil"),
        &with_word,
    )
    .unwrap();
    assert_eq!(decided(&round), None, "{:?}", round.judged);
    let alone = say(dir.path(), "alone", "en-us", "yes", 0.6);
    let round =
        round_from_wav(model().as_ref(), pack(), &config(), Some("rocket"), &alone).unwrap();
    assert_eq!(decided(&round), None, "{:?}", round.judged);
    // A refusal needs no word.
    let no = say(dir.path(), "no", "en-us", "no", 0.6);
    let round = round_from_wav(model().as_ref(), pack(), &config(), Some("rocket"), &no).unwrap();
    assert_eq!(
        decided(&round),
        Some(SpokenAnswer::Deny),
        "{:?}",
        round.judged
    );
}

#[test]
fn silence_decides_nothing_and_a_repeat_after_other_speech_is_heard() {
    let dir = tempfile::tempdir().unwrap();
    let quiet = dir.path().join("quiet.wav");
    let status = Command::new("sox")
        .args(["-n", "-r", "48000", "-c", "1", "-b", "16"])
        .arg(&quiet)
        .args(["trim", "0", "3"])
        .status()
        .unwrap();
    assert!(status.success());
    let round = round_from_wav(model().as_ref(), pack(), &config(), None, &quiet).unwrap();
    assert_eq!(decided(&round), None);
    assert!(round.judged.is_empty(), "{:?}", round.judged);
    // Other speech first (missed), then the answer in the same window: the second decides, and
    // its transcript is its own (the stream starts afresh for each utterance).
    let other = say(dir.path(), "other", "en-us", "what time is it", 0.5);
    let yes = say(dir.path(), "yes", "en-us", "yes", 0.1);
    let round = round_from_wavs(
        model().as_ref(),
        pack(),
        &config(),
        None,
        &other,
        Some((&yes, 300)),
    )
    .unwrap();
    match &round.ending {
        Ending::Heard(h) => {
            assert_eq!(h.answer, SpokenAnswer::Approve, "{:?}", round.judged);
            assert_eq!(h.utterances, 2, "{:?}", round.judged);
            assert!(!h.transcript.to_lowercase().contains("time"), "{h:?}");
        }
        other => panic!("{other:?}: {:?}", round.judged),
    }
}

#[test]
fn an_approval_needs_every_view_to_read_it() {
    // With one view the stream's reading decides; with two the utterance is read again from
    // another start. A clear "yes" reads the same both ways.
    let dir = tempfile::tempdir().unwrap();
    let yes = say(dir.path(), "yes", "en-us", "yes", 0.6);
    for views in [1, 2, 3] {
        let config = Config {
            moonshine_views: views,
            ..config()
        };
        let round = round_from_wav(model().as_ref(), pack(), &config, None, &yes).unwrap();
        assert_eq!(
            decided(&round),
            Some(SpokenAnswer::Approve),
            "{views} views: {:?}",
            round.judged
        );
        let shown = round.judged.last().cloned().unwrap_or_default();
        // The judged line lists the views' texts, quoted.
        assert_eq!(
            shown.matches('"').count(),
            2 * views as usize,
            "each view read it: {shown}"
        );
    }
}
