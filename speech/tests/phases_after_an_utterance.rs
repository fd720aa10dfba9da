//! The decoder phases after an utterance was judged. Vosk starts a new feature pipeline after
//! the final result the recognizer forces, so each phase's shift against the model's frames must
//! be put in front of its audio again: the next utterance (the repeat after "didn't catch that")
//! is then heard by every phase at its own alignment, exactly as a recognizer that starts at
//! that point hears it. Without that, every phase heard it at the first phase's alignment.

mod common;

use std::sync::Arc;

use common::{Encoding, model, speech};
use pcp_speech::recognize::AnswerRecognizer;
use pcp_speech::{Config, PhrasePack};

/// 20 ms at the model's 16 kHz: the capture path hands the recognizer blocks of this size.
const BLOCK: usize = 320;

fn samples(path: &std::path::Path) -> Vec<i16> {
    std::fs::read(path)
        .unwrap()
        .chunks_exact(2)
        .map(|b| i16::from_le_bytes([b[0], b[1]]))
        .collect()
}

/// A judged line without its time (samples since the recognizer started, which differ).
fn untimed(line: &str) -> &str {
    line.split_once(' ').map_or(line, |(_, rest)| rest)
}

/// Feeds `audio` block by block until an answer is decided, Kaldi's dither seeded first: it
/// draws every frame's noise from libc's `rand()`, so two recognizers fed this way draw the same
/// noise (on digital silence the dither is all there is to hear).
fn feed_from_seed(
    recognizer: &mut AnswerRecognizer,
    audio: &[i16],
) -> Option<pcp_speech::recognize::Heard> {
    // SAFETY: srand has no preconditions; this binary holds one test.
    unsafe { libc::srand(1) };
    audio
        .chunks(BLOCK)
        .find_map(|block| recognizer.feed(block).unwrap())
}

#[test]
fn after_a_judged_utterance_each_phase_hears_at_its_own_alignment_again() {
    let dir = tempfile::tempdir().unwrap();
    // "예" decides nothing on a prompt without a challenge word; "아니요" then denies.
    let clip = |name: &str, text: &str, pads| {
        samples(&speech(
            dir.path(),
            name,
            text,
            16_000,
            1,
            Encoding::I16,
            pads,
        ))
    };
    let mut audio = clip("first.raw", "예", (0.3, 0.6));
    audio.extend(clip("second.raw", "아니요", (0.4, 0.8)));
    let config = Config {
        // One after the other, so each phase draws Kaldi's dither in the same order.
        parallel_phases: false,
        ..Config::for_language("ko")
    };
    let pack = Arc::new(PhrasePack::load(None, "ko").unwrap());
    let model = model();
    assert_eq!(config.decoder_phases, 2, "the shipped default");

    let mut whole = AnswerRecognizer::new(&model, pack.clone(), &config).unwrap();
    let mut fed = 0;
    while whole.judged().is_empty() {
        let block = &audio[fed..(fed + BLOCK).min(audio.len())];
        assert!(!block.is_empty(), "the first utterance was never judged");
        assert_eq!(whole.feed(block).unwrap(), None, "{:?}", whole.judged());
        fed += block.len();
    }
    let restart = fed;
    let decided = feed_from_seed(&mut whole, &audio[restart..]);
    // A recognizer that starts where the first utterance was judged, on the same blocks.
    let mut fresh = AnswerRecognizer::new(&model, pack, &config).unwrap();
    let fresh_decided = feed_from_seed(&mut fresh, &audio[restart..]);
    let second = whole.judged().get(1).map(|l| untimed(l));
    let first_of_fresh = fresh.judged().first().map(|l| untimed(l));
    assert!(
        second.is_some() && second == first_of_fresh,
        "the second utterance, heard after a restart: {:#?}\nthe same audio heard by a fresh \
         recognizer: {:#?}",
        whole.judged(),
        fresh.judged()
    );
    assert_eq!(decided.map(|h| h.answer), fresh_decided.map(|h| h.answer));
}
