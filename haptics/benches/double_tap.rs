//! Cost of the touch path per event: protocol B decoding of real `InputEvent`s and double-tap
//! detection, over a two-tap sequence with some motion (what a prompt sees).

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use evdev::{AbsoluteAxisCode, EventType, InputEvent, KeyCode, SynchronizationCode};
use pcp_haptics::{DoubleTapDetector, MtDecoder, Scale, TapConfig, TouchEvent, Verdict};

fn event(t_us: i64, type_: EventType, code: u16, value: i32) -> InputEvent {
    InputEvent::from(libc::input_event {
        time: libc::timeval {
            tv_sec: 1_764_460_800 + t_us / 1_000_000,
            tv_usec: t_us % 1_000_000,
        },
        type_: type_.0,
        code,
        value,
    })
}

/// Two taps, each a touch, three small motions and a lift.
fn stream() -> Vec<InputEvent> {
    let abs = |t, a: AbsoluteAxisCode, v| event(t, EventType::ABSOLUTE, a.0, v);
    let syn = |t| {
        event(
            t,
            EventType::SYNCHRONIZATION,
            SynchronizationCode::SYN_REPORT.0,
            0,
        )
    };
    let mut out = Vec::new();
    for (start, id) in [(0i64, 1), (250_000, 2)] {
        out.extend([
            abs(start, AbsoluteAxisCode::ABS_MT_SLOT, 0),
            abs(start, AbsoluteAxisCode::ABS_MT_TRACKING_ID, id),
            abs(start, AbsoluteAxisCode::ABS_MT_POSITION_X, 400),
            abs(start, AbsoluteAxisCode::ABS_MT_POSITION_Y, 300),
            event(start, EventType::KEY, KeyCode::BTN_TOUCH.0, 1),
            syn(start),
        ]);
        for i in 1..=3 {
            let t = start + i * 16_000;
            out.extend([
                abs(t, AbsoluteAxisCode::ABS_MT_POSITION_X, 400 + i as i32),
                syn(t),
            ]);
        }
        let t = start + 70_000;
        out.extend([
            abs(t, AbsoluteAxisCode::ABS_MT_TRACKING_ID, -1),
            event(t, EventType::KEY, KeyCode::BTN_TOUCH.0, 0),
            syn(t),
        ]);
    }
    out
}

fn bench(c: &mut Criterion) {
    let events = stream();
    let scale = Scale::from_resolution(20, 20, 10.0);
    let config = TapConfig::default();
    let mut touches: Vec<TouchEvent> = Vec::new();
    let mut decoder = MtDecoder::new(scale, 0);
    for e in &events {
        decoder.feed(e, &mut touches).unwrap();
    }
    let mut detector = DoubleTapDetector::new(&config);
    let found = touches.iter().filter_map(|t| detector.feed(t)).last();
    assert!(matches!(found, Some(Verdict::DoubleTap { .. })));

    c.bench_function("decode_and_detect_double_tap_sequence", |b| {
        let mut out = Vec::with_capacity(16);
        b.iter(|| {
            let mut decoder = MtDecoder::new(scale, 0);
            let mut detector = DoubleTapDetector::new(&config);
            let mut last = None;
            for e in &events {
                out.clear();
                decoder.feed(black_box(e), &mut out).unwrap();
                for t in &out {
                    if let Some(v) = detector.feed(t) {
                        last = Some(v);
                    }
                }
            }
            black_box(last)
        })
    });

    c.bench_function("detect_one_touch_event", |b| {
        let mut detector = DoubleTapDetector::new(&config);
        let mut i = 0;
        b.iter(|| {
            // Replay the sequence shifted forward each lap so time never goes backwards.
            let lap = (i / touches.len()) as u32;
            let mut t = touches[i % touches.len()];
            t.time += std::time::Duration::from_secs(1) * lap;
            i += 1;
            black_box(detector.feed(black_box(&t)))
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
