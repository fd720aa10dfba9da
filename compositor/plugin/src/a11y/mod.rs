//! The dialog's accessibility tree (feature `a11y`): what a screen reader reads, published over
//! AT-SPI with AccessKit. [`Reading`] is the dialog as read out — an `AlertDialog`, modal, named
//! after the action and described with the verified requester, the risk, the target and the
//! steps; the countdown as a value; Deny and Approve (and "Allow until logout") with the
//! keyboard focus; the voice and hold-to-approve state; the queue badge; a polite announcement.
//! `Publisher` hands each changed reading to the adapter on its own
//! thread through a bounded channel, so the D-Bus side can never stall the compositor: if the
//! channel fills, that adapter is dropped and a new one started. Assistive software reads, never answers: every
//! action it requests (press, focus, …) is refused on the adapter's thread, which holds
//! nothing that could answer a prompt or move the focus.

mod publisher;

use accesskit::{Action, Live, Node, NodeId, Role, TreeId, TreeInfo, TreeUpdate};
use pcp_overlay::{ConfirmDialog, Control, DialogContent, Requester, VoiceState};

const ROOT: NodeId = NodeId(0);
const ANNOUNCEMENT: NodeId = NodeId(1);
const DIALOG: NodeId = NodeId(2);
const REQUESTER: NodeId = NodeId(3);
const RISK: NodeId = NodeId(4);
const TARGET: NodeId = NodeId(5);
const STEPS: NodeId = NodeId(6);
const COUNTDOWN: NodeId = NodeId(7);
const VOICE: NodeId = NodeId(8);
const HOLD: NodeId = NodeId(9);
const QUEUED: NodeId = NodeId(10);
const DENY: NodeId = NodeId(11);
const APPROVE: NodeId = NodeId(12);
const SESSION: NodeId = NodeId(13);
const ENTRY: NodeId = NodeId(14);
const ENTRY_MESSAGE: NodeId = NodeId(15);
const ENTRY_ACCOUNT: NodeId = NodeId(16);
/// Steps are numbered from here.
const FIRST_STEP: u64 = 100;

/// The dialog as a screen reader reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct Reading {
    /// What the compositor's window is called (`[overlay.text] a11y_window`).
    pub window: String,
    /// The dialog, when one is up.
    pub dialog: Option<DialogReading>,
    /// The last announcement (a prompt appeared, or was approved, denied or timed out).
    pub announcement: String,
    /// Whether the dialog has the seat's keyboard (the window is focused for AT-SPI then).
    pub keyboard: bool,
}

/// One prompt on screen, as read.
#[derive(Debug, Clone, PartialEq)]
pub struct DialogReading {
    /// What it asks (the dialog's name).
    pub action: String,
    /// The verified requester, the risk, the target and every step, in one description.
    pub description: String,
    /// Who asks: the verified identity and how it was verified.
    pub requester: String,
    pub risk: String,
    pub target: Option<String>,
    /// `[overlay.text] target_label`, read before the target.
    pub target_label: String,
    pub steps: Vec<String>,
    /// The countdown: its text, and seconds left of the whole.
    pub countdown: String,
    pub seconds_left: u32,
    pub timeout_seconds: u32,
    /// The voice step's state ("Listening…", "Heard “yes”…"), when voice is in the plan.
    pub voice: Option<String>,
    /// "Hold Approve to confirm", when Approve must be held.
    pub hold: Option<String>,
    /// The queue badge, when prompts wait behind this one.
    pub queued: Option<String>,
    /// The text entry (a password field: only its dots), when the prompt has one.
    pub entry: Option<pcp_overlay::EntryLine>,
    /// The buttons in the dialog's Tab order.
    pub buttons: Vec<ButtonReading>,
    /// Where the dialog is on the desktop (global logical pixels), once placed.
    pub bounds: Option<accesskit::Rect>,
    /// The button with the keyboard focus ring, while the dialog has the keyboard.
    pub focus: Option<Control>,
}

/// One of the dialog's buttons, as read.
#[derive(Debug, Clone, PartialEq)]
pub struct ButtonReading {
    pub control: Control,
    pub label: String,
    /// Whether it is enabled: Deny always; Approve not before the click guard arms, nor before
    /// the text was read to its end.
    pub enabled: bool,
    /// Where it is on the desktop (global logical pixels), once placed.
    pub bounds: Option<accesskit::Rect>,
}

impl Reading {
    /// The reading of `dialog` (hidden: no dialog) placed at `at` on the desktop, with
    /// `announcement` and the keyboard as `keyboard` says. `word_read_aloud`: the spoken
    /// question read the challenge word aloud, so the voice line says to say the word heard
    /// (the word itself is never in the reading).
    pub fn of(
        dialog: &ConfirmDialog,
        at: Option<pcp_overlay::Rect>,
        announcement: &str,
        keyboard: bool,
        word_read_aloud: bool,
    ) -> Reading {
        let config = dialog.config();
        let dialog_reading = match (dialog.content(), dialog.live()) {
            (Some(content), Some(live)) => {
                let mut d = read_dialog(config, content, live, keyboard, word_read_aloud);
                if let Some(at) = at {
                    let (x, y) = (f64::from(at.x), f64::from(at.y));
                    d.bounds = Some(accesskit::Rect::new(
                        x,
                        y,
                        x + f64::from(at.w),
                        y + f64::from(at.h),
                    ));
                    for b in &mut d.buttons {
                        b.bounds = dialog.control_bounds(b.control).map(|[bx, by, w, h]| {
                            accesskit::Rect::new(x + bx, y + by, x + bx + w, y + by + h)
                        });
                    }
                }
                Some(d)
            }
            _ => None,
        };
        Reading {
            window: config.text.a11y_window.clone(),
            dialog: dialog_reading,
            announcement: announcement.to_string(),
            keyboard,
        }
    }
}

fn read_dialog(
    config: &pcp_overlay::Config,
    content: &DialogContent,
    live: &pcp_overlay::LiveState,
    keyboard: bool,
    word_read_aloud: bool,
) -> DialogReading {
    let text = &config.text;
    let r = &content.requester;
    let how = match r {
        Requester::Sandboxed { engine, .. } => {
            let engine = if engine.is_empty() {
                text.unnamed_sandbox.clone()
            } else {
                config.visible_name(engine)
            };
            text.requester_sandboxed.replace("{engine}", &engine)
        }
        Requester::Unconfined { pid, .. } => {
            text.requester_unconfined.replace("{pid}", &pid.to_string())
        }
        Requester::Unknown { .. } => text.requester_unknown.clone(),
    };
    let mut requester = format!("{} — {how}", config.visible_name(r.name()));
    if let Some(id) = content.declared_app_id.as_deref().filter(|i| !i.is_empty()) {
        requester.push_str(". ");
        requester.push_str(
            &text
                .declared_app_id
                .replace("{id}", &config.visible_name(id)),
        );
    }
    let action = config.visible_text(&content.action);
    let risk = text.risk(content.risk).to_string();
    let target = (!content.target.is_empty()).then(|| config.visible_text(&content.target));
    let steps: Vec<String> = content
        .steps
        .iter()
        .map(|s| config.visible_text(s))
        .collect();
    let seconds_left = live.seconds_left.unwrap_or(content.seconds_left);
    let countdown = text.seconds_left.replace("{n}", &seconds_left.to_string());
    let voice = voice_line(text, content, live, word_read_aloud);
    let hold = content.needs_hold(config).then(|| text.hold_hint.clone());
    let waiting = live.queued.unwrap_or(content.queued);
    let queued = (waiting > 0).then(|| text.queued.replace("{n}", &waiting.to_string()));
    // Approve is enabled as the dialog draws it: once the guard armed and the text was read.
    let approvable = live.armed && live.read_all && !live.approve_locked;
    let button = |control, label: &str, enabled| ButtonReading {
        control,
        label: label.to_string(),
        enabled,
        bounds: None,
    };
    let mut buttons = vec![
        // Deny takes input as soon as the dialog is shown: a refusal never waits for the guard.
        button(Control::Deny, &text.deny, true),
        button(Control::Approve, &text.approve, approvable),
    ];
    if content.offer_session {
        buttons.push(button(Control::Session, &text.allow_session, approvable));
    }
    let mut description = format!("{requester}. {} {action}. {risk}.", text.asks);
    if let Some(t) = &target {
        description.push_str(&format!(" {}: {t}.", text.target_label));
    }
    if !steps.is_empty() {
        description.push_str(&format!(" {}: {}.", text.steps_label, steps.join("; ")));
    }
    if let Some(h) = &hold {
        description.push_str(&format!(" {h}."));
    }
    DialogReading {
        action,
        description,
        requester,
        risk,
        target,
        target_label: text.target_label.clone(),
        steps,
        countdown,
        seconds_left,
        timeout_seconds: content.timeout_seconds,
        voice,
        hold,
        queued,
        entry: live.entry.clone().filter(|_| content.entry),
        buttons,
        bounds: None,
        focus: live.focus.filter(|_| keyboard),
    }
}

/// The voice step's line: its state, or why voice is missing. With a challenge word read aloud
/// it says what a spoken approval needs: the approval and the word heard ("네" alone decides
/// nothing).
fn voice_line(
    text: &pcp_overlay::config::Strings,
    content: &DialogContent,
    live: &pcp_overlay::LiveState,
    word_read_aloud: bool,
) -> Option<String> {
    if !content.modalities.contains(&pcp_overlay::Modality::Voice) {
        return content.voice_unavailable.clone();
    }
    let with_word = word_read_aloud && content.challenge.is_some();
    Some(match live.voice {
        VoiceState::Listening if with_word => text.listening_word_heard.clone(),
        VoiceState::Listening => text.listening.clone(),
        VoiceState::Heard => text.voice_heard.clone(),
        VoiceState::Missed if with_word => text.missed_word_heard.clone(),
        VoiceState::Missed => text.voice_missed.clone(),
        VoiceState::Unavailable => text.voice_unavailable.clone(),
    })
}

impl DialogReading {
    fn target_line(&self, target: &str) -> String {
        format!("{}: {target}", self.target_label)
    }
}

/// The AccessKit tree of `reading`: always the whole tree (it is small), so any update can
/// also be the first one an adapter gets.
pub fn tree_of(reading: &Reading) -> TreeUpdate {
    let mut nodes = Vec::new();
    let mut root = Node::new(Role::Window);
    root.set_label(reading.window.clone());
    let mut announcement = Node::new(Role::Label);
    announcement.set_value(reading.announcement.clone());
    announcement.set_live(Live::Polite);
    let mut children = vec![ANNOUNCEMENT];
    nodes.push((ANNOUNCEMENT, announcement));
    let mut focus = ROOT;
    if let Some(d) = &reading.dialog {
        children.push(DIALOG);
        focus = if reading.keyboard { DIALOG } else { ROOT };
        let mut dialog = Node::new(Role::AlertDialog);
        dialog.set_modal();
        dialog.set_label(d.action.clone());
        dialog.set_description(d.description.clone());
        if let Some(r) = d.bounds {
            dialog.set_bounds(r);
        }
        let mut parts = Vec::new();
        let mut add = |id: NodeId, node: Node, nodes: &mut Vec<(NodeId, Node)>| {
            nodes.push((id, node));
            parts.push(id);
        };
        add(REQUESTER, text_node(Role::Label, &d.requester), &mut nodes);
        add(RISK, text_node(Role::Label, &d.risk), &mut nodes);
        if let Some(t) = &d.target {
            add(
                TARGET,
                text_node(Role::Label, &d.target_line(t)),
                &mut nodes,
            );
        }
        if !d.steps.is_empty() {
            let mut list = Node::new(Role::List);
            let mut items = Vec::new();
            for (i, s) in d.steps.iter().enumerate() {
                let id = NodeId(FIRST_STEP + i as u64);
                nodes.push((id, text_node(Role::ListItem, s)));
                items.push(id);
            }
            list.set_children(items);
            add(STEPS, list, &mut nodes);
        }
        let mut countdown = Node::new(Role::ProgressIndicator);
        countdown.set_label(d.countdown.clone());
        countdown.set_value(d.countdown.clone());
        countdown.set_numeric_value(f64::from(d.seconds_left));
        countdown.set_min_numeric_value(0.0);
        countdown.set_max_numeric_value(f64::from(d.timeout_seconds.max(d.seconds_left)));
        add(COUNTDOWN, countdown, &mut nodes);
        if let Some(v) = &d.voice {
            add(VOICE, text_node(Role::Status, v), &mut nodes);
        }
        if let Some(h) = &d.hold {
            add(HOLD, text_node(Role::Label, h), &mut nodes);
        }
        if let Some(q) = &d.queued {
            add(QUEUED, text_node(Role::Status, q), &mut nodes);
        }
        for (id, node) in d.entry.as_ref().map(entry_nodes).unwrap_or_default() {
            add(id, node, &mut nodes);
        }
        for b in &d.buttons {
            let id = button_id(b.control);
            let mut node = Node::new(Role::Button);
            node.set_label(b.label.clone());
            // Advertised like any button so that screen readers present it as one; every
            // request is refused (see `Refuse`).
            node.add_action(Action::Focus);
            node.add_action(Action::Click);
            if !b.enabled {
                node.set_disabled();
            }
            if let Some(r) = b.bounds {
                node.set_bounds(r);
            }
            add(id, node, &mut nodes);
            if reading.keyboard && d.focus == Some(b.control) {
                focus = id;
            }
        }
        dialog.set_children(parts);
        nodes.push((DIALOG, dialog));
    }
    root.set_children(children);
    nodes.push((ROOT, root));
    TreeUpdate {
        nodes,
        tree: Some(TreeInfo::new(ROOT)),
        tree_id: TreeId::ROOT,
        focus,
    }
}

/// A text entry's nodes: the field (a password field's value is its masking dots, never the
/// text) and its message.
fn entry_nodes(e: &pcp_overlay::EntryLine) -> Vec<(NodeId, Node)> {
    let role = if e.masked {
        Role::PasswordInput
    } else {
        Role::TextInput
    };
    let mut field = Node::new(role);
    field.set_label(e.label.trim_end().to_string());
    field.set_value(e.shown.clone());
    field.set_read_only();
    let mut nodes = vec![(ENTRY, field)];
    if let Some(m) = &e.message {
        nodes.push((ENTRY_MESSAGE, text_node(Role::Status, m)));
    }
    if let Some(a) = &e.account {
        // Its words say how to ask for another account (a press, or the arrow key while the
        // entry has the keyboard); a screen reader reads them like the message.
        nodes.push((ENTRY_ACCOUNT, text_node(Role::Label, a)));
    }
    nodes
}

/// A node whose name is `text` (a label's name is its value).
fn text_node(role: Role, text: &str) -> Node {
    let mut n = Node::new(role);
    if role == Role::Label {
        n.set_value(text.to_string());
    } else {
        n.set_label(text.to_string());
    }
    n
}

fn button_id(control: Control) -> NodeId {
    match control {
        Control::Deny => DENY,
        Control::Approve => APPROVE,
        Control::Session => SESSION,
    }
}

pub(crate) use publisher::Publisher;

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(keyboard: bool, focus: Option<Control>) -> Reading {
        let button = |control, label: &str| ButtonReading {
            control,
            label: label.into(),
            enabled: true,
            bounds: Some(accesskit::Rect::new(10.0, 20.0, 110.0, 60.0)),
        };
        Reading {
            window: "Confirmation".into(),
            dialog: Some(DialogReading {
                action: "Install the package cowsay".into(),
                description: "/usr/bin/agent — Not sandboxed · process 7. asks to: …".into(),
                requester: "/usr/bin/agent — Not sandboxed · process 7".into(),
                risk: "Changes the system".into(),
                target: Some("cowsay".into()),
                target_label: "Target".into(),
                steps: vec!["download".into(), "install".into()],
                countdown: "12 s left".into(),
                seconds_left: 12,
                timeout_seconds: 30,
                voice: Some("Listening…".into()),
                hold: Some("Hold Approve to confirm".into()),
                queued: Some("2 more waiting".into()),
                entry: None,
                buttons: vec![
                    button(Control::Deny, "Deny"),
                    button(Control::Approve, "Approve"),
                ],
                bounds: None,
                focus,
            }),
            announcement: "Confirmation needed: Install the package cowsay".into(),
            keyboard,
        }
    }

    fn node(update: &TreeUpdate, id: NodeId) -> &Node {
        &update
            .nodes
            .iter()
            .find(|(i, _)| *i == id)
            .expect("the node")
            .1
    }

    fn shown(fixture: &str) -> ConfirmDialog {
        // As the plugin shows it with the English pack's answer words filled in.
        let defaults = pcp_overlay::Config::default();
        let config = pcp_overlay::Config {
            text: defaults.text.with_answer_words("yes", "no", "cancel"),
            ..defaults
        };
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../overlay/tests/fixtures")
            .join(fixture);
        let content = pcp_overlay::load_content(&path, &config).unwrap();
        let fonts = pcp_overlay::Fonts::with_files::<&str>(&[]).unwrap();
        let mut d = ConfirmDialog::new(config, fonts);
        d.show(content, 0).unwrap();
        d
    }

    #[test]
    fn the_reading_says_what_the_dialog_shows() {
        let mut d = shown("delete.json");
        let r = Reading::of(&d, None, "", false, false);
        let read = r.dialog.unwrap();
        assert_eq!(read.action, "Delete report.pdf");
        assert_eq!(
            read.requester,
            "org.gnome.Nautilus — Verified: flatpak sandbox. Calls itself “Files”"
        );
        assert_eq!(read.risk, "Destructive: cannot be undone");
        assert_eq!(read.target.as_deref(), Some("/home/u/report.pdf"));
        assert_eq!(read.countdown, "27 s left");
        assert_eq!(read.queued.as_deref(), Some("2 more waiting"));
        assert_eq!(read.voice.as_deref(), Some("Listening… say “yes” or “no”"));
        assert!(read.description.starts_with(&read.requester));
        assert!(read.description.contains("/home/u/report.pdf"));
        // Its challenge word read aloud (a screen reader runs): the voice line says to say the
        // word heard, and no node of the tree holds the word.
        let aloud = Reading::of(&d, None, "", false, true);
        assert_eq!(
            aloud.dialog.as_ref().unwrap().voice.as_deref(),
            Some("Listening… to approve, say “yes” and the word you heard; to deny, say “no”")
        );
        let tree = format!("{:?}", tree_of(&aloud));
        assert!(!tree.contains("harbor"), "{tree}");
        assert!(!format!("{aloud:?}").contains("harbor"));
        d.set_voice(VoiceState::Missed, 0.0);
        let missed = Reading::of(&d, None, "", false, true).dialog.unwrap().voice;
        assert_eq!(
            missed.as_deref(),
            Some(
                "Didn't catch that: to approve, say “yes” and the word you heard; to deny, say “no”"
            )
        );
        d.set_voice(VoiceState::Heard, 0.5);
        let heard = Reading::of(&d, None, "", false, false)
            .dialog
            .unwrap()
            .voice;
        assert_eq!(heard.as_deref(), Some("Heard “yes”: now choose Approve"));

        let d = shown("multistep.json");
        let read = Reading::of(&d, None, "", false, false).dialog.unwrap();
        assert_eq!(read.steps.len(), 3);
        assert!(
            read.description
                .contains("Steps: Move 14 PDF files to Documents/Papers;")
        );
        assert_eq!(read.voice, None, "no voice step, no voice state");
        assert_eq!(read.queued, None);
    }

    #[test]
    fn the_dialog_is_a_modal_alert_dialog_with_everything_it_shows() {
        let t = tree_of(&reading(false, None));
        let d = node(&t, DIALOG);
        assert_eq!(d.role(), Role::AlertDialog);
        assert!(d.is_modal());
        assert_eq!(d.label(), Some("Install the package cowsay"));
        assert!(d.description().unwrap().contains("/usr/bin/agent"));
        let countdown = node(&t, COUNTDOWN);
        assert_eq!(countdown.numeric_value(), Some(12.0));
        assert_eq!(countdown.max_numeric_value(), Some(30.0));
        assert_eq!(node(&t, TARGET).value(), Some("Target: cowsay"));
        assert_eq!(node(&t, VOICE).label(), Some("Listening…"));
        assert_eq!(node(&t, QUEUED).label(), Some("2 more waiting"));
        assert_eq!(node(&t, STEPS).children().len(), 2);
        assert_eq!(node(&t, APPROVE).label(), Some("Approve"));
        assert_eq!(node(&t, ANNOUNCEMENT).live(), Some(Live::Polite));
        // Without the keyboard nothing in the dialog has the focus.
        assert_eq!(t.focus, ROOT);
    }

    #[test]
    fn a_password_entry_is_a_password_field_whose_value_is_its_dots() {
        let mut r = reading(false, None);
        if let Some(d) = &mut r.dialog {
            d.entry = Some(pcp_overlay::EntryLine {
                label: "Password: ".into(),
                shown: "•••".into(),
                masked: true,
                message: Some("Authentication failed. 2 tries left.".into()),
                focused: true,
                account: None,
            });
        }
        let t = tree_of(&r);
        let entry = node(&t, ENTRY);
        assert_eq!(entry.role(), Role::PasswordInput);
        assert_eq!(entry.label(), Some("Password:"));
        assert_eq!(entry.value(), Some("•••"));
        assert_eq!(
            node(&t, ENTRY_MESSAGE).label(),
            Some("Authentication failed. 2 tries left.")
        );
        assert!(node(&t, DIALOG).children().contains(&ENTRY));
    }

    #[test]
    fn the_focus_follows_the_seat_and_the_tree_empties_when_the_dialog_goes() {
        assert_eq!(tree_of(&reading(true, None)).focus, DIALOG);
        assert_eq!(tree_of(&reading(true, Some(Control::Deny))).focus, DENY);
        assert_eq!(
            tree_of(&reading(true, Some(Control::Approve))).focus,
            APPROVE
        );
        let mut gone = reading(false, None);
        gone.dialog = None;
        gone.announcement = "Denied: Install the package cowsay".into();
        let t = tree_of(&gone);
        assert_eq!(node(&t, ROOT).children(), [ANNOUNCEMENT]);
        assert_eq!(t.nodes.len(), 2);
        assert_eq!(
            node(&t, ANNOUNCEMENT).value(),
            Some("Denied: Install the package cowsay")
        );
    }
}
