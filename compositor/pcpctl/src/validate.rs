//! `pcpctl validate`: check a config file and every capability manifest it reaches (the gate's
//! part; `pcp-compositor validate` checks the compositor's sections too).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use pcp_gate::GateConfig;
use pcp_gate::config::default_config_path;

#[derive(clap::Args)]
pub struct Args {
    #[arg(long)]
    config: Option<PathBuf>,
}

/// Exit 0 with the number of capabilities, 1 with the error naming file:line:column.
pub fn run(args: Args) -> Result<ExitCode> {
    let path = args.config.unwrap_or_else(default_config_path);
    match GateConfig::load(&path) {
        Ok(c) => {
            println!("{}: ok ({} capabilities)", path.display(), c.registry.len());
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("{e}");
            Ok(ExitCode::from(1))
        }
    }
}
