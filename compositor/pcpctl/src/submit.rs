//! `pcpctl submit`: one intent to the running compositor (`$WAYLAND_DISPLAY`) through
//! pcp-protocol's client, inline or through a sealed memfd when large; waits for the decision
//! and prints it as JSON. Exit 0 when approved, 1 when denied.

use std::process::ExitCode;

use anyhow::{Context, Result};
use pcp_protocol::{IntentClient, Submission};

use crate::common::parse_params;

#[derive(clap::Args)]
pub struct Args {
    capability: String,
    /// The intent's parameters, a JSON object (large ones travel through a sealed memfd).
    #[arg(long, default_value = "{}")]
    params: String,
    /// What the action acts on, shown when the capability's manifest has no target.
    #[arg(long)]
    target: Option<String>,
    /// A multi-step intent: a JSON array of {"capability": …, "params": {…}}.
    #[arg(long)]
    steps: Option<String>,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let steps = match &args.steps {
        Some(text) => serde_json::from_str(text)
            .with_context(|| format!("--steps must be a JSON array of steps: {text}"))?,
        None => Vec::new(),
    };
    let submission = Submission {
        capability: args.capability,
        params: parse_params(&args.params)?,
        target: args.target,
        steps,
    };
    let mut client = IntentClient::connect()?;
    let handle = client.submit(&submission)?;
    let decision = client.wait(&handle)?;
    pcp_cli::outln!("{}", serde_json::to_string(&decision)?);
    Ok(if decision.approved {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
