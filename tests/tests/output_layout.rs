//! Outputs are laid out again when one is unplugged or a display's mode changes: the displays
//! beyond it close the gap it left (or make room), their windows move with them, the dialog
//! stays on the display the user looks at, and clients are told the new modes and positions.

mod harness;

use pcp_overlay::Control;
use serde_json::json;

use harness::{Fixture, intent, is_background};

#[test]
fn unplugging_the_middle_output_closes_the_gap_and_its_neighbours_window_moves_along() {
    let mut fx = Fixture::new(&["640x480@0,0", "640x480@640,0", "640x480@1280,0"]);
    fx.set_focus_hint(1400.0, 100.0);
    let mut shm = fx.spawn(fx.command("weston-simple-shm"));
    fx.pump_until("weston-simple-shm's window", |fx| {
        fx.window_count() > 0 && !is_background(fx.capture(2).pixel(100, 100))
    });
    let before = fx.first_window_location().unwrap();
    assert_eq!(before.0, 1280);
    fx.unplug_output(1).unwrap();
    assert_eq!(fx.output_count(), 2);
    let right = fx.output_spec(1);
    assert_eq!((right.x, right.y), (640, 0), "the right output closed up");
    assert_eq!(
        fx.first_window_location().unwrap(),
        (before.0 - 640, before.1),
        "its window moved with it"
    );
    fx.save_png(1, "layout-gap-closed");
    assert!(
        !is_background(fx.capture(1).pixel(100, 100)),
        "the window is still drawn on it"
    );
    // A new client sees the output at its new place (xdg-output's logical position).
    let out = fx.run(fx.command("wayland-info"));
    let info = String::from_utf8_lossy(&out.stdout);
    assert!(info.contains("x: 640, y: 0"), "{info}");
    assert!(!info.contains("x: 1280"), "{info}");
    let _ = shm.kill();
    let _ = shm.wait();
}

#[test]
fn a_display_whose_mode_changes_keeps_its_neighbours_windows_and_dialog_in_place() {
    let mut fx = Fixture::new(&["1280x720@0,0", "1280x720@1280,0"]);
    fx.set_focus_hint(1400.0, 100.0);
    let mut shm = fx.spawn(fx.command("weston-simple-shm"));
    fx.pump_until("weston-simple-shm's window", |fx| {
        fx.window_count() > 0 && !is_background(fx.capture(1).pixel(100, 100))
    });
    assert_eq!(fx.first_window_location().unwrap().0, 1280);
    // The user looks at the bottom right of the first display; a prompt opens there.
    fx.set_focus_hint(1200.0, 650.0);
    let c = fx.submit(intent("settings.change", json!({"key": "k", "value": "v"})));
    fx.pending(&c);
    assert_eq!(fx.dialog_output(), Some(0));

    // Its display now prefers 800x600.
    fx.change_output_mode(0, "800x600").unwrap();
    let first = fx.output_spec(0);
    assert_eq!(
        (first.x, first.y, first.width, first.height),
        (0, 0, 800, 600)
    );
    let right = fx.output_spec(1);
    assert_eq!((right.x, right.y), (800, 0), "the right output closed up");
    assert_eq!(
        fx.first_window_location().unwrap().0,
        800,
        "its window moved with it"
    );
    // The dialog stays on the display the user looks at, inside its new size, drawn whole.
    let placement = fx.dialog_placement().expect("the dialog is still up");
    assert_eq!(placement.output, 0);
    let r = placement.rect;
    assert!(
        r.x >= 0 && r.y >= 0 && r.x + r.w <= 800 && r.y + r.h <= 600,
        "{r:?}"
    );
    let png = fx.save_png(0, "mode-change-dialog");
    let capture = fx.capture(0);
    assert_eq!((capture.width, capture.height), (800, 600));
    let drawn = (r.y..r.y + r.h)
        .step_by(2)
        .flat_map(|y| (r.x..r.x + r.w).step_by(2).map(move |x| (x, y)))
        .filter(|&(x, y)| !is_background(capture.pixel(x as u32, y as u32)))
        .count();
    let area = (r.w as usize).div_ceil(2) * (r.h as usize).div_ceil(2);
    assert!(
        drawn > area / 2,
        "the dialog is drawn ({drawn} of {area}; {})",
        png.display()
    );
    assert!(
        !is_background(fx.capture(1).pixel(100, 100)),
        "the window is still drawn on the right output"
    );
    // Clients are told the new mode and the new places.
    let out = fx.run(fx.command("wayland-info"));
    let info = String::from_utf8_lossy(&out.stdout);
    assert!(info.contains("width: 800 px, height: 600 px"), "{info}");
    assert!(info.contains("x: 800, y: 0"), "{info}");
    // It grows again: the right output is pushed out of its way, and the prompt still answers.
    fx.change_output_mode(0, "1600x900").unwrap();
    assert_eq!(fx.output_spec(1).x, 1600);
    assert_eq!(fx.first_window_location().unwrap().0, 1600);
    fx.advance_clock(1000);
    fx.click(Control::Approve);
    assert_eq!(fx.decision(&c).resolution, "user_approved");
    let _ = shm.kill();
    let _ = shm.wait();
}
