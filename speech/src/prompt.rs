//! The spoken question: espeak-ng (through `espeakng-sys`) synthesizes the text in the
//! configured voice, and cpal plays it on the configured output device. Listening starts only
//! after `speak` returns, so the microphone never hears the question as an answer.

use std::ffi::{CString, c_int, c_short, c_void};
use std::sync::Mutex;
use std::sync::mpsc::sync_channel;
use std::time::Duration;

use cpal::traits::{DeviceTrait, StreamTrait};
use cpal::{FromSample, Sample, SampleFormat, SizedSample, StreamConfig};
use espeakng_sys as es;
use tracing::debug;

use crate::capture::{Direction, find_device};
use crate::config::Config;
use crate::convert::Converter;
use crate::error::SpeechError;

pub(crate) const OUTPUT: &str = "output";

/// Extra wall time allowed for playback beyond the audio's own length.
const PLAYBACK_GRACE: Duration = Duration::from_secs(2);

/// espeak-ng keeps global state and is not thread-safe: every call holds this lock. The value is
/// the library's output rate once initialised.
static ESPEAK: Mutex<Option<u32>> = Mutex::new(None);

/// Synthesized speech: mono `i16` samples at `rate` Hz.
#[derive(Debug, Clone)]
pub struct Synthesized {
    pub samples: Vec<i16>,
    pub rate: u32,
}

impl Synthesized {
    /// Length in milliseconds.
    pub fn duration_ms(&self) -> u64 {
        self.samples.len() as u64 * 1000 / u64::from(self.rate.max(1))
    }
}

unsafe extern "C" fn collect(
    wav: *mut c_short,
    count: c_int,
    events: *mut es::espeak_EVENT,
) -> c_int {
    // SAFETY: espeak-ng passes `count` valid samples at `wav` (or null at the end) and an event
    // list whose first entry carries the `user_data` we gave `espeak_Synth`: a live
    // `*mut Vec<i16>` owned by `synthesize`, which is blocked in that call.
    unsafe {
        if wav.is_null() || count <= 0 || events.is_null() {
            return 0;
        }
        let out = (*events).user_data.cast::<Vec<i16>>();
        if let Some(out) = out.as_mut() {
            out.extend_from_slice(std::slice::from_raw_parts(wav, count as usize));
        }
    }
    0
}

/// Synthesizes `text` with espeak-ng in `config`'s voice (its language's when the voice is left
/// to the phrase pack and no engine filled it in), rate and pitch.
pub fn synthesize(text: &str, config: &Config) -> Result<Synthesized, SpeechError> {
    let voice = if config.voice.trim().is_empty() {
        config.language()
    } else {
        config.voice.clone()
    };
    let fail = |reason: String| SpeechError::Synthesis {
        voice: voice.clone(),
        reason,
    };
    let text_c = CString::new(text).map_err(|_| fail("the text has a NUL byte".into()))?;
    let voice_c =
        CString::new(voice.as_str()).map_err(|_| fail("the voice name has a NUL byte".into()))?;
    let mut guard = ESPEAK
        .lock()
        .map_err(|_| fail("a thread panicked inside espeak-ng".into()))?;
    let rate = match *guard {
        Some(rate) => rate,
        None => {
            // SAFETY: called under the lock; DONT_EXIT keeps espeak-ng from exiting the process
            // when its data is missing.
            let rate = unsafe {
                es::espeak_Initialize(
                    es::espeak_AUDIO_OUTPUT_AUDIO_OUTPUT_SYNCHRONOUS,
                    0,
                    std::ptr::null(),
                    es::espeakINITIALIZE_DONT_EXIT as c_int,
                )
            };
            if rate <= 0 {
                return Err(fail(
                    "espeak-ng failed to initialise (is espeak-ng-data installed?)".into(),
                ));
            }
            // SAFETY: `collect` matches `t_espeak_callback`.
            unsafe { es::espeak_SetSynthCallback(Some(collect)) };
            *guard = Some(rate as u32);
            rate as u32
        }
    };
    // SAFETY: under the lock, with valid C strings.
    unsafe {
        if es::espeak_SetVoiceByName(voice_c.as_ptr()) != es::espeak_ERROR_EE_OK {
            return Err(fail("espeak-ng has no such voice".into()));
        }
        es::espeak_SetParameter(
            es::espeak_PARAMETER_espeakRATE,
            config.speech_rate_wpm as c_int,
            0,
        );
        es::espeak_SetParameter(es::espeak_PARAMETER_espeakPITCH, config.pitch as c_int, 0);
    }
    let mut samples: Vec<i16> = Vec::new();
    let bytes = text_c.as_bytes_with_nul();
    // SAFETY: synchronous mode: `collect` runs inside this call, while `samples` is alive.
    let status = unsafe {
        es::espeak_Synth(
            bytes.as_ptr().cast::<c_void>(),
            bytes.len(),
            0,
            es::espeak_POSITION_TYPE_POS_CHARACTER,
            0,
            es::espeakCHARS_UTF8,
            std::ptr::null_mut(),
            (&mut samples as *mut Vec<i16>).cast::<c_void>(),
        )
    };
    drop(guard);
    if status != es::espeak_ERROR_EE_OK {
        return Err(fail(format!("espeak_Synth failed with status {status}")));
    }
    if samples.is_empty() {
        return Err(fail("espeak-ng produced no audio".into()));
    }
    Ok(Synthesized { samples, rate })
}

/// How the question was played.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Playback {
    pub device: String,
    pub rate: u32,
    pub channels: u16,
    pub format: SampleFormat,
    /// Frames written (at `rate`), the question's own length.
    pub frames: u64,
}

fn output_device(name: &str) -> Result<cpal::Device, SpeechError> {
    find_device(Direction::Output, name)
}

/// The output device's name, rate, channels and sample format, as `play` would open it.
pub fn output_config() -> Result<OutputFormat, SpeechError> {
    output_config_for(&Config::default().output_device)
}

/// Like [`output_config`] for a named device (empty: the default).
pub fn output_config_for(name: &str) -> Result<OutputFormat, SpeechError> {
    let device = output_device(name)?;
    let device_name = device.name().unwrap_or_else(|_| "(unnamed)".into());
    let c = device
        .default_output_config()
        .map_err(|e| SpeechError::DeviceUnavailable {
            direction: OUTPUT,
            name: device_name.clone(),
            reason: e.to_string(),
        })?;
    Ok(OutputFormat {
        device: device_name,
        rate: c.sample_rate().0,
        channels: c.channels(),
        format: c.sample_format(),
    })
}

/// An output device's stream format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputFormat {
    pub device: String,
    pub rate: u32,
    pub channels: u16,
    pub format: SampleFormat,
}

/// Plays `speech` on `config`'s output device and returns once it has been handed to the device
/// and `after_prompt_ms` has passed. The stream is closed before returning.
pub fn play(speech: &Synthesized, config: &Config) -> Result<Playback, SpeechError> {
    let device = output_device(&config.output_device)?;
    let name = device.name().unwrap_or_else(|_| "(unnamed)".into());
    let unavailable = |reason: String| SpeechError::DeviceUnavailable {
        direction: OUTPUT,
        name: name.clone(),
        reason,
    };
    let supported = device
        .default_output_config()
        .map_err(|e| unavailable(e.to_string()))?;
    let format = supported.sample_format();
    let stream_config: StreamConfig = supported.config();
    let rate = stream_config.sample_rate.0;

    let mut converter = Converter::new(speech.rate, rate)?;
    let mono: Vec<f32> = speech
        .samples
        .iter()
        .map(|s| f32::from_sample(*s))
        .collect();
    let mut audio = Vec::with_capacity(mono.len() * rate as usize / speech.rate as usize + 1024);
    converter.push(&mono, &mut audio)?;
    converter.flush(&mut audio)?;
    let frames = audio.len() as u64;

    let (done_tx, done_rx) = sync_channel::<()>(1);
    let stream = match format {
        SampleFormat::I16 => build_out::<i16>(&device, &stream_config, audio, done_tx),
        SampleFormat::I32 => build_out::<i32>(&device, &stream_config, audio, done_tx),
        SampleFormat::U8 => build_out::<u8>(&device, &stream_config, audio, done_tx),
        SampleFormat::U16 => build_out::<u16>(&device, &stream_config, audio, done_tx),
        SampleFormat::F32 => build_out::<f32>(&device, &stream_config, audio, done_tx),
        SampleFormat::F64 => build_out::<f64>(&device, &stream_config, audio, done_tx),
        other => return Err(unavailable(format!("unsupported sample format {other}"))),
    }
    .map_err(|e| unavailable(e.to_string()))?;
    stream.play().map_err(|e| unavailable(e.to_string()))?;
    let length = Duration::from_millis(frames * 1000 / u64::from(rate.max(1)));
    let finished = done_rx.recv_timeout(length + PLAYBACK_GRACE).is_ok();
    // Let the device play out its buffer before the microphone opens.
    std::thread::sleep(Duration::from_millis(config.after_prompt_ms));
    drop(stream);
    if !finished {
        return Err(SpeechError::Stream {
            name,
            reason: "playback of the question did not finish".into(),
        });
    }
    debug!(device = %name, rate, frames, "question played");
    Ok(Playback {
        device: name,
        rate,
        channels: stream_config.channels,
        format,
        frames,
    })
}

fn build_out<T>(
    device: &cpal::Device,
    config: &StreamConfig,
    audio: Vec<i16>,
    done: std::sync::mpsc::SyncSender<()>,
) -> Result<cpal::Stream, cpal::BuildStreamError>
where
    T: SizedSample + FromSample<i16>,
{
    let channels = usize::from(config.channels).max(1);
    let mut pos = 0usize;
    let mut signalled = false;
    device.build_output_stream(
        config,
        move |data: &mut [T], _: &cpal::OutputCallbackInfo| {
            for frame in data.chunks_mut(channels) {
                let s = audio.get(pos).copied().unwrap_or(0);
                pos += 1;
                frame.fill(T::from_sample(s));
            }
            if pos >= audio.len() && !signalled {
                signalled = true;
                let _ = done.try_send(());
            }
        },
        |e| tracing::warn!("audio output stream error: {e}"),
        None,
    )
}

/// Synthesizes and plays the question if `speak_prompt` is on; returns what was played.
pub fn speak(question: &str, config: &Config) -> Result<Option<Playback>, SpeechError> {
    if !config.speak_prompt {
        return Ok(None);
    }
    let speech = synthesize(question, config)?;
    play(&speech, config).map(Some)
}

/// The "didn't catch that" cue: two short tones (`[speech] earcon_hz`, `earcon_ms`) at a calm
/// level, made here rather than synthesized so it never sounds like a word.
pub fn earcon(config: &Config) -> Synthesized {
    const RATE: u32 = 16_000;
    let tone = (u64::from(config.earcon_ms) * u64::from(RATE) / 1000) as usize;
    let gap = tone / 2;
    let amplitude = f32::from(i16::MAX) * 0.25;
    let mut samples = Vec::with_capacity(tone * 2 + gap);
    for (i, hz) in [config.earcon_hz as f32, config.earcon_hz as f32 * 0.75]
        .into_iter()
        .enumerate()
    {
        if i > 0 {
            samples.extend(std::iter::repeat_n(0i16, gap));
        }
        for n in 0..tone {
            // A raised-cosine envelope: no click at either end.
            let envelope = 0.5 - 0.5 * (2.0 * std::f32::consts::PI * n as f32 / tone as f32).cos();
            let phase = 2.0 * std::f32::consts::PI * hz * n as f32 / RATE as f32;
            samples.push((amplitude * envelope * phase.sin()) as i16);
        }
    }
    Synthesized {
        samples,
        rate: RATE,
    }
}

/// Plays the earcon on its own thread, so listening goes on while it sounds; a failure is only
/// logged (the dialog's line says the same).
pub fn play_earcon(config: &Config) {
    let config = Config {
        after_prompt_ms: 0,
        ..config.clone()
    };
    let spawned = std::thread::Builder::new()
        .name("pcp-earcon".into())
        .spawn(move || {
            if let Err(e) = play(&earcon(&config), &config) {
                tracing::warn!("the missed-answer earcon could not be played: {e}");
            }
        });
    if let Err(e) = spawned {
        tracing::warn!("the missed-answer earcon could not be started: {e}");
    }
}
