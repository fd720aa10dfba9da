//! `pcpctl mcp`: the MCP gateway. Put in any MCP client's settings in place of a server's own
//! command (`pcpctl mcp --name NAME -- COMMAND ARGS…`), it starts the server and turns every
//! `tools/call` into the intent `mcp.NAME.TOOL`, asked on the desktop; everything else passes
//! through unchanged (`pcp_mcp::Proxy`). `--url URL` stands in front of a streamable-HTTP server
//! instead, serving the client on loopback ([`http`]). `--print-config CLIENT` prints the
//! settings snippet that wraps a server for a client ([`settings`]). A denial is the call's
//! tool error, never a dropped connection; with no compositor every call is denied.

mod asker;
mod http;
mod settings;
mod stdio;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Result, bail};
use pcp_mcp::{DEFAULT_DENIAL, DEFAULT_MAX_MESSAGE_BYTES, Limits, Proxy, Server};

pub use settings::Client;

/// Seconds a call waits for the desktop by default: under the tool-call timeouts clients set
/// (Codex CLI's is 60 s), so the gateway's denial, not the client's timeout, answers.
pub const DEFAULT_DEADLINE_SECONDS: f64 = 50.0;

#[derive(clap::Args)]
pub struct Args {
    /// The server's name, as the dialog and the capability (mcp.NAME.TOOL) show it; default:
    /// the server program's name (the package a runner like npx or uvx starts).
    #[arg(long)]
    name: Option<String>,
    /// The working folder paths in tool calls are rated against; default: the folder the
    /// gateway starts in, unless that is / or your home folder (then every path counts as
    /// outside it).
    #[arg(long)]
    project: Option<PathBuf>,
    /// Seconds a tool call waits for the desktop before it is denied.
    #[arg(long, default_value_t = DEFAULT_DEADLINE_SECONDS)]
    deadline: f64,
    /// Largest message read from either side, in bytes; a larger one is refused (from the
    /// client) or answered with errors (from the server), never kept.
    #[arg(long, default_value_t = DEFAULT_MAX_MESSAGE_BYTES)]
    max_message_bytes: usize,
    /// What a denied call's tool error says; `{reason}` is the desktop's reason.
    #[arg(long, default_value = DEFAULT_DENIAL)]
    denial: String,
    /// Stand in front of a streamable-HTTP MCP server at URL (http:// or https://) instead of
    /// starting one, serving clients on --listen.
    #[arg(long)]
    url: Option<String>,
    /// With --url: the loopback address to serve on (port 0 picks a free one, printed on stderr).
    #[arg(long, default_value = "127.0.0.1:8931", requires = "url")]
    listen: String,
    /// Print the settings snippet that wraps the server for CLIENT's MCP settings, then exit.
    #[arg(long, value_enum)]
    print_config: Option<Client>,
    /// The server's command and arguments.
    #[arg(last = true)]
    command: Vec<String>,
}

/// What the gateway runs with.
pub struct Settings {
    pub server: Server,
    pub deadline: Duration,
    pub max_message_bytes: usize,
    pub denial: String,
}

impl Settings {
    /// A fresh proxy for one session.
    pub fn proxy(&self) -> Proxy {
        let mut nonce = [0u8; 8];
        // Ids only need to differ from the client's; time stands in when there is no randomness.
        if random_fill(&mut nonce).is_err() {
            nonce = (crate::common::now_ms() as u64).to_ne_bytes();
        }
        Proxy::new(
            self.server.clone(),
            Limits::default(),
            &self.denial,
            u64::from_ne_bytes(nonce),
        )
    }
}

fn random_fill(buf: &mut [u8]) -> std::io::Result<()> {
    use std::io::Read;
    std::fs::File::open("/dev/urandom")?.read_exact(buf)
}

pub fn run(args: Args) -> Result<ExitCode> {
    if let Some(client) = args.print_config {
        println!("{}", settings::snippet(client, &args)?);
        return Ok(ExitCode::SUCCESS);
    }
    let deadline = Duration::try_from_secs_f64(args.deadline)
        .ok()
        .filter(|d| !d.is_zero());
    let Some(deadline) = deadline else {
        bail!(
            "--deadline {} is not a positive number of seconds",
            args.deadline
        );
    };
    if args.max_message_bytes < 1024 {
        bail!(
            "--max-message-bytes {} is below 1024",
            args.max_message_bytes
        );
    }
    if !args.denial.contains("{reason}") {
        bail!("--denial must hold {{reason}}, where the desktop's reason goes");
    }
    if args.url.is_some() && !args.command.is_empty() {
        bail!("pcpctl mcp takes either --url URL or a server's command after `--`, not both");
    }
    let command_line = match &args.url {
        Some(url) => url.clone(),
        None if args.command.is_empty() => {
            bail!("pcpctl mcp needs the server's command after `--` (or --url URL)")
        }
        None => shell_words(&args.command),
    };
    let name = match (&args.name, &args.url) {
        (Some(n), _) => n.clone(),
        (None, Some(url)) => url_host(url),
        (None, None) => server_name(&args.command),
    };
    let settings = Settings {
        server: Server {
            name,
            command: command_line,
            cwd: project_folder(args.project.as_deref())?,
        },
        deadline,
        max_message_bytes: args.max_message_bytes,
        denial: args.denial.clone(),
    };
    match &args.url {
        Some(url) => http::run(settings, url, &args.listen),
        None => stdio::run(settings, &args.command),
    }
}

/// The working folder paths are rated against: `--project`, else the current folder unless it
/// is `/` or the home folder (a client that starts servers there says nothing of a project).
fn project_folder(project: Option<&Path>) -> Result<Option<String>> {
    let folder = match project {
        Some(p) if p.is_absolute() => return Ok(Some(p.to_string_lossy().into_owned())),
        Some(p) => bail!("--project {} is not an absolute folder", p.display()),
        None => std::env::current_dir()?,
    };
    let home = std::env::var_os("HOME").map(PathBuf::from);
    if folder == Path::new("/") || home.as_deref() == Some(folder.as_path()) {
        return Ok(None);
    }
    Ok(Some(folder.to_string_lossy().into_owned()))
}

/// Programs that start the server named by a later argument.
const RUNNERS: &[&str] = &[
    "npx", "node", "bunx", "bun", "deno", "uvx", "uv", "pipx", "python", "python3", "docker",
    "podman", "env", "run", "exec",
];

/// The server's name by default: the first argument that is neither a runner nor a flag,
/// without its folder, scope or version (`npx -y @modelcontextprotocol/server-filesystem@1 /p`
/// → `server-filesystem`).
pub fn server_name(command: &[String]) -> String {
    let word = command
        .iter()
        .map(|w| w.rsplit('/').next().unwrap_or(w))
        .find(|w| !w.starts_with('-') && !RUNNERS.contains(w))
        .or_else(|| command.first().map(String::as_str))
        .unwrap_or("server");
    let word = word.split('@').find(|p| !p.is_empty()).unwrap_or(word);
    word.to_string()
}

/// An URL's host, for a server's default name.
fn url_host(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let host = rest.split(['/', ':', '?']).next().unwrap_or(rest);
    if host.is_empty() {
        "server".into()
    } else {
        host.to_string()
    }
}

/// A command line as a shell would read it back: plain words as they are, others quoted.
pub fn shell_words(words: &[String]) -> String {
    words
        .iter()
        .map(|w| {
            let plain = !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
            if plain {
                w.clone()
            } else {
                format!("'{}'", w.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn server_names_skip_runners_flags_scopes_and_versions() {
        assert_eq!(
            server_name(&words(
                "npx -y @modelcontextprotocol/server-filesystem@2026.8.31 /p"
            )),
            "server-filesystem"
        );
        assert_eq!(
            server_name(&words("/usr/bin/mcp-server-git --repo .")),
            "mcp-server-git"
        );
        assert_eq!(
            server_name(&words("uvx mcp-server-fetch")),
            "mcp-server-fetch"
        );
        assert_eq!(
            url_host("https://mcp.example.com:8443/mcp"),
            "mcp.example.com"
        );
    }

    #[test]
    fn command_lines_quote_what_a_shell_would_split() {
        assert_eq!(shell_words(&words("npx -y a/b")), "npx -y a/b");
        assert_eq!(
            shell_words(&["a b".into(), "it's".into()]),
            "'a b' 'it'\\''s'"
        );
    }
}
