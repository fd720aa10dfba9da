//! `[overlay] focus_shortcut`: the key and modifiers that give the dialog the keyboard, parsed
//! here so that every validator refuses the same bad names (the plugin matches key presses
//! against it).

use xkbcommon::xkb::{self, Keysym};

/// A key with exactly these modifiers held, e.g. `Super+Return`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shortcut {
    pub logo: bool,
    pub ctrl: bool,
    pub alt: bool,
    pub shift: bool,
    pub key: Keysym,
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_shortcut_names_what_is_wrong() {
        let s = Shortcut::parse("Super+Return").unwrap();
        assert!(s.logo && !s.shift && s.key == Keysym::Return);
        assert_eq!(Shortcut::parse("logo + return"), Ok(s));
        let e = Shortcut::parse("Hyper+Return").unwrap_err();
        assert!(e.contains("`Hyper` is not a modifier"), "{e}");
        let e = Shortcut::parse("Super+Retrun").unwrap_err();
        assert!(e.contains("`Retrun` is not an XKB key name"), "{e}");
        let e = Shortcut::parse("Super+Super+a").unwrap_err();
        assert!(e.contains("twice"), "{e}");
        assert!(Shortcut::parse("Super+").is_err());
    }
}
