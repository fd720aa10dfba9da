//! Real timestamped `evdev::InputEvent` sequences (multitouch protocol B, as a touchscreen sends
//! them) through the protocol decoder and the double-tap detector, checking every verdict.

use std::time::Duration;

use evdev::{AbsoluteAxisCode, EventType, InputEvent, KeyCode, SynchronizationCode};
use pcp_haptics::evdev_touch::{DecodeError, MT_TOOL_PALM};
use pcp_haptics::{
    DoubleTapDetector, MtDecoder, NotATap, Position, Scale, TapConfig, TouchEvent, TouchKind,
    Unpaired, Verdict,
};

/// 2025-11-30 00:00:00 UTC, in the realtime clock evdev stamps events with.
const BASE_S: i64 = 1_764_460_800;
/// Device units per millimetre on both axes.
const RES: i32 = 20;

/// Builds the event stream a protocol B touchscreen would produce.
struct Script {
    events: Vec<InputEvent>,
    active: usize,
}

impl Script {
    fn new() -> Script {
        Script {
            events: Vec::new(),
            active: 0,
        }
    }

    fn ev(&mut self, t_us: i64, type_: EventType, code: u16, value: i32) {
        let raw = libc::input_event {
            time: libc::timeval {
                tv_sec: BASE_S + t_us / 1_000_000,
                tv_usec: t_us % 1_000_000,
            },
            type_: type_.0,
            code,
            value,
        };
        self.events.push(InputEvent::from(raw));
    }

    fn abs(&mut self, t: i64, axis: AbsoluteAxisCode, v: i32) {
        self.ev(t, EventType::ABSOLUTE, axis.0, v);
    }

    fn key(&mut self, t: i64, key: KeyCode, v: i32) {
        self.ev(t, EventType::KEY, key.0, v);
    }

    fn syn(&mut self, t: i64) {
        self.ev(
            t,
            EventType::SYNCHRONIZATION,
            SynchronizationCode::SYN_REPORT.0,
            0,
        );
    }

    /// A contact touches at (x_mm, y_mm) at `ms`.
    fn down(&mut self, ms: i64, slot: i32, id: i32, x_mm: f64, y_mm: f64, palm: bool) -> &mut Self {
        let t = ms * 1000;
        let (x, y) = (
            (x_mm * f64::from(RES)) as i32,
            (y_mm * f64::from(RES)) as i32,
        );
        self.abs(t, AbsoluteAxisCode::ABS_MT_SLOT, slot);
        self.abs(t, AbsoluteAxisCode::ABS_MT_TRACKING_ID, id);
        if palm {
            self.abs(t, AbsoluteAxisCode::ABS_MT_TOOL_TYPE, MT_TOOL_PALM);
        }
        self.abs(t, AbsoluteAxisCode::ABS_MT_POSITION_X, x);
        self.abs(t, AbsoluteAxisCode::ABS_MT_POSITION_Y, y);
        if self.active == 0 {
            self.key(t, KeyCode::BTN_TOUCH, 1);
            self.key(t, KeyCode::BTN_TOOL_FINGER, 1);
            self.abs(t, AbsoluteAxisCode::ABS_X, x);
            self.abs(t, AbsoluteAxisCode::ABS_Y, y);
        }
        self.active += 1;
        self.syn(t);
        self
    }

    fn finger(&mut self, ms: i64, slot: i32, id: i32, x_mm: f64, y_mm: f64) -> &mut Self {
        self.down(ms, slot, id, x_mm, y_mm, false)
    }

    fn motion(&mut self, ms: i64, slot: i32, x_mm: f64, y_mm: f64) -> &mut Self {
        let t = ms * 1000;
        self.abs(t, AbsoluteAxisCode::ABS_MT_SLOT, slot);
        self.abs(
            t,
            AbsoluteAxisCode::ABS_MT_POSITION_X,
            (x_mm * f64::from(RES)) as i32,
        );
        self.abs(
            t,
            AbsoluteAxisCode::ABS_MT_POSITION_Y,
            (y_mm * f64::from(RES)) as i32,
        );
        self.syn(t);
        self
    }

    fn up(&mut self, ms: i64, slot: i32) -> &mut Self {
        let t = ms * 1000;
        self.abs(t, AbsoluteAxisCode::ABS_MT_SLOT, slot);
        self.abs(t, AbsoluteAxisCode::ABS_MT_TRACKING_ID, -1);
        self.active -= 1;
        if self.active == 0 {
            self.key(t, KeyCode::BTN_TOUCH, 0);
            self.key(t, KeyCode::BTN_TOOL_FINGER, 0);
        }
        self.syn(t);
        self
    }

    /// A complete single-finger tap on slot 0.
    fn tap(&mut self, down_ms: i64, up_ms: i64, id: i32, x_mm: f64, y_mm: f64) -> &mut Self {
        self.finger(down_ms, 0, id, x_mm, y_mm).up(up_ms, 0)
    }
}

fn touch_events(events: &[InputEvent]) -> Vec<TouchEvent> {
    let mut decoder = MtDecoder::new(Scale::from_resolution(RES, RES, 10.0), 0);
    let mut out = Vec::new();
    for ev in events {
        decoder.feed(ev, &mut out).unwrap();
    }
    out
}

fn verdicts(script: &Script) -> Vec<Verdict> {
    let mut detector = DoubleTapDetector::new(&TapConfig::default());
    touch_events(&script.events)
        .iter()
        .filter_map(|e| detector.feed(e))
        .collect()
}

fn ms(v: i64) -> Duration {
    Duration::from_secs(BASE_S as u64) + Duration::from_millis(v as u64)
}

fn kinds(vs: &[Verdict]) -> Vec<&'static str> {
    vs.iter()
        .map(|v| match v {
            Verdict::FirstTap(_) => "first",
            Verdict::Unpaired(Unpaired::TooSlow, _) => "too_slow",
            Verdict::Unpaired(Unpaired::TooQuick, _) => "too_quick",
            Verdict::Unpaired(Unpaired::TooFar, _) => "too_far",
            Verdict::DoubleTap { .. } => "double",
            Verdict::NotATap(NotATap::TooLong) => "too_long",
            Verdict::NotATap(NotATap::Moved) => "moved",
            Verdict::NotATap(NotATap::MultiContact) => "multi",
            Verdict::NotATap(NotATap::Palm) => "palm",
            Verdict::NotATap(NotATap::BeforeArmed) => "before_armed",
            Verdict::NotATap(NotATap::Cancelled) => "cancelled",
            Verdict::NotATap(NotATap::ClockWentBack) => "clock_back",
        })
        .collect()
}

#[test]
fn single_tap_is_a_first_tap_only() {
    let mut s = Script::new();
    s.tap(0, 90, 1, 30.0, 40.0);
    let v = verdicts(&s);
    assert_eq!(kinds(&v), ["first"]);
    match v[0] {
        Verdict::FirstTap(tap) => {
            assert_eq!(tap.down, ms(0));
            assert_eq!(tap.up, ms(90));
            assert_eq!(tap.position, Position { x: 30.0, y: 40.0 });
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn double_tap_is_recognised_with_both_taps() {
    let mut s = Script::new();
    s.tap(0, 80, 1, 30.0, 40.0).tap(230, 300, 2, 31.0, 41.5);
    let v = verdicts(&s);
    assert_eq!(kinds(&v), ["first", "double"]);
    match v[1] {
        Verdict::DoubleTap { first, second } => {
            assert_eq!((first.down, first.up), (ms(0), ms(80)));
            assert_eq!((second.down, second.up), (ms(230), ms(300)));
            assert_eq!(second.position, Position { x: 31.0, y: 41.5 });
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn slow_double_tap_does_not_pair_and_the_second_becomes_first() {
    let mut s = Script::new();
    // Gap from first lift (80) to second touch (560) is 480 ms > 400 ms.
    s.tap(0, 80, 1, 30.0, 40.0).tap(560, 620, 2, 30.0, 40.0);
    assert_eq!(kinds(&verdicts(&s)), ["first", "too_slow"]);
    // ...and a quick third tap then pairs with the second.
    s.tap(800, 860, 3, 30.0, 40.0);
    assert_eq!(kinds(&verdicts(&s)), ["first", "too_slow", "double"]);
}

#[test]
fn thresholds_are_inclusive_at_their_limits() {
    // A 250 ms contact is still a tap; 251 ms is a press.
    let mut s = Script::new();
    s.tap(0, 250, 1, 10.0, 10.0);
    assert_eq!(kinds(&verdicts(&s)), ["first"]);
    let mut s = Script::new();
    s.tap(0, 251, 1, 10.0, 10.0);
    assert_eq!(kinds(&verdicts(&s)), ["too_long"]);
    // A gap of exactly 400 ms pairs; 401 ms does not.
    let mut s = Script::new();
    s.tap(0, 50, 1, 10.0, 10.0).tap(450, 500, 2, 10.0, 10.0);
    assert_eq!(kinds(&verdicts(&s)), ["first", "double"]);
    let mut s = Script::new();
    s.tap(0, 50, 1, 10.0, 10.0).tap(451, 500, 2, 10.0, 10.0);
    assert_eq!(kinds(&verdicts(&s)), ["first", "too_slow"]);
}

#[test]
fn bounce_faster_than_the_minimum_gap_does_not_pair() {
    let mut s = Script::new();
    s.tap(0, 60, 1, 10.0, 10.0).tap(80, 130, 2, 10.0, 10.0);
    assert_eq!(kinds(&verdicts(&s)), ["first", "too_quick"]);
}

#[test]
fn far_apart_taps_do_not_pair() {
    let mut s = Script::new();
    // 30 mm apart, limit 15 mm.
    s.tap(0, 70, 1, 10.0, 10.0).tap(200, 260, 2, 40.0, 10.0);
    assert_eq!(kinds(&verdicts(&s)), ["first", "too_far"]);
    // 14 mm apart pairs.
    let mut s = Script::new();
    s.tap(0, 70, 1, 10.0, 10.0).tap(200, 260, 2, 24.0, 10.0);
    assert_eq!(kinds(&verdicts(&s)), ["first", "double"]);
}

#[test]
fn drag_is_not_a_tap_but_jitter_is() {
    let mut s = Script::new();
    s.finger(0, 0, 1, 10.0, 10.0)
        .motion(30, 0, 14.0, 10.0)
        .motion(60, 0, 20.0, 10.0)
        .up(120, 0);
    assert_eq!(kinds(&verdicts(&s)), ["moved"]);
    // Moving away and back is still a drag: the farthest point counts, not the last.
    let mut s = Script::new();
    s.finger(0, 0, 1, 10.0, 10.0)
        .motion(30, 0, 16.0, 10.0)
        .motion(60, 0, 10.0, 10.0)
        .up(120, 0);
    assert_eq!(kinds(&verdicts(&s)), ["moved"]);
    let mut s = Script::new();
    s.finger(0, 0, 1, 10.0, 10.0)
        .motion(30, 0, 11.5, 10.5)
        .up(90, 0);
    assert_eq!(kinds(&verdicts(&s)), ["first"]);
}

#[test]
fn long_press_is_not_a_tap_and_breaks_a_pair() {
    let mut s = Script::new();
    s.tap(0, 700, 1, 10.0, 10.0);
    assert_eq!(kinds(&verdicts(&s)), ["too_long"]);
    // tap, press, tap: the press in between drops the pending first tap.
    let mut s = Script::new();
    s.tap(0, 60, 1, 10.0, 10.0)
        .tap(100, 500, 2, 10.0, 10.0)
        .tap(560, 620, 3, 10.0, 10.0);
    assert_eq!(kinds(&verdicts(&s)), ["first", "too_long", "first"]);
}

#[test]
fn two_finger_taps_are_not_taps() {
    let mut s = Script::new();
    s.finger(0, 0, 1, 10.0, 10.0)
        .finger(10, 1, 2, 25.0, 10.0)
        .up(70, 0)
        .up(75, 1);
    assert_eq!(kinds(&verdicts(&s)), ["multi", "multi"]);
    // A first tap, then a two-finger tap: no double tap.
    let mut s = Script::new();
    s.tap(0, 60, 1, 10.0, 10.0)
        .finger(150, 0, 2, 10.0, 10.0)
        .finger(155, 1, 3, 20.0, 10.0)
        .up(200, 0)
        .up(205, 1);
    assert_eq!(kinds(&verdicts(&s)), ["first", "multi", "multi"]);
}

#[test]
fn taps_during_palm_contact_do_not_count() {
    let mut s = Script::new();
    // A palm rests in slot 0 while a finger double-taps in slot 1.
    s.down(0, 0, 1, 60.0, 80.0, true)
        .finger(100, 1, 2, 10.0, 10.0)
        .up(160, 1)
        .finger(300, 1, 3, 10.0, 10.0)
        .up(360, 1)
        .up(900, 0);
    assert_eq!(kinds(&verdicts(&s)), ["multi", "multi", "palm"]);
    // Quick palm "taps" alone are not taps either.
    let mut s = Script::new();
    s.down(0, 0, 1, 60.0, 80.0, true)
        .up(80, 0)
        .down(200, 0, 2, 60.0, 80.0, true)
        .up(260, 0);
    assert_eq!(kinds(&verdicts(&s)), ["palm", "palm"]);
}

#[test]
fn a_contact_that_becomes_a_palm_is_not_a_tap() {
    let mut s = Script::new();
    s.finger(0, 0, 1, 10.0, 10.0);
    s.abs(40_000, AbsoluteAxisCode::ABS_MT_SLOT, 0);
    s.abs(40_000, AbsoluteAxisCode::ABS_MT_TOOL_TYPE, MT_TOOL_PALM);
    s.syn(40_000);
    s.up(90, 0);
    assert_eq!(kinds(&verdicts(&s)), ["palm"]);
}

#[test]
fn dropped_events_cancel_everything() {
    let mut s = Script::new();
    s.tap(0, 60, 1, 10.0, 10.0).finger(150, 0, 2, 10.0, 10.0);
    s.ev(
        170_000,
        EventType::SYNCHRONIZATION,
        SynchronizationCode::SYN_DROPPED.0,
        0,
    );
    s.abs(170_000, AbsoluteAxisCode::ABS_MT_TRACKING_ID, -1);
    s.syn(175_000);
    // The lift that follows belongs to a contact nobody tracks any more: ignored.
    s.up(200, 0);
    assert_eq!(kinds(&verdicts(&s)), ["first", "cancelled"]);
}

#[test]
fn time_going_backwards_drops_pending_state() {
    let mut s = Script::new();
    s.tap(1000, 1060, 1, 10.0, 10.0)
        .tap(500, 560, 2, 10.0, 10.0);
    assert_eq!(kinds(&verdicts(&s)), ["first", "clock_back", "first"]);
}

#[test]
fn decoder_emits_downs_motions_and_ups_in_millimetres_at_report_time() {
    let mut s = Script::new();
    s.finger(0, 0, 7, 5.0, 6.0)
        .motion(16, 0, 5.5, 6.0)
        .up(33, 0);
    let out = touch_events(&s.events);
    let expect = [
        (0, TouchKind::Down, 5.0),
        (16, TouchKind::Motion, 5.5),
        (33, TouchKind::Up, 5.5),
    ];
    assert_eq!(out.len(), expect.len());
    for (e, (t, kind, x)) in out.iter().zip(expect) {
        assert_eq!(
            (e.time, e.kind, e.slot, e.position.x, e.palm),
            (ms(t), kind, 0, x, false)
        );
    }
}

#[test]
fn decoder_ends_a_contact_replaced_without_a_lift() {
    let mut s = Script::new();
    s.finger(0, 0, 1, 5.0, 5.0);
    s.abs(50_000, AbsoluteAxisCode::ABS_MT_TRACKING_ID, 2);
    s.abs(50_000, AbsoluteAxisCode::ABS_MT_POSITION_X, 200);
    s.syn(50_000);
    let out = touch_events(&s.events);
    let got: Vec<_> = out.iter().map(|e| (e.kind, e.position.x)).collect();
    assert_eq!(
        got,
        [
            (TouchKind::Down, 5.0),
            (TouchKind::Up, 5.0),
            (TouchKind::Down, 10.0)
        ]
    );
}

#[test]
fn decoder_ignores_contacts_already_down_and_ends_all_on_btn_touch_release() {
    let mut s = Script::new();
    // Slot 3 was touching before we started reading: its lift is not reported.
    s.abs(0, AbsoluteAxisCode::ABS_MT_SLOT, 3);
    s.abs(0, AbsoluteAxisCode::ABS_MT_TRACKING_ID, -1);
    s.syn(0);
    // A contact whose lift the device only signals through BTN_TOUCH 0.
    s.finger(10, 0, 4, 1.0, 1.0);
    s.key(60_000, KeyCode::BTN_TOUCH, 0);
    s.syn(60_000);
    let got: Vec<_> = touch_events(&s.events)
        .iter()
        .map(|e| (e.kind, e.slot))
        .collect();
    assert_eq!(got, [(TouchKind::Down, 0), (TouchKind::Up, 0)]);
}

#[test]
fn decoder_rejects_an_out_of_range_slot_with_a_clear_error() {
    let mut s = Script::new();
    s.abs(0, AbsoluteAxisCode::ABS_MT_SLOT, 4096);
    s.abs(0, AbsoluteAxisCode::ABS_MT_TRACKING_ID, 9);
    s.syn(0);
    let mut decoder = MtDecoder::new(Scale::from_resolution(RES, RES, 10.0), 0);
    let mut out = Vec::new();
    let err = decoder.feed(&s.events[0], &mut out).unwrap_err();
    assert_eq!(
        err,
        DecodeError::SlotOutOfRange {
            slot: 4096,
            max: 64
        }
    );
    assert!(err.to_string().contains("4096"));
    // Events for the bad slot are dropped rather than landing on another slot.
    for ev in &s.events[1..] {
        decoder.feed(ev, &mut out).unwrap();
    }
    assert!(out.is_empty());
}

#[test]
fn forwarded_compositor_events_use_the_same_detector() {
    let mut d = DoubleTapDetector::new(&TapConfig::default());
    let at = |ms: u64| Duration::from_millis(ms);
    let p = Position { x: 100.0, y: 50.0 };
    let seq = [
        TouchEvent::finger(at(1000), 0, TouchKind::Down, p),
        TouchEvent::finger(at(1070), 0, TouchKind::Up, p),
        TouchEvent::finger(at(1300), 0, TouchKind::Down, p),
        TouchEvent::finger(at(1360), 0, TouchKind::Up, p),
    ];
    let v: Vec<_> = seq.iter().filter_map(|e| d.feed(e)).collect();
    assert_eq!(kinds(&v), ["first", "double"]);
    assert!(d.pending().is_none());
}

#[test]
fn taps_touching_before_the_detector_is_armed_do_not_count() {
    let mut d = DoubleTapDetector::new(&TapConfig::default());
    d.arm_from(ms(200));
    let mut s = Script::new();
    s.tap(150, 210, 1, 10.0, 10.0)
        .tap(300, 360, 2, 10.0, 10.0)
        .tap(500, 560, 3, 10.0, 10.0);
    let v: Vec<_> = touch_events(&s.events)
        .iter()
        .filter_map(|e| d.feed(e))
        .collect();
    assert_eq!(kinds(&v), ["before_armed", "first", "double"]);
}
