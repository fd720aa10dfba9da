//! `pcpctl validate`, `pcp-compositor validate` and the compositor's loader accept and refuse
//! the same config files with the same messages: on the shipped config, on every config the
//! tests write (taken from their sources), and on bad configs written here for each section —
//! a wrong type, an unknown key, a value out of range — each refused at its line and column
//! with its key named. The two subcommands run as the real binaries, the loader both in-process
//! (`startup::load`, what the binary calls) and as the real compositor refusing to start.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use serde_json::Value;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `pcpctl` and `pcp-compositor` as the sources are now, built by the cargo that runs this test
/// in its own target folder and profile.
fn binaries() -> &'static (PathBuf, PathBuf) {
    static BUILT: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    BUILT.get_or_init(|| {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| env!("CARGO").into());
        let exe = std::env::current_exe().unwrap();
        let profile_dir = exe.parent().and_then(Path::parent).unwrap();
        let mut cmd = Command::new(cargo);
        cmd.args(["build", "-p", "pcpctl", "-p", "pcp-compositor"])
            .args(["--bin", "pcpctl", "--bin", "pcp-compositor"])
            .arg("--message-format=json-render-diagnostics")
            .current_dir(root());
        if profile_dir.file_name().and_then(|n| n.to_str()) == Some("release") {
            cmd.arg("--release");
        }
        if let Some(target) = profile_dir.parent() {
            cmd.arg("--target-dir").arg(target);
        }
        let out = cmd.stderr(Stdio::inherit()).output().unwrap();
        assert!(out.status.success(), "{cmd:?} failed: see above");
        let exe = |name: &str| {
            String::from_utf8_lossy(&out.stdout)
                .lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == name)
                .find_map(|m| m["executable"].as_str().map(PathBuf::from))
                .unwrap_or_else(|| panic!("no {name} executable"))
        };
        (exe("pcpctl"), exe("pcp-compositor"))
    })
}

/// What one validator said: accepted with its `ok` line, or refused with its message.
#[derive(Debug, PartialEq)]
enum Verdict {
    Ok(String),
    Refused(String),
}

fn subcommand(binary: &Path, prefix: &str, config: &Path) -> Verdict {
    let out = Command::new(binary)
        .args(["validate", "--config"])
        .arg(config)
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).trim().to_string(),
        String::from_utf8_lossy(&out.stderr).trim().to_string(),
    );
    match out.status.code() {
        Some(0) => Verdict::Ok(stdout),
        Some(1) => Verdict::Refused(stderr.strip_prefix(prefix).unwrap_or(&stderr).to_string()),
        other => panic!("{binary:?} validate exited {other:?}: {stderr}"),
    }
}

fn loader(config: &Path) -> Verdict {
    match pcp_compositor::startup::load(Some(config)) {
        Ok(c) => Verdict::Ok(format!(
            "{}: ok ({} capabilities)",
            c.shown_path(),
            c.gate.registry.len()
        )),
        Err(e) => Verdict::Refused(e.to_string()),
    }
}

/// The three verdicts on `text` written to a file, after checking that they agree.
fn agreed(dir: &Path, name: &str, text: &str) -> Verdict {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    let (pcpctl, compositor) = binaries();
    let a = subcommand(pcpctl, "", &path);
    let b = subcommand(compositor, "", &path);
    let c = loader(&path);
    assert_eq!(
        a, b,
        "pcpctl and pcp-compositor validate differ on {name}:\n{text}"
    );
    assert_eq!(
        a, c,
        "pcpctl validate and the loader differ on {name}:\n{text}"
    );
    a
}

fn tempdir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    // Config files must be writable by their owner only.
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .unwrap();
    dir
}

fn caps() -> String {
    root().join("assets/capabilities.d").display().to_string()
}

#[test]
fn the_shipped_config_is_accepted_by_all_three() {
    let dir = tempdir();
    let assets = root().join("assets/config");
    let mut whole = String::new();
    let mut names: Vec<PathBuf> = std::fs::read_dir(&assets)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    names.sort();
    for path in names {
        let text = std::fs::read_to_string(&path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let verdict = agreed(dir.path(), &name, &text);
        assert!(matches!(verdict, Verdict::Ok(_)), "{name}: {verdict:?}");
        whole += &text;
        whole += "\n";
    }
    let verdict = agreed(dir.path(), "config.toml", &whole);
    assert!(
        matches!(verdict, Verdict::Ok(_)),
        "the whole default config: {verdict:?}"
    );
    let replay = std::fs::read_to_string(root().join("assets/replay/config.toml")).unwrap();
    agreed(dir.path(), "replay.toml", &replay);
}

/// The config texts the tests' sources write: string literals that hold a section header, with
/// their escapes read and their format placeholders filled with the shipped manifest folder.
fn configs_in_sources() -> Vec<(String, String)> {
    let mut files = Vec::new();
    for dir in [
        "tests/tests",
        "tests/benches",
        "compositor/pcpctl/tests",
        "compositor/tests",
    ] {
        collect_rs(&root().join(dir), &mut files);
    }
    let sections = [
        "[manifests]",
        "[timeouts]",
        "[overlay]",
        "[speech]",
        "[compositor]",
    ];
    let mut out = Vec::new();
    for file in files {
        let source = std::fs::read_to_string(&file).unwrap();
        for (i, literal) in string_literals(&source).into_iter().enumerate() {
            if !sections.iter().any(|s| literal.contains(s)) {
                continue;
            }
            let filled = fill(&literal);
            let name = file
                .file_name()
                .unwrap()
                .to_string_lossy()
                .replace(".rs", "");
            out.push((format!("{name}-{i}.toml"), filled));
        }
    }
    out
}

fn collect_rs(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_rs(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Ordinary `"…"` literals with their escapes read (`\n`, `\"`, `\\`, a line continuation).
fn string_literals(source: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = source.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '/' if chars.peek() == Some(&'/') => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
            }
            '\'' => {
                // A char literal ('"') or a lifetime: skip a quoted char only.
                let next: Vec<char> = chars.clone().take(3).collect();
                if next.get(1) == Some(&'\'')
                    || (next.first() == Some(&'\\') && next.get(2) == Some(&'\''))
                {
                    let n = if next.first() == Some(&'\\') { 3 } else { 2 };
                    for _ in 0..n {
                        chars.next();
                    }
                }
            }
            '"' => {
                let mut text = String::new();
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => match chars.next() {
                            Some('n') => text.push('\n'),
                            Some('t') => text.push('\t'),
                            Some('\n') => {
                                while chars.peek().is_some_and(|c| c.is_whitespace()) {
                                    chars.next();
                                }
                            }
                            Some(other) => text.push(other),
                            None => {}
                        },
                        other => text.push(other),
                    }
                }
                out.push(text);
            }
            _ => {}
        }
    }
    out
}

/// Format placeholders (`{}`, `{:?}`, `{name}`) become the shipped manifest folder, quoted;
/// `{{` and `}}` become braces.
fn fill(literal: &str) -> String {
    let quoted = format!("{:?}", caps());
    let mut out = String::new();
    let mut chars = literal.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                out.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                out.push('}');
            }
            '{' => {
                let hole: String = chars.by_ref().take_while(|c| *c != '}').collect();
                if hole
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == ':' || c == '?')
                {
                    out += &quoted;
                } else {
                    out.push('{');
                    out += &hole;
                    out.push('}');
                }
            }
            other => out.push(other),
        }
    }
    out
}

#[test]
fn every_config_the_tests_write_gets_the_same_verdict_from_all_three() {
    let dir = tempdir();
    let configs = configs_in_sources();
    assert!(
        configs.len() >= 10,
        "the tests' configs are found: {}",
        configs.len()
    );
    let mut accepted = 0;
    for (name, text) in &configs {
        if let Verdict::Ok(_) = agreed(dir.path(), name, text) {
            accepted += 1;
        }
    }
    assert!(
        accepted >= 5,
        "most of the tests' configs load: {accepted} of {}",
        configs.len()
    );
}

/// A bad config, where it must be refused (line and column start), and words the refusal names.
struct Bad {
    text: &'static str,
    line: usize,
    names: &'static [&'static str],
}

const BAD: &[Bad] = &[
    // The gate's sections.
    Bad {
        text: "[timeouts]\nvoice_seconds = \"ten\"\n",
        line: 2,
        names: &["voice_seconds", "expected u32"],
    },
    Bad {
        text: "[timeouts]\nvoice_secs = 10\n",
        line: 2,
        names: &["voice_secs"],
    },
    Bad {
        text: "[timeouts]\n\nvisual_seconds = 0\n",
        line: 3,
        names: &["[timeouts] visual_seconds", "at least 1"],
    },
    Bad {
        text: "[queue]\nper_client = -1\n",
        line: 2,
        names: &["per_client"],
    },
    Bad {
        text: "[friction.permissive]\nimplicit_after = 0\nvoice_drops_after = 2\nreconfirm_every = 3\nidle_reset_hours = 4\n",
        line: 2,
        names: &["implicit_after", "at least 1"],
    },
    Bad {
        text: "[safety]\nlevel = \"lax\"\n",
        line: 2,
        names: &["lax"],
    },
    Bad {
        text: "[policy_change]\nlowers = \"{oops}\"\n",
        line: 2,
        names: &["[policy_change] lowers", "{oops}"],
    },
    Bad {
        text: "[shell_risk.reasons]\ndeletes_recursivly = \"löscht\"\n",
        line: 2,
        names: &["[shell_risk.reasons] `deletes_recursivly` is not a phrase's key"],
    },
    Bad {
        text: "[shell_risk.reasons]\ndeletes_outside = \"{how} ({pfad})\"\n",
        line: 2,
        names: &[
            "[shell_risk.reasons] deletes_outside",
            "`{pfad}`",
            "({how}, {path})",
        ],
    },
    Bad {
        text: "[session]\nprofile = \" \"\n",
        line: 2,
        names: &["[session] profile"],
    },
    Bad {
        text: "[gate]\nsession_approvals = 1\n",
        line: 2,
        names: &["session_approvals"],
    },
    // A section no one declares.
    Bad {
        text: "[timeouts]\nvoice_seconds = 5\n[overlya]\nfont_size = 3\n",
        line: 3,
        names: &["unknown section `overlya`"],
    },
    // The plugin's sections.
    Bad {
        text: "[overlay]\nfont_size = \"big\"\n",
        line: 2,
        names: &["font_size"],
    },
    Bad {
        text: "[overlay]\nmax_widht = 3\n",
        line: 2,
        names: &["max_widht"],
    },
    Bad {
        text: "[overlay]\ntheme = \"dark\"\nmax_width = 10\n",
        line: 3,
        names: &["[overlay] max_width"],
    },
    Bad {
        text: "[overlay]\nfocus_shortcut = \"Super+Retrun\"\n",
        line: 2,
        names: &["[overlay] focus_shortcut", "Retrun"],
    },
    Bad {
        text: "[speech]\nenabled = \"yes\"\n",
        line: 2,
        names: &["enabled"],
    },
    Bad {
        text: "[speech]\nlanguag = \"ko\"\n",
        line: 2,
        names: &["languag"],
    },
    Bad {
        text: "[speech]\nenabled = false\ntimeout_ms = 0\n",
        line: 3,
        names: &["[speech] timeout_ms"],
    },
    Bad {
        text: "[haptics]\ngain = \"loud\"\n",
        line: 2,
        names: &["gain"],
    },
    Bad {
        text: "[haptics]\n\ngian = 0.5\n",
        line: 3,
        names: &["gian"],
    },
    Bad {
        text: "[haptics]\ngain = 7.0\n",
        line: 2,
        names: &["[haptics] gain"],
    },
    Bad {
        text: "[haptics.cue]\npulses = 0\n",
        line: 2,
        names: &["[haptics] cue.pulses"],
    },
    // The reference compositor's own section.
    Bad {
        text: "[compositor]\ncursor_size = \"big\"\n",
        line: 2,
        names: &["cursor_size"],
    },
    Bad {
        text: "[compositor]\nbogus = 1\n",
        line: 2,
        names: &["bogus"],
    },
    Bad {
        text: "[compositor]\noutputs = [\"640x480\"]\ntouch_dpi = 5.0\n",
        line: 3,
        names: &["[compositor] touch_dpi"],
    },
    Bad {
        text: "[compositor]\nbackground = \"red\"\n",
        line: 2,
        names: &["[compositor] background", "#rrggbb"],
    },
];

#[test]
fn bad_configs_for_every_section_are_refused_alike_at_their_line_naming_the_key() {
    let dir = tempdir();
    let (_, compositor) = binaries();
    let runtime = tempdir();
    let mut wrong = Vec::new();
    for (i, bad) in BAD.iter().enumerate() {
        let text = format!("[manifests]\ndirs = [{:?}]\n{}", caps(), bad.text);
        let name = format!("bad-{i}.toml");
        let Verdict::Refused(message) = agreed(dir.path(), &name, &text) else {
            wrong.push(format!("{:?}: accepted", bad.text));
            continue;
        };
        let path = dir.path().join(&name);
        let at = format!("{}:{}:", path.display(), bad.line + 2);
        if !message.starts_with(&at) {
            wrong.push(format!("{:?}: refused at {at}? {message}", bad.text));
        }
        for word in bad.names {
            if !message.contains(word) {
                wrong.push(format!("{:?}: names {word}? {message}", bad.text));
            }
        }
        // The compositor itself refuses to start with it, saying the same.
        let out = Command::new(compositor)
            .args(["--backend", "headless", "--config"])
            .arg(&path)
            .env("XDG_RUNTIME_DIR", runtime.path())
            .env("XDG_STATE_HOME", runtime.path())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        if out.status.success() || !stderr.contains(&format!("pcp-compositor: {message}")) {
            wrong.push(format!("{:?}: the compositor says {stderr}", bad.text));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The real compositor started with `config` until it logs a line containing `until`, then
/// stopped (SIGTERM, as a session manager does): its log.
fn run_compositor_until(config: &Path, runtime: &Path, until: &str) -> String {
    use std::io::{BufRead, BufReader};
    let (_, compositor) = binaries();
    let mut child = Command::new(compositor)
        .args(["--backend", "headless", "--config"])
        .arg(config)
        .env("XDG_RUNTIME_DIR", runtime)
        .env("RUST_LOG", "info")
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut log = String::new();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !log.contains(until) {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) => {
                log += &line;
                log.push('\n');
            }
            Err(_) => {
                let _ = child.kill();
                panic!("the compositor never logged {until:?}:\n{log}");
            }
        }
    }
    // SAFETY: a plain signal to the child this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let status = child.wait().unwrap();
    assert!(
        status.success(),
        "the compositor stopped with {status}:\n{log}"
    );
    log
}

/// A config that lowers a safeguard, written while the compositor was down, is not applied
/// without consent: the real compositor starts with the policy last approved, and with nobody
/// to answer (headless: no input device) the change is refused and audited.
#[test]
fn a_weakened_config_is_not_applied_by_the_real_compositor_without_consent() {
    let dir = tempdir();
    let runtime = tempdir();
    let config = dir.path().join("config.toml");
    let state = dir.path().join("state.sqlite3");
    let base = format!(
        "[manifests]\ndirs = [{:?}]\n[state]\npath = {state:?}\n[speech]\nenabled = false\n\
         [compositor]\nreload_check_ms = 0\n",
        caps()
    );
    std::fs::write(&config, &base).unwrap();
    let first = run_compositor_until(&config, runtime.path(), "listening on WAYLAND_DISPLAY");
    assert!(!first.contains("the config's policy at start"), "{first}");
    // A longer visual timeout keeps a prompt answerable longer: it lowers protection.
    std::fs::write(&config, format!("{base}[timeouts]\nvisual_seconds = 600\n")).unwrap();
    let second = run_compositor_until(&config, runtime.path(), "the config's policy at start");
    assert!(
        second.contains("the config differs from the policy last approved"),
        "{second}"
    );
    assert!(
        second.contains("Deferred("),
        "nobody can answer, so it waits: {second}"
    );
    let (pcpctl, _) = binaries();
    let out = Command::new(pcpctl)
        .args(["audit", "--json", "--config"])
        .arg(&config)
        .output()
        .unwrap();
    let audit = String::from_utf8_lossy(&out.stdout);
    let refused = audit
        .lines()
        .filter(|l| l.contains("pcp.policy.change"))
        .any(|l| l.contains("confirmation_unavailable") && l.contains("visual_seconds"));
    assert!(refused, "the refused change is audited:\n{audit}");
}
