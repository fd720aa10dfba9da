//! `pcpctl`: the client CLI. Without a running compositor it validates configs, explains and
//! replays policy, reads and verifies the audit log, and verifies tokens.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};
use pcp_gate::config::{default_config_path, default_state_path};
use pcp_gate::replay::{parse_trace, replay};
use pcp_gate::store::{GroupCommit, Store};
use pcp_gate::token::{self, TokenKey};
use pcp_gate::{Availability, ClientIdentity, Gate, GateConfig, Intent};
use serde_json::Value;

#[derive(Parser)]
#[command(
    name = "pcpctl",
    version,
    about = "Talk to pcp-confirm: policy, audit and tokens"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check a config file and every capability manifest it reaches.
    Validate {
        #[arg(long)]
        config: Option<PathBuf>,
    },
    /// Print, as JSON, what the gate would do with an intent now and why; records nothing.
    Explain {
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
    },
    /// Run a JSON Lines trace through the real gate on a virtual clock; one JSON line per intent.
    Replay {
        trace: PathBuf,
        #[arg(long)]
        config: PathBuf,
        /// Use (and update) this state store instead of a fresh one.
        #[arg(long)]
        state: Option<PathBuf>,
        /// Print a table instead of JSON lines.
        #[arg(long)]
        table: bool,
    },
    /// Print the audit log, or verify its hash chain (`pcpctl audit verify`).
    Audit {
        #[command(subcommand)]
        action: Option<AuditAction>,
        #[arg(long)]
        json: bool,
        /// Only records since this time: Unix milliseconds, or an age like 30m, 12h, 7d.
        #[arg(long)]
        since: Option<String>,
        #[arg(long, global = true)]
        state: Option<PathBuf>,
        #[arg(long, global = true)]
        config: Option<PathBuf>,
    },
    /// Submit an intent to the running compositor ($WAYLAND_DISPLAY), wait for the decision and
    /// print it as JSON: exit 0 when approved, 1 when denied.
    Submit {
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
    },
    /// Listen for one spoken answer (approve, deny, cancel) and print it as a JSON line.
    Listen {
        /// The Vosk model directory (default: `[speech] model`, ~/.cache/vosk, the setup cache).
        #[arg(long)]
        model: Option<PathBuf>,
        /// A capture device by name (default: `[speech] input_device`, else the system's).
        #[arg(long, conflicts_with = "wav")]
        device: Option<String>,
        /// A WAV file instead of a device, through the same recognizer.
        #[arg(long)]
        wav: Option<PathBuf>,
        /// The phrase pack's language, e.g. ko or en (default: `[speech] language`).
        #[arg(long)]
        lang: Option<String>,
        /// Seconds to wait for an answer (default: `[speech] timeout_ms`).
        #[arg(long)]
        timeout: Option<f64>,
        /// A config file whose `[speech]` section applies.
        #[arg(long)]
        config: Option<PathBuf>,
    },
    /// Tokens: `pcpctl token verify TOKEN --capability C --params JSON`.
    Token {
        #[command(subcommand)]
        action: TokenAction,
    },
}

#[derive(Subcommand)]
enum AuditAction {
    /// Exit 1 when the chain is broken, naming the first bad record.
    Verify,
}

#[derive(Subcommand)]
enum TokenAction {
    /// Exit 0 when valid (and spend it); 1 with the reason: forged, mismatch, stale,
    /// wrong_profile, wrong_app, expired, replayed.
    Verify {
        token: String,
        #[arg(long)]
        capability: String,
        #[arg(long, default_value = "{}")]
        params: String,
        /// A multi-step intent's steps, as submitted: a JSON array of {"capability", "params"}.
        #[arg(long)]
        steps: Option<String>,
        /// The app identity the approval must have been given to (not checked when absent).
        #[arg(long)]
        app: Option<String>,
        /// The profile in force (default: the config's `[session] profile`).
        #[arg(long)]
        profile: Option<String>,
        #[arg(long)]
        state: Option<PathBuf>,
        #[arg(long)]
        config: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    match run(Cli::parse()) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("pcpctl: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

fn load_config(path: Option<&Path>) -> Result<GateConfig> {
    match path {
        Some(p) => Ok(GateConfig::load(p)?),
        None => {
            let p = default_config_path();
            if p.exists() {
                Ok(GateConfig::load(&p)?)
            } else {
                let defaults = Path::new("<built-in defaults>");
                Ok(GateConfig::from_str_at(defaults, "")?)
            }
        }
    }
}

/// The state file: `--state`, else the config's, else the default.
fn state_path(state: Option<PathBuf>, config: Option<&Path>) -> Result<PathBuf> {
    if let Some(s) = state {
        return Ok(s);
    }
    match config {
        Some(c) => Ok(GateConfig::load(c)?.state_path()),
        None => Ok(load_config(None)
            .map(|c| c.state_path())
            .unwrap_or_else(|_| default_state_path())),
    }
}

fn parse_params(text: &str) -> Result<Value> {
    let v: Value =
        serde_json::from_str(text).with_context(|| format!("--params is not JSON: {text}"))?;
    if !v.is_object() {
        bail!("--params must be a JSON object, got {text}");
    }
    Ok(v)
}

fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Validate { config } => {
            let path = config.unwrap_or_else(default_config_path);
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
        Command::Explain {
            capability,
            params,
            config,
            state,
            profile,
            available,
        } => {
            let config = load_config(config.as_deref())?;
            let state = state.unwrap_or_else(|| config.state_path());
            let mut gate = Gate::inspect(config, &state)?;
            if let Some(p) = profile {
                gate.set_profile(&p);
            }
            gate.set_available(parse_available(&available)?);
            let intent = Intent::new(
                &capability,
                parse_params(&params)?,
                ClientIdentity::named("pcpctl"),
            );
            println!(
                "{}",
                serde_json::to_string_pretty(&gate.explain(&intent, now_ms()))?
            );
            Ok(ExitCode::SUCCESS)
        }
        Command::Replay {
            trace,
            config,
            state,
            table,
        } => {
            let text = std::fs::read_to_string(&trace)
                .with_context(|| format!("cannot read {}", trace.display()))?;
            let lines =
                parse_trace(&text).map_err(|e| anyhow::anyhow!("{}: {e}", trace.display()))?;
            let mut config = GateConfig::load(&config)?;
            // A fresh state per replay unless one is given; removed when the replay ends.
            let fresh = tempfile::tempdir().context("cannot create a temporary state folder")?;
            let state = state.unwrap_or_else(|| fresh.path().join("state.sqlite3"));
            config.file.state.path = Some(state);
            let mut gate = Gate::open(config)?;
            let results = replay(&mut gate, &lines);
            let mut out = std::io::stdout().lock();
            if table {
                print_table(&mut out, &results)?;
            } else {
                for r in &results {
                    writeln!(out, "{}", serde_json::to_string(r)?)?;
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Audit {
            action,
            json,
            since,
            state,
            config,
        } => {
            let path = state_path(state, config.as_deref())?;
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
            if let Some(AuditAction::Verify) = action {
                return Ok(match store.verify_audit()? {
                    Ok(n) => {
                        println!("{}: {n} records, chain intact", path.display());
                        ExitCode::SUCCESS
                    }
                    Err(b) => {
                        println!("{}: record {} is bad: {}", path.display(), b.seq, b.reason);
                        ExitCode::from(1)
                    }
                });
            }
            let since_ms = since.as_deref().map(parse_since).transpose()?.unwrap_or(0);
            let mut out = std::io::stdout().lock();
            for r in store.audit_since(since_ms)? {
                if json {
                    writeln!(out, "{}", serde_json::to_string(&r)?)?;
                } else {
                    let plan: Vec<&str> = r.plan.iter().map(|m| m.as_str()).collect();
                    writeln!(
                        out,
                        "{:>6}  {}  {:<10} {:<22} {:<8} {:<24} plan=[{}] {}",
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
        Command::Submit {
            capability,
            params,
            target,
            steps,
        } => submit(capability, &params, target, steps.as_deref()),
        Command::Listen {
            model,
            device,
            wav,
            lang,
            timeout,
            config,
        } => {
            let config = match config {
                Some(path) => speech_config(&path)?,
                None => pcp_speech::Config::default(),
            };
            let timeout = match timeout {
                Some(s) if s.is_finite() && s > 0.0 && s <= 3600.0 => {
                    Some(std::time::Duration::from_secs_f64(s))
                }
                Some(s) => bail!("--timeout {s}: expected seconds between 0 and 3600"),
                None => None,
            };
            let input = match wav {
                Some(path) => pcp_speech::ListenInput::Wav(path),
                None => pcp_speech::ListenInput::Device(device),
            };
            let options = pcp_speech::ListenOptions {
                model,
                input,
                lang,
                timeout,
                config,
            };
            let report = pcp_speech::listen::run(options)?;
            println!("{}", report.to_json());
            Ok(ExitCode::SUCCESS)
        }
        Command::Token {
            action:
                TokenAction::Verify {
                    token,
                    capability,
                    params,
                    steps,
                    app,
                    profile,
                    state,
                    config,
                },
        } => {
            // The manifests and profile in force say what the token must carry now.
            let config = load_config(config.as_deref())?;
            let path = state.unwrap_or_else(|| config.state_path());
            let key_path = TokenKey::path_beside(&path);
            if !key_path.exists() {
                bail!(
                    "no token key at {}: no gate has issued tokens there",
                    key_path.display()
                );
            }
            let key = TokenKey::load_or_create(&key_path)?;
            let mut store = Store::open(
                &path,
                GroupCommit {
                    max_records: 1,
                    max_age_ms: 0,
                },
            )?;
            let params = parse_params(&params)?;
            let steps: Vec<pcp_gate::Step> = match steps {
                Some(text) => serde_json::from_str(&text)
                    .with_context(|| format!("--steps must be a JSON array of steps: {text}"))?,
                None => Vec::new(),
            };
            let profile = profile.unwrap_or_else(|| config.file.session.profile.clone());
            let checked = match token::current_versions(&config.registry, &capability, &steps) {
                Ok((version, steps)) => {
                    let expected = token::Expected {
                        capability: &capability,
                        version,
                        params: &params,
                        steps: &steps,
                        profile: &profile,
                        app: app.as_deref(),
                    };
                    key.verify(&mut store, &token, &expected, now_ms())?
                }
                Err(rejection) => Err(rejection),
            };
            match checked {
                Ok(claims) => {
                    println!(
                        "valid: {} v{} for profile {}, app {}",
                        claims.capability, claims.version, claims.profile, claims.app
                    );
                    Ok(ExitCode::SUCCESS)
                }
                Err(rejection) => {
                    println!("{}", rejection.code());
                    eprintln!("token refused: {rejection}");
                    Ok(ExitCode::from(1))
                }
            }
        }
    }
}

fn submit(
    capability: String,
    params: &str,
    target: Option<String>,
    steps: Option<&str>,
) -> Result<ExitCode> {
    use pcp_compositor::client::{IntentClient, Submission};

    let steps = match steps {
        Some(text) => serde_json::from_str(text)
            .with_context(|| format!("--steps must be a JSON array of steps: {text}"))?,
        None => Vec::new(),
    };
    let submission = Submission {
        capability,
        params: parse_params(params)?,
        target,
        steps,
    };
    let mut client = IntentClient::connect()?;
    let handle = client.submit(&submission)?;
    let decision = client.wait(&handle)?;
    println!("{}", serde_json::to_string(&decision)?);
    Ok(if decision.approved {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The `[speech]` section of a whole config file (defaults when it has none).
fn speech_config(path: &Path) -> Result<pcp_speech::Config> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let table: toml::Table =
        toml::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let section = match table.get("speech") {
        Some(toml::Value::Table(t)) => toml::to_string(t)?,
        Some(_) => bail!("{}: [speech] must be a table", path.display()),
        None => String::new(),
    };
    Ok(pcp_speech::Config::from_toml(
        &section,
        &format!("{} [speech]", path.display()),
    )?)
}

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

fn print_table(out: &mut impl Write, results: &[pcp_gate::replay::ReplayResult]) -> Result<()> {
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

    #[test]
    fn available_names_an_unknown_modality() {
        let err = parse_available("visual,smell").unwrap_err().to_string();
        assert!(err.contains("smell"));
    }
}
