//! Outputs are laid out again when one is unplugged: the displays beyond it close the gap it
//! left, their windows move with them, and clients are told the new positions.

mod harness;

use harness::{Fixture, is_background};

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
