//! The plugin's part of the config file: the gate's sections, `[overlay]`, `[speech]` and
//! `[haptics]`, read from one file with errors that name the file and the place (line and
//! column where the TOML says it, else the section and key). A host reads its own sections
//! (the reference compositor's `[compositor]`) from [`PluginConfig::gate`]'s view of the file.

use std::path::Path;

use pcp_gate::GateConfig;

/// Why the config file was refused.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{0}")]
    Gate(#[from] pcp_gate::ConfigError),
    /// A section owned by another crate does not parse or fails its checks.
    #[error("{0}")]
    Section(String),
}

/// Everything the plugin reads from the config file, checked.
pub struct PluginConfig {
    /// The gate's sections, the manifests they name, and the file's other sections as tables.
    pub gate: GateConfig,
    pub overlay: pcp_overlay::Config,
    pub speech: pcp_speech::Config,
    pub haptics: pcp_haptics::Config,
}

/// What the built-in defaults are called in messages.
pub const BUILT_IN: &str = "<built-in defaults>";

/// The plugin's own sections as one typed document, each section's type provided by its crate:
/// read in one pass over the text the gate read, so every error (an unknown key, a wrong type)
/// carries the file's line and column. Other sections are the gate's or the host's.
#[derive(serde::Deserialize, Default)]
struct PluginSections {
    #[serde(default)]
    overlay: pcp_overlay::Config,
    #[serde(default)]
    speech: pcp_speech::Config,
    #[serde(default)]
    haptics: pcp_haptics::Config,
}

/// Reads and checks the config file at `path`, or the default file
/// (`$XDG_CONFIG_HOME/pcp/config.toml`) when `path` is `None`, or the built-in defaults when
/// there is none.
pub fn load(path: Option<&Path>) -> Result<PluginConfig, ConfigError> {
    let file = match path {
        Some(p) => Some(p.to_path_buf()),
        None => Some(pcp_gate::config::default_config_path()).filter(|p| p.exists()),
    };
    let Some(file) = file else {
        return Ok(PluginConfig {
            gate: GateConfig::from_str_at(Path::new(BUILT_IN), "")?,
            overlay: pcp_overlay::Config::default(),
            speech: pcp_speech::Config::default(),
            haptics: pcp_haptics::Config::default(),
        });
    };
    sections(GateConfig::load(&file)?)
}

/// The plugin's sections of the file `gate` was built from, checked: the text the gate read (so
/// every section comes from the same read of the file), or, for a policy kept in the state
/// store, the text that was approved.
pub fn sections(gate: GateConfig) -> Result<PluginConfig, ConfigError> {
    let file = gate.sources.config.path.clone();
    let text = &gate.sources.config.text;
    let PluginSections {
        overlay,
        speech,
        haptics,
    } = toml::from_str(text).map_err(|e| pcp_gate::ConfigError::from_toml(&file, text, &e))?;
    crate::ui::Shortcut::parse(&overlay.focus_shortcut)
        .map_err(|e| ConfigError::Section(format!("{}: [overlay] {e}", file.display())))?;
    overlay.validate().map_err(|(key, reason)| {
        ConfigError::Section(format!("{}: [overlay] `{key}`: {reason}", file.display()))
    })?;
    speech
        .validate()
        .map_err(|e| ConfigError::Section(format!("{}: [speech] {e}", file.display())))?;
    haptics.validate().map_err(|(key, reason)| {
        ConfigError::Section(format!("{}: [haptics] `{key}`: {reason}", file.display()))
    })?;
    Ok(PluginConfig {
        gate,
        overlay,
        speech,
        haptics,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(text: &str) -> String {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, text).unwrap();
        match load(Some(&path)) {
            Ok(_) => panic!("accepted: {text}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn a_bad_key_in_any_plugin_section_is_named_with_its_line_and_column() {
        for (text, line, key) in [
            ("[state]\n\n[overlay]\nmax_widht = 3\n", 4, "max_widht"),
            (
                "[overlay]\ntext_scale = 1.0\n[speech]\nlanguag = \"ko\"\n",
                4,
                "languag",
            ),
            ("[haptics]\n\ngian = 0.5\n", 3, "gian"),
        ] {
            let e = refused(text);
            assert!(
                e.contains(&format!("config.toml:{line}:")),
                "{text:?} names its line: {e}"
            );
            assert!(e.contains(key), "{text:?} names the key: {e}");
        }
    }

    #[test]
    fn a_value_out_of_range_names_the_file_the_section_and_the_key() {
        let e = refused("[haptics]\ngain = 7.0\n");
        assert!(
            e.contains("config.toml") && e.contains("[haptics]") && e.contains("gain"),
            "{e}"
        );
        for (text, key) in [
            ("[overlay]\nmax_buffer_pixels = 0\n", "max_buffer_pixels"),
            ("[overlay]\nfont_size = 0.0\n", "font_size"),
            ("[overlay]\nfont_size = nan\n", "font_size"),
            ("[overlay]\nmax_width = 10\n", "max_width"),
            ("[overlay]\nmin_target = 0\n", "min_target"),
        ] {
            let e = refused(text);
            assert!(
                e.contains("config.toml") && e.contains("[overlay]") && e.contains(key),
                "{text:?}: {e}"
            );
        }
    }

    #[test]
    fn the_shipped_sections_load_as_written() {
        let assets = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/config");
        let mut text = String::new();
        for name in ["overlay.toml", "speech.toml", "haptics.toml"] {
            text += &std::fs::read_to_string(assets.join(name)).unwrap();
            text += "\n";
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, &text).unwrap();
        let loaded = load(Some(&path)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(loaded.overlay, pcp_overlay::Config::default());
    }
}
