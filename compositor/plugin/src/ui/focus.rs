//! How a dialog shares the desktop: whether it is modal (its risk class is in
//! `[overlay] modal_for`), the margin around it that takes pointer and touch input for it alone
//! (`input_margin`), and the shortcut that gives it the keyboard (`focus_shortcut`). A
//! non-modal dialog never takes the keyboard by itself: only a click or tap on it or the
//! shortcut gives it the keyboard, and Escape, the shortcut again, a press on a window or the
//! dialog going gives it back.

use pcp_overlay::{OverlayError, Rect, Risk};
use smithay::input::keyboard::{Keysym, ModifiersState, xkb};

/// A key with exactly these modifiers held, e.g. `Super+Return`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shortcut {
    logo: bool,
    ctrl: bool,
    alt: bool,
    shift: bool,
    key: Keysym,
}

impl Shortcut {
    /// Parses `Mod+…+Key`: modifiers `Super` (or `Logo`), `Ctrl` (or `Control`), `Alt`,
    /// `Shift`, in any order and case, then one XKB key name (`Return`, `F12`, `space`).
    pub fn parse(text: &str) -> Result<Shortcut, String> {
        let parts: Vec<&str> = text.split('+').map(str::trim).collect();
        let Some((name, modifiers)) = parts.split_last() else {
            return Err(format!("focus_shortcut `{text}` names no key"));
        };
        let mut shortcut = Shortcut {
            logo: false,
            ctrl: false,
            alt: false,
            shift: false,
            key: Keysym::NoSymbol,
        };
        for m in modifiers {
            let slot = match m.to_ascii_lowercase().as_str() {
                "super" | "logo" => &mut shortcut.logo,
                "ctrl" | "control" => &mut shortcut.ctrl,
                "alt" => &mut shortcut.alt,
                "shift" => &mut shortcut.shift,
                _ => {
                    return Err(format!(
                        "focus_shortcut `{text}`: `{m}` is not a modifier (Super, Ctrl, Alt, Shift)"
                    ));
                }
            };
            if *slot {
                return Err(format!("focus_shortcut `{text}` names `{m}` twice"));
            }
            *slot = true;
        }
        let mut key = xkb::keysym_from_name(name, xkb::KEYSYM_NO_FLAGS);
        if key == Keysym::NoSymbol {
            key = xkb::keysym_from_name(name, xkb::KEYSYM_CASE_INSENSITIVE);
        }
        if key == Keysym::NoSymbol || name.is_empty() {
            return Err(format!(
                "focus_shortcut `{text}`: `{name}` is not an XKB key name (e.g. Return, F12)"
            ));
        }
        shortcut.key = key;
        Ok(shortcut)
    }

    /// Whether a key whose symbols are `raw` (unmodified) and `modified`, pressed with `mods`
    /// held, is this shortcut. Caps Lock and Num Lock do not matter; the other modifiers must
    /// be exactly the shortcut's.
    pub fn matches(&self, mods: &ModifiersState, raw: &[Keysym], modified: Keysym) -> bool {
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
    fn a_bad_shortcut_names_what_is_wrong() {
        let e = Shortcut::parse("Hyper+Return").unwrap_err();
        assert!(e.contains("`Hyper` is not a modifier"), "{e}");
        let e = Shortcut::parse("Super+Retrun").unwrap_err();
        assert!(e.contains("`Retrun` is not an XKB key name"), "{e}");
        let e = Shortcut::parse("Super+Super+a").unwrap_err();
        assert!(e.contains("twice"), "{e}");
        assert!(Shortcut::parse("Super+").is_err());
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
