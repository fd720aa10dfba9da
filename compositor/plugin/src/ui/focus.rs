//! How a dialog shares the desktop: whether it is modal (its risk class is in
//! `[overlay] modal_for`), the margin around it that takes pointer and touch input for it alone
//! (`input_margin`), and the shortcut that gives it the keyboard (`focus_shortcut`). A
//! non-modal dialog never takes the keyboard by itself: only a click or tap on it or the
//! shortcut gives it the keyboard, and Escape, the shortcut again, a press on a window or the
//! dialog going gives it back.

use pcp_overlay::{OverlayError, Rect, Risk};
use smithay::input::keyboard::{Keysym, ModifiersState};

pub use pcp_config::Shortcut;

/// Matching key presses against a [`Shortcut`] (parsed, and refused when bad, with the config).
pub trait ShortcutKeys {
    /// Whether a key whose symbols are `raw` (unmodified) and `modified`, pressed with `mods`
    /// held, is this shortcut. Caps Lock and Num Lock do not matter; the other modifiers must
    /// be exactly the shortcut's.
    fn matches(&self, mods: &ModifiersState, raw: &[Keysym], modified: Keysym) -> bool;
}

impl ShortcutKeys for Shortcut {
    fn matches(&self, mods: &ModifiersState, raw: &[Keysym], modified: Keysym) -> bool {
        mods.logo == self.logo
            && mods.ctrl == self.ctrl
            && mods.alt == self.alt
            && mods.shift == self.shift
            && (modified == self.key || raw.contains(&self.key))
    }
}

/// What `[overlay]` says about sharing the desktop, checked.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Sharing {
    pub modal_for: Vec<Risk>,
    pub margin: f64,
    pub shortcut: Shortcut,
}

impl Sharing {
    pub fn of(config: &pcp_overlay::Config) -> Result<Sharing, OverlayError> {
        Ok(Sharing {
            modal_for: config.modal_for.clone(),
            margin: f64::from(config.input_margin),
            shortcut: Shortcut::parse(&config.focus_shortcut).map_err(OverlayError::Setting)?,
        })
    }
}

/// Whether `p` lies in `rect` grown by `margin` on every side.
pub(crate) fn within(rect: Rect, margin: f64, p: pcp_overlay::Point) -> bool {
    let (x, y) = (f64::from(rect.x), f64::from(rect.y));
    p.x >= x - margin
        && p.y >= y - margin
        && p.x < x + f64::from(rect.w) + margin
        && p.y < y + f64::from(rect.h) + margin
}

#[cfg(test)]
mod tests {
    use smithay::input::keyboard::{Keysym, ModifiersState};

    use super::*;

    fn mods(logo: bool, shift: bool) -> ModifiersState {
        ModifiersState {
            logo,
            shift,
            caps_lock: true,
            ..ModifiersState::default()
        }
    }

    #[test]
    fn the_default_shortcut_is_super_return_and_nothing_else() {
        let s = Shortcut::parse("Super+Return").unwrap();
        assert!(s.matches(&mods(true, false), &[Keysym::Return], Keysym::Return));
        // Return alone, or with Shift too, is not it.
        assert!(!s.matches(&mods(false, false), &[Keysym::Return], Keysym::Return));
        assert!(!s.matches(&mods(true, true), &[Keysym::Return], Keysym::Return));
        assert!(!s.matches(&mods(true, false), &[Keysym::space], Keysym::space));
        assert_eq!(Shortcut::parse("logo + return"), Ok(s));
    }

    #[test]
    fn the_margin_grows_the_dialog_on_every_side() {
        let r = Rect {
            x: 100,
            y: 50,
            w: 200,
            h: 100,
        };
        let p = |x, y| pcp_overlay::Point { x, y };
        assert!(within(r, 0.0, p(100.0, 50.0)));
        assert!(!within(r, 0.0, p(99.5, 60.0)));
        assert!(within(r, 24.0, p(77.0, 60.0)));
        assert!(within(r, 24.0, p(323.0, 173.0)));
        assert!(!within(r, 24.0, p(324.0, 60.0)));
        assert!(!within(r, 24.0, p(200.0, 174.0)));
    }
}
