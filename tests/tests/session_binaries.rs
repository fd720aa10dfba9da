//! No session binary can contain the scripted user: in a normal build of every package with a
//! binary (`pcp-compositor` with each backend, `pcpctl`, the VM guest, …), cargo's own feature
//! resolution enables neither `pcp-compositor`'s `test-harness` (seat injection) nor `pcp-gate`'s
//! `scripted-user` (the `"scripted": true` mark). Only `pcp-tests`, whose dependencies on them
//! are dev-dependencies, gets them — checked too, so the check can fail.

use std::process::Command;

use serde_json::Value;

/// The features `pcp-compositor` and `pcp-gate` have in a build of `args` (`cargo tree` over
/// the edges `edges`): (package, features) pairs.
fn features(args: &[&str], edges: &str) -> Vec<(String, String)> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        // `--locked`, not `--offline`: on a fresh machine the crates of backends the tests do
        // not build (the udev backend's `drm`, …) are not downloaded yet, and `cargo tree`
        // reads them.
        .args([
            "tree", "--locked", "--prefix", "none", "-f", "{p}|{f}", "-e", edges,
        ])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "cargo tree {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|line| {
            let (package, features) = line.split_once('|')?;
            let name = package.split_whitespace().next()?;
            ["pcp-compositor", "pcp-gate"]
                .contains(&name)
                .then(|| (name.to_string(), features.to_string()))
        })
        .collect()
}

fn scripted(found: &[(String, String)]) -> Vec<&(String, String)> {
    found
        .iter()
        .filter(|(_, f)| f.contains("test-harness") || f.contains("scripted-user"))
        .collect()
}

/// Every workspace package with a binary target, but the test crate and the build tool.
fn session_packages() -> Vec<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "metadata",
            "--offline",
            "--no-deps",
            "--format-version",
            "1",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let metadata: Value = serde_json::from_slice(&out.stdout).unwrap();
    metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| {
            p["targets"]
                .as_array()
                .unwrap()
                .iter()
                .any(|t| t["kind"].as_array().unwrap().iter().any(|k| k == "bin"))
        })
        .map(|p| p["name"].as_str().unwrap().to_string())
        .filter(|name| !["pcp-tests", "xtask"].contains(&name.as_str()))
        .collect()
}

#[test]
fn no_session_binary_is_built_with_the_scripted_user() {
    let packages = session_packages();
    assert!(
        packages.iter().any(|p| p == "pcp-compositor") && packages.iter().any(|p| p == "pcpctl"),
        "{packages:?}"
    );
    for package in &packages {
        let found = features(&["-p", package], "normal,build");
        assert!(scripted(&found).is_empty(), "{package}: {found:?}");
    }
    for backends in ["udev", "winit", "udev,winit"] {
        let found = features(
            &["-p", "pcp-compositor", "--features", backends],
            "normal,build",
        );
        assert!(
            found.iter().any(|(p, _)| p == "pcp-compositor"),
            "{found:?}"
        );
        assert!(
            scripted(&found).is_empty(),
            "--features {backends}: {found:?}"
        );
    }
    // The harness's own crate does get them (through its dev-dependencies): the check sees them.
    let found = features(&["-p", "pcp-tests"], "normal,build,dev");
    let names: Vec<&str> = scripted(&found).iter().map(|(p, _)| p.as_str()).collect();
    assert!(
        names.contains(&"pcp-compositor") && names.contains(&"pcp-gate"),
        "{found:?}"
    );
}
