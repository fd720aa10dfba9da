//! Dialog rendering cost: a full render (layout, shaping and painting; what happens when a
//! prompt appears or its content, theme or scale changes) and a countdown tick (the one region
//! that changes every second), at 1920×1080 scale 1 and 3840×2160 scale 2. Budget (docs/performance.md):
//! a tick ≤ 2 ms. Also a new prompt with a long action, target and step list on a 360×640 touch
//! panel at scale 2: the layout tries smaller zooms, a wider dialog and then scrolling before
//! it fits (the case where each text's shaping is reused across attempts).

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use pcp_overlay::{
    Config, ConfirmDialog, DialogContent, Fonts, Modality, Requester, Risk, ThemeName, VoiceState,
};

fn content() -> DialogContent {
    DialogContent {
        requester: Requester::Sandboxed {
            engine: "flatpak".into(),
            app_id: "org.gnome.Files".into(),
        },
        declared_app_id: Some("Files".into()),
        icon: None,
        action: "Delete report.pdf".into(),
        target: "/home/u/report.pdf".into(),
        steps: vec![
            "Move report.pdf to the trash".into(),
            "Empty the trash".into(),
        ],
        extra_params: vec![],
        challenge: Some("바다".into()),
        risk: Risk::Destructive,
        modalities: vec![Modality::Visual, Modality::Voice],
        seconds_left: 27,
        timeout_seconds: 30,
        queued: 2,
        press_and_hold: false,
        voice_unavailable: None,
        offer_session: false,
        entry: false,
        entry_account: false,
    }
}

/// A prompt whose texts wrap over many lines: a path of 40 folders, 12 steps.
fn long_content() -> DialogContent {
    let path = |name: &str, n: usize| {
        (0..n)
            .map(|i| format!("{name}{i}"))
            .collect::<Vec<_>>()
            .join("/")
    };
    DialogContent {
        action: format!("Delete {}", path("folder", 30)),
        target: format!("/home/u/{}", path("sub", 40)),
        steps: (0..12)
            .map(|i| format!("Step {i}: move {} to the trash", path("x", 8)))
            .collect(),
        ..content()
    }
}

fn bench(c: &mut Criterion) {
    {
        let fonts = Fonts::with_files::<&str>(&[]).expect("bundled font");
        let mut dialog = ConfirmDialog::new(Config::default(), fonts);
        let (scale, output) = (2.0, (360, 640));
        c.bench_function("show_layout_and_render_long_360x640@2", |b| {
            b.iter(|| {
                dialog.show(long_content(), 0).expect("valid content");
                let r = dialog.render(scale, output).expect("render");
                black_box(r.damage.len())
            })
        });
    }

    let cases = [
        ("1920x1080@1", 1.0, (1920, 1080)),
        ("3840x2160@2", 2.0, (1920, 1080)),
    ];
    for (name, scale, output) in cases {
        let fonts = Fonts::with_files::<&str>(&[]).expect("bundled font");
        let mut dialog = ConfirmDialog::new(Config::default(), fonts);
        dialog.show(content(), 0).expect("valid content");
        dialog.render(scale, output).expect("render");

        // A full render: the theme flips each iteration, which forces one (the layout is kept;
        // a new prompt also lays out, measured separately below).
        let mut dark = true;
        c.bench_function(&format!("full_render_{name}"), |b| {
            b.iter(|| {
                dark = !dark;
                dialog.set_theme(if dark {
                    ThemeName::Dark
                } else {
                    ThemeName::Light
                });
                let r = dialog.render(scale, output).expect("render");
                black_box(r.damage.len())
            })
        });

        c.bench_function(&format!("show_layout_and_render_{name}"), |b| {
            b.iter(|| {
                dialog.show(content(), 0).expect("valid content");
                let r = dialog.render(scale, output).expect("render");
                black_box(r.damage.len())
            })
        });

        let mut secs = 30u32;
        c.bench_function(&format!("countdown_tick_{name}"), |b| {
            b.iter(|| {
                secs = if secs == 0 { 30 } else { secs - 1 };
                dialog.set_seconds_left(secs);
                let r = dialog.render(scale, output).expect("render");
                black_box(r.damage.len())
            })
        });

        let mut level = 0.0f32;
        c.bench_function(&format!("level_meter_tick_{name}"), |b| {
            b.iter(|| {
                level = (level + 0.07) % 1.0;
                dialog.set_voice(VoiceState::Listening, level);
                let r = dialog.render(scale, output).expect("render");
                black_box(r.damage.len())
            })
        });
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
