//! Errors at the gate's boundary, each naming what was wrong and where.

use std::fmt;
use std::path::{Path, PathBuf};

/// A position in a config or manifest file, 1-based.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub file: PathBuf,
    pub line: usize,
    pub column: usize,
}

impl Location {
    /// The line and column of byte `offset` in `text`.
    pub fn at(file: &Path, text: &str, offset: usize) -> Location {
        let offset = offset.min(text.len());
        let before = &text[..offset];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column = before[line_start..].chars().count() + 1;
        Location {
            file: file.to_path_buf(),
            line,
            column,
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file.display(), self.line, self.column)
    }
}

/// A config or manifest file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{location}: {message}")]
    Invalid { location: Location, message: String },
    #[error("{}: cannot read: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A file or folder that someone else could have written: not loaded (as ssh refuses).
    #[error("{0}")]
    Untrusted(#[from] crate::trust::Untrusted),
}

impl ConfigError {
    pub fn invalid(file: &Path, text: &str, offset: usize, message: impl Into<String>) -> Self {
        ConfigError::Invalid {
            location: Location::at(file, text, offset),
            message: message.into(),
        }
    }

    /// A refused value: `message` at the key `dotted` (`overlay.max_width`,
    /// `haptics.tap.max_interval_ms`) where `text` writes it, else at its table's header, else
    /// at the file's start (a value left at its default is written nowhere).
    pub fn at_key(file: &Path, text: &str, dotted: &str, message: impl Into<String>) -> Self {
        ConfigError::invalid(file, text, key_offset(text, dotted).unwrap_or(0), message)
    }

    /// Turns a TOML parse or type error into one that names file:line:column.
    pub fn from_toml(file: &Path, text: &str, error: &toml::de::Error) -> Self {
        let offset = error.span().map_or(0, |span| span.start);
        // toml's message repeats the source excerpt when displayed whole; keep just the reason.
        let mut message = error.message().trim().to_string();
        // A value of the wrong type is pointed at, but its message names no key: name it.
        if let Some(key) = key_before(text, offset)
            && !message.contains(&format!("`{key}`"))
        {
            message = format!("`{key}`: {message}");
        }
        ConfigError::invalid(file, text, offset, message)
    }

    /// The location this error names, when it names one.
    pub fn location(&self) -> Option<&Location> {
        match self {
            ConfigError::Invalid { location, .. } => Some(location),
            ConfigError::Read { .. } | ConfigError::Untrusted(_) => None,
        }
    }
}

/// The key written before `=` on the line of byte `offset`, when `offset` is in its value.
fn key_before(text: &str, offset: usize) -> Option<&str> {
    let offset = offset.min(text.len());
    let start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let (key, _) = text[start..offset].split_once('=')?;
    let key = key.trim();
    (!key.is_empty() && !key.starts_with('[') && !key.contains(['"', '{'])).then_some(key)
}

/// The byte offset in `text` where the key `dotted` is written: `key = …` under its table's
/// header (`[a.b]`, `[[a]]`) or as a dotted key under a shorter one, else that table's header.
/// A scan of lines for pointing at a value the TOML parser accepted: the text was parsed already.
pub fn key_offset(text: &str, dotted: &str) -> Option<usize> {
    let mut table = String::new();
    let mut header_at: Option<(usize, usize)> = None;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        let at = offset + (line.len() - trimmed.len());
        offset += line.len();
        if let Some(rest) = trimmed.strip_prefix('[') {
            let name = rest.trim_start_matches('[');
            let name = name.split(']').next().unwrap_or("");
            table = name.split('.').map(str::trim).collect::<Vec<_>>().join(".");
            let is_prefix = dotted == table || dotted.starts_with(&format!("{table}."));
            if is_prefix && header_at.is_none_or(|(len, _)| table.len() > len) {
                header_at = Some((table.len(), at));
            }
            continue;
        }
        let Some((key, _)) = trimmed.split_once('=') else {
            continue;
        };
        let key: Vec<&str> = key.split('.').map(|k| k.trim().trim_matches('"')).collect();
        let full = if table.is_empty() {
            key.join(".")
        } else {
            format!("{table}.{}", key.join("."))
        };
        if full == dotted {
            return Some(at);
        }
    }
    header_at.map(|(_, at)| at)
}

/// The state store (SQLite file, token key) failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("state store {}: {source}", path.display())]
    Sqlite {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    #[error("{}: {message}", path.display())]
    File { path: PathBuf, message: String },
    #[error("audit record {seq} cannot be encoded: {message}")]
    Encode { seq: u64, message: String },
}

impl From<crate::trust::Untrusted> for StoreError {
    fn from(u: crate::trust::Untrusted) -> Self {
        StoreError::File {
            path: u.path,
            message: u.reason,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_found_under_its_table_as_a_dotted_key_or_its_header() {
        let text = "[haptics]\ngain = 0.5\ntap.max_tap_ms = 9\n\n[haptics.cue]\n  ms = 3\n";
        let line = |dotted: &str| {
            key_offset(text, dotted).map(|o| Location::at(Path::new("c"), text, o).line)
        };
        assert_eq!(line("haptics.gain"), Some(2));
        assert_eq!(line("haptics.tap.max_tap_ms"), Some(3));
        assert_eq!(line("haptics.cue.ms"), Some(6));
        assert_eq!(line("haptics.cue.hz"), Some(5), "the nearest header");
        assert_eq!(line("haptics.enabled"), Some(1));
        assert_eq!(line("overlay.theme"), None);
        let e = ConfigError::at_key(Path::new("c.toml"), text, "haptics.cue.ms", "bad");
        assert_eq!(e.to_string(), "c.toml:6:3: bad");
        assert_eq!(key_before(text, text.find("0.5").unwrap()), Some("gain"));
        assert_eq!(key_before(text, 3), None);
    }
}
