//! What a key means to the dialog: the keysym of a navigation key (Tab, Enter, Escape, the
//! arrows and pages), and what it types into the dialog's entry.

use smithay::input::keyboard::{Keysym, ModifiersState, keysyms};

/// What a keysym types into the dialog's entry: a character (none with Ctrl, Alt or Super
/// held: those are shortcuts, not text), Backspace, Enter, or Down (the next account).
pub(super) fn entry_key(sym: Keysym, modifiers: &ModifiersState) -> super::EntryKey {
    use super::EntryKey;
    match sym.raw() {
        keysyms::KEY_BackSpace => EntryKey::Backspace,
        keysyms::KEY_Return | keysyms::KEY_KP_Enter => EntryKey::Enter,
        keysyms::KEY_Down | keysyms::KEY_KP_Down => EntryKey::NextAccount,
        _ if modifiers.ctrl || modifiers.alt || modifiers.logo => EntryKey::Other,
        _ => sym.key_char().map_or(EntryKey::Other, EntryKey::Char),
    }
}

/// The dialog's name for a keysym.
pub(super) fn dialog_key(sym: u32, shift: bool) -> pcp_overlay::Key {
    use pcp_overlay::Key;
    match sym {
        keysyms::KEY_Tab => Key::Tab { shift },
        keysyms::KEY_ISO_Left_Tab => Key::Tab { shift: true },
        keysyms::KEY_Return | keysyms::KEY_KP_Enter => Key::Enter,
        keysyms::KEY_space => Key::Space,
        keysyms::KEY_Escape => Key::Escape,
        keysyms::KEY_Up | keysyms::KEY_KP_Up => Key::Up,
        keysyms::KEY_Down | keysyms::KEY_KP_Down => Key::Down,
        keysyms::KEY_Page_Up | keysyms::KEY_KP_Page_Up => Key::PageUp,
        keysyms::KEY_Page_Down | keysyms::KEY_KP_Page_Down => Key::PageDown,
        keysyms::KEY_Home | keysyms::KEY_KP_Home => Key::Home,
        keysyms::KEY_End | keysyms::KEY_KP_End => Key::End,
        _ => Key::Other,
    }
}
