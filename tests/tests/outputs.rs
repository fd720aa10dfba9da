//! End-to-end output hotplug: unplugging the output that shows the dialog moves the same
//! prompt (same id, same deadline) to the nearest remaining output, checked in captured pixels,
//! where a click after the guard answers it; windows on an unplugged output move to a remaining
//! one; losing the last output denies the shown and queued prompts `confirmation_unavailable`
//! (audited) and every new ask the same way while routine intents still run; plugging an
//! output back makes prompts work again.

mod harness;

use pcp_compositor::headless::Capture;
use pcp_gate::{IntentId, Modality, Resolution};
use pcp_overlay::Control;
use serde_json::json;

use harness::{Fixture, intent, is_background};

const TWO: &[&str] = &["1280x720@0,0", "1280x720@1280,0"];

/// Pixels of output `index`'s capture inside the dialog's placed rect that are not the
/// background (the output's origin and scale taken from the compositor).
fn dialog_pixels_on(fx: &mut Fixture, index: usize) -> (usize, usize) {
    let placement = fx.dialog_placement().expect("the dialog is placed");
    let spec = fx.output_spec(index);
    let capture = fx.capture(index);
    let r = placement.rect;
    let to_px = |v: i32, origin: i32| (f64::from(v - origin) * spec.scale) as i64;
    let (x0, y0) = (to_px(r.x, spec.x), to_px(r.y, spec.y));
    let (x1, y1) = (to_px(r.x + r.w, spec.x), to_px(r.y + r.h, spec.y));
    let mut drawn = 0;
    for y in y0.max(0)..y1.min(i64::from(capture.height)) {
        for x in x0.max(0)..x1.min(i64::from(capture.width)) {
            if !is_background(capture.pixel(x as u32, y as u32)) {
                drawn += 1;
            }
        }
    }
    let area = ((x1 - x0) * (y1 - y0)).max(0) as usize;
    (drawn, area)
}

fn all_background(capture: &Capture) -> bool {
    (0..capture.height).step_by(5).all(|y| {
        (0..capture.width)
            .step_by(5)
            .all(|x| is_background(capture.pixel(x, y)))
    })
}

/// The shown prompt's id and visual deadline.
fn shown_prompt(fx: &mut Fixture) -> (IntentId, Option<i64>) {
    let gate = fx.gate();
    let p = gate.active().expect("a prompt is shown");
    (p.id, p.deadline(Modality::Visual))
}

/// Whether the dialog's clickjacking guard has armed its controls.
fn armed(fx: &mut Fixture) -> bool {
    fx.dialog_live().is_some_and(|l| l.armed)
}

/// How many `wl_output` globals a new client sees.
fn wl_outputs_seen(fx: &mut Fixture) -> usize {
    let out = fx.run(fx.command("wayland-info"));
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout)
        .matches("'wl_output'")
        .count()
}

/// The audit records with this resolution (group-committed records flushed first).
fn audited(fx: &mut Fixture, resolution: Resolution) -> Vec<pcp_gate::AuditRecord> {
    fx.pcp_mut().flush().expect("audit flush");
    fx.gate()
        .store()
        .audit_since(0)
        .expect("audit readable")
        .into_iter()
        .filter(|r| r.resolution == resolution)
        .collect()
}

#[test]
fn unplugging_the_dialogs_output_moves_the_same_prompt_to_the_nearest_output() {
    let mut fx = Fixture::new(TWO);
    assert_eq!(wl_outputs_seen(&mut fx), 2);
    fx.set_focus_hint(1500.0, 300.0);
    let c = fx.submit(intent("settings.change", json!({"key": "k", "value": "v"})));
    fx.pending(&c);
    assert_eq!(fx.dialog_output().unwrap(), 1);
    let before = shown_prompt(&mut fx);
    assert!(before.1.is_some(), "the visual step has a deadline");
    fx.advance_clock(1000);
    let seconds_before = fx.seconds_left();
    assert_eq!(seconds_before, Some(29));
    assert!(armed(&mut fx));
    assert!(
        all_background(&fx.capture(0)),
        "output 0 shows nothing before the unplug"
    );

    assert_eq!(fx.unplug_output(1).unwrap(), "HEADLESS-2");
    assert_eq!(fx.output_count(), 1);
    assert_eq!(
        wl_outputs_seen(&mut fx),
        1,
        "the wl_output global is withdrawn"
    );

    // The dialog is on output 0 now, inside it, and drawn there.
    let placement = fx.dialog_placement().expect("the dialog is still up");
    assert_eq!(placement.output, 0);
    let r = placement.rect;
    assert!(
        r.x >= 0 && r.y >= 0 && r.x + r.w <= 1280 && r.y + r.h <= 720,
        "{r:?}"
    );
    let png = fx.save_png(0, "unplug-dialog-moved-to-output0");
    let (drawn, area) = dialog_pixels_on(&mut fx, 0);
    assert!(
        drawn > area / 2,
        "the dialog is drawn on output 0 ({drawn} of {area}; {})",
        png.display()
    );
    // The same prompt: same id, its timeout still running from when it was first shown.
    assert_eq!(shown_prompt(&mut fx), before);
    assert_eq!(fx.gate().prompts().count(), 1);
    assert_eq!(
        fx.seconds_left(),
        seconds_before,
        "the countdown did not restart"
    );

    // It moved: the guard starts again, then a click on Approve there approves.
    assert!(!armed(&mut fx));
    fx.click(Control::Approve);
    assert!(fx.dialog_open(), "a click right after the move is ignored");
    fx.advance_clock(1000);
    fx.click(Control::Approve);
    let d = fx.decision(&c);
    assert_eq!(d.resolution, "user_approved");
    assert!(d.approved);
    assert!(
        all_background(&fx.capture(0)),
        "the dialog is gone after the answer"
    );
}

#[test]
fn unplugging_another_output_leaves_the_dialog_where_it_was_on_its_display() {
    let mut fx = Fixture::new(TWO);
    fx.set_focus_hint(1500.0, 300.0);
    let c = fx.submit(intent("settings.change", json!({"key": "k", "value": "w"})));
    fx.pending(&c);
    let rect = fx.dialog_rect().unwrap();
    fx.advance_clock(1000);
    // Output 0 goes: the dialog's output becomes index 0 and moves left into the gap (to
    // 0,0); the dialog stays where it was on that display.
    fx.unplug_output(0).unwrap();
    assert_eq!((fx.output_spec(0).x, fx.output_spec(0).y), (0, 0));
    let placement = fx.dialog_placement().unwrap();
    let mut local = rect;
    local.x -= 1280;
    assert_eq!((placement.output, placement.rect), (0, local));
    let (drawn, area) = dialog_pixels_on(&mut fx, 0);
    assert!(drawn > area / 2, "{drawn} of {area}");
    // Its global position changed with its display's, which the overlay counts as a move: the
    // guard starts again (the safe side), and a click after it counts.
    fx.click(Control::Approve);
    assert!(
        fx.dialog_open(),
        "a click right after the re-layout is ignored"
    );
    fx.advance_clock(1000);
    fx.click(Control::Approve);
    assert_eq!(fx.decision(&c).resolution, "user_approved");
}

#[test]
fn windows_on_an_unplugged_output_move_onto_a_remaining_one() {
    let mut fx = Fixture::new(&["800x600@0,0", "800x600@800,0"]);
    fx.set_focus_hint(1000.0, 100.0);
    let mut shm = fx.spawn(fx.command("weston-simple-shm"));
    fx.pump_until("weston-simple-shm's window", |fx| {
        fx.window_count() > 0 && !is_background(fx.capture(1).pixel(100, 100))
    });
    assert_eq!(fx.first_window_location().unwrap().0, 800);
    fx.unplug_output(1).unwrap();
    let loc = fx.first_window_location().unwrap();
    assert!(
        (0..800).contains(&loc.0) && (0..600).contains(&loc.1),
        "{loc:?}"
    );
    let png = fx.save_png(0, "unplug-window-moved-to-output0");
    let capture = fx.capture(0);
    assert!(
        !is_background(capture.pixel(loc.0 as u32 + 100, loc.1 as u32 + 100)),
        "the window is drawn on output 0 ({})",
        png.display()
    );
    let _ = shm.kill();
    let _ = shm.wait();
}

#[test]
fn losing_the_last_output_denies_prompts_unavailable_until_one_is_plugged_back() {
    // Prompt slots belong to the app, and every client here is this test process: give it two.
    let mut fx = Fixture::with_config(&["1024x768@0,0"], "[queue]\nper_client = 2\n");
    // Two clients: one prompt shown, one queued behind it.
    let shown = fx.submit(intent("settings.change", json!({"key": "a", "value": "1"})));
    fx.pending(&shown);
    let queued = fx.submit(intent("settings.change", json!({"key": "b", "value": "2"})));
    fx.pending(&queued);
    assert_eq!(fx.gate().prompts().count(), 2);
    assert!(audited(&mut fx, Resolution::ConfirmationUnavailable).is_empty());

    fx.unplug_output(0).unwrap();
    for c in [&shown, &queued] {
        let d = fx.decision(c);
        assert!(!d.approved);
        assert_eq!(d.resolution, "confirmation_unavailable");
    }
    assert!(!fx.dialog_open());
    assert_eq!(fx.gate().prompts().count(), 0);
    let records = audited(&mut fx, Resolution::ConfirmationUnavailable);
    let keys: Vec<_> = records
        .iter()
        .map(|r| (r.capability.as_str(), r.outcome.as_str()))
        .collect();
    assert_eq!(
        keys,
        [("settings.change", "denied"), ("settings.change", "denied")]
    );

    // No output: an ask is denied at once, a routine write still runs.
    let asked = fx.submit(intent("settings.change", json!({"key": "c", "value": "3"})));
    let d = fx.decision(&asked);
    assert_eq!(d.resolution, "confirmation_unavailable");
    assert!(!d.approved);
    let routine = fx.submit(intent("file.write", json!({"path": "/tmp/x"})));
    let d = fx.decision(&routine);
    assert_eq!(d.resolution, "policy_allow");
    assert!(d.approved);
    let records = audited(&mut fx, Resolution::ConfirmationUnavailable);
    assert_eq!(records.len(), 3);
    assert_eq!(records[2].authorizer.as_deref(), Some("denying"));

    // An output comes back: prompts are shown and answered again.
    assert_eq!(fx.plug_output("800x600@0,0").unwrap(), 0);
    assert_eq!(wl_outputs_seen(&mut fx), 1);
    let c = fx.submit(intent("settings.change", json!({"key": "d", "value": "4"})));
    fx.pending(&c);
    assert_eq!(fx.dialog_output().unwrap(), 0);
    let png = fx.save_png(0, "plugged-back-dialog");
    let (drawn, area) = dialog_pixels_on(&mut fx, 0);
    assert!(drawn > area / 2, "{drawn} of {area} ({})", png.display());
    fx.advance_clock(1000);
    fx.click(Control::Approve);
    assert_eq!(fx.decision(&c).resolution, "user_approved");
}

#[test]
fn a_plugged_output_nearer_the_focal_point_takes_the_dialog() {
    let mut fx = Fixture::new(&["1280x720@0,0"]);
    // The focal point is beyond output 0's right edge: nearest by distance is output 0.
    fx.set_focus_hint(1600.0, 300.0);
    let c = fx.submit(intent("settings.change", json!({"key": "p", "value": "1"})));
    fx.pending(&c);
    let before = shown_prompt(&mut fx);
    assert_eq!(fx.dialog_output().unwrap(), 0);
    fx.advance_clock(1000);
    assert_eq!(fx.plug_output("1280x720@1280,0").unwrap(), 1);
    assert_eq!(fx.output_name(1), "HEADLESS-2");
    assert_eq!(fx.dialog_output().unwrap(), 1);
    let (drawn, area) = dialog_pixels_on(&mut fx, 1);
    assert!(drawn > area / 2, "{drawn} of {area}");
    assert!(
        all_background(&fx.capture(0)),
        "output 0 no longer shows it"
    );
    assert_eq!(shown_prompt(&mut fx), before);
    // The move re-armed the guard: Approve waits for it (Deny never does).
    fx.click(Control::Approve);
    assert!(fx.dialog_open(), "the guard started again");
    fx.advance_clock(1000);
    fx.click(Control::Deny);
    assert_eq!(fx.decision(&c).resolution, "user_denied");
}

#[test]
fn unplugging_a_missing_output_is_a_clear_error() {
    let mut fx = Fixture::new(TWO);
    let e = fx.unplug_output(2).unwrap_err();
    assert_eq!(e.to_string(), "there is no output 2");
    let e = fx.unplug_output_named("HDMI-A-1").unwrap_err();
    assert_eq!(e.to_string(), "there is no output named `HDMI-A-1`");
    let e = fx.plug_output("10x10").unwrap_err();
    assert!(e.to_string().contains("10x10"), "{e}");
    assert_eq!(fx.output_count(), 2);
}

#[test]
fn losing_every_input_device_denies_prompts_unavailable_until_one_returns() {
    let mut fx = Fixture::new(&["1024x768@0,0"]);
    let shown = fx.submit(intent("settings.change", json!({"key": "a", "value": "1"})));
    fx.pending(&shown);
    assert!(fx.dialog_open());

    // The last keyboard, pointer or touch screen is unplugged: nobody can press the dialog.
    fx.input_devices_changed(0);
    let d = fx.decision(&shown);
    assert!(!d.approved);
    assert_eq!(d.resolution, "confirmation_unavailable");
    assert!(!fx.dialog_open());
    assert_eq!(
        audited(&mut fx, Resolution::ConfirmationUnavailable).len(),
        1
    );

    // Meanwhile an ask is denied at once by the denying authorizer; routine writes still run.
    let asked = fx.submit(intent("settings.change", json!({"key": "b", "value": "2"})));
    assert_eq!(fx.decision(&asked).resolution, "confirmation_unavailable");
    let records = audited(&mut fx, Resolution::ConfirmationUnavailable);
    assert_eq!(records[1].authorizer.as_deref(), Some("denying"));
    let routine = fx.submit(intent("file.write", json!({"path": "/tmp/x"})));
    assert_eq!(fx.decision(&routine).resolution, "policy_allow");

    // A device is plugged back: prompts are shown and answered again.
    fx.input_devices_changed(1);
    let c = fx.submit(intent("settings.change", json!({"key": "c", "value": "3"})));
    fx.pending(&c);
    assert!(fx.dialog_open());
    fx.advance_clock(1000);
    fx.click(Control::Approve);
    assert_eq!(fx.decision(&c).resolution, "user_approved");
}
