//! The dialog as the compositor drives it: hit-testing at control edges for each scale, the
//! guard and keyboard rules on an injected clock, press-and-hold, damage that matches a full
//! render, and layouts that stay inside the dialog and the output.

use pcp_overlay::content::Icon;
use pcp_overlay::dialog::render_state;
use pcp_overlay::{
    Choice, Config, ConfirmDialog, Control, DialogContent, Fonts, HapticState, Key, KeyState,
    Layout, LiveState, Modality, Requester, Risk, VoiceState,
};

const SCALES: [f64; 5] = [1.0, 1.25, 1.5, 2.0, 3.0];

fn content(risk: Risk) -> DialogContent {
    DialogContent {
        requester: Requester::Sandboxed {
            engine: "flatpak".into(),
            app_id: "org.gnome.Nautilus".into(),
        },
        declared_app_id: Some("Files".into()),
        icon: None,
        action: "Delete report.pdf".into(),
        target: "/home/u/report.pdf".into(),
        steps: vec![],
        extra_params: vec![],
        challenge: None,
        risk,
        modalities: vec![Modality::Visual, Modality::Voice, Modality::Haptic],
        seconds_left: 27,
        timeout_seconds: 30,
        queued: 2,
        // As the gate asks when voice is unavailable: these tests exercise the hold.
        press_and_hold: matches!(risk, Risk::Destructive | Risk::System),
        voice_unavailable: None,
        offer_session: false,
        entry: false,
        entry_account: false,
    }
}

fn dialog(config: Config) -> ConfirmDialog {
    ConfirmDialog::new(config, Fonts::with_files::<&str>(&[]).unwrap())
}

/// A shown and rendered dialog with the keyboard, whose guard is ready at t = 1000.
fn ready(risk: Risk, scale: f64) -> ConfirmDialog {
    let mut d = dialog(Config::default());
    d.show(content(risk), 0).unwrap();
    d.set_keyboard_focus(true);
    d.render(scale, (1920, 1080)).unwrap();
    assert_eq!(d.advance(1000), None);
    d
}

fn centre(d: &ConfirmDialog, c: Control) -> (f64, f64) {
    let [x, y, w, h] = d.control_bounds(c).unwrap();
    (x + w / 2.0, y + h / 2.0)
}

#[test]
fn hit_testing_at_control_edges_for_each_scale() {
    for scale in SCALES {
        let d = ready(Risk::Privileged, scale);
        for c in [Control::Deny, Control::Approve] {
            let [x, y, w, h] = d.control_bounds(c).unwrap();
            assert!(
                w >= 48.0 && h >= 48.0,
                "{c:?} at {scale}: {w}x{h} is not touch-sized"
            );
            // Half a physical pixel inside each edge hits; half a pixel outside does not.
            let e = 0.5 / scale;
            let inside = [
                (x + e, y + e),
                (x + w - e, y + e),
                (x + e, y + h - e),
                (x + w - e, y + h - e),
            ];
            for (px, py) in inside {
                assert_eq!(
                    d.control_at(px, py),
                    Some(c),
                    "{c:?} at {scale}: ({px}, {py})"
                );
            }
            let outside = [
                (x - e, y + h / 2.0),
                (x + w + e, y + h / 2.0),
                (x + w / 2.0, y - e),
                (x + w / 2.0, y + h + e),
            ];
            for (px, py) in outside {
                assert_eq!(d.control_at(px, py), None, "{c:?} at {scale}: ({px}, {py})");
            }
        }
        // Deny is left of Approve, with a gap between them.
        let deny = d.control_bounds(Control::Deny).unwrap();
        let approve = d.control_bounds(Control::Approve).unwrap();
        assert!(deny[0] + deny[2] + 8.0 <= approve[0], "gap at {scale}");
    }
}

#[test]
fn nothing_counts_before_the_first_render_or_the_guard() {
    let mut d = dialog(Config::default());
    d.show(content(Risk::Privileged), 0).unwrap();
    // Not rendered yet: no control is on screen.
    assert_eq!(d.control_at(10.0, 10.0), None);
    d.render(1.0, (1920, 1080)).unwrap();
    let (x, y) = centre(&d, Control::Approve);
    assert_eq!(d.pointer_down(x, y, 100), None);
    assert_eq!(d.pointer_up(x, y, 120), None);
    // An early press never shortens the 750 ms delay; this one pushes it to 749 + 500.
    assert_eq!(d.pointer_down(x, y, 749), None);
    assert_eq!(d.pointer_up(x, y, 760), None);
    // Still too early at 1200 (ready at 1249); now ready at 1700.
    assert_eq!(d.pointer_down(x, y, 1200), None);
    assert_eq!(d.pointer_up(x, y, 1210), None);
    assert_eq!(d.pointer_down(x, y, 1800), None);
    assert_eq!(d.pointer_up(x, y, 1810), Some(Choice::Approve));
    // Answered: nothing more counts.
    assert_eq!(d.pointer_down(x, y, 2000), None);
    assert_eq!(d.key(Key::Escape, KeyState::Pressed, 2000), None);
}

#[test]
fn a_click_needs_press_and_release_on_the_same_control() {
    let mut d = ready(Risk::Privileged, 2.0);
    let (ax, ay) = centre(&d, Control::Approve);
    let (dx, dy) = centre(&d, Control::Deny);
    assert_eq!(d.pointer_down(ax, ay, 1000), None);
    assert_eq!(d.pointer_up(dx, dy, 1010), None);
    assert_eq!(d.pointer_down(dx, dy, 1100), None);
    d.pointer_motion(ax, ay); // slid off: cancelled
    assert_eq!(d.pointer_up(dx, dy, 1110), None);
    assert_eq!(d.pointer_down(dx, dy, 1200), None);
    assert_eq!(d.pointer_up(dx, dy, 1210), Some(Choice::Deny));
}

#[test]
fn moving_the_dialog_rearms_the_guard() {
    let mut d = ready(Risk::Privileged, 1.0);
    d.moved(1000);
    let (x, y) = centre(&d, Control::Approve);
    assert_eq!(d.pointer_down(x, y, 1700), None);
    assert_eq!(d.pointer_up(x, y, 1710), None);
    assert_eq!(d.pointer_down(x, y, 2300), None);
    assert_eq!(d.pointer_up(x, y, 2310), Some(Choice::Approve));
}

#[test]
fn keyboard_has_no_default_and_tab_moves_focus() {
    let mut d = ready(Risk::Privileged, 1.0);
    assert_eq!(d.live().unwrap().focus, None);
    for key in [Key::Enter, Key::Space] {
        assert_eq!(d.key(key, KeyState::Pressed, 1000), None);
        assert_eq!(d.key(key, KeyState::Released, 1010), None);
    }
    let tab = |d: &mut ConfirmDialog, shift| d.key(Key::Tab { shift }, KeyState::Pressed, 1000);
    tab(&mut d, false);
    assert_eq!(d.live().unwrap().focus, Some(Control::Deny));
    tab(&mut d, false);
    assert_eq!(d.live().unwrap().focus, Some(Control::Approve));
    tab(&mut d, true);
    assert_eq!(d.live().unwrap().focus, Some(Control::Deny));
    tab(&mut d, true);
    assert_eq!(d.live().unwrap().focus, Some(Control::Approve));
    // Auto-repeat never activates, even when the guard is ready.
    assert_eq!(d.key(Key::Enter, KeyState::Repeated, 1100), None);
    // A press alone does not answer: the release on the same control does.
    assert_eq!(d.key(Key::Space, KeyState::Pressed, 1200), None);
    assert_eq!(
        d.key(Key::Space, KeyState::Released, 1250),
        Some(Choice::Approve)
    );
}

#[test]
fn shift_tab_from_nothing_goes_to_approve_and_enter_on_deny_denies() {
    let mut d = ready(Risk::Routine, 1.0);
    d.key(Key::Tab { shift: true }, KeyState::Pressed, 1000);
    assert_eq!(d.live().unwrap().focus, Some(Control::Approve));
    d.key(Key::Tab { shift: true }, KeyState::Pressed, 1000);
    assert_eq!(d.key(Key::Enter, KeyState::Pressed, 1000), None);
    assert_eq!(
        d.key(Key::Enter, KeyState::Released, 1020),
        Some(Choice::Deny)
    );
}

#[test]
fn a_refusal_never_waits_for_the_guard_and_approve_does() {
    // Escape, at once.
    let mut d = dialog(Config::default());
    d.show(content(Risk::Routine), 0).unwrap();
    d.set_keyboard_focus(true);
    d.render(1.0, (800, 480)).unwrap();
    assert_eq!(
        d.key(Key::Escape, KeyState::Pressed, 10),
        Some(Choice::Deny)
    );
    // A click on Deny, at once; the same click on Approve is ignored, and Deny is drawn
    // enabled while Approve is not.
    let mut d = dialog(Config::default());
    d.show(content(Risk::Privileged), 0).unwrap();
    d.render(1.0, (1920, 1080)).unwrap();
    let layout = d.layout().unwrap();
    let live = d.live().unwrap();
    assert!(pcp_overlay::draw::enabled(layout, live, Control::Deny));
    assert!(!pcp_overlay::draw::enabled(layout, live, Control::Approve));
    let (ax, ay) = centre(&d, Control::Approve);
    assert_eq!(d.pointer_down(ax, ay, 20), None);
    assert_eq!(d.pointer_up(ax, ay, 30), None);
    let (x, y) = centre(&d, Control::Deny);
    assert_eq!(d.pointer_down(x, y, 40), None);
    assert_eq!(d.pointer_up(x, y, 50), Some(Choice::Deny));
}

#[test]
fn keys_do_nothing_unless_the_dialog_has_the_keyboard() {
    let mut d = dialog(Config::default());
    d.show(content(Risk::Routine), 0).unwrap();
    d.render(1.0, (1920, 1080)).unwrap();
    d.advance(1000);
    assert!(!d.has_keyboard_focus());
    for key in [Key::Tab { shift: false }, Key::Escape, Key::Enter] {
        assert_eq!(d.key(key, KeyState::Pressed, 1000), None);
        assert_eq!(d.key(key, KeyState::Released, 1010), None);
    }
    assert_eq!(d.live().unwrap().focus, None);
    assert!(d.is_open());
    // Given the keyboard (a click on the dialog, a shortcut), the keyboard flow applies.
    d.set_keyboard_focus(true);
    assert!(d.live().unwrap().keyboard);
    d.key(Key::Tab { shift: false }, KeyState::Pressed, 1100);
    assert_eq!(d.live().unwrap().focus, Some(Control::Deny));
    // Taken back: the focus ring goes, a key held on a control is dropped.
    d.key(Key::Enter, KeyState::Pressed, 1200);
    d.set_keyboard_focus(false);
    assert_eq!(d.live().unwrap().focus, None);
    d.set_keyboard_focus(true);
    assert_eq!(d.key(Key::Enter, KeyState::Released, 1300), None);
    // Hiding gives the keyboard up.
    d.hide();
    assert!(!d.has_keyboard_focus());
}

#[test]
fn a_click_on_the_dialog_is_inside_it() {
    let d = ready(Risk::Routine, 2.0);
    let (w, h) = d.layout().unwrap().logical_size;
    assert!(d.contains(1.0, 1.0));
    assert!(d.contains(f64::from(w) - 0.5, f64::from(h) - 0.5));
    assert!(!d.contains(f64::from(w), 1.0));
    assert!(!d.contains(-0.5, 1.0));
}

#[test]
fn destructive_approve_must_be_held() {
    let mut d = ready(Risk::Destructive, 1.0);
    let (x, y) = centre(&d, Control::Approve);
    // A click is not enough.
    assert_eq!(d.pointer_down(x, y, 1000), None);
    assert_eq!(d.pointer_up(x, y, 1300), None);
    assert_eq!(d.live().unwrap().hold_progress, 0.0);
    // Holding shows progress and approves once 800 ms have passed.
    d.render(1.0, (1920, 1080)).unwrap();
    assert_eq!(d.pointer_down(x, y, 2000), None);
    assert_eq!(d.advance(2400), None);
    assert!((d.live().unwrap().hold_progress - 0.5).abs() < 1e-6);
    let damage = d.render(1.0, (1920, 1080)).unwrap().damage;
    assert_eq!(damage.len(), 1, "only Approve is redrawn: {damage:?}");
    assert_eq!(d.advance(2800), Some(Choice::Approve));
    // Keyboard: Enter held on Approve; auto-repeat is ignored, release early cancels.
    let mut d = ready(Risk::System, 1.0);
    d.key(Key::Tab { shift: true }, KeyState::Pressed, 1000);
    assert_eq!(d.key(Key::Enter, KeyState::Pressed, 1000), None);
    assert_eq!(d.key(Key::Enter, KeyState::Repeated, 1500), None);
    assert_eq!(d.key(Key::Enter, KeyState::Released, 1600), None);
    assert_eq!(d.advance(2000), None);
    assert_eq!(d.key(Key::Enter, KeyState::Pressed, 2000), None);
    // A key hold completes only at the release: a key press alone never approves.
    assert_eq!(d.advance(2900), None);
    assert_eq!(d.live().unwrap().hold_progress, 1.0);
    assert_eq!(
        d.key(Key::Enter, KeyState::Released, 3000),
        Some(Choice::Approve)
    );
    // Deny never needs a hold, and Escape wins over a hold in progress.
    let mut d = ready(Risk::System, 1.0);
    let (x, y) = centre(&d, Control::Approve);
    assert_eq!(d.pointer_down(x, y, 1000), None);
    assert_eq!(d.advance(1400), None);
    assert_eq!(
        d.key(Key::Escape, KeyState::Pressed, 1500),
        Some(Choice::Deny)
    );
    assert_eq!(d.advance(2000), None);
    assert_eq!(d.pointer_up(x, y, 2000), None);
}

#[test]
fn full_render_only_on_change_and_ticks_damage_only_their_region() {
    let mut d = ready(Risk::Destructive, 2.0);
    let r = d.render(2.0, (1920, 1080)).unwrap();
    // The guard armed in `ready`: both buttons were redrawn, nothing else.
    assert_eq!(r.damage.len(), 2);
    assert!(d.render(2.0, (1920, 1080)).unwrap().damage.is_empty());
    d.set_seconds_left(26);
    let r = d.render(2.0, (1920, 1080)).unwrap();
    let (w, h) = (r.pixmap.width() as i32, r.pixmap.height() as i32);
    assert_eq!(r.damage.len(), 1);
    let dmg = r.damage[0];
    assert!(dmg.w < w && dmg.h < h / 4, "{dmg:?}");
    d.set_voice(VoiceState::Listening, 0.5);
    let r = d.render(2.0, (1920, 1080)).unwrap();
    assert_eq!(r.damage.len(), 1);
    assert!(
        r.damage[0].w <= 240 && r.damage[0].h <= 16,
        "{:?}",
        r.damage
    );
    // Theme, scale or output size change: full render.
    d.set_theme(pcp_overlay::ThemeName::Light);
    let r = d.render(2.0, (1920, 1080)).unwrap();
    assert_eq!(r.damage, vec![pcp_overlay::IRect::new(0, 0, w, h)]);
    let r = d.render(1.0, (1920, 1080)).unwrap();
    assert_eq!(r.damage.len(), 1);
    assert_eq!(r.damage[0].w, r.pixmap.width() as i32);
}

#[test]
fn partial_redraws_give_the_same_pixels_as_a_full_render() {
    let config = Config::default();
    for scale in [1.0, 1.25, 2.0] {
        let mut d = ready(Risk::Destructive, scale);
        d.render(scale, (1920, 1080)).unwrap();
        d.set_seconds_left(9);
        d.set_voice(VoiceState::Heard, 0.0);
        d.set_haptic(HapticState::FirstTap);
        d.key(Key::Tab { shift: false }, KeyState::Pressed, 1000);
        let (x, y) = centre(&d, Control::Approve);
        d.pointer_down(x, y, 1000);
        d.advance(1200);
        let partial = d.render(scale, (1920, 1080)).unwrap().pixmap.clone();
        let live = d.live().unwrap().clone();
        let mut fonts = Fonts::with_files::<&str>(&[]).unwrap();
        let full = render_state(
            &mut fonts,
            &config,
            &content(Risk::Destructive),
            &live,
            scale,
            (1920, 1080),
        )
        .unwrap();
        assert!(
            partial.data() == full.data(),
            "partial != full at scale {scale}"
        );
    }
}

#[test]
fn long_content_stays_inside_the_dialog_and_the_output() {
    let mut fonts = Fonts::with_files::<&str>(&[]).unwrap();
    let config = Config::default();
    let long = "Replace the quarterly planning figures with the merged regional drafts. ".repeat(8);
    let mut c = content(Risk::System);
    c.requester = Requester::Unconfined {
        executable: format!("/home/u/{}/an-assistant", "tools/".repeat(12)),
        pid: 4_194_304,
    };
    c.declared_app_id = Some("An Assistant With An Extremely Long Application Name".repeat(3));
    c.action = long.chars().take(500).collect();
    c.target = format!("/home/u/{}/file.ods", "deep/".repeat(40));
    c.steps = (1..=10)
        .map(|i| format!("Step {i}: open draft {i} and copy every regional total into the merged sheet, checking each formula twice"))
        .collect();
    c.extra_params = vec![("mode".into(), "merge".into())];
    c.challenge = Some("harbor".into());
    c.queued = 99;
    c.offer_session = true;
    c.icon = Some(Icon {
        pixels: tiny_skia::Pixmap::new(64, 64).unwrap(),
    });
    for output in [(800, 480), (1280, 720), (1920, 1080), (3840, 2160)] {
        for scale in SCALES {
            let l = Layout::compute(&mut fonts, &config, &c, scale, output).unwrap();
            let (lw, lh) = l.logical_size;
            assert!(
                lw <= output.0 as i32 - 32 && lh <= output.1 as i32 - 32,
                "{output:?}@{scale}: {lw}x{lh}"
            );
            l.check_inside()
                .unwrap_or_else(|e| panic!("{output:?}@{scale}: {e}"));
            // The header holds the monogram, the identity, how it is verified, the declared
            // id, "asks to", the risk, the challenge label and word.
            assert_eq!(l.texts.len(), 8, "{output:?}@{scale}");
            // The body lists everything: the action, the target (label and text), the steps
            // (label, then number and text each), the parameters (label and one entry).
            assert_eq!(
                l.body_texts.len(),
                1 + 2 + 1 + 2 * c.steps.len() + 2,
                "{output:?}@{scale}"
            );
            // None is cut: every one has all the lines it needs.
            assert!(
                l.texts
                    .iter()
                    .chain(&l.body_texts)
                    .all(|t| t.text.lines >= 1),
                "{output:?}@{scale}"
            );
        }
    }
}

#[test]
fn too_small_outputs_and_bad_scales_fail_closed() {
    let mut fonts = Fonts::with_files::<&str>(&[]).unwrap();
    let config = Config::default();
    let c = content(Risk::Routine);
    let e = Layout::compute(&mut fonts, &config, &c, 1.0, (200, 150)).unwrap_err();
    assert!(e.to_string().contains("200x150"), "{e}");
    assert!(Layout::compute(&mut fonts, &config, &c, 0.0, (800, 480)).is_err());
    assert!(Layout::compute(&mut fonts, &config, &c, f64::NAN, (800, 480)).is_err());
    let mut d = dialog(config);
    let mut bad = c.clone();
    bad.requester = Requester::Unknown {
        connection: String::new(),
    };
    assert!(d.show(bad, 0).is_err());
    assert!(!d.is_open());
    assert!(d.render(1.0, (800, 480)).is_err());
}

#[test]
fn every_live_state_renders_at_every_scale() {
    let mut fonts = Fonts::with_files::<&str>(&[]).unwrap();
    let config = Config::default();
    for scale in SCALES {
        for voice in [
            VoiceState::Listening,
            VoiceState::Heard,
            VoiceState::Unavailable,
        ] {
            let live = LiveState {
                voice,
                voice_level: 0.7,
                haptic: HapticState::FirstTap,
                hold_progress: 0.3,
                focus: Some(Control::Deny),
                armed: false,
                seconds_left: Some(3),
                keyboard: true,
                ..LiveState::default()
            };
            let p = render_state(
                &mut fonts,
                &config,
                &content(Risk::Destructive),
                &live,
                scale,
                (800, 480),
            )
            .unwrap();
            assert_eq!(p.width(), (560.0 * scale).round() as u32);
            // Opaque in the middle: the card is drawn.
            let px = p.pixel(p.width() / 2, p.height() / 2).unwrap();
            assert_eq!(px.alpha(), 255);
        }
    }
}

#[test]
fn the_app_icon_is_drawn_in_place_of_the_monogram() {
    let mut fonts = Fonts::with_files::<&str>(&[]).unwrap();
    let config = Config::default();
    let mut icon = tiny_skia::Pixmap::new(16, 16).unwrap();
    icon.fill(tiny_skia::Color::from_rgba8(0, 0, 255, 255));
    let mut c = content(Risk::Routine);
    for scale in [1.0, 2.0] {
        let layout = Layout::compute(&mut fonts, &config, &c, scale, (1920, 1080)).unwrap();
        let (cx, cy) = (
            (layout.icon.x + layout.icon.w / 2) as u32,
            (layout.icon.y + layout.icon.h / 2) as u32,
        );
        c.icon = None;
        let without = render_state(
            &mut fonts,
            &config,
            &c,
            &LiveState::default(),
            scale,
            (1920, 1080),
        )
        .unwrap();
        c.icon = Some(Icon {
            pixels: icon.clone(),
        });
        let with = render_state(
            &mut fonts,
            &config,
            &c,
            &LiveState::default(),
            scale,
            (1920, 1080),
        )
        .unwrap();
        let px = with.pixel(cx, cy).unwrap();
        assert_eq!(
            (px.red(), px.green(), px.blue(), px.alpha()),
            (0, 0, 255, 255)
        );
        let px = without.pixel(cx, cy).unwrap();
        assert_ne!(px.blue(), 255);
    }
}

#[test]
fn place_picks_the_focal_output_and_keeps_the_dialog_on_it() {
    use pcp_overlay::{Output, Point, Rect};
    let outputs = [
        // A 4K panel at scale 2, a 1080p one at scale 1 with a gap, a small touch panel.
        Output {
            rect: Rect {
                x: 0,
                y: 0,
                w: 1920,
                h: 1080,
            },
            scale: 2.0,
        },
        Output {
            rect: Rect {
                x: 2000,
                y: 0,
                w: 1920,
                h: 1080,
            },
            scale: 1.0,
        },
        Output {
            rect: Rect {
                x: 0,
                y: 1080,
                w: 800,
                h: 480,
            },
            scale: 1.0,
        },
    ];
    let mut d = dialog(Config::default());
    d.show(content(Risk::Destructive), 0).unwrap();
    for (focus, want) in [
        ((100.0, 100.0), 0),
        ((1990.0, 10.0), 1),
        ((3900.0, 1000.0), 1),
        ((10.0, 1500.0), 2),
    ] {
        let (i, r) = d
            .place(
                Point {
                    x: focus.0,
                    y: focus.1,
                },
                &outputs,
            )
            .unwrap();
        assert_eq!(i, want, "{focus:?}");
        assert!(outputs[i].rect.contains_rect(&r), "{focus:?}: {r:?}");
        let rendered = d
            .render(
                outputs[i].scale,
                (outputs[i].rect.w as u32, outputs[i].rect.h as u32),
            )
            .unwrap();
        assert_eq!(rendered.logical_size, (r.w, r.h));
        assert_eq!(
            rendered.pixmap.width(),
            (f64::from(r.w) * outputs[i].scale).round() as u32
        );
    }
    assert!(d.place(Point { x: 0.0, y: 0.0 }, &[]).is_err());
}

#[test]
fn the_buffer_never_exceeds_max_buffer_pixels_and_the_body_scrolls_instead() {
    let config = Config {
        max_buffer_pixels: 4_000_000,
        ..Config::default()
    };
    let mut long = content(Risk::Privileged);
    long.steps = (0..30)
        .map(|i| format!("step {i}: copy {}", "a long file name ".repeat(30)))
        .collect();
    for (scale, output) in [
        (1.0, (1920, 1080)),
        (2.0, (1920, 16000)),
        (3.0, (4000, 30000)),
    ] {
        let mut d = dialog(config.clone());
        d.show(long.clone(), 0).unwrap();
        let r = d.render(scale, output).unwrap();
        let (w, h) = (r.pixmap.width(), r.pixmap.height());
        assert!(
            u64::from(w) * u64::from(h) <= 4_000_000,
            "{w}x{h} at scale {scale} on {output:?}"
        );
        let layout = d.layout().unwrap();
        layout.check_inside().unwrap();
        if scale > 1.0 {
            // Room on the output for more, but the cap makes the body scroll.
            assert!(layout.scrolls(), "at scale {scale} the body should scroll");
        }
    }
    // Without the cap the tall dense output takes the whole body unscrolled.
    let mut d = dialog(Config::default());
    d.show(long, 0).unwrap();
    let r = d.render(3.0, (4000, 30000)).unwrap();
    assert!(u64::from(r.pixmap.width()) * u64::from(r.pixmap.height()) > 4_000_000);
    assert!(!d.layout().unwrap().scrolls());
}

#[test]
fn a_cap_too_small_for_the_fixed_part_is_a_denial_that_names_it() {
    let mut d = dialog(Config {
        max_buffer_pixels: 10_000,
        ..Config::default()
    });
    d.show(content(Risk::Privileged), 0).unwrap();
    let e = d.render(1.0, (1920, 1080)).unwrap_err().to_string();
    assert!(e.contains("max_buffer_pixels"), "{e}");
}
