//! "네" (yes) as the first thing a process hears, through the real device path (ALSA `file` PCM
//! → cpal at 44.1 kHz stereo → resampler → Vosk). This binary holds only this test, so the first
//! recognizer below really is the first of the process: Kaldi dithers with libc's process-wide
//! `rand()`, so a process's first utterance always gets the same noise, and before the decoder
//! phases (see `recognize`) espeak-ng's "네" decoded to nothing exactly there, while it worked
//! after any other utterance. It must work first, after other answers, spoken slower and
//! faster, and after a longer silence (and spoken much slower, decide nothing else).

mod common;

use common::{device_config, device_encoding, listen_device, point_alsa_at, speech_at};
use pcp_speech::ReportAnswer;

#[test]
fn ne_is_heard_first_after_other_answers_at_other_rates_and_after_longer_silence() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.raw");
    let cfg = device_config();
    // The plugin opens its input file even to list formats: silence until a fixture.
    let placeholder = dir.path().join("none.raw");
    std::fs::write(&placeholder, [0u8; 8192]).unwrap();
    // SAFETY: the only test of this binary; no other thread reads the environment.
    unsafe { point_alsa_at(&placeholder, &out) };
    let enc = device_encoding(&cfg);
    // (text, espeak-ng rate, lead and tail silence, the answers that are right); the first row
    // is the process's first utterance. At 150 wpm and slower, espeak-ng's "네" is about as close
    // to the decoy "메" as to "네" for the model (it leads "메" by 0.1 to 0.5), and doubt decides
    // nothing: there the test asks only that nothing else is decided.
    const APPROVE: &[ReportAnswer] = &[ReportAnswer::Approve];
    let cases = [
        ("네", None, (0.5, 1.5), APPROVE),
        ("아니요", None, (0.5, 1.5), &[ReportAnswer::Deny][..]),
        ("네", None, (0.5, 1.5), APPROVE),
        ("네", Some(155), (0.5, 1.5), APPROVE),
        (
            "네",
            Some(130),
            (0.5, 1.5),
            &[ReportAnswer::Approve, ReportAnswer::None][..],
        ),
        ("네", Some(200), (0.5, 1.5), APPROVE),
        ("네", None, (2.0, 1.5), APPROVE),
        ("취소", None, (0.5, 1.5), &[ReportAnswer::Cancel][..]),
    ];
    let mut wrong = Vec::new();
    for (i, (text, wpm, pads, want)) in cases.into_iter().enumerate() {
        let raw = speech_at(
            dir.path(),
            &format!("{i}.raw"),
            text,
            wpm,
            44_100,
            2,
            enc,
            pads,
        );
        // SAFETY: as above.
        unsafe { point_alsa_at(&raw, &out) };
        let report = listen_device(&cfg);
        if !want.contains(&report.answer) {
            wrong.push(format!(
                "#{i} {text} at {wpm:?} wpm, pads {pads:?}: {report:?}"
            ));
        }
        // Decided within about a second of the word's end, not by Vosk's 5 s end of utterance.
        let limit_ms = ((pads.0 + 2.0) * 1000.0) as u64;
        if report.answer != ReportAnswer::None && report.audio_ms > limit_ms {
            wrong.push(format!("#{i} {text}: decided late, {report:?}"));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}
