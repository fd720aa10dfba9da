//! `cargo xtask`: the project's commands. `setup` installs what a fresh Debian machine lacks,
//! `test` is what CI runs, `demo` shows the product, `bench` runs the criterion benches.

mod setup;

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

const USAGE: &str = "usage: cargo xtask <setup|test|demo|bench>
  setup   install the Debian packages, libvosk and the Vosk model this project needs
  test    setup, then cargo fmt --check, clippy -D warnings, and the whole test suite
  demo    setup, then play the scripted demo session and print what each intent got
  bench   run the criterion benchmarks (release)";

fn main() {
    if let Err(e) = run() {
        eprintln!("xtask: {e:#}");
        std::process::exit(1);
    }
}

fn run() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("setup") => setup::setup().map(|_| ()),
        Some("test") => test(),
        Some("demo") => demo(),
        Some("bench") => bench(&args[1..]),
        Some("-h" | "--help" | "help") | None => {
            println!("{USAGE}");
            Ok(())
        }
        Some(other) => bail!("unknown command `{other}`\n{USAGE}"),
    }
}

/// The workspace root (xtask lives one level below it).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// Runs `cargo ARGS` in the workspace root with the cache dir exported; fails on a non-zero exit.
pub fn cargo(args: &[&str], cache: &Path) -> Result<()> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    eprintln!("xtask: cargo {}", args.join(" "));
    let status = Command::new(&cargo)
        .args(args)
        .current_dir(root())
        .env("PCP_CACHE_DIR", cache)
        .status()
        .with_context(|| format!("cannot run {cargo}"))?;
    if !status.success() {
        bail!("`cargo {}` failed ({status})", args.join(" "));
    }
    Ok(())
}

fn test() -> Result<()> {
    let cache = setup::setup()?;
    cargo(&["fmt", "--all", "--check"], &cache)?;
    cargo(
        &[
            "clippy",
            "--workspace",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ],
        &cache,
    )?;
    cargo(&["test", "--workspace"], &cache)?;
    // The nested development backend is behind a feature (it pulls in winit and GL): lint it and
    // run its Xvfb test too, so it keeps building and working.
    lint_feature("winit", &cache)?;
    cargo(
        &[
            "test",
            "--package",
            "pcp-compositor",
            "--features",
            "winit",
            "--test",
            "winit",
        ],
        &cache,
    )?;
    // The tty-udev backend cannot run here (no DRM, no seat) but must keep building: lint it, run
    // its unit tests and check it fails at start-up with a clear error.
    lint_feature("udev", &cache)?;
    cargo(
        &[
            "test",
            "--package",
            "pcp-compositor",
            "--features",
            "udev",
            "--lib",
            "--test",
            "udev",
        ],
        &cache,
    )?;
    Ok(())
}

/// Clippy over the compositor with one of its backend features.
fn lint_feature(feature: &str, cache: &Path) -> Result<()> {
    cargo(
        &[
            "clippy",
            "--package",
            "pcp-compositor",
            "--all-targets",
            "--features",
            feature,
            "--",
            "-D",
            "warnings",
        ],
        cache,
    )
}

fn bench(extra: &[String]) -> Result<()> {
    let cache = setup::setup()?;
    let mut args = vec!["bench", "--workspace"];
    args.extend(extra.iter().map(String::as_str));
    cargo(&args, &cache)
}

fn demo() -> Result<()> {
    let cache = setup::setup()?;
    let root = root();
    let out = root.join("target/demo");
    std::fs::create_dir_all(&out).with_context(|| format!("cannot create {}", out.display()))?;
    let state = out.join("state.sqlite3");
    for stale in [
        "state.sqlite3",
        "state.sqlite3-wal",
        "state.sqlite3-shm",
        "token.key",
    ] {
        let _ = std::fs::remove_file(out.join(stale));
    }
    let config = root.join("assets/demo/config.toml");
    let trace = root.join("assets/demo/trace.jsonl");
    println!(
        "pcp-confirm demo: the scripted session below runs through the real gate (manifests,\n\
         threshold table, friction history in SQLite, audit chain) on a virtual clock.\n\
         Answers come from the trace; the scripted session on the headless compositor\n\
         (dialogs on screen, spoken answers, PNGs per output) is the next step.\n"
    );
    let (trace, config, state) = (
        trace.to_string_lossy(),
        config.to_string_lossy(),
        state.to_string_lossy(),
    );
    pcpctl(
        &[
            "replay", &trace, "--config", &config, "--state", &state, "--table",
        ],
        &cache,
    )?;
    pcpctl(&["audit", "verify", "--state", &state], &cache)?;
    println!("\nThe audit log is in {state}");
    Ok(())
}

/// Runs the workspace's `pcpctl` with `args`.
fn pcpctl(args: &[&str], cache: &Path) -> Result<()> {
    let mut full = vec![
        "run",
        "--quiet",
        "--package",
        "pcp-compositor",
        "--bin",
        "pcpctl",
        "--",
    ];
    full.extend_from_slice(args);
    cargo(&full, cache)
}
