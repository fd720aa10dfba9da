//! The dialog's text entry, which a front end attaches to its prompt (the polkit agent's
//! password field): what it asks, whether it echoes, what was typed (in memory zeroed after
//! use), the front end's messages, and whether the text was accepted. It takes keys only once
//! the user focused it by an explicit act — a click or tap on the dialog, or the focus
//! shortcut — never because the dialog appeared, even when the dialog is modal. Approve stays
//! disabled until the front end says the text was accepted, so no approval can skip it.

use std::collections::HashMap;

use pcp_gate::IntentId;
use zeroize::Zeroizing;

use crate::effects::{EntryUpdate, SecretText};

/// Longest line the entry takes, in characters: PAM answers are short, and a cap keeps a stuck
/// key from growing memory.
const MAX_CHARS: usize = 512;

/// Where an entry is in its conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryState {
    /// Attached, but nothing asked yet (the front end is starting its conversation).
    Waiting,
    /// Asking: keys go in once the user focused it.
    Typing,
    /// Submitted; the front end is checking it.
    Checking,
    /// Accepted: Approve may answer.
    Accepted,
}

/// What the dialog shows of an entry (never the text of a masked one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryView {
    pub label: String,
    pub echo: bool,
    /// What the field shows: the text when it echoes, one `•` a character when masked.
    pub shown: String,
    pub message: Option<String>,
    pub state: EntryState,
    /// The user gave it the keyboard by an explicit act.
    pub focused: bool,
    /// Which account it is for and how to ask for another, when the front end offers others.
    pub account: Option<String>,
}

struct Entry {
    label: String,
    echo: bool,
    text: Zeroizing<String>,
    message: Option<String>,
    state: EntryState,
    focused: bool,
    account: Option<String>,
}

impl super::ConfirmUi {
    /// The entry of the prompt shown, as the dialog shows it (`None`: it has none).
    pub fn entry(&self) -> Option<EntryView> {
        self.entries.view(self.dialog.shown()?)
    }

    /// A front end's news for `prompt`'s entry.
    pub(crate) fn update_entry(&mut self, prompt: IntentId, update: EntryUpdate) {
        self.entries.update(prompt, update);
        if self.dialog.shown() == Some(prompt) {
            self.lock_approve(prompt);
            self.changes.damaged = true;
        }
    }

    /// The dialog shows `prompt`'s entry (dots for a password), and Approve is locked while
    /// the entry is not accepted yet.
    pub(super) fn lock_approve(&mut self, prompt: IntentId) {
        let locked = !self.entries.approvable(prompt);
        let line = self.entries.view(prompt).map(|v| pcp_overlay::EntryLine {
            label: v.label,
            shown: v.shown,
            masked: !v.echo,
            message: v.message,
            focused: v.focused && v.state == EntryState::Typing,
            account: v.account,
        });
        let dialog = self.dialog.dialog_mut();
        dialog.set_approve_locked(locked);
        dialog.set_entry(line);
    }

    /// `prompt` ended: its entry goes, and what was typed into it is zeroed.
    pub(crate) fn entry_ended(&mut self, prompt: IntentId) {
        self.entries.remove(prompt);
    }

    /// The lines typed and submitted since the last call, by prompt.
    pub(crate) fn take_submitted(&mut self) -> Vec<(IntentId, SecretText)> {
        self.entries.take_submitted()
    }

    /// The prompts whose entry the user asked to answer as the next account, since the last
    /// call.
    pub(crate) fn take_account_switches(&mut self) -> Vec<IntentId> {
        self.entries.take_account_switches()
    }

    /// Whether the entry of the prompt shown has an account row.
    pub(super) fn entry_has_account(&self, prompt: IntentId) -> bool {
        self.entries
            .view(prompt)
            .is_some_and(|v| v.account.is_some())
    }

    /// The user pressed the account row of the prompt shown (or the Down arrow in its entry):
    /// the front end hears it, and the entry waits for its next question.
    pub(super) fn next_account(&mut self) -> bool {
        let Some(prompt) = self.dialog.shown() else {
            return false;
        };
        if !self.entries.next_account(prompt) {
            return false;
        }
        self.lock_approve(prompt);
        self.changes.damaged = true;
        true
    }
}

/// Every prompt's entry, and the lines submitted since the engine last asked.
#[derive(Default)]
pub(crate) struct Entries {
    open: HashMap<IntentId, Entry>,
    submitted: Vec<(IntentId, SecretText)>,
    account_switches: Vec<IntentId>,
}

/// A key as the entry reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKey {
    Char(char),
    Backspace,
    Enter,
    /// Down arrow: answer as the next account, when the entry offers others.
    NextAccount,
    /// Anything else: left to the dialog (Tab, Escape, arrows…).
    Other,
}

impl Entries {
    /// Applies a front end's news for `prompt`'s entry (attaching one on first news).
    pub fn update(&mut self, prompt: IntentId, update: EntryUpdate) {
        let entry = self.open.entry(prompt).or_insert_with(|| Entry {
            label: String::new(),
            echo: false,
            text: Zeroizing::new(String::new()),
            message: None,
            state: EntryState::Waiting,
            focused: false,
            account: None,
        });
        match update {
            EntryUpdate::Ask { label, echo } => {
                entry.label = label;
                entry.echo = echo;
                entry.text = Zeroizing::new(String::new());
                entry.state = EntryState::Typing;
            }
            EntryUpdate::Message(text) => entry.message = Some(text),
            EntryUpdate::Accepted => {
                entry.text = Zeroizing::new(String::new());
                entry.state = EntryState::Accepted;
            }
            EntryUpdate::Account(words) => entry.account = Some(words),
        }
    }

    /// The user asked to answer `prompt`'s entry as the next account: granted while it offers
    /// others and nothing typed is being checked or was accepted (PAM is weighing that try).
    /// What was typed so far is zeroed, and the entry waits for the front end's next question.
    pub fn next_account(&mut self, prompt: IntentId) -> bool {
        let Some(entry) = self.open.get_mut(&prompt) else {
            return false;
        };
        if entry.account.is_none()
            || matches!(entry.state, EntryState::Checking | EntryState::Accepted)
        {
            return false;
        }
        entry.text = Zeroizing::new(String::new());
        entry.state = EntryState::Waiting;
        entry.message = None;
        if !self.account_switches.contains(&prompt) {
            self.account_switches.push(prompt);
        }
        true
    }

    /// The prompts whose entry asked for the next account since the last call.
    pub fn take_account_switches(&mut self) -> Vec<IntentId> {
        std::mem::take(&mut self.account_switches)
    }

    /// Forgets `prompt`'s entry (the prompt ended); what was typed is zeroed.
    pub fn remove(&mut self, prompt: IntentId) {
        self.open.remove(&prompt);
        self.submitted.retain(|(p, _)| *p != prompt);
        self.account_switches.retain(|p| *p != prompt);
    }

    pub fn has(&self, prompt: IntentId) -> bool {
        self.open.contains_key(&prompt)
    }

    /// Whether Approve may answer `prompt`: it has no entry, or its text was accepted.
    pub fn approvable(&self, prompt: IntentId) -> bool {
        self.open
            .get(&prompt)
            .is_none_or(|e| e.state == EntryState::Accepted)
    }

    /// The user focused `prompt`'s entry by an explicit act (or, `false`, took focus away).
    pub fn focus(&mut self, prompt: IntentId, focused: bool) -> bool {
        match self.open.get_mut(&prompt) {
            Some(e) if e.focused != focused => {
                e.focused = focused;
                true
            }
            _ => false,
        }
    }

    /// Whether `prompt`'s entry takes keys now: focused and asking.
    pub fn takes_keys(&self, prompt: IntentId) -> bool {
        self.open
            .get(&prompt)
            .is_some_and(|e| e.focused && e.state == EntryState::Typing)
    }

    /// A key pressed while `prompt`'s entry takes keys. `true`: the entry used it.
    pub fn key(&mut self, prompt: IntentId, key: EntryKey) -> bool {
        let Some(entry) = self.open.get_mut(&prompt) else {
            return false;
        };
        if !(entry.focused && entry.state == EntryState::Typing) {
            return false;
        }
        match key {
            EntryKey::Char(c) if !c.is_control() => {
                if entry.text.chars().count() < MAX_CHARS {
                    entry.text.push(c);
                }
                true
            }
            EntryKey::Char(_) | EntryKey::Other => false,
            EntryKey::NextAccount => self.next_account(prompt),
            EntryKey::Backspace => {
                entry.text.pop();
                true
            }
            EntryKey::Enter => {
                let text = std::mem::replace(&mut entry.text, Zeroizing::new(String::new()));
                entry.state = EntryState::Checking;
                entry.message = None;
                self.submitted.push((prompt, SecretText(text)));
                true
            }
        }
    }

    /// The lines submitted since the last call.
    pub fn take_submitted(&mut self) -> Vec<(IntentId, SecretText)> {
        std::mem::take(&mut self.submitted)
    }

    pub fn view(&self, prompt: IntentId) -> Option<EntryView> {
        let e = self.open.get(&prompt)?;
        let shown = if e.echo {
            e.text.to_string()
        } else {
            "•".repeat(e.text.chars().count())
        };
        Some(EntryView {
            label: e.label.clone(),
            echo: e.echo,
            shown,
            message: e.message.clone(),
            state: e.state,
            focused: e.focused,
            account: e.account.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asked(entries: &mut Entries, id: IntentId) {
        entries.update(
            id,
            EntryUpdate::Ask {
                label: "Password:".into(),
                echo: false,
            },
        );
    }

    #[test]
    fn keys_go_in_only_after_an_explicit_focus_and_a_masked_entry_shows_dots() {
        let mut e = Entries::default();
        let id = IntentId(4);
        asked(&mut e, id);
        assert!(!e.key(id, EntryKey::Char('x')), "unfocused: not taken");
        assert!(!e.approvable(id));
        e.focus(id, true);
        for c in "pw1".chars() {
            assert!(e.key(id, EntryKey::Char(c)));
        }
        assert!(e.key(id, EntryKey::Backspace));
        let view = e.view(id).unwrap();
        assert_eq!(view.shown, "••");
        assert!(!format!("{view:?}").contains("pw"));
        assert!(e.key(id, EntryKey::Enter));
        let submitted = e.take_submitted();
        assert_eq!(submitted.len(), 1);
        assert_eq!(submitted[0].1.0.as_str(), "pw");
        assert_eq!(format!("{:?}", submitted[0].1), "SecretText(<redacted>)");
        assert_eq!(e.view(id).unwrap().state, EntryState::Checking);
        assert!(!e.key(id, EntryKey::Char('y')), "checking: nothing typed");
        e.update(id, EntryUpdate::Accepted);
        assert!(e.approvable(id));
        assert!(e.approvable(IntentId(5)), "a prompt without an entry");
    }

    #[test]
    fn an_echoing_entry_shows_its_text_and_an_ended_prompt_forgets_it() {
        let mut e = Entries::default();
        let id = IntentId(1);
        e.update(
            id,
            EntryUpdate::Ask {
                label: "Name:".into(),
                echo: true,
            },
        );
        e.focus(id, true);
        e.key(id, EntryKey::Char('a'));
        assert_eq!(e.view(id).unwrap().shown, "a");
        e.remove(id);
        assert!(e.view(id).is_none());
        assert!(e.approvable(id));
    }
}
