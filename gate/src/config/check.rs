//! What serde cannot check in the gate's sections: counts and timeouts that must not be zero, a
//! profile that must not be empty, the policy-change prompt's wording templates, the shell
//! classifier's reworded phrases and its secret patterns. Each
//! refusal names the file, the line and column of the key, and the key.

use std::path::Path;

use super::{ConfigFile, PolicyChangeConfig, ShellRiskConfig};
use crate::capability::Template;
use crate::error::ConfigError;

/// Checks `file`, read from `text` of `path`.
pub(super) fn check(path: &Path, text: &str, file: &ConfigFile) -> Result<(), ConfigError> {
    check_numbers(path, text, file)?;
    check_wording(path, text, &file.policy_change)?;
    check_reasons(path, text, &file.shell_risk)?;
    check_secrets(path, text, &file.shell_risk)
}

/// Each secret pattern compiles and each variable pattern names something.
fn check_secrets(path: &Path, text: &str, shell_risk: &ShellRiskConfig) -> Result<(), ConfigError> {
    shell_risk.compile_secrets().map(|_| ()).map_err(|e| {
        let key = match &e {
            pcp_shell_risk::SecretsError::Path { list, .. } => format!("shell_risk.{list}"),
            pcp_shell_risk::SecretsError::Env { .. } => "shell_risk.secret_env".to_string(),
        };
        ConfigError::at_key(path, text, &key, format!("[shell_risk] {e}"))
    })
}

/// Each reworded phrase names a phrase of the catalogue and only that phrase's placeholders.
fn check_reasons(path: &Path, text: &str, shell_risk: &ShellRiskConfig) -> Result<(), ConfigError> {
    let mut wording = pcp_shell_risk::Wording::default();
    for (key, template) in &shell_risk.reasons {
        wording.set(key, template).map_err(|e| {
            let message = match e {
                pcp_shell_risk::WordingError::UnknownKey(_) => format!(
                    "[shell_risk.reasons] {e}: the keys are listed, commented out, in the \
                     default config"
                ),
                _ => format!("[shell_risk.reasons] {e}"),
            };
            ConfigError::at_key(path, text, &format!("shell_risk.reasons.{key}"), message)
        })?;
    }
    Ok(())
}

/// The policy-change prompt's templates parse and use only their own placeholders.
fn check_wording(path: &Path, text: &str, wording: &PolicyChangeConfig) -> Result<(), ConfigError> {
    for (key, template, allowed) in wording.templates() {
        let dotted = format!("policy_change.{key}");
        let parsed = Template::parse(template).map_err(|(_, message)| {
            ConfigError::at_key(
                path,
                text,
                &dotted,
                format!("[policy_change] {key}: {message}"),
            )
        })?;
        if let Some(bad) = parsed.params().find(|p| !allowed.contains(p)) {
            let known = if allowed.is_empty() {
                "none".to_string()
            } else {
                allowed
                    .iter()
                    .map(|a| format!("{{{a}}}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            return Err(ConfigError::at_key(
                path,
                text,
                &dotted,
                format!(
                    "[policy_change] {key}: `{{{bad}}}` is not one of its placeholders ({known})"
                ),
            ));
        }
    }
    Ok(())
}

/// Zero counts and timeouts would make the gate useless or silently permissive: refuse them.
fn check_numbers(path: &Path, text: &str, file: &ConfigFile) -> Result<(), ConfigError> {
    let (timeouts, queue, audit) = (&file.timeouts, &file.queue, &file.audit);
    let mut counts: Vec<(String, u64)> = [
        (
            "policy_change.max_lines",
            file.policy_change.max_lines.into(),
        ),
        ("timeouts.voice_seconds", timeouts.voice_seconds.into()),
        ("timeouts.visual_seconds", timeouts.visual_seconds.into()),
        ("timeouts.haptic_seconds", timeouts.haptic_seconds.into()),
        ("timeouts.parent_seconds", timeouts.parent_seconds.into()),
        ("queue.max_pending", queue.max_pending as u64),
        ("queue.per_client", queue.per_client as u64),
        ("queue.disconnect_after", queue.disconnect_after.into()),
        (
            "queue.disconnect_window_seconds",
            queue.disconnect_window_seconds.into(),
        ),
        ("queue.intents_per_round", queue.intents_per_round.into()),
        ("tokens.expiry_seconds", file.tokens.expiry_seconds.into()),
        (
            "audit.group_commit_records",
            audit.group_commit_records as u64,
        ),
        (
            "audit.params_excerpt_bytes",
            audit.params_excerpt_bytes as u64,
        ),
        (
            "audit.writer_queue_batches",
            audit.writer_queue_batches as u64,
        ),
    ]
    .map(|(key, value)| (key.to_string(), value))
    .into();
    for (level, rules) in [
        ("moderate", &file.friction.moderate),
        ("permissive", &file.friction.permissive),
    ] {
        for (key, value) in [
            ("implicit_after", rules.implicit_after),
            ("voice_drops_after", rules.voice_drops_after),
            ("reconfirm_every", rules.reconfirm_every),
        ] {
            counts.push((format!("friction.{level}.{key}"), value.into()));
        }
    }
    for (dotted, value) in counts {
        if value == 0 {
            let section = dotted.split('.').next().unwrap_or_default();
            let key = dotted.rsplit('.').next().unwrap_or_default();
            return Err(ConfigError::at_key(
                path,
                text,
                &dotted,
                format!("[{section}] {key} must be at least 1"),
            ));
        }
    }
    if file.session.profile.trim().is_empty() {
        return Err(ConfigError::at_key(
            path,
            text,
            "session.profile",
            "[session] profile must not be empty",
        ));
    }
    Ok(())
}
