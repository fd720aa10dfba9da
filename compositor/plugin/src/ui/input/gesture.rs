//! Touchpad gestures (swipe, pinch, hold), each standing in for Smithay's own `PointerHandle`
//! call. A gesture that begins where the dialog has the pointer is the dialog's from its
//! beginning to its end: no window sees any of it, and the dialog does nothing with it (a
//! gesture never presses a control). One that begins elsewhere is the windows' to its end.

use smithay::input::SeatHandler;
use smithay::input::pointer::{
    GestureHoldBeginEvent, GestureHoldEndEvent, GesturePinchBeginEvent, GesturePinchEndEvent,
    GesturePinchUpdateEvent, GestureSwipeBeginEvent, GestureSwipeEndEvent, GestureSwipeUpdateEvent,
    PointerHandle,
};

use super::{Owner, point};
use crate::PcpHandler;

/// Where a gesture event is in its gesture.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Begin,
    Update,
    End,
}

/// Hands one gesture event to whoever has the gesture: `forward` sends it to the windows.
/// True when the dialog has it.
fn gesture<D: PcpHandler + SeatHandler>(
    state: &mut D,
    pointer: &PointerHandle<D>,
    phase: Phase,
    forward: impl FnOnce(&mut D, &PointerHandle<D>),
) -> bool {
    let p = point(pointer.current_location());
    let ui = state.pcp().ui_mut();
    let owner = match phase {
        Phase::Begin => ui.gesture_begin(p),
        Phase::Update => ui.gesture_owner(p, false),
        Phase::End => ui.gesture_owner(p, true),
    };
    if owner == Owner::Clients {
        forward(state, pointer);
    }
    owner == Owner::Dialog
}

/// `PointerHandle::gesture_swipe_begin`, with the dialog first. True when the dialog has the
/// swipe (it goes to no window, to its end).
pub fn gesture_swipe_begin<D: PcpHandler + SeatHandler>(
    state: &mut D,
    pointer: &PointerHandle<D>,
    event: &GestureSwipeBeginEvent,
) -> bool {
    gesture(state, pointer, Phase::Begin, |s, p| {
        p.gesture_swipe_begin(s, event)
    })
}

/// `PointerHandle::gesture_swipe_update`, to whoever has the swipe.
pub fn gesture_swipe_update<D: PcpHandler + SeatHandler>(
    state: &mut D,
    pointer: &PointerHandle<D>,
    event: &GestureSwipeUpdateEvent,
) -> bool {
    gesture(state, pointer, Phase::Update, |s, p| {
        p.gesture_swipe_update(s, event)
    })
}

/// `PointerHandle::gesture_swipe_end`, to whoever has the swipe.
pub fn gesture_swipe_end<D: PcpHandler + SeatHandler>(
    state: &mut D,
    pointer: &PointerHandle<D>,
    event: &GestureSwipeEndEvent,
) -> bool {
    gesture(state, pointer, Phase::End, |s, p| {
        p.gesture_swipe_end(s, event)
    })
}

/// `PointerHandle::gesture_pinch_begin`, with the dialog first. True when the dialog has the
/// pinch.
pub fn gesture_pinch_begin<D: PcpHandler + SeatHandler>(
    state: &mut D,
    pointer: &PointerHandle<D>,
    event: &GesturePinchBeginEvent,
) -> bool {
    gesture(state, pointer, Phase::Begin, |s, p| {
        p.gesture_pinch_begin(s, event)
    })
}

/// `PointerHandle::gesture_pinch_update`, to whoever has the pinch.
pub fn gesture_pinch_update<D: PcpHandler + SeatHandler>(
    state: &mut D,
    pointer: &PointerHandle<D>,
    event: &GesturePinchUpdateEvent,
) -> bool {
    gesture(state, pointer, Phase::Update, |s, p| {
        p.gesture_pinch_update(s, event)
    })
}

/// `PointerHandle::gesture_pinch_end`, to whoever has the pinch.
pub fn gesture_pinch_end<D: PcpHandler + SeatHandler>(
    state: &mut D,
    pointer: &PointerHandle<D>,
    event: &GesturePinchEndEvent,
) -> bool {
    gesture(state, pointer, Phase::End, |s, p| {
        p.gesture_pinch_end(s, event)
    })
}

/// `PointerHandle::gesture_hold_begin`, with the dialog first. True when the dialog has the
/// hold.
pub fn gesture_hold_begin<D: PcpHandler + SeatHandler>(
    state: &mut D,
    pointer: &PointerHandle<D>,
    event: &GestureHoldBeginEvent,
) -> bool {
    gesture(state, pointer, Phase::Begin, |s, p| {
        p.gesture_hold_begin(s, event)
    })
}

/// `PointerHandle::gesture_hold_end`, to whoever has the hold.
pub fn gesture_hold_end<D: PcpHandler + SeatHandler>(
    state: &mut D,
    pointer: &PointerHandle<D>,
    event: &GestureHoldEndEvent,
) -> bool {
    gesture(state, pointer, Phase::End, |s, p| {
        p.gesture_hold_end(s, event)
    })
}
