//! Client text of more than one line (a here-document, a patch, a commit message) on the dialog:
//! every line is shown, numbered after the first; nothing pushes a line out of sight (runs of
//! blank lines and long indents are counted, long lines wrap); no line the client writes can
//! pass for one of the dialog's own; a command too long to see at once scrolls and Approve waits
//! for its end.

use pcp_overlay::dialog::layout_state;
use pcp_overlay::layout::{Placed, Role};
use pcp_overlay::{
    Choice, Config, ConfirmDialog, Control, DialogContent, Fonts, Key, KeyState, Layout, Modality,
    Requester, Risk,
};

const PANEL: (u32, u32) = (800, 480);

fn content(action: &str) -> DialogContent {
    DialogContent {
        requester: Requester::Unconfined {
            executable: "/usr/local/bin/codex".into(),
            pid: 4242,
        },
        declared_app_id: None,
        icon: None,
        action: action.into(),
        target: "in /home/u/project".into(),
        steps: vec![],
        extra_params: vec![("risk".into(), "High: deletes outside the project".into())],
        challenge: None,
        risk: Risk::Destructive,
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

/// What was shaped, without the left-to-right marks the layout adds.
fn shaped(t: &Placed) -> String {
    t.text.text().replace('\u{200e}', "")
}

/// The body's texts in order, as shaped.
fn body(l: &Layout) -> Vec<String> {
    l.body_texts.iter().map(shaped).collect()
}

/// The body text reading `text`.
fn find<'l>(l: &'l Layout, text: &str) -> &'l Placed {
    l.body_texts
        .iter()
        .find(|t| shaped(t) == text)
        .unwrap_or_else(|| panic!("{text:?} is not in the body: {:?}", body(l)))
}

/// The muted number placed on the same row left of `line`.
fn number_of<'l>(l: &'l Layout, line: &Placed) -> &'l Placed {
    l.body_texts
        .iter()
        .find(|t| t.role == Role::Muted && t.y == line.y && t.x < line.x)
        .unwrap_or_else(|| panic!("no number beside {:?}", shaped(line)))
}

#[test]
fn every_line_of_a_command_is_shown_numbered_after_the_first() {
    let command = "Run the shell command: cat <<'EOF' > notes.txt\nfirst line\n    indented\n\nEOF";
    let l = layout_state(
        &mut fonts(),
        &Config::default(),
        &content(command),
        1.0,
        PANEL,
    )
    .unwrap();
    l.check_inside().unwrap();
    let first = find(&l, "Run the shell command: cat <<'EOF' > notes.txt");
    assert_eq!(
        first.x, l.body.x,
        "the first line starts at the column's edge"
    );
    for (n, line) in [(2, "first line"), (3, "    indented"), (5, "EOF")] {
        let placed = find(&l, line);
        assert!(placed.x > l.body.x, "{line:?} is indented past the gutter");
        assert_eq!(shaped(number_of(&l, placed)), n.to_string(), "{line:?}");
        assert!(placed.text.is_whole(), "{line:?}");
    }
    // Line 4 is empty and still takes its row: line 5 sits two rows under line 3.
    let (three, five) = (find(&l, "    indented"), find(&l, "EOF"));
    assert_eq!(five.y - three.y, 2 * three.text.height);
    // Lines follow each other top to bottom without overlapping.
    let rows: Vec<_> = l
        .body_texts
        .iter()
        .filter(|t| t.role == Role::Text)
        .collect();
    for pair in rows.windows(2) {
        assert!(pair[0].bounds().bottom() <= pair[1].y, "{:?}", body(&l));
    }
}

#[test]
fn a_line_pushed_below_blank_lines_spaces_or_look_alikes_is_on_the_first_screen() {
    let pushes = [
        format!("Run the shell command: echo hi{}rm -rf ~", "\n".repeat(201)),
        format!(
            "Run the shell command: echo hi\n{}\nrm -rf ~",
            " \n".repeat(200)
        ),
        format!(
            "Run the shell command: echo hi\n{}rm -rf ~",
            "\u{a0}\u{3164}\n\u{2800}\t\n\u{200b}\n".repeat(70)
        ),
    ];
    for action in &pushes {
        let l = layout_state(
            &mut fonts(),
            &Config::default(),
            &content(action),
            1.0,
            PANEL,
        )
        .unwrap();
        let danger = find(&l, "rm -rf ~");
        assert!(
            danger.bounds().bottom() <= l.body.h,
            "the line is in the first view, unscrolled: {:?} in {:?}",
            danger.bounds(),
            l.body
        );
        let blank = l
            .body_texts
            .iter()
            .find(|t| shaped(t).ends_with(" blank lines]"));
        assert!(blank.is_some(), "the run is said: {:?}", body(&l));
    }
    // An indent of hundreds of spaces is counted, never drawn as spaces.
    let deep = format!("Run the shell command: true\n{}rm -rf ~", " ".repeat(400));
    let l = layout_state(
        &mut fonts(),
        &Config::default(),
        &content(&deep),
        1.0,
        PANEL,
    )
    .unwrap();
    find(&l, "<U+0020 ×400>rm -rf ~");
}

#[test]
fn a_long_line_wraps_and_is_never_clipped() {
    let long = format!(
        "Run the shell command: true\nrm -rf ~/{}/x",
        "a".repeat(600)
    );
    let l = layout_state(
        &mut fonts(),
        &Config::default(),
        &content(&long),
        1.0,
        PANEL,
    )
    .unwrap();
    l.check_inside().unwrap();
    let line = l
        .body_texts
        .iter()
        .find(|t| shaped(t).starts_with("rm -rf ~/"))
        .unwrap();
    assert!(
        line.text.lines > 3,
        "wrapped onto {} lines",
        line.text.lines
    );
    assert!(line.text.is_whole(), "nothing ellipsized");
    assert!(
        line.text.width <= line.w,
        "{} > {}",
        line.text.width,
        line.w
    );
    assert!(line.bounds().right() <= l.body.right());
}

#[test]
fn no_client_line_can_pass_for_one_of_the_dialog_s_own() {
    // A command that writes the dialog's own heading and a reassuring risk line after itself.
    let fake = "Run the shell command: rm -rf ~\n\nOther parameters\nrisk = Safe: read-only";
    let l = layout_state(&mut fonts(), &Config::default(), &content(fake), 1.0, PANEL).unwrap();
    let headings: Vec<&Placed> = l
        .body_texts
        .iter()
        .filter(|t| shaped(t) == "Other parameters")
        .collect();
    assert_eq!(headings.len(), 2, "{:?}", body(&l));
    let (client, ours) = (headings[0], headings[1]);
    // Ours starts at the edge, muted, unnumbered; the client's is indented beside its number.
    assert_eq!(ours.x, l.body.x);
    assert_eq!(ours.role, Role::Muted);
    assert!(client.x > ours.x);
    assert_eq!(shaped(number_of(&l, client)), "3");
    let client_risk = find(&l, "risk = Safe: read-only");
    assert_eq!(shaped(number_of(&l, client_risk)), "4");
    let real_risk = find(&l, "risk = High: deletes outside the project");
    assert_eq!(real_risk.x, l.body.x);
}

/// A here-document far longer than an 800×480 panel shows, its dangerous line last.
fn long_heredoc() -> DialogContent {
    let mut lines: Vec<String> = (1..=80).map(|i| format!("echo step {i}")).collect();
    lines.push("rm -rf ~".into());
    content(&format!(
        "Run the shell command: bash <<'EOF'\n{}\nEOF",
        lines.join("\n")
    ))
}

#[test]
fn a_command_too_long_to_see_scrolls_and_approve_waits_for_its_end() {
    let l = layout_state(
        &mut fonts(),
        &Config::default(),
        &long_heredoc(),
        1.0,
        PANEL,
    )
    .unwrap();
    assert!(l.scrolls());
    let danger = find(&l, "rm -rf ~");
    assert!(danger.y > l.body.h, "the last line starts below the view");
    assert!(danger.bounds().bottom() <= l.body_height);

    let mut d = ConfirmDialog::new(Config::default(), fonts());
    d.show(long_heredoc(), 0).unwrap();
    d.render(1.0, PANEL).unwrap();
    d.advance(1000);
    d.render(1.0, PANEL).unwrap();
    let [x, y, w, h] = d.control_bounds(Control::Approve).unwrap();
    let (cx, cy) = (x + w / 2.0, y + h / 2.0);
    assert_eq!(d.pointer_down(cx, cy, 1000), None);
    assert_eq!(
        d.pointer_up(cx, cy, 1020),
        None,
        "approved an unread command"
    );
    d.set_keyboard_focus(true);
    d.key(Key::End, KeyState::Pressed, 1100);
    d.render(1.0, PANEL).unwrap();
    assert!(d.live().unwrap().read_all);
    assert_eq!(d.pointer_down(cx, cy, 1200), None);
    assert_eq!(d.pointer_up(cx, cy, 1220), Some(Choice::Approve));
}

#[test]
fn a_multi_line_step_and_parameter_are_numbered_in_their_own_column() {
    let mut c = content("Apply the patch");
    c.steps = vec!["Write src/a.rs\n@@ -1 +1 @@\n-old\n+new".into()];
    c.extra_params = vec![("patch".into(), "*** Begin Patch\n*** End Patch".into())];
    let l = layout_state(&mut fonts(), &Config::default(), &c, 1.0, PANEL).unwrap();
    l.check_inside().unwrap();
    let step = find(&l, "Write src/a.rs");
    let hunk = find(&l, "+new");
    assert!(
        hunk.x > step.x,
        "the step's lines are indented within its column"
    );
    assert_eq!(shaped(number_of(&l, hunk)), "4");
    let end = find(&l, "*** End Patch");
    assert_eq!(shaped(number_of(&l, end)), "2");
}
