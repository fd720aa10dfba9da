//! Seat input through the plugin (`pcp_plugin::input`), the way a Smithay host hands it over:
//! several fingers at once, touch motion across the dialog's edge, cancels, pointer buttons,
//! a tablet tool's tip, scrolling and touchpad gestures, in any order and at any time, against
//! a real plugin and a real Smithay seat on two outputs with a window under everything.
//! Properties, checked after every event against a model of the rules:
//!
//! - an approval comes only from the release of a contact (button, finger, tool tip) that
//!   went down on Approve after the guard (750 ms after the dialog was shown or moved), was the
//!   first contact on the dialog then, never left Approve, and was released on Approve;
//! - nothing that lands on the dialog (or its margin) reaches the window: no pointer motion
//!   there, no press of a contact that went down there, no scroll, no gesture that began there;
//! - a contact ends where it began: no finger that went down on the dialog is ever reported to
//!   the window, whatever it does after.

mod host;
mod model;

use std::cell::RefCell;
use std::collections::HashMap;

use arbitrary::{Arbitrary, Unstructured};
use pcp_plugin::{Request, Ticket};
use smithay::backend::input::{AxisSource, ButtonState};
use smithay::input::pointer::{
    AxisFrame, ButtonEvent, GesturePinchBeginEvent, GesturePinchEndEvent, GesturePinchUpdateEvent,
    MotionEvent,
};
use smithay::input::touch::{DownEvent, MotionEvent as TouchMotion, UpEvent};
use smithay::utils::SERIAL_COUNTER;
use smithay::wayland::tablet_manager::{TabletHandle, TabletToolHandle};

use self::host::Kit;
pub use self::host::Seen;
use self::model::{Key, Model, Released, at, follow_moves, release_all, resolve, verdict};

/// Inputs after which the host is made afresh (its audit log grows with every prompt).
const FRESH_EVERY: u32 = 500;
/// The most events one input plays.
const MAX_EVENTS: usize = 256;

/// Where an event happens, relative to the dialog as it is now.
#[derive(Debug, Clone, Copy, Arbitrary)]
pub enum Spot {
    /// On Approve, this far from its centre (logical pixels).
    Approve(i8, i8),
    Deny(i8, i8),
    /// On the dialog, at this fraction of its size (0–255).
    Dialog(u8, u8),
    /// In the margin around the dialog, on this side.
    Margin(u8),
    /// Anywhere on the two outputs (a fraction of their extent).
    Anywhere(u16, u16),
}

/// One seat event.
#[derive(Debug, Clone, Copy, Arbitrary)]
pub enum Event {
    /// Time passes, in milliseconds.
    Wait(u16),
    PointerTo(Spot),
    /// Button 0–2 (left, right, middle) goes down or up where the pointer is.
    Button(u8, bool),
    TouchDown(u8, Spot),
    TouchMotion(u8, Spot),
    TouchUp(u8),
    TouchCancel,
    PenTo(Spot),
    PenTip(bool),
    PenButton(bool),
    PenOut,
    Scroll(i16),
    /// A pinch of 2–4 fingers where the pointer is: begin, updates, end.
    Pinch(u8),
}

/// One input: a privileged prompt is shown, then these events.
#[derive(Debug, Arbitrary)]
pub struct Input {
    pub events: Vec<Event>,
}

thread_local! {
    static KIT: RefCell<Option<(Kit, u32)>> = const { RefCell::new(None) };
}

pub fn check(data: &[u8]) {
    let Ok(input) = Input::arbitrary_take_rest(Unstructured::new(data)) else {
        return;
    };
    run(&input);
}

/// Plays `input` and checks the properties; returns whether the prompt was approved.
pub fn run(input: &Input) -> bool {
    KIT.with_borrow_mut(|slot| {
        let (kit, runs) = slot.get_or_insert_with(|| (host::kit(), 0));
        *runs += 1;
        if *runs % FRESH_EVERY == 0 {
            *kit = host::kit();
        }
        play(kit, *runs, input)
    })
}

fn play(kit: &mut Kit, run: u32, input: &Input) -> bool {
    let ticket = Ticket {
        front: kit.front,
        number: u64::from(run),
    };
    // New parameters each time: a repeated approval would lower the friction.
    let intent = pcp_gate::Intent::new(
        "settings.change",
        serde_json::json!({"key": format!("k{run}"), "value": "v"}),
        pcp_gate::ClientIdentity {
            id: "fuzz".into(),
            ..pcp_gate::ClientIdentity::default()
        },
    );
    pcp_plugin::run(&mut kit.host, Request::Submit { ticket, intent });
    let shown = kit.host.pcp.ui().is_open();
    kit.answers.0.borrow_mut().clear();
    kit.host.window.take();
    let mut model = Model {
        contacts: HashMap::new(),
        presser: None,
        guard_from: kit.host.now,
        placed: kit.host.pcp.ui().placement(),
        pointer: pcp_plugin::overlay::Point { x: 0.0, y: 0.0 },
        pen: None,
        gesture_on_dialog: false,
    };
    let mut approved = false;
    for event in input.events.iter().take(MAX_EVENTS) {
        if !shown || !kit.host.pcp.ui().is_open() {
            break;
        }
        let released = step(kit, &mut model, *event);
        approved |= verdict(kit, &model, event, released);
        follow_moves(kit, &mut model);
    }
    // Whatever is still down is let go, and the prompt withdrawn, so the next input starts
    // from nothing.
    release_all(kit);
    pcp_plugin::run(&mut kit.host, Request::Cancel(ticket));
    kit.answers.0.borrow_mut().clear();
    kit.host.window.take();
    approved
}

/// The window under everything, as the host finds it under any point.
type Under = Option<(
    host::Probe,
    smithay::utils::Point<f64, smithay::utils::Logical>,
)>;

/// Plays one event on the host and the model; returns the contact it released, if any.
fn step(kit: &mut Kit, model: &mut Model, event: Event) -> Released {
    let time = kit.host.now as u32;
    let under: Under = Some((kit.host.window.clone(), (0.0, 0.0).into()));
    let (Some(pointer), Some(touch)) = (kit.host.seat.get_pointer(), kit.host.seat.get_touch())
    else {
        return None;
    };
    match event {
        Event::Wait(ms) => {
            kit.host.now += i64::from(ms);
            pcp_plugin::on_wakeup(&mut kit.host);
            None
        }
        Event::PointerTo(spot) => {
            let p = resolve(kit, spot);
            model.pointer = p;
            if let Some(Key::Button(b)) = model.presser {
                model.moved(kit, Key::Button(b), p);
            }
            let serial = SERIAL_COUNTER.next_serial();
            let e = MotionEvent {
                location: at(p),
                serial,
                time,
            };
            pcp_plugin::input::pointer_motion(&mut kit.host, &pointer, under, &e);
            None
        }
        Event::Button(i, pressed) => {
            let key = Key::Button(i % 3);
            if pressed == model.contacts.contains_key(&key) {
                return None;
            }
            let released = if pressed {
                model.press(kit, key, model.pointer);
                None
            } else {
                model.lift(kit, key, Some(model.pointer))
            };
            let e = ButtonEvent {
                serial: SERIAL_COUNTER.next_serial(),
                time,
                button: 0x110 + u32::from(i % 3),
                state: if pressed {
                    ButtonState::Pressed
                } else {
                    ButtonState::Released
                },
            };
            pcp_plugin::input::pointer_button(&mut kit.host, &pointer, &e);
            released
        }
        other => touch_pen_and_gestures(kit, model, other, (&pointer, &touch), under),
    }
}

/// Touch, the pen, scrolling and pinches.
fn touch_pen_and_gestures(
    kit: &mut Kit,
    model: &mut Model,
    event: Event,
    (pointer, touch): (
        &smithay::input::pointer::PointerHandle<host::Host>,
        &smithay::input::touch::TouchHandle<host::Host>,
    ),
    under: Under,
) -> Released {
    let time = kit.host.now as u32;
    let serial = SERIAL_COUNTER.next_serial();
    let input = |finger: u8| Some(u32::from(finger % 4)).into();
    match event {
        Event::TouchDown(finger, spot) => {
            let key = Key::Finger(finger % 4);
            if model.contacts.contains_key(&key) {
                return None;
            }
            let p = resolve(kit, spot);
            model.press(kit, key, p);
            let e = DownEvent {
                slot: input(finger),
                location: at(p),
                serial,
                time,
            };
            pcp_plugin::input::touch_down(&mut kit.host, touch, under, &e);
            None
        }
        Event::TouchMotion(finger, spot) => {
            let p = resolve(kit, spot);
            model.moved(kit, Key::Finger(finger % 4), p);
            let e = TouchMotion {
                slot: input(finger),
                location: at(p),
                time,
            };
            pcp_plugin::input::touch_motion(&mut kit.host, touch, under, &e);
            None
        }
        Event::TouchUp(finger) => {
            let key = Key::Finger(finger % 4);
            let p = model.contacts.get(&key).map(|c| c.at);
            let released = model.lift(kit, key, p);
            let e = UpEvent {
                slot: input(finger),
                serial,
                time,
            };
            pcp_plugin::input::touch_up(&mut kit.host, touch, &e);
            released
        }
        Event::TouchCancel => {
            for f in 0..4 {
                model.lift(kit, Key::Finger(f), None);
            }
            pcp_plugin::input::touch_cancel(&mut kit.host, touch);
            None
        }
        Event::Scroll(dy) => {
            let frame = AxisFrame::new(time)
                .source(AxisSource::Finger)
                .value(smithay::backend::input::Axis::Vertical, f64::from(dy));
            pcp_plugin::input::pointer_axis(&mut kit.host, pointer, frame);
            None
        }
        Event::Pinch(fingers) => {
            model.gesture_on_dialog = model.takes(kit, model.pointer);
            let host = &mut kit.host;
            let begin = GesturePinchBeginEvent {
                serial,
                time,
                fingers: 2 + u32::from(fingers % 3),
            };
            pcp_plugin::input::gesture_pinch_begin(host, pointer, &begin);
            let update = GesturePinchUpdateEvent {
                time,
                delta: (1.0, 1.0).into(),
                scale: 1.5,
                rotation: 10.0,
            };
            pcp_plugin::input::gesture_pinch_update(host, pointer, &update);
            let end = GesturePinchEndEvent {
                serial: SERIAL_COUNTER.next_serial(),
                time,
                cancelled: fingers % 2 == 0,
            };
            pcp_plugin::input::gesture_pinch_end(host, pointer, &end);
            None
        }
        pen => self::pen(kit, model, pen),
    }
}

/// The pen: proximity, motion, its tip and its button.
fn pen(kit: &mut Kit, model: &mut Model, event: Event) -> Released {
    let time = kit.host.now as u32;
    let serial = SERIAL_COUNTER.next_serial();
    // No client binds the tablet manager here: the tool's events reach no window, so only what
    // the dialog makes of them is checked.
    let (tool, tablet) = (TabletToolHandle::default(), TabletHandle::default());
    match event {
        Event::PenTo(spot) => {
            let p = resolve(kit, spot);
            let was_in = model.pen.replace(p).is_some();
            model.moved(kit, Key::Pen, p);
            if was_in {
                pcp_plugin::input::tablet_motion(
                    &mut kit.host,
                    &tool,
                    at(p),
                    None,
                    &tablet,
                    serial,
                    time,
                );
            } else {
                pcp_plugin::input::tablet_proximity_in(
                    &mut kit.host,
                    &tool,
                    at(p),
                    None,
                    &tablet,
                    serial,
                    time,
                );
            }
            None
        }
        Event::PenTip(down) => {
            let p = model.pen?;
            if down == model.contacts.contains_key(&Key::Pen) {
                return None;
            }
            if down {
                model.press(kit, Key::Pen, p);
                pcp_plugin::input::tablet_tip_down(&mut kit.host, &tool, at(p), serial, time);
                None
            } else {
                let released = model.lift(kit, Key::Pen, Some(p));
                pcp_plugin::input::tablet_tip_up(&mut kit.host, &tool, at(p), time);
                released
            }
        }
        Event::PenButton(pressed) => {
            let state = if pressed {
                ButtonState::Pressed
            } else {
                ButtonState::Released
            };
            pcp_plugin::input::tablet_button(&mut kit.host, &tool, 0x14b, state, serial, time);
            None
        }
        Event::PenOut => {
            model.pen = None;
            model.lift(kit, Key::Pen, None);
            pcp_plugin::input::tablet_proximity_out(&mut kit.host, &tool, time);
            None
        }
        _ => None,
    }
}
