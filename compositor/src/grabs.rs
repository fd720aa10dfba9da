//! Interactive move and resize (`xdg_toplevel.move` and `.resize`): a pointer or touch grab
//! started from a press the client was given (its serial), which moves or resizes the window
//! while the press lasts; no client has the pointer meanwhile. The dialog's rules hold across
//! them: pointer motion on the dialog is the dialog's (the plugin passes the grab none there),
//! a touch point's motion over the dialog reaches no window, and a press ends where it began —
//! its release reaches the grab, which ends.

use smithay::desktop::Window;
use smithay::input::Seat;
use smithay::input::pointer::{
    AxisFrame, ButtonEvent, Focus, GestureHoldBeginEvent, GestureHoldEndEvent,
    GesturePinchBeginEvent, GesturePinchEndEvent, GesturePinchUpdateEvent, GestureSwipeBeginEvent,
    GestureSwipeEndEvent, GestureSwipeUpdateEvent, GrabStartData as PointerGrabStartData,
    MotionEvent, PointerGrab, PointerInnerHandle, RelativeMotionEvent,
};
use smithay::input::touch::{
    DownEvent, GrabStartData as TouchGrabStartData, MotionEvent as TouchMotionEvent,
    OrientationEvent, ShapeEvent, TouchGrab, TouchInnerHandle, UpEvent,
};
use smithay::reexports::wayland_protocols::xdg::shell::server::xdg_toplevel::{
    ResizeEdge, State as ToplevelState,
};
use smithay::utils::{Logical, Point, Rectangle, Serial, Size};
use smithay::wayland::shell::xdg::ToplevelSurface;
use wayland_server::Resource;
use wayland_server::protocol::wl_surface::WlSurface;

use crate::state::State;

/// What an interaction does with its window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interaction {
    Move,
    Resize(ResizeEdge),
}

/// A window being moved or resized, and where it was when it began.
#[derive(Debug, Clone)]
struct Gesture {
    window: Window,
    kind: Interaction,
    /// Where the press was (global logical).
    start: Point<f64, Logical>,
    /// The window's geometry then (global logical).
    initial: Rectangle<i32, Logical>,
}

/// A resize whose window has not yet drawn its last asked-for size: its top or left edge keeps
/// the window's opposite corner in place as its size changes.
#[derive(Debug, Clone)]
pub struct ResizeTrack {
    surface: WlSurface,
    edges: ResizeEdge,
    initial: Rectangle<i32, Logical>,
    /// The grab ended: the next commit is the last one followed.
    ended: bool,
}

fn has_edge(edges: ResizeEdge, edge: ResizeEdge) -> bool {
    (edges as u32) & (edge as u32) != 0
}

impl Gesture {
    /// The press moved to `p`.
    fn moved_to(&self, state: &mut State, p: Point<f64, Logical>) {
        let d = (p - self.start).to_i32_round::<i32>();
        match self.kind {
            Interaction::Move => {
                let at = self.initial.loc + d;
                state
                    .desktop
                    .space
                    .map_element(self.window.clone(), at, true);
                state.frames.damage();
            }
            Interaction::Resize(edges) => {
                let Some(toplevel) = self.window.toplevel() else {
                    return;
                };
                let mut size = self.initial.size;
                if has_edge(edges, ResizeEdge::Left) {
                    size.w -= d.x;
                } else if has_edge(edges, ResizeEdge::Right) {
                    size.w += d.x;
                }
                if has_edge(edges, ResizeEdge::Top) {
                    size.h -= d.y;
                } else if has_edge(edges, ResizeEdge::Bottom) {
                    size.h += d.y;
                }
                let size = clamp_size(toplevel, size);
                toplevel.with_pending_state(|s| {
                    s.states.set(ToplevelState::Resizing);
                    s.size = Some(size);
                });
                toplevel.send_pending_configure();
            }
        }
    }

    /// The press ended.
    fn ended(&self, state: &mut State) {
        if let (Interaction::Resize(_), Some(toplevel)) = (self.kind, self.window.toplevel()) {
            toplevel.with_pending_state(|s| {
                s.states.unset(ToplevelState::Resizing);
            });
            toplevel.send_pending_configure();
            if let Some(track) = state.desktop.resize.as_mut() {
                track.ended = true;
            }
        }
    }
}

/// `size` within the toplevel's own minimum and maximum (0: none), and at least 1×1.
fn clamp_size(toplevel: &ToplevelSurface, size: Size<i32, Logical>) -> Size<i32, Logical> {
    let (min, max) = smithay::wayland::compositor::with_states(toplevel.wl_surface(), |states| {
        let mut cached = states
            .cached_state
            .get::<smithay::wayland::shell::xdg::SurfaceCachedState>();
        let current = cached.current();
        (current.min_size, current.max_size)
    });
    let limit = |v: i32, lo: i32, hi: i32| {
        let v = v.max(lo.max(1));
        if hi > 0 { v.min(hi) } else { v }
    };
    Size::from((limit(size.w, min.w, max.w), limit(size.h, min.h, max.h)))
}

impl State {
    /// `surface` asks to be moved or resized from the press of `serial`: granted only while
    /// that press is the seat's pointer or touch grab and began on this client's surface.
    pub(crate) fn start_interaction(
        &mut self,
        surface: &ToplevelSurface,
        seat: &Seat<State>,
        serial: Serial,
        kind: Interaction,
    ) {
        let Some(window) = self.desktop.window_of(surface.wl_surface()) else {
            return;
        };
        let Some(loc) = self.desktop.space.element_location(&window) else {
            return;
        };
        let initial = Rectangle::new(loc, window.geometry().size);
        let same_client = |focus: Option<&WlSurface>| {
            focus.is_some_and(|f| f.id().same_client_as(&surface.wl_surface().id()))
        };
        if let Some(pointer) = seat.get_pointer()
            && pointer.has_grab(serial)
            && let Some(start) = pointer.grab_start_data()
            && same_client(start.focus.as_ref().map(|(s, _)| s))
        {
            self.track_resize(surface, kind, initial);
            let gesture = Gesture {
                window,
                kind,
                start: start.location,
                initial,
            };
            let grab = PointerInteraction {
                start_data: start,
                gesture,
            };
            pointer.set_grab(self, grab, serial, Focus::Clear);
            return;
        }
        // A touch point's own down (each point has its own focus, and no implicit grab).
        let point = self
            .touch
            .by_serial(serial)
            .map(|(slot, s, at)| (slot, s.clone(), at));
        if let (Some(touch), Some((slot, focus, at))) = (seat.get_touch(), point)
            && same_client(Some(&focus))
            && !touch.is_grabbed()
        {
            let start = TouchGrabStartData {
                focus: Some((focus, at)),
                slot,
                location: at,
            };
            self.track_resize(surface, kind, initial);
            let gesture = Gesture {
                window,
                kind,
                start: start.location,
                initial,
            };
            touch.set_grab(
                self,
                TouchInteraction {
                    start_data: start,
                    gesture,
                },
                serial,
            );
        }
        // Any other serial (stale, another client's, a key's): the request is ignored, as the
        // protocol allows.
    }

    fn track_resize(
        &mut self,
        surface: &ToplevelSurface,
        kind: Interaction,
        initial: Rectangle<i32, Logical>,
    ) {
        self.desktop.resize = match kind {
            Interaction::Resize(edges) => Some(ResizeTrack {
                surface: surface.wl_surface().clone(),
                edges,
                initial,
                ended: false,
            }),
            Interaction::Move => None,
        };
    }

    /// A commit on `surface`: while it is resized by its top or left edge, the window moves so
    /// the opposite edge stays where it was.
    pub(crate) fn follow_resize(&mut self, surface: &WlSurface) {
        let Some(track) = self.desktop.resize.clone() else {
            return;
        };
        if &track.surface != surface {
            return;
        }
        if track.ended {
            self.desktop.resize = None;
        }
        let Some(window) = self.desktop.window_of(surface) else {
            return;
        };
        let size = window.geometry().size;
        let mut at = track.initial.loc;
        if has_edge(track.edges, ResizeEdge::Left) {
            at.x += track.initial.size.w - size.w;
        }
        if has_edge(track.edges, ResizeEdge::Top) {
            at.y += track.initial.size.h - size.h;
        }
        if self.desktop.space.element_location(&window) != Some(at) {
            self.desktop.space.map_element(window, at, false);
        }
    }
}

/// A move or resize driven by the pointer.
struct PointerInteraction {
    start_data: PointerGrabStartData<State>,
    gesture: Gesture,
}

impl PointerGrab<State> for PointerInteraction {
    fn motion(
        &mut self,
        data: &mut State,
        handle: &mut PointerInnerHandle<'_, State>,
        _focus: Option<(WlSurface, Point<f64, Logical>)>,
        event: &MotionEvent,
    ) {
        // No client has the pointer while it moves or resizes a window.
        handle.motion(data, None, event);
        self.gesture.moved_to(data, event.location);
    }

    fn relative_motion(
        &mut self,
        data: &mut State,
        handle: &mut PointerInnerHandle<'_, State>,
        _focus: Option<(WlSurface, Point<f64, Logical>)>,
        event: &RelativeMotionEvent,
    ) {
        handle.relative_motion(data, None, event);
    }

    fn button(
        &mut self,
        data: &mut State,
        handle: &mut PointerInnerHandle<'_, State>,
        event: &ButtonEvent,
    ) {
        handle.button(data, event);
        if handle.current_pressed().is_empty() {
            self.gesture.ended(data);
            handle.unset_grab(self, data, event.serial, event.time, true);
        }
    }

    fn axis(
        &mut self,
        data: &mut State,
        handle: &mut PointerInnerHandle<'_, State>,
        details: AxisFrame,
    ) {
        handle.axis(data, details);
    }

    fn frame(&mut self, data: &mut State, handle: &mut PointerInnerHandle<'_, State>) {
        handle.frame(data);
    }

    fn gesture_swipe_begin(
        &mut self,
        data: &mut State,
        handle: &mut PointerInnerHandle<'_, State>,
        event: &GestureSwipeBeginEvent,
    ) {
        handle.gesture_swipe_begin(data, event);
    }

    fn gesture_swipe_update(
        &mut self,
        data: &mut State,
        handle: &mut PointerInnerHandle<'_, State>,
        event: &GestureSwipeUpdateEvent,
    ) {
        handle.gesture_swipe_update(data, event);
    }

    fn gesture_swipe_end(
        &mut self,
        data: &mut State,
        handle: &mut PointerInnerHandle<'_, State>,
        event: &GestureSwipeEndEvent,
    ) {
        handle.gesture_swipe_end(data, event);
    }

    fn gesture_pinch_begin(
        &mut self,
        data: &mut State,
        handle: &mut PointerInnerHandle<'_, State>,
        event: &GesturePinchBeginEvent,
    ) {
        handle.gesture_pinch_begin(data, event);
    }

    fn gesture_pinch_update(
        &mut self,
        data: &mut State,
        handle: &mut PointerInnerHandle<'_, State>,
        event: &GesturePinchUpdateEvent,
    ) {
        handle.gesture_pinch_update(data, event);
    }

    fn gesture_pinch_end(
        &mut self,
        data: &mut State,
        handle: &mut PointerInnerHandle<'_, State>,
        event: &GesturePinchEndEvent,
    ) {
        handle.gesture_pinch_end(data, event);
    }

    fn gesture_hold_begin(
        &mut self,
        data: &mut State,
        handle: &mut PointerInnerHandle<'_, State>,
        event: &GestureHoldBeginEvent,
    ) {
        handle.gesture_hold_begin(data, event);
    }

    fn gesture_hold_end(
        &mut self,
        data: &mut State,
        handle: &mut PointerInnerHandle<'_, State>,
        event: &GestureHoldEndEvent,
    ) {
        handle.gesture_hold_end(data, event);
    }

    fn start_data(&self) -> &PointerGrabStartData<State> {
        &self.start_data
    }

    fn unset(&mut self, _data: &mut State) {}
}

/// A move or resize driven by one touch point (the grab's slot); other points go on as usual.
struct TouchInteraction {
    start_data: TouchGrabStartData<State>,
    gesture: Gesture,
}

impl TouchGrab<State> for TouchInteraction {
    fn down(
        &mut self,
        data: &mut State,
        handle: &mut TouchInnerHandle<'_, State>,
        focus: Option<(WlSurface, Point<f64, Logical>)>,
        event: &DownEvent,
        seq: Serial,
    ) {
        handle.down(data, focus, event, seq);
    }

    fn up(
        &mut self,
        data: &mut State,
        handle: &mut TouchInnerHandle<'_, State>,
        event: &UpEvent,
        seq: Serial,
    ) {
        // The client is told its touch ended, where it began.
        handle.up(data, event, seq);
        if event.slot == self.start_data.slot {
            self.gesture.ended(data);
            handle.unset_grab(self, data);
        }
    }

    fn motion(
        &mut self,
        data: &mut State,
        handle: &mut TouchInnerHandle<'_, State>,
        focus: Option<(WlSurface, Point<f64, Logical>)>,
        event: &TouchMotionEvent,
        seq: Serial,
    ) {
        if event.slot == self.start_data.slot {
            self.gesture.moved_to(data, event.location);
        } else {
            handle.motion(data, focus, event, seq);
        }
    }

    fn frame(&mut self, data: &mut State, handle: &mut TouchInnerHandle<'_, State>, seq: Serial) {
        handle.frame(data, seq);
    }

    fn cancel(&mut self, data: &mut State, handle: &mut TouchInnerHandle<'_, State>, seq: Serial) {
        handle.cancel(data, seq);
        self.gesture.ended(data);
        handle.unset_grab(self, data);
    }

    fn shape(
        &mut self,
        data: &mut State,
        handle: &mut TouchInnerHandle<'_, State>,
        event: &ShapeEvent,
        seq: Serial,
    ) {
        handle.shape(data, event, seq);
    }

    fn orientation(
        &mut self,
        data: &mut State,
        handle: &mut TouchInnerHandle<'_, State>,
        event: &OrientationEvent,
        seq: Serial,
    ) {
        handle.orientation(data, event, seq);
    }

    fn start_data(&self) -> &TouchGrabStartData<State> {
        &self.start_data
    }

    fn unset(&mut self, _data: &mut State) {}
}
