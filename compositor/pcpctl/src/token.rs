//! `pcpctl token verify`: checks a confirmation token against the state store's key, the
//! manifests and profile in force and (with `--app`) the app it was given to, and spends it
//! (single use). Exit 0 when valid; 1 with the reason (forged, mismatch, stale, wrong_profile,
//! wrong_app, expired, replayed).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::Subcommand;
use pcp_gate::store::{GroupCommit, Store};
use pcp_gate::token::{self, TokenKey};

use crate::common::{load_config, now_ms, parse_params};

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    action: Action,
}

#[derive(Subcommand)]
enum Action {
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

pub fn run(args: Args) -> Result<ExitCode> {
    let Action::Verify {
        token,
        capability,
        params,
        steps,
        app,
        profile,
        state,
        config,
    } = args.action;
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
            pcp_cli::outln!(
                "valid: {} v{} for profile {}, app {}",
                claims.capability,
                claims.version,
                claims.profile,
                claims.app
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(rejection) => {
            pcp_cli::outln!("{}", rejection.code());
            eprintln!("token refused: {rejection}");
            Ok(ExitCode::from(1))
        }
    }
}
