//! `pcp-listen`: listens for one spoken answer (approve, deny, cancel) through the same capture
//! and recognizer as the compositor's voice step, from a device or a WAV file, and prints
//! `{"answer", "transcript", "audio_ms", "decided_after_ms"}` as one JSON line. Exit 0 with an
//! answer (or `none`), 2 on bad input naming what was wrong.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use pcp_speech::{Config, ListenInput, ListenOptions};

#[derive(Parser)]
#[command(
    name = "pcp-listen",
    version,
    about = "Listen for one spoken answer and print it as a JSON line"
)]
struct Cli {
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
    /// On failure, print the error in the developer's form; `PCP_DEBUG=1` does the same.
    #[arg(long)]
    debug: bool,
}

fn main() -> ExitCode {
    // SAFETY: the first thing the process does; no other thread exists yet.
    unsafe { pcp_speech::prepare_process() };
    let cli = Cli::parse();
    let report = pcp_cli::Report::start("pcp-listen", "warn", cli.debug);
    match run(cli) {
        Ok(line) => {
            pcp_cli::outln!("{line}");
            ExitCode::SUCCESS
        }
        Err(e) => report.fail_message(&e),
    }
}

fn run(cli: Cli) -> Result<String, String> {
    let config = match &cli.config {
        Some(path) => speech_config(path)?,
        None => Config::default(),
    };
    let timeout = match cli.timeout {
        Some(s) if s.is_finite() && s > 0.0 && s <= 3600.0 => Some(Duration::from_secs_f64(s)),
        Some(s) => {
            return Err(format!(
                "--timeout {s}: expected seconds between 0 and 3600"
            ));
        }
        None => None,
    };
    let input = match cli.wav {
        Some(path) => ListenInput::Wav(path),
        None => ListenInput::Device(cli.device),
    };
    let options = ListenOptions {
        model: cli.model,
        input,
        lang: cli.lang,
        timeout,
        config,
    };
    let report = pcp_speech::listen::run(options).map_err(|e| e.to_string())?;
    Ok(report.to_json())
}

/// The `[speech]` section of a whole config file (defaults when it has none).
fn speech_config(path: &Path) -> Result<Config, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let table: toml::Table =
        toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let section = match table.get("speech") {
        Some(toml::Value::Table(t)) => toml::to_string(t).map_err(|e| e.to_string())?,
        Some(_) => return Err(format!("{}: [speech] must be a table", path.display())),
        None => String::new(),
    };
    Config::from_toml(&section, &format!("{} [speech]", path.display())).map_err(|e| e.to_string())
}
