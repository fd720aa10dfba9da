//! `cargo xtask wlcs [--no-prompt] [GROUP…]`: the reference compositor against WLCS, Mir's
//! Wayland Conformance Test Suite (Debian's `wlcs`, installed by `setup`). It builds the
//! compositor's WLCS module (`compositor/wlcs`, `libpcp_wlcs.so`), runs the chosen groups of
//! `compositor/wlcs/suite.toml` (all of them by default; a name that is no group there is taken
//! as a gtest filter) with gtest's XML output, reads each test's outcome from it, and judges it
//! against the failures the suite file expects, each with its cause: a failure not listed, and
//! a listed failure that passes, both fail the run. Then it runs the same tests again with a
//! real prompt waiting in the dialog (`PCP_WLCS_PROMPT=1`, see `compositor/wlcs/src/prompt.rs`)
//! and fails on any test whose outcome differs: the dialog must not block the desktop.
//! Results go to `target/wlcs/`; docs/wlcs.md explains them.

mod results;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use results::{Outcome, Suite, TestResult};

/// The longest one run of WLCS may take before it is killed (the CI groups take minutes).
const RUN_LIMIT: Duration = Duration::from_secs(20 * 60);

/// Where Debian's package puts the runner when `pkg-config` cannot say.
const RUNNER_PATHS: &[&str] = &[
    "/usr/lib/x86_64-linux-gnu/wlcs/wlcs",
    "/usr/lib/aarch64-linux-gnu/wlcs/wlcs",
    "/usr/libexec/wlcs/wlcs",
];

/// What `cargo xtask wlcs` was asked.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// Group names of the suite file, or gtest filters; empty: every group.
    pub groups: Vec<String>,
    /// Run the tests a second time with a prompt waiting, and compare.
    pub prompt: bool,
}

/// Reads `[--no-prompt] [GROUP…]`.
pub fn parse(args: &[String]) -> Result<Options> {
    let mut options = Options {
        groups: Vec::new(),
        prompt: true,
    };
    for arg in args {
        match arg.as_str() {
            "--no-prompt" => options.prompt = false,
            flag if flag.starts_with("--") => {
                bail!("`wlcs` does not take `{flag}` (it takes --no-prompt and group names)")
            }
            group => options.groups.push(group.to_string()),
        }
    }
    Ok(options)
}

/// Builds the module, runs WLCS once plain and once with a prompt waiting, and judges both.
pub fn run(root: &Path, cache: &Path, options: &Options) -> Result<()> {
    let started = Instant::now();
    let suite_path = root.join("compositor/wlcs/suite.toml");
    let suite = Suite::load(&suite_path)?;
    let groups = suite.select(&options.groups)?;
    let runner = find_runner()?;
    crate::cargo(&["build", "--package", "pcp-wlcs", "--lib"], cache)?;
    let module = crate::target_dir().join("debug/libpcp_wlcs.so");
    if !module.exists() {
        bail!("the build left no {}", module.display());
    }
    let out = root.join("target/wlcs");
    std::fs::create_dir_all(&out).with_context(|| format!("cannot create {}", out.display()))?;
    let filter = groups
        .iter()
        .map(|g| g.filter.as_str())
        .collect::<Vec<_>>()
        .join(":");
    let plain = run_wlcs(&runner, &module, &filter, &out, "plain", false)?;
    let table = results::table(&groups, &plain);
    eprintln!("{table}");
    let verdict = suite.judge(&plain);
    let mut problems = verdict.problems();
    if options.prompt {
        let waiting = run_wlcs(&runner, &module, &filter, &out, "prompt", true)?;
        problems.extend(results::compare(&plain, &waiting));
    }
    let summary = format!(
        "{table}\n{}\ntook {:.0} s\n",
        problems.join("\n"),
        started.elapsed().as_secs_f64()
    );
    std::fs::write(out.join("summary.txt"), &summary)
        .with_context(|| format!("cannot write {}", out.join("summary.txt").display()))?;
    if !problems.is_empty() {
        bail!(
            "WLCS: {} problem(s):\n{}\n(see {} and docs/wlcs.md)",
            problems.len(),
            problems.join("\n"),
            out.display()
        );
    }
    eprintln!(
        "xtask: WLCS as expected ({} tests{}), {:.0} s",
        plain.len(),
        if options.prompt {
            ", the same with a prompt waiting"
        } else {
            ""
        },
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// WLCS's test runner: where `pkg-config` says (`test_runner`), else where Debian puts it.
fn find_runner() -> Result<PathBuf> {
    let said = Command::new("pkg-config")
        .args(["--variable=test_runner", "wlcs"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
    said.into_iter()
        .chain(RUNNER_PATHS.iter().map(PathBuf::from))
        .find(|p| p.is_file())
        .context("WLCS's runner is not installed: run `cargo xtask setup` (Debian package wlcs)")
}

/// One run of WLCS over `filter`: its XML and output go to `out/NAME.xml` and `out/NAME.log`.
/// A run that crashed or was killed names the test it was in.
fn run_wlcs(
    runner: &Path,
    module: &Path,
    filter: &str,
    out: &Path,
    name: &str,
    prompt: bool,
) -> Result<Vec<TestResult>> {
    let xml = out.join(format!("{name}.xml"));
    let log = out.join(format!("{name}.log"));
    // A stale file must not pass for this run's.
    let _ = std::fs::remove_file(&xml);
    let log_file =
        std::fs::File::create(&log).with_context(|| format!("cannot write {}", log.display()))?;
    let err_file = log_file.try_clone()?;
    eprintln!(
        "xtask: {} {} --gtest_filter=… ({name}{})",
        runner.display(),
        module.display(),
        if prompt { ", a prompt waiting" } else { "" }
    );
    let started = Instant::now();
    let mut child = Command::new(runner)
        .arg(module)
        .arg(format!("--gtest_filter={filter}"))
        .arg(format!("--gtest_output=xml:{}", xml.display()))
        .env("PCP_WLCS_PROMPT", if prompt { "1" } else { "0" })
        .stdin(Stdio::null())
        .stdout(log_file)
        .stderr(err_file)
        .spawn()
        .with_context(|| format!("cannot run {}", runner.display()))?;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if started.elapsed() > RUN_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            bail!(
                "WLCS ({name}) ran over {} minutes and was killed, in {}",
                RUN_LIMIT.as_secs() / 60,
                last_test(&log)
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let text = std::fs::read_to_string(&xml).with_context(|| {
        format!(
            "WLCS ({name}) wrote no results ({status}): it crashed in {}; see {}",
            last_test(&log),
            log.display()
        )
    })?;
    let results = results::parse_xml(&text).with_context(|| format!("in {}", xml.display()))?;
    eprintln!(
        "xtask: WLCS ({name}): {} tests in {:.0} s",
        results.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(results)
}

/// The test a WLCS log shows running last.
fn last_test(log: &Path) -> String {
    std::fs::read_to_string(log)
        .ok()
        .and_then(|text| {
            text.lines()
                .rev()
                .find_map(|l| l.strip_prefix("[ RUN      ] ").map(str::to_string))
        })
        .unwrap_or_else(|| "no test (before the first)".into())
}

/// What changed between the plain run and the one with a prompt waiting, one line a test.
pub fn outcome_name(outcome: &Outcome) -> &'static str {
    match outcome {
        Outcome::Pass => "pass",
        Outcome::Skip(_) => "skip",
        Outcome::Fail(_) => "fail",
    }
}
