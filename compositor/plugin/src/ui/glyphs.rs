//! The dialog never asks for a word it cannot draw: the phrase pack's answer words and
//! challenge words are checked against the dialog's fonts whenever either changes, and a
//! character no font has (it would be drawn as an empty box) turns voice off, naming the font
//! package to install (`[overlay] font_packages`). A prompt then falls back as voice
//! unavailable: the overlay, with press-and-hold where the plan asked for voice.

use pcp_overlay::ConfirmDialog;
use pcp_speech::{Unavailable, Voice};

use super::ConfirmUi;

/// How many of the words no font draws the log names.
const MAX_NAMED: usize = 3;

/// Shown in place of a package when `[overlay] font_packages` names none for the language.
const ANY_FONT: &str = "a font that has these characters";

/// Why `dialog` cannot draw `engine`'s words, or `None` when it can.
pub(super) fn undrawable(engine: &dyn Voice, dialog: &mut ConfirmDialog) -> Option<Unavailable> {
    let answers = engine.answer_words()?;
    let words = [&answers.approve, &answers.deny, &answers.cancel]
        .into_iter()
        .chain(engine.challenge_words());
    let mut undrawn = Vec::new();
    for word in words {
        if !dialog.missing_glyphs(word).is_empty() && !undrawn.contains(word) {
            undrawn.push(word.clone());
        }
    }
    if undrawn.is_empty() {
        return None;
    }
    // The first few name the problem; the log line stays short.
    let mut shown = undrawn
        .iter()
        .take(MAX_NAMED)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if undrawn.len() > MAX_NAMED {
        shown.push_str(", …");
    }
    let language = &engine.config().language;
    let package = dialog
        .config()
        .font_packages
        .get(language)
        .cloned()
        .unwrap_or_else(|| ANY_FONT.to_string());
    Some(Unavailable::Undrawable {
        words: shown,
        package,
    })
}

impl ConfirmUi {
    /// The characters the dialog on screen draws as empty boxes (none when every text on it is
    /// legible), for tools that report what a capture shows.
    pub fn drawn_missing_glyphs(&mut self) -> Vec<char> {
        self.dialog.dialog_mut().drawn_missing_glyphs()
    }

    /// Checks the dialog's fonts against the speech engine's phrase pack (after either
    /// changed): voice is off while they cannot draw its words, and the log says which
    /// package to install.
    pub(super) fn check_pack_glyphs(&mut self) {
        let why = self
            .voice
            .engine()
            .and_then(|engine| undrawable(engine.as_ref(), self.dialog.dialog_mut()));
        if let Some(why) = &why {
            tracing::warn!(
                "voice is off: {why} (Debian), or list a font file with them in [overlay] \
                 extra_fonts"
            );
        }
        self.devices.set_undrawable(why);
    }
}
