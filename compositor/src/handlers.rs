//! Smithay's handler traits for the reference compositor (compositor, xdg-shell, shm, seat,
//! output) and its [`IntentHandler`]: identity from toplevels, and the built-in capabilities it
//! performs after approval.

use serde_json::Value;
use smithay::backend::renderer::utils::on_commit_buffer_handler;
use smithay::desktop::Window;
use smithay::input::{Seat, SeatHandler, SeatState};
use smithay::reexports::wayland_protocols::xdg::shell::server::xdg_toplevel;
use smithay::utils::{SERIAL_COUNTER, Serial};
use smithay::wayland::buffer::BufferHandler;
use smithay::wayland::compositor::{
    CompositorClientState, CompositorHandler, CompositorState, with_states,
};
use smithay::wayland::output::OutputHandler;
use smithay::wayland::shell::xdg::{
    PopupSurface, PositionerState, ToplevelSurface, XdgShellHandler, XdgShellState,
    XdgToplevelSurfaceData,
};
use smithay::wayland::shm::{ShmHandler, ShmState};
use smithay::{
    delegate_compositor, delegate_output, delegate_seat, delegate_shm, delegate_xdg_shell,
};
use wayland_server::protocol::wl_buffer::WlBuffer;
use wayland_server::protocol::wl_output::WlOutput;
use wayland_server::protocol::wl_seat::WlSeat;
use wayland_server::protocol::wl_surface::WlSurface;
use wayland_server::{Client, Resource};

use crate::intent::{IntentHandler, IntentManagerState};
use crate::state::{ClientState, State};

impl CompositorHandler for State {
    fn compositor_state(&mut self) -> &mut CompositorState {
        &mut self.compositor_state
    }

    fn client_compositor_state<'a>(&self, client: &'a Client) -> &'a CompositorClientState {
        match client.get_data::<ClientState>() {
            Some(data) => &data.compositor,
            None => {
                // Every client is inserted with ClientState; anything else is a bug.
                tracing::error!("a client without ClientState");
                static FALLBACK: std::sync::OnceLock<CompositorClientState> =
                    std::sync::OnceLock::new();
                FALLBACK.get_or_init(CompositorClientState::default)
            }
        }
    }

    fn commit(&mut self, surface: &WlSurface) {
        on_commit_buffer_handler::<Self>(surface);
        let window = self
            .space
            .elements()
            .find(|w| w.toplevel().is_some_and(|t| t.wl_surface() == surface))
            .cloned();
        if let Some(window) = window {
            window.on_commit();
            let sent = with_states(surface, |states| {
                states
                    .data_map
                    .get::<XdgToplevelSurfaceData>()
                    .and_then(|d| d.lock().ok().map(|d| d.initial_configure_sent))
                    .unwrap_or(true)
            });
            if !sent && let Some(toplevel) = window.toplevel() {
                toplevel.send_configure();
                // Focus only after the first configure: a keyboard enter before it crashed
                // foot (it handles input for a window it has not set up yet).
                if !self.overlay.is_open()
                    && let Some(keyboard) = self.seat.get_keyboard()
                {
                    keyboard.set_focus(self, Some(surface.clone()), SERIAL_COUNTER.next_serial());
                }
            }
        } else {
            self.layer_commit(surface);
        }
        self.dirty = true;
    }
}

impl BufferHandler for State {
    fn buffer_destroyed(&mut self, _buffer: &WlBuffer) {}
}

impl ShmHandler for State {
    fn shm_state(&self) -> &ShmState {
        &self.shm_state
    }
}

impl XdgShellHandler for State {
    fn xdg_shell_state(&mut self) -> &mut XdgShellState {
        &mut self.xdg_shell_state
    }

    fn new_toplevel(&mut self, surface: ToplevelSurface) {
        surface.with_pending_state(|state| {
            state.states.set(xdg_toplevel::State::Activated);
        });
        // It gets the keyboard with its first configure (see `commit`).
        self.place_new_window(Window::new_wayland_window(surface));
    }

    fn toplevel_destroyed(&mut self, surface: ToplevelSurface) {
        let window = self
            .space
            .elements()
            .find(|w| w.toplevel().is_some_and(|t| t == &surface))
            .cloned();
        if let Some(window) = window {
            self.space.unmap_elem(&window);
            self.dirty = true;
        }
    }

    fn fullscreen_request(&mut self, surface: ToplevelSurface, _output: Option<WlOutput>) {
        // Fullscreen on the output nearest the focal point; the dialog still draws above it.
        let Some(index) = self.backend.nearest_output(self.focus) else {
            return;
        };
        let spec = self.backend.outputs[index].spec;
        let (w, h) = spec.logical_size();
        surface.with_pending_state(|state| {
            state.states.set(xdg_toplevel::State::Fullscreen);
            state.size = Some((w, h).into());
        });
        let window = self
            .space
            .elements()
            .find(|w| w.toplevel().is_some_and(|t| t == &surface))
            .cloned();
        if let Some(window) = window {
            self.space.map_element(window, (spec.x, spec.y), true);
        }
        let sent = with_states(surface.wl_surface(), |states| {
            states
                .data_map
                .get::<XdgToplevelSurfaceData>()
                .and_then(|d| d.lock().ok().map(|d| d.initial_configure_sent))
                .unwrap_or(false)
        });
        // Before the first commit the initial configure carries the state.
        if sent {
            surface.send_configure();
        }
        self.dirty = true;
    }

    fn new_popup(&mut self, _surface: PopupSurface, _positioner: PositionerState) {}

    fn grab(&mut self, _surface: PopupSurface, _seat: WlSeat, _serial: Serial) {}

    fn reposition_request(
        &mut self,
        _surface: PopupSurface,
        _positioner: PositionerState,
        _token: u32,
    ) {
    }
}

impl SeatHandler for State {
    type KeyboardFocus = WlSurface;
    type PointerFocus = WlSurface;
    type TouchFocus = WlSurface;

    fn seat_state(&mut self) -> &mut SeatState<State> {
        &mut self.seat_state
    }

    fn focus_changed(&mut self, seat: &Seat<State>, focused: Option<&WlSurface>) {
        crate::data_device::focus_changed(self, seat, focused);
    }
}

impl OutputHandler for State {}

delegate_compositor!(State);
delegate_shm!(State);
delegate_xdg_shell!(State);
delegate_seat!(State);
delegate_output!(State);
crate::delegate_intent!(State);

/// The app id of a toplevel.
pub fn app_id(window: &Window) -> Option<String> {
    let toplevel = window.toplevel()?;
    with_states(toplevel.wl_surface(), |states| {
        states
            .data_map
            .get::<XdgToplevelSurfaceData>()
            .and_then(|d| d.lock().ok().and_then(|d| d.app_id.clone()))
    })
}

impl State {
    /// The windows whose app id is `name`.
    fn windows_named(&self, name: &str) -> Vec<Window> {
        self.space
            .elements()
            .filter(|w| app_id(w).as_deref() == Some(name))
            .cloned()
            .collect()
    }

    fn output_index(&self, name: &Value) -> Result<usize, String> {
        let outputs = &self.backend.outputs;
        let found = match name {
            Value::String(s) => outputs.iter().position(|o| o.output.name() == *s),
            Value::Number(n) => n
                .as_u64()
                .and_then(|n| usize::try_from(n).ok())
                .filter(|n| *n < outputs.len()),
            _ => None,
        };
        found.ok_or_else(|| format!("there is no output {name}"))
    }
}

fn param<'a>(params: &'a Value, key: &str) -> Result<&'a Value, String> {
    params
        .get(key)
        .ok_or_else(|| format!("the parameter `{key}` is missing"))
}

impl IntentHandler for State {
    fn intent_state(&mut self) -> &mut IntentManagerState {
        &mut self.intents
    }

    fn now_ms(&self) -> i64 {
        self.clock.now_ms()
    }

    fn app_id_of(&self, client: &Client) -> Option<String> {
        self.space.elements().find_map(|w| {
            let toplevel = w.toplevel()?;
            let owner = toplevel.wl_surface().client()?;
            (owner.id() == client.id()).then(|| app_id(w)).flatten()
        })
    }

    fn execute_builtin(&mut self, capability: &str, params: &Value) -> Result<(), String> {
        match capability {
            "window.close" => {
                let name = param(params, "window")?
                    .as_str()
                    .ok_or("`window` must be an app id")?;
                let windows = self.windows_named(name);
                if windows.is_empty() {
                    return Err(format!("no window has the app id `{name}`"));
                }
                for w in windows {
                    if let Some(t) = w.toplevel() {
                        t.send_close();
                    }
                }
            }
            "window.move" => {
                let name = param(params, "window")?
                    .as_str()
                    .ok_or("`window` must be an app id")?;
                let index = self.output_index(param(params, "output")?)?;
                let spec = self.backend.outputs[index].spec;
                let windows = self.windows_named(name);
                if windows.is_empty() {
                    return Err(format!("no window has the app id `{name}`"));
                }
                for w in windows {
                    self.space.map_element(w, (spec.x, spec.y), false);
                }
                self.dirty = true;
            }
            "output.configure" => {
                let index = self.output_index(param(params, "output")?)?;
                let mode = param(params, "mode")?
                    .as_str()
                    .ok_or("`mode` must be WxH or WxH*SCALE")?;
                self.backend
                    .reconfigure(index, mode)
                    .map_err(|e| e.to_string())?;
                self.dirty = true;
            }
            "session.logout" => self.running = false,
            other => return Err(format!("this compositor does not perform {other}")),
        }
        self.performed
            .push((capability.to_string(), params.clone()));
        Ok(())
    }

    fn prompts_changed(&mut self) {
        self.schedule_deadline();
        self.sync_devices();
        self.sync_overlay();
    }

    fn before_decision(&mut self) {
        self.refresh_availability();
    }
}

impl State {
    /// Clients lose keyboard focus while the dialog is up.
    pub(crate) fn take_keyboard_focus(&mut self) {
        if let Some(keyboard) = self.seat.get_keyboard() {
            keyboard.set_focus(self, None, SERIAL_COUNTER.next_serial());
        }
        if let Some(pointer) = self.seat.get_pointer() {
            let location = self.pointer;
            pointer.motion(
                self,
                None,
                &smithay::input::pointer::MotionEvent {
                    location,
                    serial: SERIAL_COUNTER.next_serial(),
                    time: 0,
                },
            );
            pointer.frame(self);
        }
    }

    /// The top window gets the keyboard back when the dialog goes.
    pub(crate) fn restore_keyboard_focus(&mut self) {
        let top = self
            .space
            .elements()
            .last()
            .and_then(|w| w.toplevel().map(|t| t.wl_surface().clone()));
        if let Some(keyboard) = self.seat.get_keyboard() {
            keyboard.set_focus(self, top, SERIAL_COUNTER.next_serial());
        }
    }

    /// Convenience for `Seat` users.
    pub fn seat(&self) -> &Seat<State> {
        &self.seat
    }
}
