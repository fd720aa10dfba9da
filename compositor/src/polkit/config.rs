//! `[polkit]`: whether the session registers as its polkit authentication agent, for which
//! subject, how many password tries a request gets, and every line the agent adds to the
//! dialog. Self-contained: read from the gate's view of the file (which keeps it as a table),
//! checked here, documented in `assets/config/compositor.toml`.

use serde::{Deserialize, Serialize};

/// `[polkit]`, checked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PolkitConfig {
    /// Register as the session's polkit agent. Unset: on for a session (the udev and winit
    /// backends), off for the headless backend (tests ask for it with `true`).
    pub enabled: Option<bool>,
    /// Register for this subject instead of our logind session (or, without logind, this
    /// process): `unix-session:ID` or `unix-process:PID`. For tests.
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
        }
    }
}

/// Why `[polkit]` was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("[polkit] {0}")]
pub struct PolkitConfigError(pub String);

impl PolkitConfig {
    /// Reads `[polkit]` from the gate's view of the file (`None`: the defaults).
    pub fn from_table(table: Option<&toml::Table>) -> Result<PolkitConfig, PolkitConfigError> {
        let config: PolkitConfig = match table {
            Some(t) => t
                .clone()
                .try_into()
                .map_err(|e: toml::de::Error| PolkitConfigError(e.message().to_string()))?,
            None => PolkitConfig::default(),
        };
        if !(1..=MAX_TRIES).contains(&config.tries) {
            return Err(PolkitConfigError(format!(
                "tries must be 1 to {MAX_TRIES}, not {}",
                config.tries
            )));
        }
        if let Some(subject) = &config.subject {
            pcp_polkit::Subject::parse(subject)
                .map_err(|e| PolkitConfigError(format!("subject: {e}")))?;
        }
        Ok(config)
    }

    /// Whether the agent starts: `enabled`, else on for a session and off headless.
    pub fn starts(&self, session: bool) -> bool {
        self.enabled.unwrap_or(session)
    }
}

impl PolkitText {
    /// `wrong` with the tries left filled in.
    pub fn wrong(&self, tries: u32) -> String {
        self.wrong.replace("{tries}", &tries.to_string())
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

    fn parse(text: &str) -> Result<PolkitConfig, PolkitConfigError> {
        let t: toml::Table = toml::from_str(text).unwrap();
        PolkitConfig::from_table(Some(&t))
    }

    #[test]
    fn unset_enabled_means_on_for_a_session_and_off_headless() {
        let c = PolkitConfig::from_table(None).unwrap();
        assert!(c.starts(true));
        assert!(!c.starts(false));
        assert!(parse("enabled = true").unwrap().starts(false));
        assert!(!parse("enabled = false").unwrap().starts(true));
    }

    #[test]
    fn bad_keys_tries_and_subjects_are_named() {
        for (text, named) in [
            ("tries = 0", "tries must be 1 to 10"),
            ("tries = 11", "tries must be 1 to 10"),
            ("bogus = 1", "bogus"),
            ("subject = \"unix-user:0\"", "subject"),
            ("[text]\nnope = \"x\"", "nope"),
        ] {
            let e = parse(text).unwrap_err().to_string();
            assert!(
                e.starts_with("[polkit]") && e.contains(named),
                "{text}: {e}"
            );
        }
    }

    #[test]
    fn the_lines_fill_in_tries_and_reasons() {
        let t = PolkitText::default();
        assert_eq!(t.wrong(2), "Authentication failed. 2 tries left.");
        assert!(t.broken("no helper", 1).contains("(no helper). 1 tries"));
    }
}

#[cfg(test)]
mod shipped {
    use super::*;

    #[test]
    fn the_shipped_section_parses_to_the_defaults() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../assets/config/polkit.toml");
        let text = std::fs::read_to_string(path).unwrap();
        let file: toml::Table = toml::from_str(&text).unwrap();
        let section = file["polkit"].as_table().unwrap();
        let parsed = PolkitConfig::from_table(Some(section)).unwrap();
        assert_eq!(parsed, PolkitConfig::default());
    }
}
