//! `cargo xtask package`: the Debian package `pcp-confirm`, built with `dpkg-deb` from a staged
//! tree. The binaries come from cargo's own build and are staged, stripped and given the rpath
//! of the package's private library folder (`$ORIGIN/../lib/pcp-confirm`, where libvosk,
//! libmoonshine and libmoonshine's ONNX Runtime go) with patchelf, so one build serves both the
//! tests (whose rpath finds the libraries' copies in the profile folder, `pcp-lib/`: see
//! speech/stage.rs) and the package. The English voice model (Moonshine tiny-en) goes to
//! `/usr/share/pcp/models/moonshine-tiny-en/`, where the compositor finds it: an English session
//! has voice with no download. Dependencies come from `dpkg-shlibdeps` over every ELF file in the
//! package, the private libraries included. `--check` then runs lintian (any error fails) and
//! checks `dpkg -c` for the paths
//! the package must hold.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::{cargo, root, setup};

/// The package's name, and the folder of its private libraries under `/usr/lib`.
const PACKAGE: &str = "pcp-confirm";

/// Who the package names as its maintainer; `PCP_DEB_MAINTAINER` overrides it.
const MAINTAINER: &str = "pcp-confirm maintainers <maintainers@pcp-confirm.invalid>";

/// Where the binaries find libvosk once installed: relative to `/usr/bin`, so a package
/// unpacked elsewhere (`dpkg --root`) works too.
const RPATH: &str = "$ORIGIN/../lib/pcp-confirm";

/// The binaries the package installs, and whether each links libvosk (and so needs the rpath).
/// `pcp-harness` is left out on purpose: it is built with the test-only seat injection and
/// scripted-user features, which no installed binary may carry; agent developers build it
/// from the source tree (docs/agents.md).
const BINARIES: [(&str, bool); 2] = [("pcp-compositor", true), ("pcpctl", false)];

/// The private libraries the package installs beside libvosk: libmoonshine and the ONNX Runtime
/// it names (found through its own `$ORIGIN` rpath), from the pinned moonshine-voice wheel.
const MOONSHINE_LIBS: [&str; 2] = ["libmoonshine.so", "libonnxruntime-13ab8084.so.1"];

/// Where the English model is installed (the speech crate's `models::SYSTEM_MOONSHINE_MODELS`).
const MOONSHINE_MODEL: &str = "usr/share/pcp/models/moonshine-tiny-en";

/// Paths `dpkg -c` must list for the package to be whole.
const EXPECTED: [&str; 23] = [
    "./usr/bin/pcp-compositor",
    "./usr/bin/pcpctl",
    "./usr/bin/pcp-session",
    "./usr/lib/pcp-confirm/libvosk.so",
    "./usr/lib/pcp-confirm/libmoonshine.so",
    "./usr/lib/pcp-confirm/libonnxruntime-13ab8084.so.1",
    "./usr/share/pcp/models/moonshine-tiny-en/encoder_model.ort",
    "./usr/share/pcp/models/moonshine-tiny-en/decoder_model_merged.ort",
    "./usr/share/pcp/models/moonshine-tiny-en/tokenizer.bin",
    "./usr/share/wayland-sessions/pcp-compositor.desktop",
    "./usr/share/pcp/capabilities.d/10-compositor.toml",
    "./usr/share/pcp/capabilities.d/50-desktop.toml",
    "./usr/share/pcp/config/gate.toml",
    "./usr/share/pcp/config/speech.toml",
    "./etc/pcp/capabilities.d/",
    "./usr/share/man/man1/pcp-compositor.1.gz",
    "./usr/share/man/man1/pcpctl.1.gz",
    "./usr/share/man/man5/pcp-confirm.5.gz",
    "./usr/share/man/man1/pcp-session.1.gz",
    "./usr/share/bash-completion/completions/pcpctl",
    "./usr/share/bash-completion/completions/pcp-compositor",
    "./usr/share/doc/pcp-confirm/copyright",
    "./usr/share/doc/pcp-confirm/changelog.gz",
];

/// What `cargo xtask package` was asked for.
#[derive(Debug, PartialEq, Eq)]
pub struct Options {
    /// The cargo profile the binaries are built with: `release` for a package to install,
    /// `dev` for CI's check of the packaging, which then reuses the test build.
    pub profile: String,
    /// Run lintian and check `dpkg -c` after building.
    pub check: bool,
}

/// Reads `[--profile release|dev] [--check]`.
pub fn parse(args: &[String]) -> Result<Options> {
    let mut options = Options {
        profile: "release".into(),
        check: false,
    };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--profile" => {
                options.profile = args
                    .next()
                    .context("--profile needs a cargo profile, e.g. release or dev")?
                    .clone();
            }
            "--check" => options.check = true,
            other => bail!("package: unknown argument `{other}` (expected --profile P, --check)"),
        }
    }
    Ok(options)
}

/// Builds the package and returns its path (in `target/package/`).
pub fn run(options: &Options) -> Result<PathBuf> {
    let cache = setup::setup()?;
    let started = std::time::Instant::now();
    cargo(
        &[
            "build",
            "--profile",
            &options.profile,
            "--package",
            "pcp-compositor",
            "--package",
            "pcpctl",
            "--features",
            "pcp-compositor/udev,pcp-compositor/winit",
            "--bins",
        ],
        &cache,
    )?;
    eprintln!(
        "xtask: the {} build took {:.0} s",
        options.profile,
        started.elapsed().as_secs_f64()
    );
    let target = crate::target_dir();
    let built = target.join(match options.profile.as_str() {
        "dev" | "test" => "debug",
        "bench" => "release",
        other => other,
    });
    let out = target.join("package");
    let stage = out.join("root");
    if stage.exists() {
        std::fs::remove_dir_all(&stage)
            .with_context(|| format!("cannot empty {}", stage.display()))?;
    }
    stage_tree(&stage, &built, &cache)?;
    let version = workspace_version()?;
    write_control(&stage, &version)?;
    let deb = out.join(format!("{PACKAGE}_{version}_{}.deb", architecture()?));
    // xz for a package to install; a dev-profile package (CI's check) carries unstripped debug
    // binaries, which xz takes minutes to pack on two cores, so it is packed fast instead.
    let compression: &[&str] = if options.profile == "release" {
        &["-Zxz"]
    } else {
        &["-Zgzip", "-z1"]
    };
    run_tool(
        Command::new("dpkg-deb")
            .arg("--root-owner-group")
            .args(compression)
            .arg("--build")
            .arg(&stage)
            .arg(&deb),
    )?;
    eprintln!("xtask: built {}", deb.display());
    if options.check {
        check(&deb)?;
    }
    Ok(deb)
}

/// Lays out everything the package installs under `stage`, the recognizers' libraries and the
/// English model from the setup `cache`.
fn stage_tree(stage: &Path, built: &Path, cache: &Path) -> Result<()> {
    let repo = root();
    let bin = stage.join("usr/bin");
    let private = stage.join("usr/lib").join(PACKAGE);
    let share = stage.join("usr/share");
    let doc = share.join("doc").join(PACKAGE);
    for dir in [
        &bin,
        &private,
        &doc,
        &share.join("man/man1"),
        &share.join("man/man5"),
        &share.join("bash-completion/completions"),
        &share.join("wayland-sessions"),
        &share.join("pcp/config"),
        &share.join("pcp/capabilities.d"),
        &stage.join("etc/pcp/capabilities.d"),
    ] {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }

    // The private libraries first: the staged compositor runs below (to write its man pages),
    // through the rpath it is given.
    let libvosk = private.join("libvosk.so");
    install(
        &cache.join(setup::LIBVOSK_DIR).join("libvosk.so"),
        &libvosk,
        0o644,
    )?;
    run_tool(&mut strip(&libvosk))?;
    stage_moonshine(stage, cache)?;
    for (name, links_vosk) in BINARIES {
        let staged = bin.join(name);
        install(&built.join(name), &staged, 0o755)?;
        run_tool(&mut strip(&staged))?;
        if links_vosk {
            run_tool(
                Command::new("patchelf")
                    .args(["--set-rpath", RPATH])
                    .arg(&staged),
            )?;
        } else {
            run_tool(Command::new("patchelf").arg("--remove-rpath").arg(&staged))?;
        }
        // One page for the program and one for each subcommand (`pcpctl-submit.1`), which the
        // program's page names.
        let pages = stage.with_file_name("man").join(name);
        if pages.exists() {
            std::fs::remove_dir_all(&pages)
                .with_context(|| format!("cannot empty {}", pages.display()))?;
        }
        std::fs::create_dir_all(&pages)
            .with_context(|| format!("cannot create {}", pages.display()))?;
        run_tool(
            Command::new(&staged)
                .args(["--generate", "man"])
                .arg(&pages),
        )?;
        for page in
            std::fs::read_dir(&pages).with_context(|| format!("cannot read {}", pages.display()))?
        {
            let page = page
                .with_context(|| format!("cannot read {}", pages.display()))?
                .path();
            let file = page
                .file_name()
                .context("a page has a name")?
                .to_string_lossy();
            let roff =
                std::fs::read(&page).with_context(|| format!("cannot read {}", page.display()))?;
            write_gzip(&share.join("man/man1").join(format!("{file}.gz")), &roff)?;
        }
        let completion = output_of(Command::new(&staged).args(["--generate", "bash-completion"]))?;
        write_file(
            &share.join("bash-completion/completions").join(name),
            completion.as_bytes(),
            0o644,
        )?;
    }
    install(
        &repo.join("assets/session/pcp-session"),
        &bin.join("pcp-session"),
        0o755,
    )?;
    install(
        &repo.join("assets/wayland-sessions/pcp-compositor.desktop"),
        &share.join("wayland-sessions/pcp-compositor.desktop"),
        0o644,
    )?;
    for (from, to) in [
        ("assets/config", "pcp/config"),
        ("assets/capabilities.d", "pcp/capabilities.d"),
    ] {
        for file in toml_files(&repo.join(from))? {
            let name = file.file_name().context("a file has a name")?;
            install(&file, &share.join(to).join(name), 0o644)?;
        }
    }
    for (page, section) in [("pcp-confirm.5", "man5"), ("pcp-session.1", "man1")] {
        let roff = std::fs::read(repo.join("assets/package").join(page))
            .with_context(|| format!("cannot read assets/package/{page}"))?;
        write_gzip(
            &share.join("man").join(section).join(format!("{page}.gz")),
            &roff,
        )?;
    }
    write_file(&doc.join("copyright"), copyright()?.as_bytes(), 0o644)?;
    write_gzip(&doc.join("changelog.gz"), changelog()?.as_bytes())?;
    Ok(())
}

/// libmoonshine and its ONNX Runtime into the private folder (as the wheel has them: their own
/// rpath, `$ORIGIN`, finds each other there), and the English model.
fn stage_moonshine(stage: &Path, cache: &Path) -> Result<()> {
    let private = stage.join("usr/lib").join(PACKAGE);
    for lib in MOONSHINE_LIBS {
        let to = private.join(lib);
        install(&cache.join(setup::MOONSHINE_LIB_DIR).join(lib), &to, 0o644)?;
        run_tool(&mut strip(&to))?;
    }
    let model = stage.join(MOONSHINE_MODEL);
    std::fs::create_dir_all(&model)
        .with_context(|| format!("cannot create {}", model.display()))?;
    for file in setup::MOONSHINE_MODEL_FILE_NAMES {
        install(
            &cache.join(setup::MOONSHINE_MODEL_DIR).join(file),
            &model.join(file),
            0o644,
        )?;
    }
    Ok(())
}

/// `strip` of the symbols a program does not need, and of the compiler's `.comment` notes.
fn strip(file: &Path) -> Command {
    let mut command = Command::new("strip");
    command
        .args(["--strip-unneeded", "--remove-section=.comment"])
        .arg(file);
    command
}

/// `DEBIAN/control` and `DEBIAN/md5sums`.
fn write_control(stage: &Path, version: &str) -> Result<()> {
    let depends = depends(stage)?;
    let installed_kib = installed_size(stage)?;
    let maintainer = std::env::var("PCP_DEB_MAINTAINER").unwrap_or_else(|_| MAINTAINER.into());
    // fonts-nanum draws the Korean phrase pack's words (the English pack's are in the bundled
    // DejaVu Sans): without a font that has them the dialog turns voice off for that pack.
    let control = format!(
        "Package: {PACKAGE}
Version: {version}
Architecture: {arch}
Maintainer: {maintainer}
Installed-Size: {installed_kib}
Depends: {depends}, libegl1
Recommends: dbus-bin, bubblewrap, adwaita-icon-theme, libgl1-mesa-dri, fonts-nanum
Section: x11
Priority: optional
Description: Wayland compositor that gates actions behind user confirmation
 pcp-confirm intercepts intents - actions that apps and AI agents ask the
 desktop to perform - and gates the sensitive ones behind graded confirmation:
 routine actions pass, privileged ones get an approve/deny dialog, destructive
 and system ones need a spoken yes and the dialog, and quick low-risk ones can
 take a haptic double tap. Every decision lands in a hash-chained audit log.
 .
 This package holds the reference compositor (pcp-compositor), its login
 session (pcp-session and a wayland-sessions entry), the client pcpctl, the
 default configuration and capability manifests, and the speech recognizers:
 Moonshine with its English model (voice works in an English session as
 installed) and the Vosk library for models added later, such as Korean (see
 pcp-confirm(5)).
",
        arch = architecture()?,
    );
    let debian = stage.join("DEBIAN");
    std::fs::create_dir_all(&debian)
        .with_context(|| format!("cannot create {}", debian.display()))?;
    write_file(&debian.join("control"), control.as_bytes(), 0o644)?;
    write_file(&debian.join("md5sums"), md5sums(stage)?.as_bytes(), 0o644)?;
    Ok(())
}

/// The `Depends` of every ELF file in the package, from `dpkg-shlibdeps`. (The GLES renderer
/// opens libEGL at run time, so no ELF file names it: the control file adds `libegl1`.) libvosk has no
/// shlibs information of its own (it is private to this package), so its absence is ignored
/// for the binaries that link it; libvosk's own libraries are found by reading it as well.
fn depends(stage: &Path) -> Result<String> {
    // dpkg-shlibdeps wants a debian/control in its working folder, even an empty one.
    let work = stage.with_file_name("shlibdeps");
    std::fs::create_dir_all(work.join("debian"))
        .with_context(|| format!("cannot create {}/debian", work.display()))?;
    std::fs::write(work.join("debian/control"), "")
        .with_context(|| format!("cannot write {}/debian/control", work.display()))?;
    let private = stage.join("usr/lib").join(PACKAGE);
    let mut command = Command::new("dpkg-shlibdeps");
    command
        .current_dir(&work)
        .arg("-O")
        .arg("--ignore-missing-info")
        .arg(format!("-l{}", private.display()));
    for (name, _) in BINARIES {
        command.arg(stage.join("usr/bin").join(name));
    }
    command.arg(private.join("libvosk.so"));
    for lib in MOONSHINE_LIBS {
        command.arg(private.join(lib));
    }
    let out = output_of(&mut command)?;
    let line = out
        .lines()
        .find_map(|l| l.strip_prefix("shlibs:Depends="))
        .context("dpkg-shlibdeps printed no shlibs:Depends")?;
    Ok(line.trim().to_string())
}

/// The package's size in KiB, as `Installed-Size` counts it.
fn installed_size(stage: &Path) -> Result<u64> {
    let out = output_of(
        Command::new("du")
            .args(["-sk", "--apparent-size"])
            .arg(stage),
    )?;
    out.split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .context("du printed no size")
}

/// `md5sum` of every file, paths relative to the root.
fn md5sums(stage: &Path) -> Result<String> {
    let mut files = Vec::new();
    collect_files(stage, &mut files)?;
    let mut command = Command::new("md5sum");
    command.current_dir(stage);
    for file in &files {
        let relative = file.strip_prefix(stage).context("a staged file")?;
        if relative.starts_with("DEBIAN") {
            continue;
        }
        command.arg(relative);
    }
    output_of(&mut command)
}

fn collect_files(dir: &Path, files: &mut Vec<PathBuf>) -> Result<()> {
    for entry in std::fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))? {
        let path = entry
            .with_context(|| format!("cannot read {}", dir.display()))?
            .path();
        if path.is_dir() {
            collect_files(&path, files)?;
        } else {
            files.push(path);
        }
    }
    files.sort();
    Ok(())
}

/// `/usr/share/doc/pcp-confirm/copyright` (machine-readable format): the project, the DejaVu
/// fonts built into the binaries, libvosk, libmoonshine with its model and ONNX Runtime, RNNoise (`nnnoiseless`, whose BSD licence asks for its
/// notice in a binary's documentation), and every Rust crate compiled into them with its licence
/// as its manifest declares it.
fn copyright() -> Result<String> {
    let repo = root();
    let dejavu = std::fs::read_to_string(repo.join("assets/fonts/LICENSE-DejaVu.txt"))
        .context("cannot read assets/fonts/LICENSE-DejaVu.txt")?;
    // The DejaVu licence file is itself in the copyright format: its fonts' licence paragraph
    // (up to the stanza about Debian's packaging of them) is kept as it is.
    let dejavu_license = dejavu
        .split_once("License: bitstream-vera")
        .map(|(_, rest)| rest.split("\n\nFiles:").next().unwrap_or(rest).trim_end())
        .map(|text| format!("License: bitstream-vera{text}"))
        .context("assets/fonts/LICENSE-DejaVu.txt has no bitstream-vera licence")?;
    // RNNoise's notice as nnnoiseless ships it, as a BSD-3-Clause licence paragraph.
    let rnnoise = std::fs::read_to_string(repo.join("assets/package/LICENSE-nnnoiseless.txt"))
        .context("cannot read assets/package/LICENSE-nnnoiseless.txt")?;
    let (holders, terms) = rnnoise.split_once("\n\n").unwrap_or_default();
    let debian = |text: &str| {
        let lines = text.trim().lines();
        lines
            .map(|l| {
                if l.is_empty() {
                    " .".into()
                } else {
                    format!(" {l}")
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    let rnnoise_holders = debian(holders).trim_start().to_string();
    let rnnoise_license = format!("License: BSD-3-Clause\n{}", debian(terms));
    let crates = crate_licences()?;
    let mut text = format!(
        "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: pcp-confirm
Comment: The binaries are built from the pcp-confirm source tree by `cargo xtask package`.
 Rust crates compiled into pcp-compositor and pcpctl, with the licence each declares:
{crate_lines}

Files: *
Copyright: the pcp-confirm authors
License: MIT or Apache-2.0

Files: usr/lib/pcp-confirm/libvosk.so
Copyright: Alpha Cephei Inc.; the Kaldi, OpenFst and OpenBLAS authors
Comment: libvosk 0.3.45 from the PyPI wheel vosk==0.3.45, unchanged but stripped.
License: Apache-2.0

Files: usr/lib/pcp-confirm/libmoonshine.so usr/share/pcp/models/moonshine-tiny-en/*
Copyright: 2025 Moonshine AI
Comment: libmoonshine and the Moonshine tiny-en model (encoder, decoder, tokenizer) from the
 PyPI wheel moonshine-voice==0.1.0, unchanged but the library stripped; the wheel's licence file
 is MIT for its code and its English model. The library also embeds the Silero voice activity
 detector (MIT, Silero Team), which listening uses, and, for features pcp-confirm does not call,
 data of the pyannote speaker-diarization-community-1 model (CC-BY-4.0, pyannote), text-to-speech
 tables and the nlohmann/json library (MIT, Niels Lohmann).
License: MIT

Files: usr/lib/pcp-confirm/libonnxruntime-13ab8084.so.1
Copyright: Microsoft Corporation
Comment: ONNX Runtime 1.23.2 as the moonshine-voice==0.1.0 wheel ships it (libmoonshine's own
 build), unchanged but stripped. It is built with third-party code under its own licences, as
 ONNX Runtime's ThirdPartyNotices lists them, among them: ONNX (Apache-2.0), Protocol Buffers
 (BSD-3-Clause, Google), Abseil (Apache-2.0), FlatBuffers (Apache-2.0), RE2 (BSD-3-Clause), Eigen
 (MPL-2.0), Microsoft GSL (MIT), SafeInt (MIT), nlohmann/json (MIT), Boost.Mp11 (BSL-1.0),
 cpuinfo (BSD-2-Clause) and code from PyTorch (BSD-3-Clause).
License: MIT

Files: usr/bin/pcp-compositor
Copyright: the pcp-confirm authors
 Copyright (c) 2003 by Bitstream, Inc. All Rights Reserved (DejaVu Sans).
 Bitstream Vera is a trademark of Bitstream, Inc.
 DejaVu changes are in public domain.
 {rnnoise_holders}
Comment: DejaVu Sans and DejaVu Sans Bold are built into this binary (the dialog's text), and
 RNNoise's noise suppressor and model through the nnnoiseless crate ([speech] denoise).
License: (MIT or Apache-2.0) and bitstream-vera and BSD-3-Clause

{dejavu_license}

{rnnoise_license}

License: Apache-2.0
 On Debian systems, the complete text of the Apache License, Version 2.0 can be
 found in /usr/share/common-licenses/Apache-2.0.

License: MIT
 Permission is hereby granted, free of charge, to any person obtaining a copy of
 this software and associated documentation files (the \"Software\"), to deal in
 the Software without restriction, including without limitation the rights to
 use, copy, modify, merge, publish, distribute, sublicense, and/or sell copies of
 the Software, and to permit persons to whom the Software is furnished to do so,
 subject to the following conditions:
 .
 The above copyright notice and this permission notice shall be included in all
 copies or substantial portions of the Software.
 .
 THE SOFTWARE IS PROVIDED \"AS IS\", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
 IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS
 FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR
 COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER
 IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM, OUT OF OR IN
 CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.
",
        crate_lines = crates
            .iter()
            .map(|c| format!("  {c}"))
            .collect::<Vec<_>>()
            .join("\n"),
    );
    text.push('\n');
    Ok(text)
}

/// `name version: licence` of every crate the packaged binaries link, from `cargo tree`.
fn crate_licences() -> Result<Vec<String>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = output_of(Command::new(cargo).current_dir(root()).args([
        "tree",
        "--package",
        "pcp-compositor",
        "--package",
        "pcpctl",
        "--features",
        "pcp-compositor/udev,pcp-compositor/winit",
        "--edges",
        "normal",
        "--prefix",
        "none",
        "--format",
        "{p}|{l}",
    ]))?;
    let mut crates = BTreeSet::new();
    for line in out.lines() {
        let Some((package, licence)) = line.split_once('|') else {
            continue;
        };
        // `name v1.2.3 (path)` for the workspace's own crates, `name v1.2.3` otherwise; `(*)`
        // marks a repeat.
        let mut words = package.split_whitespace();
        let (Some(name), Some(version)) = (words.next(), words.next()) else {
            continue;
        };
        let licence = licence.trim();
        let licence = if licence.is_empty() {
            "(none declared)"
        } else {
            licence
        };
        crates.insert(format!("{name} {version}: {licence}"));
    }
    Ok(crates.into_iter().collect())
}

/// A changelog in Debian's format, dated by the commit the package is built from.
fn changelog() -> Result<String> {
    let version = workspace_version()?;
    let seconds =
        output_of(
            Command::new("git")
                .current_dir(root())
                .args(["log", "-1", "--format=%ct"]),
        )?;
    let date =
        output_of(Command::new("date").args(["-u", "-R", "-d", &format!("@{}", seconds.trim())]))?;
    let maintainer = std::env::var("PCP_DEB_MAINTAINER").unwrap_or_else(|_| MAINTAINER.into());
    Ok(format!(
        "{PACKAGE} ({version}) unstable; urgency=medium

  * Built from the pcp-confirm source tree by cargo xtask package.

 -- {maintainer}  {}
",
        date.trim()
    ))
}

/// The workspace's version (`[workspace.package] version`).
fn workspace_version() -> Result<String> {
    let manifest = std::fs::read_to_string(root().join("Cargo.toml"))
        .context("cannot read the workspace's Cargo.toml")?;
    let mut in_package = false;
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_package = line == "[workspace.package]";
        } else if in_package && let Some(value) = line.strip_prefix("version") {
            let value = value.trim_start().trim_start_matches('=').trim();
            return Ok(value.trim_matches('"').to_string());
        }
    }
    bail!("Cargo.toml has no [workspace.package] version")
}

fn architecture() -> Result<String> {
    Ok(output_of(Command::new("dpkg").arg("--print-architecture"))?
        .trim()
        .to_string())
}

/// lintian (errors fail; the rest is shown) and the paths `dpkg -c` must list.
pub fn check(deb: &Path) -> Result<()> {
    let lintian = Command::new("lintian")
        .args(["--fail-on", "error", "--tag-display-limit", "0"])
        .arg(deb)
        .output()
        .context("cannot run lintian (Debian package lintian; `cargo xtask setup` installs it)")?;
    let said = String::from_utf8_lossy(&lintian.stdout);
    eprint!("{said}");
    eprint!("{}", String::from_utf8_lossy(&lintian.stderr));
    if !lintian.status.success() {
        bail!("lintian found errors in {} (listed above)", deb.display());
    }
    let listing = output_of(Command::new("dpkg").arg("-c").arg(deb))?;
    let listed: BTreeSet<&str> = listing
        .lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .collect();
    let missing: Vec<&str> = EXPECTED
        .iter()
        .copied()
        .filter(|p| !listed.contains(p))
        .collect();
    if !missing.is_empty() {
        bail!(
            "{} lacks {} (dpkg -c lists {} paths)",
            deb.display(),
            missing.join(", "),
            listed.len()
        );
    }
    eprintln!(
        "xtask: lintian found no errors; dpkg -c lists all {} expected paths",
        EXPECTED.len()
    );
    Ok(())
}

fn toml_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    Ok(files)
}

fn install(from: &Path, to: &Path, mode: u32) -> Result<()> {
    let bytes = std::fs::read(from).with_context(|| format!("cannot read {}", from.display()))?;
    write_file(to, &bytes, mode)
}

fn write_file(to: &Path, bytes: &[u8], mode: u32) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(to, bytes).with_context(|| format!("cannot write {}", to.display()))?;
    std::fs::set_permissions(to, std::fs::Permissions::from_mode(mode))
        .with_context(|| format!("cannot set the mode of {}", to.display()))
}

/// Writes `gzip -9n` of the bytes (no name or time stored: the same input gives the same file).
fn write_gzip(to: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    let mut child = Command::new("gzip")
        .args(["-9n", "-c"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .context("cannot run gzip")?;
    child
        .stdin
        .take()
        .context("gzip's stdin")?
        .write_all(bytes)
        .context("cannot write to gzip")?;
    let out = child.wait_with_output().context("gzip did not finish")?;
    if !out.status.success() {
        bail!("gzip failed ({})", out.status);
    }
    write_file(to, &out.stdout, 0o644)
}

/// Runs a command to its end; fails naming it and its stderr.
fn run_tool(command: &mut Command) -> Result<()> {
    output_of(command).map(|_| ())
}

/// A command's stdout; fails naming the command and its stderr.
fn output_of(command: &mut Command) -> Result<String> {
    let shown = format!("{command:?}");
    let out = command
        .output()
        .with_context(|| format!("cannot run {shown}"))?;
    if !out.status.success() {
        bail!(
            "{shown} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    String::from_utf8(out.stdout).with_context(|| format!("{shown} printed something not UTF-8"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options() {
        assert_eq!(
            parse(&[]).expect("no arguments"),
            Options {
                profile: "release".into(),
                check: false
            }
        );
        assert_eq!(
            parse(&["--profile".into(), "dev".into(), "--check".into()]).expect("both"),
            Options {
                profile: "dev".into(),
                check: true
            }
        );
        assert!(parse(&["--profile".into()]).is_err());
        let e = parse(&["--fast".into()]).expect_err("unknown");
        assert!(e.to_string().contains("--fast"), "{e}");
    }

    #[test]
    fn the_version_is_the_workspace_one() {
        let version = workspace_version().expect("Cargo.toml has one");
        assert!(
            version.split('.').count() == 3
                && version.chars().all(|c| c.is_ascii_digit() || c == '.'),
            "{version}"
        );
    }
}
