//! Real Debian apps in the headless compositor: a GTK app's menu opens as an xdg popup placed
//! by its positioner and kept on the output, takes a popup grab and is drawn; the dialog is drawn
//! above it; the grab gets none of the dialog's input and cannot take the keyboard from the
//! dialog. gtk3-demo runs without GTK's seat criticals.

mod harness;

use std::path::PathBuf;

use harness::apps::App;
use harness::{Fixture, intent, is_background};
use pcp_overlay::Control;
use serde_json::json;

const ONE: &[&str] = &["800x600@0,0"];

/// The small GTK program the tests drive (`tests/apps/gtk_menu_entry.py`).
fn gtk_program() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("apps/gtk_menu_entry.py")
}

/// A rectangle (x, y, w, h) in logical pixels.
type Rect = (i32, i32, i32, i32);

/// (x, y, w, h) parsed from `X,Y,W,H`.
fn rect(text: &str) -> Rect {
    let v: Vec<i32> = text.split(',').map(|n| n.parse().unwrap()).collect();
    (v[0], v[1], v[2], v[3])
}

/// Starts the GTK program; returns it with its File menu item's and entry's rectangles
/// (relative to the window).
fn gtk_app(fx: &mut Fixture) -> (App, Rect, Rect) {
    let mut command = fx.command("/usr/bin/python3");
    command.arg(gtk_program());
    let mut app = fx.spawn_app(command);
    let line = app.wait_line(fx, "widgets ");
    let mut menu = None;
    let mut entry = None;
    for part in line.split_whitespace().skip(1) {
        if let Some(r) = part.strip_prefix("menu=") {
            menu = Some(rect(r));
        }
        if let Some(r) = part.strip_prefix("entry=") {
            entry = Some(rect(r));
        }
    }
    (app, menu.unwrap(), entry.unwrap())
}

/// Clicks the File item of a window whose geometry is at `at`; pumps until a popup is mapped
/// and drawn and returns it.
fn open_menu(
    fx: &mut Fixture,
    app: &mut App,
    at: (i32, i32),
    menu: (i32, i32, i32, i32),
) -> (i32, i32, i32, i32) {
    let x = f64::from(at.0 + menu.0 + menu.2 / 2);
    let y = f64::from(at.1 + menu.1 + menu.3 / 2);
    fx.inject_pointer_motion(x, y);
    fx.inject_click(x, y);
    let start = std::time::Instant::now();
    loop {
        fx.render();
        fx.pump();
        app.new_lines();
        if let Some(p) = fx.popup_rects().first() {
            return *p;
        }
        assert!(
            start.elapsed() < harness::WAIT,
            "no popup; the app said {:?}, stderr: {}",
            app.seen,
            app.stderr()
        );
    }
}

/// Pumps for a few frames, so the app can answer what it was sent.
fn settle(fx: &mut Fixture, app: &mut App) {
    for _ in 0..40 {
        fx.render();
        fx.pump();
    }
    app.new_lines();
}

/// The share of the pixels in `r` (global logical, on a scale-1 output 0) that are not the
/// background.
fn drawn_share(capture: &pcp_compositor::headless::Capture, r: (i32, i32, i32, i32)) -> f64 {
    let mut drawn = 0;
    let mut all = 0;
    for y in r.1..r.1 + r.3 {
        for x in r.0..r.0 + r.2 {
            all += 1;
            if !is_background(capture.pixel(x as u32, y as u32)) {
                drawn += 1;
            }
        }
    }
    f64::from(drawn) / f64::from(all.max(1))
}

#[test]
fn a_gtk_menu_opens_as_a_popup_kept_on_the_output_is_drawn_and_takes_clicks() {
    let mut fx = Fixture::new(ONE);
    let (mut app, menu, _) = gtk_app(&mut fx);
    // The File item in the bottom-right corner: the menu cannot drop down and right from it
    // without leaving the output, so its positioner's constraints move it.
    let at = (800 - menu.0 - menu.2 - 4, 600 - menu.1 - menu.3 - 4);
    fx.move_first_window(at.0, at.1);
    settle(&mut fx, &mut app);
    let popup = open_menu(&mut fx, &mut app, at, menu);
    let (x, y, w, h) = popup;
    assert!(w > 20 && h > 40, "a menu of four items: {popup:?}");
    assert!(
        x >= 0 && y >= 0 && x + w <= 800 && y + h <= 600,
        "the menu stays on the output: {popup:?}"
    );
    assert!(y + h <= at.1 + menu.1, "flipped above its item: {popup:?}");
    settle(&mut fx, &mut app);
    let capture = fx.capture(0);
    fx.save_png(0, "apps-gtk-menu");
    let share = drawn_share(&capture, popup);
    assert!(share > 0.9, "the menu is drawn: {share}");
    // The grab passes the popup's own clicks: the last item is chosen.
    let (ix, iy) = (f64::from(x + w / 2), f64::from(y + h - 12));
    fx.inject_pointer_motion(ix, iy);
    settle(&mut fx, &mut app);
    fx.inject_click(ix, iy);
    app.wait_line(&mut fx, "activated ");
    fx.pump_until("the menu to close", |fx| fx.popup_rects().is_empty());
}

#[test]
fn the_dialog_is_drawn_above_an_open_menu_whose_grab_gets_none_of_its_input() {
    let mut fx = Fixture::new(ONE);
    let (mut app, menu, _) = gtk_app(&mut fx);
    let c = fx.submit(intent("settings.change", json!({"key": "k", "value": "v"})));
    fx.pending(&c);
    let r = fx.dialog_rect().unwrap();
    // The File item well above the dialog (clear of its input margin): the menu drops down
    // over it.
    let at = (r.x + 20, r.y - menu.1 - menu.3 - 60);
    fx.move_first_window(at.0, at.1);
    settle(&mut fx, &mut app);
    let item = (
        f64::from(at.0 + menu.0 + menu.2 / 2),
        f64::from(at.1 + menu.1 + menu.3 / 2),
    );
    fx.inject_pointer_motion(item.0, item.1);
    settle(&mut fx, &mut app);
    let before = fx.capture(0);
    let popup = open_menu(&mut fx, &mut app, at, menu);
    settle(&mut fx, &mut app);
    let after = fx.capture(0);
    fx.save_png(0, "apps-gtk-menu-under-dialog");
    let (px, py, pw, ph) = popup;
    let (rx, ry, rw, rh) = (r.x, r.y, r.w, r.h);
    let (ox, oy) = (px.max(rx), py.max(ry));
    let (ow, oh) = ((px + pw).min(rx + rw) - ox, (py + ph).min(ry + rh) - oy);
    assert!(
        ow > 10 && oh > 10,
        "the menu {popup:?} reaches under the dialog {r:?}"
    );
    // Where they overlap the dialog's pixels are unchanged; above it the menu shows.
    for y in oy..oy + oh {
        for x in ox..ox + ow {
            assert_eq!(
                before.pixel(x as u32, y as u32),
                after.pixel(x as u32, y as u32),
                "the menu shows through the dialog at {x},{y}"
            );
        }
    }
    let above = (px, py, pw, (ry - py).min(ph));
    assert!(
        above.3 > 5,
        "part of the menu is above the dialog: {popup:?} {r:?}"
    );
    assert!(
        drawn_share(&after, above) > 0.9,
        "the menu is drawn above the dialog"
    );

    // Motion and a click on the dialog while the menu holds its grab: the dialog's alone.
    fx.advance_clock(1000);
    let (dx, dy) = fx.control_centre(Control::Deny);
    fx.inject_pointer_motion(dx, dy);
    fx.inject_click(dx, dy);
    assert_eq!(fx.decision(&c).resolution, "user_denied");
    settle(&mut fx, &mut app);
    assert!(
        !app.seen.iter().any(|l| l.starts_with("activated ")),
        "no menu item was chosen: {:?}",
        app.seen
    );
}

#[test]
fn an_open_menu_closes_when_the_dialog_takes_the_keyboard() {
    let mut fx = Fixture::new(ONE);
    let (mut app, menu, _) = gtk_app(&mut fx);
    let at = (10, 10);
    fx.move_first_window(at.0, at.1);
    settle(&mut fx, &mut app);
    // A menu open as the dialog takes the keyboard is closed, its grab broken.
    open_menu(&mut fx, &mut app, at, menu);
    let c = fx.submit(intent("settings.change", json!({"key": "k", "value": "v"})));
    fx.pending(&c);
    fx.press_focus_shortcut();
    assert!(fx.dialog_has_keyboard());
    fx.pump_until("the menu to close", |fx| {
        fx.render();
        fx.popup_rects().is_empty()
    });
    assert!(!fx.keyboard_on_client(), "the keyboard stays the dialog's");
    // A click on the window gives the keyboard back (the overlay's rule); its menu then opens
    // with its grab again.
    open_menu(&mut fx, &mut app, at, menu);
    assert!(!fx.dialog_has_keyboard());
    fx.advance_clock(1000);
    fx.click(Control::Deny);
    assert_eq!(fx.decision(&c).resolution, "user_denied");
}

#[test]
fn gtk3_demo_runs_without_seat_criticals() {
    let mut fx = Fixture::new(ONE);
    let mut app = fx.spawn_app(fx.command("gtk3-demo"));
    fx.pump_until("gtk3-demo's window", |fx| {
        fx.render();
        fx.window_count() == 1
    });
    settle(&mut fx, &mut app);
    fx.inject_pointer_motion(100.0, 100.0);
    fx.inject_click(100.0, 100.0);
    settle(&mut fx, &mut app);
    let capture = fx.capture(0);
    fx.save_png(0, "apps-gtk3-demo");
    assert!(
        drawn_share(&capture, (40, 40, 200, 200)) > 0.9,
        "gtk3-demo drew"
    );
    let stderr = app.stderr();
    assert!(!stderr.contains("CRITICAL"), "gtk3-demo: {stderr}");
}

/// Whether a captured pixel is swaylock's `ff0000` background.
fn is_red(px: [u8; 4]) -> bool {
    px[0] > 0xf0 && px[1] < 0x10 && px[2] < 0x10
}

#[test]
fn swaylock_locks_every_output_and_unlocks_and_the_dialog_stays_above_it() {
    let mut fx = Fixture::new(&["640x480@0,0", "640x480@640,0"]);
    let (mut app, _, entry) = gtk_app(&mut fx);
    fx.move_first_window(20, 20);
    settle(&mut fx, &mut app);
    let mut command = fx.command("swaylock");
    command.args(["--no-unlock-indicator", "--color", "ff0000"]);
    let locker = fx.spawn_app(command);
    fx.pump_until("the session to lock", |fx| fx.locked());
    fx.pump_until("both lock surfaces drawn", |fx| {
        fx.render();
        is_red(fx.capture(0).pixel(100, 100)) && is_red(fx.capture(1).pixel(100, 100))
    });
    fx.save_png(0, "apps-locked");
    // Nothing of the window shows; its entry gets no key typed now.
    let capture = fx.capture(0);
    for (x, y) in [
        (30, 30),
        (20 + entry.0 as u32 + 10, 20 + entry.1 as u32 + 10),
        (630, 470),
    ] {
        assert!(is_red(capture.pixel(x, y)), "the desktop shows at {x},{y}");
    }
    fx.inject_click(40.0, 70.0);
    fx.inject_key(harness::KEY_A, true);
    fx.inject_key(harness::KEY_A, false);
    settle(&mut fx, &mut app);
    assert!(
        !app.seen.iter().any(|l| l.starts_with("entry ")),
        "a key reached the locked desktop: {:?}",
        app.seen
    );

    // A prompt while locked: the dialog is drawn above the lock surface and takes its input.
    let c = fx.submit(intent("settings.change", json!({"key": "k", "value": "v"})));
    fx.pending(&c);
    let r = fx.dialog_rect().unwrap();
    let index = fx.dialog_output().unwrap();
    let spec = fx.output_spec(index);
    let capture = fx.capture(index);
    fx.save_png(index, "apps-locked-dialog");
    let (cx, cy) = (
        (r.x - spec.x + r.w / 2) as u32,
        (r.y - spec.y + r.h / 2) as u32,
    );
    assert!(
        !is_red(capture.pixel(cx, cy)),
        "the dialog is drawn above the lock"
    );
    let (lx, ly) = ((r.x - spec.x) as u32 / 2, 4);
    assert!(
        is_red(capture.pixel(lx, ly)),
        "the lock shows beside the dialog"
    );
    fx.advance_clock(1000);
    fx.click(Control::Deny);
    assert_eq!(fx.decision(&c).resolution, "user_denied");
    assert!(fx.locked(), "answering a prompt does not unlock");

    // swaylock unlocks on SIGUSR1 (its documented signal) and exits.
    // SAFETY: kill(2) on the pid of a child this test started and has not reaped.
    assert_eq!(unsafe { libc::kill(locker.id() as i32, libc::SIGUSR1) }, 0);
    fx.pump_until("the session to unlock", |fx| !fx.locked());
    fx.pump_until("the window to show again", |fx| {
        fx.render();
        !is_red(fx.capture(0).pixel(30, 30))
    });
    assert!(fx.keyboard_on_client(), "the window has the keyboard back");
    fx.save_png(0, "apps-unlocked");
}

#[test]
fn text_copied_in_foot_is_pasted_in_a_gtk_app_from_the_clipboard_and_the_primary_selection() {
    use harness::apps::{BTN_MIDDLE, KEY_C, KEY_LEFTCTRL, KEY_LEFTSHIFT, KEY_V};
    let mut fx = Fixture::new(&["1280x800@0,0"]);
    let (mut gtk, _, entry) = gtk_app(&mut fx);
    fx.move_first_window(760, 480);
    settle(&mut fx, &mut gtk);
    // foot fills its screen with one word, so a double click near its top-left selects it.
    let mut command = fx.command("foot");
    command.args([
        "sh",
        "-c",
        "for i in $(seq 40); do echo pcpclip pcpclip pcpclip; done; exec sleep 600",
    ]);
    let mut foot = fx.spawn_app(command);
    let pid = foot.id();
    fx.pump_until("foot's window", |fx| {
        fx.render();
        fx.window_location_of_pid(pid).is_some()
    });
    settle(&mut fx, &mut foot);
    settle(&mut fx, &mut foot);
    let (fx0, fy0) = fx.window_location_of_pid(pid).unwrap();
    fx.save_png(0, "apps-foot-and-gtk");
    let word = (f64::from(fx0 + 20), f64::from(fy0 + 120));
    fx.inject_click(word.0, word.1);
    fx.inject_click(word.0, word.1);
    settle(&mut fx, &mut foot);
    fx.chord(&[KEY_LEFTCTRL, KEY_LEFTSHIFT, KEY_C]);
    settle(&mut fx, &mut foot);
    // Into the GTK app's entry: Ctrl+V pastes the clipboard.
    let (ex, ey) = (
        f64::from(760 + entry.0 + 40),
        f64::from(480 + entry.1 + entry.3 / 2),
    );
    fx.inject_click(ex, ey);
    settle(&mut fx, &mut gtk);
    fx.chord(&[KEY_LEFTCTRL, KEY_V]);
    let line = gtk.wait_line(&mut fx, "entry ");
    assert_eq!(line, "entry pcpclip", "foot's stderr: {}", foot.stderr());
    // The middle button pastes the primary selection (foot's selected word) at the pointer.
    fx.click_button(BTN_MIDDLE, ex + 200.0, ey);
    gtk.wait_line(&mut fx, "entry pcpclippcpclip");
    settle(&mut fx, &mut gtk);
    fx.save_png(0, "apps-pasted");
    let stderr = foot.stderr();
    assert!(!stderr.contains("no clipboard"), "foot: {stderr}");
}

#[test]
fn wayland_info_lists_the_protocols_apps_need() {
    let mut fx = Fixture::new(ONE);
    let out = fx.run(fx.command("wayland-info"));
    assert!(out.status.success(), "{out:?}");
    let info = String::from_utf8_lossy(&out.stdout);
    for global in [
        "xdg_wm_base",
        "wl_data_device_manager",
        "zwp_primary_selection_device_manager_v1",
        "zxdg_decoration_manager_v1",
        "wp_viewporter",
        "wp_fractional_scale_manager_v1",
        "xdg_activation_v1",
        "ext_session_lock_manager_v1",
        "wp_presentation",
        "ext_idle_notifier_v1",
        "zwp_idle_inhibit_manager_v1",
    ] {
        assert!(
            info.contains(&format!("'{global}'")),
            "{global} missing: {info}"
        );
    }
}
