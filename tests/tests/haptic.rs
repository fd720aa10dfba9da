//! End-to-end haptic confirmation: the compositor plays the cue on a recording force-feedback
//! backend (put in through the harness; there is no force-feedback device here), takes a double
//! tap from its own touch events, and falls back to the visual dialog without a device or when
//! the device goes away mid-prompt.

mod harness;

use pcp_gate::Modality;
use pcp_haptics::{FfKind, Recorded, RecordingHaptics, Unavailable};
use pcp_overlay::{Control, HapticState};
use serde_json::json;

use harness::{Fixture, SharedHaptics as Shared, intent};

const ONE: &[&str] = &["1920x1080@0,0"];

fn fixture(backend: RecordingHaptics) -> (Fixture, Shared) {
    let shared = Shared::new(backend);
    let fx = Fixture::with_devices(ONE, "", None, Some(Box::new(shared.clone())));
    (fx, shared)
}

/// A privileged setting the manifest allows a double tap for.
fn setting() -> pcp_protocol::client::Submission {
    intent("settings.change", json!({"key": "dark", "value": "on"}))
}

/// What the dialog's haptic row shows.
fn haptic_shown(fx: &mut Fixture) -> Option<HapticState> {
    fx.dialog_live().map(|l| l.haptic)
}

/// One tap at (x, y): 50 ms down, then 150 ms before whatever comes next.
fn tap(fx: &mut Fixture, (x, y): (f64, f64)) {
    fx.inject_touch_down(x, y);
    fx.advance_clock(50);
    fx.inject_touch_up();
    fx.advance_clock(150);
}

#[test]
fn a_double_tap_after_the_cue_approves_and_the_cue_is_erased() {
    let config = pcp_haptics::Config::default();
    let (mut fx, shared) = fixture(RecordingHaptics::new(&config, FfKind::Rumble));
    let c = fx.submit(setting());
    let (threshold, modalities) = fx.pending(&c);
    assert_eq!(threshold, "visual");
    assert_eq!(modalities, ["haptic"]);
    assert_eq!(
        fx.seconds_left(),
        Some(10),
        "the dialog counts down the haptic step's 10 s, not the overlay's 30 s"
    );
    assert!(
        matches!(shared.0.borrow().calls(), [Recorded::Started { effects, .. }] if !effects.is_empty()),
        "{:?}",
        shared.0.borrow().calls()
    );
    assert!(shared.0.borrow().cue_loaded());
    // Past the cue and the dialog's click guard, so a tap reaching the dialog would press it.
    fx.advance_clock(config.cue.duration().as_millis().max(1000) as i64 + 100);
    // Tapped where the dialog's deny button is: the taps are the haptic answer, never a click.
    let deny = fx.control_centre(Control::Deny);
    assert_eq!(haptic_shown(&mut fx), Some(HapticState::Waiting));
    tap(&mut fx, deny);
    assert_eq!(
        haptic_shown(&mut fx),
        Some(HapticState::FirstTap),
        "the dialog says one more tap"
    );
    tap(&mut fx, deny);
    let d = fx.decision(&c);
    assert!(d.approved, "{d:?}");
    assert_eq!(d.resolution, "user_approved");
    assert_eq!(
        shared.0.borrow().calls().last(),
        Some(&Recorded::Stopped),
        "the cue was stopped and erased"
    );
    assert!(!shared.0.borrow().cue_loaded());
}

#[test]
fn a_single_tap_does_not_approve_and_the_gate_times_it_out() {
    let config = pcp_haptics::Config::default();
    let (mut fx, shared) = fixture(RecordingHaptics::new(&config, FfKind::Rumble));
    let c = fx.submit(setting());
    fx.pending(&c);
    fx.advance_clock(1000);
    tap(&mut fx, (100.0, 100.0));
    assert_eq!(haptic_shown(&mut fx), Some(HapticState::FirstTap));
    // Past the window for a second tap: the dialog stops asking for one.
    fx.advance_clock(i64::from(config.tap.max_interval_ms));
    fx.pump_until("the tap-again hint to go", |fx| {
        haptic_shown(fx) == Some(HapticState::Waiting)
    });
    fx.advance_clock(10_000);
    let d = fx.decision(&c);
    assert!(!d.approved, "{d:?}");
    assert_eq!(d.resolution, "confirmation.timeout");
    assert!(!shared.0.borrow().cue_loaded());
}

#[test]
fn with_no_haptic_device_the_prompt_is_visual() {
    let config = pcp_haptics::Config::default();
    let (mut fx, shared) = fixture(RecordingHaptics::unavailable(
        &config,
        Unavailable::NoDevice,
    ));
    let c = fx.submit(setting());
    let (_, modalities) = fx.pending(&c);
    assert_eq!(modalities, ["visual"]);
    assert!(
        shared.0.borrow().calls().is_empty(),
        "no cue without a device"
    );
    fx.advance_clock(1000);
    fx.click(Control::Approve);
    let d = fx.decision(&c);
    assert!(d.approved, "{d:?}");
    assert_eq!(d.resolution, "user_approved");
}

#[test]
fn a_haptic_device_unplugged_mid_prompt_falls_back_to_visual() {
    let config = pcp_haptics::Config::default();
    let (mut fx, shared) = fixture(RecordingHaptics::new(&config, FfKind::Rumble));
    let c = fx.submit(setting());
    let (_, modalities) = fx.pending(&c);
    assert_eq!(modalities, ["haptic"]);
    shared.0.borrow_mut().disconnect();
    // The compositor probes its devices on a timer while it runs.
    fx.pump_until("the fallback to visual", |fx| {
        fx.gate()
            .active()
            .is_some_and(|p| p.plan.modalities == [Modality::Visual])
    });
    assert!(fx.dialog_open(), "the prompt is kept");
    fx.advance_clock(1000);
    fx.click(Control::Approve);
    let d = fx.decision(&c);
    assert!(d.approved, "{d:?}");
    assert_eq!(d.resolution, "user_approved");
}

/// The audit record of the newest decision on `capability`.
fn last_record(fx: &mut Fixture, capability: &str) -> pcp_gate::AuditRecord {
    let records = fx.gate().store().audit_since(0).unwrap();
    records
        .into_iter()
        .rev()
        .find(|r| r.capability == capability)
        .expect("an audit record")
}

#[test]
fn a_touch_on_approve_after_the_unplug_is_audited_as_the_visual_answer() {
    let config = pcp_haptics::Config::default();
    let (mut fx, shared) = fixture(RecordingHaptics::new(&config, FfKind::Rumble));
    let c = fx.submit(setting());
    fx.pending(&c);
    // Past the cue, as in a session: the device goes away while the dialog waits for taps.
    fx.advance_clock(config.cue.duration().as_millis().max(1000) as i64 + 100);
    shared.0.borrow_mut().disconnect();
    fx.pump_until("the fallback to visual", |fx| {
        fx.gate()
            .active()
            .is_some_and(|p| p.plan.modalities == [Modality::Visual])
    });
    fx.advance_clock(1000);
    let approve = fx.control_centre(Control::Approve);
    tap(&mut fx, approve);
    let d = fx.decision(&c);
    assert!(d.approved, "{d:?}");
    assert_eq!(d.resolution, "user_approved");
    let record = last_record(&mut fx, "settings.change");
    assert_eq!(record.plan, [Modality::Visual], "{record:#?}");
    let said: Vec<_> = record
        .modality_results
        .iter()
        .map(|r| (r.modality, r.result.as_str()))
        .collect();
    assert_eq!(
        said,
        [(Modality::Haptic, "lost"), (Modality::Visual, "approve")],
        "the record names the modality that really answered"
    );
}
