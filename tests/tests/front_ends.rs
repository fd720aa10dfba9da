//! A front end other than the Wayland protocol (as the polkit agent will be): in-process, it
//! submits through the same engine and hears its answers by ticket, while a Wayland client's
//! intents go on beside it. The dialog, the seat input and the audit log are the real ones.

mod harness;

use std::cell::RefCell;
use std::rc::Rc;

use pcp_gate::{ClientIdentity, Intent};
use pcp_overlay::Control;
use pcp_plugin::{Delivery, FrontEnd, Request, Ticket};
use serde_json::json;

use harness::{Fixture, intent};

const ONE: &[&str] = &["1920x1080@0,0"];

/// A front end that keeps what it hears.
#[derive(Clone, Default)]
struct Recorder {
    heard: Rc<RefCell<Vec<Delivery>>>,
}

impl FrontEnd for Recorder {
    fn deliver(&mut self, effect: Delivery) -> Option<Request> {
        self.heard.borrow_mut().push(effect);
        None
    }
}

impl Recorder {
    fn take(&self) -> Vec<Delivery> {
        std::mem::take(&mut self.heard.borrow_mut())
    }
}

fn local_intent(capability: &str, params: serde_json::Value) -> Intent {
    // A D-Bus front end names its subject from the bus's credentials the same way.
    let client = ClientIdentity {
        id: "local-1".into(),
        pid: Some(std::process::id()),
        ..ClientIdentity::default()
    };
    Intent::new(capability, params, client)
}

fn decided(effects: &[Delivery], ticket: Ticket) -> &pcp_plugin::Decided {
    effects
        .iter()
        .find_map(|e| match e {
            Delivery::Decided(d) if d.ticket == ticket => Some(&**d),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no decision for {ticket:?}: {effects:?}"))
}

#[test]
fn a_second_front_end_is_answered_through_the_same_engine() {
    let mut fx = Fixture::new(ONE);
    let recorder = Recorder::default();
    let front = fx.pcp_mut().add_front_end(Box::new(recorder.clone()));
    let ticket = |number| Ticket { front, number };

    // A routine intent is decided at once, with a token, and audited like any other.
    let intent = local_intent("file.write", json!({"path": "/tmp/a"}));
    fx.run_command(Request::Submit {
        ticket: ticket(1),
        intent,
    });
    let heard = recorder.take();
    let d = decided(&heard, ticket(1));
    assert!(d.outcome.approved, "{d:?}");
    assert_eq!(d.outcome.resolution.as_str(), "policy_allow");
    assert!(d.outcome.token.is_some());
    // The approval carries what it runs, as the gate checked it, and who asked.
    let run = d
        .outcome
        .run
        .as_ref()
        .expect("an approval carries what it runs");
    assert_eq!(run.capability, "file.write");
    assert_eq!(run.params, json!({"path": "/tmp/a"}));
    assert_eq!(run.client.id, "local-1");

    // One that needs the user waits for the dialog, which a Wayland client's intent queues
    // behind; the seat's click answers the front end's, then the client's is shown.
    let intent = local_intent("settings.change", json!({"key": "dark", "value": "on"}));
    fx.run_command(Request::Submit {
        ticket: ticket(2),
        intent,
    });
    let heard = recorder.take();
    assert!(
        matches!(heard.as_slice(), [Delivery::Pending { ticket: t, .. }] if *t == ticket(2)),
        "{heard:?}"
    );
    assert!(fx.dialog_open());
    let c = fx.submit(intent_of_client());
    fx.pending(&c);
    fx.advance_clock(2000);
    fx.click(Control::Approve);
    let heard = recorder.take();
    let d = decided(&heard, ticket(2));
    assert!(d.outcome.approved, "{d:?}");
    assert_eq!(d.outcome.resolution.as_str(), "user_approved");
    let run = d
        .outcome
        .run
        .as_ref()
        .expect("an approval carries what it runs");
    assert_eq!(run.params, json!({"key": "dark", "value": "on"}));
    assert!(
        fx.dialog_open(),
        "the Wayland client's prompt is shown next"
    );
    fx.advance_clock(2000);
    fx.click(Control::Deny);
    let wire = fx.decision(&c);
    assert_eq!(wire.resolution, "user_denied");
    assert!(
        recorder.take().is_empty(),
        "the client's answer is not the front end's"
    );

    fx.pcp_mut().flush().unwrap();
    let audited: Vec<String> = fx
        .gate()
        .store()
        .audit_since(0)
        .unwrap()
        .into_iter()
        .filter(|r| r.client.id == "local-1")
        .map(|r| r.resolution.as_str().to_string())
        .collect();
    assert_eq!(audited, ["policy_allow", "user_approved"]);
}

#[test]
fn a_front_end_may_withdraw_its_ticket_and_a_reused_ticket_is_refused() {
    let mut fx = Fixture::new(ONE);
    let recorder = Recorder::default();
    let front = fx.pcp_mut().add_front_end(Box::new(recorder.clone()));
    let ticket = Ticket { front, number: 7 };
    let intent = local_intent("settings.change", json!({"key": "a", "value": "b"}));
    fx.run_command(Request::Submit {
        ticket,
        intent: intent.clone(),
    });
    assert!(fx.dialog_open());
    recorder.take();

    // The same number again while the first is open: refused, the first one stays.
    fx.run_command(Request::Submit { ticket, intent });
    let heard = recorder.take();
    let d = decided(&heard, ticket);
    assert!(!d.outcome.approved);
    assert!(d.outcome.reason.contains("already open"), "{d:?}");
    assert!(fx.dialog_open());

    fx.run_command(Request::Cancel(ticket));
    let heard = recorder.take();
    assert_eq!(
        decided(&heard, ticket).outcome.resolution.as_str(),
        "cancelled"
    );
    assert!(!fx.dialog_open());
}

/// A Wayland client's intent that needs the user.
fn intent_of_client() -> pcp_protocol::client::Submission {
    intent("settings.change", json!({"key": "light", "value": "on"}))
}

/// evdev key codes on the harness's US keyboard.
const KEY_P: u32 = 25;
const KEY_W: u32 = 17;
const KEY_ENTER: u32 = 28;
const KEY_LEFTMETA: u32 = 125;

fn tap(fx: &mut Fixture, code: u32) {
    fx.inject_key(code, true);
    fx.inject_key(code, false);
}

fn submitted(effects: &[Delivery]) -> Vec<String> {
    effects
        .iter()
        .filter_map(|e| match e {
            Delivery::EntrySubmitted { text, .. } => Some(text.0.to_string()),
            _ => None,
        })
        .collect()
}

#[test]
fn a_front_ends_entry_takes_keys_only_after_an_explicit_act_and_locks_approve_until_accepted() {
    use pcp_plugin::EntryUpdate;
    let mut fx = Fixture::new(ONE);
    let recorder = Recorder::default();
    let front = fx.pcp_mut().add_front_end(Box::new(recorder.clone()));
    let ticket = Ticket { front, number: 1 };
    let intent = local_intent("settings.change", json!({"key": "a", "value": "b"}));
    fx.run_command(Request::Submit { ticket, intent });
    let ask = EntryUpdate::Ask {
        label: "Password: ".into(),
        echo: false,
    };
    fx.run_command(Request::Entry {
        ticket,
        update: ask,
    });
    assert!(fx.dialog_open());
    recorder.take();
    fx.advance_clock(2000);

    // The dialog appearing gave it nothing: these keys are the clients'.
    tap(&mut fx, KEY_P);
    tap(&mut fx, KEY_ENTER);
    assert!(submitted(&recorder.take()).is_empty());
    let entry = fx.dialog_entry().expect("the entry is shown");
    assert_eq!((entry.shown.as_str(), entry.focused), ("", false));

    // The focus shortcut gives the entry the keys.
    fx.inject_key(KEY_LEFTMETA, true);
    tap(&mut fx, KEY_ENTER);
    fx.inject_key(KEY_LEFTMETA, false);
    for code in [KEY_P, KEY_W] {
        tap(&mut fx, code);
    }
    assert_eq!(fx.dialog_entry().unwrap().shown, "••", "masked");

    // Approve before the entry was accepted: locked, nothing is decided.
    fx.click(Control::Approve);
    assert!(fx.dialog_open(), "Approve is locked");
    assert!(recorder.take().is_empty());

    // Enter hands the line to this front end, and to no one else.
    tap(&mut fx, KEY_ENTER);
    assert_eq!(submitted(&recorder.take()), ["pw"]);

    // Accepted: Approve answers now.
    fx.run_command(Request::Entry {
        ticket,
        update: EntryUpdate::Accepted,
    });
    fx.advance_clock(2000);
    fx.click(Control::Approve);
    let heard = recorder.take();
    let d = decided(&heard, ticket);
    assert!(d.outcome.approved, "{d:?}");
}

fn account_switches(effects: &[Delivery], ticket: Ticket) -> usize {
    effects
        .iter()
        .filter(|e| matches!(e, Delivery::EntryNextAccount { ticket: t } if *t == ticket))
        .count()
}

#[test]
fn the_account_row_asks_for_the_next_account_by_touch_or_down_but_not_while_checking() {
    use pcp_plugin::EntryUpdate;
    use pcp_plugin::ui::EntryState;
    const KEY_DOWN: u32 = 108;
    let mut fx = Fixture::new(ONE);
    let recorder = Recorder::default();
    let front = fx.pcp_mut().add_front_end(Box::new(recorder.clone()));
    let ticket = Ticket { front, number: 1 };
    let intent = local_intent("settings.change", json!({"key": "a", "value": "b"}));
    fx.run_command(Request::Submit { ticket, intent });
    let ask = || EntryUpdate::Ask {
        label: "Password: ".into(),
        echo: false,
    };
    fx.run_command(Request::Entry {
        ticket,
        update: ask(),
    });
    assert!(
        fx.row_centre(pcp_overlay::Row::EntryAccount).is_none(),
        "one account: no row"
    );
    fx.run_command(Request::Entry {
        ticket,
        update: EntryUpdate::Account("For alice. Tap here to use root.".into()),
    });
    recorder.take();
    fx.advance_clock(2000);
    let (x, y) = fx
        .row_centre(pcp_overlay::Row::EntryAccount)
        .expect("the account row is drawn");
    fx.save_png(0, "entry-account-row");

    // A tap on the row: the front end hears it, and the entry waits for its next question.
    fx.inject_touch_down(x, y);
    fx.inject_touch_up();
    assert_eq!(account_switches(&recorder.take(), ticket), 1);
    assert_eq!(fx.dialog_entry().unwrap().state, EntryState::Waiting);
    assert!(fx.dialog_open(), "the tap answered nothing");

    // Down in the focused entry does the same; typed text is dropped with the old account.
    fx.run_command(Request::Entry {
        ticket,
        update: ask(),
    });
    // The tap on the dialog was an explicit act: the entry has the keyboard.
    assert!(fx.dialog_entry().unwrap().focused);
    tap(&mut fx, KEY_P);
    tap(&mut fx, KEY_DOWN);
    assert_eq!(account_switches(&recorder.take(), ticket), 1);
    assert_eq!(fx.dialog_entry().unwrap().shown, "");

    // While a typed line is being checked, the account stays.
    fx.run_command(Request::Entry {
        ticket,
        update: ask(),
    });
    tap(&mut fx, KEY_W);
    tap(&mut fx, KEY_ENTER);
    assert_eq!(submitted(&recorder.take()), ["w"]);
    fx.inject_touch_down(x, y);
    fx.inject_touch_up();
    assert_eq!(account_switches(&recorder.take(), ticket), 0);
    assert_eq!(fx.dialog_entry().unwrap().state, EntryState::Checking);
}
