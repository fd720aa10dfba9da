//! What the dialog shows beyond the action: who asks as verified (never pushed off the dialog
//! by anything a client sends), the extra parameters, the challenge word, the "Allow until
//! logout" control, and the settings people expect (text scale, reduced motion, high contrast).

use pcp_overlay::dialog::{layout_state, render_state};
use pcp_overlay::layout::{Placed, Role};
use pcp_overlay::{
    Choice, Config, ConfirmDialog, Control, DialogContent, Fonts, Key, KeyState, LiveState,
    Modality, Requester, Risk, TextScale, ThemeName, VoiceState,
};

const PANEL: (u32, u32) = (800, 480);

fn content() -> DialogContent {
    DialogContent {
        requester: Requester::Unconfined {
            executable: "/home/u/.local/bin/agent-runner".into(),
            pid: 48213,
        },
        declared_app_id: None,
        icon: None,
        action: "Change the proxy settings".into(),
        target: "org.gnome.system.proxy".into(),
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

fn plain(t: &Placed) -> String {
    t.text.text().replace('\u{200e}', "")
}

/// The header's verified identity: the first text after the monogram.
fn identity(texts: &[Placed]) -> &Placed {
    &texts[1]
}

#[test]
fn the_verified_identity_shows_in_full_whatever_the_client_declares_and_sends() {
    let config = Config::default();
    let mut c = content();
    c.declared_app_id = Some("Firefox ".repeat(40).chars().take(300).collect());
    let small = layout_state(&mut fonts(), &config, &content(), 1.0, PANEL).unwrap();
    // And everything else a client controls, as large as the dialog accepts.
    c.action = "A".repeat(5000);
    c.target = format!("/{}", "deep/".repeat(1000));
    c.steps = (0..config.max_steps)
        .map(|i| format!("step {i} ").repeat(40))
        .collect();
    c.extra_params = (0..config.max_extra_params)
        .map(|i| (format!("p{i}"), "v".repeat(3000)))
        .collect();
    for (output, scale) in [(PANEL, 1.0), (PANEL, 2.0), ((1920, 1080), 1.0)] {
        let big = layout_state(&mut fonts(), &config, &c, scale, output).unwrap();
        big.check_inside().unwrap();
        let id = identity(&big.texts);
        assert_eq!(plain(id), "/home/u/.local/bin/agent-runner");
        assert!(id.text.is_whole(), "never cut");
        assert_eq!(id.role, Role::Text);
        // Inside the dialog, and the dialog inside the output.
        assert!(id.bounds().bottom() <= big.size.1 && id.bounds().right() <= big.size.0);
        assert!(big.logical_size.1 <= output.1 as i32);
        // How it is verified, right under it, in full.
        assert_eq!(plain(&big.texts[2]), "Not sandboxed · process 48213");
        assert_eq!(big.texts[2].role, Role::Unverified);
        // The self-declared id is only secondary text, capped with a visible mark.
        let declared = plain(&big.texts[3]);
        assert!(
            declared.starts_with("Calls itself “Firefox Firefox"),
            "{declared}"
        );
        assert!(declared.contains("more characters not shown"), "{declared}");
        assert_eq!(big.texts[3].role, Role::Muted);
        if scale == 1.0 && output == PANEL {
            // Where the identity is does not depend on anything the client sent.
            let (a, b) = (identity(&small.texts), id);
            assert_eq!((a.x, a.y, a.text.height), (b.x, b.y, b.text.height));
        }
    }
}

#[test]
fn a_long_verified_identity_wraps_and_the_body_scrolls_instead() {
    let mut c = content();
    c.requester = Requester::Unconfined {
        executable: format!("/home/u/{}/agent", "very-long-folder-name/".repeat(12)),
        pid: 7,
    };
    c.declared_app_id = Some("x".repeat(300));
    c.steps = (0..20).map(|i| format!("step {i}")).collect();
    let l = layout_state(&mut fonts(), &Config::default(), &c, 1.0, PANEL).unwrap();
    l.check_inside().unwrap();
    let id = identity(&l.texts);
    assert!(id.text.lines >= 4, "{}", id.text.lines);
    assert!(id.text.is_whole());
    assert!(l.scrolls(), "the body gives way, not the identity");
}

#[test]
fn a_sandboxed_requester_is_marked_verified_by_its_engine() {
    let mut c = content();
    c.requester = Requester::Sandboxed {
        engine: "flatpak".into(),
        app_id: "org.mozilla.firefox".into(),
    };
    let l = layout_state(&mut fonts(), &Config::default(), &c, 1.0, PANEL).unwrap();
    assert_eq!(plain(identity(&l.texts)), "org.mozilla.firefox");
    assert_eq!(plain(&l.texts[2]), "Verified: flatpak sandbox");
    assert_eq!(l.texts[2].role, Role::Verified);
    // The words are the config's.
    let mut config = Config::default();
    config.text.requester_sandboxed = "Geprüft ({engine})".into();
    let l = layout_state(&mut fonts(), &config, &c, 1.0, PANEL).unwrap();
    assert_eq!(plain(&l.texts[2]), "Geprüft (flatpak)");
    c.requester = Requester::Unknown {
        connection: "client 12".into(),
    };
    let l = layout_state(&mut fonts(), &Config::default(), &c, 1.0, PANEL).unwrap();
    assert_eq!(plain(&l.texts[2]), "Not verified: unknown program");
}

#[test]
fn extra_parameters_are_listed_as_name_equals_value() {
    let mut c = content();
    c.extra_params = vec![
        ("recursive".into(), "true".into()),
        ("older_than".into(), "30 days".into()),
    ];
    let l = layout_state(&mut fonts(), &Config::default(), &c, 1.0, (1920, 1080)).unwrap();
    let body: Vec<String> = l.body_texts.iter().map(plain).collect();
    let at = body.iter().position(|t| t == "Other parameters").unwrap();
    assert_eq!(body[at + 1..], ["recursive = true", "older_than = 30 days"]);
}

#[test]
fn the_challenge_word_is_shown_large_and_framed() {
    let mut c = content();
    c.risk = Risk::Destructive;
    c.modalities = vec![Modality::Visual, Modality::Voice];
    c.challenge = Some("harbor".into());
    let l = layout_state(&mut fonts(), &Config::default(), &c, 1.0, (1920, 1080)).unwrap();
    let word = l.texts.iter().find(|t| plain(t) == "harbor").unwrap();
    let frame = l.challenge_box.unwrap();
    assert!(frame.contains_rect(&word.bounds()));
    // Larger than the action's text.
    let action = &l.body_texts[0];
    let line = |t: &Placed| t.text.height / t.text.lines.max(1) as i32;
    assert!(
        line(word) > line(action),
        "{} vs {}",
        line(word),
        line(action)
    );
    // And it is not there without a challenge.
    c.challenge = None;
    let l = layout_state(&mut fonts(), &Config::default(), &c, 1.0, (1920, 1080)).unwrap();
    assert!(l.challenge_box.is_none());
}

fn session_dialog() -> ConfirmDialog {
    let mut c = content();
    c.offer_session = true;
    let mut d = ConfirmDialog::new(Config::default(), fonts());
    d.show(c, 0).unwrap();
    d.render(1.0, (1920, 1080)).unwrap();
    d
}

#[test]
fn allow_until_logout_is_guarded_like_approve_and_never_focused_first() {
    let mut d = session_dialog();
    let [x, y, w, h] = d.control_bounds(Control::Session).unwrap();
    let (cx, cy) = (x + w / 2.0, y + h / 2.0);
    assert!(h >= 48.0);
    // Inside the guard: nothing.
    assert_eq!(d.pointer_down(cx, cy, 300), None);
    assert_eq!(d.pointer_up(cx, cy, 320), None);
    // Keyboard: Tab goes Deny, Approve, then Allow until logout; never there first.
    d.set_keyboard_focus(true);
    d.advance(1400);
    let mut seen = Vec::new();
    for _ in 0..4 {
        d.key(Key::Tab { shift: false }, KeyState::Pressed, 1400);
        seen.push(d.live().unwrap().focus.unwrap());
    }
    assert_eq!(
        seen,
        [
            Control::Deny,
            Control::Approve,
            Control::Session,
            Control::Deny
        ]
    );
    // After the guard, a click on it is a session approval.
    assert_eq!(d.pointer_down(cx, cy, 1500), None);
    assert_eq!(d.pointer_up(cx, cy, 1520), Some(Choice::ApproveForSession));
}

#[test]
fn allow_until_logout_waits_for_the_body_to_be_read_and_for_a_hold() {
    let mut c = content();
    c.offer_session = true;
    c.press_and_hold = true;
    c.steps = (0..30).map(|i| format!("step {i}")).collect();
    let mut d = ConfirmDialog::new(Config::default(), fonts());
    d.show(c, 0).unwrap();
    d.render(1.0, PANEL).unwrap();
    d.advance(1000);
    let [x, y, w, h] = d.control_bounds(Control::Session).unwrap();
    let (cx, cy) = (x + w / 2.0, y + h / 2.0);
    assert_eq!(d.pointer_down(cx, cy, 1000), None);
    assert_eq!(d.advance(2000), None, "unread: the press did not count");
    assert_eq!(d.pointer_up(cx, cy, 2000), None);
    d.scroll(1e9);
    d.render(1.0, PANEL).unwrap();
    assert_eq!(d.pointer_down(cx, cy, 2100), None);
    assert_eq!(d.pointer_up(cx, cy, 2200), None, "a click is not a hold");
    assert_eq!(d.pointer_down(cx, cy, 2300), None);
    assert_eq!(d.advance(2700), None);
    assert_eq!(d.live().unwrap().held, Control::Session);
    assert_eq!(d.advance(3100), Some(Choice::ApproveForSession));
}

#[test]
fn text_scale_makes_text_larger_and_the_dialog_wider() {
    let c = content();
    let one = layout_state(&mut fonts(), &Config::default(), &c, 1.0, (1920, 1080)).unwrap();
    let config = Config {
        text_scale: TextScale::new(1.5).unwrap(),
        ..Config::default()
    };
    let big = layout_state(&mut fonts(), &config, &c, 1.0, (1920, 1080)).unwrap();
    big.check_inside().unwrap();
    assert_eq!(big.logical_size.0, 840);
    let h = |l: &pcp_overlay::Layout| l.body_texts[0].text.height;
    assert!(h(&big) * 10 >= h(&one) * 14, "{} vs {}", h(&big), h(&one));
    // Touch targets never shrink, and buttons grow with their labels.
    assert!(big.approve.h >= one.approve.h);
    // On a small panel it still fits (and scrolls what does not).
    let small = layout_state(&mut fonts(), &config, &c, 1.0, PANEL).unwrap();
    small.check_inside().unwrap();
    assert!(small.logical_size.0 <= 768);
    assert!(TextScale::new(3.5).is_none());
}

#[test]
fn reduced_motion_draws_no_moving_meter_and_holds_in_steps() {
    let config = Config {
        reduced_motion: true,
        hold_to_approve_ms: 800,
        ..Config::default()
    };
    let mut c = content();
    c.modalities = vec![Modality::Visual, Modality::Voice];
    c.press_and_hold = true;
    let mut d = ConfirmDialog::new(config, fonts());
    d.show(c, 0).unwrap();
    d.render(1.0, (1920, 1080)).unwrap();
    assert!(d.layout().unwrap().meter.is_none());
    d.advance(1000);
    d.render(1.0, (1920, 1080)).unwrap();
    // The level changes many times a second: nothing is redrawn for it.
    for level in [0.1, 0.5, 0.9] {
        d.set_voice(VoiceState::Listening, level);
        assert!(d.render(1.0, (1920, 1080)).unwrap().damage.is_empty());
    }
    // A hold moves in quarters: frames inside one quarter redraw nothing.
    let [x, y, w, h] = d.control_bounds(Control::Approve).unwrap();
    d.pointer_down(x + w / 2.0, y + h / 2.0, 1000);
    d.render(1.0, (1920, 1080)).unwrap();
    assert_eq!(d.advance(1100), None); // 1/8
    assert!(d.render(1.0, (1920, 1080)).unwrap().damage.is_empty());
    assert_eq!(d.advance(1250), None); // 5/16: the first quarter shows
    assert_eq!(d.render(1.0, (1920, 1080)).unwrap().damage.len(), 1);
}

#[test]
fn the_desktop_asking_for_high_contrast_switches_the_palette() {
    let mut d = ConfirmDialog::new(Config::default(), fonts());
    d.show(content(), 0).unwrap();
    let dark = d.render(1.0, (1920, 1080)).unwrap().pixmap.clone();
    d.set_desktop_high_contrast(true);
    assert_eq!(d.palette(), &Config::default().themes.high_contrast);
    let r = d.render(1.0, (1920, 1080)).unwrap();
    assert_eq!(r.damage.len(), 1, "a full redraw");
    let hc = r.pixmap.clone();
    let mut fonts = fonts();
    let config = Config {
        theme: ThemeName::HighContrast,
        ..Config::default()
    };
    let live = LiveState {
        armed: false,
        ..LiveState::default()
    };
    let want = render_state(&mut fonts, &config, &content(), &live, 1.0, (1920, 1080)).unwrap();
    assert!(hc.data() == want.data());
    assert!(hc.data() != dark.data());
    // Unless the config says not to follow the desktop.
    let config = Config {
        follow_desktop_contrast: false,
        ..Config::default()
    };
    let mut d = ConfirmDialog::new(config, Fonts::with_files::<&str>(&[]).unwrap());
    d.set_desktop_high_contrast(true);
    assert_eq!(d.palette(), &Config::default().themes.dark);
}
