//! `pcpctl audit`: the audit log as text or JSON lines (optionally only the recent part, or
//! only one MCP server's tool calls), and
//! `pcpctl audit verify`, which walks the hash chain and names the first bad record.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::Subcommand;
use pcp_gate::McpCall;
use pcp_gate::store::{GroupCommit, Store};

use crate::common::{now_ms, state_path};

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    action: Option<Action>,
    #[arg(long)]
    json: bool,
    /// Only records since this time: Unix milliseconds, or an age like 30m, 12h, 7d.
    #[arg(long)]
    since: Option<String>,
    /// Only MCP tool calls to this server (its name in `pcpctl mcp --name`, or in a hook's
    /// `mcp__NAME__tool`).
    #[arg(long)]
    server: Option<String>,
    #[arg(long, global = true)]
    state: Option<PathBuf>,
    #[arg(long, global = true)]
    config: Option<PathBuf>,
}

#[derive(Subcommand)]
enum Action {
    /// Exit 1 when the chain is broken, naming the first bad record.
    Verify,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let path = state_path(args.state, args.config.as_deref())?;
    if !path.exists() {
        bail!("no state store at {}", path.display());
    }
    let store = Store::open(
        &path,
        GroupCommit {
            max_records: 1,
            max_age_ms: 0,
        },
    )?;
    if let Some(Action::Verify) = args.action {
        return Ok(match store.verify_audit()? {
            Ok(n) => {
                pcp_cli::outln!("{}: {n} records, chain intact", path.display());
                ExitCode::SUCCESS
            }
            Err(b) => {
                pcp_cli::outln!("{}: record {} is bad: {}", path.display(), b.seq, b.reason);
                ExitCode::from(1)
            }
        });
    }
    let since_ms = args
        .since
        .as_deref()
        .map(parse_since)
        .transpose()?
        .unwrap_or(0);
    let mut out = std::io::stdout().lock();
    let records = store.audit_since(since_ms)?;
    let wanted = |r: &pcp_gate::AuditRecord| {
        args.server
            .as_deref()
            .is_none_or(|name| McpCall::is_server(r, name))
    };
    for r in records.into_iter().filter(wanted) {
        if args.json {
            writeln!(out, "{}", serde_json::to_string(&r)?)?;
        } else {
            let plan: Vec<&str> = r.plan.iter().map(|m| m.as_str()).collect();
            let mcp = r
                .mcp
                .as_ref()
                .and_then(|m| m.definition.as_deref())
                .map(|d| format!(" definition={}", &d[..d.len().min(12)]))
                .unwrap_or_default();
            writeln!(
                out,
                "{:>6}  {}  {:<10} {:<22} {:<8} {:<24} plan=[{}] {}{mcp}",
                r.seq,
                format_time(r.time_ms),
                r.profile,
                r.capability,
                r.outcome,
                r.resolution.as_str(),
                plan.join(","),
                r.client.display_name(),
            )?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `--since`: Unix milliseconds, or an age with a unit (s, m, h, d).
fn parse_since(text: &str) -> Result<i64> {
    if let Ok(ms) = text.parse::<i64>() {
        return Ok(ms);
    }
    let (num, unit) = text.split_at(text.len().saturating_sub(1));
    let n: i64 = num.parse().with_context(|| {
        format!("--since `{text}`: expected Unix milliseconds or an age like 30m, 12h, 7d")
    })?;
    let ms = match unit {
        "s" => 1000,
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        _ => bail!("--since `{text}`: the unit must be s, m, h or d"),
    };
    Ok(now_ms() - n * ms)
}

/// UTC `YYYY-MM-DDTHH:MM:SSZ` from Unix milliseconds (civil-from-days).
fn format_time(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_format_as_utc() {
        assert_eq!(format_time(0), "1970-01-01T00:00:00Z");
        assert_eq!(format_time(1_795_999_999_000), "2026-11-30T00:53:19Z");
        assert_eq!(format_time(951_782_400_000), "2000-02-29T00:00:00Z");
    }

    #[test]
    fn since_accepts_milliseconds_and_ages_and_names_bad_input() {
        assert_eq!(parse_since("12345").unwrap(), 12345);
        assert!(parse_since("2h").unwrap() < now_ms());
        let err = parse_since("2w").unwrap_err().to_string();
        assert!(err.contains("s, m, h or d"), "{err}");
        assert!(parse_since("soon").is_err());
    }
}
