//! What a touch desktop asks of the compositor, with real clients: several touch points at once,
//! each delivered (with its motion) to the surface it went down on; interactive move and resize
//! from a pointer or a touch; maximize within what panels leave; pointer and touch input to
//! layer surfaces. And the dialog's rules across them: input on the dialog reaches no window,
//! and a touch ends where it began.

mod harness;

use std::sync::mpsc::Receiver;

use serde_json::json;
use wayland_protocols::xdg::shell::client::xdg_toplevel::ResizeEdge;
use wayland_protocols_wlr::layer_shell::v1::client::zwlr_layer_shell_v1::Layer;
use wayland_protocols_wlr::layer_shell::v1::client::zwlr_layer_surface_v1::Anchor;

use harness::shell::{self, OnPress, Role, Seen};
use harness::{Fixture, intent};

const OUTPUT: &[&str] = &["1280x720@0,0"];
const WINDOW: Role = Role::Toplevel { maximized: false };

/// Starts a client and pumps until it has drawn and the compositor has its buffer; returns it
/// and what it received until then.
fn up_seen(
    fx: &mut Fixture,
    app_id: &str,
    role: Role,
    size: (i32, i32),
    on_press: OnPress,
) -> (Receiver<Seen>, Vec<Seen>) {
    let rx = shell::spawn(fx.socket_path(), app_id, role, size, on_press);
    let mut seen = Vec::new();
    fx.pump_until(&format!("{app_id} to draw"), |fx| {
        fx.render();
        seen.extend(rx.try_iter());
        seen.contains(&Seen::Mapped)
    });
    // The client said so once it sent its commit: let the compositor read it.
    seen.extend(drain(fx, &rx));
    (rx, seen)
}

/// [`up_seen`], keeping only the client.
fn up(
    fx: &mut Fixture,
    app_id: &str,
    role: Role,
    size: (i32, i32),
    on_press: OnPress,
) -> Receiver<Seen> {
    up_seen(fx, app_id, role, size, on_press).0
}

/// Pumps a little and returns what the client received meanwhile.
fn drain(fx: &mut Fixture, rx: &Receiver<Seen>) -> Vec<Seen> {
    for _ in 0..10 {
        fx.pump();
    }
    rx.try_iter().collect()
}

fn touches(seen: &[Seen]) -> Vec<Seen> {
    seen.iter()
        .filter(|s| {
            matches!(
                s,
                Seen::TouchDown(..) | Seen::TouchMotion(..) | Seen::TouchUp(_) | Seen::TouchCancel
            )
        })
        .cloned()
        .collect()
}

fn pointer(seen: &[Seen]) -> Vec<Seen> {
    seen.iter()
        .filter(|s| {
            matches!(
                s,
                Seen::PointerEnter(..) | Seen::PointerLeave | Seen::Motion(..) | Seen::Button(_)
            )
        })
        .cloned()
        .collect()
}

/// A prompt waiting in the (non-modal) dialog; returns its client (keep it alive).
fn prompt(fx: &mut Fixture) -> harness::AsyncIntent {
    let c = fx.submit(intent("settings.change", json!({"key": "k", "value": "v"})));
    fx.pending(&c);
    assert!(fx.dialog_open());
    c
}

#[test]
fn several_touch_points_each_stay_with_the_surface_they_went_down_on() {
    let mut fx = Fixture::new(OUTPUT);
    let a = up(
        &mut fx,
        "org.example.A",
        WINDOW,
        (200, 200),
        OnPress::Nothing,
    );
    let b = up(
        &mut fx,
        "org.example.B",
        WINDOW,
        (200, 200),
        OnPress::Nothing,
    );
    fx.move_window_of("org.example.A", 100, 100);
    fx.move_window_of("org.example.B", 500, 100);
    drain(&mut fx, &a);
    drain(&mut fx, &b);
    fx.inject_touch_down_at(0, 150.0, 150.0);
    fx.inject_touch_down_at(1, 550.0, 160.0);
    // The first finger slides over B: it is still A's, outside A's surface.
    fx.inject_touch_motion(0, 560.0, 170.0);
    fx.inject_touch_motion(1, 570.0, 180.0);
    fx.inject_touch_up_at(1);
    fx.inject_touch_up_at(0);
    assert_eq!(
        touches(&drain(&mut fx, &a)),
        [
            Seen::TouchDown(0, 50.0, 50.0),
            Seen::TouchMotion(0, 460.0, 70.0),
            Seen::TouchUp(0)
        ]
    );
    assert_eq!(
        touches(&drain(&mut fx, &b)),
        [
            Seen::TouchDown(1, 50.0, 60.0),
            Seen::TouchMotion(1, 70.0, 80.0),
            Seen::TouchUp(1)
        ]
    );
}

#[test]
fn a_cancel_reaches_every_point_and_ends_them() {
    let mut fx = Fixture::new(OUTPUT);
    let a = up(
        &mut fx,
        "org.example.A",
        WINDOW,
        (300, 300),
        OnPress::Nothing,
    );
    fx.move_window_of("org.example.A", 0, 0);
    drain(&mut fx, &a);
    fx.inject_touch_down_at(4, 10.0, 10.0);
    fx.inject_touch_down_at(5, 20.0, 20.0);
    fx.inject_touch_cancel();
    // Points cancelled are gone: their later motion and up reach no one.
    fx.inject_touch_motion(4, 30.0, 30.0);
    fx.inject_touch_up_at(4);
    fx.inject_touch_up_at(5);
    let seen = touches(&drain(&mut fx, &a));
    assert_eq!(
        seen[..2],
        [
            Seen::TouchDown(4, 10.0, 10.0),
            Seen::TouchDown(5, 20.0, 20.0)
        ]
    );
    // (Each point's place may be repeated before the cancel: the client drops the sequence.)
    assert_eq!(seen.last(), Some(&Seen::TouchCancel), "{seen:?}");
    assert!(
        !seen
            .iter()
            .any(|s| matches!(s, Seen::TouchUp(_) | Seen::TouchMotion(_, 30.0, 30.0))),
        "{seen:?}"
    );
}

#[test]
fn a_touch_that_began_on_a_window_ends_there_and_one_on_the_dialog_reaches_no_window() {
    let mut fx = Fixture::new(OUTPUT);
    let a = up(
        &mut fx,
        "org.example.A",
        WINDOW,
        (1280, 720),
        OnPress::Nothing,
    );
    fx.move_window_of("org.example.A", 0, 0);
    let _asking = prompt(&mut fx);
    let rect = fx.dialog_rect().expect("the dialog is placed");
    let (cx, cy) = (
        f64::from(rect.x) + f64::from(rect.w) / 2.0,
        f64::from(rect.y) + f64::from(rect.h) / 2.0,
    );
    drain(&mut fx, &a);
    // Down on the window, over the dialog, back, up: the window never learns where the finger
    // was on the dialog, and gets its up.
    fx.inject_touch_down_at(0, 10.0, 10.0);
    fx.inject_touch_motion(0, cx, cy);
    fx.inject_touch_motion(0, 20.0, 20.0);
    fx.inject_touch_up_at(0);
    // Down on the dialog (its top-left corner, no control), onto the window, up there.
    let (dx, dy) = (f64::from(rect.x) + 3.0, f64::from(rect.y) + 3.0);
    fx.inject_touch_down_at(1, dx, dy);
    fx.inject_touch_motion(1, 5.0, 700.0);
    fx.inject_touch_up_at(1);
    assert_eq!(
        touches(&drain(&mut fx, &a)),
        [
            Seen::TouchDown(0, 10.0, 10.0),
            Seen::TouchMotion(0, 20.0, 20.0),
            Seen::TouchUp(0)
        ]
    );
    assert!(fx.dialog_open(), "no touch answered the prompt");
}

#[test]
fn a_pointer_press_moves_its_window_but_not_while_it_is_on_the_dialog() {
    let mut fx = Fixture::new(OUTPUT);
    let m = up(
        &mut fx,
        "org.example.Move",
        WINDOW,
        (300, 200),
        OnPress::Move,
    );
    fx.move_window_of("org.example.Move", 100, 100);
    fx.inject_pointer_motion(150.0, 150.0);
    fx.inject_pointer_button(true);
    let mut seen = drain(&mut fx, &m);
    fx.inject_pointer_motion(250.0, 190.0);
    assert_eq!(fx.window_location_of("org.example.Move"), Some((200, 140)));
    seen.extend(drain(&mut fx, &m));
    assert!(
        pointer(&seen).contains(&Seen::PointerLeave),
        "no client has the pointer during a move: {seen:?}"
    );
    // A prompt appears; the pointer, still pressed, goes onto the dialog: the window stays.
    let _asking = prompt(&mut fx);
    let rect = fx.dialog_rect().expect("the dialog is placed");
    let on_dialog = (
        f64::from(rect.x) + f64::from(rect.w) / 2.0,
        f64::from(rect.y) + 5.0,
    );
    fx.inject_pointer_motion(on_dialog.0, on_dialog.1);
    assert_eq!(fx.window_location_of("org.example.Move"), Some((200, 140)));
    // Released on the dialog: the move ends (the press ends where it began), nothing answered.
    fx.inject_pointer_button(false);
    fx.inject_pointer_motion(20.0, 20.0);
    assert_eq!(fx.window_location_of("org.example.Move"), Some((200, 140)));
    assert!(fx.dialog_open());
}

#[test]
fn a_touch_moves_its_window_and_lifts_on_it() {
    let mut fx = Fixture::new(OUTPUT);
    let m = up(
        &mut fx,
        "org.example.Move",
        WINDOW,
        (300, 200),
        OnPress::Move,
    );
    fx.move_window_of("org.example.Move", 100, 100);
    fx.inject_touch_down_at(0, 150.0, 150.0);
    drain(&mut fx, &m);
    fx.inject_touch_motion(0, 200.0, 170.0);
    assert_eq!(fx.window_location_of("org.example.Move"), Some((150, 120)));
    fx.inject_touch_up_at(0);
    fx.inject_touch_motion(0, 400.0, 400.0);
    assert_eq!(fx.window_location_of("org.example.Move"), Some((150, 120)));
    let seen = touches(&drain(&mut fx, &m));
    assert_eq!(
        seen,
        [Seen::TouchUp(0)],
        "the moving finger's up reaches its window"
    );
}

#[test]
fn a_top_left_resize_keeps_the_far_corner_where_it_was() {
    let mut fx = Fixture::new(OUTPUT);
    let r = up(
        &mut fx,
        "org.example.Resize",
        WINDOW,
        (200, 100),
        OnPress::Resize(ResizeEdge::TopLeft),
    );
    fx.move_window_of("org.example.Resize", 300, 300);
    fx.inject_pointer_motion(310.0, 310.0);
    fx.inject_pointer_button(true);
    drain(&mut fx, &r);
    fx.inject_pointer_motion(290.0, 280.0);
    fx.pump_until("the client to draw its new size", |fx| {
        fx.window_rect_of("org.example.Resize") == Some((280, 270, 220, 130))
    });
    fx.inject_pointer_button(false);
    let configures: Vec<Seen> = drain(&mut fx, &r)
        .into_iter()
        .filter(|s| matches!(s, Seen::Configure { .. }))
        .collect();
    assert!(
        configures
            .iter()
            .any(|c| matches!(c, Seen::Configure { w: 220, h: 130, .. })),
        "{configures:?}"
    );
    assert_eq!(
        fx.window_rect_of("org.example.Resize"),
        Some((280, 270, 220, 130))
    );
}

#[test]
fn a_maximized_window_fills_what_a_panel_leaves() {
    let mut fx = Fixture::new(OUTPUT);
    let panel = Role::Layer {
        layer: Layer::Top,
        anchor: Anchor::Top | Anchor::Left | Anchor::Right,
        exclusive: 30,
    };
    let _panel = up(&mut fx, "panel", panel, (0, 30), OnPress::Nothing);
    let (w, mut seen) = up_seen(
        &mut fx,
        "org.example.Max",
        Role::Toplevel { maximized: true },
        (100, 100),
        OnPress::Nothing,
    );
    fx.pump_until("the maximized size drawn", |fx| {
        fx.window_rect_of("org.example.Max") == Some((0, 30, 1280, 690))
    });
    seen.extend(drain(&mut fx, &w));
    assert!(
        seen.iter().any(|s| matches!(
            s,
            Seen::Configure {
                w: 1280,
                h: 690,
                maximized: true,
                ..
            }
        )),
        "{seen:?}"
    );
}

#[test]
fn pointer_and_touch_reach_a_layer_surface_above_the_windows_and_not_through_the_dialog() {
    let mut fx = Fixture::new(OUTPUT);
    let window = up(
        &mut fx,
        "org.example.A",
        WINDOW,
        (1280, 720),
        OnPress::Nothing,
    );
    fx.move_window_of("org.example.A", 0, 0);
    let bar = Role::Layer {
        layer: Layer::Top,
        anchor: Anchor::Bottom | Anchor::Left | Anchor::Right,
        exclusive: 0,
    };
    let layer = up(&mut fx, "bar", bar, (0, 40), OnPress::Nothing);
    drain(&mut fx, &window);
    fx.inject_pointer_motion(100.0, 700.0);
    fx.inject_pointer_button(true);
    fx.inject_pointer_button(false);
    fx.inject_touch_down_at(0, 200.0, 710.0);
    fx.inject_touch_up_at(0);
    assert_eq!(
        pointer(&drain(&mut fx, &layer)),
        [
            Seen::PointerEnter(100.0, 20.0),
            Seen::Button(true),
            Seen::Button(false)
        ]
    );
    let seen = drain(&mut fx, &layer);
    assert!(seen.is_empty(), "{seen:?}");
    let on_window = drain(&mut fx, &window);
    // It had the pointer before (the pointer rested on it): it is told it left, nothing more.
    assert!(
        pointer(&on_window).iter().all(|s| *s == Seen::PointerLeave),
        "{on_window:?}"
    );
    assert!(touches(&on_window).is_empty(), "{on_window:?}");
    // With a prompt up, the dialog is above the bar: a press on it reaches neither client.
    let _asking = prompt(&mut fx);
    let rect = fx.dialog_rect().expect("placed");
    fx.inject_touch_down_at(1, f64::from(rect.x) + 3.0, f64::from(rect.y) + 3.0);
    fx.inject_touch_up_at(1);
    assert!(touches(&drain(&mut fx, &layer)).is_empty());
    assert!(touches(&drain(&mut fx, &window)).is_empty());
}

/// Checks one client's touch stream: a down only for an id not down, motion and up only for an
/// id down, a cancel ends them all, and nothing is left down at the end.
fn well_formed(seen: &[Seen]) -> Result<usize, String> {
    let mut down = std::collections::HashSet::new();
    let mut downs = 0;
    for (i, s) in touches(seen).iter().enumerate() {
        let ok = match s {
            Seen::TouchDown(id, ..) => {
                downs += 1;
                down.insert(*id)
            }
            Seen::TouchMotion(id, ..) => down.contains(id),
            Seen::TouchUp(id) => down.remove(id),
            Seen::TouchCancel => {
                down.clear();
                true
            }
            _ => true,
        };
        if !ok {
            return Err(format!("event {i}: {s:?} (down: {down:?})"));
        }
    }
    if down.is_empty() {
        Ok(downs)
    } else {
        Err(format!("left down: {down:?}"))
    }
}

#[test]
fn random_touch_sequences_over_two_windows_and_the_dialog_reach_each_client_well_formed() {
    let mut fx = Fixture::new(OUTPUT);
    let a = up(
        &mut fx,
        "org.example.A",
        WINDOW,
        (640, 720),
        OnPress::Nothing,
    );
    let b = up(
        &mut fx,
        "org.example.B",
        WINDOW,
        (640, 720),
        OnPress::Nothing,
    );
    fx.move_window_of("org.example.A", 0, 0);
    fx.move_window_of("org.example.B", 640, 0);
    let asking = prompt(&mut fx);
    let (mut seen_a, mut seen_b) = (drain(&mut fx, &a), drain(&mut fx, &b));
    // xorshift64: the same sequence every run.
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut down = [false; 6];
    for step in 0..800 {
        let r = next();
        let slot = (r % 6) as usize;
        let (x, y) = (((r >> 8) % 1280) as f64, ((r >> 24) % 720) as f64);
        match (r >> 40) % 9 {
            0..=2 if !down[slot] => {
                fx.inject_touch_down_at(slot as u32, x, y);
                down[slot] = true;
            }
            3..=5 if down[slot] => fx.inject_touch_motion(slot as u32, x, y),
            6 | 7 if down[slot] => {
                fx.inject_touch_up_at(slot as u32);
                down[slot] = false;
            }
            8 if step % 97 == 0 => {
                fx.inject_touch_cancel();
                down = [false; 6];
            }
            _ => {}
        }
        if step % 20 == 0 {
            seen_a.extend(drain(&mut fx, &a));
            seen_b.extend(drain(&mut fx, &b));
        }
    }
    for (slot, is_down) in down.iter().enumerate() {
        if *is_down {
            fx.inject_touch_up_at(slot as u32);
        }
    }
    seen_a.extend(drain(&mut fx, &a));
    seen_b.extend(drain(&mut fx, &b));
    let downs_a = well_formed(&seen_a).unwrap_or_else(|e| panic!("A: {e}"));
    let downs_b = well_formed(&seen_b).unwrap_or_else(|e| panic!("B: {e}"));
    assert!(downs_a > 10 && downs_b > 10, "({downs_a}, {downs_b}) downs");
    // The guard never became ready on the harness's frozen clock: no touch approved. Deny
    // needs no guard, so a random tap may have refused it.
    if !fx.dialog_open() {
        assert_eq!(fx.decision(&asking).resolution, "user_denied");
    }
}

#[test]
fn a_client_asking_to_move_with_another_windows_press_is_ignored() {
    let mut fx = Fixture::new(OUTPUT);
    let a = up(
        &mut fx,
        "org.example.A",
        WINDOW,
        (300, 200),
        OnPress::Nothing,
    );
    let thief = up(
        &mut fx,
        "org.example.Thief",
        WINDOW,
        (300, 200),
        OnPress::StealMoves,
    );
    fx.move_window_of("org.example.A", 100, 100);
    fx.move_window_of("org.example.Thief", 600, 100);
    // A press on A (the thief loses the keyboard and asks to be moved with every serial) and
    // a touch on A, both held while they move.
    fx.inject_pointer_motion(150.0, 150.0);
    fx.inject_pointer_button(true);
    fx.inject_touch_down_at(0, 200.0, 200.0);
    let seen = drain(&mut fx, &thief);
    assert!(
        seen.iter().any(|s| matches!(
            s,
            Seen::Configure {
                activated: false,
                ..
            }
        )),
        "the thief asked: {seen:?}"
    );
    fx.inject_pointer_motion(400.0, 400.0);
    fx.inject_touch_motion(0, 500.0, 500.0);
    assert_eq!(fx.window_location_of("org.example.Thief"), Some((600, 100)));
    assert_eq!(fx.window_location_of("org.example.A"), Some((100, 100)));
    // A's press and touch are still A's.
    fx.inject_pointer_button(false);
    fx.inject_touch_up_at(0);
    let on_a = drain(&mut fx, &a);
    assert!(on_a.contains(&Seen::Button(false)), "{on_a:?}");
    assert!(on_a.contains(&Seen::TouchUp(0)), "{on_a:?}");
}
