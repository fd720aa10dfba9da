//! The hostile-client attacks the dialog itself must defeat, performed against the dialog as the
//! compositor drives it (injected clock, logical input coordinates):
//!
//! - text that hides its tail (NBSP padding, bidi and zero-width characters, stacks of marks,
//!   sheer length), and a body too long to see at once: Approve waits until it has been seen;
//! - typing through the dialog (Tab Tab Enter while a prompt appears);
//! - swapping one prompt for another under the pointer or a held key;
//! - a queue that changes all the time, which must not keep re-arming the guard.

use pcp_overlay::dialog::layout_state;
use pcp_overlay::{
    Choice, Config, ConfirmDialog, Control, DialogContent, Fonts, Key, KeyState, Layout, Modality,
    Requester, Risk,
};

const OUT: (u32, u32) = (1920, 1080);

fn content(action: &str) -> DialogContent {
    DialogContent {
        requester: Requester::Unconfined {
            executable: "/home/u/.local/bin/agent".into(),
            pid: 4242,
        },
        declared_app_id: Some("Files".into()),
        icon: None,
        action: action.into(),
        target: "/tmp/x".into(),
        steps: vec![],
        extra_params: vec![],
        challenge: None,
        risk: Risk::Privileged,
        modalities: vec![Modality::Visual],
        seconds_left: 30,
        timeout_seconds: 30,
        queued: 0,
        press_and_hold: false,
        voice_unavailable: None,
        offer_session: false,
        entry: false,
        entry_account: false,
    }
}

fn fonts() -> Fonts {
    Fonts::with_files::<&str>(&[]).unwrap()
}

fn dialog() -> ConfirmDialog {
    ConfirmDialog::new(Config::default(), fonts())
}

fn centre(d: &ConfirmDialog, c: Control) -> (f64, f64) {
    let [x, y, w, h] = d.control_bounds(c).unwrap();
    (x + w / 2.0, y + h / 2.0)
}

fn click(d: &mut ConfirmDialog, c: Control, at: u64) -> Option<Choice> {
    let (x, y) = centre(d, c);
    assert_eq!(d.pointer_down(x, y, at), None);
    d.pointer_up(x, y, at + 20)
}

/// What was shaped, without the left-to-right marks the layout adds around separators.
fn shaped(t: &pcp_overlay::layout::Placed) -> String {
    t.text.text().replace('\u{200e}', "")
}

fn all_text(l: &Layout) -> Vec<String> {
    l.texts.iter().chain(&l.body_texts).map(shaped).collect()
}

// ---- Attack 4: text that hides its tail -------------------------------------------------

#[test]
fn nbsp_padding_cannot_push_the_tail_out_of_sight() {
    let mut c = content(&format!("Delete /tmp/x{}; rm -rf ~", "\u{a0}".repeat(300)));
    c.target = format!("/tmp/x{}; rm -rf ~", " ".repeat(300));
    for output in [(800, 480), (1920, 1080)] {
        let l = layout_state(&mut fonts(), &Config::default(), &c, 1.0, output).unwrap();
        let action = &l.body_texts[0];
        assert_eq!(shaped(action), "Delete /tmp/x<U+00A0 ×300>; rm -rf ~");
        assert!(
            action.text.is_whole(),
            "the action is shown whole at {output:?}"
        );
        let target = l
            .body_texts
            .iter()
            .find(|t| t.role == pcp_overlay::layout::Role::Text && shaped(t).starts_with("/tmp/x"));
        let target = target.expect("the target is listed");
        assert_eq!(shaped(target), "/tmp/x<U+0020 ×300>; rm -rf ~");
        assert!(target.text.is_whole());
    }
}

#[test]
fn direction_and_invisible_characters_are_written_out() {
    let mut c = content("Delete report\u{202e}fdp.exe");
    c.target = "/home/u/\u{200f}save/\u{200b}docs/\u{2066}x\u{2069}".into();
    c.steps = vec!["Copy\u{feff} it".into()];
    c.extra_params = vec![("mode\u{200d}".into(), "fast\u{061c}".into())];
    let l = layout_state(&mut fonts(), &Config::default(), &c, 1.0, OUT).unwrap();
    let text = all_text(&l).join("|");
    for code in [
        "<U+202E>", "<U+200F>", "<U+200B>", "<U+2066>", "<U+2069>", "<U+FEFF>", "<U+200D>",
        "<U+061C>",
    ] {
        assert!(text.contains(code), "{code} missing from {text}");
    }
    // Nothing the client sent survives as an invisible character (ours are only LRMs).
    let hidden = text
        .chars()
        .filter(|&ch| pcp_overlay::visible::is_hidden(ch) && ch != '\u{200e}')
        .count();
    assert_eq!(hidden, 0, "{text:?}");
}

#[test]
fn a_stack_of_combining_marks_is_cut_to_a_few() {
    let c = content(&format!("Z{} done", "\u{301}".repeat(500)));
    let l = layout_state(&mut fonts(), &Config::default(), &c, 1.0, OUT).unwrap();
    assert_eq!(
        shaped(&l.body_texts[0]),
        "Z\u{301}\u{301}\u{301}<U+0301 ×497> done"
    );
}

#[test]
fn length_is_capped_before_shaping_with_a_visible_mark_and_the_same_for_speech() {
    let config = Config {
        max_text_chars: 300,
        ..Config::default()
    };
    let long = "x".repeat(1 << 20);
    let c = content(&long);
    let l = layout_state(&mut fonts(), &config, &c, 1.0, OUT).unwrap();
    let shown = l.body_texts[0].text.text();
    assert!(
        shown.ends_with(" … [1048276 more characters not shown]"),
        "{}",
        &shown[280..]
    );
    // What the spoken question should say is the same text.
    assert_eq!(config.visible_text(&long), shown);
    assert_eq!(config.visible_text("Delete \u{200f}x"), "Delete <U+200F>x");
}

#[test]
fn every_client_string_is_drawn_in_its_own_box() {
    let mut c = content("Delete everything");
    c.steps = (0..6).map(|i| format!("step {i}")).collect();
    c.extra_params = vec![("recursive".into(), "true".into())];
    let l = layout_state(&mut fonts(), &Config::default(), &c, 2.0, OUT).unwrap();
    l.check_inside().unwrap();
    // No two client strings share pixels: boxes are disjoint.
    let boxes: Vec<_> = l.body_texts.iter().map(|t| t.bounds()).collect();
    for (i, a) in boxes.iter().enumerate() {
        for b in &boxes[i + 1..] {
            assert!(a.intersect(b).is_empty(), "{a:?} overlaps {b:?}");
        }
    }
}

/// A prompt whose body does not fit on an 800×480 panel: 20 steps.
fn long_prompt() -> DialogContent {
    let mut c = content("Run the cleanup script");
    c.steps = (1..=20)
        .map(|i| format!("Step {i}: remove the files of project {i}"))
        .collect();
    c.steps[19] = "Step 20: rm -rf ~".into();
    c
}

fn panel() -> ConfirmDialog {
    let mut d = dialog();
    d.show(long_prompt(), 0).unwrap();
    d.render(1.0, (800, 480)).unwrap();
    d.advance(1000);
    d.render(1.0, (800, 480)).unwrap();
    d
}

#[test]
fn approve_waits_until_the_body_was_scrolled_into_view_by_the_wheel() {
    let mut d = panel();
    assert!(d.body_scrolls());
    assert!(!d.live().unwrap().read_all);
    // Approve takes nothing yet; Deny always does.
    assert_eq!(click(&mut d, Control::Approve, 1000), None);
    assert!(d.is_open());
    // Scrolling part of the way is not enough.
    d.scroll(40.0);
    d.render(1.0, (800, 480)).unwrap();
    assert_eq!(click(&mut d, Control::Approve, 1100), None);
    // To the end (the wheel may overshoot): the rest is read once it has been drawn.
    d.scroll(10_000.0);
    let (x, y) = centre(&d, Control::Approve);
    assert_eq!(d.pointer_down(x, y, 1200), None, "not drawn yet");
    assert_eq!(d.pointer_up(x, y, 1210), None);
    d.render(1.0, (800, 480)).unwrap();
    assert!(d.live().unwrap().read_all);
    // Scrolling back up does not make the user unread it.
    d.scroll(-10_000.0);
    d.render(1.0, (800, 480)).unwrap();
    assert_eq!(click(&mut d, Control::Approve, 1300), Some(Choice::Approve));
}

#[test]
fn a_touch_drag_on_the_body_scrolls_it() {
    let mut d = panel();
    let [bx, by, bw, bh] = d.body_bounds().unwrap();
    let (x, y0) = (bx + bw / 2.0, by + bh - 2.0);
    // Drag the content up, in strokes as long as the view, until the end shows.
    for stroke in 0..40 {
        assert_eq!(d.pointer_down(x, y0, 1000 + stroke), None);
        d.pointer_motion(x, by + 1.0);
        assert_eq!(d.pointer_up(x, by + 1.0, 1000 + stroke), None);
        d.render(1.0, (800, 480)).unwrap();
    }
    assert!(d.live().unwrap().read_all);
    assert_eq!(click(&mut d, Control::Approve, 2000), Some(Choice::Approve));
}

#[test]
fn keys_scroll_the_body_when_the_dialog_has_the_keyboard() {
    let mut d = panel();
    d.set_keyboard_focus(true);
    d.key(Key::Down, KeyState::Pressed, 1000);
    d.render(1.0, (800, 480)).unwrap();
    let after_line = d.live().unwrap().scroll;
    assert!(after_line > 0.0);
    d.key(Key::PageDown, KeyState::Pressed, 1010);
    assert!(d.live().unwrap().scroll > after_line + 20.0);
    d.key(Key::Home, KeyState::Pressed, 1020);
    assert_eq!(d.live().unwrap().scroll, 0.0);
    d.key(Key::End, KeyState::Pressed, 1030);
    d.render(1.0, (800, 480)).unwrap();
    assert!(d.live().unwrap().read_all);
    for _ in 0..2 {
        d.key(Key::Tab { shift: false }, KeyState::Pressed, 1040);
    }
    assert_eq!(d.live().unwrap().focus, Some(Control::Approve));
    d.key(Key::Enter, KeyState::Pressed, 1050);
    assert_eq!(
        d.key(Key::Enter, KeyState::Released, 1060),
        Some(Choice::Approve)
    );
}

#[test]
fn unread_content_is_shown_as_such_in_pixels() {
    // The hint row says more is below, Approve is drawn disabled; both change once read.
    let mut d = panel();
    let before = d.render(1.0, (800, 480)).unwrap().pixmap.clone();
    let (hint, approve) = {
        let l = d.layout().unwrap();
        (l.scroll_hint.unwrap(), l.approve)
    };
    d.scroll(10_000.0);
    let after = d.render(1.0, (800, 480)).unwrap().pixmap.clone();
    let differs = |r: pcp_overlay::IRect| {
        (r.y..r.bottom()).any(|y| {
            (r.x..r.right())
                .any(|x| before.pixel(x as u32, y as u32) != after.pixel(x as u32, y as u32))
        })
    };
    assert!(
        differs(hint),
        "the hint changes from more-below to more-above"
    );
    assert!(differs(approve), "Approve is drawn enabled once read");
}

// ---- Attack 5: typing through the dialog -------------------------------------------------

#[test]
fn tab_tab_enter_typed_as_the_prompt_appears_does_nothing() {
    let mut d = dialog();
    d.show(content("Change settings"), 0).unwrap();
    // Modal: the dialog has the keyboard as it appears, as the compositor gives it today.
    d.set_keyboard_focus(true);
    d.render(1.0, OUT).unwrap();
    // A user typing in a terminal: Tab Tab Enter, each key pressed and released.
    for (i, key) in [
        Key::Tab { shift: false },
        Key::Tab { shift: false },
        Key::Enter,
    ]
    .into_iter()
    .enumerate()
    {
        let t = 100 + 150 * i as u64;
        assert_eq!(d.key(key, KeyState::Pressed, t), None);
        assert_eq!(d.key(key, KeyState::Released, t + 60), None);
    }
    // Not even the focus moved.
    assert_eq!(d.live().unwrap().focus, None);
    assert!(d.is_open());
    // The typing pushed the guard on (last key at 400 → ready at 900, not 750).
    assert_eq!(
        d.key(Key::Tab { shift: false }, KeyState::Pressed, 800),
        None
    );
    assert_eq!(d.live().unwrap().focus, None);
}

#[test]
fn keyboard_approval_needs_press_and_release_both_after_the_guard() {
    let mut d = dialog();
    d.show(content("Change settings"), 0).unwrap();
    d.set_keyboard_focus(true);
    d.render(1.0, OUT).unwrap();
    for _ in 0..2 {
        d.key(Key::Tab { shift: false }, KeyState::Pressed, 1000);
    }
    assert_eq!(d.live().unwrap().focus, Some(Control::Approve));
    // The dialog moves (another output): the guard starts again at 1100.
    d.moved(1100);
    // Pressed inside the guard, released after it: nothing.
    assert_eq!(d.key(Key::Enter, KeyState::Pressed, 1200), None);
    assert_eq!(d.key(Key::Enter, KeyState::Released, 2500), None);
    // A release alone (its press was never seen) does nothing either.
    assert_eq!(d.key(Key::Space, KeyState::Released, 2600), None);
    // A press alone does nothing yet...
    assert_eq!(d.key(Key::Enter, KeyState::Pressed, 2700), None);
    assert!(d.is_open());
    // ...its release answers.
    assert_eq!(
        d.key(Key::Enter, KeyState::Released, 2720),
        Some(Choice::Approve)
    );
}

// ---- Attack 6: swapping under the cursor -------------------------------------------------

#[test]
fn a_click_that_began_on_the_old_prompt_does_nothing_on_the_new_one() {
    let mut d = dialog();
    d.show(content("Prompt A"), 0).unwrap();
    d.render(1.0, OUT).unwrap();
    d.advance(1000);
    let (x, y) = centre(&d, Control::Approve);
    // The user presses Approve on A; A is withdrawn and B takes its place under the pointer.
    assert_eq!(d.pointer_down(x, y, 1000), None);
    d.show(content("Prompt B"), 1050).unwrap();
    d.render(1.0, OUT).unwrap();
    assert_eq!(
        centre(&d, Control::Approve),
        (x, y),
        "B's Approve is under the pointer"
    );
    // The release lands after B's guard: still nothing, the press was A's.
    assert_eq!(d.pointer_up(x, y, 2000), None);
    // A press inside B's guard does nothing either.
    assert_eq!(d.pointer_down(x, y, 1100), None);
    assert_eq!(d.pointer_up(x, y, 1150), None);
    // A whole click after B's guard (pushed on by the early press) is B's approval.
    d.advance(2500);
    assert_eq!(click(&mut d, Control::Approve, 2500), Some(Choice::Approve));
}

#[test]
fn a_key_or_a_hold_that_began_before_a_swap_does_nothing() {
    let mut d = dialog();
    d.show(content("Prompt A"), 0).unwrap();
    d.set_keyboard_focus(true);
    d.render(1.0, OUT).unwrap();
    for _ in 0..2 {
        d.key(Key::Tab { shift: false }, KeyState::Pressed, 1000);
    }
    assert_eq!(d.key(Key::Enter, KeyState::Pressed, 1000), None);
    d.show(content("Prompt B"), 1050).unwrap();
    d.render(1.0, OUT).unwrap();
    assert_eq!(d.key(Key::Enter, KeyState::Released, 2000), None);
    assert_eq!(
        d.live().unwrap().focus,
        None,
        "B starts with nothing focused"
    );

    // A press-and-hold on A, swapped for B mid-hold: the hold does not finish on B.
    let mut hold = content("Prompt A");
    hold.press_and_hold = true;
    let mut d = dialog();
    d.show(hold.clone(), 0).unwrap();
    d.render(1.0, OUT).unwrap();
    d.advance(1000);
    let (x, y) = centre(&d, Control::Approve);
    assert_eq!(d.pointer_down(x, y, 1000), None);
    assert_eq!(d.advance(1500), None);
    hold.action = "Prompt B".into();
    d.show(hold, 1600).unwrap();
    d.render(1.0, OUT).unwrap();
    for t in [2000, 2500, 3000] {
        assert_eq!(d.advance(t), None);
    }
    assert_eq!(d.pointer_up(x, y, 3000), None);
    assert_eq!(d.live().unwrap().hold_progress, 0.0);
}

// ---- Attack 7: a queue that keeps changing -------------------------------------------------

#[test]
fn queue_changes_update_the_badge_and_never_rearm_the_guard() {
    let mut d = dialog();
    d.show(content("Prompt"), 0).unwrap();
    let first = d.render(1.0, OUT).unwrap().pixmap.clone();
    // Another client submits and cancels every 100 ms.
    for t in (100..=700).step_by(100) {
        d.set_queued((t / 100 % 2) as u32 + 1);
        let damage = d.render(1.0, OUT).unwrap().damage;
        let badge = d.layout().unwrap().badge;
        assert!(damage.iter().all(|r| *r == badge), "{damage:?}");
    }
    d.set_queued(3);
    let badge = d.layout().unwrap().badge;
    let r = d.render(1.0, OUT).unwrap();
    assert_eq!(r.damage, vec![badge]);
    // The badge shows it (pixels: the pill is drawn where there was card).
    let px = |p: &tiny_skia::Pixmap, x: i32, y: i32| p.pixel(x as u32, y as u32);
    let changed = (badge.y..badge.bottom())
        .any(|y| (badge.x..badge.right()).any(|x| px(r.pixmap, x, y) != px(&first, x, y)));
    assert!(changed);
    assert_eq!(d.live().unwrap().queued, Some(3));
    // The guard still counts from 0: ready at 750.
    d.advance(760);
    assert_eq!(click(&mut d, Control::Approve, 760), Some(Choice::Approve));
}
