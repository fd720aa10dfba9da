//! `cargo xtask fuzz [--seconds N] [--keep] [TARGET...]`: runs every cargo-fuzz target in
//! `fuzz/targets/` (or the named ones) for N seconds each, one after the other, and prints a table of executions
//! and crashes. The seed corpus in `fuzz/seeds/TARGET` is read, never written: what the fuzzer
//! finds goes to `target/fuzz/corpus/TARGET`, crash inputs to `target/fuzz/artifacts/TARGET/`.
//! With `--keep` (long runs) the fuzzer starts from and adds to the corpus kept in the
//! repository, `fuzz/corpus/TARGET/`, which `cargo fuzz cmin` then minimizes, and the run is
//! added to `fuzz/corpus/runs.tsv`, so runs on different days add up (the table then also shows
//! each target's executions over every kept run).
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
    ("codex_patch", 4096),
    ("inline_code", 4096),
];

/// The cargo-fuzz project (its own workspace, built with nightly), relative to the root.
const FUZZ_DIR: &str = "fuzz/targets";

/// Seconds per target when none are given.
const DEFAULT_SECONDS: u64 = 60;

/// The corpus kept in the repository (`--keep`), relative to the root.
const KEPT_CORPUS: &str = "fuzz/corpus";

/// The ledger of kept runs: one tab-separated line per run and target.
const LEDGER: &str = "fuzz/corpus/runs.tsv";

/// What `cargo xtask fuzz` was asked to do.
pub struct Options {
    pub seconds: u64,
    pub targets: Vec<String>,
    /// Start from, add to and minimize the corpus kept in the repository, and record the run.
    pub keep: bool,
}

/// One target's run.
pub struct Run {
    pub target: String,
    pub executions: u64,
    pub seconds: f64,
    pub crashed: bool,
}

/// Parses `--seconds N`, `--keep` and target names.
pub fn parse(args: &[String]) -> Result<Options> {
    let mut seconds = DEFAULT_SECONDS;
    let mut targets = Vec::new();
    let mut keep = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--keep" => keep = true,
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
    Ok(Options {
        seconds,
        targets,
        keep,
    })
}

/// Builds the targets, runs each for `seconds`, prints the table; fails if any crashed. With
/// `keep`, each target runs on the corpus kept in the repository, which is minimized after
/// the run, and the run is recorded in the ledger.
pub fn fuzz(
    root: &Path,
    cache: &Path,
    seconds: u64,
    targets: &[String],
    keep: bool,
) -> Result<Vec<Run>> {
    let target_dir = target_dir();
    let mut build = cargo_fuzz(root, cache);
    build.args(["build", "--fuzz-dir", FUZZ_DIR, "-s", "none"]);
    eprintln!("xtask: cargo +nightly fuzz build --fuzz-dir {FUZZ_DIR} -s none");
    let status = build.status().context("cannot run cargo +nightly fuzz")?;
    if !status.success() {
        bail!("`cargo +nightly fuzz build` failed ({status})");
    }
    let mut runs = Vec::new();
    for target in targets {
        let corpus = if keep {
            root.join(KEPT_CORPUS).join(target)
        } else {
            target_dir.join("corpus").join(target)
        };
        let run = run_one(root, cache, &target_dir, &corpus, target, seconds)?;
        if keep {
            minimize(root, cache, &corpus, target)?;
            record(&root.join(LEDGER), &run, &corpus)?;
        }
        runs.push(run);
    }
    let totals = if keep {
        kept_totals(&root.join(LEDGER))?
    } else {
        Vec::new()
    };
    println!(
        "{:<14} {:>14} {:>9} {:>8} {:>16}",
        "target", "executions", "seconds", "crashes", "kept runs, total"
    );
    for r in &runs {
        let total = totals
            .iter()
            .find(|(t, _)| *t == r.target)
            .map_or(String::new(), |(_, n)| n.to_string());
        println!(
            "{:<14} {:>14} {:>9.0} {:>8} {:>16}",
            r.target,
            r.executions,
            r.seconds,
            u8::from(r.crashed),
            total
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
fn target_dir() -> std::path::PathBuf {
    crate::target_dir().join("fuzz")
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
    corpus: &Path,
    target: &str,
    seconds: u64,
) -> Result<Run> {
    let max_len = TARGETS
        .iter()
        .find(|(n, _)| *n == target)
        .map_or(4096, |(_, l)| *l);
    let corpus = corpus.to_path_buf();
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

/// Minimizes the kept corpus of `target` in place (`cargo fuzz cmin`): only inputs that add
/// coverage stay, so the repository keeps what the runs found and not every step to it.
fn minimize(root: &Path, cache: &Path, corpus: &Path, target: &str) -> Result<()> {
    let mut c = cargo_fuzz(root, cache);
    c.args(["cmin", "--fuzz-dir", FUZZ_DIR, "-s", "none", target])
        .arg(corpus)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    eprintln!("xtask: minimizing the kept corpus of {target}");
    let out = c.output().context("cannot run cargo +nightly fuzz cmin")?;
    if !out.status.success() {
        bail!(
            "`cargo +nightly fuzz cmin {target}` failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .last()
                .unwrap_or_default()
        );
    }
    Ok(())
}

/// Adds `run` to the ledger: UTC date, target, seconds, executions, crashed, inputs kept.
fn record(ledger: &Path, run: &Run, corpus: &Path) -> Result<()> {
    use std::io::Write;
    let kept = std::fs::read_dir(corpus)
        .with_context(|| format!("cannot read {}", corpus.display()))?
        .count();
    let date = Command::new("date")
        .args(["-u", "+%Y-%m-%dT%H:%MZ"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    let new = !ledger.exists();
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(ledger)
        .with_context(|| format!("cannot open {}", ledger.display()))?;
    if new {
        writeln!(f, "date\ttarget\tseconds\texecutions\tcrashed\tkept_inputs")?;
    }
    writeln!(
        f,
        "{date}\t{}\t{:.0}\t{}\t{}\t{kept}",
        run.target,
        run.seconds,
        run.executions,
        u8::from(run.crashed)
    )
    .with_context(|| format!("cannot write {}", ledger.display()))
}

/// Executions per target over every run in the ledger. A line that is not a run (the header, a
/// hand edit) is an error naming it, not a silently smaller total.
fn kept_totals(ledger: &Path) -> Result<Vec<(String, u64)>> {
    let text = std::fs::read_to_string(ledger)
        .with_context(|| format!("cannot read {}", ledger.display()))?;
    let mut totals: Vec<(String, u64)> = Vec::new();
    for (i, line) in text.lines().enumerate().skip(1) {
        let fields: Vec<&str> = line.split('\t').collect();
        let (Some(target), Some(executions)) = (
            fields.get(1),
            fields.get(3).and_then(|v| v.parse::<u64>().ok()),
        ) else {
            bail!("{}:{}: not a run: {line:?}", ledger.display(), i + 1);
        };
        match totals.iter_mut().find(|(t, _)| t == target) {
            Some((_, n)) => *n += executions,
            None => totals.push((target.to_string(), executions)),
        }
    }
    Ok(totals)
}
