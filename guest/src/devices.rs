//! The scripted user's hardware, made with uinput on the guest's real kernel: a multitouch
//! touch screen (protocol B, the first output's size), a relative mouse, and a force-feedback
//! device (`FF_RUMBLE` and `FF_PERIODIC`) whose other side here answers the compositor's
//! uploads and records every effect uploaded, played, stopped and erased.

use std::io::Write;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use evdev::uinput::VirtualDevice;
use evdev::{
    AbsInfo, AbsoluteAxisCode, AttributeSet, EventSummary, EventType, FFEffectCode, FFEffectKind,
    InputEvent, KeyCode, PropType, RelativeAxisCode, UInputCode, UinputAbsSetup,
};

/// Touch-screen units per logical pixel of the first output (and per 0.1 mm: 10 units/mm).
const UNITS_PER_PIXEL: i32 = 10;
const UNITS_PER_MM: i32 = 10;

/// A multitouch touch screen covering the first output (libinput maps a touch screen to it).
pub struct TouchScreen {
    dev: VirtualDevice,
    size: (i32, i32),
    tracking_id: i32,
}

impl TouchScreen {
    /// A touch screen for an output of `size` logical pixels.
    pub fn new(size: (i32, i32)) -> Result<TouchScreen> {
        let axis =
            |code, max: i32| UinputAbsSetup::new(code, AbsInfo::new(0, 0, max, 0, 0, UNITS_PER_MM));
        let (w, h) = (size.0 * UNITS_PER_PIXEL - 1, size.1 * UNITS_PER_PIXEL - 1);
        let mut keys = AttributeSet::<KeyCode>::new();
        keys.insert(KeyCode::BTN_TOUCH);
        let mut props = AttributeSet::<PropType>::new();
        props.insert(PropType::DIRECT);
        let dev = VirtualDevice::builder()?
            .name("pcp-vm touch screen")
            .with_keys(&keys)?
            .with_properties(&props)?
            .with_absolute_axis(&axis(AbsoluteAxisCode::ABS_X, w))?
            .with_absolute_axis(&axis(AbsoluteAxisCode::ABS_Y, h))?
            .with_absolute_axis(&UinputAbsSetup::new(
                AbsoluteAxisCode::ABS_MT_SLOT,
                AbsInfo::new(0, 0, 9, 0, 0, 0),
            ))?
            .with_absolute_axis(&UinputAbsSetup::new(
                AbsoluteAxisCode::ABS_MT_TRACKING_ID,
                AbsInfo::new(0, 0, 65535, 0, 0, 0),
            ))?
            .with_absolute_axis(&axis(AbsoluteAxisCode::ABS_MT_POSITION_X, w))?
            .with_absolute_axis(&axis(AbsoluteAxisCode::ABS_MT_POSITION_Y, h))?
            .build()
            .context("cannot create the uinput touch screen")?;
        Ok(TouchScreen {
            dev,
            size,
            tracking_id: 0,
        })
    }

    fn abs(code: AbsoluteAxisCode, value: i32) -> InputEvent {
        InputEvent::new(EventType::ABSOLUTE.0, code.0, value)
    }

    /// One finger down for `hold` at point `p` of an output of `output` logical pixels (the
    /// first output: libinput maps the touch screen's whole range onto it).
    pub fn tap(&mut self, p: (f64, f64), output: (i32, i32), hold: Duration) -> Result<()> {
        let units = |v: f64, of: i32, range: i32| {
            (v / f64::from(of.max(1)) * f64::from(range * UNITS_PER_PIXEL)).round() as i32
        };
        let x = units(p.0, output.0, self.size.0);
        let y = units(p.1, output.1, self.size.1);
        let x = x.clamp(0, self.size.0 * UNITS_PER_PIXEL - 1);
        let y = y.clamp(0, self.size.1 * UNITS_PER_PIXEL - 1);
        self.tracking_id = (self.tracking_id + 1) % 65535;
        self.dev.emit(&[
            Self::abs(AbsoluteAxisCode::ABS_MT_SLOT, 0),
            Self::abs(AbsoluteAxisCode::ABS_MT_TRACKING_ID, self.tracking_id),
            Self::abs(AbsoluteAxisCode::ABS_MT_POSITION_X, x),
            Self::abs(AbsoluteAxisCode::ABS_MT_POSITION_Y, y),
            InputEvent::new(EventType::KEY.0, KeyCode::BTN_TOUCH.0, 1),
            Self::abs(AbsoluteAxisCode::ABS_X, x),
            Self::abs(AbsoluteAxisCode::ABS_Y, y),
        ])?;
        std::thread::sleep(hold);
        self.dev.emit(&[
            Self::abs(AbsoluteAxisCode::ABS_MT_SLOT, 0),
            Self::abs(AbsoluteAxisCode::ABS_MT_TRACKING_ID, -1),
            InputEvent::new(EventType::KEY.0, KeyCode::BTN_TOUCH.0, 0),
        ])?;
        Ok(())
    }
}

/// A relative mouse: moves the pointer (and with it the focal point) between outputs.
pub struct Mouse {
    dev: VirtualDevice,
}

impl Mouse {
    pub fn new() -> Result<Mouse> {
        let mut keys = AttributeSet::<KeyCode>::new();
        keys.insert(KeyCode::BTN_LEFT);
        keys.insert(KeyCode::BTN_RIGHT);
        let mut axes = AttributeSet::<RelativeAxisCode>::new();
        axes.insert(RelativeAxisCode::REL_X);
        axes.insert(RelativeAxisCode::REL_Y);
        let dev = VirtualDevice::builder()?
            .name("pcp-vm mouse")
            .with_keys(&keys)?
            .with_relative_axes(&axes)?
            .build()
            .context("cannot create the uinput mouse")?;
        Ok(Mouse { dev })
    }

    /// Moves by `dx, dy` device units in `steps` reports (libinput accelerates each).
    pub fn move_by(&mut self, dx: i32, dy: i32, steps: i32) -> Result<()> {
        for _ in 0..steps {
            self.dev.emit(&[
                InputEvent::new(EventType::RELATIVE.0, RelativeAxisCode::REL_X.0, dx / steps),
                InputEvent::new(EventType::RELATIVE.0, RelativeAxisCode::REL_Y.0, dy / steps),
            ])?;
            std::thread::sleep(Duration::from_millis(10));
        }
        Ok(())
    }
}

/// What the force-feedback device's other side saw, in order, with the time since it was made.
#[derive(Default)]
pub struct FfRecord {
    pub lines: Vec<String>,
    pub uploads: usize,
    pub plays: usize,
}

/// A force-feedback device served on its own thread until it is unplugged (dropped).
pub struct Rumble {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    pub record: Arc<Mutex<FfRecord>>,
}

impl Rumble {
    /// Creates the device; every effect event is also appended to `log`.
    pub fn plug(log: std::fs::File) -> Result<Rumble> {
        let mut ff = AttributeSet::<FFEffectCode>::new();
        for code in [
            FFEffectCode::FF_RUMBLE,
            FFEffectCode::FF_PERIODIC,
            FFEffectCode::FF_SINE,
            FFEffectCode::FF_SQUARE,
            FFEffectCode::FF_TRIANGLE,
            FFEffectCode::FF_GAIN,
        ] {
            ff.insert(code);
        }
        let dev = VirtualDevice::builder()?
            .name("pcp-vm rumble")
            .with_ff(&ff)?
            .with_ff_effects_max(16)
            .build()
            .context("cannot create the uinput force-feedback device")?;
        // Non-blocking, so the thread sees the stop flag between polls.
        // SAFETY: fcntl on a file descriptor this device owns.
        unsafe {
            let fd = dev.as_raw_fd();
            let flags = libc::fcntl(fd, libc::F_GETFL);
            libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
        }
        let stop = Arc::new(AtomicBool::new(false));
        let record = Arc::new(Mutex::new(FfRecord::default()));
        let thread = {
            let stop = stop.clone();
            let record = record.clone();
            std::thread::spawn(move || serve(dev, &stop, &record, log))
        };
        Ok(Rumble {
            stop,
            thread: Some(thread),
            record,
        })
    }

    /// (uploads, plays) so far.
    pub fn counts(&self) -> (usize, usize) {
        let r = self.record.lock().unwrap_or_else(|e| e.into_inner());
        (r.uploads, r.plays)
    }
}

impl Drop for Rumble {
    /// Unplugs the device: the thread ends and drops it (uinput destroys it).
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn describe(kind: &FFEffectKind) -> String {
    match kind {
        FFEffectKind::Rumble {
            strong_magnitude,
            weak_magnitude,
        } => format!("rumble strong {strong_magnitude} weak {weak_magnitude}"),
        FFEffectKind::Periodic {
            waveform,
            period,
            magnitude,
            ..
        } => format!("periodic {waveform:?} period {period} ms magnitude {magnitude}"),
        other => format!("{other:?}"),
    }
}

/// Answers uploads and erases, and records plays, until `stop`.
fn serve(
    mut dev: VirtualDevice,
    stop: &AtomicBool,
    record: &Mutex<FfRecord>,
    mut log: std::fs::File,
) {
    let made = Instant::now();
    let mut note = |line: String, upload: bool, play: bool| {
        let line = format!("{:8.3} s  {line}", made.elapsed().as_secs_f64());
        let _ = writeln!(log, "{line}");
        let mut r = record.lock().unwrap_or_else(|e| e.into_inner());
        r.lines.push(line);
        r.uploads += usize::from(upload);
        r.plays += usize::from(play);
    };
    note("plugged in".into(), false, false);
    while !stop.load(Ordering::Relaxed) {
        let events: Vec<InputEvent> = match dev.fetch_events() {
            Ok(events) => events.collect(),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(2));
                continue;
            }
            Err(e) => {
                note(format!("read failed: {e}"), false, false);
                break;
            }
        };
        for event in events {
            match event.destructure() {
                EventSummary::UInput(ev, UInputCode::UI_FF_UPLOAD, _) => {
                    match dev.process_ff_upload(ev) {
                        Ok(upload) => {
                            let e = upload.effect();
                            note(
                                format!(
                                    "upload effect {}: {} for {} ms after {} ms",
                                    upload.effect_id(),
                                    describe(&e.kind),
                                    e.replay.length,
                                    e.replay.delay
                                ),
                                true,
                                false,
                            );
                            // Dropping it answers the kernel with retval 0 (accepted).
                        }
                        Err(e) => note(format!("upload failed: {e}"), false, false),
                    }
                }
                EventSummary::UInput(ev, UInputCode::UI_FF_ERASE, _) => {
                    match dev.process_ff_erase(ev) {
                        Ok(erase) => {
                            note(format!("erase effect {}", erase.effect_id()), false, false)
                        }
                        Err(e) => note(format!("erase failed: {e}"), false, false),
                    }
                }
                EventSummary::ForceFeedback(_, FFEffectCode::FF_GAIN, value) => {
                    note(format!("gain {value}"), false, false)
                }
                EventSummary::ForceFeedback(_, code, value) if value > 0 => {
                    note(format!("play effect {} x{value}", code.0), false, true)
                }
                EventSummary::ForceFeedback(_, code, _) => {
                    note(format!("stop effect {}", code.0), false, false)
                }
                _ => {}
            }
        }
    }
    note("unplugged".into(), false, false);
}
