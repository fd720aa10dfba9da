//! Files the gate trusts: a config or manifest (or a folder above one) that someone else could
//! write is refused with an error naming it and its mode or owner, and the system's manifest
//! folders are floors a user's folder or config cannot lower.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use pcp_gate::config::LoadOptions;
use pcp_gate::{ConfigError, GateConfig, Threshold};

const DELETE: &str = "[[capability]]\nname = \"file.delete\"\nversion = 1\nside_effects = \"destructive\"\nauth_level = \"user\"\ndescription = \"Delete {path}\"\n";

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// A config in a fresh folder, with `user/` and `system/` manifest folders.
struct Setup {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Setup {
    fn new(config: &str) -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for sub in ["user", "system"] {
            std::fs::create_dir(root.join(sub)).unwrap();
            chmod(&root.join(sub), 0o755);
        }
        let setup = Setup { _dir: dir, root };
        setup.write(
            "config.toml",
            &format!("[manifests]\ndirs = [\"user\"]\n{config}"),
        );
        setup
    }

    fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.root.join(name);
        std::fs::write(&path, text).unwrap();
        chmod(&path, 0o644);
        path
    }

    fn load(&self) -> Result<GateConfig, ConfigError> {
        let options = LoadOptions {
            system_dirs: vec![self.root.join("system")],
            ..LoadOptions::default()
        };
        GateConfig::load_with(&self.root.join("config.toml"), &options)
    }
}

fn refused(err: ConfigError, path: &Path, what: &str) {
    let text = err.to_string();
    assert!(matches!(err, ConfigError::Untrusted(_)), "{text}");
    assert!(
        text.starts_with(&format!("{}: ", path.display())),
        "names the file: {text}"
    );
    assert!(text.contains(what), "{text}");
}

#[test]
fn a_group_writable_config_is_refused_with_its_name_and_mode() {
    let setup = Setup::new("");
    let config = setup.root.join("config.toml");
    assert!(setup.load().is_ok());
    chmod(&config, 0o664);
    refused(
        setup.load().unwrap_err(),
        &config,
        "mode 0664 lets its group write it",
    );
    chmod(&config, 0o646);
    refused(setup.load().unwrap_err(), &config, "lets others write it");
}

#[test]
fn a_writable_manifest_or_manifest_folder_is_refused_by_name() {
    let setup = Setup::new("");
    let manifest = setup.write("user/desktop.toml", DELETE);
    assert!(setup.load().is_ok());
    chmod(&manifest, 0o666);
    refused(setup.load().unwrap_err(), &manifest, "mode 0666");
    chmod(&manifest, 0o644);
    let folder = setup.root.join("user");
    chmod(&folder, 0o777);
    refused(setup.load().unwrap_err(), &folder, "folder");
}

#[test]
fn a_config_in_a_folder_others_can_write_is_refused() {
    let setup = Setup::new("");
    chmod(&setup.root, 0o775);
    refused(setup.load().unwrap_err(), &setup.root, "mode 0775");
}

#[test]
fn a_config_owned_by_another_user_is_refused() {
    let setup = Setup::new("");
    let config = setup.root.join("config.toml");
    let options = if pcp_gate::trust::current_uid() == 0 {
        std::os::unix::fs::chown(&config, Some(4242), None).unwrap();
        LoadOptions {
            system_dirs: Vec::new(),
            ..LoadOptions::default()
        }
    } else {
        LoadOptions {
            system_dirs: Vec::new(),
            trust: pcp_gate::trust::TrustRules { uid: 4242 },
        }
    };
    let err = GateConfig::load_with(&config, &options).unwrap_err();
    refused(err, &config, "owned by uid");
}

#[test]
fn a_user_manifest_cannot_lower_a_system_capability() {
    let setup = Setup::new("");
    let system = setup.write("system/10-files.toml", DELETE);
    let user = setup.write("user/50-mine.toml", &DELETE.replace("destructive", "read"));
    let err = setup.load().unwrap_err().to_string();
    assert!(err.starts_with(&format!("{}:2:", user.display())), "{err}");
    assert!(err.contains(&format!("{}:2:", system.display())), "{err}");
    assert!(err.contains("need none instead of voice+visual"), "{err}");
}

#[test]
fn the_user_config_cannot_lower_a_system_capability_either() {
    let setup = Setup::new(&DELETE.replace("destructive", "write"));
    let system = setup.write("system/10-files.toml", DELETE);
    let err = setup.load().unwrap_err().to_string();
    let config = setup.root.join("config.toml");
    assert!(err.starts_with(&format!("{}:", config.display())), "{err}");
    assert!(err.contains(&system.display().to_string()), "{err}");
}

#[test]
fn a_user_manifest_may_keep_or_raise_a_system_capability() {
    let setup = Setup::new("");
    setup.write(
        "system/10-files.toml",
        &DELETE.replace("destructive", "write"),
    );
    setup.write("user/50-mine.toml", DELETE);
    let config = setup.load().unwrap();
    let cap = config.registry.get("file.delete").unwrap();
    assert_eq!(
        pcp_gate::threshold::table(cap.side_effects, cap.auth_level),
        Threshold::VoiceVisual
    );
    assert!(cap.declared_at.file.ends_with("user/50-mine.toml"));
}

#[test]
fn system_folders_are_read_whatever_the_config_lists() {
    let setup = Setup::new("");
    setup.write("system/10-files.toml", DELETE);
    setup.write("config.toml", "[manifests]\ndirs = []\n");
    assert!(setup.load().unwrap().registry.get("file.delete").is_some());
    // Listing a system folder again does not declare its capabilities twice.
    setup.write(
        "config.toml",
        "[manifests]\ndirs = [\"system\", \"user\"]\n",
    );
    let config = setup.load().unwrap();
    assert_eq!(config.registry.len(), 1);
}

#[test]
fn the_gates_own_capability_names_are_reserved() {
    let setup = Setup::new("");
    let manifest = setup.write(
        "user/evil.toml",
        &DELETE.replace("file.delete", "pcp.policy.change"),
    );
    let err = setup.load().unwrap_err().to_string();
    assert!(
        err.starts_with(&format!("{}:2:", manifest.display())),
        "{err}"
    );
    assert!(err.contains("reserved"), "{err}");
}

#[test]
fn the_policy_change_wording_is_checked_at_load() {
    let setup = Setup::new("[policy_change]\nchanged = \"{subject} {oops}\"\n");
    let err = setup.load().unwrap_err().to_string();
    assert!(err.contains("config.toml:4:1"), "{err}");
    assert!(err.contains("`{oops}`"), "{err}");
}
