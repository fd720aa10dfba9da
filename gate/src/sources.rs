//! What a policy is made of: the config file and every manifest file, as text, read once from
//! trusted files. A loaded config keeps them, so the policy in force can be compared with a new
//! one, kept in the state store when it is approved, and rebuilt from there at the next start
//! without reading a file the user may have changed since.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::ConfigError;
use crate::trust::TrustRules;

/// Manifest folders that only root should be able to change. They are always read, first,
/// whatever the config's `[manifests] dirs` says, and a capability they declare cannot be
/// redeclared with less protection by a user's folder or config.
pub const SYSTEM_MANIFEST_DIRS: [&str; 2] =
    ["/usr/share/pcp/capabilities.d", "/etc/pcp/capabilities.d"];

/// How a config is loaded: which folders are system folders and whose files are trusted.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    /// Read first, always; their capabilities are floors for the user's.
    pub system_dirs: Vec<PathBuf>,
    pub trust: TrustRules,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            system_dirs: SYSTEM_MANIFEST_DIRS.iter().map(PathBuf::from).collect(),
            trust: TrustRules::default(),
        }
    }
}

/// One file's text, as it was read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceFile {
    pub path: PathBuf,
    pub text: String,
}

/// A manifest folder and the `*.toml` files read from it, in name order (none when the folder
/// does not exist).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestFolder {
    pub path: PathBuf,
    /// A system folder: its capabilities cannot be lowered by the user's.
    pub system: bool,
    pub files: Vec<SourceFile>,
}

/// Everything a gate policy was built from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicySources {
    /// The config file (for built-in defaults: a placeholder path and empty text).
    pub config: SourceFile,
    /// Every manifest folder read, system folders first.
    pub folders: Vec<ManifestFolder>,
}

impl PolicySources {
    /// SHA-256 (hex) of the sources: two policies with the same digest were built from the same
    /// text at the same paths.
    pub fn digest(&self) -> String {
        let text = serde_json::to_string(self).unwrap_or_default();
        crate::capability::lower_hex(&Sha256::digest(text.as_bytes()))
    }
}

/// Reads every manifest folder a config names (`dirs`, relative to the config file's folder),
/// after the system folders; each folder and file is checked before it is read.
pub(crate) fn read_folders(
    config_path: &Path,
    dirs: &[PathBuf],
    options: &LoadOptions,
) -> Result<Vec<ManifestFolder>, ConfigError> {
    let base = config_path.parent().unwrap_or(Path::new("."));
    let mut folders: Vec<ManifestFolder> = Vec::new();
    for dir in &options.system_dirs {
        folders.push(read_folder(dir, true, &options.trust)?);
    }
    for dir in dirs {
        let dir = base.join(dir);
        if folders.iter().any(|f| same_folder(&f.path, &dir)) {
            continue;
        }
        folders.push(read_folder(&dir, false, &options.trust)?);
    }
    Ok(folders)
}

/// Two spellings of one folder (a system folder listed again in the config, a `..` path).
fn same_folder(a: &Path, b: &Path) -> bool {
    if a == b {
        return true;
    }
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

fn read_folder(
    dir: &Path,
    system: bool,
    trust: &TrustRules,
) -> Result<ManifestFolder, ConfigError> {
    let empty = ManifestFolder {
        path: dir.to_path_buf(),
        system,
        files: Vec::new(),
    };
    match std::fs::symlink_metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(empty),
        Err(source) => {
            return Err(ConfigError::Read {
                path: dir.to_path_buf(),
                source,
            });
        }
        Ok(_) => {}
    }
    let real = trust.check_dir(dir)?;
    let entries = std::fs::read_dir(&real).map_err(|source| ConfigError::Read {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    paths.sort();
    let mut files = Vec::with_capacity(paths.len());
    for path in paths {
        files.push(read_trusted(&path, trust)?);
    }
    Ok(ManifestFolder { files, ..empty })
}

/// Reads a file after checking that it, and every folder above it, is trusted.
pub fn read_trusted(path: &Path, trust: &TrustRules) -> Result<SourceFile, ConfigError> {
    let real = trust.check_file(path)?;
    let text = std::fs::read_to_string(&real).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(SourceFile {
        path: path.to_path_buf(),
        text,
    })
}
