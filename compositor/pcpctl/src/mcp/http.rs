//! `pcpctl mcp --url URL`: the streamable-HTTP gateway (not yet written).

use std::process::ExitCode;

use anyhow::{Result, bail};

use super::Settings;

pub fn run(_settings: Settings, _url: &str, _listen: &str) -> Result<ExitCode> {
    bail!("--url is not available yet")
}
