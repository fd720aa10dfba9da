//! `[overlay] focus_shortcut`: the key and modifiers that give the dialog the keyboard, parsed
//! here so that every validator refuses the same bad names (the plugin matches key presses
//! against it). Key names are read by libxkbcommon itself, and the key is an `xkeysym::Keysym`,
//! the type Smithay's xkbcommon re-exports (`smithay::input::keyboard::Keysym` is this one, in
//! xkbcommon 0.8 and 0.9 alike), so neither this crate nor the plugin brings an xkbcommon crate
//! of its own into a compositor.

use std::ffi::CString;

pub use xkeysym::Keysym;

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
        let key = keysym_from_name(name).filter(|k| *k != Keysym::NoSymbol);
        let Some(key) = key else {
            return Err(format!(
                "focus_shortcut `{text}`: `{name}` is not an XKB key name (e.g. Return, F12)"
            ));
        };
        shortcut.key = key;
        Ok(shortcut)
    }
}

// libxkbcommon's own name lookup: the system library Smithay's xkbcommon links too (this crate
// declares the one function it needs rather than bringing a second xkbcommon crate into a
// compositor's graph).
#[link(name = "xkbcommon")]
unsafe extern "C" {
    fn xkb_keysym_from_name(name: *const std::ffi::c_char, flags: std::ffi::c_int) -> u32;
}

/// `XKB_KEYSYM_CASE_INSENSITIVE` from xkbcommon.h.
const CASE_INSENSITIVE: std::ffi::c_int = 1;

/// The keysym an XKB key name stands for (`xkb_keysym_from_name`): the exact name first, else
/// the same name in another case.
fn keysym_from_name(name: &str) -> Option<Keysym> {
    let c_name = CString::new(name).ok()?;
    for flags in [0, CASE_INSENSITIVE] {
        // SAFETY: the name is a NUL-terminated string that outlives the call; the function
        // only reads it and returns a number.
        let raw = unsafe { xkb_keysym_from_name(c_name.as_ptr(), flags) };
        if raw != 0 {
            return Some(Keysym::new(raw));
        }
    }
    None
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

    #[test]
    fn key_names_are_read_as_xkb_spells_them() {
        for (name, key) in [
            ("Return", Keysym::Return),
            ("return", Keysym::Return),
            ("F12", Keysym::F12),
            ("space", Keysym::space),
            ("a", Keysym::a),
            ("A", Keysym::A),
            ("Escape", Keysym::Escape),
            ("XF86AudioMute", Keysym::XF86_AudioMute),
            ("U20AC", Keysym::new(0x0100_20ac)),
            ("0xff0d", Keysym::Return),
        ] {
            assert_eq!(keysym_from_name(name), Some(key), "{name}");
        }
        assert_eq!(keysym_from_name("Retrun"), None);
        assert_eq!(keysym_from_name("Ret\0urn"), None);
    }
}
