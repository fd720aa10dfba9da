//! Shared test support: the Korean model loaded once per test binary, and speech fixtures made
//! with espeak-ng and sox (`-R`, so they are identical run to run) padded with true silence.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, OnceLock};

use pcp_speech::SpeechModel;
use pcp_speech::model::find_model;

/// The model, loaded on first use and shared by every test in the binary.
pub fn model() -> Arc<SpeechModel> {
    static MODEL: OnceLock<Arc<SpeechModel>> = OnceLock::new();
    MODEL
        .get_or_init(|| {
            let dir = find_model(None, "ko").expect("the Korean model (run `cargo xtask setup`)");
            Arc::new(SpeechModel::load(&dir).expect("model loads"))
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
