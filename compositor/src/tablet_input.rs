//! Tablet tools (a pen, an eraser) through the plugin's routing, served to clients over
//! `zwp_tablet_manager_v2`: a tool over the dialog hovers it and leaves the windows, its tip is
//! a press like a button's (the dialog's guard and rules included), and a stroke that began on
//! a window stays the window's. The udev backend reads tools from libinput; the harness injects
//! them.

// The harness (`test-harness`) and the udev backend feed tablet input here.
#![cfg_attr(not(any(feature = "test-harness", feature = "udev")), allow(dead_code))]

use smithay::backend::input::{ButtonState, TabletToolDescriptor, TabletToolTipState};
use smithay::utils::{Logical, Point, SERIAL_COUNTER};
use smithay::wayland::tablet_manager::{TabletDescriptor, TabletSeatTrait, TabletToolHandle};

use crate::state::State;

/// One tablet tool event, as the backend read it: the tool, its tablet, and what it did.
#[derive(Debug, Clone)]
pub(crate) struct ToolEvent {
    pub tablet: TabletDescriptor,
    pub tool: TabletToolDescriptor,
    pub time: u32,
    pub what: ToolAction,
}

/// What a tablet tool did, at a global logical point.
#[derive(Debug, Clone, Copy)]
pub(crate) enum ToolAction {
    /// It came into proximity at the point.
    In(Point<f64, Logical>),
    /// It left proximity.
    Out,
    /// It moved to the point.
    Motion(Point<f64, Logical>),
    /// Its tip went down or up at the point.
    Tip(Point<f64, Logical>, TabletToolTipState),
    /// One of its own buttons (evdev code) went down or up.
    Button(u32, ButtonState),
}

impl State {
    /// A tablet was plugged in: clients bound to the tablet manager hear of it.
    pub(crate) fn tablet_added(&mut self, tablet: &TabletDescriptor) {
        self.seat
            .tablet_seat()
            .add_tablet::<State>(&self.dh, tablet);
    }

    /// A tablet was unplugged; with none left, so are its tools.
    #[cfg_attr(not(feature = "udev"), allow(dead_code))]
    pub(crate) fn tablet_removed(&mut self, tablet: &TabletDescriptor) {
        let seat = self.seat.tablet_seat();
        seat.remove_tablet(tablet);
        if seat.count_tablets() == 0 {
            seat.clear_tools();
        }
    }

    /// A tablet tool event: the plugin sees it first (see `pcp_plugin::input`).
    pub(crate) fn tablet_tool(&mut self, event: ToolEvent) {
        use pcp_plugin::input as pi;
        self.input_activity();
        let Some(tool) = self.tool_handle(&event) else {
            return;
        };
        let serial = SERIAL_COUNTER.next_serial();
        let time = event.time;
        let tablet_seat = self.seat.tablet_seat();
        // A tool out of a tablet nobody added (a device the backend never announced) is the
        // seat's first tablet's.
        let tablet = tablet_seat.get_tablet(&event.tablet);
        match event.what {
            ToolAction::In(p) | ToolAction::Motion(p) => {
                self.pointer.set_focal_point(p);
                let Some(tablet) = tablet else {
                    return;
                };
                let under = self.surface_under(p);
                if matches!(event.what, ToolAction::In(_)) {
                    pi::tablet_proximity_in(self, &tool, p, under, &tablet, serial, time);
                } else {
                    pi::tablet_motion(self, &tool, p, under, &tablet, serial, time);
                }
            }
            ToolAction::Out => {
                pi::tablet_proximity_out(self, &tool, time);
            }
            ToolAction::Tip(p, TabletToolTipState::Down) => {
                pi::tablet_tip_down(self, &tool, p, serial, time);
            }
            ToolAction::Tip(p, TabletToolTipState::Up) => {
                pi::tablet_tip_up(self, &tool, p, time);
            }
            ToolAction::Button(button, state) => {
                pi::tablet_button(self, &tool, button, state, serial, time);
            }
        }
    }

    /// The seat's handle of the event's tool, added when it comes into proximity.
    fn tool_handle(&mut self, event: &ToolEvent) -> Option<TabletToolHandle> {
        let seat = self.seat.tablet_seat();
        if let ToolAction::In(_) = event.what {
            let dh = self.dh.clone();
            return Some(seat.add_tool::<State>(self, &dh, &event.tool));
        }
        seat.get_tool(&event.tool)
    }
}
