//! Seat input injection for the harness in `tests/`. Compiled only with the `test-harness`
//! feature, which only the test crate enables: a Rust API on the compositor's own state, never
//! a Wayland request, so no client can reach it. Each call runs the same routing as a device;
//! outputs are unplugged and plugged in the same way, through the path a hotplug takes.

use smithay::backend::input::ButtonState;
use smithay::utils::Point;

use crate::backend::BackendError;
use crate::config::OutputSpec;
use crate::state::State;

/// `BTN_LEFT` from linux/input-event-codes.h.
pub const BTN_LEFT: u32 = 0x110;
/// `BTN_MIDDLE`: pastes the primary selection.
pub const BTN_MIDDLE: u32 = 0x112;

/// What the harness's pen does ([`State::inject_pen`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pen {
    /// It comes into proximity.
    In,
    /// It leaves proximity.
    Out,
    Motion,
    /// Its tip goes down.
    Down,
    /// Its tip goes up.
    Up,
    /// Its barrel button (`BTN_STYLUS`) goes down.
    ButtonDown,
    ButtonUp,
}

impl State {
    /// The pointer moves to (x, y) in global logical coordinates.
    pub fn inject_pointer_motion(&mut self, x: f64, y: f64) {
        self.pointer_motion(Point::from((x, y)), self.event_time());
    }

    /// The left button goes down or up where the pointer is.
    pub fn inject_pointer_button(&mut self, pressed: bool) {
        self.pointer_button(BTN_LEFT, pressed, self.event_time());
    }

    /// Pointer button `code` (evdev, e.g. `BTN_MIDDLE`) goes down or up where the pointer is.
    pub fn inject_button(&mut self, code: u32, pressed: bool) {
        self.pointer_button(code, pressed, self.event_time());
    }

    /// Moves the pointer to (x, y) and clicks there.
    pub fn inject_click(&mut self, x: f64, y: f64) {
        self.inject_pointer_motion(x, y);
        self.inject_pointer_button(true);
        self.inject_pointer_button(false);
    }

    /// The first finger (slot 0) goes down at (x, y).
    pub fn inject_touch_down(&mut self, x: f64, y: f64) {
        self.inject_touch_down_at(0, x, y);
    }

    /// The first finger (slot 0) lifts.
    pub fn inject_touch_up(&mut self) {
        self.inject_touch_up_at(0);
    }

    /// Finger `slot` goes down at (x, y) in global logical coordinates.
    pub fn inject_touch_down_at(&mut self, slot: u32, x: f64, y: f64) {
        self.touch_down(Some(slot).into(), Point::from((x, y)), self.event_time());
    }

    /// Finger `slot` moves to (x, y).
    pub fn inject_touch_motion(&mut self, slot: u32, x: f64, y: f64) {
        self.touch_motion(Some(slot).into(), Point::from((x, y)), self.event_time());
    }

    /// Finger `slot` lifts.
    pub fn inject_touch_up_at(&mut self, slot: u32) {
        self.touch_up(Some(slot).into(), self.event_time());
    }

    /// The touch source cancels every finger.
    pub fn inject_touch_cancel(&mut self) {
        self.touch_cancel();
    }

    /// A vertical scroll of `dy` logical pixels (a touchpad's two fingers) where the pointer is.
    pub fn inject_scroll(&mut self, dy: f64) {
        let frame = smithay::input::pointer::AxisFrame::new(self.event_time())
            .source(smithay::backend::input::AxisSource::Finger)
            .value(smithay::backend::input::Axis::Vertical, dy);
        self.pointer_axis(frame);
    }

    /// A touchpad pinch of `fingers` fingers where the pointer is: its beginning, one update
    /// growing it by `scale`, and its end.
    pub fn inject_pinch(&mut self, fingers: u32, scale: f64) {
        use smithay::input::pointer::{
            GesturePinchBeginEvent, GesturePinchEndEvent, GesturePinchUpdateEvent,
        };
        use smithay::utils::SERIAL_COUNTER;

        use crate::input::Gesture;
        let time = self.event_time();
        self.gesture(Gesture::PinchBegin(GesturePinchBeginEvent {
            serial: SERIAL_COUNTER.next_serial(),
            time,
            fingers,
        }));
        self.gesture(Gesture::PinchUpdate(GesturePinchUpdateEvent {
            time,
            delta: (0.0, 0.0).into(),
            scale,
            rotation: 0.0,
        }));
        self.gesture(Gesture::PinchEnd(GesturePinchEndEvent {
            serial: SERIAL_COUNTER.next_serial(),
            time,
            cancelled: false,
        }));
    }

    /// The harness's pen on its tablet does `what` at (x, y) (the point is not used for
    /// [`Pen::Out`] and the buttons). The tablet is plugged in with the first event.
    pub fn inject_pen(&mut self, what: Pen, x: f64, y: f64) {
        use smithay::backend::input::{
            TabletToolCapabilities, TabletToolDescriptor, TabletToolTipState, TabletToolType,
        };
        use smithay::wayland::tablet_manager::TabletDescriptor;

        use crate::tablet_input::{ToolAction, ToolEvent};
        /// `BTN_STYLUS` from linux/input-event-codes.h.
        const BTN_STYLUS: u32 = 0x14b;
        let tablet = TabletDescriptor {
            name: "pcp harness tablet".into(),
            usb_id: None,
            syspath: None,
        };
        self.tablet_added(&tablet);
        let p = Point::from((x, y));
        let what = match what {
            Pen::In => ToolAction::In(p),
            Pen::Out => ToolAction::Out,
            Pen::Motion => ToolAction::Motion(p),
            Pen::Down => ToolAction::Tip(p, TabletToolTipState::Down),
            Pen::Up => ToolAction::Tip(p, TabletToolTipState::Up),
            Pen::ButtonDown => ToolAction::Button(BTN_STYLUS, ButtonState::Pressed),
            Pen::ButtonUp => ToolAction::Button(BTN_STYLUS, ButtonState::Released),
        };
        let event = ToolEvent {
            tablet,
            tool: TabletToolDescriptor {
                tool_type: TabletToolType::Pen,
                hardware_serial: 1,
                hardware_id_wacom: 0,
                capabilities: TabletToolCapabilities::PRESSURE,
            },
            time: self.event_time(),
            what,
        };
        self.tablet_tool(event);
    }

    /// A key (evdev code) goes down or up.
    pub fn inject_key(&mut self, code: u32, pressed: bool) {
        let state = if pressed {
            smithay::backend::input::KeyState::Pressed
        } else {
            smithay::backend::input::KeyState::Released
        };
        // Smithay's keycodes are xkb keycodes: evdev codes + 8.
        self.key((code + 8).into(), state, self.event_time());
    }

    /// The compositor tells time by `clock` from now on (a frozen clock stands still between
    /// [`State::advance_clock`] calls, so guard and timeout tests never race real time).
    pub fn use_clock(&mut self, clock: crate::state::Clock) {
        self.clock = clock;
    }

    /// Moves the compositor's clock forward by `ms` and runs what the plugin's timer runs when
    /// it fires: timeouts, the guard and a press-and-hold happen with no test waiting for them.
    pub fn advance_clock(&mut self, ms: i64) {
        self.clock.advance(ms);
        pcp_plugin::on_wakeup(self);
    }

    /// Unplugs output `index`, as a connector hotplug would: later outputs move down one index.
    /// Returns the removed output's name.
    pub fn unplug_output(&mut self, index: usize) -> Result<String, BackendError> {
        self.remove_output(index)
    }

    /// Unplugs the output named `name` (`HEADLESS-2`).
    pub fn unplug_output_named(&mut self, name: &str) -> Result<String, BackendError> {
        let index = self
            .backend
            .output_index(name)
            .ok_or_else(|| BackendError::NoOutputNamed(name.to_string()))?;
        self.remove_output(index)
    }

    /// Plugs in a headless output of `spec` (`WxH[*S][@X,Y]`). Returns its index (the last).
    pub fn plug_output(&mut self, spec: &str) -> Result<usize, BackendError> {
        let parsed: OutputSpec = spec.parse().map_err(|e: crate::config::SpecError| {
            BackendError::Buffer(spec.to_string(), e.to_string())
        })?;
        self.add_output(&parsed)
    }

    fn event_time(&self) -> u32 {
        (self.clock.now_ms() & 0xffff_ffff) as u32
    }
}

impl State {
    /// Replaces the speech engine (`None`: voice off), as a host would on a config change; the
    /// harness shares one loaded model between compositors.
    pub fn set_speech_engine(&mut self, engine: Option<pcp_speech::SpeechEngine>) {
        let engine = engine.map(|e| Box::new(e) as Box<dyn pcp_speech::Voice>);
        pcp_plugin::testing::set_speech_engine(self, engine);
    }

    /// Replaces the haptic backend (the harness puts in a recording one).
    pub fn set_haptics(&mut self, backend: Box<dyn pcp_haptics::Haptics>) {
        pcp_plugin::testing::set_haptics(self, backend);
    }
}

impl State {
    /// Every mapped popup's geometry (global logical), the windows' and then the layers' in
    /// stacking order, for tests that check where menus went.
    pub fn popup_rects(&self) -> Vec<smithay::utils::Rectangle<i32, smithay::utils::Logical>> {
        use smithay::backend::renderer::utils::with_renderer_surface_state;
        use smithay::desktop::PopupManager;
        let mut rects = Vec::new();
        for window in self.desktop.space.elements() {
            let (Some(toplevel), Some(loc)) = (
                window.toplevel(),
                self.desktop.space.element_location(window),
            ) else {
                continue;
            };
            for (popup, offset) in PopupManager::popups_for_surface(toplevel.wl_surface()) {
                let has_buffer =
                    with_renderer_surface_state(popup.wl_surface(), |s| s.buffer().is_some())
                        .unwrap_or(false);
                if has_buffer {
                    let size = popup.geometry().size;
                    rects.push(smithay::utils::Rectangle::new(loc + offset, size));
                }
            }
        }
        rects
    }

    /// Moves the first window so its geometry's top-left is at (x, y) (global logical).
    pub fn move_first_window(&mut self, x: i32, y: i32) {
        let window = self.desktop.space.elements().next().cloned();
        if let Some(window) = window {
            self.desktop.space.map_element(window, (x, y), true);
            self.frames.damage();
        }
    }

    /// Moves the window whose (declared) app id is `app_id` so its geometry's top-left is at
    /// (x, y). Returns whether there is one.
    pub fn move_window_of(&mut self, app_id: &str, x: i32, y: i32) -> bool {
        let window = self
            .desktop
            .space
            .elements()
            .find(|w| crate::handlers::xdg::app_id(w).as_deref() == Some(app_id))
            .cloned();
        let Some(window) = window else {
            return false;
        };
        self.desktop.space.map_element(window, (x, y), false);
        self.frames.damage();
        true
    }

    /// The geometry (x, y, width, height, global logical) of the window whose app id is
    /// `app_id`.
    pub fn window_rect_of(&self, app_id: &str) -> Option<(i32, i32, i32, i32)> {
        self.desktop.space.elements().find_map(|w| {
            if crate::handlers::xdg::app_id(w).as_deref() != Some(app_id) {
                return None;
            }
            let at = self.desktop.space.element_location(w)?;
            let size = w.geometry().size;
            Some((at.x, at.y, size.w, size.h))
        })
    }

    /// The top-left corner of the window (geometry) of the client process `pid`.
    pub fn window_location_of_pid(&self, pid: u32) -> Option<(i32, i32)> {
        use wayland_server::Resource;
        self.desktop.space.elements().find_map(|w| {
            let surface = w.toplevel()?.wl_surface().clone();
            let client = self.dh.get_client(surface.id()).ok()?;
            let creds = client.get_credentials(&self.dh).ok()?;
            if creds.pid != pid as i32 {
                return None;
            }
            self.desktop.space.element_location(w).map(|l| (l.x, l.y))
        })
    }
}
