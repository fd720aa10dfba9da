//! The dialog's reading settings through the compositor's config: `[overlay] text_scale` makes
//! the dialog's text (and the dialog) larger, and `reduced_motion` draws a press-and-hold in
//! quarters instead of animating it. Each case is saved as a PNG of the output under
//! `target/pcp-captures/` for a person to look at.

mod harness;

use harness::*;
use pcp_overlay::Control;
use serde_json::json;

/// A compositor with `overlay` lines, showing a prompt (the client, kept, holds it open).
fn with_prompt(overlay: &str) -> (Fixture, AsyncIntent) {
    let mut fx = Fixture::with_overlay(&["1280x800@0,0"], overlay);
    let client = fx.submit(intent("package.install", json!({"package": "cowsay"})));
    fx.pending(&client);
    // The click guard arms.
    fx.advance_clock(1000);
    (fx, client)
}

#[test]
fn text_scale_1_5_makes_the_dialog_larger() {
    let (mut plain, _c1) = with_prompt("");
    let (mut scaled, _c2) = with_prompt("text_scale = 1.5");
    let (p, s) = (plain.dialog_rect().unwrap(), scaled.dialog_rect().unwrap());
    assert!(s.w > p.w && s.h > p.h, "{p:?} → {s:?}");
    plain.save_png(0, "dialog_text_scale_1.0");
    scaled.save_png(0, "dialog_text_scale_1.5");
}

/// The dialog's pixels at 30 % and at 45 % of a press-and-hold on Approve (800 ms).
fn mid_hold(overlay: &str, name: &str) -> (Vec<u8>, Vec<u8>) {
    let (mut fx, _client) = with_prompt(overlay);
    let (x, y) = fx.control_centre(Control::Approve);
    fx.inject_pointer_motion(x, y);
    fx.inject_pointer_button(true);
    fx.advance_clock(240);
    let early = fx.dialog_pixels().2;
    fx.save_png(0, name);
    fx.advance_clock(120);
    let later = fx.dialog_pixels().2;
    assert!(
        fx.gate().active().is_some(),
        "a hold under 800 ms approves nothing"
    );
    (early, later)
}

#[test]
fn reduced_motion_draws_a_hold_in_quarters() {
    let (early, later) = mid_hold("", "dialog_hold_30_percent");
    assert_ne!(
        early, later,
        "without reduced motion the hold bar fills smoothly"
    );
    let (early, later) = mid_hold(
        "reduced_motion = true",
        "dialog_hold_30_percent_reduced_motion",
    );
    assert_eq!(
        early, later,
        "with reduced motion 30 % and 45 % are both drawn as a quarter"
    );
}
