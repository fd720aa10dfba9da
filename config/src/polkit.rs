//! `[polkit]`, a section of the reference compositor: whether the session registers as its polkit
//! authentication agent, for which subject, how many password tries a request gets, and every
//! line the agent adds to the dialog; its checks and how each key orders protection. Documented
//! in `assets/config/polkit.toml`. Here, not in the compositor, so that `pcpctl validate` checks
//! it as the compositor's loader does.

use serde::{Deserialize, Serialize};

use crate::section::Protection::{self, *};
use crate::section::{Invalid, Section, check_placeholders};

/// `[polkit]`, checked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PolkitConfig {
    /// Register as the session's polkit agent. Unset: on for a session (the udev and winit
    /// backends), off for the headless backend (tests ask for it with `true`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Register for this subject instead of our logind session (or, without logind, this
    /// process): `unix-session:ID` or `unix-process:PID`. For tests.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// Password attempts per request before polkitd is told it failed.
    pub tries: u32,
    pub text: PolkitText,
}

/// The lines the agent shows in the dialog's entry area. `{tries}` stands for the tries left,
/// `{reason}` for what broke.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PolkitText {
    /// Shown until PAM's first prompt arrives.
    pub starting: String,
    /// Shown with PAM's prompt: how to reach the entry (it never takes the keyboard itself).
    pub how_to_type: String,
    /// After a wrong password, when tries are left.
    pub wrong: String,
    /// When the password check itself broke (the helper could not run), when tries are left.
    pub broken: String,
    /// Once PAM accepted the password: Approve answers now.
    pub accepted: String,
    /// The account row, when polkitd offers several accounts (`auth_admin`): `{account}` is the
    /// one asked for, `{next}` the one a press on the row (or Down in the entry) switches to.
    pub account: String,
    /// In the requester line, for a program whose executable cannot be read (pkexec is
    /// setuid root, so the session's user may not read `/proc/PID/exe`).
    pub unreadable_program: String,
}

/// Most password attempts a request may get.
pub const MAX_TRIES: u32 = 10;

impl Default for PolkitConfig {
    fn default() -> Self {
        PolkitConfig {
            enabled: None,
            subject: None,
            tries: 3,
            text: PolkitText::default(),
        }
    }
}

impl Default for PolkitText {
    fn default() -> Self {
        PolkitText {
            starting: "Starting authentication…".into(),
            how_to_type: "Click the dialog or press the focus shortcut, type, then press Enter."
                .into(),
            wrong: "Authentication failed. {tries} tries left.".into(),
            broken: "The password check failed ({reason}). {tries} tries left.".into(),
            accepted: "Password accepted. Approve to continue.".into(),
            account: "For {account}. Tap here or press Down to use {next}.".into(),
            unreadable_program: "(executable not readable)".into(),
        }
    }
}

impl Section for PolkitConfig {
    const NAME: &'static str = "polkit";
    const PROTECTION: &'static [(&'static str, Protection)] = &[
        // Without this agent another one may take the session's admin prompts; with it, which
        // prompts reach this dialog changes: either way the user is asked.
        ("enabled", AnyChangeLowers),
        ("subject", AnyChangeLowers),
        // More password attempts per request are more guesses.
        ("tries", LargerLowers),
        // What the user reads beside the password entry.
        ("text.*", AnyChangeLowers),
    ];

    fn validate(&self) -> Result<(), Invalid> {
        if !(1..=MAX_TRIES).contains(&self.tries) {
            return Err(Invalid::new(
                "tries",
                format!("must be 1 to {MAX_TRIES}, not {}", self.tries),
            ));
        }
        if let Some(subject) = &self.subject {
            check_subject(subject).map_err(|why| Invalid::new("subject", why))?;
        }
        for (key, template, allowed) in self.text.templates() {
            check_placeholders(&format!("text.{key}"), template, allowed)?;
        }
        Ok(())
    }
}

/// The forms polkitd takes a subject in from an agent's config: `unix-session:ID` or
/// `unix-process:PID` (the compositor resolves it when the agent starts).
fn check_subject(text: &str) -> Result<(), String> {
    match text.split_once(':') {
        Some(("unix-session", id)) if !id.is_empty() => Ok(()),
        Some(("unix-process", pid)) if pid.parse::<u32>().is_ok() => Ok(()),
        _ => Err(format!(
            "{text:?} is neither unix-session:ID nor unix-process:PID"
        )),
    }
}

impl PolkitConfig {
    /// Whether the agent starts: `enabled`, else on for a session and off headless.
    pub fn starts(&self, session: bool) -> bool {
        self.enabled.unwrap_or(session)
    }
}

impl PolkitText {
    /// Every line with its key and the placeholders it is filled with.
    pub fn templates(&self) -> [(&'static str, &str, &'static [&'static str]); 7] {
        [
            ("starting", &self.starting, &[]),
            ("how_to_type", &self.how_to_type, &[]),
            ("wrong", &self.wrong, &["tries"]),
            ("broken", &self.broken, &["reason", "tries"]),
            ("accepted", &self.accepted, &[]),
            ("account", &self.account, &["account", "next"]),
            ("unreadable_program", &self.unreadable_program, &[]),
        ]
    }

    /// `wrong` with the tries left filled in.
    pub fn wrong(&self, tries: u32) -> String {
        self.wrong.replace("{tries}", &tries.to_string())
    }

    /// `account` with the account asked for and the next one filled in.
    pub fn account(&self, account: &str, next: &str) -> String {
        self.account
            .replace("{account}", account)
            .replace("{next}", next)
    }

    /// `broken` with the reason and the tries left filled in.
    pub fn broken(&self, reason: &str, tries: u32) -> String {
        self.broken
            .replace("{reason}", reason)
            .replace("{tries}", &tries.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<PolkitConfig, String> {
        let options = pcp_gate::config::LoadOptions {
            system_dirs: Vec::new(),
            ..Default::default()
        };
        let text = format!("[manifests]\ndirs = []\n\n[polkit]\n{text}\n");
        crate::Config::<crate::reference::ReferenceSections>::from_text(
            std::path::Path::new("c.toml"),
            &text,
            &options,
        )
        .map(|c| c.host.polkit)
        .map_err(|e| e.to_string())
    }

    #[test]
    fn unset_enabled_means_on_for_a_session_and_off_headless() {
        let c = PolkitConfig::default();
        assert!(c.starts(true));
        assert!(!c.starts(false));
        assert!(parse("enabled = true").unwrap().starts(false));
        assert!(!parse("enabled = false").unwrap().starts(true));
    }

    #[test]
    fn bad_keys_tries_and_subjects_are_named_at_their_line() {
        for (text, named) in [
            ("tries = 0", "tries"),
            ("tries = 11", "tries"),
            ("bogus = 1", "bogus"),
            ("subject = \"unix-user:0\"", "subject"),
            ("subject = \"unix-process:x\"", "subject"),
            ("[polkit.text]\nnope = \"x\"", "nope"),
            (
                "[polkit.text]\nwrong = \"{tris} left\"",
                "text.wrong: `{tris}`",
            ),
            (
                "[polkit.text]\naccepted = \"{tries}\"",
                "text.accepted: `{tries}`",
            ),
        ] {
            let e = parse(text).unwrap_err();
            assert!(e.starts_with("c.toml:") && e.contains(named), "{text}: {e}");
        }
        assert_eq!(
            parse("subject = \"unix-session:c2\"")
                .unwrap()
                .subject
                .as_deref(),
            Some("unix-session:c2")
        );
    }

    #[test]
    fn the_lines_fill_in_tries_and_reasons() {
        let t = PolkitText::default();
        assert_eq!(t.wrong(2), "Authentication failed. 2 tries left.");
        assert!(t.broken("no helper", 1).contains("(no helper). 1 tries"));
        assert_eq!(
            t.account("alice", "root"),
            "For alice. Tap here or press Down to use root."
        );
    }
}

#[cfg(test)]
mod shipped {
    use super::*;

    #[test]
    fn the_shipped_section_parses_to_the_defaults() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../assets/config/polkit.toml");
        let text = std::fs::read_to_string(path).unwrap();
        let file: std::collections::BTreeMap<String, PolkitConfig> = toml::from_str(&text).unwrap();
        let parsed = &file["polkit"];
        parsed.validate().unwrap();
        assert_eq!(parsed, &PolkitConfig::default());
    }
}
