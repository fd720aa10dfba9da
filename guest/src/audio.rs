//! The spoken answer played into the playback side of the ALSA loopback (`snd-aloop`), whose
//! capture side is the compositor's microphone. Through `plughw` ALSA converts the clip to
//! whatever format and rate the capture side already runs at (the loopback makes both sides
//! agree).

use std::path::Path;

use alsa::pcm::{Access, Format, HwParams, PCM};
use alsa::{Direction, ValueOr};
use anyhow::{Context, Result, bail};

/// The loopback's second device: what is played into it the compositor captures from the
/// first (cpal's `Loopback`).
pub const SPEAKER: &str = "plughw:CARD=Loopback,DEV=1";

/// The ALSA configuration of the session's user (`~/.asoundrc`): the default PCM captures from
/// the loopback's first device (what is played into its second comes out there, subdevice by
/// subdevice) and plays into nothing (the question is not spoken in the VM).
pub const ASOUNDRC: &str = "# Written by pcp-guest: the loopback's capture side is the microphone.
pcm.!default {
    type asym
    playback.pcm \"null\"
    capture.pcm \"plughw:CARD=Loopback,DEV=0\"
}
";

/// A clip read and a playback device opened and set up ahead of time, so that playing it once
/// the microphone opens costs only the writes: on the emulated CPU reading the file and opening
/// the device took seconds, out of the voice deadline.
pub struct Player {
    pcm: PCM,
    samples: Vec<i16>,
    channels: usize,
    rate: u32,
    device: String,
}

impl Player {
    /// Reads the 16-bit WAV file `wav` and opens `device` at its rate and channel count.
    pub fn open(device: &str, wav: &Path) -> Result<Player> {
        let mut reader = hound::WavReader::open(wav)
            .with_context(|| format!("cannot read {}", wav.display()))?;
        let spec = reader.spec();
        if spec.bits_per_sample != 16 || spec.sample_format != hound::SampleFormat::Int {
            bail!("{} is not 16-bit PCM", wav.display());
        }
        let samples: Vec<i16> = reader
            .samples::<i16>()
            .collect::<Result<_, _>>()
            .with_context(|| format!("cannot read the samples of {}", wav.display()))?;
        let pcm = PCM::new(device, Direction::Playback, false)
            .with_context(|| format!("cannot open ALSA device {device}"))?;
        {
            let hw = HwParams::any(&pcm)?;
            hw.set_channels(u32::from(spec.channels))?;
            hw.set_rate(spec.sample_rate, ValueOr::Nearest)?;
            hw.set_format(Format::s16())?;
            hw.set_access(Access::RWInterleaved)?;
            pcm.hw_params(&hw)
                .with_context(|| format!("{device} refuses {} Hz 16-bit", spec.sample_rate))?;
        }
        Ok(Player {
            pcm,
            samples,
            channels: usize::from(spec.channels),
            rate: spec.sample_rate,
            device: device.to_string(),
        })
    }

    /// Plays the clip and waits until it has been played out. Returns its length in seconds.
    pub fn play(self) -> Result<f64> {
        let io = self.pcm.io_i16()?;
        let mut at = 0;
        while at < self.samples.len() {
            match io.writei(&self.samples[at..]) {
                Ok(frames) => at += frames * self.channels,
                Err(e) => self
                    .pcm
                    .try_recover(e, true)
                    .with_context(|| format!("playing on {}", self.device))?,
            }
        }
        self.pcm.drain()?;
        Ok(self.samples.len() as f64 / self.channels as f64 / f64::from(self.rate))
    }
}

/// Writes the loopback card's proc files (its cables and each substream's status) to `file`.
pub fn write_loopback_state(file: &Path) {
    let mut text = String::new();
    let card = Path::new("/proc/asound/Loopback");
    let mut paths = Vec::new();
    if let Ok(entries) = std::fs::read_dir(card) {
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                for sub in std::fs::read_dir(&path).into_iter().flatten().flatten() {
                    let status = sub.path().join("status");
                    if status.exists() {
                        paths.push(status);
                    }
                }
            } else {
                paths.push(path);
            }
        }
    }
    paths.sort();
    for path in paths {
        let body = std::fs::read_to_string(&path).unwrap_or_else(|e| format!("({e})\n"));
        if body.trim() != "closed" {
            text.push_str(&format!("== {}\n{body}", path.display()));
        }
    }
    let _ = std::fs::write(file, text);
}
