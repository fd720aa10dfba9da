//! Hostile conditions for a voice + visual prompt, through the real protocol with real audio
//! (espeak-ng fixtures read by the compositor's own cpal capture through the ALSA `file` PCM,
//! recognized by the Korean Vosk model): the microphone lost after the click (attack 1, a prompt
//! must always end) and a "yes" played through the speakers with nobody at the dialog (attack
//! 11, voice alone never approves).
//!
//! Every test holds `harness::voice::alsa`'s guard for its whole run (ALSA reads the file names
//! from the environment).

mod harness;

use pcp_gate::Modality;
use pcp_overlay::Control;
use pcp_speech::{Config, SpeechEngine};
use serde_json::json;

use harness::voice::{alsa, capture_from, config, encoding, model, placeholder};
use harness::{Fixture, audio, intent};

const ONE: &[&str] = &["1920x1080@0,0"];

fn delete() -> pcp_protocol::client::Submission {
    intent("file.delete", json!({"path": "/tmp/report.txt"}))
}

#[test]
fn attack1_the_click_given_then_the_microphone_lost_the_prompt_still_ends() {
    let dir = tempfile::tempdir().unwrap();
    let _g = alsa(dir.path(), &placeholder(dir.path()));
    let quiet = audio::silence(dir.path(), &encoding()).unwrap();
    // A microphone of its own, in a config file of its own, so it can be unplugged.
    let conf = dir.path().join("mic.conf");
    std::fs::write(&conf, audio::mic_conf(&quiet)).unwrap();
    // SAFETY: `_g` is the harness's ALSA guard.
    unsafe { std::env::set_var("ALSA_CONFIG_PATH", audio::alsa_config_path(&conf)) };
    let cfg = Config {
        input_device: audio::MIC.into(),
        ..config()
    };
    let engine = SpeechEngine::with_model(cfg, model()).expect("engine");
    assert_eq!(engine.available(), Ok(()), "the test microphone is listed");
    let mut fx = Fixture::with_devices(ONE, "", Some(engine), None);
    let c = fx.submit(delete());
    let (_, modalities) = fx.pending(&c);
    assert_eq!(modalities, ["voice", "visual"]);
    // The user clicks Approve; voice is still to come.
    fx.advance_clock(1000);
    fx.click(Control::Approve);
    assert!(fx.answered(Modality::Visual));
    // The microphone is unplugged.
    let gone = dir.path().join("mic.conf.new");
    std::fs::write(&gone, "# the microphone was unplugged\n").unwrap();
    std::fs::rename(&gone, &conf).unwrap();
    fx.pump_until("voice to be dropped", |fx| {
        fx.gate()
            .active()
            .is_some_and(|p| !p.plan.modalities.contains(&Modality::Voice))
    });
    // Nothing more comes from the user: the prompt does not hold the dialog forever.
    assert!(fx.dialog_open());
    assert!(fx.seconds_left().is_some(), "no deadline left");
    fx.advance_clock(31_000);
    let d = fx.decision(&c);
    assert!(!d.approved, "{d:?}");
    assert_eq!(d.resolution, "confirmation.timeout");
    fx.pump_until("the dialog to close", |fx| !fx.dialog_open());
}

#[test]
fn attack11_a_yes_from_the_speakers_alone_never_approves() {
    let dir = tempfile::tempdir().unwrap();
    let _g = alsa(dir.path(), &placeholder(dir.path()));
    let yes = audio::speech(dir.path(), "yes", "네", &encoding()).unwrap();
    capture_from(&yes);
    let engine = SpeechEngine::with_model(config(), model()).expect("engine");
    let mut fx = Fixture::with_devices(ONE, "", Some(engine), None);
    let c = fx.submit(delete());
    fx.pending(&c);
    fx.pump_until("the played answer", |fx| fx.answered(Modality::Voice));
    // Nobody is at the dialog: however long it waits, voice alone does not decide.
    for _ in 0..30 {
        fx.advance_clock(1000);
        fx.pump();
        if fx.gate().active().is_none() {
            break;
        }
    }
    let d = fx.decision(&c);
    assert!(!d.approved, "{d:?}");
    assert_eq!(d.resolution, "confirmation.timeout");
}

#[test]
fn attack2_a_question_that_cannot_be_spoken_is_still_listened_for() {
    let dir = tempfile::tempdir().unwrap();
    let _g = alsa(dir.path(), &placeholder(dir.path()));
    let yes = audio::speech(dir.path(), "yes", "네", &encoding()).unwrap();
    capture_from(&yes);
    // The question is spoken, in a voice espeak-ng does not have: synthesis fails.
    let cfg = Config {
        speak_prompt: true,
        voice: "no-such-voice".into(),
        ..config()
    };
    let engine = SpeechEngine::with_model(cfg, model()).expect("engine");
    let mut fx = Fixture::with_devices(ONE, "", Some(engine), None);
    let c = fx.submit(delete());
    let (_, modalities) = fx.pending(&c);
    assert_eq!(modalities, ["voice", "visual"]);
    // The answer is still heard: voice was not dropped for the question's failure.
    fx.pump_until("the spoken answer", |fx| {
        assert!(
            fx.gate()
                .active()
                .is_some_and(|p| p.plan.modalities.contains(&Modality::Voice)),
            "the voice step was dropped"
        );
        fx.answered(Modality::Voice)
    });
    fx.advance_clock(1000);
    fx.click(Control::Approve);
    let d = fx.decision(&c);
    assert_eq!(d.resolution, "user_approved", "{d:?}");
}
