//! The same calls as methods on Smithay's own handles: `pointer.pcp_motion(state, under, &e)`
//! where a host wrote `pointer.motion(state, under, &e)`, `touch.pcp_down(…)` for
//! `touch.down(…)`, `keyboard.pcp_input(…)` for `keyboard.input(…)`, `tool.pcp_tip_down(…)` for
//! `tool.tip_down(…)`. Each is exactly the free function of the same name in `pcp_plugin::input`
//! (see them for what the dialog does with each event), so adopting the plugin renames a call
//! and changes nothing else around it.

use smithay::backend::input::{ButtonState, KeyState};
use smithay::input::SeatHandler;
use smithay::input::keyboard::{
    FilterResult, KeyboardHandle, Keycode, KeysymHandle, ModifiersState,
};
use smithay::input::pointer::{
    AxisFrame, ButtonEvent, GestureHoldBeginEvent, GestureHoldEndEvent, GesturePinchBeginEvent,
    GesturePinchEndEvent, GesturePinchUpdateEvent, GestureSwipeBeginEvent, GestureSwipeEndEvent,
    GestureSwipeUpdateEvent, MotionEvent, PointerHandle, RelativeMotionEvent,
};
use smithay::input::touch::{DownEvent, MotionEvent as TouchMotionEvent, TouchHandle, UpEvent};
use smithay::reexports::wayland_server::protocol::wl_surface::WlSurface;
use smithay::utils::{Logical, Point, Serial};
use smithay::wayland::tablet_manager::{TabletHandle, TabletToolHandle};

use crate::PcpHandler;

/// Where something is, with the client surface under it.
type Under<F> = Option<(F, Point<f64, Logical>)>;

/// `KeyboardHandle` calls with the dialog first.
pub trait PcpKeyboard<D: SeatHandler> {
    /// [`keyboard_input`](super::keyboard_input) as a method.
    fn pcp_input<T, F>(
        &self,
        state: &mut D,
        keycode: Keycode,
        key_state: KeyState,
        serial: Serial,
        time: u32,
        filter: F,
    ) -> Option<T>
    where
        F: FnOnce(&mut D, &ModifiersState, KeysymHandle<'_>) -> FilterResult<T>;

    /// [`keyboard_focus`](super::keyboard_focus) as a method.
    fn pcp_focus(&self, state: &mut D, serial: Serial);
}

impl<D> PcpKeyboard<D> for KeyboardHandle<D>
where
    D: PcpHandler + SeatHandler,
    D::KeyboardFocus: 'static,
{
    fn pcp_input<T, F>(
        &self,
        state: &mut D,
        keycode: Keycode,
        key_state: KeyState,
        serial: Serial,
        time: u32,
        filter: F,
    ) -> Option<T>
    where
        F: FnOnce(&mut D, &ModifiersState, KeysymHandle<'_>) -> FilterResult<T>,
    {
        super::keyboard_input(state, self, keycode, key_state, serial, time, filter)
    }

    fn pcp_focus(&self, state: &mut D, serial: Serial) {
        super::keyboard_focus(state, self, serial)
    }
}

/// Defines a `PointerHandle` method standing in for one of Smithay's, through the free
/// function of the same name.
macro_rules! pointer_calls {
    ($($(#[$doc:meta])* $method:ident => $function:ident($($arg:ident: $ty:ty),*);)*) => {
        /// `PointerHandle` calls with the dialog first; each returns `true` when the dialog
        /// took the event.
        pub trait PcpPointer<D: SeatHandler> {
            $($(#[$doc])* fn $method(&self, state: &mut D, $($arg: $ty),*) -> bool;)*
            /// [`pointer_after_dialog`](super::pointer_after_dialog) as a method.
            fn pcp_after_dialog(&self, state: &mut D, under: Under<D::PointerFocus>);
        }

        impl<D: PcpHandler + SeatHandler> PcpPointer<D> for PointerHandle<D> {
            $(fn $method(&self, state: &mut D, $($arg: $ty),*) -> bool {
                super::$function(state, self, $($arg),*)
            })*

            fn pcp_after_dialog(&self, state: &mut D, under: Under<D::PointerFocus>) {
                super::pointer_after_dialog(state, self, under)
            }
        }
    };
}

pointer_calls! {
    /// [`pointer_motion`](super::pointer_motion) as a method.
    pcp_motion => pointer_motion(under: Under<D::PointerFocus>, event: &MotionEvent);
    /// [`pointer_relative_motion`](super::pointer_relative_motion) as a method.
    pcp_relative_motion => pointer_relative_motion(
        under: Under<D::PointerFocus>,
        event: &RelativeMotionEvent
    );
    /// [`pointer_button`](super::pointer_button) as a method.
    pcp_button => pointer_button(event: &ButtonEvent);
    /// [`pointer_axis`](super::pointer_axis) as a method.
    pcp_axis => pointer_axis(frame: AxisFrame);
    /// [`gesture_swipe_begin`](super::gesture_swipe_begin) as a method.
    pcp_gesture_swipe_begin => gesture_swipe_begin(event: &GestureSwipeBeginEvent);
    /// [`gesture_swipe_update`](super::gesture_swipe_update) as a method.
    pcp_gesture_swipe_update => gesture_swipe_update(event: &GestureSwipeUpdateEvent);
    /// [`gesture_swipe_end`](super::gesture_swipe_end) as a method.
    pcp_gesture_swipe_end => gesture_swipe_end(event: &GestureSwipeEndEvent);
    /// [`gesture_pinch_begin`](super::gesture_pinch_begin) as a method.
    pcp_gesture_pinch_begin => gesture_pinch_begin(event: &GesturePinchBeginEvent);
    /// [`gesture_pinch_update`](super::gesture_pinch_update) as a method.
    pcp_gesture_pinch_update => gesture_pinch_update(event: &GesturePinchUpdateEvent);
    /// [`gesture_pinch_end`](super::gesture_pinch_end) as a method.
    pcp_gesture_pinch_end => gesture_pinch_end(event: &GesturePinchEndEvent);
    /// [`gesture_hold_begin`](super::gesture_hold_begin) as a method.
    pcp_gesture_hold_begin => gesture_hold_begin(event: &GestureHoldBeginEvent);
    /// [`gesture_hold_end`](super::gesture_hold_end) as a method.
    pcp_gesture_hold_end => gesture_hold_end(event: &GestureHoldEndEvent);
}

/// `TouchHandle` calls with the dialog first; each returns `true` when the dialog had the
/// touch point.
pub trait PcpTouch<D: SeatHandler> {
    /// [`touch_down`](super::touch_down) as a method.
    fn pcp_down(&self, state: &mut D, under: Under<D::TouchFocus>, event: &DownEvent) -> bool;
    /// [`touch_motion`](super::touch_motion) as a method.
    fn pcp_motion(
        &self,
        state: &mut D,
        under: Under<D::TouchFocus>,
        event: &TouchMotionEvent,
    ) -> bool;
    /// [`touch_up`](super::touch_up) as a method.
    fn pcp_up(&self, state: &mut D, event: &UpEvent) -> bool;
    /// [`touch_cancel`](super::touch_cancel) as a method.
    fn pcp_cancel(&self, state: &mut D) -> bool;
}

impl<D: PcpHandler + SeatHandler> PcpTouch<D> for TouchHandle<D> {
    fn pcp_down(&self, state: &mut D, under: Under<D::TouchFocus>, event: &DownEvent) -> bool {
        super::touch_down(state, self, under, event)
    }

    fn pcp_motion(
        &self,
        state: &mut D,
        under: Under<D::TouchFocus>,
        event: &TouchMotionEvent,
    ) -> bool {
        super::touch_motion(state, self, under, event)
    }

    fn pcp_up(&self, state: &mut D, event: &UpEvent) -> bool {
        super::touch_up(state, self, event)
    }

    fn pcp_cancel(&self, state: &mut D) -> bool {
        super::touch_cancel(state, self)
    }
}

/// `TabletToolHandle` calls with the dialog first; each returns `true` when the dialog took the
/// event. The tip calls take the tool's position, which Smithay's do not.
pub trait PcpTabletTool {
    /// [`tablet_proximity_in`](super::tablet_proximity_in) as a method.
    #[allow(clippy::too_many_arguments)]
    fn pcp_proximity_in<D: PcpHandler>(
        &self,
        state: &mut D,
        pos: Point<f64, Logical>,
        under: Under<WlSurface>,
        tablet: &TabletHandle,
        serial: Serial,
        time: u32,
    ) -> bool;
    /// [`tablet_motion`](super::tablet_motion) as a method.
    #[allow(clippy::too_many_arguments)]
    fn pcp_motion<D: PcpHandler>(
        &self,
        state: &mut D,
        pos: Point<f64, Logical>,
        under: Under<WlSurface>,
        tablet: &TabletHandle,
        serial: Serial,
        time: u32,
    ) -> bool;
    /// [`tablet_tip_down`](super::tablet_tip_down) as a method.
    fn pcp_tip_down<D: PcpHandler>(
        &self,
        state: &mut D,
        pos: Point<f64, Logical>,
        serial: Serial,
        time: u32,
    ) -> bool;
    /// [`tablet_tip_up`](super::tablet_tip_up) as a method.
    fn pcp_tip_up<D: PcpHandler>(&self, state: &mut D, pos: Point<f64, Logical>, time: u32)
    -> bool;
    /// [`tablet_button`](super::tablet_button) as a method.
    fn pcp_button<D: PcpHandler>(
        &self,
        state: &mut D,
        button: u32,
        button_state: ButtonState,
        serial: Serial,
        time: u32,
    ) -> bool;
    /// [`tablet_proximity_out`](super::tablet_proximity_out) as a method.
    fn pcp_proximity_out<D: PcpHandler>(&self, state: &mut D, time: u32) -> bool;
}

impl PcpTabletTool for TabletToolHandle {
    fn pcp_proximity_in<D: PcpHandler>(
        &self,
        state: &mut D,
        pos: Point<f64, Logical>,
        under: Under<WlSurface>,
        tablet: &TabletHandle,
        serial: Serial,
        time: u32,
    ) -> bool {
        super::tablet_proximity_in(state, self, pos, under, tablet, serial, time)
    }

    fn pcp_motion<D: PcpHandler>(
        &self,
        state: &mut D,
        pos: Point<f64, Logical>,
        under: Under<WlSurface>,
        tablet: &TabletHandle,
        serial: Serial,
        time: u32,
    ) -> bool {
        super::tablet_motion(state, self, pos, under, tablet, serial, time)
    }

    fn pcp_tip_down<D: PcpHandler>(
        &self,
        state: &mut D,
        pos: Point<f64, Logical>,
        serial: Serial,
        time: u32,
    ) -> bool {
        super::tablet_tip_down(state, self, pos, serial, time)
    }

    fn pcp_tip_up<D: PcpHandler>(
        &self,
        state: &mut D,
        pos: Point<f64, Logical>,
        time: u32,
    ) -> bool {
        super::tablet_tip_up(state, self, pos, time)
    }

    fn pcp_button<D: PcpHandler>(
        &self,
        state: &mut D,
        button: u32,
        button_state: ButtonState,
        serial: Serial,
        time: u32,
    ) -> bool {
        super::tablet_button(state, self, button, button_state, serial, time)
    }

    fn pcp_proximity_out<D: PcpHandler>(&self, state: &mut D, time: u32) -> bool {
        super::tablet_proximity_out(state, self, time)
    }
}
