//! `pcp-guest`: the scripted desktop session inside the VM of `cargo xtask session-test`. It
//! starts udev, makes the scripted user's devices with uinput (a touch screen, a mouse, a
//! force-feedback device), installs the package with `dpkg -i`, starts the session from its `.desktop` entry as an
//! ordinary user through seatd (`pcp-session`, which runs `pcp-compositor --backend udev`), and real apps, and plays the
//! steps through `pcpctl submit`: each prompt answered the way a person would (a touch on
//! Approve, a spoken answer played into the ALSA loopback, a double tap), with the host taking
//! a screendump of every head at every step, unplugging the second GPU and pressing keys on the
//! virtio keyboard. It writes `summary.txt`, the logs and the audit database to the output
//! folder and gives the host its verdict.

mod audio;
mod devices;
mod host;
mod install;
mod kernel_state;
mod polkit;
mod procs;
mod script;
mod session;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};

/// Paths the host passes on the command line.
pub struct Args {
    /// The output folder, shared writable with the host.
    pub out: PathBuf,
    pub config: PathBuf,
    /// The Debian package the session runs from, installed with `dpkg -i`.
    pub deb: PathBuf,
    /// The spoken answer ("yes", or "네" in a Korean run), a 16-bit WAV.
    pub answer: PathBuf,
    /// A voice model the package does not ship (Korean), installed where the compositor looks
    /// for system Vosk models; without it the session listens with the package's own English
    /// model.
    pub model: Option<PathBuf>,
}

fn parse() -> Result<Args> {
    let mut values = std::collections::HashMap::new();
    let mut it = std::env::args().skip(1);
    while let Some(key) = it.next() {
        let value = it.next().with_context(|| format!("{key} needs a value"))?;
        values.insert(key, PathBuf::from(value));
    }
    let take = |values: &mut std::collections::HashMap<String, PathBuf>, key: &str| {
        values.remove(key).with_context(|| format!("missing {key}"))
    };
    let args = Args {
        out: take(&mut values, "--out")?,
        config: take(&mut values, "--config")?,
        deb: take(&mut values, "--deb")?,
        answer: take(&mut values, "--answer")?,
        model: values.remove("--model"),
    };
    if let Some(key) = values.keys().next() {
        bail!("unknown argument {key}");
    }
    Ok(args)
}

fn main() -> ExitCode {
    let mut host = match host::Host::open() {
        Ok(h) => h,
        Err(e) => {
            eprintln!("pcp-guest: {e:#}");
            return ExitCode::FAILURE;
        }
    };
    let verdict = match parse().and_then(|args| script::play(&args, &mut host)) {
        Ok(failed) if failed.is_empty() => "ok".to_string(),
        Ok(failed) => format!(
            "{} step(s) went otherwise: {}",
            failed.len(),
            failed.join("; ")
        ),
        Err(e) => format!("the session could not run: {e:#}"),
    };
    host.log(&format!("verdict: {verdict}"));
    host.done(&verdict);
    if verdict == "ok" {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
