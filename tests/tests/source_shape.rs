//! The product sources stay readable: no file over 600 lines, no function over 100 lines, and
//! no module cycle inside `pcp-gate` or `pcp-plugin` (their modules depend on each other one way
//! only). What is over a limit today is listed below with its size as a ceiling: each may only
//! shrink, and leaves the list once it is within the limit (the test says so).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const MAX_FILE_LINES: usize = 600;
const MAX_FN_LINES: usize = 100;

/// The crates whose sources are the product (tests, benches, the xtask, the guest driver and
/// the fuzz checks are not).
const PRODUCT: &[&str] = &[
    "gate/src",
    "config/src",
    "overlay/src",
    "speech/src",
    "speech/moonshine/src",
    "haptics/src",
    "compositor/protocol/src",
    "compositor/plugin/src",
    "compositor/pcpctl/src",
    "compositor/src",
];

/// Files over the limit today, and their ceiling: none. The last three (the compositor's
/// `state.rs`, the gate's `policy.rs` and `store.rs`) were split by what they own. Kept, so a
/// file that must grow past the limit for a while says so here, with why.
const LONG_FILES: &[(&str, usize)] = &[];

/// Functions over the limit today (file, name), and their ceiling.
const LONG_FNS: &[(&str, &str, usize)] = &[];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every product source file, by its path from the workspace root.
fn product_files() -> BTreeMap<String, String> {
    let root = root();
    let mut files = Vec::new();
    for dir in PRODUCT {
        rust_files(&root.join(dir), &mut files);
    }
    files
        .into_iter()
        .map(|p| {
            let rel = p
                .strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            (rel, std::fs::read_to_string(&p).unwrap())
        })
        .collect()
}

/// A line with strings, characters and a trailing comment blanked, for counting braces.
fn code_of(line: &str) -> String {
    let mut out = String::new();
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '/' if chars.peek() == Some(&'/') => break,
            '"' => {
                while let Some(s) = chars.next() {
                    match s {
                        '\\' => {
                            chars.next();
                        }
                        '"' => break,
                        _ => {}
                    }
                }
            }
            '\'' => {
                // A character literal ('{', '\n'); a lifetime has no closing quote nearby.
                let rest: String = chars.clone().take(3).collect();
                if let Some(escaped) = rest.strip_prefix('\\') {
                    if let Some(end) = escaped.find('\'') {
                        for _ in 0..end + 2 {
                            chars.next();
                        }
                    }
                } else if rest.chars().nth(1) == Some('\'') {
                    chars.next();
                    chars.next();
                }
            }
            c => out.push(c),
        }
    }
    out
}

/// The name of the function a line declares, if it does.
fn declared_fn(line: &str) -> Option<&str> {
    let t = line.trim_start();
    if t.starts_with("//") {
        return None;
    }
    let at = t.find("fn ")?;
    let before = &t[..at];
    let qualifiers = before.split_whitespace().all(|w| {
        w.starts_with("pub") || ["const", "async", "unsafe", "extern", "\"C\""].contains(&w)
    });
    if !qualifiers {
        return None;
    }
    let name = &t[at + 3..];
    let end = name.find(|c: char| !(c.is_alphanumeric() || c == '_'))?;
    (end > 0).then(|| &name[..end])
}

/// Every function with a body in `text`: (name, first line, lines).
fn functions(text: &str) -> Vec<(String, usize, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(name) = declared_fn(line) else {
            continue;
        };
        let mut depth = 0i32;
        let mut started = false;
        for (j, l) in lines.iter().enumerate().skip(i) {
            let code = code_of(l);
            for c in code.chars() {
                match c {
                    '{' => {
                        depth += 1;
                        started = true;
                    }
                    '}' => depth -= 1,
                    _ => {}
                }
            }
            if !started && code.trim_end().ends_with(';') {
                break;
            }
            if started && depth == 0 {
                found.push((name.to_string(), i + 1, j - i + 1));
                break;
            }
        }
    }
    found
}

#[test]
fn no_product_file_is_over_600_lines_but_the_listed_ones_which_only_shrink() {
    let mut problems = Vec::new();
    let files = product_files();
    assert!(files.len() > 100, "the sources were found: {}", files.len());
    for (path, text) in &files {
        let lines = text.lines().count();
        let listed = LONG_FILES.iter().find(|(p, _)| p == path);
        match listed {
            None if lines > MAX_FILE_LINES => {
                problems.push(format!("{path}: {lines} lines (at most {MAX_FILE_LINES})"))
            }
            Some((_, ceiling)) if lines > *ceiling => problems.push(format!(
                "{path}: {lines} lines, more than its ceiling {ceiling}"
            )),
            Some(_) if lines <= MAX_FILE_LINES => problems.push(format!(
                "{path}: {lines} lines, within the limit: take it off LONG_FILES"
            )),
            _ => {}
        }
    }
    for (path, _) in LONG_FILES {
        if !files.contains_key(*path) {
            problems.push(format!("{path} is gone: take it off LONG_FILES"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn no_product_function_is_over_100_lines_but_the_listed_ones_which_only_shrink() {
    let mut problems = Vec::new();
    let mut seen = BTreeSet::new();
    for (path, text) in product_files() {
        for (name, at, lines) in functions(&text) {
            if lines <= MAX_FN_LINES {
                continue;
            }
            let listed = LONG_FNS.iter().find(|(p, n, _)| *p == path && *n == name);
            match listed {
                None => problems.push(format!(
                    "{path}:{at}: fn {name} has {lines} lines (at most {MAX_FN_LINES})"
                )),
                Some((_, _, ceiling)) if lines > *ceiling => problems.push(format!(
                    "{path}:{at}: fn {name} has {lines} lines, more than its ceiling {ceiling}"
                )),
                Some(_) => {
                    seen.insert((path.clone(), name));
                }
            }
        }
    }
    for (path, name, _) in LONG_FNS {
        if !seen.contains(&(path.to_string(), name.to_string())) {
            problems.push(format!(
                "{path}: fn {name} is within the limit (or gone): take it off LONG_FNS"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_function_counter_counts_what_it_should() {
    let text = "fn a() {\n    let s = \"}\";\n    let c = '{';\n}\n\npub(crate) fn b(x: u8)\n    -> u8\n{\n    x // }\n}\ntrait T {\n    fn c(&self);\n}\n";
    assert_eq!(
        functions(text),
        [("a".to_string(), 1, 4), ("b".to_string(), 6, 5)]
    );
}

/// Each top-level module of the crate at `src` and the top-level modules it names
/// (`crate::x`, `use crate::{x, y}`), comments and unit tests left out.
fn module_edges(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for path in files {
        let rel = path.strip_prefix(src).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let module = first.trim_end_matches(".rs").to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        let text = text.split("#[cfg(test)]\nmod tests").next().unwrap_or("");
        let code: String = text
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .map(|l| l.to_string() + "\n")
            .collect();
        let mut named = BTreeSet::new();
        for (i, _) in code.match_indices("crate::") {
            let rest = &code[i + "crate::".len()..];
            if let Some(group) = rest.strip_prefix('{') {
                let group = &group[..group.find('}').unwrap_or(group.len())];
                for item in group.split(',') {
                    let head = item.trim().split("::").next().unwrap_or("").trim();
                    named.insert(head.to_string());
                }
            } else {
                let end = rest
                    .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .unwrap_or(rest.len());
                named.insert(rest[..end].to_string());
            }
        }
        named.remove(&module);
        edges.entry(module).or_default().extend(named);
    }
    // Only edges to modules (items of the crate root are not modules).
    let modules: BTreeSet<String> = edges.keys().cloned().collect();
    for targets in edges.values_mut() {
        targets.retain(|t| modules.contains(t) && t != "lib");
    }
    edges
}

/// The modules that lie on a cycle.
fn on_cycles(edges: &BTreeMap<String, BTreeSet<String>>) -> BTreeSet<String> {
    let reaches = |from: &str, to: &str| {
        let mut stack = vec![from.to_string()];
        let mut seen = BTreeSet::new();
        while let Some(m) = stack.pop() {
            for next in edges.get(&m).into_iter().flatten() {
                if next == to {
                    return true;
                }
                if seen.insert(next.clone()) {
                    stack.push(next.clone());
                }
            }
        }
        false
    };
    edges.keys().filter(|m| reaches(m, m)).cloned().collect()
}

#[test]
fn the_plugin_has_no_module_cycle() {
    let edges = module_edges(&root().join("compositor/plugin/src"));
    assert!(edges.contains_key("engine") && edges["wayland"].contains("effects"));
    let cycles = on_cycles(&edges);
    assert!(
        cycles.is_empty(),
        "pcp-plugin modules on a cycle: {cycles:?}"
    );
}

#[test]
fn the_gate_has_no_module_cycle() {
    let edges = module_edges(&root().join("gate/src"));
    assert!(edges.contains_key("policy") && edges["registry"].contains("lowering"));
    let cycles = on_cycles(&edges);
    assert!(cycles.is_empty(), "pcp-gate modules on a cycle: {cycles:?}");
}

#[test]
fn the_cycle_finder_finds_a_cycle_and_only_that() {
    let edges: BTreeMap<String, BTreeSet<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a"]),
        ("d", vec!["a"]),
    ]
    .into_iter()
    .map(|(m, t)| (m.to_string(), t.into_iter().map(String::from).collect()))
    .collect();
    let found: Vec<String> = on_cycles(&edges).into_iter().collect();
    assert_eq!(found, ["a", "b", "c"]);
}
