//! `pcpctl explain`: what the gate would do with an intent now and why, as JSON; the store is
//! opened read-only and nothing is recorded.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, bail};
use pcp_gate::{Availability, ClientIdentity, Gate, Intent};

use crate::common::{load_config, now_ms, parse_params};

#[derive(clap::Args)]
pub struct Args {
    capability: String,
    /// The intent's parameters, a JSON object.
    #[arg(long, default_value = "{}")]
    params: String,
    #[arg(long)]
    config: Option<PathBuf>,
    #[arg(long)]
    state: Option<PathBuf>,
    #[arg(long)]
    profile: Option<String>,
    /// What can answer now: a comma-separated list of visual, voice, haptic.
    #[arg(long, default_value = "visual,voice")]
    available: String,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let config = load_config(args.config.as_deref())?;
    let state = args.state.unwrap_or_else(|| config.state_path());
    let mut gate = Gate::inspect(config, &state)?;
    if let Some(p) = args.profile {
        gate.set_profile(&p);
    }
    gate.set_available(parse_available(&args.available)?);
    let intent = Intent::new(
        &args.capability,
        parse_params(&args.params)?,
        ClientIdentity::named("pcpctl"),
    );
    pcp_cli::outln!(
        "{}",
        serde_json::to_string_pretty(&gate.explain(&intent, now_ms()))?
    );
    Ok(ExitCode::SUCCESS)
}

/// `--available visual,voice,haptic`: visual means an output and an input device.
fn parse_available(list: &str) -> Result<Availability> {
    let mut a = Availability {
        output: false,
        input: false,
        voice: false,
        haptic: false,
    };
    for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match item {
            "visual" => {
                a.output = true;
                a.input = true;
            }
            "voice" => a.voice = true,
            "haptic" => a.haptic = true,
            other => bail!("--available: `{other}` is not one of visual, voice, haptic"),
        }
    }
    Ok(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn available_names_an_unknown_modality() {
        let err = parse_available("visual,smell").unwrap_err().to_string();
        assert!(err.contains("smell"));
        let a = parse_available("voice, haptic").unwrap();
        assert!(a.voice && a.haptic && !a.visual());
    }
}
