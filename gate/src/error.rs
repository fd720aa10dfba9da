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

    /// Turns a TOML parse or type error into one that names file:line:column.
    pub fn from_toml(file: &Path, text: &str, error: &toml::de::Error) -> Self {
        let offset = error.span().map_or(0, |span| span.start);
        // toml's message repeats the source excerpt when displayed whole; keep just the reason.
        let message = error.message().trim().to_string();
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
