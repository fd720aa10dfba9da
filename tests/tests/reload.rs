//! Config reload: a refused file keeps the previous config and says so on every output; a good
//! file takes effect.

mod harness;

use serde_json::json;

use harness::{Fixture, intent, is_background};

#[test]
fn a_bad_config_is_refused_on_screen_and_a_good_one_applies() {
    let mut fx = Fixture::new(&["800x600@0,0", "640x480*2@800,0"]);
    std::fs::write(fx.config_path(), "[safety]\nlevel = \"lax\"\n").unwrap();
    fx.reload_config();
    let notice = fx.notice_text().expect("a notice is up").to_string();
    assert!(
        notice.starts_with("The changed config was refused"),
        "{notice}"
    );
    assert!(
        notice.contains("config.toml:2:"),
        "the error names file:line: {notice}"
    );
    for i in 0..2 {
        let c = fx.capture(i);
        assert!(
            !is_background(c.pixel(c.width / 2, 2)),
            "output {i} shows the notice"
        );
        assert!(is_background(c.pixel(c.width / 2, c.height - 2)));
        fx.save_png(i, &format!("reload-refused-output{i}"));
    }
    // The previous config is still in force: 30 s visual timeout.
    let c = fx.submit(intent("settings.change", json!({"key": "a", "value": "b"})));
    fx.pending(&c);
    fx.advance_clock(10_000);
    assert!(fx.dialog_open());
    fx.advance_clock(21_000);
    assert_eq!(fx.decision(&c).resolution, "confirmation.timeout");

    let good = format!("{}[timeouts]\nvisual_seconds = 5\n", fx.config_text());
    std::fs::write(fx.config_path(), good).unwrap();
    fx.reload_config();
    assert!(
        fx.notice_text().is_none(),
        "the notice goes with a good config"
    );
    let c0 = fx.capture(0);
    assert!(is_background(c0.pixel(c0.width / 2, 2)));
    let c = fx.submit(intent("settings.change", json!({"key": "a", "value": "c"})));
    fx.pending(&c);
    fx.advance_clock(6_000);
    assert_eq!(fx.decision(&c).resolution, "confirmation.timeout");
}
