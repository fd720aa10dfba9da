//! `pcpctl replay`: a JSON Lines trace through the real gate on a virtual clock, one JSON line
//! (or table row) per intent; a fresh state store unless `--state` names one.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use pcp_gate::Gate;
use pcp_gate::replay::{ReplayResult, parse_trace, replay};

#[derive(clap::Args)]
pub struct Args {
    trace: PathBuf,
    #[arg(long)]
    config: PathBuf,
    /// Use (and update) this state store instead of a fresh one.
    #[arg(long)]
    state: Option<PathBuf>,
    /// Print a table instead of JSON lines.
    #[arg(long)]
    table: bool,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let text = std::fs::read_to_string(&args.trace)
        .with_context(|| format!("cannot read {}", args.trace.display()))?;
    let lines = parse_trace(&text).map_err(|e| anyhow::anyhow!("{}: {e}", args.trace.display()))?;
    let mut config = crate::common::load_config(Some(&args.config))?;
    // A fresh state per replay unless one is given; removed when the replay ends.
    let fresh = tempfile::tempdir().context("cannot create a temporary state folder")?;
    let state = args
        .state
        .unwrap_or_else(|| fresh.path().join("state.sqlite3"));
    config.file.state.path = Some(state);
    let mut gate = Gate::open(config)?;
    let results = replay(&mut gate, &lines);
    let mut out = std::io::stdout().lock();
    if args.table {
        print_table(&mut out, &results)?;
    } else {
        for r in &results {
            writeln!(out, "{}", serde_json::to_string(r)?)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn print_table(out: &mut impl Write, results: &[ReplayResult]) -> Result<()> {
    writeln!(
        out,
        "{:<18} {:<13} {:<15} {:<9} {:<24} {:>9}",
        "intent", "threshold", "plan", "outcome", "resolution", "at"
    )?;
    for r in results {
        let plan: Vec<&str> = r.plan.iter().map(|m| m.as_str()).collect();
        let plan = if plan.is_empty() {
            "-".to_string()
        } else {
            plan.join("+")
        };
        writeln!(
            out,
            "{:<18} {:<13} {:<15} {:<9} {:<24} {:>8.1}s",
            r.capability,
            r.threshold.as_str(),
            plan,
            r.outcome,
            r.resolution,
            r.decided_at_ms as f64 / 1000.0
        )?;
    }
    Ok(())
}
