//! Golden PNGs of canonical dialog states at scales 1 and 2 (plus CJK, RTL and an overfull
//! prompt on a small panel), compared with a small per-pixel tolerance. Only the bundled font and
//! explicitly listed font files are loaded, so a fresh machine renders the same pixels.
//!
//! `PCP_UPDATE_GOLDEN=1 cargo test -p pcp-overlay --test golden` rewrites the goldens; a failing
//! comparison writes `NAME.png.new` beside the golden for a look.

use std::path::{Path, PathBuf};

use pcp_overlay::dialog::render_state;
use pcp_overlay::{Config, Fonts, LiveState, ThemeName, load_content, load_state};
use tiny_skia::Pixmap;

/// CJK fallback for the CJK golden: Debian package `fonts-droid-fallback`.
const CJK_FONT: &str = "/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf";
/// A channel may differ this much (anti-aliasing rounding across CPUs).
const CHANNEL_TOLERANCE: u8 = 4;
/// Pixels beyond the channel tolerance allowed per this many pixels.
const OUTLIERS_PER: usize = 20000;

struct Case {
    name: &'static str,
    content: &'static str,
    state: Option<&'static str>,
    theme: ThemeName,
    scale: f64,
    output: (u32, u32),
    cjk: bool,
    /// Settings beyond the theme.
    tweak: fn(&mut Config),
}

fn defaults(_: &mut Config) {}

fn text_scale_1_5(c: &mut Config) {
    c.text_scale = pcp_overlay::TextScale::new(1.5).unwrap();
}

fn reduced_motion(c: &mut Config) {
    c.reduced_motion = true;
}

const CASES: &[Case] = &[
    Case {
        name: "delete_dark_listening",
        content: "delete.json",
        state: Some("listening.json"),
        theme: ThemeName::Dark,
        scale: 1.0,
        output: (1920, 1080),
        cjk: false,
        tweak: defaults,
    },
    Case {
        name: "delete_dark_listening",
        content: "delete.json",
        state: Some("listening.json"),
        theme: ThemeName::Dark,
        scale: 2.0,
        output: (1920, 1080),
        cjk: false,
        tweak: defaults,
    },
    Case {
        name: "multistep_light_focus",
        content: "multistep.json",
        state: Some("focus_deny.json"),
        theme: ThemeName::Light,
        scale: 1.0,
        output: (1280, 720),
        cjk: false,
        tweak: defaults,
    },
    Case {
        name: "multistep_light_focus",
        content: "multistep.json",
        state: Some("focus_deny.json"),
        theme: ThemeName::Light,
        scale: 2.0,
        output: (1280, 720),
        cjk: false,
        tweak: defaults,
    },
    Case {
        name: "system_high_contrast_guarded",
        content: "system.json",
        state: Some("guarded.json"),
        theme: ThemeName::HighContrast,
        scale: 1.0,
        output: (1920, 1080),
        cjk: false,
        tweak: defaults,
    },
    Case {
        name: "system_high_contrast_guarded",
        content: "system.json",
        state: Some("guarded.json"),
        theme: ThemeName::HighContrast,
        scale: 2.0,
        output: (1920, 1080),
        cjk: false,
        tweak: defaults,
    },
    Case {
        name: "long_panel_800x480",
        content: "long.json",
        state: None,
        theme: ThemeName::Dark,
        scale: 1.0,
        output: (800, 480),
        cjk: false,
        tweak: defaults,
    },
    Case {
        name: "cjk_light",
        content: "cjk.json",
        state: None,
        theme: ThemeName::Light,
        scale: 1.0,
        output: (1920, 1080),
        cjk: true,
        tweak: defaults,
    },
    Case {
        name: "rtl_dark",
        content: "rtl.json",
        state: None,
        theme: ThemeName::Dark,
        scale: 1.0,
        output: (1920, 1080),
        cjk: false,
        tweak: defaults,
    },
    // Attack 4: NBSP padding, RLM, zero-width and an override in the target, a stack of marks.
    Case {
        name: "hidden_tail_dark",
        content: "hidden_tail.json",
        state: None,
        theme: ThemeName::Dark,
        scale: 1.0,
        output: (1920, 1080),
        cjk: false,
        tweak: defaults,
    },
    // A 300-character self-declared app id on a small panel: the verified identity in full.
    Case {
        name: "declared_300_panel_800x480",
        content: "declared_300.json",
        state: None,
        theme: ThemeName::Dark,
        scale: 1.0,
        output: (800, 480),
        cjk: false,
        tweak: defaults,
    },
    Case {
        name: "session_light_keyboard",
        content: "session.json",
        state: Some("keyboard_session.json"),
        theme: ThemeName::Light,
        scale: 1.0,
        output: (1280, 720),
        cjk: false,
        tweak: defaults,
    },
    Case {
        name: "delete_light_text_scale_1.5",
        content: "delete.json",
        state: Some("listening.json"),
        theme: ThemeName::Light,
        scale: 1.0,
        output: (1920, 1080),
        cjk: false,
        tweak: text_scale_1_5,
    },
    Case {
        name: "delete_dark_reduced_motion",
        content: "delete.json",
        state: Some("listening.json"),
        theme: ThemeName::Dark,
        scale: 1.0,
        output: (1920, 1080),
        cjk: false,
        tweak: reduced_motion,
    },
];

fn dir(sub: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(sub)
}

fn fonts(cjk: bool) -> Fonts {
    if cjk {
        assert!(
            Path::new(CJK_FONT).exists(),
            "{CJK_FONT} is missing: install the Debian package fonts-droid-fallback"
        );
        Fonts::with_files(&[CJK_FONT]).unwrap()
    } else {
        Fonts::with_files::<&str>(&[]).unwrap()
    }
}

fn render(case: &Case, theme: ThemeName) -> Pixmap {
    let mut config = Config {
        theme,
        ..Config::default()
    };
    (case.tweak)(&mut config);
    // The host fills in the active phrase pack's answer words; the goldens show the English
    // pack's (the bundled font has no Hangul for the Korean pack's).
    config.text = config.text.with_answer_words("yes", "no", "cancel");
    let content = load_content(&dir("fixtures").join(case.content), &config).unwrap();
    let live = match case.state {
        Some(s) => load_state(&dir("fixtures").join(s)).unwrap(),
        None => LiveState::default(),
    };
    let pixmap = render_state(
        &mut fonts(case.cjk),
        &config,
        &content,
        &live,
        case.scale,
        case.output,
    )
    .unwrap();
    // Through PNG and back, as the golden went: demultiplying rounds low-alpha pixels.
    Pixmap::decode_png(&pixmap.encode_png().unwrap()).unwrap()
}

fn file_name(case: &Case) -> String {
    format!("{}@{}x.png", case.name, case.scale)
}

/// How many pixels differ by more than the tolerance, or `None` if the sizes differ.
fn outliers(a: &Pixmap, b: &Pixmap) -> Option<usize> {
    if (a.width(), a.height()) != (b.width(), b.height()) {
        return None;
    }
    let bad = a
        .data()
        .chunks_exact(4)
        .zip(b.data().chunks_exact(4))
        .filter(|(p, q)| {
            p.iter()
                .zip(q.iter())
                .any(|(x, y)| x.abs_diff(*y) > CHANNEL_TOLERANCE)
        })
        .count();
    Some(bad)
}

fn allowed(p: &Pixmap) -> usize {
    (p.width() as usize * p.height() as usize / OUTLIERS_PER).max(5)
}

#[test]
fn goldens_match() {
    let update = std::env::var_os("PCP_UPDATE_GOLDEN").is_some();
    let mut failures = Vec::new();
    for case in CASES {
        let got = render(case, case.theme);
        let path = dir("golden").join(file_name(case));
        if update {
            got.save_png(&path).unwrap();
            continue;
        }
        let want = Pixmap::load_png(&path)
            .unwrap_or_else(|e| panic!("{}: {e} (PCP_UPDATE_GOLDEN=1 writes it)", path.display()));
        match outliers(&got, &want) {
            Some(n) if n <= allowed(&want) => {}
            other => {
                let new = path.with_extension("png.new");
                got.save_png(&new).unwrap();
                failures.push(format!(
                    "{}: {} (see {})",
                    file_name(case),
                    match other {
                        Some(n) => format!("{n} pixels differ"),
                        None => format!(
                            "size {}x{} instead of {}x{}",
                            got.width(),
                            got.height(),
                            want.width(),
                            want.height()
                        ),
                    },
                    new.display()
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_comparison_catches_a_real_change() {
    let case = &CASES[0];
    let want = Pixmap::load_png(dir("golden").join(file_name(case))).unwrap();
    let other_theme = render(case, ThemeName::Light);
    let n = outliers(&other_theme, &want).unwrap();
    assert!(n > allowed(&want), "a theme change went unnoticed: {n}");
    // A one-second countdown change is caught too: small, but beyond the tolerance.
    let mut live = load_state(&dir("fixtures").join("listening.json")).unwrap();
    live.seconds_left = Some(26);
    let config = Config::default();
    let content = load_content(&dir("fixtures").join(case.content), &config).unwrap();
    let got = render_state(
        &mut fonts(false),
        &config,
        &content,
        &live,
        1.0,
        case.output,
    )
    .unwrap();
    let got = Pixmap::decode_png(&got.encode_png().unwrap()).unwrap();
    let n = outliers(&got, &want).unwrap();
    assert!(n > allowed(&want), "a countdown change went unnoticed: {n}");
}
