//! Tablet tools (a pen, an eraser), each call standing in for Smithay's own `TabletToolHandle`
//! call. A tool hovering where the dialog takes input leaves the windows (they get its
//! proximity-out) and hovers the dialog; its tip is a press like a button's — one that went
//! down on the dialog presses its controls and lifts there, one that went down on a window
//! stays the window's stroke even over the dialog. The tool's own buttons never press a
//! control: on the dialog they are taken from the windows and do nothing. A tool leaving
//! proximity with its tip down cancels its press.

use smithay::backend::input::ButtonState;
use smithay::reexports::wayland_server::protocol::wl_surface::WlSurface;
use smithay::utils::{Logical, Point, Serial};
use smithay::wayland::tablet_manager::{TabletHandle, TabletToolHandle};

use super::{Contact, Down, Owner, Routed, point, seat_at, settle, settle_moved};
use crate::PcpHandler;
use crate::ui::ConfirmUi;

/// `TabletToolHandle::proximity_in`, with the dialog first: the tool came into proximity at
/// `location` over `under` (what you found there, if anything). True when it hovers the dialog
/// (no window hears of it).
pub fn tablet_proximity_in<D: PcpHandler>(
    state: &mut D,
    tool: &TabletToolHandle,
    location: Point<f64, Logical>,
    under: Option<(WlSurface, Point<f64, Logical>)>,
    tablet: &TabletHandle,
    serial: Serial,
    time: u32,
) -> bool {
    let now = state.now_ms();
    seat_at(state, point(location));
    let routed = state.pcp().ui_mut().tool_motion(point(location), now);
    let taken = settle_moved(state, routed);
    if !taken && let Some(under) = under {
        tool.proximity_in(location, under, tablet, serial, time);
    }
    taken
}

/// `TabletToolHandle::motion`, with the dialog first: a stroke goes on where its tip went
/// down; a hovering tool over the dialog leaves the windows. True when the dialog has it.
pub fn tablet_motion<D: PcpHandler>(
    state: &mut D,
    tool: &TabletToolHandle,
    location: Point<f64, Logical>,
    under: Option<(WlSurface, Point<f64, Logical>)>,
    tablet: &TabletHandle,
    serial: Serial,
    time: u32,
) -> bool {
    let now = state.now_ms();
    seat_at(state, point(location));
    let routed = state.pcp().ui_mut().tool_motion(point(location), now);
    let taken = settle_moved(state, routed);
    tool.motion(
        location,
        if taken { None } else { under },
        tablet,
        serial,
        time,
    );
    taken
}

/// `TabletToolHandle::tip_down` with the tool at `location`: a press on the dialog (the
/// clickjacking guard and the dialog's rules as for a click), or the window's stroke. True when
/// the dialog took it.
pub fn tablet_tip_down<D: PcpHandler>(
    state: &mut D,
    tool: &TabletToolHandle,
    location: Point<f64, Logical>,
    serial: Serial,
    time: u32,
) -> bool {
    let now = state.now_ms();
    let routed = state
        .pcp()
        .ui_mut()
        .contact_down(Contact::Tool, point(location), now);
    let taken = settle(state, routed);
    if !taken {
        tool.tip_down(serial, time);
    }
    taken
}

/// `TabletToolHandle::tip_up` with the tool at `location`: the tip lifts where it went down.
/// True when it was the dialog's.
pub fn tablet_tip_up<D: PcpHandler>(
    state: &mut D,
    tool: &TabletToolHandle,
    location: Point<f64, Logical>,
    time: u32,
) -> bool {
    let now = state.now_ms();
    let routed = state
        .pcp()
        .ui_mut()
        .contact_up(Contact::Tool, Some(point(location)), now);
    let taken = settle(state, routed);
    if !taken {
        tool.tip_up(time);
    }
    taken
}

/// `TabletToolHandle::button` (a button on the tool itself): where the tool is on the dialog it
/// is taken and does nothing, and its release follows it. True when the dialog took it.
pub fn tablet_button<D: PcpHandler>(
    state: &mut D,
    tool: &TabletToolHandle,
    button: u32,
    button_state: ButtonState,
    serial: Serial,
    time: u32,
) -> bool {
    let pressed = button_state == ButtonState::Pressed;
    let taken = state.pcp().ui_mut().tool_button(button, pressed) == Owner::Dialog;
    if !taken {
        tool.button(button, button_state, serial, time);
    }
    taken
}

/// `TabletToolHandle::proximity_out`: the tool left. A press it had on the dialog is cancelled
/// (no click); the windows hear it left. True when the dialog had its tip.
pub fn tablet_proximity_out<D: PcpHandler>(
    state: &mut D,
    tool: &TabletToolHandle,
    time: u32,
) -> bool {
    let had = state.pcp().ui_mut().tool_out();
    settle(state, Routed::Taken(Vec::new()));
    tool.proximity_out(time);
    had
}

impl ConfirmUi {
    /// The tool moved to (or came in at) `p`: its stroke goes on where its tip went down; a
    /// tool in the air hovers the dialog where the dialog takes input.
    pub(crate) fn tool_motion(&mut self, p: pcp_overlay::Point, now: i64) -> Routed {
        self.input.tool_at = Some(p);
        if self.input.contacts.contains_key(&Contact::Tool) {
            return self.contact_motion(Contact::Tool, p, now);
        }
        if !self.takes_pointer_at(p) {
            return Routed::Clients;
        }
        if self.input.presser.is_none()
            && let Some((x, y)) = self.dialog.local(p)
        {
            self.dialog.dialog_mut().pointer_motion(x, y);
        }
        Routed::Taken(Vec::new())
    }

    /// A button on the tool went down or up: who has it.
    pub(crate) fn tool_button(&mut self, button: u32, pressed: bool) -> Owner {
        let contact = Contact::ToolButton(button);
        if !pressed {
            return self
                .input
                .contacts
                .remove(&contact)
                .map_or(Owner::Clients, |d| d.owner);
        }
        let at = self
            .input
            .tool_at
            .unwrap_or(pcp_overlay::Point { x: 0.0, y: 0.0 });
        let on_dialog = self.input.tool_at.is_some_and(|p| self.takes_pointer_at(p))
            || self.owner_of(Contact::Tool) == Some(Owner::Dialog);
        let owner = if on_dialog {
            Owner::Dialog
        } else {
            Owner::Clients
        };
        self.input.contacts.insert(contact, Down { owner, at });
        owner
    }

    /// The tool left proximity: its press (if its tip was down on the dialog) is cancelled.
    /// True when the dialog had its tip.
    pub(crate) fn tool_out(&mut self) -> bool {
        self.input.tool_at = None;
        self.contact_cancel(Contact::Tool) == Some(Owner::Dialog)
    }
}
