//! `pcp-overlay-render` as a reviewer runs it: the issue's example content renders to a PNG of
//! the expected size, and bad input gets a clear error naming what was wrong, never a panic.

use std::path::{Path, PathBuf};
use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_pcp-overlay-render"))
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("pcp-overlay-cli-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn run(args: &[&str]) -> (bool, String) {
    let out = bin().args(args).output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!text.contains("panicked"), "{text}");
    (out.status.success(), text)
}

#[test]
fn renders_the_issue_example_at_scale_2() {
    let content = tmp("issue.json");
    std::fs::write(
        &content,
        r#"{"requester": {"sandboxed": {"engine": "flatpak", "app_id": "org.gnome.Nautilus"}},
            "declared_app_id": "Files", "action": "Delete report.pdf", "target": "/home/u/report.pdf",
            "steps": ["Move report.pdf to the trash", "Empty the trash"], "risk": "destructive",
            "modalities": ["visual", "voice", "haptic"], "seconds_left": 27, "queued": 2}"#,
    )
    .unwrap();
    let out = tmp("issue.png");
    let (ok, text) = run(&[
        "--content",
        content.to_str().unwrap(),
        "--size",
        "1920x1080",
        "--scale",
        "2",
        "--theme",
        "light",
        "--state",
        fixture("listening.json").to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(ok, "{text}");
    let png = tiny_skia::Pixmap::load_png(&out).unwrap();
    assert_eq!(png.width(), 1120);
    assert!(
        png.height() > 400 && png.height() < 2160 - 64,
        "{}",
        png.height()
    );
}

#[test]
fn bad_arguments_and_files_are_named() {
    let out = tmp("bad.png");
    let out = out.to_str().unwrap();
    let delete = fixture("delete.json");
    let delete = delete.to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (
            &["--content", delete, "--size", "1920", "--out", out],
            "is not WxH",
        ),
        (
            &["--content", delete, "--size", "0x10", "--out", out],
            "\"0\"",
        ),
        (
            &[
                "--content",
                delete,
                "--size",
                "800x480",
                "--theme",
                "pink",
                "--out",
                out,
            ],
            "\"pink\"",
        ),
        (
            &[
                "--content",
                delete,
                "--size",
                "800x480",
                "--scale=-1",
                "--out",
                out,
            ],
            "scale",
        ),
        (
            &[
                "--content",
                "/nonexistent.json",
                "--size",
                "800x480",
                "--out",
                out,
            ],
            "/nonexistent.json",
        ),
        (
            &["--content", delete, "--size", "100x100", "--out", out],
            "smaller than",
        ),
        (
            &[
                "--content",
                delete,
                "--size",
                "800x480",
                "--font",
                "/no/font.ttf",
                "--out",
                out,
            ],
            "/no/font.ttf",
        ),
        (
            &[
                "--content",
                delete,
                "--size",
                "800x480",
                "--out",
                "/nonexistent/dir/x.png",
            ],
            "/nonexistent/dir/x.png",
        ),
    ];
    for (args, needle) in cases {
        let (ok, text) = run(args);
        assert!(!ok, "{args:?} succeeded");
        assert!(text.contains(needle), "{args:?}: {text}");
    }
    let bad = tmp("unknown.json");
    std::fs::write(
        &bad,
        "{\"requester\": {\"unknown\": {\"connection\": \"c1\"}}, \"action\": \"x\", \
         \"risk\": \"routine\",\n\"icon_url\": 1}",
    )
    .unwrap();
    let (ok, text) = run(&[
        "--content",
        bad.to_str().unwrap(),
        "--size",
        "800x480",
        "--out",
        out,
    ]);
    assert!(!ok);
    assert!(
        text.contains("unknown.json:2:") && text.contains("icon_url"),
        "{text}"
    );
}

/// A failure is for people: one line naming the file and what was wrong, no backtrace even when
/// the environment asks Rust for one; `PCP_DEBUG=1` or `--debug` ask for the developer's form.
#[test]
fn errors_are_one_line_without_a_backtrace_unless_debug_asks() {
    let bad = tmp("bad-content.json");
    std::fs::write(&bad, "{bad").unwrap();
    let bad = bad.to_str().unwrap();
    let out = tmp("never.png");
    let args = [
        "--content",
        bad,
        "--size",
        "800x480",
        "--out",
        out.to_str().unwrap(),
    ];
    let run = |extra: &[&str], env: &[(&str, &str)]| {
        let o = bin()
            .args(args)
            .args(extra)
            .env("RUST_BACKTRACE", "1")
            .env("RUST_LIB_BACKTRACE", "1")
            .env_remove("PCP_DEBUG")
            .envs(env.iter().copied())
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2));
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    let plain = run(&[], &[]);
    assert_eq!(plain.lines().count(), 1, "{plain}");
    assert!(
        plain.starts_with(&format!("pcp-overlay-render: {bad}:1:2: ")),
        "{plain}"
    );
    assert!(!plain.to_lowercase().contains("backtrace"), "{plain}");
    for (extra, env) in [
        (&["--debug"][..], &[][..]),
        (&[][..], &[("PCP_DEBUG", "1")][..]),
    ] {
        let debug = run(extra, env);
        assert!(debug.contains("Stack backtrace"), "{debug}");
    }
}
