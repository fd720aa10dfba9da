//! The voice tests' shared set-up: the Korean model loaded once per test binary (with the
//! default decoder options, as the compositor loads it), a capture config that makes the
//! compositor downmix and resample, and ALSA's default PCM pointed at fixture files under one
//! lock per binary (ALSA reads the file names from the environment when a PCM opens, so a test
//! holds the lock for its whole run and nothing else in the binary touches the environment).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use pcp_speech::{Config, SpeechModel};

use super::{alsa_file_env, audio};

static ALSA: Mutex<()> = Mutex::new(());

/// The Korean model with the default config's decoder options, loaded on first use and shared
/// by every compositor of the binary.
pub fn model() -> Arc<SpeechModel> {
    static MODEL: OnceLock<Arc<SpeechModel>> = OnceLock::new();
    MODEL
        .get_or_init(|| {
            Arc::new(
                SpeechModel::load_configured(&Config::for_language("ko"))
                    .expect("the Korean model (run `cargo xtask setup`)"),
            )
        })
        .clone()
}

/// Captures 44.1 kHz stereo (so the compositor's capture downmixes and resamples); the question
/// is not spoken, so the answer is all that is heard. No risk class asks for a challenge word,
/// so a bare "네" answers the voice step (a test of the challenge turns the default back on).
pub fn config() -> Config {
    Config {
        capture_rate: 44_100,
        capture_channels: 2,
        speak_prompt: false,
        challenge: Vec::new(),
        ..Config::for_language("ko")
    }
}

/// Points ALSA's default PCM at `capture` (and its playback into `dir/played.raw`) for as long
/// as the returned guard lives.
pub fn alsa(dir: &Path, capture: &Path) -> MutexGuard<'static, ()> {
    let guard = ALSA.lock().unwrap_or_else(|e| e.into_inner());
    for (key, value) in alsa_file_env(capture, &dir.join("played.raw")) {
        // SAFETY: only tests holding `ALSA` read or write the environment in this binary.
        unsafe { std::env::set_var(key, value) };
    }
    guard
}

/// Points the capture at `file` (the caller holds [`alsa`]'s guard).
pub fn capture_from(file: &Path) {
    // SAFETY: the caller holds `ALSA`.
    unsafe { std::env::set_var("PCP_ALSA_CAPTURE_FILE", file) };
}

/// A placeholder capture file: the device is opened to learn its format before the fixtures
/// are made in it.
pub fn placeholder(dir: &Path) -> PathBuf {
    let p = dir.join("none.raw");
    std::fs::write(&p, [0u8; 8192]).expect("writing the placeholder capture file");
    p
}

/// The encoding the device opens with for [`config`]: 44.1 kHz stereo (the fixtures are made
/// in it).
pub fn encoding() -> audio::Encoding {
    let encoding = audio::encoding(&config()).expect("the capture encoding");
    assert_eq!((encoding.rate, encoding.channels), (44_100, 2));
    encoding
}
