//! Microphone capture through cpal: opens the configured input device (by name, else the
//! default) in whatever rate, sample format and channel count it offers, downmixes in the audio
//! callback and hands blocks over a bounded, blocking channel. The stream exists only while a
//! `Capture` does; dropping it closes the receiver first so a callback blocked on a full channel
//! wakes and the stream can stop.

use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, sync_channel};
use std::time::Duration;

use cpal::traits::{DeviceTrait, HostTrait, StreamTrait};
use cpal::{
    BufferSize, FromSample, SampleFormat, SizedSample, StreamConfig, SupportedBufferSize,
    SupportedStreamConfig,
};
use tracing::{debug, warn};

use crate::config::Config;
use crate::convert::downmix;
use crate::error::SpeechError;

const INPUT: &str = "input";
/// How long the audio thread sleeps on each repeated error report of a failed stream.
const ERROR_BACKOFF: Duration = Duration::from_millis(20);

/// What the callback sends: mono audio at the device rate, or the stream's error.
enum Block {
    Audio(Vec<f32>),
    Failed(String),
}

/// An open input stream and its receiving end.
pub struct Capture {
    // Field order matters: `rx` must be dropped before `stream` (see the module docs).
    rx: Option<Receiver<Block>>,
    stream: Option<cpal::Stream>,
    device_name: String,
    rate: u32,
    channels: u16,
    format: SampleFormat,
}

/// Finds an input device by name (empty: the default).
pub fn input_device(name: &str) -> Result<cpal::Device, SpeechError> {
    find_device(Direction::Input, name)
}

/// Which side of the audio a device is looked up for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direction {
    Input,
    Output,
}

/// Finds a device by exact name in one direction; an empty name is that direction's default.
pub(crate) fn find_device(direction: Direction, name: &str) -> Result<cpal::Device, SpeechError> {
    crate::alsa_log::route_alsa_errors();
    let host = cpal::default_host();
    let label = match direction {
        Direction::Input => INPUT,
        Direction::Output => crate::prompt::OUTPUT,
    };
    if name.is_empty() {
        let default = match direction {
            Direction::Input => host.default_input_device(),
            Direction::Output => host.default_output_device(),
        };
        return default.ok_or_else(|| SpeechError::NoDevice {
            direction: label,
            name: "(default)".into(),
        });
    }
    let devices: Result<Vec<cpal::Device>, _> = match direction {
        Direction::Input => host.input_devices().map(Iterator::collect),
        Direction::Output => host.output_devices().map(Iterator::collect),
    };
    let devices = devices.map_err(|e| SpeechError::DeviceUnavailable {
        direction: label,
        name: name.into(),
        reason: e.to_string(),
    })?;
    devices
        .into_iter()
        .find(|device| device.name().is_ok_and(|n| n == name))
        .ok_or_else(|| SpeechError::NoDevice {
            direction: label,
            name: format!("named `{name}`"),
        })
}

/// Picks the stream config: the device default, with the configured rate and channel count when
/// the device offers them. With both configured, the default is not looked up: the first of the
/// device's formats at that rate and count, 16-bit integer or else 32-bit float preferred.
pub fn choose_input_config(
    device: &cpal::Device,
    config: &Config,
) -> Result<SupportedStreamConfig, SpeechError> {
    let name = device.name().unwrap_or_else(|_| "(unnamed)".into());
    let unavailable = |reason: String| SpeechError::DeviceUnavailable {
        direction: INPUT,
        name: name.clone(),
        reason,
    };
    // With both rate and channels configured the device's default is not asked for: on ALSA
    // finding it tries every format and rate the device might take, as long again as listing
    // them (seconds on a slow machine, out of the voice deadline).
    let default = if config.capture_rate != 0 && config.capture_channels != 0 {
        None
    } else {
        Some(
            device
                .default_input_config()
                .map_err(|e| unavailable(e.to_string()))?,
        )
    };
    let (want_rate, want_channels, default_format) = match &default {
        None => (config.capture_rate, config.capture_channels, None),
        Some(default) if config.capture_rate == 0 && config.capture_channels == 0 => {
            return Ok(default.clone());
        }
        Some(default) => (
            if config.capture_rate == 0 {
                default.sample_rate().0
            } else {
                config.capture_rate
            },
            if config.capture_channels == 0 {
                default.channels()
            } else {
                config.capture_channels
            },
            Some(default.sample_format()),
        ),
    };
    let ranges = device
        .supported_input_configs()
        .map_err(|e| unavailable(e.to_string()))?;
    let mut fitting: Vec<_> = ranges
        .filter(|r| r.channels() == want_channels)
        .filter_map(|r| r.try_with_sample_rate(cpal::SampleRate(want_rate)))
        .collect();
    // Prefer the default's sample format (when known), then formats we read cheaply.
    fitting.sort_by_key(|c| {
        (
            default_format.is_some_and(|f| c.sample_format() != f),
            c.sample_format() != SampleFormat::I16,
            c.sample_format() != SampleFormat::F32,
        )
    });
    fitting.into_iter().next().ok_or_else(|| {
        unavailable(format!(
            "it offers no {want_channels}-channel capture at {want_rate} Hz"
        ))
    })
}

/// A capture stream of `format` samples, or why the device refused it.
fn build_any(
    device: &cpal::Device,
    stream_config: &StreamConfig,
    format: SampleFormat,
    tx: SyncSender<Block>,
) -> Result<cpal::Stream, String> {
    let built = match format {
        SampleFormat::I8 => build::<i8>(device, stream_config, tx),
        SampleFormat::I16 => build::<i16>(device, stream_config, tx),
        SampleFormat::I32 => build::<i32>(device, stream_config, tx),
        SampleFormat::I64 => build::<i64>(device, stream_config, tx),
        SampleFormat::U8 => build::<u8>(device, stream_config, tx),
        SampleFormat::U16 => build::<u16>(device, stream_config, tx),
        SampleFormat::U32 => build::<u32>(device, stream_config, tx),
        SampleFormat::U64 => build::<u64>(device, stream_config, tx),
        SampleFormat::F32 => build::<f32>(device, stream_config, tx),
        SampleFormat::F64 => build::<f64>(device, stream_config, tx),
        other => return Err(format!("unsupported sample format {other}")),
    };
    built.map_err(|e| e.to_string())
}

impl Capture {
    /// Opens and starts capture with `config`'s device, rate and channel preferences.
    pub fn open(config: &Config) -> Result<Capture, SpeechError> {
        let began = std::time::Instant::now();
        let device = input_device(&config.input_device)?;
        let device_name = device.name().unwrap_or_else(|_| "(unnamed)".into());
        let found = began.elapsed();
        let supported = choose_input_config(&device, config)?;
        let chosen = began.elapsed();
        let format = supported.sample_format();
        let mut stream_config: StreamConfig = supported.config();
        // cpal's fixed size is the whole ALSA buffer (split into four periods), not a period:
        // ask for `capture_buffer_ms` of headroom, so a busy moment shorter than that does not
        // overrun the capture. An overrun fails cpal's ALSA input stream for good.
        // A whole number of equal periods: ALSA refuses a buffer its periods do not divide.
        let frames = stream_config.sample_rate.0 * config.capture_buffer_ms / 1000 / 4 * 4;
        if let SupportedBufferSize::Range { min, max } = supported.buffer_size()
            && (*min..=*max).contains(&frames)
        {
            stream_config.buffer_size = BufferSize::Fixed(frames);
        }
        let (tx, rx) = sync_channel(config.queue_blocks);
        let stream = match build_any(&device, &stream_config, format, tx.clone()) {
            // The range cpal reports is not all the device takes: ALSA's loopback
            // (`snd-aloop`) refuses some sizes inside it (EINVAL). Its own default then.
            Err(e) if stream_config.buffer_size != BufferSize::Default => {
                debug!(device = %device_name, "a capture buffer of {} frames refused ({e}); the device's default", frames);
                stream_config.buffer_size = BufferSize::Default;
                build_any(&device, &stream_config, format, tx)
            }
            other => other,
        }
        .map_err(|e| SpeechError::DeviceUnavailable {
            direction: INPUT,
            name: device_name.clone(),
            reason: e,
        })?;
        stream.play().map_err(|e| SpeechError::DeviceUnavailable {
            direction: INPUT,
            name: device_name.clone(),
            reason: e.to_string(),
        })?;
        // The milliseconds finding the device, choosing its format and starting the stream
        // took: on a slow machine they come out of the voice deadline.
        debug!(
            device = %device_name,
            rate = stream_config.sample_rate.0,
            channels = stream_config.channels,
            %format,
            buffer = ?stream_config.buffer_size,
            find_ms = found.as_millis() as u64,
            choose_ms = (chosen - found).as_millis() as u64,
            start_ms = (began.elapsed() - chosen).as_millis() as u64,
            "capture open"
        );
        Ok(Capture {
            rx: Some(rx),
            stream: Some(stream),
            device_name,
            rate: stream_config.sample_rate.0,
            channels: stream_config.channels,
            format,
        })
    }

    /// The device's capture rate in Hz (audio from `next_block` is at this rate).
    pub fn rate(&self) -> u32 {
        self.rate
    }

    /// The channel count the stream was opened with (audio is downmixed to mono).
    pub fn channels(&self) -> u16 {
        self.channels
    }

    /// The sample format the stream was opened with.
    pub fn format(&self) -> SampleFormat {
        self.format
    }

    /// The device's name.
    pub fn device_name(&self) -> &str {
        &self.device_name
    }

    /// The next block of mono audio, waiting at most `wait`; `Ok(None)` if none came in time.
    pub fn next_block(&self, wait: Duration) -> Result<Option<Vec<f32>>, SpeechError> {
        let Some(rx) = self.rx.as_ref() else {
            return Ok(None);
        };
        match rx.recv_timeout(wait) {
            Ok(Block::Audio(a)) => Ok(Some(a)),
            Ok(Block::Failed(reason)) => Err(SpeechError::Stream {
                name: self.device_name.clone(),
                reason,
            }),
            Err(RecvTimeoutError::Timeout) => Ok(None),
            Err(RecvTimeoutError::Disconnected) => Err(SpeechError::Stream {
                name: self.device_name.clone(),
                reason: "the stream stopped delivering audio".into(),
            }),
        }
    }
}

impl Capture {
    /// Stops the stream and closes the device now (dropping does the same); `next_block` then
    /// gets nothing.
    pub(crate) fn close(&mut self) {
        // Receiver first: a callback blocked in `send` then fails fast, so dropping the stream
        // (which joins the audio thread) cannot deadlock.
        drop(self.rx.take());
        if let Some(stream) = self.stream.take() {
            drop(stream);
            debug!(device = %self.device_name, "capture closed");
        }
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        self.close();
    }
}

fn build<T>(
    device: &cpal::Device,
    config: &StreamConfig,
    tx: SyncSender<Block>,
) -> Result<cpal::Stream, cpal::BuildStreamError>
where
    T: SizedSample,
    f32: FromSample<T>,
{
    let channels = usize::from(config.channels);
    let err_tx = tx.clone();
    let mut failed = false;
    device.build_input_stream(
        config,
        move |data: &[T], _: &cpal::InputCallbackInfo| {
            let mut mono = Vec::with_capacity(data.len() / channels.max(1));
            downmix(data, channels, &mut mono);
            // Blocking on purpose: dropping audio would lose answers (`try_send` does). It
            // fails only once the receiver is gone, and then nobody wants the audio.
            let _ = tx.send(Block::Audio(mono));
        },
        move |e| {
            if !failed {
                failed = true;
                warn!("audio input stream error: {e}");
                let _ = err_tx.try_send(Block::Failed(e.to_string()));
            } else {
                // A failed ALSA input stream is reported again on every poll, at once and at
                // the audio thread's real-time priority: that spins a CPU and starves the
                // compositor until the stream is dropped. Yield instead; the first report
                // already ended the stream for its reader.
                std::thread::sleep(ERROR_BACKOFF);
            }
        },
        None,
    )
}

/// Whether input would work now: the device exists and offers a capture format.
pub fn probe_input(config: &Config) -> Result<(), SpeechError> {
    let device = input_device(&config.input_device)?;
    choose_input_config(&device, config).map(|_| ())
}
