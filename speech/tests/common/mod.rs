//! Shared test support: the Korean model loaded once per test binary, speech fixtures made with
//! espeak-ng and sox (`-R`, so they are identical run to run) padded with true silence, and the
//! device path: ALSA's default PCM pointed at fixture files, a 44.1 kHz stereo capture config and
//! one listen through it. (The end-to-end tests' `harness::voice` has the same model and device
//! set-up for a compositor; this crate cannot use it: that harness lives in the `pcp-tests`
//! package, which has no library and depends on this one.)

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, OnceLock};

use pcp_speech::capture::{choose_input_config, input_device};
use pcp_speech::listen::run_with_model;
use pcp_speech::{Config, ListenInput, ListenOptions, ListenReport, SpeechModel};

/// The model, loaded on first use and shared by every test in the binary.
pub fn model() -> Arc<SpeechModel> {
    static MODEL: OnceLock<Arc<SpeechModel>> = OnceLock::new();
    MODEL
        .get_or_init(|| {
            // The default config: the Korean model with the default decoder options, as the
            // compositor loads it.
            Arc::new(
                SpeechModel::load_configured(&Config::for_language("ko"))
                    .expect("the Korean model (run `cargo xtask setup`)"),
            )
        })
        .clone()
}

/// How a fixture is encoded.
#[derive(Debug, Clone, Copy)]
pub enum Encoding {
    I16,
    F32,
}

fn run(cmd: &mut Command) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Speaks `text` (espeak-ng voice `ko`) and writes `name` (`.wav` or `.raw`) in `dir` at `rate`
/// Hz with `channels` channels, `lead` s of silence before and `tail` s after.
pub fn speech(
    dir: &Path,
    name: &str,
    text: &str,
    rate: u32,
    channels: u16,
    enc: Encoding,
    pads: (f32, f32),
) -> PathBuf {
    speech_at(dir, name, text, None, rate, channels, enc, pads)
}

/// Like [`speech`], spoken at `wpm` words per minute (espeak-ng's `-s`; `None`: its default).
#[allow(clippy::too_many_arguments)]
pub fn speech_at(
    dir: &Path,
    name: &str,
    text: &str,
    wpm: Option<u32>,
    rate: u32,
    channels: u16,
    enc: Encoding,
    (lead, tail): (f32, f32),
) -> PathBuf {
    let spoken = dir.join(format!("{name}.espeak.wav"));
    let mut espeak = Command::new("espeak-ng");
    espeak.args(["-v", "ko"]);
    if let Some(wpm) = wpm {
        espeak.args(["-s", &wpm.to_string()]);
    }
    run(espeak.arg("-w").arg(&spoken).arg(text));
    let out = dir.join(name);
    let mut sox = Command::new("sox");
    sox.arg("-R").arg(&spoken);
    sox.args(["-r", &rate.to_string(), "-c", &channels.to_string()]);
    match enc {
        Encoding::I16 => sox.args(["-b", "16", "-e", "signed-integer"]),
        Encoding::F32 => sox.args(["-b", "32", "-e", "floating-point"]),
    };
    sox.arg(&out)
        .args(["pad", &lead.to_string(), &tail.to_string()]);
    run(&mut sox);
    out
}

/// `seconds` of true digital silence as `name` in `dir`.
pub fn silence(
    dir: &Path,
    name: &str,
    seconds: f32,
    rate: u32,
    channels: u16,
    enc: Encoding,
) -> PathBuf {
    let out = dir.join(name);
    let mut sox = Command::new("sox");
    sox.args([
        "-R",
        "-n",
        "-r",
        &rate.to_string(),
        "-c",
        &channels.to_string(),
    ]);
    match enc {
        Encoding::I16 => sox.args(["-b", "16", "-e", "signed-integer"]),
        Encoding::F32 => sox.args(["-b", "32", "-e", "floating-point"]),
    };
    sox.arg(&out).args(["trim", "0", &seconds.to_string()]);
    run(&mut sox);
    out
}

/// Points ALSA's default PCM (assets/alsa/pcp-test.conf) at `capture` and its playback at
/// `playback`. ALSA reads these when a PCM opens.
///
/// # Safety
/// No other thread may read or write the environment meanwhile (the caller holds its binary's
/// lock, or is the binary's only test).
pub unsafe fn point_alsa_at(capture: &Path, playback: &Path) {
    let ours = Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets/alsa/pcp-test.conf");
    // SAFETY: the caller's contract.
    unsafe {
        std::env::set_var(
            "ALSA_CONFIG_PATH",
            format!("/usr/share/alsa/alsa.conf:{}", ours.display()),
        );
        std::env::set_var("PCP_ALSA_CAPTURE_FILE", capture);
        std::env::set_var("PCP_ALSA_PLAYBACK_FILE", playback);
    }
}

/// A config that captures 44.1 kHz stereo, so downmixing and resampling both run.
pub fn device_config() -> Config {
    Config {
        capture_rate: 44_100,
        capture_channels: 2,
        speak_prompt: false,
        ..Config::for_language("ko")
    }
}

/// The encoding the device opens with for `config` (a fixture must match it byte for byte).
pub fn device_encoding(config: &Config) -> Encoding {
    let device = input_device(&config.input_device).unwrap();
    let chosen = choose_input_config(&device, config).unwrap();
    assert_eq!((chosen.sample_rate().0, chosen.channels()), (44_100, 2));
    match chosen.sample_format() {
        cpal::SampleFormat::I16 => Encoding::I16,
        cpal::SampleFormat::F32 => Encoding::F32,
        other => panic!("fixture encoding for {other} not written"),
    }
}

/// One answer heard through the default capture device with `config`.
pub fn listen_device(config: &Config) -> ListenReport {
    let options = ListenOptions {
        model: None,
        input: ListenInput::Device(None),
        lang: None,
        timeout: None,
        config: config.clone(),
    };
    run_with_model(&model(), options).unwrap()
}
