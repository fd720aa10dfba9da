//! Malformed configs and manifests: each error names file:line:column and what is wrong.

mod support;

use pcp_gate::GateConfig;

/// Loads `text` as a config and returns (line, column, message) of its error.
fn error_of(text: &str) -> (usize, usize, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(&path, text).unwrap();
    let err = GateConfig::load(&path).expect_err("the config must be refused");
    let loc = err.location().expect("the error names a location").clone();
    assert_eq!(loc.file, path, "the error names the file");
    let shown = err.to_string();
    assert!(
        shown.starts_with(&format!("{}:{}:{}: ", path.display(), loc.line, loc.column)),
        "{shown}"
    );
    (loc.line, loc.column, shown)
}

const CAP: &str = "[[capability]]\nname = \"file.delete\"\nversion = 1\nside_effects = \"destructive\"\nauth_level = \"user\"\ndescription = \"Delete {path}\"\n";

#[test]
fn unknown_top_level_section() {
    let (line, _, msg) = error_of("[manifests]\ndirs = []\n\n[safty]\nlevel = \"strict\"\n");
    assert_eq!(line, 4);
    assert!(msg.contains("safty"), "{msg}");
}

#[test]
fn unknown_key_in_a_section() {
    let (line, col, msg) = error_of("[manifests]\ndirs = []\n[timeouts]\nvoice_secs = 5\n");
    assert_eq!((line, col), (4, 1));
    assert!(msg.contains("voice_secs"), "{msg}");
}

#[test]
fn bad_safety_level() {
    let (line, _, msg) = error_of("[manifests]\ndirs = []\n[safety]\nlevel = \"paranoid\"\n");
    assert_eq!(line, 4);
    assert!(msg.contains("paranoid") || msg.contains("variant"), "{msg}");
}

#[test]
fn wrong_type_for_a_timeout() {
    let (line, _, _) = error_of("[manifests]\ndirs = []\n[timeouts]\nvisual_seconds = \"30\"\n");
    assert_eq!(line, 4);
}

#[test]
fn zero_timeout() {
    let (line, col, msg) = error_of("[manifests]\ndirs = []\n[timeouts]\n  voice_seconds = 0\n");
    assert_eq!((line, col), (4, 3));
    assert!(msg.contains("voice_seconds must be at least 1"), "{msg}");
}

#[test]
fn duplicate_key() {
    let (line, _, _) =
        error_of("[manifests]\ndirs = []\n[queue]\nmax_pending = 3\nmax_pending = 4\n");
    assert_eq!(line, 5);
}

#[test]
fn unknown_side_effects_value() {
    let text = CAP.replace("\"destructive\"", "\"explosive\"");
    let (line, _, msg) = error_of(&format!("[manifests]\ndirs = []\n{text}"));
    assert_eq!(line, 6);
    assert!(
        msg.contains("explosive") || msg.contains("variant"),
        "{msg}"
    );
}

#[test]
fn unknown_auth_level_value() {
    let text = CAP.replace("\"user\"", "\"root\"");
    let (line, _, _) = error_of(&format!("[manifests]\ndirs = []\n{text}"));
    assert_eq!(line, 7);
}

#[test]
fn unknown_key_in_a_capability() {
    let (line, _, msg) = error_of(&format!("[manifests]\ndirs = []\n{CAP}risk = \"low\"\n"));
    assert_eq!(line, 9);
    assert!(msg.contains("risk"), "{msg}");
}

#[test]
fn missing_version() {
    let text = CAP.replace("version = 1\n", "");
    let (line, _, msg) = error_of(&format!("[manifests]\ndirs = []\n{text}"));
    assert_eq!(line, 3);
    assert!(msg.contains("version"), "{msg}");
}

#[test]
fn version_zero() {
    let text = CAP.replace("version = 1", "version = 0");
    let (line, col, _) = error_of(&format!("[manifests]\ndirs = []\n{text}"));
    assert_eq!((line, col), (5, 11));
}

#[test]
fn duplicate_capability_names_both_places() {
    let (line, _, msg) = error_of(&format!("[manifests]\ndirs = []\n{CAP}{CAP}"));
    assert_eq!(line, 10);
    assert!(
        msg.contains("declared twice") && msg.contains(":4:"),
        "{msg}"
    );
}

#[test]
fn bad_capability_name() {
    let text = CAP.replace("file.delete", "File Delete");
    let (line, _, msg) = error_of(&format!("[manifests]\ndirs = []\n{text}"));
    assert_eq!(line, 4);
    assert!(msg.contains("File Delete"), "{msg}");
}

#[test]
fn broken_description_template() {
    let text = CAP.replace("Delete {path}", "Delete {path");
    let (line, col, msg) = error_of(&format!("[manifests]\ndirs = []\n{text}"));
    assert_eq!((line, col), (8, 23), "the column of the unclosed brace");
    assert!(msg.contains("unclosed"), "{msg}");
}

#[test]
fn haptic_is_refused_for_destructive_capabilities() {
    let (line, _, msg) = error_of(&format!("[manifests]\ndirs = []\n{CAP}haptic = true\n"));
    assert_eq!(line, 9);
    assert!(msg.contains("never"), "{msg}");
}

#[test]
fn params_must_name_what_the_description_shows() {
    let (line, _, msg) = error_of(&format!(
        "[manifests]\ndirs = []\n{CAP}params = [\"recursive\"]\n"
    ));
    assert_eq!(line, 9);
    assert!(msg.contains("`path`") && msg.contains("params"), "{msg}");
}

#[test]
fn params_listed_twice_or_badly_named() {
    let (line, _, msg) = error_of(&format!(
        "[manifests]\ndirs = []\n{CAP}params = [\"path\", \"path\"]\n"
    ));
    assert_eq!(line, 9);
    assert!(msg.contains("twice"), "{msg}");
    let (_, _, msg) = error_of(&format!(
        "[manifests]\ndirs = []\n{CAP}params = [\"path\", \"a b\"]\n"
    ));
    assert!(msg.contains("`a b`"), "{msg}");
}

#[test]
fn unknown_extra_params_value() {
    let (line, _, msg) = error_of(&format!(
        "[manifests]\ndirs = []\n{CAP}extra_params = \"hide\"\n"
    ));
    assert_eq!(line, 9);
    assert!(msg.contains("hide") || msg.contains("variant"), "{msg}");
}

#[test]
fn without_params_a_manifest_declares_what_its_text_and_salient_list_name() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    let text = format!(
        "[manifests]\ndirs = []\n{CAP}target = \"{{dir}}\"\nsalient = [\"path\", \"mode\"]\n"
    );
    std::fs::write(&path, text).unwrap();
    let config = GateConfig::load(&path).unwrap();
    let cap = config.registry.get("file.delete").unwrap();
    assert_eq!(cap.params, ["dir", "mode", "path"]);
}

#[test]
fn not_toml_at_all() {
    let (line, _, _) = error_of("[manifests]\ndirs = []\n[session\nprofile = 1\n");
    assert_eq!(line, 3);
}

#[test]
fn errors_in_a_manifest_folder_name_the_manifest_file() {
    let dir = tempfile::tempdir().unwrap();
    let manifests = dir.path().join("caps");
    std::fs::create_dir(&manifests).unwrap();
    std::fs::write(manifests.join("ok.toml"), CAP).unwrap();
    std::fs::write(
        manifests.join("zz-bad.toml"),
        CAP.replace("version = 1", "version = -1"),
    )
    .unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(&config, "[manifests]\ndirs = [\"caps\"]\n").unwrap();
    let err = GateConfig::load(&config).unwrap_err();
    let loc = err.location().unwrap();
    assert_eq!(loc.file, manifests.join("zz-bad.toml"));
    assert_eq!(loc.line, 3);
}

#[test]
fn a_duplicate_across_manifest_files_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let manifests = dir.path().join("caps");
    std::fs::create_dir(&manifests).unwrap();
    std::fs::write(manifests.join("a.toml"), CAP).unwrap();
    std::fs::write(manifests.join("b.toml"), CAP).unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(&config, "[manifests]\ndirs = [\"caps\"]\n").unwrap();
    let err = GateConfig::load(&config).unwrap_err().to_string();
    assert!(
        err.contains("b.toml:2:") && err.contains("a.toml:2:"),
        "{err}"
    );
}

#[test]
fn the_shipped_config_and_manifests_load() {
    let text = std::fs::read_to_string(support::assets().join("config/gate.toml")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    let dirs = format!(
        "[manifests]\ndirs = [{:?}]\n",
        support::assets().join("capabilities.d")
    );
    assert!(text.contains("[manifests]\n"));
    std::fs::write(&path, text.replacen("[manifests]\n", &dirs, 1)).unwrap();
    let config = GateConfig::load(&path).unwrap();
    assert!(config.registry.get("file.delete").is_some());
    assert!(config.registry.get("window.move").is_some());
    assert_eq!(config.file.timeouts.voice_seconds, 10);
    assert_eq!(config.file.timeouts.visual_seconds, 30);
    assert_eq!(
        config.file.policy_change,
        pcp_gate::config::PolicyChangeConfig::default(),
        "the shipped wording is the built-in one"
    );
    let defaults = pcp_gate::config::AuditConfig::default();
    assert_eq!(config.file.audit.full_params, defaults.full_params);
    assert_eq!(
        config.file.audit.params_excerpt_bytes,
        defaults.params_excerpt_bytes
    );
    assert_eq!(
        config.file.audit.writer_queue_batches,
        defaults.writer_queue_batches
    );
    // The shipped manifests say which parameters they take: a delete takes a path, nothing else.
    assert_eq!(config.registry.get("file.delete").unwrap().params, ["path"]);
}

#[test]
fn a_reworded_phrase_with_an_unknown_key_or_placeholder_is_refused_at_its_line() {
    let (line, col, msg) = error_of("[shell_risk.reasons]\ndeletes_recursivly = \"löscht\"\n");
    assert_eq!((line, col), (2, 1));
    assert!(
        msg.contains("[shell_risk.reasons] `deletes_recursivly` is not a phrase's key"),
        "{msg}"
    );
    let (line, _, msg) = error_of(
        "[shell_risk.reasons]\ndeletes = \"löscht\"\ndeletes_outside = \"{how} ({pfad})\"\n",
    );
    assert_eq!(line, 3);
    assert!(
        msg.contains(
            "[shell_risk.reasons] deletes_outside: `{pfad}` is not one of its placeholders \
             ({how}, {path})"
        ),
        "{msg}"
    );
}

#[test]
fn a_bad_secret_pattern_is_refused_at_its_line() {
    let (line, col, msg) = error_of("[shell_risk]\nsecrets = [\"~/ok\", \"a/b\"]\n");
    assert_eq!((line, col), (2, 1));
    assert!(
        msg.contains("[shell_risk] secrets[1] `a/b`: a pattern with a `/` must start with"),
        "{msg}"
    );
    let (line, _, msg) =
        error_of("[shell_risk]\nsecret_env = [\"OK\"]\nnot_secrets = [\"~/[x\"]\n");
    assert_eq!(line, 3);
    assert!(
        msg.contains("not_secrets[0]") && msg.contains("never closed"),
        "{msg}"
    );
    let (line, _, msg) = error_of("[shell_risk]\nsecret_env = [\"*\"]\n");
    assert_eq!(line, 2);
    assert!(msg.contains("secret_env[0]"), "{msg}");
}

/// The `[shell_risk.reasons]` block of the shipped config: `(key, English)` of each commented
/// line, in order.
fn documented_phrases(text: &str) -> Vec<(String, String)> {
    let block = text
        .split_once("[shell_risk.reasons]\n")
        .expect("the shipped config documents [shell_risk.reasons]")
        .1;
    block
        .lines()
        .take_while(|l| l.starts_with('#'))
        .filter_map(|l| {
            let (key, value) = l.strip_prefix("# ")?.split_once(" = ")?;
            let english = value.strip_prefix('"')?.strip_suffix('"')?;
            Some((key.to_string(), english.to_string()))
        })
        .collect()
}

#[test]
fn the_shipped_config_lists_every_phrase_with_its_english_and_no_other() {
    let text = std::fs::read_to_string(support::assets().join("config/gate.toml")).unwrap();
    let documented = documented_phrases(&text);
    let catalogue: Vec<(String, String)> = pcp_shell_risk::phrases::ALL
        .iter()
        .map(|p| (p.key.to_string(), p.english.to_string()))
        .collect();
    let missing: Vec<_> = catalogue
        .iter()
        .filter(|p| !documented.contains(p))
        .collect();
    let unknown: Vec<_> = documented
        .iter()
        .filter(|p| !catalogue.contains(p))
        .collect();
    assert!(
        missing.is_empty() && unknown.is_empty(),
        "assets/config/gate.toml [shell_risk.reasons] lacks {missing:?} and lists {unknown:?}, \
         which no phrase is"
    );
}

#[test]
fn a_reworded_phrase_loads_and_words_the_classification() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    let text =
        "[shell_risk.reasons]\ndeletes_recursively = \"löscht rekursiv\"\nlevel_high = \"hoch\"\n";
    std::fs::write(&path, text).unwrap();
    let config = GateConfig::load(&path).unwrap();
    let wording = config.file.shell_risk.wording();
    let ctx = pcp_shell_risk::Context::new("/home/u", None);
    let a = pcp_shell_risk::classify("rm -r /tmp/x", &ctx);
    assert_eq!(
        a.summary_in(&wording),
        "löscht rekursiv outside the working folder (/tmp/x)"
    );
    assert_eq!(wording.level(a.risk), "hoch");
}
