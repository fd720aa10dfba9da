//! End-to-end on screen: the dialog on the output nearest the focal point in two layouts (checked
//! in PNG captures), following the focal point across outputs; `weston-simple-shm`'s pixels
//! beside and under the dialog; `wayland-info` listing the global.

mod harness;

use pcp_overlay::Control;
use serde_json::json;

use harness::{Fixture, intent, is_background};

/// Counts pixels of `capture` inside the logical rect (global coords shifted by the output's
/// origin, times its scale) that are not the background.
fn non_background_in(
    capture: &pcp_compositor::headless::Capture,
    rect: (i32, i32, i32, i32),
    origin: (i32, i32),
    scale: f64,
) -> usize {
    let (x, y, w, h) = rect;
    let x0 = (f64::from(x - origin.0) * scale) as i64;
    let y0 = (f64::from(y - origin.1) * scale) as i64;
    let x1 = x0 + (f64::from(w) * scale) as i64;
    let y1 = y0 + (f64::from(h) * scale) as i64;
    let mut n = 0;
    for py in y0.max(0)..y1.min(i64::from(capture.height)) {
        for px in x0.max(0)..x1.min(i64::from(capture.width)) {
            if !is_background(capture.pixel(px as u32, py as u32)) {
                n += 1;
            }
        }
    }
    n
}

fn all_background(capture: &pcp_compositor::headless::Capture) -> bool {
    (0..capture.height).step_by(7).all(|y| {
        (0..capture.width)
            .step_by(7)
            .all(|x| is_background(capture.pixel(x, y)))
    })
}

fn dialog_on_output(layout: &[&str], focus: (f64, f64), expect: usize, name: &str) {
    let mut fx = Fixture::new(layout);
    fx.set_focus_hint(focus.0, focus.1);
    let c = fx.submit(intent(
        "settings.change",
        json!({"key": "theme", "value": "dark"}),
    ));
    fx.pending(&c);
    let placement = fx.dialog_placement().expect("the dialog is placed");
    assert_eq!(
        placement.output, expect,
        "{name}: the dialog is on the nearest output"
    );
    for i in 0..layout.len() {
        let path = fx.save_png(i, &format!("{name}-output{i}"));
        let capture = fx.capture(i);
        let spec = fx.output_spec(i);
        let r = placement.rect;
        if i == expect {
            let drawn =
                non_background_in(&capture, (r.x, r.y, r.w, r.h), (spec.x, spec.y), spec.scale);
            let area = (f64::from(r.w * r.h) * spec.scale * spec.scale) as usize;
            assert!(
                drawn > area / 2,
                "{name}: the dialog covers its rect on output {i} ({drawn} of {area}; {})",
                path.display()
            );
            // The whole dialog is there, pixel for pixel: its buffer composited over the
            // background at the output's scale (a wrong scale crops or stretches it).
            let (dw, dh, px) = fx.dialog_pixels();
            let ox = (f64::from(r.x - spec.x) * spec.scale).round() as u32;
            let oy = (f64::from(r.y - spec.y) * spec.scale).round() as u32;
            let mut compared = 0;
            for y in (0..dh).step_by(5) {
                for x in (0..dw).step_by(5) {
                    let i = ((y * dw + x) * 4) as usize;
                    let a = u32::from(px[i + 3]);
                    let expect: Vec<u32> = (0..3)
                        .map(|c| {
                            u32::from(px[i + c])
                                + u32::from(harness::BACKGROUND[c]) * (255 - a) / 255
                        })
                        .collect();
                    let got = capture.pixel(ox + x, oy + y);
                    for c in 0..3 {
                        assert!(
                            expect[c].abs_diff(u32::from(got[c])) <= 3,
                            "{name}: dialog pixel ({x},{y}) is {got:?}, expected {expect:?} ({})",
                            path.display()
                        );
                    }
                    compared += 1;
                }
            }
            assert!(compared > 1000);
            // Nothing spills past its rect.
            let (lw, lh) = spec.logical_size();
            let right = (r.x + r.w + 2, r.y, 8.min(spec.x + lw - r.x - r.w - 2), r.h);
            let below = (r.x, r.y + r.h + 2, r.w, 8.min(spec.y + lh - r.y - r.h - 2));
            for strip in [right, below] {
                let spill = non_background_in(&capture, strip, (spec.x, spec.y), spec.scale);
                assert_eq!(
                    spill,
                    0,
                    "{name}: dialog pixels outside its rect ({})",
                    path.display()
                );
            }
        } else {
            assert!(
                all_background(&capture),
                "{name}: output {i} has no dialog ({})",
                path.display()
            );
        }
    }
    // The guard holds, then a click approves.
    fx.click(Control::Approve);
    assert!(fx.dialog_open());
    fx.advance_clock(1000);
    fx.click(Control::Approve);
    assert_eq!(fx.decision(&c).resolution, "user_approved");
    let capture = fx.capture(expect);
    assert!(
        all_background(&capture),
        "{name}: the dialog is gone after the answer"
    );
}

#[test]
fn the_dialog_is_drawn_on_the_output_nearest_the_focal_point_side_by_side() {
    dialog_on_output(
        &["1920x1080@0,0", "1280x720*2@1920,0"],
        (2200.0, 100.0),
        1,
        "side-by-side",
    );
}

#[test]
fn the_dialog_is_drawn_on_the_output_nearest_the_focal_point_stacked_with_a_gap() {
    // The focal point is in the gap below output 0 and nearer to output 1.
    dialog_on_output(
        &["800x480@0,0", "1024x768@0,600"],
        (100.0, 590.0),
        1,
        "stacked",
    );
}

#[test]
fn the_dialog_follows_the_focal_point_across_outputs_and_the_guard_rearms() {
    let mut fx = Fixture::new(&["1280x720@0,0", "1280x720@1280,0"]);
    fx.set_focus_hint(100.0, 100.0);
    let c = fx.submit(intent("settings.change", json!({"key": "k", "value": "v"})));
    fx.pending(&c);
    assert_eq!(fx.dialog_output().unwrap(), 0);
    fx.advance_clock(1000);
    // The pointer crosses to output 1: the dialog moves with it and must be unmoved for the
    // guard delay again before a click counts.
    fx.inject_pointer_motion(1500.0, 300.0);
    assert_eq!(fx.dialog_output().unwrap(), 1);
    fx.click(Control::Approve);
    assert!(fx.dialog_open(), "a click right after the move is ignored");
    fx.advance_clock(1000);
    fx.click(Control::Approve);
    assert_eq!(fx.decision(&c).resolution, "user_approved");
}

#[test]
fn touch_moves_the_focal_point_and_a_tap_answers() {
    let mut fx = Fixture::new(&["800x480@0,0", "800x480@800,0"]);
    let c = fx.submit(intent("settings.change", json!({"key": "k", "value": "w"})));
    fx.pending(&c);
    fx.inject_touch_down(1000.0, 200.0);
    fx.inject_touch_up();
    assert_eq!(fx.dialog_output().unwrap(), 1);
    fx.advance_clock(1000);
    let (x, y) = fx.control_centre(Control::Deny);
    fx.inject_touch_down(x, y);
    fx.inject_touch_up();
    assert_eq!(fx.decision(&c).resolution, "user_denied");
}

#[test]
fn weston_simple_shm_pixels_show_beside_and_under_the_dialog() {
    let mut fx = Fixture::new(&["640x480@0,0"]);
    let mut shm = fx.spawn(fx.command("weston-simple-shm"));
    fx.pump_until("weston-simple-shm's window", |fx| {
        fx.window_count() > 0 && !is_background(fx.capture(0).pixel(125, 125))
    });
    let c = fx.submit(intent("settings.change", json!({"key": "k", "value": "x"})));
    fx.pending(&c);
    let path = fx.save_png(0, "simple-shm-and-dialog");
    let capture = fx.capture(0);
    let r = fx.dialog_rect().unwrap();
    let loc = fx.first_window_location().unwrap();
    // Beside: a window pixel outside the dialog's rect still shows the client's picture.
    let beside = (loc.0 + 10, loc.1 + 125);
    assert!(
        beside.0 < r.x,
        "the window's left edge is beside the dialog"
    );
    assert!(
        !is_background(capture.pixel(beside.0 as u32, beside.1 as u32)),
        "{}",
        path.display()
    );
    // Under: where the window and the dialog overlap, the dialog is on top.
    let overlap = (r.x + 5, r.y + 5);
    assert!(
        overlap.0 < loc.0 + 250 && overlap.1 < loc.1 + 250,
        "they overlap"
    );
    let mut under = fx.capture(0);
    fx.advance_clock(1000);
    fx.click(Control::Deny);
    assert_eq!(fx.decision(&c).resolution, "user_denied");
    let after = fx.capture(0);
    let (ox, oy) = (overlap.0 as u32, overlap.1 as u32);
    assert_ne!(
        under.pixel(ox, oy),
        after.pixel(ox, oy),
        "the dialog covered the window there"
    );
    assert!(
        !is_background(after.pixel(ox, oy)),
        "the window is there under the dialog"
    );
    under.rgba.clear();
    let _ = shm.kill();
    let _ = shm.wait();
}

#[test]
fn wayland_info_lists_the_manager_global() {
    let mut fx = Fixture::new(&["800x600@0,0"]);
    let out = fx.run(fx.command("wayland-info"));
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("'pcp_intent_manager_v1'"), "{text}");
}

#[test]
fn built_in_window_actions_act_on_a_real_client_only_after_approval() {
    const APP: &str = "org.freedesktop.weston.simple-shm";
    let mut fx = Fixture::new(&["800x600@0,0", "800x600@800,0"]);
    fx.set_focus_hint(100.0, 100.0);
    let mut shm = fx.spawn(fx.command("weston-simple-shm"));
    fx.pump_until("weston-simple-shm's window", |fx| {
        fx.window_location_of(APP).is_some()
    });
    assert_eq!(fx.window_location_of(APP).unwrap().0, 0);

    // window.move is privileged: nothing moves until the user approves.
    let c = fx.submit(intent(
        "window.move",
        json!({"window": APP, "output": "HEADLESS-2"}),
    ));
    fx.pending(&c);
    assert_eq!(fx.window_location_of(APP).unwrap().0, 0);
    fx.advance_clock(1000);
    fx.click(Control::Approve);
    assert_eq!(fx.decision(&c).resolution, "user_approved");
    assert_eq!(fx.window_location_of(APP).unwrap().0, 800);

    // window.close is a routine write: it runs at once, and the client closes.
    let c = fx.submit(intent("window.close", json!({"window": APP})));
    assert_eq!(fx.decision(&c).resolution, "policy_allow");
    fx.pump_until("weston-simple-shm to exit", |_| {
        matches!(shm.try_wait(), Ok(Some(_)))
    });
    let performed = fx.performed();
    assert_eq!(performed, ["window.move", "window.close"]);
}
