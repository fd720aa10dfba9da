//! `cargo xtask fuzz [--seconds N] [TARGET...]`: runs every cargo-fuzz target in
//! `fuzz/targets/` (or the named ones) for N seconds each, one after the other, and prints a table of executions
//! and crashes. The seed corpus in `fuzz/seeds/TARGET` is read, never written: what the fuzzer
//! finds goes to `target/fuzz/corpus/TARGET`, crash inputs to `target/fuzz/artifacts/TARGET/`.
//! A crash makes the command fail; keep its input in `fuzz/regressions/TARGET/` once fixed (the
//! test suite replays it through pcp-fuzz-checks).
//!
//! Targets are built without a sanitizer (`-s none`): the code fuzzed is safe Rust, where
//! AddressSanitizer finds nothing and costs a third of the speed; overflow checks and debug
//! assertions stay on.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context, Result, bail};

/// Every target, with the longest input libFuzzer makes for it (the dialog's and the token's
/// inputs are structured: longer ones only add strings the caps cut).
pub const TARGETS: &[(&str, usize)] = &[
    ("visible_text", 4096),
    ("dialog", 2048),
    ("config", 16384),
    ("replay", 8192),
    ("token", 1024),
    ("multitouch", 4096),
    ("phrases", 4096),
    ("params", 8192),
    ("strict_json", 8192),
    ("shell_risk", 4096),
];

/// The cargo-fuzz project (its own workspace, built with nightly), relative to the root.
const FUZZ_DIR: &str = "fuzz/targets";

/// Seconds per target when none are given.
const DEFAULT_SECONDS: u64 = 60;

/// One target's run.
pub struct Run {
    pub target: String,
    pub executions: u64,
    pub seconds: f64,
    pub crashed: bool,
}

/// Parses `--seconds N` and target names.
pub fn parse(args: &[String]) -> Result<(u64, Vec<String>)> {
    let mut seconds = DEFAULT_SECONDS;
    let mut targets = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--seconds" => {
                let v = it.next().context("--seconds needs a number")?;
                seconds =
                    v.parse().ok().filter(|s| *s > 0).with_context(|| {
                        format!("--seconds {v:?} is not a whole number above 0")
                    })?;
            }
            t if TARGETS.iter().any(|(name, _)| *name == t) => targets.push(t.to_string()),
            other => bail!(
                "unknown fuzz target or option `{other}` (targets: {})",
                TARGETS
                    .iter()
                    .map(|(n, _)| *n)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }
    if targets.is_empty() {
        targets = TARGETS.iter().map(|(n, _)| n.to_string()).collect();
    }
    Ok((seconds, targets))
}

/// Builds the targets, runs each for `seconds`, prints the table; fails if any crashed.
pub fn fuzz(root: &Path, cache: &Path, seconds: u64, targets: &[String]) -> Result<Vec<Run>> {
    let target_dir = target_dir(root);
    let mut build = cargo_fuzz(root, cache);
    build.args(["build", "--fuzz-dir", FUZZ_DIR, "-s", "none"]);
    eprintln!("xtask: cargo +nightly fuzz build --fuzz-dir {FUZZ_DIR} -s none");
    let status = build.status().context("cannot run cargo +nightly fuzz")?;
    if !status.success() {
        bail!("`cargo +nightly fuzz build` failed ({status})");
    }
    let mut runs = Vec::new();
    for target in targets {
        runs.push(run_one(root, cache, &target_dir, target, seconds)?);
    }
    println!(
        "{:<14} {:>14} {:>9} {:>8}",
        "target", "executions", "seconds", "crashes"
    );
    for r in &runs {
        println!(
            "{:<14} {:>14} {:>9.0} {:>8}",
            r.target,
            r.executions,
            r.seconds,
            u8::from(r.crashed)
        );
    }
    if let Some(r) = runs.iter().find(|r| r.crashed) {
        bail!(
            "fuzz target `{}` crashed: its input is in {}",
            r.target,
            target_dir.join("artifacts").join(&r.target).display()
        );
    }
    Ok(runs)
}

/// Where the fuzzer's own corpus and artifacts go (outside the checkout's tracked files).
fn target_dir(root: &Path) -> std::path::PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| root.join("target"))
        .join("fuzz")
}

fn cargo_fuzz(root: &Path, cache: &Path) -> Command {
    // rustup's proxy picks the nightly toolchain; the fuzz crate has its own workspace.
    let mut c = Command::new("cargo");
    c.arg("+nightly")
        .arg("fuzz")
        .current_dir(root)
        .env("PCP_CACHE_DIR", cache)
        .env_remove("RUSTC")
        .env_remove("RUSTDOC")
        .env_remove("RUSTC_WRAPPER")
        .env_remove("CARGO");
    c
}

fn run_one(
    root: &Path,
    cache: &Path,
    target_dir: &Path,
    target: &str,
    seconds: u64,
) -> Result<Run> {
    let max_len = TARGETS
        .iter()
        .find(|(n, _)| *n == target)
        .map_or(4096, |(_, l)| *l);
    let corpus = target_dir.join("corpus").join(target);
    let artifacts = target_dir.join("artifacts").join(target);
    for d in [&corpus, &artifacts] {
        std::fs::create_dir_all(d).with_context(|| format!("cannot create {}", d.display()))?;
    }
    let seeds = root.join("fuzz/seeds").join(target);
    let mut c = cargo_fuzz(root, cache);
    c.args(["run", "--fuzz-dir", FUZZ_DIR, "-s", "none", target])
        .arg(&corpus)
        .arg(&seeds)
        .arg("--")
        .arg(format!("-max_total_time={seconds}"))
        .arg(format!("-max_len={max_len}"))
        .arg("-timeout=30")
        .arg("-print_final_stats=1")
        .arg(format!("-artifact_prefix={}/", artifacts.display()))
        .stdout(Stdio::inherit())
        .stderr(Stdio::piped());
    eprintln!("xtask: fuzzing {target} for {seconds} s");
    let start = Instant::now();
    let out = c
        .spawn()
        .context("cannot run cargo +nightly fuzz run")?
        .wait_with_output()
        .context("cargo +nightly fuzz run")?;
    let log = String::from_utf8_lossy(&out.stderr);
    // Keep the fuzzer's last lines visible: they say what crashed and where.
    for line in log
        .lines()
        .rev()
        .take(40)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
    {
        eprintln!("  {line}");
    }
    let executions = log
        .lines()
        .find_map(|l| l.strip_prefix("stat::number_of_executed_units:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    Ok(Run {
        target: target.to_string(),
        executions,
        seconds: start.elapsed().as_secs_f64(),
        crashed: !out.status.success(),
    })
}
