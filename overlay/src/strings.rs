//! Every user-visible string of the dialog (`[overlay.text]`), with its default, and the filling
//! in of the active phrase pack's answer words.

use serde::{Deserialize, Serialize};

use crate::content::Risk;

/// Every user-visible string. `{n}` is replaced where noted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Strings {
    /// Under a sandboxed requester's app id; `{engine}` is the sandbox (e.g. flatpak).
    pub requester_sandboxed: String,
    /// Stands for `{engine}` when the sandbox did not name itself.
    pub unnamed_sandbox: String,
    /// Under an unconfined requester's executable path; `{pid}` is its process id.
    pub requester_unconfined: String,
    /// Under a requester nothing verified is known about.
    pub requester_unknown: String,
    /// The app id a client declared about itself; `{id}` is that id.
    pub declared_app_id: String,
    /// Line under the requester.
    pub asks: String,
    pub target_label: String,
    pub steps_label: String,
    /// Heading above the parameters the description does not show.
    pub extra_params_label: String,
    /// Above the challenge word of a spoken approval; `{approve}` is the phrase pack's
    /// approval word.
    pub challenge: String,
    pub approve: String,
    pub deny: String,
    /// The session-approval button.
    pub allow_session: String,
    /// Under the scrolling part while some of it is below the view.
    pub more_below: String,
    /// Under the scrolling part when the rest is above the view.
    pub more_above: String,
    /// Appended to a client string cut at its length cap; `{n}` is the characters not shown.
    pub cut: String,
    pub risk_routine: String,
    pub risk_privileged: String,
    pub risk_destructive: String,
    pub risk_system: String,
    /// Voice modality while the microphone listens; `{approve}`, `{deny}` and `{cancel}` are
    /// the phrase pack's answer words (see [`Strings::with_answer_words`]).
    pub listening: String,
    /// What a screen reader reads on the voice line of a prompt whose challenge word the spoken
    /// question read aloud (a screen reader runs): say the approval and the word heard.
    pub listening_word_heard: String,
    /// The same after something was said that decided nothing.
    pub missed_word_heard: String,
    /// Voice modality after a spoken approval when the visual control is still needed.
    pub voice_heard: String,
    /// Voice modality after something was said that decided nothing; listening goes on.
    pub voice_missed: String,
    /// Voice modality when recognition failed or is unavailable.
    pub voice_unavailable: String,
    /// Shown where a prompt needed voice and there is no speech model for the language;
    /// `{language}` is its code.
    pub voice_no_model: String,
    /// Shown where a prompt needed voice and there is no microphone.
    pub voice_no_microphone: String,
    /// Shown where a prompt needed voice and the dialog's fonts cannot draw the phrase pack's
    /// words: `{language}` is the pack's language, `{package}` what to install.
    pub voice_no_font: String,
    /// Haptic modality before the first tap.
    pub double_tap: String,
    /// Haptic modality after the first tap.
    pub tap_again: String,
    /// Shown when Approve must be held.
    pub hold_hint: String,
    /// Countdown; `{n}` is the number of seconds left.
    pub seconds_left: String,
    /// Queue badge; `{n}` is the number of other prompts waiting.
    pub queued: String,
    /// What assistive software (a screen reader) calls the compositor's window that holds the
    /// dialog.
    pub a11y_window: String,
    /// Announced politely to a screen reader when a prompt appears; `{action}` is what it asks.
    pub announce_shown: String,
    /// Announced when the prompt was approved; `{action}` as above.
    pub announce_approved: String,
    /// Announced when the prompt was denied (by the user or for any other reason).
    pub announce_denied: String,
    /// Announced when the prompt timed out (and was denied).
    pub announce_timed_out: String,
    /// Announced when assistive software asked the dialog to act (press a button, take the
    /// focus, set a value), which it refuses: how to answer instead. `{shortcut}` is
    /// `[overlay] focus_shortcut`.
    pub announce_refused: String,
}

impl Default for Strings {
    fn default() -> Self {
        Strings {
            requester_sandboxed: "Verified: {engine} sandbox".into(),
            unnamed_sandbox: "an unnamed".into(),
            requester_unconfined: "Not sandboxed · process {pid}".into(),
            requester_unknown: "Not verified: unknown program".into(),
            declared_app_id: "Calls itself “{id}”".into(),
            asks: "asks to:".into(),
            target_label: "Target".into(),
            steps_label: "Steps".into(),
            extra_params_label: "Other parameters".into(),
            challenge: "To approve by voice, say “{approve}” and this word:".into(),
            approve: "Approve".into(),
            deny: "Deny".into(),
            allow_session: "Allow until logout".into(),
            more_below: "▼ More below: scroll to read it all".into(),
            more_above: "▲ More above".into(),
            cut: " … [{n} more characters not shown]".into(),
            risk_routine: "Routine".into(),
            risk_privileged: "Needs privileges".into(),
            risk_destructive: "Destructive: cannot be undone".into(),
            risk_system: "Changes the system".into(),
            listening: "Listening… say “{approve}” or “{deny}”".into(),
            listening_word_heard: "Listening… to approve, say “{approve}” and the word you heard; \
                                   to deny, say “{deny}”"
                .into(),
            missed_word_heard: "Didn't catch that: to approve, say “{approve}” and the word you \
                                heard; to deny, say “{deny}”"
                .into(),
            voice_heard: "Heard “{approve}”: now choose Approve".into(),
            voice_missed: "Didn't catch that: say “{approve}” or “{deny}”".into(),
            voice_unavailable: "Voice unavailable".into(),
            voice_no_model: "Voice unavailable: no speech model for “{language}”".into(),
            voice_no_microphone: "Voice unavailable: no microphone".into(),
            voice_no_font: "Voice unavailable: no font for the “{language}” answer words (install \
                            {package})"
                .into(),
            double_tap: "Double-tap to confirm".into(),
            tap_again: "Tap once more".into(),
            hold_hint: "Hold Approve to confirm".into(),
            seconds_left: "{n} s left".into(),
            queued: "{n} more waiting".into(),
            a11y_window: "Confirmation".into(),
            announce_shown: "Confirmation needed: {action}".into(),
            announce_approved: "Approved: {action}".into(),
            announce_denied: "Denied: {action}".into(),
            announce_timed_out: "Timed out, denied: {action}".into(),
            announce_refused: "The dialog does not take answers from assistive software. Press \
                               {shortcut} to give it the keyboard, then Tab to Approve and \
                               Enter, or Escape to deny; or answer by voice."
                .into(),
        }
    }
}

/// The texts that name the words a spoken answer is made of.
const ANSWER_WORD_TEXTS: usize = 6;

/// The placeholders of the texts that name the answer words.
const ANSWER_WORDS: &[&str] = &["approve", "deny", "cancel"];

/// How many texts [`Strings`] has.
const TEXTS: usize = 40;

impl Strings {
    /// These strings with `{approve}`, `{deny}` and `{cancel}` replaced by the active phrase
    /// pack's answer words, so the dialog names the words the recognizer listens for.
    pub fn with_answer_words(&self, approve: &str, deny: &str, cancel: &str) -> Strings {
        let mut filled = self.clone();
        let fields: [&mut String; ANSWER_WORD_TEXTS] = [
            &mut filled.challenge,
            &mut filled.listening,
            &mut filled.listening_word_heard,
            &mut filled.missed_word_heard,
            &mut filled.voice_heard,
            &mut filled.voice_missed,
        ];
        for text in fields {
            *text = text
                .replace("{approve}", approve)
                .replace("{deny}", deny)
                .replace("{cancel}", cancel);
        }
        filled
    }

    /// Every text with its key and the placeholders it is filled with, for the config's check
    /// that a template names only those (a mistyped one would be shown as typed).
    pub fn templates(&self) -> [(&'static str, &str, &'static [&'static str]); TEXTS] {
        const NONE: &[&str] = &[];
        const N: &[&str] = &["n"];
        const ACTION: &[&str] = &["action"];
        [
            (
                "requester_sandboxed",
                &self.requester_sandboxed,
                &["engine"],
            ),
            ("unnamed_sandbox", &self.unnamed_sandbox, NONE),
            ("requester_unconfined", &self.requester_unconfined, &["pid"]),
            ("requester_unknown", &self.requester_unknown, NONE),
            ("declared_app_id", &self.declared_app_id, &["id"]),
            ("asks", &self.asks, NONE),
            ("target_label", &self.target_label, NONE),
            ("steps_label", &self.steps_label, NONE),
            ("extra_params_label", &self.extra_params_label, NONE),
            ("challenge", &self.challenge, ANSWER_WORDS),
            ("approve", &self.approve, NONE),
            ("deny", &self.deny, NONE),
            ("allow_session", &self.allow_session, NONE),
            ("more_below", &self.more_below, NONE),
            ("more_above", &self.more_above, NONE),
            ("cut", &self.cut, N),
            ("risk_routine", &self.risk_routine, NONE),
            ("risk_privileged", &self.risk_privileged, NONE),
            ("risk_destructive", &self.risk_destructive, NONE),
            ("risk_system", &self.risk_system, NONE),
            ("listening", &self.listening, ANSWER_WORDS),
            (
                "listening_word_heard",
                &self.listening_word_heard,
                ANSWER_WORDS,
            ),
            ("missed_word_heard", &self.missed_word_heard, ANSWER_WORDS),
            ("voice_heard", &self.voice_heard, ANSWER_WORDS),
            ("voice_missed", &self.voice_missed, ANSWER_WORDS),
            ("voice_unavailable", &self.voice_unavailable, NONE),
            ("voice_no_model", &self.voice_no_model, &["language"]),
            ("voice_no_microphone", &self.voice_no_microphone, NONE),
            (
                "voice_no_font",
                &self.voice_no_font,
                &["language", "package"],
            ),
            ("double_tap", &self.double_tap, NONE),
            ("tap_again", &self.tap_again, NONE),
            ("hold_hint", &self.hold_hint, NONE),
            ("seconds_left", &self.seconds_left, N),
            ("queued", &self.queued, N),
            ("a11y_window", &self.a11y_window, NONE),
            ("announce_shown", &self.announce_shown, ACTION),
            ("announce_approved", &self.announce_approved, ACTION),
            ("announce_denied", &self.announce_denied, ACTION),
            ("announce_timed_out", &self.announce_timed_out, ACTION),
            ("announce_refused", &self.announce_refused, &["shortcut"]),
        ]
    }

    /// The wording shown for a risk class.
    pub fn risk(&self, risk: Risk) -> &str {
        match risk {
            Risk::Routine => &self.risk_routine,
            Risk::Privileged => &self.risk_privileged,
            Risk::Destructive => &self.risk_destructive,
            Risk::System => &self.risk_system,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The texts said to take the answer words are the ones filled with them, and only those.
    #[test]
    fn the_answer_word_texts_listed_are_the_ones_filled() {
        let marked = "{approve}{deny}{cancel}";
        let mut table = toml::Table::try_from(Strings::default()).unwrap();
        for (_, value) in table.iter_mut() {
            *value = toml::Value::String(marked.into());
        }
        let all_marked: Strings = table.try_into().unwrap();
        let filled = all_marked.with_answer_words("A", "D", "C");
        for (key, text, allowed) in filled.templates() {
            let expected = if allowed.contains(&"approve") {
                "ADC"
            } else {
                marked
            };
            assert_eq!(text, expected, "{key}");
        }
    }
}
