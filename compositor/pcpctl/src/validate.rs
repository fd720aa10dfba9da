//! `pcpctl validate`: check a config file — every section (the gate's, the plugin's, the
//! reference compositor's) and every capability manifest it reaches — with the same function
//! `pcp-compositor validate` and the compositor's loader call, so the three accept and refuse
//! the same files with the same messages.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use pcp_config::reference::ReferenceSections;

#[derive(clap::Args)]
pub struct Args {
    /// The config file (default: $XDG_CONFIG_HOME/pcp/config.toml, else the built-in defaults).
    #[arg(long)]
    config: Option<PathBuf>,
}

/// Exit 0 with the number of capabilities, 1 with the error naming file:line:column.
pub fn run(args: Args) -> Result<ExitCode> {
    match pcp_config::validate::<ReferenceSections>(args.config.as_deref()) {
        Ok(ok) => {
            pcp_cli::outln!("{ok}");
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("{e}");
            Ok(ExitCode::from(1))
        }
    }
}
