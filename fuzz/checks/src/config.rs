//! Config and manifest loading as the compositor loads them (`pcp_config::Config::from_sources`
//! with the reference compositor's sections, which reads no file): the input is a config file's
//! text and the texts of manifests in a system folder and a user folder, separated by lines
//! `#== system` and `#== user`. Properties: no panic; an error names a file it was given; a
//! loaded policy has every capability declared in the texts it was given, with a description that
//! renders for any parameters, and the same sources give the same digest; an accepted
//! `[overlay]` shows any client string within its caps.

use std::path::PathBuf;

use pcp_config::Config;
use pcp_config::reference::ReferenceSections;
use pcp_gate::sources::{ManifestFolder, PolicySources, SourceFile};
use serde_json::json;

const CONFIG: &str = "/fuzz/config.toml";
const SYSTEM: &str = "/fuzz/system";
const USER: &str = "/fuzz/user";

/// Splits the input into the config text and the manifests of each folder.
fn sources(text: &str) -> PolicySources {
    let mut config = String::new();
    let mut system = Vec::new();
    let mut user = Vec::new();
    // Which part the lines go to: 0 config, 1 a system manifest, 2 a user manifest.
    let mut part = 0;
    for line in text.split_inclusive('\n') {
        let marker = line.trim_end();
        if marker == "#== system" || marker == "#== user" {
            part = if marker.ends_with("system") { 1 } else { 2 };
            let folder: &mut Vec<SourceFile> = if part == 1 { &mut system } else { &mut user };
            let dir = if part == 1 { SYSTEM } else { USER };
            folder.push(SourceFile {
                path: PathBuf::from(format!("{dir}/{}.toml", folder.len())),
                text: String::new(),
            });
            continue;
        }
        match part {
            0 => config.push_str(line),
            1 => push(&mut system, line),
            _ => push(&mut user, line),
        }
    }
    PolicySources {
        config: SourceFile {
            path: CONFIG.into(),
            text: config,
        },
        folders: vec![
            ManifestFolder {
                path: SYSTEM.into(),
                system: true,
                files: system,
            },
            ManifestFolder {
                path: USER.into(),
                system: false,
                files: user,
            },
        ],
    }
}

fn push(files: &mut [SourceFile], line: &str) {
    if let Some(f) = files.last_mut() {
        f.text.push_str(line);
    }
}

/// An accepted `[overlay]` shows any client string within its caps.
fn overlay_caps(overlay: &pcp_overlay::Config) {
    let sample = "a\u{202e}b\u{200b}c\u{a0}\n\n\n\n".repeat(64);
    let blank = &overlay.text.blank_lines;
    for (text, cap, lines) in [
        (overlay.visible_text(&sample), overlay.max_text_chars, true),
        (overlay.visible_name(&sample), overlay.max_name_chars, false),
    ] {
        let shown = if lines {
            pcp_overlay::visible::shown_lines(&sample, cap as usize, blank)
        } else {
            pcp_overlay::visible::shown(&sample, cap as usize)
        };
        assert!(shown.text.chars().count() <= cap as usize);
        assert!(
            text.starts_with(&shown.text),
            "{text:?} does not start with what fits"
        );
    }
}

pub fn check(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let sources = sources(&text);
    let digest = sources.digest();
    assert_eq!(digest, sources.clone().digest(), "the digest is stable");
    match Config::<ReferenceSections>::from_sources(sources.clone()) {
        Err(e) => {
            let message = e.to_string();
            assert!(
                message.contains("/fuzz/"),
                "the error names no file it was given: {message}"
            );
        }
        Ok(loaded) => {
            overlay_caps(&loaded.plugin.overlay);
            let config = loaded.gate;
            let names: String = std::iter::once(&sources.config.text)
                .chain(
                    sources
                        .folders
                        .iter()
                        .flat_map(|f| f.files.iter().map(|f| &f.text)),
                )
                .cloned()
                .collect();
            for cap in config.registry.iter() {
                assert!(
                    names.contains(cap.name.as_str()),
                    "capability {:?} was never declared",
                    cap.name
                );
                let _ = cap.risk();
                for params in [
                    json!({}),
                    json!({"path": "/x", "a": [1, {"b": null}]}),
                    json!(null),
                ] {
                    let _ = cap.description.render(&params);
                    if let Some(t) = &cap.target {
                        let _ = t.render(&params);
                    }
                    let _ = cap.salient_params(&params);
                }
            }
            assert_eq!(config.sources.digest(), digest);
        }
    }
}
