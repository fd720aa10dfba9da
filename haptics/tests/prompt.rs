//! A haptic prompt end to end through the recording backend: the boundary rule, fallback when
//! there is no hardware, the cue uploaded and erased, and a double tap approving once.

use std::time::Duration;

use pcp_gate::{Answer, AuthLevel, Modality, RiskClass, SideEffects};
use pcp_haptics::{
    Availability, Config, FALLBACK, FfKind, HapticAsk, HapticPrompt, Haptics, HapticsError,
    Position, Recorded, RecordingHaptics, TouchEvent, TouchKind, Unavailable, check_haptic_allowed,
    cue_effects,
};

fn ask(side_effects: SideEffects, auth: AuthLevel, companions: &[Modality]) -> HapticAsk<'_> {
    HapticAsk {
        side_effects,
        risk: RiskClass::of(side_effects, auth),
        companions,
    }
}

fn tap(d: &mut HapticPrompt, down_ms: u64, up_ms: u64) -> Vec<Answer> {
    let p = Position { x: 20.0, y: 20.0 };
    let t = Duration::from_millis;
    [
        TouchEvent::finger(t(down_ms), 0, TouchKind::Down, p),
        TouchEvent::finger(t(up_ms), 0, TouchKind::Up, p),
    ]
    .iter()
    .filter_map(|e| d.on_touch(e))
    .collect()
}

#[test]
fn haptic_alone_is_refused_for_destructive_and_system_before_any_cue() {
    let config = Config::default();
    for (se, auth) in [
        (SideEffects::Destructive, AuthLevel::User),
        (SideEffects::Destructive, AuthLevel::Privileged),
        (SideEffects::System, AuthLevel::User),
        (SideEffects::System, AuthLevel::Privileged),
    ] {
        for companions in [&[][..], &[Modality::Haptic][..]] {
            let mut h = RecordingHaptics::new(&config, FfKind::Rumble);
            let err =
                HapticPrompt::begin(&mut h, &config, &ask(se, auth, companions), Duration::ZERO)
                    .unwrap_err();
            match err {
                HapticsError::HapticAloneRefused { risk } => {
                    assert_eq!(risk, RiskClass::of(se, auth));
                    assert!(err.to_string().contains(risk.as_str()));
                }
                other => panic!("{se:?}/{auth:?}: expected refusal, got {other}"),
            }
            assert!(h.calls().is_empty(), "no cue may play for a refused prompt");
        }
    }
}

#[test]
fn a_mislabelled_risk_is_still_refused_by_its_side_effects() {
    let a = HapticAsk {
        side_effects: SideEffects::Destructive,
        risk: RiskClass::Routine,
        companions: &[],
    };
    assert!(matches!(
        check_haptic_allowed(&a),
        Err(HapticsError::HapticAloneRefused {
            risk: RiskClass::Destructive
        })
    ));
    let a = HapticAsk {
        side_effects: SideEffects::Write,
        risk: RiskClass::System,
        companions: &[],
    };
    assert!(check_haptic_allowed(&a).is_err());
}

#[test]
fn haptic_is_allowed_alongside_another_modality_or_for_low_risk() {
    let both = [Modality::Voice, Modality::Visual];
    assert!(check_haptic_allowed(&ask(SideEffects::Destructive, AuthLevel::User, &both)).is_ok());
    assert!(
        check_haptic_allowed(&ask(
            SideEffects::System,
            AuthLevel::User,
            &[Modality::Visual]
        ))
        .is_ok()
    );
    for se in [
        SideEffects::None,
        SideEffects::Read,
        SideEffects::Write,
        SideEffects::Network,
    ] {
        for auth in [AuthLevel::User, AuthLevel::Privileged] {
            assert!(
                check_haptic_allowed(&ask(se, auth, &[])).is_ok(),
                "{se:?}/{auth:?}"
            );
        }
    }
}

#[test]
fn without_hardware_the_prompt_fails_to_visual() {
    let config = Config::default();
    let mut h = RecordingHaptics::unavailable(&config, Unavailable::NoDevice);
    let err = HapticPrompt::begin(
        &mut h,
        &config,
        &ask(SideEffects::Write, AuthLevel::User, &[]),
        Duration::ZERO,
    )
    .unwrap_err();
    assert!(matches!(
        err,
        HapticsError::Unavailable(Unavailable::NoDevice)
    ));
    assert!(err.to_string().contains("no force-feedback"));
    assert_eq!(FALLBACK, Modality::Visual);
    assert!(h.calls().is_empty());
}

#[test]
fn a_double_tap_after_the_cue_approves_once_and_the_cue_is_erased() {
    let config = Config::default();
    let mut h = RecordingHaptics::new(&config, FfKind::Rumble);
    let start = Duration::from_secs(50);
    let mut p = HapticPrompt::begin(
        &mut h,
        &config,
        &ask(SideEffects::Write, AuthLevel::Privileged, &[]),
        start,
    )
    .unwrap();
    // Default cue: 70 + 110 + 70 ms.
    assert_eq!(p.cue_duration(), Duration::from_millis(250));
    assert_eq!(
        h.calls(),
        [Recorded::Started {
            gain: 49151,
            effects: cue_effects(&config.cue, FfKind::Rumble),
        }]
    );
    assert!(h.cue_loaded());
    let base = start.as_millis() as u64;
    // A tap touching while the cue still plays is ignored; the pair after it approves.
    assert!(tap(&mut p, base + 100, base + 160).is_empty());
    assert!(tap(&mut p, base + 300, base + 360).is_empty());
    assert_eq!(tap(&mut p, base + 500, base + 560), [Answer::Approve]);
    // Already answered: further double taps change nothing.
    assert!(tap(&mut p, base + 700, base + 760).is_empty());
    assert!(tap(&mut p, base + 900, base + 960).is_empty());
    p.end(&mut h).unwrap();
    assert_eq!(h.calls().last(), Some(&Recorded::Stopped));
    assert!(!h.cue_loaded());
}

#[test]
fn a_new_cue_erases_the_previous_one_first() {
    let config = Config::default();
    let mut h = RecordingHaptics::new(&config, FfKind::Periodic);
    h.start_cue().unwrap();
    h.start_cue().unwrap();
    h.stop_cue().unwrap();
    h.stop_cue().unwrap();
    let shape: Vec<bool> = h
        .calls()
        .iter()
        .map(|c| matches!(c, Recorded::Started { .. }))
        .collect();
    assert_eq!(shape, [true, false, true, false]);
}

#[test]
fn a_disconnected_device_becomes_unavailable_not_an_error_loop() {
    let config = Config::default();
    let mut h = RecordingHaptics::new(&config, FfKind::Rumble);
    h.start_cue().unwrap();
    h.disconnect();
    assert!(!h.availability().is_available());
    for _ in 0..3 {
        assert!(matches!(
            h.start_cue(),
            Err(HapticsError::Unavailable(Unavailable::Disconnected { .. }))
        ));
    }
    assert!(h.stop_cue().is_ok());
    match h.availability() {
        Availability::Unavailable(why) => assert_eq!(why.code(), "disconnected"),
        other => panic!("{other:?}"),
    }
}
