//! The multitouch decoder and the double-tap detector (`pcp_haptics`): arbitrary kernel event
//! streams (slots, tracking ids, positions, tool types, BTN_TOUCH, SYN_REPORT, SYN_DROPPED, at
//! arbitrary times) never panic, decoded contacts stay within the decoder's slots, and a
//! double tap is never reported from a frame the kernel dropped.

use arbitrary::{Arbitrary, Unstructured};
use evdev::{AbsoluteAxisCode, EventType, InputEvent, KeyCode, SynchronizationCode};
use pcp_haptics::{DoubleTapDetector, MtDecoder, Scale, TapConfig, TouchKind, Verdict};

#[derive(Debug, Arbitrary)]
enum Ev {
    Slot(i32),
    TrackingId(i32),
    X(i32),
    Y(i32),
    Tool(i32),
    Touch(i32),
    Report,
    Dropped,
    Raw(u16, u16, i32),
}

#[derive(Debug, Arbitrary)]
struct Input {
    x_res: i32,
    y_res: i32,
    initial_slot: i32,
    events: Vec<(u16, Ev)>,
}

/// A second after the epoch plus `us` microseconds, as the kernel stamps events.
fn event(us: i64, type_: EventType, code: u16, value: i32) -> InputEvent {
    InputEvent::from(libc::input_event {
        time: libc::timeval {
            tv_sec: 1_700_000_000 + us / 1_000_000,
            tv_usec: us % 1_000_000,
        },
        type_: type_.0,
        code,
        value,
    })
}

pub fn check(data: &[u8]) {
    let Ok(input) = Input::arbitrary_take_rest(Unstructured::new(data)) else {
        return;
    };
    let scale = Scale::from_resolution(input.x_res, input.y_res, 10.0);
    let mut decoder = MtDecoder::new(scale, input.initial_slot);
    let mut taps = DoubleTapDetector::new(&TapConfig::default());
    let mut t: i64 = 0;
    let mut out = Vec::new();
    for (dt, ev) in input.events.into_iter().take(512) {
        t += i64::from(dt);
        let abs = |code: AbsoluteAxisCode, v| event(t, EventType::ABSOLUTE, code.0, v);
        let e = match ev {
            Ev::Slot(v) => abs(AbsoluteAxisCode::ABS_MT_SLOT, v),
            Ev::TrackingId(v) => abs(AbsoluteAxisCode::ABS_MT_TRACKING_ID, v),
            Ev::X(v) => abs(AbsoluteAxisCode::ABS_MT_POSITION_X, v),
            Ev::Y(v) => abs(AbsoluteAxisCode::ABS_MT_POSITION_Y, v),
            Ev::Tool(v) => abs(AbsoluteAxisCode::ABS_MT_TOOL_TYPE, v),
            Ev::Touch(v) => event(t, EventType::KEY, KeyCode::BTN_TOUCH.0, v),
            Ev::Report => event(
                t,
                EventType::SYNCHRONIZATION,
                SynchronizationCode::SYN_REPORT.0,
                0,
            ),
            Ev::Dropped => event(
                t,
                EventType::SYNCHRONIZATION,
                SynchronizationCode::SYN_DROPPED.0,
                0,
            ),
            Ev::Raw(ty, code, v) => event(t, EventType(ty), code, v),
        };
        out.clear();
        // An error (a slot out of range) is the decoder refusing the event: fine.
        let _ = decoder.feed(&e, &mut out);
        let cancelled = out.iter().any(|te| te.kind == TouchKind::Cancel);
        for te in &out {
            assert!(te.slot < 64, "slot {}", te.slot);
            assert!(te.position.x.is_finite() && te.position.y.is_finite());
            if let Some(Verdict::DoubleTap { .. }) = taps.feed(te)
                && cancelled
            {
                panic!("a double tap from a frame the kernel dropped");
            }
        }
    }
}
