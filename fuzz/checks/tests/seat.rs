//! The seat check sees approvals: a press and release on Approve after the guard approves
//! through each kind of contact, so its "no approval without a witness" property is not
//! vacuous; the attacks the model forbids are played through it too.

use pcp_fuzz_checks::seat::{Event, Input, Spot, run};

const APPROVE: Spot = Spot::Approve(0, 0);

fn play(events: &[Event]) -> bool {
    run(&Input {
        events: events.to_vec(),
    })
}

#[test]
fn each_kind_of_contact_approves_with_its_own_press_and_release_on_approve() {
    assert!(play(&[
        Event::Wait(1000),
        Event::TouchDown(0, APPROVE),
        Event::TouchUp(0),
    ]));
    assert!(play(&[
        Event::Wait(1000),
        Event::PointerTo(APPROVE),
        Event::Button(0, true),
        Event::Button(0, false),
    ]));
    assert!(play(&[
        Event::Wait(1000),
        Event::PenTo(APPROVE),
        Event::PenTip(true),
        Event::PenTip(false),
    ]));
}

#[test]
fn the_attacks_approve_nothing() {
    // Inside the guard.
    assert!(!play(&[
        Event::Wait(700),
        Event::TouchDown(0, APPROVE),
        Event::TouchUp(0),
        Event::PenTo(APPROVE),
        Event::PenTip(true),
        Event::PenTip(false),
    ]));
    // A second finger on Approve while the first rests on the dialog.
    assert!(!play(&[
        Event::Wait(1000),
        Event::TouchDown(0, Spot::Dialog(8, 8)),
        Event::TouchDown(1, APPROVE),
        Event::TouchUp(1),
    ]));
    // A finger from the window slid onto Approve.
    assert!(!play(&[
        Event::Wait(1000),
        Event::TouchDown(0, Spot::Anywhere(0, 0)),
        Event::TouchMotion(0, APPROVE),
        Event::TouchUp(0),
    ]));
    // A cancel in the middle of a press, then the pointer's release on Approve.
    assert!(!play(&[
        Event::Wait(1000),
        Event::TouchDown(0, APPROVE),
        Event::TouchCancel,
        Event::TouchUp(0),
        Event::PointerTo(APPROVE),
        Event::Button(0, false),
    ]));
    // A pinch and a scroll over the dialog.
    assert!(!play(&[
        Event::Wait(1000),
        Event::PointerTo(APPROVE),
        Event::Pinch(0),
        Event::Pinch(1),
        Event::Scroll(120),
    ]));
}
