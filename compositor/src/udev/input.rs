//! The udev backend's input: libinput devices counted as they come and go (a seat with no
//! keyboard, pointer or touch screen cannot answer; those present at start are taken from
//! libinput's queue at once), the Ctrl+Alt+F`n` VT switch, and every other
//! event mapped onto the same routing as the other backends (`State::key`, `pointer_motion`,
//! `pointer_button`, `pointer_axis`, `gesture`, `touch_down`, `touch_motion`, `touch_up`,
//! `touch_cancel`, and the tablet tools').

use smithay::backend::input::{
    AbsolutePositionEvent, ButtonState, Event, GestureBeginEvent, GestureEndEvent,
    GesturePinchUpdateEvent as _, GestureSwipeUpdateEvent as _, InputEvent, KeyState,
    KeyboardKeyEvent, PointerButtonEvent, PointerMotionEvent, TouchEvent,
};
use smithay::backend::input::{
    ProximityState, TabletToolButtonEvent, TabletToolEvent, TabletToolProximityEvent,
    TabletToolTipEvent,
};
use smithay::backend::libinput::LibinputInputBackend;
use smithay::backend::session::Session;
use smithay::input::pointer::{
    GestureHoldBeginEvent, GestureHoldEndEvent, GesturePinchBeginEvent, GesturePinchEndEvent,
    GesturePinchUpdateEvent, GestureSwipeBeginEvent, GestureSwipeEndEvent, GestureSwipeUpdateEvent,
};
use smithay::reexports::input::{DeviceCapability, Libinput};
use smithay::utils::SERIAL_COUNTER;
use smithay::wayland::tablet_manager::TabletDescriptor;

use crate::tablet_input::{ToolAction, ToolEvent};
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
        InputEvent::DeviceAdded { device } => device_added(state, &device),
        InputEvent::DeviceRemoved { device } => device_removed(state, &device),
        InputEvent::Keyboard { event } => {
            // The VT chords are read as evdev codes (xkb keycodes are evdev codes + 8).
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
            state.key(event.key_code(), event.state(), time);
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
        InputEvent::PointerAxis { event } => {
            state.pointer_axis(crate::input::axis_frame::<LibinputInputBackend>(&event));
        }
        InputEvent::TouchDown { event } => {
            let p = absolute(state, &event);
            let time = event_time(state, event.time_msec());
            state.touch_down(event.slot(), p, time);
        }
        InputEvent::TouchMotion { event } => {
            let p = absolute(state, &event);
            let time = event_time(state, event.time_msec());
            state.touch_motion(event.slot(), p, time);
        }
        InputEvent::TouchUp { event } => {
            let time = event_time(state, event.time_msec());
            state.touch_up(event.slot(), time);
        }
        InputEvent::TouchCancel { .. } => state.touch_cancel(),
        other => gestures_and_tablets(state, other),
    }
}

/// An input device came: a tablet is announced to clients, and one that can answer a prompt
/// is counted (the dialog offers what the devices can answer with).
fn device_added(state: &mut State, device: &smithay::reexports::input::Device) {
    if device.has_capability(DeviceCapability::TabletTool) {
        state.tablet_added(&TabletDescriptor::from(device));
    }
    let caps: Vec<&str> = [
        (DeviceCapability::Keyboard, "keyboard"),
        (DeviceCapability::Pointer, "pointer"),
        (DeviceCapability::Touch, "touch"),
        (DeviceCapability::TabletTool, "tablet"),
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

/// An input device went away: the counterpart of [`device_added`].
fn device_removed(state: &mut State, device: &smithay::reexports::input::Device) {
    tracing::info!("input device {} removed", device.name());
    if device.has_capability(DeviceCapability::TabletTool) {
        state.tablet_removed(&TabletDescriptor::from(device));
    }
    let answers = [
        DeviceCapability::Keyboard,
        DeviceCapability::Pointer,
        DeviceCapability::Touch,
        DeviceCapability::TabletTool,
    ]
    .iter()
    .any(|c| device.has_capability(*c));
    if answers && let Some(dev) = udev_device(state) {
        dev.answering_inputs = dev.answering_inputs.saturating_sub(1);
        let n = dev.answering_inputs;
        state.input_devices_changed(n);
    }
}

/// Touchpad gestures and tablet tools, in the same routing.
fn gestures_and_tablets(state: &mut State, input: InputEvent<LibinputInputBackend>) {
    use crate::input::Gesture;
    let serial = SERIAL_COUNTER.next_serial();
    let gesture = match input {
        InputEvent::GestureSwipeBegin { event } => Gesture::SwipeBegin(GestureSwipeBeginEvent {
            serial,
            time: event_time(state, event.time_msec()),
            fingers: event.fingers(),
        }),
        InputEvent::GestureSwipeUpdate { event } => Gesture::SwipeUpdate(GestureSwipeUpdateEvent {
            time: event_time(state, event.time_msec()),
            delta: event.delta(),
        }),
        InputEvent::GestureSwipeEnd { event } => Gesture::SwipeEnd(GestureSwipeEndEvent {
            serial,
            time: event_time(state, event.time_msec()),
            cancelled: event.cancelled(),
        }),
        InputEvent::GesturePinchBegin { event } => Gesture::PinchBegin(GesturePinchBeginEvent {
            serial,
            time: event_time(state, event.time_msec()),
            fingers: event.fingers(),
        }),
        InputEvent::GesturePinchUpdate { event } => Gesture::PinchUpdate(GesturePinchUpdateEvent {
            time: event_time(state, event.time_msec()),
            delta: event.delta(),
            scale: event.scale(),
            rotation: event.rotation(),
        }),
        InputEvent::GesturePinchEnd { event } => Gesture::PinchEnd(GesturePinchEndEvent {
            serial,
            time: event_time(state, event.time_msec()),
            cancelled: event.cancelled(),
        }),
        InputEvent::GestureHoldBegin { event } => Gesture::HoldBegin(GestureHoldBeginEvent {
            serial,
            time: event_time(state, event.time_msec()),
            fingers: event.fingers(),
        }),
        InputEvent::GestureHoldEnd { event } => Gesture::HoldEnd(GestureHoldEndEvent {
            serial,
            time: event_time(state, event.time_msec()),
            cancelled: event.cancelled(),
        }),
        other => return tablets(state, other),
    };
    state.gesture(gesture);
}

/// Tablet tools, in the same routing (`tablet_input`).
fn tablets(state: &mut State, input: InputEvent<LibinputInputBackend>) {
    let (device, tool, time, what) = match input {
        InputEvent::TabletToolProximity { event } => {
            let p = absolute(state, &event);
            let what = match event.state() {
                ProximityState::In => ToolAction::In(p),
                ProximityState::Out => ToolAction::Out,
            };
            (event.device(), event.tool(), event.time_msec(), what)
        }
        InputEvent::TabletToolAxis { event } => {
            let p = absolute(state, &event);
            let what = ToolAction::Motion(p);
            (event.device(), event.tool(), event.time_msec(), what)
        }
        InputEvent::TabletToolTip { event } => {
            let p = absolute(state, &event);
            let what = ToolAction::Tip(p, TabletToolTipEvent::tip_state(&event));
            (event.device(), event.tool(), event.time_msec(), what)
        }
        InputEvent::TabletToolButton { event } => {
            let what = ToolAction::Button(
                TabletToolButtonEvent::button(&event),
                TabletToolButtonEvent::button_state(&event),
            );
            (event.device(), event.tool(), event.time_msec(), what)
        }
        // The rest (switches, pads) has no routing in this compositor.
        _ => return,
    };
    let event = ToolEvent {
        tablet: TabletDescriptor::from(&device),
        tool,
        time: event_time(state, time),
        what,
    };
    state.tablet_tool(event);
}
