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

/// A change only to keys that cannot weaken anything (the background colour) applies at once,
/// with no prompt: the compositor gets its own section back from the plugin as it proposed it,
/// and the next frame shows it.
#[test]
fn an_unrelated_change_to_the_compositors_own_section_applies_at_once() {
    let mut fx = Fixture::new(&["800x600@0,0"]);
    let text = fx
        .config_text()
        .replace("background = \"#202028\"", "background = \"#104080\"");
    assert_ne!(text, fx.config_text());
    std::fs::write(fx.config_path(), text).unwrap();
    fx.reload_config();
    assert!(!fx.dialog_open(), "nothing to ask about");
    assert!(fx.notice_text().is_none());
    let c = fx.capture(0);
    let px = c.pixel(c.width / 2, c.height - 2);
    let want = [0x10u8, 0x40, 0x80];
    assert!(
        px[..3].iter().zip(want).all(|(a, b)| a.abs_diff(b) <= 2),
        "the new background: {px:?}"
    );
}

/// The compositor as the binary runs it (frame timer and config watch on the real loop), its
/// config in a folder of its own.
fn watched_compositor(
    folder: &std::path::Path,
    state: &std::path::Path,
) -> pcp_compositor::state::Compositor {
    use pcp_compositor::startup;
    let assets = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets");
    let config = folder.join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[manifests]\ndirs = [{:?}]\n[state]\npath = {:?}\n[overlay]\nsystem_fonts = false\n\
             [speech]\nenabled = false\n[compositor]\nreload_check_ms = 50\n",
            assets.join("capabilities.d"),
            state.join("state.sqlite3"),
        ),
    )
    .unwrap();
    let loaded = startup::load(Some(&config)).unwrap();
    let options = startup::options(
        loaded,
        vec!["640x480".parse().unwrap()],
        Some(pcp_compositor::state::Socket::Path(state.join("wl"))),
        Some(config),
        true,
    )
    .unwrap();
    pcp_compositor::state::Compositor::new(options).unwrap()
}

/// Runs the compositor's loop until `done` or 10 s.
fn run_until(
    compositor: &mut pcp_compositor::state::Compositor,
    mut done: impl FnMut(&pcp_compositor::state::Compositor) -> bool,
) -> bool {
    let start = std::time::Instant::now();
    while start.elapsed() < std::time::Duration::from_secs(10) {
        if done(compositor) {
            return true;
        }
        compositor
            .dispatch(Some(std::time::Duration::from_millis(20)))
            .unwrap();
    }
    done(compositor)
}

#[test]
fn a_config_folder_deleted_and_made_again_is_still_watched() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let folder = dir.path().join("pcp");
    std::fs::create_dir(&folder).unwrap();
    let mut compositor = watched_compositor(&folder, dir.path());
    let config = folder.join("config.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    let notice = |c: &pcp_compositor::state::Compositor| c.state.notice_text().map(str::to_string);

    // The folder goes (a dotfiles tool replacing it, say) and comes back with a broken file:
    // the change is still seen, by polling while no watch can be set, then by a new watch.
    std::fs::remove_dir_all(&folder).unwrap();
    assert!(
        run_until(&mut compositor, |c| notice(c).is_some()),
        "the file's disappearance is refused on screen"
    );
    std::fs::create_dir(&folder).unwrap();
    std::fs::write(&config, &text).unwrap();
    assert!(
        run_until(&mut compositor, |c| notice(c).is_none()),
        "the file back as it was is seen: {:?}",
        notice(&compositor)
    );
    std::fs::write(&config, "[safety]\nlevel = \"lax\"\n").unwrap();
    assert!(
        run_until(&mut compositor, |c| notice(c).is_some()),
        "a broken file in the folder made again is seen"
    );
    let shown = notice(&compositor).unwrap();
    assert!(shown.contains("config.toml:2:"), "{shown}");

    // Once watched again, a change is seen through the watch as well.
    std::fs::write(&config, &text).unwrap();
    assert!(
        run_until(&mut compositor, |c| notice(c).is_none()),
        "the good file applies again: {:?}",
        notice(&compositor)
    );
}
