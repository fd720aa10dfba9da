//! The policy-change prompt end to end: a same-user process that edits the config file to lower
//! protection (`file.delete` redeclared as a read) gets a system prompt listing the change, not a
//! quieter gate. Until the user approves it the old policy decides; a denial or a timeout keeps
//! it (and the audit log says so); a raise applies at once; a lowering made while the compositor
//! was down is asked about at the next start the same way. Clients are real protocol clients on
//! the compositor's socket; the prompt is answered with the seat's injected pointer.

mod harness;

use std::os::unix::fs::PermissionsExt;

use pcp_gate::{POLICY_CAPABILITY, Resolution, Threshold};
use pcp_overlay::Control;
use serde_json::json;

use harness::{Fixture, assets, intent};

const ONE: &[&str] = &["1280x800@0,0"];

/// The policy under test: no manifest folder, two capabilities declared in the config itself.
fn policy(delete_effects: &str, note_effects: &str) -> impl FnOnce(String) -> String {
    let delete_effects = delete_effects.to_string();
    let note_effects = note_effects.to_string();
    move |text: String| {
        let shipped = format!("dirs = [{:?}]", assets().join("capabilities.d"));
        assert!(text.contains(&shipped));
        text.replace(&shipped, "dirs = []") + &capabilities(&delete_effects, &note_effects)
    }
}

fn capabilities(delete_effects: &str, note_effects: &str) -> String {
    format!(
        "[[capability]]\nname = \"file.delete\"\nversion = 1\nside_effects = \"{delete_effects}\"\n\
         auth_level = \"user\"\ndescription = \"Delete {{path}}\"\ntarget = \"{{path}}\"\n\
         salient = [\"path\"]\nparams = [\"path\"]\n\n\
         [[capability]]\nname = \"note.save\"\nversion = 1\nside_effects = \"{note_effects}\"\n\
         auth_level = \"user\"\ndescription = \"Save the note {{name}}\"\nparams = [\"name\"]\n"
    )
}

/// What a same-user process does to the config file: rewrites it in place, as an editor or a
/// script would (its mode stays 0600, so the file is still trusted).
fn rewrite_config(fx: &Fixture, delete_effects: &str, note_effects: &str) {
    let text = policy(delete_effects, note_effects)(base_text(fx));
    std::fs::write(fx.config_path(), text).unwrap();
}

/// The harness config the fixture started from, before the test's capabilities.
fn base_text(fx: &Fixture) -> String {
    let text = fx.config_text();
    let cut = text.find("[[capability]]").unwrap();
    text[..cut].replace(
        "dirs = []",
        &format!("dirs = [{:?}]", assets().join("capabilities.d")),
    )
}

fn delete() -> pcp_protocol::client::Submission {
    intent("file.delete", json!({"path": "/home/u"}))
}

/// The policy-change prompt is the one shown, lists `file.delete`'s lowering, and asks for
/// voice + visual.
fn assert_policy_prompt_shown(fx: &mut Fixture) {
    assert!(fx.dialog_open(), "the policy change is asked about");
    let prompt = fx.gate().active().expect("a prompt is shown").clone();
    assert_eq!(prompt.intent.capability, POLICY_CAPABILITY);
    assert_eq!(prompt.threshold, Threshold::VoiceVisual);
    let change = prompt
        .steps
        .iter()
        .find(|s| s.contains("capability file.delete"))
        .unwrap_or_else(|| panic!("the change is listed: {:?}", prompt.steps));
    assert!(
        change.starts_with("Less protection")
            && change.contains("voice+visual")
            && change.contains("read"),
        "{change}"
    );
    assert!(fx.gate().pending_policy().is_some());
}

/// The policy-change audit records so far (flushed first).
fn policy_records(fx: &mut Fixture) -> Vec<pcp_gate::AuditRecord> {
    fx.pcp_mut().flush().unwrap();
    fx.gate()
        .store()
        .audit_since(0)
        .unwrap()
        .into_iter()
        .filter(|r| r.capability == POLICY_CAPABILITY)
        .collect()
}

/// `file.delete` asked now needs voice + visual; the user denies it on the dialog.
fn assert_delete_still_needs_voice_and_visual(fx: &mut Fixture) {
    let c = fx.submit(delete());
    let (threshold, _) = fx.pending(&c);
    assert_eq!(threshold, "voice+visual", "the old policy decides");
    fx.pump_until("its dialog", |fx| {
        fx.gate()
            .active()
            .is_some_and(|p| p.intent.capability == "file.delete")
    });
    fx.advance_clock(1000);
    fx.click(Control::Deny);
    assert_eq!(fx.decision(&c).resolution, "user_denied");
}

#[test]
fn a_lowering_written_to_the_config_waits_for_the_users_approval() {
    let mut fx = Fixture::with_edited_config(ONE, None, policy("destructive", "write"));
    assert!(!fx.dialog_open(), "a first start records its policy");

    rewrite_config(&fx, "read", "write");
    fx.reload_config();
    assert_policy_prompt_shown(&mut fx);
    let png = fx.save_png(0, "policy-change-prompt");
    eprintln!("policy prompt: {}", png.display());

    // While the prompt waits the old policy decides: file.delete still needs voice + visual.
    let c = fx.submit(delete());
    let (threshold, modalities) = fx.pending(&c);
    assert_eq!(threshold, "voice+visual");
    assert!(!modalities.is_empty());

    // Approving the policy change (system risk, voice unavailable: press-and-hold).
    fx.advance_clock(1000);
    fx.hold(Control::Approve, 1000);
    fx.pump_until("the policy to apply", |fx| {
        fx.gate().pending_policy().is_none()
    });
    // The delete asked before the approval keeps its plan: the user denies it.
    fx.pump_until("the delete's dialog", |fx| {
        fx.gate()
            .active()
            .is_some_and(|p| p.intent.capability == "file.delete")
    });
    fx.advance_clock(1000);
    fx.click(Control::Deny);
    assert_eq!(fx.decision(&c).resolution, "user_denied");

    // From now on the approved policy decides.
    let c = fx.submit(delete());
    let d = fx.decision(&c);
    assert!(d.approved, "{d:?}");
    assert_eq!(d.resolution, "policy_allow");
    let records = policy_records(&mut fx);
    let last = records.last().unwrap();
    assert_eq!(last.resolution, Resolution::UserApproved, "{last:?}");
    assert!(
        last.notes
            .iter()
            .any(|n| n.contains("the new policy applies")),
        "{last:?}"
    );
}

#[test]
fn a_denied_lowering_keeps_the_policy_in_force_and_the_audit_log_says_so() {
    let mut fx = Fixture::with_edited_config(ONE, None, policy("destructive", "write"));
    rewrite_config(&fx, "read", "write");
    fx.reload_config();
    assert_policy_prompt_shown(&mut fx);
    fx.advance_clock(1000);
    fx.click(Control::Deny);
    fx.pump_until("the policy prompt to end", |fx| !fx.dialog_open());
    assert!(fx.gate().pending_policy().is_none());
    let notice = fx.notice_text().expect("a notice says it was not applied");
    assert!(notice.contains("not approved"), "{notice}");

    assert_delete_still_needs_voice_and_visual(&mut fx);
    let records = policy_records(&mut fx);
    let last = records.last().unwrap();
    assert_eq!(last.resolution, Resolution::UserDenied, "{last:?}");
    assert!(
        last.notes
            .iter()
            .any(|n| n.contains("the policy in force stays")),
        "{last:?}"
    );
}

#[test]
fn a_lowering_nobody_answers_times_out_and_changes_nothing() {
    let mut fx = Fixture::with_edited_config(ONE, None, policy("destructive", "write"));
    rewrite_config(&fx, "read", "write");
    fx.reload_config();
    assert_policy_prompt_shown(&mut fx);
    // `[timeouts] visual_seconds` (30 s) passes with no answer.
    fx.advance_clock(31_000);
    fx.pump_until("the policy prompt to time out", |fx| !fx.dialog_open());
    assert!(fx.gate().pending_policy().is_none());

    assert_delete_still_needs_voice_and_visual(&mut fx);
    let records = policy_records(&mut fx);
    let last = records.last().unwrap();
    assert_eq!(last.resolution, Resolution::ConfirmationTimeout, "{last:?}");
    assert!(
        last.notes
            .iter()
            .any(|n| n.contains("the policy in force stays")),
        "{last:?}"
    );
}

#[test]
fn a_raise_applies_at_once_without_a_prompt() {
    let mut fx = Fixture::with_edited_config(ONE, None, policy("destructive", "write"));
    let c = fx.submit(intent("note.save", json!({"name": "a"})));
    assert_eq!(fx.decision(&c).resolution, "policy_allow");

    rewrite_config(&fx, "destructive", "destructive");
    fx.reload_config();
    assert!(!fx.dialog_open(), "a raise is not asked about");
    assert!(fx.gate().pending_policy().is_none());
    let c = fx.submit(intent("note.save", json!({"name": "b"})));
    let (threshold, _) = fx.pending(&c);
    assert_eq!(threshold, "voice+visual", "the raise is in force");
    fx.advance_clock(1000);
    fx.click(Control::Deny);
    assert_eq!(fx.decision(&c).resolution, "user_denied");
}

#[test]
fn a_lowering_made_while_the_compositor_was_down_is_asked_about_at_the_next_start() {
    let state_dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(state_dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let state = state_dir.path().join("state.sqlite3");
    {
        let mut fx = Fixture::with_edited_config(ONE, Some(&state), policy("destructive", "write"));
        assert!(!fx.dialog_open());
        fx.pcp_mut().flush().unwrap();
    }
    // The compositor is down; the file is edited; it starts again.
    let mut fx = Fixture::with_edited_config(ONE, Some(&state), policy("read", "write"));
    assert_policy_prompt_shown(&mut fx);
    let c = fx.submit(delete());
    let (threshold, _) = fx.pending(&c);
    assert_eq!(
        threshold, "voice+visual",
        "the approved policy decides until then"
    );
    fx.advance_clock(1000);
    fx.hold(Control::Approve, 1000);
    fx.pump_until("the policy to apply", |fx| {
        fx.gate().pending_policy().is_none()
    });
    fx.pump_until("the delete's dialog", |fx| {
        fx.gate()
            .active()
            .is_some_and(|p| p.intent.capability == "file.delete")
    });
    fx.advance_clock(1000);
    fx.click(Control::Deny);
    assert_eq!(fx.decision(&c).resolution, "user_denied");
    let c = fx.submit(delete());
    assert_eq!(fx.decision(&c).resolution, "policy_allow");

    // Approved, it is the policy in force at the next start: nothing is asked.
    drop(fx);
    let mut fx = Fixture::with_edited_config(ONE, Some(&state), policy("read", "write"));
    assert!(!fx.dialog_open());
    let c = fx.submit(delete());
    assert_eq!(fx.decision(&c).resolution, "policy_allow");
}

#[test]
fn a_long_policy_change_fits_a_small_dialog_with_its_lowering_first() {
    let mut fx = Fixture::new(&["800x480@0,0"]);
    // The shipped folder is dropped (every capability in it removed: raises) and file.delete is
    // declared in the file as a read (the one lowering).
    let text = policy("read", "write")(fx.config_text().to_string());
    std::fs::write(fx.config_path(), text).unwrap();
    fx.reload_config();
    assert_policy_prompt_shown(&mut fx);
    let prompt = fx.gate().active().unwrap().clone();
    assert!(prompt.steps.len() <= 10, "{:?}", prompt.steps);
    assert!(
        prompt.steps[0].starts_with("Less protection: capability file.delete"),
        "{:?}",
        prompt.steps
    );
    assert!(
        prompt.steps.last().unwrap().contains("more changes"),
        "{:?}",
        prompt.steps
    );
    let png = fx.save_png(0, "policy-change-prompt-long-800x480");
    eprintln!("long policy prompt: {}", png.display());
}

#[test]
fn a_shorter_click_guard_waits_for_approval_like_any_lowering() {
    let mut fx = Fixture::new(ONE);
    let short_guard = fx.config_text().replace(
        "system_fonts = false\n",
        "system_fonts = false\nguard_delay_ms = 100\n",
    );
    assert_ne!(short_guard, fx.config_text());
    let settings = || intent("settings.change", json!({"key": "a", "value": "b"}));

    std::fs::write(fx.config_path(), &short_guard).unwrap();
    fx.reload_config();
    assert!(fx.dialog_open(), "a shorter guard is asked about");
    let steps = fx.gate().active().unwrap().steps.clone();
    assert!(
        steps
            .iter()
            .any(|s| s == "Less protection: overlay.guard_delay_ms: 750 → 100"),
        "{steps:?}"
    );
    fx.advance_clock(1000);
    fx.click(Control::Deny);
    fx.pump_until("the policy prompt to end", |fx| !fx.dialog_open());

    // Denied: the 750 ms guard is still in force, so a click 300 ms in does nothing.
    let c = fx.submit(settings());
    fx.pending(&c);
    fx.advance_clock(300);
    fx.click(Control::Approve);
    assert!(fx.dialog_open(), "the old guard ignores an early click");
    fx.advance_clock(2000);
    fx.click(Control::Approve);
    assert!(fx.decision(&c).approved);

    // Approved: the 100 ms guard applies.
    std::fs::write(fx.config_path(), &short_guard).unwrap();
    fx.reload_config();
    assert!(fx.dialog_open());
    fx.advance_clock(1000);
    fx.hold(Control::Approve, 1000);
    fx.pump_until("the policy to apply", |fx| !fx.dialog_open());
    let c = fx.submit(settings());
    fx.pending(&c);
    fx.advance_clock(300);
    fx.click(Control::Approve);
    assert!(fx.decision(&c).approved, "the approved guard is in force");
}
