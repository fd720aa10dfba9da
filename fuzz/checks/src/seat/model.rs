//! The rules' model for the seat check: which contact went down where the dialog takes
//! input, which one presses the dialog's controls, whether it may still complete a press on
//! Approve, and the checks after each event (an approval's witness, what the window heard).

use std::collections::HashMap;

use pcp_plugin::Delivery;
use pcp_plugin::overlay::Control;
use smithay::backend::input::ButtonState;
use smithay::input::pointer::ButtonEvent;
use smithay::utils::SERIAL_COUNTER;
use smithay::wayland::tablet_manager::TabletToolHandle;

use super::host::{GUARD_MS, Kit, MARGIN, Seen};
use super::{Event, Spot};

/// What the model knows of one contact that is down.
#[derive(Debug, Clone, Copy)]
pub(super) struct Contact {
    /// Where it is now.
    pub(super) at: pcp_plugin::overlay::Point,
    /// It went down where the dialog takes input: the window never hears of it.
    pub(super) dialog: bool,
    /// It may complete a press: the first contact on the dialog, down on Approve after the
    /// guard, and it has not left Approve since.
    pub(super) may_approve: bool,
}

/// The model's key for a contact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Key {
    Button(u8),
    Finger(u8),
    Pen,
}

/// The rules' model over one input.
pub(super) struct Model {
    pub(super) contacts: HashMap<Key, Contact>,
    /// The contact pressing the dialog's controls (the first one on it).
    pub(super) presser: Option<Key>,
    /// When the dialog last appeared or moved: the guard runs from here.
    pub(super) guard_from: i64,
    /// The dialog's place, to see it move.
    pub(super) placed: Option<pcp_plugin::Placement>,
    pub(super) pointer: pcp_plugin::overlay::Point,
    pub(super) pen: Option<pcp_plugin::overlay::Point>,
    /// A gesture under way began over the dialog.
    pub(super) gesture_on_dialog: bool,
}

/// A contact released by one event: who it was, and whether its release was on Approve.
pub(super) type Released = Option<(Contact, bool)>;

impl Model {
    /// Whether the dialog takes pointer, touch and tablet input at `p` now.
    pub(super) fn takes(&self, kit: &Kit, p: pcp_plugin::overlay::Point) -> bool {
        let ui = kit.host.pcp.ui();
        let held = self
            .contacts
            .iter()
            .any(|(k, c)| matches!(k, Key::Button(_)) && c.dialog);
        ui.is_open() && (held || ui.placement().is_some_and(|pl| within(pl.rect, MARGIN, p)))
    }

    /// A contact goes down at `p`: the model's verdict on it.
    pub(super) fn press(&mut self, kit: &Kit, key: Key, p: pcp_plugin::overlay::Point) -> Contact {
        let dialog = self.takes(kit, p);
        let first = dialog && self.presser.is_none() && kit.host.pcp.ui().placement().is_some();
        if first {
            self.presser = Some(key);
        }
        let contact = Contact {
            at: p,
            dialog,
            may_approve: first && on_approve(kit, p) && kit.host.now >= self.guard_from + GUARD_MS,
        };
        self.contacts.insert(key, contact);
        contact
    }

    /// A contact moves to `p`: the presser leaving Approve drops its press.
    pub(super) fn moved(&mut self, kit: &Kit, key: Key, p: pcp_plugin::overlay::Point) {
        let off = !on_approve(kit, p);
        let presser = self.presser == Some(key);
        if let Some(c) = self.contacts.get_mut(&key) {
            c.at = p;
            c.may_approve &= !(presser && off);
        }
    }

    /// A contact lifts at `p` (or is cancelled: `p` is `None`).
    pub(super) fn lift(
        &mut self,
        kit: &Kit,
        key: Key,
        p: Option<pcp_plugin::overlay::Point>,
    ) -> Released {
        let contact = self.contacts.remove(&key)?;
        let presser = self.presser == Some(key);
        if presser {
            self.presser = None;
        }
        let contact = Contact {
            may_approve: contact.may_approve && presser,
            ..contact
        };
        Some((contact, p.is_some_and(|p| on_approve(kit, p))))
    }
}

/// Whether `p` lies in `rect` grown by `margin`.
fn within(rect: pcp_plugin::overlay::Rect, margin: f64, p: pcp_plugin::overlay::Point) -> bool {
    let (x, y) = (f64::from(rect.x), f64::from(rect.y));
    p.x >= x - margin
        && p.y >= y - margin
        && p.x < x + f64::from(rect.w) + margin
        && p.y < y + f64::from(rect.h) + margin
}

/// A control's rectangle in global logical coordinates, as last drawn.
fn control(kit: &Kit, control: Control) -> Option<[f64; 4]> {
    let ui = kit.host.pcp.ui();
    let pl = ui.placement()?;
    let [x, y, w, h] = ui.dialog().control_bounds(control)?;
    Some([f64::from(pl.rect.x) + x, f64::from(pl.rect.y) + y, w, h])
}

fn on_approve(kit: &Kit, p: pcp_plugin::overlay::Point) -> bool {
    control(kit, Control::Approve)
        .is_some_and(|[x, y, w, h]| p.x >= x && p.y >= y && p.x < x + w && p.y < y + h)
}

/// Where `spot` is now.
pub(super) fn resolve(kit: &Kit, spot: Spot) -> pcp_plugin::overlay::Point {
    let point = |x: f64, y: f64| pcp_plugin::overlay::Point { x, y };
    let ui = kit.host.pcp.ui();
    let rect = ui.placement().map(|p| p.rect);
    let centre = |c: Control, dx: i8, dy: i8| {
        control(kit, c)
            .map(|[x, y, w, h]| point(x + w / 2.0 + f64::from(dx), y + h / 2.0 + f64::from(dy)))
    };
    let anywhere = |fx: u16, fy: u16| {
        let (w, h) = (2560.0, 800.0);
        point(f64::from(fx) / 65535.0 * w, f64::from(fy) / 65535.0 * h)
    };
    match (spot, rect) {
        (Spot::Approve(dx, dy), _) => centre(Control::Approve, dx, dy),
        (Spot::Deny(dx, dy), _) => centre(Control::Deny, dx, dy),
        (Spot::Dialog(fx, fy), Some(r)) => Some(point(
            f64::from(r.x) + f64::from(r.w) * f64::from(fx) / 256.0,
            f64::from(r.y) + f64::from(r.h) * f64::from(fy) / 256.0,
        )),
        (Spot::Margin(side), Some(r)) => {
            let (x, y, w, h) = (
                f64::from(r.x),
                f64::from(r.y),
                f64::from(r.w),
                f64::from(r.h),
            );
            Some(match side % 4 {
                0 => point(x - MARGIN / 2.0, y + h / 2.0),
                1 => point(x + w + MARGIN / 2.0, y + h / 2.0),
                2 => point(x + w / 2.0, y - MARGIN / 2.0),
                _ => point(x + w / 2.0, y + h + MARGIN / 2.0),
            })
        }
        (Spot::Anywhere(fx, fy), _) => Some(anywhere(fx, fy)),
        _ => None,
    }
    .unwrap_or(point(0.0, 0.0))
}

pub(super) fn at(
    p: pcp_plugin::overlay::Point,
) -> smithay::utils::Point<f64, smithay::utils::Logical> {
    (p.x, p.y).into()
}

/// After one event: an approval must have a witness, and the window must have heard nothing
/// of the dialog's. Returns whether the prompt was approved.
pub(super) fn verdict(kit: &mut Kit, model: &Model, event: &Event, released: Released) -> bool {
    let heard = kit.host.window.take();
    for seen in &heard {
        let forbidden = match seen {
            Seen::Enter(x, y) | Seen::Motion(x, y) => {
                model.takes(kit, pcp_plugin::overlay::Point { x: *x, y: *y })
            }
            Seen::Axis => model.takes(kit, model.pointer),
            Seen::GestureBegin | Seen::GestureOther => model.gesture_on_dialog,
            Seen::Button(code, _) => button_on_dialog(model, event, released, *code),
            Seen::TouchDown(slot, ..) | Seen::TouchUp(slot) => {
                finger_on_dialog(model, event, released, *slot)
            }
            // A window's finger over the dialog is withheld: no window learns where it is.
            Seen::TouchMotion(slot) => {
                finger_on_dialog(model, event, released, *slot)
                    || model
                        .contacts
                        .get(&Key::Finger((*slot).clamp(0, 3) as u8))
                        .is_some_and(|c| model.takes(kit, c.at))
            }
            Seen::Leave | Seen::TouchCancel | Seen::Other => false,
        };
        assert!(
            !forbidden,
            "the window heard {seen:?} of the dialog's, after {event:?}"
        );
    }
    let approved = kit
        .answers
        .0
        .borrow()
        .iter()
        .any(|d| matches!(d, Delivery::Decided(d) if d.outcome.approved));
    if approved {
        let witness = released.is_some_and(|(c, on)| c.dialog && c.may_approve && on);
        assert!(
            witness,
            "approved by {event:?} with no press and release on Approve after the guard ({released:?})"
        );
    }
    approved
}

/// Whether pointer button `code`, as the window heard it, was the dialog's.
fn button_on_dialog(model: &Model, event: &Event, released: Released, code: u32) -> bool {
    let key = Key::Button((code.saturating_sub(0x110) % 3) as u8);
    match event {
        // A release: the model has forgotten the contact and handed it back.
        Event::Button(_, false) => released.is_some_and(|(c, _)| c.dialog),
        _ => model.contacts.get(&key).is_some_and(|c| c.dialog),
    }
}

/// Whether finger `slot`, as the window heard it, was the dialog's.
fn finger_on_dialog(model: &Model, event: &Event, released: Released, slot: i32) -> bool {
    let key = Key::Finger(slot.clamp(0, 3) as u8);
    match event {
        Event::TouchUp(_) => released.is_some_and(|(c, _)| c.dialog),
        _ => model.contacts.get(&key).is_some_and(|c| c.dialog),
    }
}

/// The dialog moved (to the other output, or resized): its guard starts again and every press
/// under way is dropped.
pub(super) fn follow_moves(kit: &Kit, model: &mut Model) {
    let now = kit.host.pcp.ui().placement();
    let same = match (&now, &model.placed) {
        (Some(a), Some(b)) => a.rect == b.rect && a.output_rect == b.output_rect,
        (None, None) => true,
        _ => false,
    };
    if !same {
        model.guard_from = kit.host.now;
        for c in model.contacts.values_mut() {
            c.may_approve = false;
        }
        model.placed = now;
    }
}

/// Lets go of everything a finished input may have left down.
pub(super) fn release_all(kit: &mut Kit) {
    let time = kit.host.now as u32;
    let (Some(pointer), Some(touch)) = (kit.host.seat.get_pointer(), kit.host.seat.get_touch())
    else {
        return;
    };
    for button in 0x110..0x113 {
        let e = ButtonEvent {
            serial: SERIAL_COUNTER.next_serial(),
            time,
            button,
            state: ButtonState::Released,
        };
        pcp_plugin::input::pointer_button(&mut kit.host, &pointer, &e);
    }
    pcp_plugin::input::touch_cancel(&mut kit.host, &touch);
    let tool = TabletToolHandle::default();
    pcp_plugin::input::tablet_proximity_out(&mut kit.host, &tool, time);
}
