//! `cargo xtask`: the project's commands. `setup` installs what a fresh Debian machine lacks,
//! `test` is what CI runs, `demo` shows the product, `bench` runs the criterion benches, `fuzz`
//! runs the cargo-fuzz targets, `session-test` plays the desktop session on a real kernel in a
//! virtual machine, `eval-voice` measures voice recognition on a generated evaluation set,
//! `check-docs` checks the docs' links and quoted commands, `package` builds the Debian package,
//! `walk` follows one intent through the plugin and the gate with a debugger, `wlcs` runs the
//! Wayland Conformance Test Suite against the reference compositor.

mod docs_check;
mod eval_voice;
mod fuzz;
mod package;
mod session_test;
mod setup;
mod walk;
mod wlcs;

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

const USAGE: &str =
    "usage: cargo xtask <setup|test|demo|run|bench|fuzz|session-test|eval-voice|check-docs|package|walk|wlcs>
  setup   install the Debian packages, libvosk and the Korean Vosk model, libmoonshine and the
          English Moonshine model this project needs, and the fuzzing tools (nightly, cargo-fuzz)
  test    setup, then cargo fmt --check, clippy -D warnings, the whole test suite, the Python
          agent example against pcp-harness, every fuzz target for 15 s, the demo and the
          session test in a virtual machine
  demo    setup, then play the scripted session on the headless compositor (two virtual
          outputs); PNGs and the audit log go to target/demo/
  run     setup, then start a session with the best backend here (udev on a virtual terminal,
          winit inside another display, headless otherwise) and your config
          (--config FILE, else $XDG_CONFIG_HOME/pcp/config.toml); extra arguments go to
          pcp-compositor
  bench   run the criterion benchmarks and the polkit agent's (release)
  fuzz    [--seconds N] [--keep] [TARGET...] run the fuzz targets (all by default) for N seconds
          each (default 60), one after the other; a table of executions and crashes at the end.
          --keep starts from, adds to and minimizes the corpus kept in fuzz/corpus/ and records
          the run in fuzz/corpus/runs.tsv, so long runs add up
  session-test
          setup, then boot Debian's kernel in QEMU with pcp-compositor --backend udev on a
          virtio-gpu and a QXL card and play the scripted session there (touch, voice through
          snd-aloop, force feedback, a GPU unplugged and another plugged in, VT switching, a
          mode change); PNGs of every head and the logs go to target/session-test/ (--nice N
          runs QEMU at a lower priority; --language ko|en the voice steps' language, Korean by
          default, English with the installed package's model; --decoder-phases N sets the
          Korean recognizer's phases in the guest, 1 by default)
  eval-voice
          [--language ko|en] [--part tuning|held-out|all] [--ci] [--jobs N] [--speech-config FILE]
          generate a language's voice evaluation set (Korean by default: espeak-ng; English:
          espeak-ng, flite and Piper) and measure recognition on it (--ci: a subset): the
          confusion table, false approvals and latency go to target/eval-voice/
  check-docs
          build the programs, then check that every relative link in README.md and docs/
          resolves (files and #anchors) and that every quoted command's subcommands and
          --flags are in the program's --help
  package [--profile release|dev] [--check]
          build the Debian package pcp-confirm into target/package/ (release by default);
          --check runs lintian on it (errors fail) and checks dpkg -c for the paths it must hold
  walk    setup, then follow one window.move through pcp-plugin and pcp-gate with gdb (a real
          client, a click on Approve) and check that docs/architecture.md names every file it
          enters, in its walk or as called by name
  wlcs    [--no-prompt] [GROUP...] setup, then run the chosen groups of the Wayland Conformance
          Test Suite (compositor/wlcs/suite.toml, all by default; any other name is a gtest
          filter) against the reference compositor and judge them against the failures the file
          expects; then run them again with a prompt waiting in the dialog and fail on any
          changed outcome (--no-prompt skips that run). Reports go to target/wlcs/
";

/// Seconds each fuzz target runs in `cargo xtask test` (13 targets: 3¼ minutes).
const TEST_FUZZ_SECONDS: u64 = 15;

fn main() {
    if let Err(e) = run() {
        eprintln!("xtask: {e:#}");
        std::process::exit(1);
    }
}

fn run() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("setup") => {
            setup::setup()?;
            setup::fuzz_tools()
        }
        Some("test") => test(),
        Some("demo") => demo(),
        Some("run") => run_session(&args[1..]),
        Some("bench") => bench(&args[1..]),
        Some("session-test") => session_test::run(&args[1..]),
        Some("fuzz") => {
            let options = fuzz::parse(&args[1..])?;
            let cache = setup::setup()?;
            setup::fuzz_tools()?;
            fuzz::fuzz(
                &root(),
                &cache,
                options.seconds,
                &options.targets,
                options.keep,
            )
            .map(|_| ())
        }
        Some("eval-voice") => eval_voice::run(&args[1..]),
        Some("package") => {
            let options = package::parse(&args[1..])?;
            package::run(&options).map(|_| ())
        }
        Some("walk") => {
            if let Some(extra) = args.get(1) {
                bail!("`walk` takes no arguments, but was given `{extra}`\n{USAGE}");
            }
            let cache = setup::setup()?;
            walk::run(&root(), &cache)
        }
        Some("wlcs") => {
            let options = wlcs::parse(&args[1..])?;
            let cache = setup::setup()?;
            wlcs::run(&root(), &cache, &options)
        }
        Some("check-docs") => {
            let cache = setup::setup()?;
            docs_check::run(&root(), &cache, USAGE)
        }
        Some("-h" | "--help" | "help") | None => {
            println!("{USAGE}{}", eval_voice::USAGE);
            Ok(())
        }
        Some(other) => bail!("unknown command `{other}`\n{USAGE}{}", eval_voice::USAGE),
    }
}

/// The workspace root (xtask lives one level below it).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// Where cargo puts build output (`CARGO_TARGET_DIR`, relative to the root when relative, else
/// `target/`).
pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map(|p| if p.is_absolute() { p } else { root().join(p) })
        .unwrap_or_else(|| root().join("target"))
}

/// Runs `cargo ARGS` in the workspace root with the cache dir exported; fails on a non-zero exit.
pub fn cargo(args: &[&str], cache: &Path) -> Result<()> {
    cargo_with(args, &[], cache)
}

/// [`cargo`] with more environment variables set for it.
fn cargo_with(args: &[&str], env: &[(&str, &str)], cache: &Path) -> Result<()> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    eprintln!("xtask: cargo {}", args.join(" "));
    let status = Command::new(&cargo)
        .args(args)
        .current_dir(root())
        .env("PCP_CACHE_DIR", cache)
        .envs(env.iter().copied())
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
    check_client_crates_link_no_compositor()?;
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
    // The API documentation an embedder reads has no broken or private links (the dependencies'
    // metadata is clippy's, so this is only rustdoc over the workspace's crates).
    cargo_with(
        &["doc", "--no-deps", "--workspace"],
        &[("RUSTDOCFLAGS", "-D warnings")],
        &cache,
    )?;
    cargo(&["test", "--workspace"], &cache)?;
    check_pcpctl_needs_no_recognizer()?;
    // The Wayland Conformance Test Suite's chosen groups, plain and with a prompt waiting.
    wlcs::run(
        &root(),
        &cache,
        &wlcs::Options {
            groups: Vec::new(),
            prompt: true,
        },
    )?;
    // docs/architecture.md's walk is the one a debugger follows.
    walk::run(&root(), &cache)?;
    // The README and docs/ link only to what exists and quote only commands that exist.
    docs_check::run(&root(), &cache, USAGE)?;
    // The Debian package builds, lintian finds no error in it, and it holds what it must. From
    // the dev profile: a release build of the compositor costs far more than the check is worth
    // here (`cargo xtask package` alone builds the release one).
    package::run(&package::Options {
        profile: "dev".into(),
        check: true,
    })?;
    // docs/agents.md, "Testing your agent": the Python agent against pcp-harness.
    agent_example(&cache)?;
    // docs/agents-hooks.md: the real agent CLIs with `pcpctl hook` as their permission hook.
    agent_hooks(&cache)?;
    // docs/mcp.md: the same CLIs with real MCP servers behind `pcpctl mcp` (~40 s).
    mcp_gateway(&cache)?;
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
    // Every parser a client or a file reaches, fuzzed briefly (the long runs are `cargo xtask
    // fuzz`); the seed corpus and kept crash inputs already ran in the test suite.
    setup::fuzz_tools()?;
    let targets: Vec<String> = fuzz::TARGETS.iter().map(|(t, _)| t.to_string()).collect();
    fuzz::fuzz(&root(), &cache, TEST_FUZZ_SECONDS, &targets, false)?;
    // Voice recognition on the fixed CI subsets of the held-out evaluation sets, Korean (Vosk)
    // and English (Moonshine): each fails on any false approval or too few answers right.
    for language in ["ko", "en"] {
        eval_voice::run(&["--ci".to_string(), "--language".into(), language.into()])?;
    }
    // The README's first command must keep working: the whole scripted session, end to end.
    play_demo(&cache)?;
    // The desktop session on a real kernel: the udev backend, real GPUs, input, force feedback
    // and the microphone in a virtual machine (3-7 minutes on 2 cores).
    session_test::run(&[])
}

/// The crates a client or an agent links (the protocol's client side and `pcpctl`) must not pull
/// in Smithay, libvosk, libmoonshine (and its ONNX Runtime) or audio: `cargo tree` over their
/// normal dependencies names none of them. (`pcpctl validate` reads `[speech]` through
/// pcp-speech without its `vosk` and `moonshine` features: the config and phrase packs, no
/// recognizer, capture or synthesis, so that crate itself is allowed.)
fn check_client_crates_link_no_compositor() -> Result<()> {
    const FORBIDDEN: [&str; 8] = [
        "smithay",
        "vosk",
        "pcp-moonshine",
        "cpal",
        "alsa",
        "espeakng-sys",
        "rubato",
        "pcp-compositor",
    ];
    for package in ["pcp-protocol", "pcp-mcp", "pcpctl"] {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let out = Command::new(&cargo)
            .current_dir(root())
            .args([
                "tree",
                "--package",
                package,
                "--edges",
                "normal",
                "--prefix",
                "none",
            ])
            .output()
            .with_context(|| format!("cannot run {cargo} tree"))?;
        if !out.status.success() {
            bail!(
                "`cargo tree --package {package}` failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let tree = String::from_utf8_lossy(&out.stdout);
        let found: Vec<&str> = tree
            .lines()
            .filter_map(|l| l.split_whitespace().next())
            .filter(|name| FORBIDDEN.contains(name))
            .collect();
        if !found.is_empty() {
            bail!("{package} must link no compositor or audio crate, but depends on {found:?}");
        }
        eprintln!("xtask: {package} links no Smithay, libvosk, libmoonshine or audio");
    }
    Ok(())
}

/// The built `pcpctl` names no recognizer, ONNX Runtime or audio library among the shared
/// libraries it needs (its ELF `NEEDED` entries, read with `readelf`): the crate check above,
/// on the binary itself.
fn check_pcpctl_needs_no_recognizer() -> Result<()> {
    const FORBIDDEN: [&str; 4] = ["libvosk", "libmoonshine", "libonnxruntime", "libasound"];
    let binary = target_dir().join("debug/pcpctl");
    let out = Command::new("readelf")
        .arg("-d")
        .arg(&binary)
        .output()
        .with_context(|| format!("cannot run readelf -d {}", binary.display()))?;
    if !out.status.success() {
        bail!(
            "readelf -d {} failed: {}",
            binary.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let needed: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("(NEEDED)"))
        .filter_map(|l| l.split('[').nth(1))
        .map(|l| l.trim_end_matches(']'))
        .collect();
    let found: Vec<&&str> = needed
        .iter()
        .filter(|lib| FORBIDDEN.iter().any(|f| lib.starts_with(f)))
        .collect();
    if !found.is_empty() {
        bail!("pcpctl must need no recognizer or audio library, but needs {found:?}");
    }
    eprintln!("xtask: pcpctl needs {needed:?}: no recognizer or audio library");
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
    cargo(&args, &cache)?;
    // The session's polkit agent against Debian's pkttyagent on the real polkitd (needs root,
    // as the test does): tests/tests/polkit_agent/bench.rs prints the figures after the cases.
    cargo_with(
        &[
            "test",
            "--release",
            "-p",
            "pcp-tests",
            "--test",
            "polkit_agent",
        ],
        &[("PCP_POLKIT_BENCH", "5")],
        &cache,
    )
}

fn demo() -> Result<()> {
    let cache = setup::setup()?;
    play_demo(&cache)
}

/// The scripted session (tests/examples/demo.rs): it prints its table and exits non-zero when a
/// step did not go as scripted.
/// The Python example agent's test (tests/python) against `pcp-harness` with a scripted user,
/// as an agent developer runs it in their CI.
fn agent_example(cache: &Path) -> Result<()> {
    cargo(
        &[
            "build",
            "--package",
            "pcp-tests",
            "--example",
            "pcp-harness",
        ],
        cache,
    )?;
    cargo(&["build", "--package", "pcpctl", "--bin", "pcpctl"], cache)?;
    let target = target_dir().join("debug");
    eprintln!("xtask: python3 -m unittest discover -s tests/python -v");
    let status = Command::new("python3")
        .args(["-m", "unittest", "discover", "-s", "tests/python", "-v"])
        .current_dir(root())
        .env("PCP_CACHE_DIR", cache)
        .env("PCP_HARNESS", target.join("examples/pcp-harness"))
        .env("PCPCTL", target.join("pcpctl"))
        .status()
        .context("cannot run python3")?;
    if !status.success() {
        bail!("the Python agent example's test failed ({status})");
    }
    Ok(())
}

/// The agent CLIs the hook end-to-end test drives, pinned (the versions the recipe checked).
const AGENT_PACKAGES: &[&str] = &[
    "@anthropic-ai/claude-code@2.1.197",
    "@openai/codex@0.171.0",
    "@google/gemini-cli@0.61.0",
];

/// `pcpctl hook` end to end (tests/agent-harness/e2e.sh): Claude Code, Codex CLI and Gemini CLI
/// from npm (installed once into the cache's `agents/`), offline against the scripted model
/// server on loopback, with the hook installed by `pcpctl hook install` and pcp-harness (with
/// the cache's voice model) as the user: 45 checks, one CLI session a CLI for most of them,
/// about 75 s on 2 shared cores. Needs Node ≥ 20 (Debian 12's is 18: install a newer one) and
/// python3.
fn agent_hooks(cache: &Path) -> Result<()> {
    let node = Command::new("node")
        .arg("--version")
        .output()
        .context("node is needed for the agent CLIs (Node ≥ 20)")?;
    let version = String::from_utf8_lossy(&node.stdout).trim().to_string();
    let major: u32 = version
        .trim_start_matches('v')
        .split('.')
        .next()
        .and_then(|m| m.parse().ok())
        .unwrap_or(0);
    if major < 20 {
        bail!("the agent CLIs need Node ≥ 20; this machine has {version:?}");
    }
    let agents = cache.join("agents");
    let bin = agents.join("node_modules/.bin");
    if !["claude", "codex", "gemini"]
        .iter()
        .all(|b| bin.join(b).exists())
    {
        eprintln!(
            "xtask: npm install --prefix {} {}",
            agents.display(),
            AGENT_PACKAGES.join(" ")
        );
        std::fs::create_dir_all(&agents)?;
        let status = Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--prefix"])
            .arg(&agents)
            .args(AGENT_PACKAGES)
            .status()
            .context("cannot run npm")?;
        if !status.success() {
            bail!("npm install of the agent CLIs failed ({status})");
        }
    }
    let target = target_dir().join("debug");
    eprintln!("xtask: tests/agent-harness/e2e.sh");
    let status = Command::new("bash")
        .arg(root().join("tests/agent-harness/e2e.sh"))
        .env("PCP_CACHE_DIR", cache)
        .env("PCP_HARNESS", target.join("examples/pcp-harness"))
        .env("PCPCTL", target.join("pcpctl"))
        .env("AGENTS_BIN", &bin)
        .status()
        .context("cannot run bash")?;
    if !status.success() {
        bail!("the agent hooks' end-to-end test failed ({status})");
    }
    Ok(())
}

/// The MCP servers the gateway's end-to-end test puts behind `pcpctl mcp`, pinned.
const MCP_SERVER_PACKAGES: &[&str] = &[
    "@modelcontextprotocol/server-filesystem@2026.8.31",
    "@modelcontextprotocol/server-everything@2026.8.31",
];

/// `pcpctl mcp` end to end (tests/agent-harness/mcp_e2e.sh): the agent CLIs of
/// [`agent_hooks`] with real MCP servers from npm (installed once into the cache's
/// `mcp-servers/`) behind the gateway in their MCP settings, offline against the scripted model
/// server, with pcp-harness as the user.
fn mcp_gateway(cache: &Path) -> Result<()> {
    let servers = cache.join("mcp-servers");
    let bin = servers.join("node_modules/.bin");
    if !["mcp-server-filesystem", "mcp-server-everything"]
        .iter()
        .all(|b| bin.join(b).exists())
    {
        eprintln!(
            "xtask: npm install --prefix {} {}",
            servers.display(),
            MCP_SERVER_PACKAGES.join(" ")
        );
        std::fs::create_dir_all(&servers)?;
        let status = Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--prefix"])
            .arg(&servers)
            .args(MCP_SERVER_PACKAGES)
            .status()
            .context("cannot run npm")?;
        if !status.success() {
            bail!("npm install of the MCP servers failed ({status})");
        }
    }
    let target = target_dir().join("debug");
    eprintln!("xtask: tests/agent-harness/mcp_e2e.sh");
    let status = Command::new("bash")
        .arg(root().join("tests/agent-harness/mcp_e2e.sh"))
        .env("PCP_CACHE_DIR", cache)
        .env("PCP_HARNESS", target.join("examples/pcp-harness"))
        .env("PCPCTL", target.join("pcpctl"))
        .env("AGENTS_BIN", cache.join("agents/node_modules/.bin"))
        .env("MCP_SERVERS_BIN", &bin)
        .status()
        .context("cannot run bash")?;
    if !status.success() {
        bail!("the MCP gateway's end-to-end test failed ({status})");
    }
    Ok(())
}

fn play_demo(cache: &Path) -> Result<()> {
    let out = root().join("target/demo");
    let out = out.to_string_lossy();
    cargo(
        &[
            "run",
            "--quiet",
            "--package",
            "pcp-tests",
            "--example",
            "demo",
            "--",
            &out,
        ],
        cache,
    )
}

/// `cargo xtask run`: builds the compositor with both session backends and lets
/// `--backend auto` choose among them.
fn run_session(extra: &[String]) -> Result<()> {
    let cache = setup::setup()?;
    let fallback = dev_config_if_none(extra)?;
    let mut args = vec![
        "run",
        "--release",
        "--package",
        "pcp-compositor",
        "--features",
        "winit,udev",
        "--bin",
        "pcp-compositor",
        "--",
        "--backend",
        "auto",
    ];
    if let Some(config) = &fallback {
        args.extend(["--config", config.as_str()]);
    }
    args.extend(extra.iter().map(String::as_str));
    cargo(&args, &cache)
}

/// Without `--config` and without the user's config file, a session from a checkout would know
/// no capabilities (the manifests are not installed): write `target/run/config.toml` naming this
/// checkout's manifests, everything else at its default, and say so.
fn dev_config_if_none(extra: &[String]) -> Result<Option<String>> {
    if extra
        .iter()
        .any(|a| a == "--config" || a.starts_with("--config="))
    {
        return Ok(None);
    }
    let user = match std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => match std::env::var_os("HOME") {
            Some(home) => PathBuf::from(home).join(".config"),
            None => PathBuf::from("."),
        },
    }
    .join("pcp/config.toml");
    if user.exists() {
        return Ok(None);
    }
    let dir = root().join("target/run");
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let config = dir.join("config.toml");
    let manifests = root().join("assets/capabilities.d");
    let text = format!(
        "# Written by `cargo xtask run`: {} does not exist. Every other setting is at its \
         default\n# (see assets/config/).\n[manifests]\ndirs = [{:?}]\n",
        user.display(),
        manifests.display().to_string(),
    );
    std::fs::write(&config, text).with_context(|| format!("cannot write {}", config.display()))?;
    eprintln!(
        "xtask: no {} — running with {} (this checkout's manifests, defaults otherwise)",
        user.display(),
        config.display()
    );
    Ok(Some(config.to_string_lossy().into_owned()))
}
