//! Spoken test audio: espeak-ng speech and true digital silence, written as raw samples in the
//! encoding a capture device opens with, for the ALSA `file` PCM to play into the compositor's
//! real cpal capture.

use std::path::{Path, PathBuf};
use std::process::Command;

use pcp_speech::Config;
use pcp_speech::capture::{choose_input_config, input_device};

/// How the configured input device opens: what a fixture's raw samples must be.
#[derive(Debug, Clone, Copy)]
pub struct Encoding {
    pub rate: u32,
    pub channels: u16,
    /// sox's `-b BITS -e ENCODING` for the sample format.
    sox: [&'static str; 4],
}

/// The encoding `config`'s input device opens with (found the way the compositor finds it).
/// An error names the device and why it cannot be opened.
pub fn encoding(config: &Config) -> Result<Encoding, String> {
    let name = &config.input_device;
    let device =
        input_device(name).map_err(|e| format!("the input device {name:?} is not usable: {e}"))?;
    let chosen = choose_input_config(&device, config)
        .map_err(|e| format!("the input device {name:?} has no usable capture config: {e}"))?;
    let sox = match chosen.sample_format() {
        cpal::SampleFormat::I16 => ["-b", "16", "-e", "signed-integer"],
        cpal::SampleFormat::F32 => ["-b", "32", "-e", "floating-point"],
        other => {
            return Err(format!(
                "the input device {name:?} captures {other} samples, which the test audio is \
                 not written in (16-bit integer or 32-bit float only)"
            ));
        }
    };
    Ok(Encoding {
        rate: chosen.sample_rate().0,
        channels: chosen.channels(),
        sox,
    })
}

/// Runs `cmd` to its end. An error names the command line and says why it failed: it could not
/// start (e.g. not installed), or it exited unsuccessfully, with its stderr.
fn run(cmd: &mut Command) -> Result<(), String> {
    let line = std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(|a| a.to_string_lossy())
        .collect::<Vec<_>>()
        .join(" ");
    let out = cmd
        .output()
        .map_err(|e| format!("`{line}` could not be run: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    Err(format!(
        "`{line}` failed ({}): {}",
        out.status,
        match stderr.trim() {
            "" => "nothing on stderr",
            said => said,
        }
    ))
}

/// `text` spoken by espeak-ng (voice `ko`), 0.5 s of true silence before and 1.5 s after, as
/// `dir/<name>.raw`. sox's `-R` keeps the conversion deterministic (no dither). An error names
/// the command that failed and its stderr.
pub fn speech(dir: &Path, name: &str, text: &str, encoding: &Encoding) -> Result<PathBuf, String> {
    let spoken = dir.join(format!("{name}.wav"));
    run(Command::new("espeak-ng")
        .args(["-v", "ko", "-w"])
        .arg(&spoken)
        .arg(text))?;
    let out = dir.join(format!("{name}.raw"));
    run(Command::new("sox")
        .arg("-R")
        .arg(&spoken)
        .arg("-r")
        .arg(encoding.rate.to_string())
        .arg("-c")
        .arg(encoding.channels.to_string())
        .args(encoding.sox)
        .arg(&out)
        .args(["pad", "0.5", "1.5"]))?;
    Ok(out)
}

/// One second of true digital silence as `dir/silence.raw` (at its end the ALSA `file` plugin
/// repeats its last, silent, period). An error names the sox command and its stderr.
pub fn silence(dir: &Path, encoding: &Encoding) -> Result<PathBuf, String> {
    let out = dir.join("silence.raw");
    run(Command::new("sox")
        .args(["-R", "-n", "-r"])
        .arg(encoding.rate.to_string())
        .arg("-c")
        .arg(encoding.channels.to_string())
        .args(encoding.sox)
        .arg(&out)
        .args(["trim", "0", "1"]))?;
    Ok(out)
}

/// The unpluggable test microphone's PCM name. It is `oss` because cpal lists only its built-in
/// names (`default`, `pipewire`, `pulse`, `jack`, `oss`) and sound cards, and this machine
/// defines no `oss` PCM of its own: without [`mic_conf`]'s file the device is not there.
pub const MIC: &str = "oss";

/// An ALSA config defining the [`MIC`] capture PCM, reading `capture`. Replacing the file with
/// one that does not define it unplugs the microphone.
pub fn mic_conf(capture: &Path) -> String {
    format!(
        "pcm.oss {{\n type file\n slave.pcm \"null\"\n format \"raw\"\n truncate false\n \
         file \"/dev/null\"\n infile {capture:?}\n }}\n"
    )
}

/// `ALSA_CONFIG_PATH` for the test PCMs (assets/alsa/pcp-test.conf) plus the config file
/// `extra` (e.g. one written by [`mic_conf`]).
pub fn alsa_config_path(extra: &Path) -> std::ffi::OsString {
    let mut path = std::ffi::OsString::from("/usr/share/alsa/alsa.conf:");
    path.push(super::assets().join("alsa/pcp-test.conf"));
    path.push(":");
    path.push(extra);
    path
}
