//! The answer to a PAM prompt: kept in memory that is zeroed when dropped, never printed.

use std::fmt;

use zeroize::Zeroizing;

/// What the user typed for one PAM prompt (a password, usually). Its bytes are zeroed when it is
/// dropped, and neither `Debug` nor any other formatting ever shows them: the only way out is
/// the stdin of `polkit-agent-helper-1`.
pub struct Secret(Zeroizing<String>);

impl Secret {
    /// Takes ownership of `text` (the caller's copy is moved, not cloned, so no unzeroed copy is
    /// left behind by this call).
    pub fn new(text: String) -> Self {
        Self(Zeroizing::new(text))
    }

    /// The line written to the helper: the secret and a newline, itself in zeroed memory.
    /// Refused when the secret holds a line break or a NUL byte: the helper reads one line per
    /// prompt, so either would end the answer early and feed the rest to the next prompt.
    pub(crate) fn line(&self) -> Result<Zeroizing<Vec<u8>>, &'static str> {
        if self.0.contains(['\n', '\r', '\0']) {
            return Err("the answer to a PAM prompt cannot hold a line break or a NUL byte");
        }
        let mut line = Zeroizing::new(Vec::with_capacity(self.0.len() + 1));
        line.extend_from_slice(self.0.as_bytes());
        line.push(b'\n');
        Ok(line)
    }

    /// How many characters were typed, for a masked entry's dots.
    pub fn char_count(&self) -> usize {
        self.0.chars().count()
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

#[cfg(test)]
mod tests {
    use super::Secret;

    #[test]
    fn debug_never_shows_the_secret() {
        let s = Secret::new("hunter2".into());
        assert_eq!(format!("{s:?}"), "Secret(<redacted>)");
        assert_eq!(s.char_count(), 7);
    }

    #[test]
    fn a_line_ends_with_one_newline_and_line_breaks_are_refused() {
        let line = Secret::new("pw".into())
            .line()
            .expect("a plain password is a line");
        assert_eq!(&line[..], b"pw\n");
        assert!(Secret::new("a\nb".into()).line().is_err());
        assert!(Secret::new("a\0b".into()).line().is_err());
    }
}
