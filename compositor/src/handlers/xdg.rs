//! xdg-shell: toplevels become windows in the space, placed on the output nearest the focal
//! point (cascaded), fullscreen on that output or maximized on theirs when asked, moved and
//! resized interactively from a press they were given ([`crate::grabs`]); popups (menus,
//! tooltips) are placed by their positioners and kept on their window's output, and may take a
//! popup grab — never while the dialog holds the keyboard. The dialog stays above them all (it is drawn after the
//! space, and the plugin sees every input event before a grab does).

use smithay::delegate_xdg_shell;
use smithay::desktop::{
    PopupKeyboardGrab, PopupKind, PopupPointerGrab, PopupUngrabStrategy, Window,
    find_popup_root_surface, get_popup_toplevel_coords,
};
use smithay::input::Seat;
use smithay::input::pointer::Focus;
use smithay::reexports::wayland_protocols::xdg::shell::server::xdg_toplevel;
use smithay::utils::{Logical, Rectangle, Serial};
use smithay::wayland::compositor::with_states;
use smithay::wayland::shell::xdg::{
    PopupSurface, PositionerState, ToplevelSurface, XdgShellHandler, XdgShellState,
    XdgToplevelSurfaceData,
};
use wayland_server::protocol::wl_output::WlOutput;
use wayland_server::protocol::wl_seat::WlSeat;

use crate::grabs::Interaction;
use crate::state::State;

/// How far each new window is moved down and right from the previous one, and after how many
/// it starts again at the corner.
const CASCADE_STEP: i32 = 32;
const CASCADE_LENGTH: usize = 8;

impl XdgShellHandler for State {
    fn xdg_shell_state(&mut self) -> &mut XdgShellState {
        &mut self.protocols.xdg_shell
    }

    fn new_toplevel(&mut self, surface: ToplevelSurface) {
        // A new window ends an open menu's grab (popup_done), as it takes the keyboard.
        self.break_popup_grab();
        // It gets the keyboard, and so is activated, with its first configure (see the
        // compositor handler's commit).
        self.place_new_window(Window::new_wayland_window(surface));
    }

    fn toplevel_destroyed(&mut self, surface: ToplevelSurface) {
        let window = self
            .desktop
            .space
            .elements()
            .find(|w| w.toplevel().is_some_and(|t| t == &surface))
            .cloned();
        if let Some(window) = window {
            self.desktop.space.unmap_elem(&window);
            self.frames.damage();
        }
        self.refocus_pointer();
    }

    fn fullscreen_request(&mut self, surface: ToplevelSurface, _output: Option<WlOutput>) {
        // Fullscreen on the output nearest the focal point; the dialog still draws above it.
        let Some(index) = self.backend.nearest_output(self.pointer.focal_point()) else {
            return;
        };
        let spec = self.backend.outputs[index].spec;
        let (w, h) = spec.logical_size();
        surface.with_pending_state(|state| {
            state.states.set(xdg_toplevel::State::Fullscreen);
            state.size = Some((w, h).into());
        });
        let window = self
            .desktop
            .space
            .elements()
            .find(|w| w.toplevel().is_some_and(|t| t == &surface))
            .cloned();
        if let Some(window) = window {
            self.desktop
                .space
                .map_element(window, (spec.x, spec.y), true);
        }
        // Before the first commit the initial configure carries the state.
        if initial_configure_sent(&surface) {
            surface.send_configure();
        }
        self.frames.damage();
    }

    fn new_popup(&mut self, surface: PopupSurface, _positioner: PositionerState) {
        // The positioner's geometry is already pending; keep it on the output.
        self.unconstrain_popup(&surface);
        if let Err(e) = self.desktop.popups.track_popup(PopupKind::from(surface)) {
            tracing::debug!("a popup died before it was tracked: {e:?}");
        }
    }

    fn grab(&mut self, surface: PopupSurface, seat: WlSeat, serial: Serial) {
        let kind = PopupKind::from(surface);
        // While the dialog holds the keyboard no client may take it with a grab: the popup is
        // dismissed at once (popup_done), as the protocol allows for any refused grab.
        if self.pcp.ui().wants_keyboard() {
            tracing::info!("a popup grab was refused: the dialog holds the keyboard");
            dismiss(&kind);
            return;
        }
        let Some(seat) = Seat::<State>::from_resource(&seat) else {
            dismiss(&kind);
            return;
        };
        let Ok(root) = find_popup_root_surface(&kind) else {
            return;
        };
        let mut grab = match self
            .desktop
            .popups
            .grab_popup(root, kind.clone(), &seat, serial)
        {
            Ok(grab) => grab,
            Err(e) => {
                tracing::debug!("a popup grab was refused: {e:?}");
                return;
            }
        };
        if let Some(keyboard) = seat.get_keyboard() {
            let previous = grab.previous_serial().unwrap_or(serial);
            if keyboard.is_grabbed() && !(keyboard.has_grab(serial) || keyboard.has_grab(previous))
            {
                grab.ungrab(PopupUngrabStrategy::All);
                return;
            }
            keyboard.set_focus(self, grab.current_grab(), serial);
            keyboard.set_grab(self, PopupKeyboardGrab::new(&grab), serial);
        }
        if let Some(pointer) = seat.get_pointer() {
            let previous = grab.previous_serial().unwrap_or_else(|| grab.serial());
            if pointer.is_grabbed() && !(pointer.has_grab(serial) || pointer.has_grab(previous)) {
                grab.ungrab(PopupUngrabStrategy::All);
                return;
            }
            pointer.set_grab(self, PopupPointerGrab::new(&grab), serial, Focus::Keep);
        }
        self.desktop.set_popup_grab(grab);
    }

    fn reposition_request(
        &mut self,
        surface: PopupSurface,
        positioner: PositionerState,
        token: u32,
    ) {
        surface.with_pending_state(|state| {
            state.geometry = positioner.get_geometry();
            state.positioner = positioner;
        });
        self.unconstrain_popup(&surface);
        surface.send_repositioned(token);
        self.frames.damage();
    }

    fn popup_destroyed(&mut self, _surface: PopupSurface) {
        self.frames.damage();
        // The pointer leaves the menu for what it uncovered.
        self.refocus_pointer();
    }

    fn move_request(&mut self, surface: ToplevelSurface, seat: WlSeat, serial: Serial) {
        if let Some(seat) = Seat::<State>::from_resource(&seat) {
            self.start_interaction(&surface, &seat, serial, Interaction::Move);
        }
    }

    fn resize_request(
        &mut self,
        surface: ToplevelSurface,
        seat: WlSeat,
        serial: Serial,
        edges: xdg_toplevel::ResizeEdge,
    ) {
        if let Some(seat) = Seat::<State>::from_resource(&seat) {
            self.start_interaction(&surface, &seat, serial, Interaction::Resize(edges));
        }
    }

    fn maximize_request(&mut self, surface: ToplevelSurface) {
        // The output the window is on, less what panels keep for themselves.
        let window = self.desktop.window_of(surface.wl_surface());
        let area = window.as_ref().and_then(|w| self.work_area_for(w));
        surface.with_pending_state(|state| {
            state.states.set(xdg_toplevel::State::Maximized);
            state.size = area.map(|a| a.size);
        });
        if let (Some(window), Some(area)) = (window, area) {
            self.desktop.space.map_element(window, area.loc, true);
        }
        configure_if_mapped(&surface);
        self.frames.damage();
    }

    fn unmaximize_request(&mut self, surface: ToplevelSurface) {
        surface.with_pending_state(|state| {
            state.states.unset(xdg_toplevel::State::Maximized);
            state.size = None;
        });
        configure_if_mapped(&surface);
        self.frames.damage();
    }

    fn unfullscreen_request(&mut self, surface: ToplevelSurface) {
        surface.with_pending_state(|state| {
            state.states.unset(xdg_toplevel::State::Fullscreen);
            state.size = None;
        });
        configure_if_mapped(&surface);
        self.frames.damage();
    }
}

/// Sends `surface`'s pending state now, once its initial configure went (before it, that
/// configure carries the state).
fn configure_if_mapped(surface: &ToplevelSurface) {
    if initial_configure_sent(surface) {
        surface.send_pending_configure();
    }
}

/// Whether `surface` has had its initial configure.
fn initial_configure_sent(surface: &ToplevelSurface) -> bool {
    with_states(surface.wl_surface(), |states| {
        states
            .data_map
            .get::<XdgToplevelSurfaceData>()
            .and_then(|d| d.lock().ok().map(|d| d.initial_configure_sent))
            .unwrap_or(false)
    })
}

/// Dismisses `popup` (and the popups above it) with popup_done.
fn dismiss(popup: &PopupKind) {
    if let Ok(root) = find_popup_root_surface(popup)
        && let Err(e) = smithay::desktop::PopupManager::dismiss_popup(&root, popup)
    {
        tracing::debug!("a popup died before it was dismissed: {e:?}");
    }
}

delegate_xdg_shell!(State);

/// The app id a toplevel declares (unverified: shown as secondary text, never trusted).
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
    /// Breaks the popup grab in force, if any (its popups get popup_done): the dialog took the
    /// keyboard, and no client grab may keep the pointer or keyboard from it.
    pub(crate) fn break_popup_grab(&mut self) {
        let Some(mut grab) = self.desktop.take_popup_grab() else {
            return;
        };
        grab.ungrab(PopupUngrabStrategy::All);
        let serial = smithay::utils::SERIAL_COUNTER.next_serial();
        if let Some(keyboard) = self.seat.get_keyboard() {
            keyboard.unset_grab(self);
        }
        if let Some(pointer) = self.seat.get_pointer() {
            pointer.unset_grab(self, serial, 0);
        }
        self.frames.damage();
    }

    /// Keeps a popup on the output its window is on (the one holding most of the window, else
    /// the one nearest it): the positioner's constraint adjustments (slide, flip, resize) are
    /// applied against that output's rectangle, expressed relative to the popup's parent.
    fn unconstrain_popup(&self, popup: &PopupSurface) {
        let kind = PopupKind::from(popup.clone());
        let Ok(root) = find_popup_root_surface(&kind) else {
            return;
        };
        let window = self
            .desktop
            .space
            .elements()
            .find(|w| w.toplevel().is_some_and(|t| t.wl_surface() == &root));
        let placed = match window {
            Some(window) => self.desktop.space.element_location(window).and_then(|loc| {
                let area = Rectangle::new(loc, window.geometry().size);
                Some((self.output_rect_for(area)?, loc))
            }),
            // A layer surface's popup: its layer's output.
            None => self.layer_placement(&root),
        };
        let Some((output, parent_origin)) = placed else {
            return;
        };
        let mut target = output;
        target.loc -= get_popup_toplevel_coords(&kind);
        target.loc -= parent_origin;
        popup.with_pending_state(|state| {
            state.geometry = state.positioner.get_unconstrained_geometry(target);
        });
    }

    /// The rectangle of the output holding most of `area`, else of the one nearest its centre.
    fn output_rect_for(&self, area: Rectangle<i32, Logical>) -> Option<Rectangle<i32, Logical>> {
        let rects = self.backend.outputs.iter().map(|o| {
            let (w, h) = o.spec.logical_size();
            Rectangle::new((o.spec.x, o.spec.y).into(), (w, h).into())
        });
        let best = rects
            .clone()
            .filter_map(|r| {
                let i = r.intersection(area)?;
                Some((i64::from(i.size.w) * i64::from(i.size.h), r))
            })
            .max_by_key(|(a, _)| *a)
            .map(|(_, r)| r);
        best.or_else(|| {
            let centre = area.loc + area.size.downscale(2).to_point();
            let i = self.backend.nearest_output(centre.to_f64())?;
            rects.clone().nth(i)
        })
    }

    /// Where a maximized `window` goes: the output holding most of it (else the one nearest the
    /// focal point), less the exclusive zones of its layer surfaces (global logical).
    fn work_area_for(&self, window: &Window) -> Option<Rectangle<i32, Logical>> {
        let output = self
            .desktop
            .space
            .outputs_for_element(window)
            .into_iter()
            .next()
            .or_else(|| {
                let i = self.backend.nearest_output(self.pointer.focal_point())?;
                self.backend.outputs.get(i).map(|o| o.output.clone())
            })?;
        let origin = self.desktop.space.output_geometry(&output)?.loc;
        let zone = smithay::desktop::layer_map_for_output(&output).non_exclusive_zone();
        Some(Rectangle::new(origin + zone.loc, zone.size))
    }

    /// Where a new window goes: the output nearest the focal point, cascaded by the number of
    /// windows already there.
    fn place_new_window(&mut self, window: Window) {
        let index = self
            .backend
            .nearest_output(self.pointer.focal_point())
            .unwrap_or(0);
        let (x, y) = self
            .backend
            .outputs
            .get(index)
            .map(|o| (o.spec.x, o.spec.y))
            .unwrap_or((0, 0));
        let step = CASCADE_STEP * (self.desktop.space.elements().count() % CASCADE_LENGTH) as i32;
        self.desktop
            .space
            .map_element(window, (x + step, y + step), true);
        self.frames.damage();
    }
}
