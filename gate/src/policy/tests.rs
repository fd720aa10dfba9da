//! The policy comparison's directions, one change at a time, and the prompt's lines.

use std::path::Path;

use super::*;
use crate::lowering::capability_lowerings;
use crate::sources::LoadOptions;

const CAPS: &str = "
[[capability]]
name = \"file.delete\"
version = 1
side_effects = \"destructive\"
auth_level = \"user\"
description = \"Delete {path}\"
salient = [\"path\"]

[[capability]]
name = \"file.write\"
version = 1
side_effects = \"write\"
auth_level = \"user\"
description = \"Write {path}\"
";

fn config(text: &str) -> GateConfig {
    let options = LoadOptions {
        system_dirs: Vec::new(),
        ..LoadOptions::default()
    };
    let text = format!("[manifests]\ndirs = []\n{text}");
    GateConfig::from_str_with(Path::new("/nonexistent/config.toml"), &text, &options).unwrap()
}

fn changes(old: &str, new: &str) -> Vec<(String, Direction)> {
    changes_with(old, new, &[])
}

fn changes_with(old: &str, new: &str, rules: &[KeyRule]) -> Vec<(String, Direction)> {
    let (a, b) = (config(old), config(new));
    compare(
        PolicyView {
            config: &a,
            facts: &[],
        },
        PolicyView {
            config: &b,
            facts: &[],
        },
        rules,
    )
    .into_iter()
    .map(|c| (c.subject, c.direction))
    .collect()
}

fn one(subject: &str, direction: Direction) -> Vec<(String, Direction)> {
    vec![(subject.to_string(), direction)]
}

#[test]
fn the_same_policy_has_no_changes() {
    assert!(changes(CAPS, CAPS).is_empty());
    // Spelling a default out changes nothing either.
    assert!(changes(CAPS, &format!("[timeouts]\nvoice_seconds = 10\n{CAPS}")).is_empty());
}

#[test]
fn the_safety_level_is_ordered() {
    let level = |l: &str| format!("[safety]\nlevel = \"{l}\"\n");
    use Direction::*;
    assert_eq!(
        changes(&level("moderate"), &level("permissive")),
        one("[safety] level", Lowers)
    );
    assert_eq!(
        changes(&level("moderate"), &level("strict")),
        one("[safety] level", Raises)
    );
}

#[test]
fn longer_timeouts_lower_protection_and_shorter_ones_raise_it() {
    let t = |s: u32| format!("[timeouts]\nvisual_seconds = {s}\n");
    assert_eq!(
        changes(&t(30), &t(120)),
        one("[timeouts] visual_seconds", Direction::Lowers)
    );
    assert_eq!(
        changes(&t(30), &t(20)),
        one("[timeouts] visual_seconds", Direction::Raises)
    );
}

#[test]
fn friction_counts_are_ordered_each_their_own_way() {
    let base = "[friction.moderate]\nvoice_drops_after = 3\nimplicit_after = 3\nreconfirm_every = 10\nidle_reset_hours = 24\n";
    let with = |from: &str, to: &str| base.replace(from, to);
    use Direction::*;
    for (from, to, subject, direction) in [
        (
            "implicit_after = 3",
            "implicit_after = 1",
            "implicit_after",
            Lowers,
        ),
        (
            "implicit_after = 3",
            "implicit_after = 5",
            "implicit_after",
            Raises,
        ),
        (
            "voice_drops_after = 3",
            "voice_drops_after = 1",
            "voice_drops_after",
            Lowers,
        ),
        (
            "reconfirm_every = 10",
            "reconfirm_every = 50",
            "reconfirm_every",
            Lowers,
        ),
        (
            "idle_reset_hours = 24",
            "idle_reset_hours = 1",
            "idle_reset_hours",
            Raises,
        ),
    ] {
        assert_eq!(
            changes(base, &with(from, to)),
            one(&format!("[friction.moderate] {subject}"), direction),
            "{from} → {to}"
        );
    }
}

#[test]
fn capability_thresholds_floors_and_additions() {
    use Direction::*;
    let lowered = CAPS.replacen("\"destructive\"", "\"read\"", 1);
    assert_eq!(
        changes(CAPS, &lowered),
        one("capability file.delete", Lowers)
    );
    assert_eq!(
        changes(&lowered, CAPS),
        one("capability file.delete", Raises)
    );
    // System → destructive keeps voice+visual but lets friction drop the voice step.
    let system = CAPS.replacen("\"destructive\"", "\"system\"", 1);
    assert_eq!(
        changes(&system, CAPS),
        one("capability file.delete", Lowers)
    );
    // Another side effect with the same thresholds and floors is not known to raise.
    let network = CAPS.replacen("\"write\"", "\"network\"", 1);
    assert_eq!(
        changes(CAPS, &network),
        one("capability file.write", Lowers)
    );
    let extra = format!(
        "{CAPS}\n[[capability]]\nname = \"disk.wipe\"\nversion = 1\nside_effects = \"system\"\nauth_level = \"user\"\ndescription = \"Wipe\"\n"
    );
    assert_eq!(changes(CAPS, &extra), one("capability disk.wipe", Lowers));
    assert_eq!(changes(&extra, CAPS), one("capability disk.wipe", Raises));
}

#[test]
fn capability_wording_salient_haptic_and_version() {
    use Direction::*;
    let reworded = CAPS.replace("Delete {path}", "Tidy up {path}");
    assert_eq!(
        changes(CAPS, &reworded),
        one("capability file.delete description", Lowers)
    );
    let all_params = CAPS.replace("salient = [\"path\"]\n", "");
    assert_eq!(
        changes(CAPS, &all_params),
        one("capability file.delete salient", Raises)
    );
    assert_eq!(
        changes(&all_params, CAPS),
        one("capability file.delete salient", Lowers)
    );
    let haptic = CAPS.replace(
        "description = \"Write {path}\"",
        "description = \"Write {path}\"\nhaptic = true",
    );
    assert_eq!(
        changes(CAPS, &haptic),
        one("capability file.write haptic", Lowers)
    );
    let bumped = CAPS.replacen("version = 1", "version = 2", 1);
    assert_eq!(
        changes(CAPS, &bumped),
        one("capability file.delete version", Raises)
    );
}

#[test]
fn declared_parameters_and_extra_params() {
    use Direction::*;
    let more = CAPS.replace(
        "salient = [\"path\"]\n",
        "salient = [\"path\"]\nparams = [\"path\", \"recursive\"]\n",
    );
    assert_eq!(
        changes(CAPS, &more),
        one("capability file.delete params", Lowers)
    );
    assert_eq!(
        changes(&more, CAPS),
        one("capability file.delete params", Raises)
    );
    let shown = CAPS.replace(
        "salient = [\"path\"]\n",
        "salient = [\"path\"]\nextra_params = \"show\"\n",
    );
    assert_eq!(
        changes(CAPS, &shown),
        one("capability file.delete extra_params", Lowers)
    );
    assert_eq!(
        changes(&shown, CAPS),
        one("capability file.delete extra_params", Raises)
    );
    let (a, b) = (config(CAPS), config(&shown));
    let lowerings = capability_lowerings(
        a.registry.get("file.delete").unwrap(),
        b.registry.get("file.delete").unwrap(),
    );
    assert_eq!(
        lowerings,
        ["clients could send parameters it does not declare"]
    );
    let audit = |v: &str| format!("[audit]\nfull_params = {v}\n{CAPS}");
    assert_eq!(
        changes(&audit("false"), &audit("true")),
        one("[audit] full_params", Raises)
    );
}

#[test]
fn deny_rules_raise_when_added_and_lower_when_removed() {
    use Direction::*;
    let rule = "[[rule]]\nname = \"no-wipe\"\ncapability = \"disk.*\"\ndecision = \"deny\"\nreason = \"never\"\n";
    let with = format!("{rule}{CAPS}");
    assert_eq!(changes(CAPS, &with), one("rule no-wipe", Raises));
    assert_eq!(changes(&with, CAPS), one("rule no-wipe", Lowers));
    let sessions = format!("[gate]\nsession_approvals = true\n{CAPS}");
    assert_eq!(
        changes(CAPS, &sessions),
        one("[gate] session_approvals", Lowers)
    );
}

#[test]
fn folders_state_and_profile() {
    use Direction::*;
    let dirs = |d: &str| format!("[manifests]\ndirs = [{d}]\n");
    // `config` prepends its own `[manifests]`; compare the raw configs instead.
    let options = LoadOptions {
        system_dirs: Vec::new(),
        ..LoadOptions::default()
    };
    let load = |t: &str| {
        GateConfig::from_str_with(Path::new("/nonexistent/config.toml"), t, &options).unwrap()
    };
    let (a, b) = (
        load(&dirs("\"/nonexistent/a\"")),
        load(&dirs("\"/nonexistent/a\", \"/nonexistent/b\"")),
    );
    let view = |c| PolicyView {
        config: c,
        facts: &[],
    };
    let added = compare(view(&a), view(&b), &[]);
    assert_eq!(added.len(), 1);
    assert_eq!(added[0].subject, "[manifests] dirs");
    assert_eq!(added[0].new.as_deref(), Some("/nonexistent/b"));
    assert_eq!(added[0].direction, Lowers);
    let removed = compare(view(&b), view(&a), &[]);
    assert_eq!(removed[0].direction, Raises);
    let reordered = load(&dirs("\"/nonexistent/b\", \"/nonexistent/a\""));
    assert_eq!(
        compare(view(&b), view(&reordered), &[])[0].direction,
        Lowers
    );
    assert_eq!(
        changes("", "[state]\npath = \"/elsewhere/state.sqlite3\"\n"),
        one("[state] path", Lowers)
    );
    assert_eq!(
        changes("", "[session]\nprofile = \"other\"\n"),
        one("[session] profile", Lowers)
    );
    assert_eq!(
        changes("", "[audit]\nredact_params = true\n"),
        one("[audit] redact_params", Lowers)
    );
}

#[test]
fn host_sections_are_compared_through_their_facts_only() {
    use Direction::*;
    let gate = config("");
    let compare_facts = |old: &[ProtectionFact], new: &[ProtectionFact]| {
        let view = |facts| PolicyView {
            config: &gate,
            facts,
        };
        let found = compare(view(old), view(new), &[]);
        found
            .into_iter()
            .map(|c| (c.subject, c.direction))
            .collect::<Vec<_>>()
    };
    let guard = |ms: i64| {
        [ProtectionFact::new(
            "overlay.guard_delay_ms",
            &ms.to_string(),
            ms,
        )]
    };
    assert_eq!(
        compare_facts(&guard(750), &guard(1000)),
        [("overlay.guard_delay_ms".to_string(), Raises)]
    );
    assert_eq!(
        compare_facts(&guard(750), &guard(0)),
        [("overlay.guard_delay_ms".to_string(), Lowers)]
    );
    // A key new to the host has nothing to be compared with: asked about.
    let new = compare_facts(&[], &guard(1000));
    assert_eq!(new, [("overlay.guard_delay_ms".to_string(), Lowers)]);
    let colour = |c: &str| [ProtectionFact::unrelated("compositor.background", c)];
    let found = compare_facts(&colour("#000000"), &colour("#202020"));
    assert_eq!(found, [("compositor.background".to_string(), Neutral)]);
    assert!(!lowers(&[PolicyChange {
        subject: "x".into(),
        old: None,
        new: None,
        direction: Neutral
    }]));
    // The gate alone reads no host section: whoever embeds it declares them.
    let options = LoadOptions {
        system_dirs: Vec::new(),
        ..LoadOptions::default()
    };
    let text = "[manifests]\ndirs = []\n[overlay]\nguard_delay_ms = 1\n";
    let path = Path::new("/nonexistent/config.toml");
    let e = GateConfig::from_str_with(path, text, &options).unwrap_err();
    assert!(e.to_string().contains("unknown section `overlay`"), "{e}");
}

#[test]
fn facts_are_ordered_by_rank_and_replace_their_keys() {
    let a = config("");
    let b = config("");
    let on = [ProtectionFact::new("speech.enabled", "on", 1)];
    let off = [ProtectionFact::new("speech.enabled", "off", 0)];
    let found = compare(
        PolicyView {
            config: &a,
            facts: &on,
        },
        PolicyView {
            config: &b,
            facts: &off,
        },
        &[],
    );
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].subject, "speech.enabled");
    assert_eq!(found[0].direction, Direction::Lowers);
    let back = compare(
        PolicyView {
            config: &b,
            facts: &off,
        },
        PolicyView {
            config: &a,
            facts: &on,
        },
        &[],
    );
    assert_eq!(back[0].direction, Direction::Raises);
}

#[test]
fn lines_follow_the_configured_wording() {
    let wording = PolicyChangeConfig {
        lowers: "weniger Schutz".into(),
        changed: "{direction} — {subject}: {old} ⇒ {new}".into(),
        ..PolicyChangeConfig::default()
    };
    let change = PolicyChange {
        subject: "[timeouts] voice_seconds".into(),
        old: Some("10".into()),
        new: Some("60".into()),
        direction: Direction::Lowers,
    };
    assert_eq!(
        change.line(&wording),
        "weniger Schutz — [timeouts] voice_seconds: 10 ⇒ 60"
    );
    let added = PolicyChange {
        old: None,
        ..change
    };
    assert_eq!(
        added.line(&PolicyChangeConfig::default()),
        "Less protection: [timeouts] voice_seconds: new, 60"
    );
}

#[test]
fn rule_patterns_match_whole_segments() {
    let rule = KeyRule::new("friction.*.implicit_after", Order::LargerRaises);
    assert!(rule.matches("friction.moderate.implicit_after"));
    assert!(!rule.matches("friction.implicit_after"));
    assert!(!rule.matches("friction.moderate.implicit_after.x"));
    assert!(KeyRule::new("timeouts.*", Order::LargerLowers).matches("timeouts.voice_seconds"));
}

#[test]
fn the_prompt_lists_lowerings_first_and_counts_what_does_not_fit() {
    let change = |subject: &str, direction| PolicyChange {
        subject: subject.to_string(),
        old: Some("a".into()),
        new: Some("b".into()),
        direction,
    };
    let mut changes: Vec<PolicyChange> = (0..5)
        .map(|i| change(&format!("raise {i}"), Direction::Raises))
        .collect();
    changes.push(change("the lowering", Direction::Lowers));
    changes.push(change("another lowering", Direction::Lowers));
    let mut wording = PolicyChangeConfig::default();
    let all = prompt_lines(&changes, &wording);
    assert_eq!(all.len(), 7);
    assert!(
        all[0].starts_with("Less protection: the lowering"),
        "{all:?}"
    );
    assert!(all[1].starts_with("Less protection: another lowering"));
    assert!(all[2..].iter().all(|l| l.starts_with("More protection")));

    wording.max_lines = 3;
    let capped = prompt_lines(&changes, &wording);
    assert_eq!(capped.len(), 3, "{capped:?}");
    assert!(capped[1].contains("another lowering"));
    assert_eq!(
        capped[2],
        "…and 5 more changes (0 of them less protection), all in the audit log"
    );
    wording.max_lines = 1;
    let capped = prompt_lines(&changes, &wording);
    assert_eq!(
        capped,
        ["…and 7 more changes (2 of them less protection), all in the audit log"]
    );
}

#[test]
fn secrets_added_raise_and_secrets_dropped_or_exempted_lower() {
    use Direction::*;
    let with = |body: &str| format!("[shell_risk]\n{body}\n");
    assert_eq!(
        changes("", &with("secrets = [\"~/vault\"]")),
        one("[shell_risk] secrets", Raises)
    );
    assert_eq!(
        changes(&with("secrets = [\"~/vault\"]"), ""),
        one("[shell_risk] secrets", Lowers)
    );
    assert_eq!(
        changes("", &with("secret_env = [\"MY_*\"]")),
        one("[shell_risk] secret_env", Raises)
    );
    assert_eq!(
        changes("", &with("not_secrets = [\"*.pem\"]")),
        one("[shell_risk] not_secrets", Lowers)
    );
    assert_eq!(
        changes("", &with("builtin_secrets = false")),
        one("[shell_risk] builtin_secrets", Lowers)
    );
    assert_eq!(
        changes(&with("builtin_secrets = false"), ""),
        one("[shell_risk] builtin_secrets", Raises)
    );
}
