//! `cargo xtask walk`: follows one `window.move` through the plugin and the gate with a
//! debugger, and checks that `docs/architecture.md` names every file it enters. The test
//! `screen`'s `built_in_window_actions_act_on_a_real_client_only_after_approval` submits a
//! `window.move` from a real client, clicks Approve and sees the window move, then submits a
//! `window.close`. gdb stops once in every function of `pcp-plugin` and `pcp-gate` entered
//! from the first `submit` off the wire up to the second one, and the files those functions
//! live in are compared with the doc's walk table and its list of what the walk calls by name.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

const TEST_TARGET: &str = "screen";
const TEST_NAME: &str = "built_in_window_actions_act_on_a_real_client_only_after_approval";
/// Where the walk starts and ends: the pcp-intent-v1 front end's submit (the function itself,
/// not its closures).
const MARKER: &str = "pcp_plugin::wayland::submit";
const DOC: &str = "docs/architecture.md";
/// The heading of the doc's section that lists the files the walk enters only to call by name.
const LEAVES_HEADING: &str = "## What a debugger sees";

/// The gdb script: breaks at the marker, then once in each function of the two crates (a
/// temporary breakpoint each), and records where it stopped until the marker is hit again.
const GDB_SCRIPT: &str = r#"
import os, gdb
exe = os.environ['WALK_EXE']
marker = os.environ['WALK_MARKER']
funcs = []
for line in open(os.environ['WALK_FUNCS']):
    addr, _kind, name = line.rstrip('\n').split(' ', 2)
    funcs.append((int(addr, 16), name))
marks = [a for a, n in funcs if n == marker]
if not marks:
    raise gdb.GdbError('no function named ' + marker)
gdb.execute('set pagination off')
gdb.execute('set confirm off')
gdb.execute('handle SIGPIPE nostop noprint pass')
gdb.execute('starti')
base = None
for l in gdb.execute('info proc mappings', to_string=True).splitlines():
    f = l.split()
    if f and f[-1] == exe:
        base = int(f[0], 16)
        break
if base is None:
    raise gdb.GdbError('the test binary is not mapped')
first = [gdb.Breakpoint('*%#x' % (base + a), internal=True) for a in marks]
gdb.execute('continue')
for b in first:
    b.delete()
for a, n in funcs:
    if a not in marks:
        gdb.Breakpoint('*%#x' % (base + a), temporary=True, internal=True)
for a in marks:
    gdb.Breakpoint('*%#x' % (base + a), internal=True)
with open(os.environ['WALK_HITS'], 'w') as out:
    while True:
        try:
            gdb.execute('continue', to_string=True)
            pc = gdb.selected_frame().pc()
        except gdb.error:
            break
        if pc - base in marks:
            out.write('end\n')
            break
        out.write('%x\n' % (pc - base))
gdb.execute('kill')
"#;

/// One function entered, in order.
struct Entered {
    file: String,
    function: String,
}

pub fn run(root: &Path, cache: &Path) -> Result<()> {
    let exe = build_test(root, cache)?;
    let dir = crate::target_dir().join("walk");
    std::fs::create_dir_all(&dir)?;
    // gdb resolves the binary's mapping by its real path.
    let exe = exe
        .canonicalize()
        .with_context(|| format!("cannot resolve {}", exe.display()))?;
    let functions = crate_functions(&exe)?;
    let funcs = dir.join("functions.txt");
    std::fs::write(&funcs, &functions)?;
    let script = dir.join("walk.py");
    std::fs::write(&script, GDB_SCRIPT)?;
    let hits = dir.join("hits.txt");
    let _ = std::fs::remove_file(&hits);
    eprintln!("xtask: following {TEST_NAME} with gdb");
    let output = Command::new("gdb")
        .args(["-q", "-batch", "-x"])
        .arg(&script)
        .arg("--args")
        .arg(&exe)
        .args([TEST_NAME, "--exact", "--test-threads=1"])
        .current_dir(root.join("tests"))
        .env("WALK_EXE", &exe)
        .env("WALK_MARKER", MARKER)
        .env("WALK_FUNCS", &funcs)
        .env("WALK_HITS", &hits)
        .output()
        .context("cannot run gdb (cargo xtask setup installs it)")?;
    let log = dir.join("gdb.log");
    std::fs::write(&log, [&output.stdout[..], &output.stderr[..]].concat())?;
    let recorded = std::fs::read_to_string(&hits)
        .with_context(|| format!("gdb recorded nothing; its log: {}", log.display()))?;
    if recorded.lines().last() != Some("end") {
        bail!(
            "the walk did not reach the second submit; gdb's log: {}",
            log.display()
        );
    }
    let entered = locate(&exe, root, &recorded, &functions)?;
    let doc = std::fs::read_to_string(root.join(DOC)).with_context(|| format!("reading {DOC}"))?;
    let (walk, leaves) = documented(&doc)?;
    report(&entered, &walk, &leaves)
}

/// Builds the test and returns its executable.
fn build_test(root: &Path, cache: &Path) -> Result<PathBuf> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = Command::new(&cargo)
        .args(["test", "-p", "pcp-tests", "--test", TEST_TARGET, "--no-run"])
        .arg("--message-format=json")
        .current_dir(root)
        .env("PCP_CACHE_DIR", cache)
        .output()
        .with_context(|| format!("cannot run {cargo}"))?;
    if !output.status.success() {
        bail!(
            "building the test `{TEST_TARGET}` failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let Ok(message) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if message["target"]["name"] == TEST_TARGET
            && let Some(exe) = message["executable"].as_str()
        {
            return Ok(PathBuf::from(exe));
        }
    }
    bail!("cargo named no executable for the test `{TEST_TARGET}`")
}

/// The test binary's functions of `pcp-plugin` and `pcp-gate` (`nm -C`: address, kind, name).
fn crate_functions(exe: &Path) -> Result<String> {
    let output = Command::new("nm")
        .args(["-C", "--defined-only"])
        .arg(exe)
        .output()
        .context("cannot run nm (binutils)")?;
    if !output.status.success() {
        bail!("nm failed on {}", exe.display());
    }
    let mut out = String::new();
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let mut fields = line.splitn(3, ' ');
        let (Some(_), Some(kind), Some(name)) = (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        let code = matches!(kind, "t" | "T" | "w" | "W");
        let ours = ["pcp_plugin::", "pcp_gate::", "<pcp_plugin::", "<pcp_gate::"]
            .iter()
            .any(|p| name.starts_with(p));
        if code && ours {
            out.push_str(line);
            out.push('\n');
        }
    }
    Ok(out)
}

/// Each recorded address's source file (relative to the workspace) and function, in order.
fn locate(exe: &Path, root: &Path, recorded: &str, functions: &str) -> Result<Vec<Entered>> {
    let names: std::collections::HashMap<u64, &str> = functions
        .lines()
        .filter_map(|l| {
            let mut f = l.splitn(3, ' ');
            let addr = u64::from_str_radix(f.next()?, 16).ok()?;
            Some((addr, f.nth(1)?))
        })
        .collect();
    let addrs: Vec<&str> = recorded.lines().filter(|l| *l != "end").collect();
    if addrs.is_empty() {
        return Ok(Vec::new());
    }
    let output = Command::new("addr2line")
        .arg("-e")
        .arg(exe)
        .args(addrs.iter().map(|a| format!("0x{a}")))
        .output()
        .context("cannot run addr2line (binutils)")?;
    let prefix = format!("{}/", root.display());
    let files = String::from_utf8_lossy(&output.stdout);
    let mut entered = Vec::new();
    for (addr, line) in addrs.iter().zip(files.lines()) {
        let file = line.rsplit_once(':').map_or(line, |(f, _)| f);
        let file = file.strip_prefix(&prefix).unwrap_or(file).to_string();
        let function = u64::from_str_radix(addr, 16)
            .ok()
            .and_then(|a| names.get(&a).copied())
            .unwrap_or_default()
            .to_string();
        entered.push(Entered { file, function });
    }
    Ok(entered)
}

/// The doc's walk (the files of its numbered table) and the files it lists under
/// [`LEAVES_HEADING`].
fn documented(doc: &str) -> Result<(Vec<String>, BTreeSet<String>)> {
    let mut walk = Vec::new();
    for line in doc.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.len() > 3 && cells[1].parse::<u32>().is_ok() {
            walk.push(cells[2].trim_matches('`').to_string());
        }
    }
    let start = doc
        .find(LEAVES_HEADING)
        .with_context(|| format!("{DOC} has no section `{LEAVES_HEADING}`"))?;
    let section = &doc[start + LEAVES_HEADING.len()..];
    let section = &section[..section.find("\n## ").unwrap_or(section.len())];
    let leaves = section
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|s| s.ends_with(".rs") && s.contains('/'))
        .map(str::to_string)
        .collect();
    if walk.is_empty() {
        bail!("{DOC} has no numbered walk table");
    }
    Ok((walk, leaves))
}

/// Prints the files in the order they were first entered and fails when the doc and the
/// debugger disagree.
fn report(entered: &[Entered], walk: &[String], leaves: &BTreeSet<String>) -> Result<()> {
    let mut seen = BTreeSet::new();
    let mut problems = Vec::new();
    println!("files entered, in order (first function entered in each):");
    for e in entered {
        if !seen.insert(e.file.clone()) {
            continue;
        }
        let role = if walk.contains(&e.file) {
            "walk"
        } else if leaves.contains(&e.file) {
            "called by name"
        } else {
            problems.push(format!("{} is entered but {DOC} does not name it", e.file));
            "NOT IN THE DOC"
        };
        println!("  {:<44} {:<15} {}", e.file, role, e.function);
    }
    for file in walk {
        if !seen.contains(file) {
            problems.push(format!("{file} is in {DOC}'s walk but was never entered"));
        }
    }
    for file in leaves.difference(&seen) {
        println!("  (named in {DOC} but not entered this time: {file})");
    }
    println!(
        "{} functions in {} files: {} in the walk, {} called by name",
        entered.len(),
        seen.len(),
        walk.len(),
        seen.len().saturating_sub(walk.len())
    );
    if !problems.is_empty() {
        bail!("the walk and {DOC} disagree:\n  {}", problems.join("\n  "));
    }
    Ok(())
}
