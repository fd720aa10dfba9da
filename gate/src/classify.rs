//! Compositor-side classification: a manifest may say that its capability's class comes from
//! the intent's own parameters, judged here and never by the client — `classify = "shell"` rates
//! the `command` parameter with pcp-shell-risk (run in the `cwd` parameter), `classify = "path"`
//! rates a file write to `path` against `cwd`, `classify = "read"` an agent tool's read of
//! `path` (one path or a list; `reads` says whether it reads a `file`, a whole `tree` or only
//! `names`), `classify = "delete"` the deletion of `path` as `rm` of it would be rated. Every
//! kind rates with the config's secret lists. The level picks the class: Safe, High and Critical
//! from the manifest's `classes` table (defaults below), Moderate — "not known to be safe or
//! dangerous" — is the class the manifest declares itself.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use pcp_shell_risk::{Assessment, Context, ReadKind, Risk, Secrets, Wording};
use serde::Deserialize;
use serde_json::Value;

use crate::threshold;
use crate::types::{AuthLevel, SafetyLevel, SideEffects};

/// What a manifest's `classify` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClassifyKind {
    /// `command` is a shell command, run in the folder `cwd`.
    Shell,
    /// `path` is a file written from the folder `cwd`.
    Path,
    /// `path` (a string or a list of them) is read by an agent's tool from the folder `cwd`;
    /// `reads` is `file`, `tree` or `names` (absent: `tree`, the strictest).
    Read,
    /// `path` is a file deleted by an agent's tool from the folder `cwd`.
    Delete,
}

impl ClassifyKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ClassifyKind::Shell => "shell",
            ClassifyKind::Path => "path",
            ClassifyKind::Read => "read",
            ClassifyKind::Delete => "delete",
        }
    }

    /// The parameter the classifier rates.
    pub fn subject(self) -> &'static str {
        match self {
            ClassifyKind::Shell => "command",
            ClassifyKind::Path | ClassifyKind::Read | ClassifyKind::Delete => "path",
        }
    }
}

/// A class as written in a manifest's `classes` table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClassManifest {
    pub side_effects: SideEffects,
    pub auth_level: AuthLevel,
}

/// `classes = { safe = {…}, high = {…}, critical = {…} }`: each level's class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClassesManifest {
    pub safe: Option<ClassManifest>,
    pub high: Option<ClassManifest>,
    pub critical: Option<ClassManifest>,
}

/// A capability's classifier: which parameters it rates and the class of each level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Classifier {
    pub kind: ClassifyKind,
    /// Safe, Moderate, High, Critical, in that order.
    pub classes: [(SideEffects, AuthLevel); 4],
}

/// One intent's classification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Classified {
    pub risk: Risk,
    pub side_effects: SideEffects,
    pub auth_level: AuthLevel,
    pub assessment: Assessment,
}

impl Classified {
    /// What the prompt shows beside the command: the level and the reasons in words.
    pub fn summary(&self) -> String {
        self.summary_in(&Wording::default())
    }

    /// [`Classified::summary`] in the config's `wording`.
    pub fn summary_in(&self, wording: &Wording) -> String {
        format!(
            "{} — {}",
            wording.level(self.risk),
            self.assessment.summary_in(wording)
        )
    }
}

const fn class(side_effects: SideEffects, auth_level: AuthLevel) -> ClassManifest {
    ClassManifest {
        side_effects,
        auth_level,
    }
}

impl Classifier {
    /// The classifier a manifest declares: `moderate` is the manifest's own class; the others
    /// come from `classes`, else the defaults for the kind (shell and read: safe = read, high =
    /// destructive, critical = system; path: high = privileged write, critical = system;
    /// delete: high = destructive, critical = system).
    pub fn new(kind: ClassifyKind, moderate: ClassManifest, table: ClassesManifest) -> Classifier {
        let (safe, high, critical) = match kind {
            ClassifyKind::Shell | ClassifyKind::Read => (
                class(SideEffects::Read, AuthLevel::User),
                class(SideEffects::Destructive, AuthLevel::User),
                class(SideEffects::System, AuthLevel::Privileged),
            ),
            ClassifyKind::Delete => (
                moderate,
                class(SideEffects::Destructive, AuthLevel::User),
                class(SideEffects::System, AuthLevel::Privileged),
            ),
            ClassifyKind::Path => (
                moderate,
                class(SideEffects::Write, AuthLevel::Privileged),
                class(SideEffects::System, AuthLevel::Privileged),
            ),
        };
        let pick = |c: Option<ClassManifest>, d: ClassManifest| {
            let c = c.unwrap_or(d);
            (c.side_effects, c.auth_level)
        };
        Classifier {
            kind,
            classes: [
                pick(table.safe, safe),
                (moderate.side_effects, moderate.auth_level),
                pick(table.high, high),
                pick(table.critical, critical),
            ],
        }
    }

    /// Rates `params` with the secret lists `secrets`; the error names the missing or malformed
    /// parameter.
    pub fn classify(&self, params: &Value, secrets: &Arc<Secrets>) -> Result<Classified, String> {
        let text = |key: &str| -> Result<&str, String> {
            match params.get(key) {
                Some(Value::String(s)) => Ok(s),
                Some(_) => Err(format!("parameter `{key}` must be a string")),
                None => Err(format!(
                    "parameter `{key}` is required: the gate classifies it ({} classifier)",
                    self.kind.as_str()
                )),
            }
        };
        // A file write may come without a working folder (a desktop app's save): then only
        // dotfiles, start-up files, system folders and devices raise it. `cwd: null` says the
        // client has a working folder but does not know it (an agent's hook input without
        // one): fail closed, the path counts as outside it. A read or delete without one counts
        // as outside it too.
        let unknown_folder = matches!(params.get("cwd"), Some(Value::Null));
        let cwd = match (self.kind, params.get("cwd")) {
            (ClassifyKind::Shell, _) => text("cwd")?,
            (_, None | Some(Value::Null)) => "",
            _ => text("cwd")?,
        };
        if self.kind == ClassifyKind::Shell && !cwd.starts_with('/')
            || self.kind != ClassifyKind::Shell && !cwd.is_empty() && !cwd.starts_with('/')
        {
            return Err(format!(
                "parameter `cwd` must be an absolute folder, not `{cwd}`"
            ));
        }
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .filter(|h| h.is_absolute());
        let ctx = Context::new(Path::new(cwd), home).with_secrets(secrets.clone());
        let assessment = match self.kind {
            // `dir`: where the command starts when that is not the working folder (a tool
            // call's own working directory); the working folder stays what it is rated against.
            ClassifyKind::Shell => match params.get("dir") {
                None | Some(Value::Null) => pcp_shell_risk::classify(text("command")?, &ctx),
                Some(Value::String(d)) if d.starts_with('/') => {
                    pcp_shell_risk::classify_from(text("command")?, &ctx, Path::new(d))
                }
                Some(_) => {
                    return Err("parameter `dir` must be an absolute folder".into());
                }
            },
            ClassifyKind::Path if unknown_folder => {
                pcp_shell_risk::classify_path_outside(text("path")?, &ctx)
            }
            ClassifyKind::Path => pcp_shell_risk::classify_path(text("path")?, &ctx),
            ClassifyKind::Delete => pcp_shell_risk::classify_delete(text("path")?, &ctx),
            ClassifyKind::Read => read(params, &ctx)?,
        };
        let (side_effects, auth_level) = self.classes[level_index(assessment.risk)];
        Ok(Classified {
            risk: assessment.risk,
            side_effects,
            auth_level,
            assessment,
        })
    }
}

/// A read of `path` (one path or a list of them) as `reads` says: the highest rating of them.
fn read(params: &Value, ctx: &Context) -> Result<Assessment, String> {
    let kind = match params.get("reads") {
        None | Some(Value::Null) => ReadKind::Tree,
        Some(Value::String(s)) => ReadKind::parse(s).ok_or_else(|| {
            format!("parameter `reads` must be `file`, `tree` or `names`, not `{s}`")
        })?,
        Some(_) => return Err("parameter `reads` must be a string".into()),
    };
    let paths: Vec<&str> = match params.get("path") {
        Some(Value::String(s)) => vec![s.as_str()],
        Some(Value::Array(items)) if !items.is_empty() => items
            .iter()
            .map(|i| i.as_str().ok_or("parameter `path` must hold strings only"))
            .collect::<Result<_, _>>()?,
        Some(_) => return Err("parameter `path` must be a string or a list of strings".into()),
        None => {
            return Err(
                "parameter `path` is required: the gate classifies it (read classifier)".into(),
            );
        }
    };
    let mut all = Assessment {
        risk: Risk::Safe,
        reasons: Vec::new(),
    };
    for p in paths {
        let a = pcp_shell_risk::classify_read(p, kind, ctx);
        all.risk = all.risk.max(a.risk);
        all.reasons.extend(a.reasons);
    }
    all.reasons.sort_by_key(|r| std::cmp::Reverse(r.risk));
    Ok(all)
}

fn level_index(risk: Risk) -> usize {
    match risk {
        Risk::Safe => 0,
        Risk::Moderate => 1,
        Risk::High => 2,
        Risk::Critical => 3,
    }
}

/// Under the strict safety level a Critical command is refused outright (caro's "blocked").
pub fn strictly_refused(level: SafetyLevel, classified: &Classified) -> bool {
    level == SafetyLevel::Strict && classified.risk == Risk::Critical
}

/// What replacing classifier `old` with `new` would lower, in words (empty: nothing).
pub fn lowerings(old: Option<&Classifier>, new: Option<&Classifier>) -> Vec<String> {
    let (Some(old), new) = (old, new) else {
        return Vec::new();
    };
    let Some(new) = new else {
        return vec![format!(
            "its {} classifier would be dropped: every intent would get the declared class",
            old.kind.as_str()
        )];
    };
    if new.kind != old.kind {
        return vec![format!(
            "its classifier would change from {} to {}",
            old.kind.as_str(),
            new.kind.as_str()
        )];
    }
    let names = ["safe", "moderate", "high", "critical"];
    let mut out = Vec::new();
    for (i, name) in names.iter().enumerate() {
        for level in [
            SafetyLevel::Strict,
            SafetyLevel::Moderate,
            SafetyLevel::Permissive,
        ] {
            let (a, b) = (old.classes[i], new.classes[i]);
            let (ta, tb) = (
                threshold::threshold(a.0, a.1, level),
                threshold::threshold(b.0, b.1, level),
            );
            if tb < ta {
                out.push(format!("a {name} command would need {tb} instead of {ta}"));
            }
        }
    }
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::types::Threshold;

    fn shell() -> Classifier {
        Classifier::new(
            ClassifyKind::Shell,
            class(SideEffects::Write, AuthLevel::User),
            ClassesManifest::default(),
        )
    }

    #[test]
    fn levels_map_onto_the_gate_s_classes() {
        let c = shell();
        let at = |cmd: &str| {
            let got = c
                .classify(&json!({"command": cmd, "cwd": "/w"}), &Secrets::builtin())
                .unwrap();
            threshold::threshold(got.side_effects, got.auth_level, SafetyLevel::Moderate)
        };
        assert_eq!(at("ls"), Threshold::None);
        assert_eq!(at("cargo build"), Threshold::None);
        assert_eq!(at("rm -rf /tmp/x"), Threshold::VoiceVisual);
        assert_eq!(at("sudo true"), Threshold::VoiceVisual);
    }

    #[test]
    fn a_command_started_elsewhere_is_rated_against_the_working_folder() {
        let c = shell();
        let risk = |params: Value| c.classify(&params, &Secrets::builtin()).unwrap().risk;
        assert_eq!(
            risk(json!({"command": "rm -rf tmp/x", "cwd": "/w", "dir": "/"})),
            Risk::High
        );
        assert_eq!(
            risk(json!({"command": "rm -rf x", "cwd": "/w", "dir": "/w/sub"})),
            Risk::Moderate
        );
        assert!(
            c.classify(
                &json!({"command": "ls", "cwd": "/w", "dir": "sub"}),
                &Secrets::builtin()
            )
            .is_err()
        );
    }

    #[test]
    fn missing_or_relative_params_are_named() {
        let c = shell();
        let e = c
            .classify(&json!({"cwd": "/w"}), &Secrets::builtin())
            .unwrap_err();
        assert!(e.contains("`command`"), "{e}");
        let e = c
            .classify(&json!({"command": "ls", "cwd": "w"}), &Secrets::builtin())
            .unwrap_err();
        assert!(e.contains("absolute"), "{e}");
        let e = c
            .classify(&json!({"command": 3, "cwd": "/w"}), &Secrets::builtin())
            .unwrap_err();
        assert!(e.contains("string"), "{e}");
    }

    #[test]
    fn a_write_whose_client_does_not_know_the_working_folder_counts_as_outside_it() {
        let c = Classifier::new(
            ClassifyKind::Path,
            class(SideEffects::Write, AuthLevel::User),
            ClassesManifest::default(),
        );
        let risk = |params: Value| c.classify(&params, &Secrets::builtin()).unwrap().risk;
        assert_eq!(
            risk(json!({"path": "/w/a.txt", "cwd": "/w"})),
            Risk::Moderate
        );
        assert_eq!(risk(json!({"path": "/w/a.txt", "cwd": null})), Risk::High);
        assert_eq!(risk(json!({"path": "/w/a.txt"})), Risk::Moderate);
    }

    #[test]
    fn dropping_or_weakening_a_classifier_is_a_lowering() {
        let old = shell();
        assert!(!lowerings(Some(&old), None).is_empty());
        let weaker = Classifier::new(
            ClassifyKind::Shell,
            class(SideEffects::Write, AuthLevel::User),
            ClassesManifest {
                high: Some(class(SideEffects::Write, AuthLevel::User)),
                ..ClassesManifest::default()
            },
        );
        assert!(!lowerings(Some(&old), Some(&weaker)).is_empty());
        assert!(lowerings(Some(&old), Some(&old)).is_empty());
        assert!(lowerings(None, Some(&old)).is_empty());
    }

    fn kind(kind: ClassifyKind) -> Classifier {
        Classifier::new(
            kind,
            class(SideEffects::Network, AuthLevel::Privileged),
            ClassesManifest::default(),
        )
    }

    #[test]
    fn reads_are_rated_by_path_and_secrets() {
        let c = kind(ClassifyKind::Read);
        let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
        let at = |params: Value| {
            let got = c.classify(&params, &Secrets::builtin()).unwrap();
            (
                got.risk,
                threshold::threshold(got.side_effects, got.auth_level, SafetyLevel::Moderate),
            )
        };
        assert_eq!(
            at(json!({"path": "/w/src/a.rs", "reads": "file", "cwd": "/w"})),
            (Risk::Safe, Threshold::None)
        );
        assert_eq!(
            at(json!({"path": "/etc/hosts", "reads": "file", "cwd": "/w"})),
            (Risk::Moderate, Threshold::Visual)
        );
        assert_eq!(
            at(json!({"path": "/w/a.rs", "reads": "file", "cwd": null})),
            (Risk::Moderate, Threshold::Visual)
        );
        assert_eq!(
            at(json!({"path": format!("{home}/.ssh/id_rsa"), "reads": "file", "cwd": "/w"})),
            (Risk::High, Threshold::VoiceVisual)
        );
        assert_eq!(
            at(json!({"path": "/w/.env", "reads": "file", "cwd": "/w"})).0,
            Risk::High
        );
        assert_eq!(at(json!({"path": home.clone(), "cwd": "/w"})).0, Risk::High);
        assert_eq!(
            at(json!({"path": home, "reads": "names", "cwd": "/w"})).0,
            Risk::Moderate
        );
        assert_eq!(
            at(json!({"path": ["/w/a", "/tmp/b"], "reads": "file", "cwd": "/w"})).0,
            Risk::Moderate
        );
        let bad = |params: Value| c.classify(&params, &Secrets::builtin()).unwrap_err();
        assert!(bad(json!({"path": "/w/a", "reads": "all", "cwd": "/w"})).contains("`reads`"));
        assert!(bad(json!({"path": 3, "cwd": "/w"})).contains("`path`"));
        assert!(bad(json!({"path": [], "cwd": "/w"})).contains("`path`"));
    }

    #[test]
    fn a_configured_secret_list_is_the_one_rated_with() {
        let c = kind(ClassifyKind::Read);
        let mine = Arc::new(Secrets::new(&["/w/vault"], &[], &[], false).unwrap());
        let rate = |path: &str, s: &Arc<Secrets>| {
            c.classify(&json!({"path": path, "reads": "file", "cwd": "/w"}), s)
                .unwrap()
                .risk
        };
        assert_eq!(rate("/w/vault/a", &mine), Risk::High);
        assert_eq!(rate("/w/.env", &mine), Risk::Safe);
        assert_eq!(rate("/w/.env", &Secrets::builtin()), Risk::High);
    }

    #[test]
    fn deletes_are_rated_as_rm_of_the_same_path() {
        let c = Classifier::new(
            ClassifyKind::Delete,
            class(SideEffects::Write, AuthLevel::User),
            ClassesManifest::default(),
        );
        let at = |params: Value| {
            let got = c.classify(&params, &Secrets::builtin()).unwrap();
            threshold::threshold(got.side_effects, got.auth_level, SafetyLevel::Moderate)
        };
        assert_eq!(
            at(json!({"path": "/w/old.txt", "cwd": "/w"})),
            Threshold::None
        );
        assert_eq!(at(json!({"path": "old.txt", "cwd": "/w"})), Threshold::None);
        assert_eq!(
            at(json!({"path": "/tmp/x", "cwd": "/w"})),
            Threshold::VoiceVisual
        );
        assert_eq!(
            at(json!({"path": "/w/old.txt", "cwd": null})),
            Threshold::VoiceVisual
        );
        assert_eq!(
            at(json!({"path": "/", "cwd": "/w"})),
            Threshold::VoiceVisual
        );
    }
}
