//! A changed policy, at a reload or at a start: a lowering becomes a system prompt that lists each
//! change and applies only when approved; a raise applies at once; the approved policy is kept in
//! the state store so a lowering made while the compositor was not running is asked about too.

mod support;

use std::path::{Path, PathBuf};

use pcp_gate::config::LoadOptions;
use pcp_gate::{
    Answer, Availability, Decision, Direction, Gate, GateConfig, IntentId, Modality, ModalityEvent,
    POLICY_CAPABILITY, ProtectionFact, Resolution, RiskClass, StartPolicy, Threshold,
};
use serde_json::json;
use support::intent;

const S: i64 = 1000;

/// A policy in a folder of its own: `config.toml`, a copy of the shipped manifests in `caps/`,
/// an empty `system/` folder standing in for `/usr/share/pcp/capabilities.d`, and the state.
struct Policy {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Policy {
    fn new(extra: &str) -> Policy {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        let caps = root.join("caps");
        std::fs::create_dir(&caps).unwrap();
        std::fs::create_dir(root.join("system")).unwrap();
        for entry in std::fs::read_dir(support::assets().join("capabilities.d")).unwrap() {
            let path = entry.unwrap().path();
            std::fs::copy(&path, caps.join(path.file_name().unwrap())).unwrap();
        }
        let policy = Policy { _dir: dir, root };
        policy.write_config(extra);
        policy
    }

    fn config_path(&self) -> PathBuf {
        self.root.join("config.toml")
    }

    fn write_config(&self, extra: &str) {
        let text = format!(
            "[manifests]\ndirs = [\"caps\"]\n[state]\npath = {:?}\n{extra}",
            self.root.join("state.sqlite3")
        );
        std::fs::write(self.config_path(), text).unwrap();
    }

    /// Rewrites one capability's `side_effects` and `auth_level` in the copied manifests.
    fn redeclare(&self, name: &str, side_effects: &str, auth_level: &str) {
        let path = self.root.join("caps/50-desktop.toml");
        let text = std::fs::read_to_string(&path).unwrap();
        let start = text.find(&format!("name = \"{name}\"")).unwrap();
        let end = text[start..].find("description").unwrap() + start;
        let block = &text[start..end];
        let mut new_block = String::new();
        for line in block.lines() {
            if line.starts_with("side_effects") {
                new_block.push_str(&format!("side_effects = \"{side_effects}\"\n"));
            } else if line.starts_with("auth_level") {
                new_block.push_str(&format!("auth_level = \"{auth_level}\"\n"));
            } else {
                new_block.push_str(line);
                new_block.push('\n');
            }
        }
        std::fs::write(
            &path,
            format!("{}{new_block}{}", &text[..start], &text[end..]),
        )
        .unwrap();
    }

    fn options(&self) -> LoadOptions {
        LoadOptions {
            system_dirs: vec![self.root.join("system")],
            ..LoadOptions::default()
        }
    }

    fn load(&self) -> GateConfig {
        GateConfig::load_with(&self.config_path(), &self.options()).unwrap()
    }

    /// Starts a gate on the files as they are; a changed policy is proposed once the gate knows
    /// what can answer (`None`: the files' policy is in force).
    fn start(&self, now: i64) -> (Gate, Option<Decision>) {
        start_with(self.load(), Vec::new(), now)
    }
}

fn start_with(
    config: GateConfig,
    facts: Vec<ProtectionFact>,
    now: i64,
) -> (Gate, Option<Decision>) {
    let (mut gate, found) = Gate::start(config, facts, Vec::new(), now).unwrap();
    gate.set_available(everything());
    let decision = match found {
        StartPolicy::InForce => None,
        StartPolicy::Changed(config, facts) => Some(gate.propose_policy(*config, facts, now)),
    };
    (gate, decision)
}

fn everything() -> Availability {
    Availability {
        output: true,
        input: true,
        voice: true,
        haptic: false,
    }
}

fn confirm(d: &Decision) -> IntentId {
    match d {
        Decision::Confirm { id, .. } => *id,
        other => panic!("expected a prompt, got {other:?}"),
    }
}

/// What `file.delete` needs now: its threshold and plan, the prompt then withdrawn.
fn file_delete_needs(gate: &mut Gate, now: i64) -> (Threshold, Vec<Modality>) {
    match gate.submit(intent("file.delete", json!({"path": "/home/u"})), now) {
        Decision::Confirm {
            id,
            threshold,
            plan,
        } => {
            gate.cancel(id, now);
            (threshold, plan.modalities)
        }
        other => panic!("file.delete was decided without asking: {other:?}"),
    }
}

fn approve(gate: &mut Gate, id: IntentId, now: i64) -> pcp_gate::Outcome {
    let plan = gate.prompt(id).unwrap().plan.modalities.clone();
    let mut last = None;
    for m in plan {
        last = gate
            .respond(id, ModalityEvent::Answer(m, Answer::Approve), now)
            .unwrap();
    }
    last.unwrap()
}

fn last_policy_record(gate: &Gate) -> pcp_gate::AuditRecord {
    gate.store()
        .audit_since(0)
        .unwrap()
        .into_iter()
        .rev()
        .find(|r| r.capability == POLICY_CAPABILITY)
        .expect("the policy change is audited")
}

#[test]
fn lowering_file_delete_is_a_system_prompt_and_applies_only_when_approved() {
    let policy = Policy::new("");
    let (mut gate, first) = policy.start(S);
    assert!(
        first.is_none(),
        "a first start records what it loads: {first:?}"
    );
    assert!(gate.store().approved_policy().unwrap().is_some());

    // A program of the user rewrites the manifest: file.delete becomes a read.
    policy.redeclare("file.delete", "read", "user");
    let decision = gate.propose_policy(policy.load(), Vec::new(), 2 * S);
    let id = confirm(&decision);
    let prompt = gate.prompt(id).unwrap();
    assert_eq!(prompt.risk, RiskClass::System);
    assert_eq!(prompt.threshold, Threshold::VoiceVisual);
    assert_eq!(prompt.plan.modalities, [Modality::Voice, Modality::Visual]);
    assert_eq!(prompt.capability.name, POLICY_CAPABILITY);
    assert_eq!(prompt.steps.len(), 1, "{:?}", prompt.steps);
    assert_eq!(
        prompt.steps[0],
        "Less protection: capability file.delete: destructive, user: voice+visual → read, user: none"
    );
    assert!(
        prompt
            .description
            .contains(&policy.config_path().display().to_string())
    );
    let changes = gate.pending_policy().unwrap().1;
    assert_eq!(changes[0].direction, Direction::Lowers);

    // Until it is approved, file.delete still needs voice and the overlay.
    assert_eq!(
        file_delete_needs(&mut gate, 3 * S),
        (
            Threshold::VoiceVisual,
            vec![Modality::Voice, Modality::Visual]
        )
    );

    let outcome = approve(&mut gate, id, 4 * S);
    assert!(outcome.approved);
    assert_eq!(outcome.resolution, Resolution::UserApproved);
    assert!(gate.pending_policy().is_none());
    let decided = gate.submit(intent("file.delete", json!({"path": "/home/u"})), 5 * S);
    match decided {
        Decision::Execute(o) => assert_eq!(o.resolution, Resolution::PolicyAllow),
        other => panic!("the approved policy did not apply: {other:?}"),
    }
    let record = last_policy_record(&gate);
    assert_eq!(record.resolution, Resolution::UserApproved);
    assert!(
        record
            .notes
            .iter()
            .any(|n| n.contains("the new policy applies")),
        "{:?}",
        record.notes
    );
    let changes = record.params.unwrap()["changes"].clone();
    assert_eq!(changes.as_array().unwrap().len(), 1);
}

#[test]
fn denying_the_policy_change_keeps_the_policy_in_force_and_says_so() {
    let policy = Policy::new("");
    let (mut gate, _) = policy.start(S);
    policy.redeclare("file.delete", "read", "user");
    let id = confirm(&gate.propose_policy(policy.load(), Vec::new(), 2 * S));
    let outcome = gate
        .respond(
            id,
            ModalityEvent::Answer(Modality::Visual, Answer::Deny),
            3 * S,
        )
        .unwrap()
        .unwrap();
    assert!(!outcome.approved);
    assert_eq!(
        file_delete_needs(&mut gate, 4 * S).0,
        Threshold::VoiceVisual
    );
    let record = last_policy_record(&gate);
    assert_eq!(record.resolution, Resolution::UserDenied);
    assert!(
        record
            .notes
            .iter()
            .any(|n| n.contains("the new policy is not applied: the policy in force stays")),
        "{:?}",
        record.notes
    );
    // The store still holds the policy approved before.
    let approved = gate.store().approved_policy().unwrap().unwrap();
    assert_eq!(approved.sources, gate.config().sources);
}

#[test]
fn a_policy_change_nobody_answers_times_out_and_keeps_the_policy_in_force() {
    let policy = Policy::new("");
    let (mut gate, _) = policy.start(S);
    policy.redeclare("file.delete", "read", "user");
    let id = confirm(&gate.propose_policy(policy.load(), Vec::new(), 2 * S));
    let outcomes = gate.tick(2 * S + 10 * S);
    assert_eq!(outcomes.len(), 1);
    assert_eq!(outcomes[0].id, id);
    assert_eq!(outcomes[0].resolution, Resolution::ConfirmationTimeout);
    assert_eq!(
        file_delete_needs(&mut gate, 20 * S).0,
        Threshold::VoiceVisual
    );
    let record = last_policy_record(&gate);
    assert_eq!(record.resolution, Resolution::ConfirmationTimeout);
    assert!(
        record
            .notes
            .iter()
            .any(|n| n.contains("the policy in force stays"))
    );
}

#[test]
fn a_raise_applies_at_once() {
    let policy = Policy::new("");
    let (mut gate, _) = policy.start(S);
    // file.write (write, user: none) becomes privileged (visual); the voice timeout shortens.
    policy.redeclare("file.write", "write", "privileged");
    policy.write_config("[timeouts]\nvoice_seconds = 8\n");
    let decision = gate.propose_policy(policy.load(), Vec::new(), 2 * S);
    let Decision::Execute(outcome) = decision else {
        panic!("a raise must not ask: {decision:?}");
    };
    assert_eq!(outcome.capability, POLICY_CAPABILITY);
    assert_eq!(gate.config().file.timeouts.voice_seconds, 8);
    match gate.submit(intent("file.write", json!({"path": "/tmp/x"})), 3 * S) {
        Decision::Confirm { threshold, .. } => assert_eq!(threshold, Threshold::Visual),
        other => panic!("file.write should now ask: {other:?}"),
    }
    let record = last_policy_record(&gate);
    assert_eq!(record.resolution, Resolution::PolicyAllow);
    let changes = record.params.unwrap()["changes"].clone();
    assert_eq!(changes.as_array().unwrap().len(), 2, "{changes}");
    // It is the approved policy now.
    let approved = gate.store().approved_policy().unwrap().unwrap();
    assert_eq!(approved.sources, gate.config().sources);
}

#[test]
fn a_mixed_change_waits_whole_and_nothing_is_weaker_meanwhile() {
    let policy = Policy::new("");
    let (mut gate, _) = policy.start(S);
    policy.redeclare("file.write", "write", "privileged");
    policy.redeclare("file.delete", "write", "user");
    let id = confirm(&gate.propose_policy(policy.load(), Vec::new(), 2 * S));
    let directions: Vec<Direction> = gate
        .pending_policy()
        .unwrap()
        .1
        .iter()
        .map(|c| c.direction)
        .collect();
    assert!(directions.contains(&Direction::Raises) && directions.contains(&Direction::Lowers));
    assert_eq!(
        file_delete_needs(&mut gate, 3 * S).0,
        Threshold::VoiceVisual
    );
    approve(&mut gate, id, 4 * S);
    match gate.submit(intent("file.write", json!({"path": "/tmp/x"})), 5 * S) {
        Decision::Confirm { threshold, .. } => assert_eq!(threshold, Threshold::Visual),
        other => panic!("the raise applies with the approval: {other:?}"),
    }
}

#[test]
fn start_up_with_a_lowered_policy_asks_before_it_applies() {
    let policy = Policy::new("");
    {
        let (_gate, first) = policy.start(S);
        assert!(first.is_none());
    }
    // Changed while the compositor was not running.
    policy.redeclare("file.delete", "read", "user");
    let (mut gate, decision) = policy.start(10 * S);
    let id = confirm(&decision.unwrap());
    assert_eq!(gate.prompt(id).unwrap().risk, RiskClass::System);
    assert_eq!(
        file_delete_needs(&mut gate, 11 * S).0,
        Threshold::VoiceVisual
    );
    approve(&mut gate, id, 12 * S);
    drop(gate);
    // Approved once: the next start applies it without asking.
    let (mut gate, decision) = policy.start(20 * S);
    assert!(decision.is_none(), "{decision:?}");
    assert!(matches!(
        gate.submit(intent("file.delete", json!({"path": "/home/u"})), 21 * S),
        Decision::Execute(_)
    ));
}

#[test]
fn a_start_up_change_that_is_denied_keeps_the_approved_policy_at_the_next_start_too() {
    let policy = Policy::new("");
    drop(policy.start(S));
    policy.redeclare("file.delete", "read", "user");
    let (mut gate, decision) = policy.start(10 * S);
    let id = confirm(&decision.unwrap());
    gate.respond(
        id,
        ModalityEvent::Answer(Modality::Voice, Answer::Deny),
        11 * S,
    )
    .unwrap();
    drop(gate);
    let (mut gate, decision) = policy.start(20 * S);
    confirm(&decision.unwrap());
    assert_eq!(
        file_delete_needs(&mut gate, 21 * S).0,
        Threshold::VoiceVisual
    );
}

#[test]
fn the_same_proposal_again_is_the_same_prompt_and_a_newer_one_replaces_it() {
    let policy = Policy::new("");
    let (mut gate, _) = policy.start(S);
    policy.redeclare("file.delete", "read", "user");
    let first = confirm(&gate.propose_policy(policy.load(), Vec::new(), 2 * S));
    let again = confirm(&gate.propose_policy(policy.load(), Vec::new(), 3 * S));
    assert_eq!(first, again);
    assert_eq!(gate.prompts().count(), 1);
    policy.redeclare("file.delete", "write", "user");
    let newer = confirm(&gate.propose_policy(policy.load(), Vec::new(), 4 * S));
    assert_ne!(newer, first);
    assert!(gate.prompt(first).is_none());
    assert_eq!(gate.prompts().count(), 1);
    assert_eq!(gate.pending_policy().unwrap().0, newer);
}

#[test]
fn without_an_output_the_policy_change_is_refused_and_the_policy_in_force_stays() {
    let policy = Policy::new("");
    let (mut gate, _) = policy.start(S);
    policy.redeclare("file.delete", "read", "user");
    gate.set_available(Availability {
        output: false,
        ..everything()
    });
    let decision = gate.propose_policy(policy.load(), Vec::new(), 2 * S);
    let Decision::Deny(outcome) = decision else {
        panic!("expected a refusal: {decision:?}");
    };
    assert_eq!(outcome.resolution, Resolution::ConfirmationUnavailable);
    gate.set_available(everything());
    assert_eq!(
        file_delete_needs(&mut gate, 3 * S).0,
        Threshold::VoiceVisual
    );
}

#[test]
fn a_new_policy_cannot_reword_its_own_prompt() {
    let policy = Policy::new("");
    let (mut gate, _) = policy.start(S);
    policy.write_config(
        "[policy_change]\ndescription = \"Nothing to see in {config}\"\nlowers = \"Fine\"\n",
    );
    policy.redeclare("file.delete", "read", "user");
    let id = confirm(&gate.propose_policy(policy.load(), Vec::new(), 2 * S));
    let prompt = gate.prompt(id).unwrap();
    assert!(
        prompt.description.starts_with("Apply a changed"),
        "{}",
        prompt.description
    );
    assert!(
        prompt
            .steps
            .iter()
            .all(|s| s.starts_with("Less protection"))
    );
    assert!(
        prompt
            .steps
            .iter()
            .any(|s| s.contains("[policy_change] description")),
        "the wording change is itself listed: {:?}",
        prompt.steps
    );
}

#[test]
fn host_facts_order_protection_voice_off_is_asked_about() {
    let policy = Policy::new("");
    let on = vec![ProtectionFact::new("speech.enabled", "on", 1)];
    let off = vec![ProtectionFact::new("speech.enabled", "off", 0)];
    let (mut gate, _) = start_with(policy.load(), on.clone(), S);
    let id = confirm(&gate.propose_policy(policy.load(), off, 2 * S));
    assert_eq!(
        gate.prompt(id).unwrap().steps,
        ["Less protection: speech.enabled: on → off"]
    );
    approve(&mut gate, id, 3 * S);
    assert!(matches!(
        gate.propose_policy(policy.load(), on, 4 * S),
        Decision::Execute(_)
    ));
}

#[test]
fn the_policy_prompt_is_never_answered_by_history() {
    let policy = Policy::new("");
    let (mut gate, _) = policy.start(S);
    for round in 0..6 {
        let at = (10 + 10 * round) * S;
        let lowered = if round % 2 == 0 {
            "read"
        } else {
            "destructive"
        };
        policy.redeclare("file.delete", lowered, "user");
        let decision = gate.propose_policy(policy.load(), Vec::new(), at);
        if lowered == "read" {
            let id = confirm(&decision);
            approve(&mut gate, id, at + S);
        } else {
            assert!(matches!(decision, Decision::Execute(_)), "a raise applies");
        }
    }
    // After three approvals of the very same lowering it is still a full system prompt.
    policy.redeclare("file.delete", "read", "user");
    let id = confirm(&gate.propose_policy(policy.load(), Vec::new(), 100 * S));
    assert_eq!(
        gate.prompt(id).unwrap().plan.modalities,
        [Modality::Voice, Modality::Visual]
    );
}

#[test]
fn a_policy_that_can_no_longer_be_built_denies_everything_until_approved() {
    let policy = Policy::new("");
    drop(policy.start(S));
    // Make the stored policy unparseable (as a newer format might be) through the store itself.
    break_stored_policy(&policy.root.join("state.sqlite3"));
    policy.redeclare("file.delete", "read", "user");
    let (mut gate, decision) = policy.start(10 * S);
    let id = confirm(&decision.unwrap());
    match gate.submit(intent("file.read", json!({"path": "/x"})), 11 * S) {
        Decision::Deny(o) => assert_eq!(o.resolution, Resolution::UnknownCapability),
        other => panic!("nothing may run under an unreadable policy: {other:?}"),
    }
    approve(&mut gate, id, 12 * S);
    assert!(matches!(
        gate.submit(intent("file.read", json!({"path": "/x"})), 13 * S),
        Decision::Execute(_)
    ));
}

/// Rewrites the stored policy's config text into something that no longer parses.
fn break_stored_policy(state: &Path) {
    let mut store = pcp_gate::store::Store::open(
        state,
        pcp_gate::store::GroupCommit {
            max_records: 1,
            max_age_ms: 0,
        },
    )
    .unwrap();
    let mut approved = store.approved_policy().unwrap().unwrap();
    approved.sources.config.text = "[safety]\nlevel = \"from a future version\"\n".into();
    store.set_approved_policy(&approved).unwrap();
}
