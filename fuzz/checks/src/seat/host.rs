//! The smallest Smithay host the seat check drives: a real `pcp_plugin::Pcp` opened from a
//! config, a real Smithay seat, two outputs side by side, and one fullscreen window under
//! everything — a probe that records every pointer, touch and keyboard event Smithay sends it.
//! The prompt comes from a front end of the check's own.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::{Arc, Mutex};

use pcp_plugin::{Delivery, Effect, FrontEnd, Pcp, PcpHandler, Request, Surroundings};
use smithay::input::keyboard::{KeyboardTarget, KeysymHandle, ModifiersState};
use smithay::input::pointer::{
    AxisFrame, ButtonEvent, GestureHoldBeginEvent, GestureHoldEndEvent, GesturePinchBeginEvent,
    GesturePinchEndEvent, GesturePinchUpdateEvent, GestureSwipeBeginEvent, GestureSwipeEndEvent,
    GestureSwipeUpdateEvent, MotionEvent, PointerTarget, RelativeMotionEvent,
};
use smithay::input::touch::{
    DownEvent, MotionEvent as TouchMotion, OrientationEvent, ShapeEvent, TouchTarget, UpEvent,
};
use smithay::input::{Seat, SeatHandler, SeatState};
use smithay::utils::{IsAlive, Serial};
use wayland_server::Display;

/// The two outputs, side by side, in global logical coordinates.
pub const OUTPUTS: [(i32, i32, i32, i32); 2] = [(0, 0, 1280, 800), (1280, 0, 1280, 800)];

/// The config the plugin runs with: the shipped capabilities, the default guard and margin
/// written out (the checker's model reads them from here), no voice.
pub const GUARD_MS: i64 = 750;
pub const MARGIN: f64 = 24.0;

/// What the window received.
#[derive(Debug, Clone, PartialEq)]
pub enum Seen {
    Enter(f64, f64),
    Motion(f64, f64),
    Leave,
    Button(u32, bool),
    Axis,
    GestureBegin,
    GestureOther,
    TouchDown(i32, f64, f64),
    TouchMotion(i32),
    TouchUp(i32),
    TouchCancel,
    Other,
}

/// The window under everything: it records what Smithay sends it.
#[derive(Debug, Clone)]
pub struct Probe(pub Arc<Mutex<Vec<Seen>>>);

impl PartialEq for Probe {
    fn eq(&self, other: &Probe) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl IsAlive for Probe {
    fn alive(&self) -> bool {
        true
    }
}

impl Probe {
    fn note(&self, seen: Seen) {
        if let Ok(mut log) = self.0.lock() {
            log.push(seen);
        }
    }

    /// What it received since the last call.
    pub fn take(&self) -> Vec<Seen> {
        self.0
            .lock()
            .map(|mut l| std::mem::take(&mut *l))
            .unwrap_or_default()
    }
}

/// The check's front end: it hears the answers to its tickets.
#[derive(Clone, Default)]
pub struct Answers(pub Rc<RefCell<Vec<Delivery>>>);

impl FrontEnd for Answers {
    fn deliver(&mut self, delivery: Delivery) -> Option<Request> {
        self.0.borrow_mut().push(delivery);
        None
    }
}

/// The host's state.
pub struct Host {
    pub pcp: Pcp,
    pub seat_state: SeatState<Host>,
    pub seat: Seat<Host>,
    pub now: i64,
    pub window: Probe,
}

impl SeatHandler for Host {
    type KeyboardFocus = Probe;
    type PointerFocus = Probe;
    type TouchFocus = Probe;

    fn seat_state(&mut self) -> &mut SeatState<Host> {
        &mut self.seat_state
    }
}

impl PcpHandler for Host {
    fn pcp(&mut self) -> &mut Pcp {
        &mut self.pcp
    }

    fn now_ms(&self) -> i64 {
        self.now
    }

    fn surroundings(&self) -> Surroundings {
        let outputs = OUTPUTS
            .iter()
            .map(|&(x, y, w, h)| pcp_plugin::overlay::Output {
                rect: pcp_plugin::overlay::Rect { x, y, w, h },
                scale: 1.0,
            })
            .collect();
        Surroundings {
            outputs,
            focus: None,
            input_devices: None,
        }
    }

    fn effect(&mut self, effect: Effect) {
        match effect {
            Effect::DialogShown(_) | Effect::Damage => {
                if let Some(pointer) = self.seat.get_pointer() {
                    let under = Some((self.window.clone(), (0.0, 0.0).into()));
                    pcp_plugin::input::pointer_after_dialog(self, &pointer, under);
                }
            }
            Effect::KeyboardFocus => {
                if let Some(keyboard) = self.seat.get_keyboard() {
                    let serial = smithay::utils::SERIAL_COUNTER.next_serial();
                    pcp_plugin::input::keyboard_focus(self, &keyboard, serial);
                }
            }
            Effect::PolicySettled { .. } | Effect::EndSession => {}
        }
    }
}

pcp_plugin::delegate_pcp!(Host);

/// A host and what lives beside it: the display (which owns the globals), the answers heard,
/// the front end's id, and the state folder.
pub struct Kit {
    pub host: Host,
    pub answers: Answers,
    pub front: pcp_plugin::FrontEndId,
    _display: Display<Host>,
    _state: tempfile::TempDir,
}

/// A fresh host: the plugin opened on a config written into a new state folder.
pub fn kit() -> Kit {
    let state = tempfile::tempdir().expect("a temporary folder for the plugin's state");
    let caps = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/capabilities.d");
    let text = format!(
        "[manifests]\ndirs = [{caps:?}]\n[state]\npath = {:?}\n[overlay]\nguard_delay_ms = \
         {GUARD_MS}\ninput_margin = {MARGIN}\n[speech]\nenabled = false\n",
        state.path().join("state.sqlite3")
    );
    let path = state.path().join("config.toml");
    let config = pcp_plugin::config::Config::<()>::from_text(&path, &text, &Default::default())
        .expect("the check's config loads");
    let display: Display<Host> = Display::new().expect("a display");
    let dh = display.handle();
    let opened = Pcp::open::<Host, ()>(&dh, config).expect("the plugin opens");
    let mut seat_state = SeatState::new();
    // A seat of Smithay's input layer: its handles are the host's, with no wl_seat global
    // (the window is the probe, not a client).
    let mut seat = seat_state.new_seat("seat0");
    let _ = seat.add_keyboard(Default::default(), 400, 25);
    seat.add_pointer();
    seat.add_touch();
    let mut host = Host {
        pcp: opened.pcp,
        seat_state,
        seat,
        now: 1_700_000_000_000,
        window: Probe(Arc::new(Mutex::new(Vec::new()))),
    };
    let answers = Answers::default();
    let front = host.pcp.add_front_end(Box::new(answers.clone()));
    pcp_plugin::refresh(&mut host);
    Kit {
        host,
        answers,
        front,
        _display: display,
        _state: state,
    }
}

impl PointerTarget<Host> for Probe {
    fn enter(&self, _: &Seat<Host>, _: &mut Host, e: &MotionEvent) {
        self.note(Seen::Enter(e.location.x, e.location.y));
    }
    fn motion(&self, _: &Seat<Host>, _: &mut Host, e: &MotionEvent) {
        self.note(Seen::Motion(e.location.x, e.location.y));
    }
    fn relative_motion(&self, _: &Seat<Host>, _: &mut Host, _: &RelativeMotionEvent) {
        self.note(Seen::Other);
    }
    fn button(&self, _: &Seat<Host>, _: &mut Host, e: &ButtonEvent) {
        let pressed = e.state == smithay::backend::input::ButtonState::Pressed;
        self.note(Seen::Button(e.button, pressed));
    }
    fn axis(&self, _: &Seat<Host>, _: &mut Host, _: AxisFrame) {
        self.note(Seen::Axis);
    }
    fn frame(&self, _: &Seat<Host>, _: &mut Host) {}
    fn gesture_swipe_begin(&self, _: &Seat<Host>, _: &mut Host, _: &GestureSwipeBeginEvent) {
        self.note(Seen::GestureBegin);
    }
    fn gesture_swipe_update(&self, _: &Seat<Host>, _: &mut Host, _: &GestureSwipeUpdateEvent) {
        self.note(Seen::GestureOther);
    }
    fn gesture_swipe_end(&self, _: &Seat<Host>, _: &mut Host, _: &GestureSwipeEndEvent) {
        self.note(Seen::GestureOther);
    }
    fn gesture_pinch_begin(&self, _: &Seat<Host>, _: &mut Host, _: &GesturePinchBeginEvent) {
        self.note(Seen::GestureBegin);
    }
    fn gesture_pinch_update(&self, _: &Seat<Host>, _: &mut Host, _: &GesturePinchUpdateEvent) {
        self.note(Seen::GestureOther);
    }
    fn gesture_pinch_end(&self, _: &Seat<Host>, _: &mut Host, _: &GesturePinchEndEvent) {
        self.note(Seen::GestureOther);
    }
    fn gesture_hold_begin(&self, _: &Seat<Host>, _: &mut Host, _: &GestureHoldBeginEvent) {
        self.note(Seen::GestureBegin);
    }
    fn gesture_hold_end(&self, _: &Seat<Host>, _: &mut Host, _: &GestureHoldEndEvent) {
        self.note(Seen::GestureOther);
    }
    fn leave(&self, _: &Seat<Host>, _: &mut Host, _: Serial, _: u32) {
        self.note(Seen::Leave);
    }
}

impl TouchTarget<Host> for Probe {
    fn down(&self, _: &Seat<Host>, _: &mut Host, e: &DownEvent, _: Serial) {
        self.note(Seen::TouchDown(
            i32::from(e.slot),
            e.location.x,
            e.location.y,
        ));
    }
    fn up(&self, _: &Seat<Host>, _: &mut Host, e: &UpEvent, _: Serial) {
        self.note(Seen::TouchUp(i32::from(e.slot)));
    }
    fn motion(&self, _: &Seat<Host>, _: &mut Host, e: &TouchMotion, _: Serial) {
        self.note(Seen::TouchMotion(i32::from(e.slot)));
    }
    fn frame(&self, _: &Seat<Host>, _: &mut Host, _: Serial) {}
    fn cancel(&self, _: &Seat<Host>, _: &mut Host, _: Serial) {
        self.note(Seen::TouchCancel);
    }
    fn shape(&self, _: &Seat<Host>, _: &mut Host, _: &ShapeEvent, _: Serial) {}
    fn orientation(&self, _: &Seat<Host>, _: &mut Host, _: &OrientationEvent, _: Serial) {}
}

impl KeyboardTarget<Host> for Probe {
    fn enter(&self, _: &Seat<Host>, _: &mut Host, _: Vec<KeysymHandle<'_>>, _: Serial) {}
    fn leave(&self, _: &Seat<Host>, _: &mut Host, _: Serial) {}
    fn key(
        &self,
        _: &Seat<Host>,
        _: &mut Host,
        _: KeysymHandle<'_>,
        _: smithay::backend::input::KeyState,
        _: Serial,
        _: u32,
    ) {
        self.note(Seen::Other);
    }
    fn modifiers(&self, _: &Seat<Host>, _: &mut Host, _: ModifiersState, _: Serial) {}
}
