//! The udev backend's input: libinput devices counted as they come and go (a seat with no
//! keyboard, pointer or touch screen cannot answer; those present at start are taken from
//! libinput's queue at once), the Ctrl+Alt+F`n` VT switch, and every other
//! event mapped onto the same routing as the other backends (`State::key`, `pointer_motion`,
//! `pointer_button`, `touch_down`, `touch_motion`, `touch_up`, `touch_cancel`).

use smithay::backend::input::{
    AbsolutePositionEvent, ButtonState, Event, InputEvent, KeyState, KeyboardKeyEvent,
    PointerButtonEvent, PointerMotionEvent,
};
use smithay::backend::libinput::LibinputInputBackend;
use smithay::backend::session::Session;
use smithay::reexports::input::{DeviceCapability, Libinput};
use smithay::utils::{Logical, Point};

use super::{plan, rects, udev_device};
use crate::state::State;

/// The global logical point `event` is at on the first output (a touch screen or tablet maps to
/// the first output).
fn absolute(
    state: &State,
    event: &impl AbsolutePositionEvent<LibinputInputBackend>,
) -> Point<f64, Logical> {
    let Some(spec) = state.backend.outputs.first().map(|o| o.spec) else {
        return Point::from((0.0, 0.0));
    };
    let (w, h) = spec.logical_size();
    let local = event.position_transformed((w, h).into());
    Point::from((local.x + f64::from(spec.x), local.y + f64::from(spec.y)))
}

/// Where a relative motion of `delta` takes the pointer, kept on the outputs.
fn moved(state: &State, delta: Point<f64, Logical>) -> Point<f64, Logical> {
    let p = state.pointer.location() + delta;
    plan::clamp_to_outputs((p.x, p.y), &rects(&state.backend.outputs)).into()
}

/// The devices libinput found when it took the seat. It queues their `DeviceAdded` events
/// without making its fd readable, so the event source would only see them with the first
/// input event; any other event queued this early is dropped (nothing has been shown yet).
pub(super) fn devices_present(libinput: &mut Libinput) -> Vec<smithay::reexports::input::Device> {
    if let Err(e) = libinput.dispatch() {
        tracing::warn!("libinput could not list the seat's devices: {e}");
    }
    let mut devices = Vec::new();
    for event in libinput.by_ref() {
        if let smithay::reexports::input::Event::Device(
            smithay::reexports::input::event::DeviceEvent::Added(added),
        ) = event
        {
            use smithay::reexports::input::event::EventTrait;
            devices.push(added.device());
        }
    }
    devices
}

/// libinput dates events in CLOCK_MONOTONIC milliseconds; the compositor's routing takes the
/// low 32 bits of its own clock's (as the other backends and the harness pass them), so the
/// double tap is judged by when each touch happened. Converted through the event's age.
fn event_time(state: &State, monotonic_ms: u32) -> u32 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec it is given.
    let now_mono = if unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) } == 0 {
        (ts.tv_sec as u64 * 1000 + ts.tv_nsec as u64 / 1_000_000) as u32
    } else {
        monotonic_ms
    };
    let age = now_mono.wrapping_sub(monotonic_ms);
    (state.clock.now_ms() as u32).wrapping_sub(age)
}

const CTRL: [u32; 2] = [29, 97];
const ALT: [u32; 2] = [56, 100];

/// libinput events go through the same routing as the other backends' input.
pub(super) fn handle_input(state: &mut State, input: InputEvent<LibinputInputBackend>) {
    match input {
        InputEvent::DeviceAdded { device } => {
            let caps: Vec<&str> = [
                (DeviceCapability::Keyboard, "keyboard"),
                (DeviceCapability::Pointer, "pointer"),
                (DeviceCapability::Touch, "touch"),
            ]
            .iter()
            .filter(|(c, _)| device.has_capability(*c))
            .map(|(_, n)| *n)
            .collect();
            tracing::info!("input device {} ({})", device.name(), caps.join(", "));
            if !caps.is_empty()
                && let Some(dev) = udev_device(state)
            {
                dev.answering_inputs += 1;
                let n = dev.answering_inputs;
                state.input_devices_changed(n);
            }
        }
        InputEvent::DeviceRemoved { device } => {
            tracing::info!("input device {} removed", device.name());
            let answers = [
                DeviceCapability::Keyboard,
                DeviceCapability::Pointer,
                DeviceCapability::Touch,
            ]
            .iter()
            .any(|c| device.has_capability(*c));
            if answers && let Some(dev) = udev_device(state) {
                dev.answering_inputs = dev.answering_inputs.saturating_sub(1);
                let n = dev.answering_inputs;
                state.input_devices_changed(n);
            }
        }
        InputEvent::Keyboard { event } => {
            let Some(code) = event.key_code().raw().checked_sub(8) else {
                return;
            };
            let pressed = event.state() == KeyState::Pressed;
            if let Some(dev) = udev_device(state) {
                if pressed {
                    dev.held.insert(code);
                } else {
                    dev.held.remove(&code);
                }
                let ctrl = CTRL.iter().any(|c| dev.held.contains(c));
                let alt = ALT.iter().any(|c| dev.held.contains(c));
                if pressed && let Some(vt) = plan::vt_switch(code, ctrl, alt) {
                    // The chord is the session's, not a client's or the dialog's.
                    if let Err(e) = dev.session.change_vt(vt) {
                        tracing::warn!("switching to VT {vt} failed: {e}");
                    }
                    return;
                }
            }
            let time = event_time(state, event.time_msec());
            state.key(code, pressed, time);
        }
        InputEvent::PointerMotion { event } => {
            let p = moved(state, event.delta());
            state.pointer_motion(p, event_time(state, event.time_msec()));
        }
        InputEvent::PointerMotionAbsolute { event } => {
            let p = absolute(state, &event);
            state.pointer_motion(p, event_time(state, event.time_msec()));
        }
        InputEvent::PointerButton { event } => {
            let pressed = event.state() == ButtonState::Pressed;
            let time = event_time(state, event.time_msec());
            state.pointer_button(event.button_code(), pressed, time);
        }
        InputEvent::TouchDown { event } => {
            let p = absolute(state, &event);
            state.touch_down(event.slot(), p, event_time(state, event.time_msec()));
        }
        InputEvent::TouchMotion { event } => {
            let p = absolute(state, &event);
            state.touch_motion(event.slot(), p, event_time(state, event.time_msec()));
        }
        InputEvent::TouchUp { event } => {
            state.touch_up(event.slot(), event_time(state, event.time_msec()));
        }
        InputEvent::TouchCancel { .. } => state.touch_cancel(),
        // Scrolling, tablets and gestures have no routing in this compositor yet.
        _ => {}
    }
}
