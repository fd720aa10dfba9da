//! `pcp-overlay-render`: renders one dialog state to a PNG, for reviewers, the README and golden
//! tests. Uses only the bundled font plus `--font` files unless `--system-fonts` is given, so
//! the same arguments give the same pixels on any machine.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::Parser;
use pcp_overlay::{Config, Fonts, LiveState, ThemeName, load_content, load_state};

/// Renders one confirmation-dialog state to a PNG.
#[derive(Debug, Parser)]
#[command(name = "pcp-overlay-render", version)]
struct Args {
    /// Content JSON (requester, declared_app_id, action, target, steps, extra_params, challenge,
    /// risk, modalities, seconds_left, queued, offer_session…).
    #[arg(long)]
    content: PathBuf,
    /// Output size in logical pixels, WxH.
    #[arg(long, value_parser = parse_size)]
    size: (u32, u32),
    /// Output scale (e.g. 1, 1.25, 1.5, 2, 3).
    #[arg(long, default_value_t = 1.0)]
    scale: f64,
    /// Theme: dark, light or high-contrast (default: the config's).
    #[arg(long, value_parser = parse_theme)]
    theme: Option<ThemeName>,
    /// Live state JSON (seconds_left, queued, voice, voice_level, haptic, hold_progress, held,
    /// focus, armed, scroll, read_all, keyboard).
    #[arg(long)]
    state: Option<PathBuf>,
    /// A config file with an `[overlay]` section (default: built-in defaults).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Extra font files, loaded after the bundled font (e.g. a CJK fallback).
    #[arg(long = "font")]
    fonts: Vec<PathBuf>,
    /// Also load the system's fonts as fallback (output then depends on the machine).
    #[arg(long)]
    system_fonts: bool,
    /// Where to write the PNG.
    #[arg(long)]
    out: PathBuf,
    /// On failure, print the error's causes one per line and where it was made (a backtrace);
    /// `PCP_DEBUG=1` does the same.
    #[arg(long)]
    debug: bool,
}

fn parse_size(s: &str) -> Result<(u32, u32), String> {
    let (w, h) = s
        .split_once(['x', 'X'])
        .ok_or_else(|| format!("size {s:?} is not WxH (e.g. 1920x1080)"))?;
    let n = |v: &str| {
        v.parse::<u32>()
            .ok()
            .filter(|n| (1..=16384).contains(n))
            .ok_or_else(|| format!("size {s:?}: {v:?} is not a whole number of pixels in 1–16384"))
    };
    Ok((n(w)?, n(h)?))
}

fn parse_theme(s: &str) -> Result<ThemeName, String> {
    ThemeName::parse(s).ok_or_else(|| format!("theme {s:?} is not dark, light or high-contrast"))
}

#[derive(serde::Deserialize)]
struct ConfigFile {
    #[serde(default)]
    overlay: Config,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let report = pcp_cli::Report::start("pcp-overlay-render", "warn", args.debug);
    match render(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => report.fail(&e),
    }
}

/// Renders the dialog the arguments describe and writes the PNG.
fn render(args: Args) -> Result<()> {
    if !(args.scale.is_finite() && args.scale > 0.0) {
        bail!("--scale {} is not a positive number", args.scale);
    }
    let mut config = match &args.config {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read {}", path.display()))?;
            toml::from_str::<ConfigFile>(&text)
                .with_context(|| format!("invalid config {}", path.display()))?
                .overlay
        }
        None => Config::default(),
    };
    if let Some(theme) = args.theme {
        config.theme = theme;
    }
    let content = load_content(&args.content, &config)?;
    let state = match &args.state {
        Some(path) => load_state(path)?,
        None => LiveState::default(),
    };
    let mut fonts = Fonts::with_files(&args.fonts)?;
    if args.system_fonts {
        config.extra_fonts = args.fonts.iter().map(|p| p.display().to_string()).collect();
        config.system_fonts = true;
        fonts = Fonts::from_config(&config)?;
    }
    let pixmap = pcp_overlay::dialog::render_state(
        &mut fonts, &config, &content, &state, args.scale, args.size,
    )?;
    pixmap
        .save_png(&args.out)
        .with_context(|| format!("cannot write {}", args.out.display()))?;
    pcp_cli::outln!(
        "{}: {}x{} px",
        args.out.display(),
        pixmap.width(),
        pixmap.height()
    );
    Ok(())
}
