//! What every pcp binary does the same way at its start and its end: logs go to stderr through
//! `tracing`, coloured only when stderr is a terminal (a log file, a pipe or the journal gets no
//! escape codes), and a failure is printed for people — the error and its causes on one line,
//! no backtrace whatever `RUST_BACKTRACE` says — unless `--debug` or `PCP_DEBUG=1` asks for the
//! developer's form with a backtrace. `PROGRAM --generate man DIR` and `PROGRAM --generate
//! bash-completion` write the man pages (one per subcommand too) and the bash completion made
//! from the program's clap definition (for `cargo xtask package`; not shown in `--help`).
//!
//! A reader that goes away (`pcpctl audit | head`) ends the program quietly, as it ends a Unix
//! filter: [`outln!`] writes stdout, and a write refused with a broken pipe — there or through an
//! error that reaches [`Report::fail`] — ends the program by SIGPIPE ([`closed_pipe`]): no panic,
//! no message, and the status a shell expects of `yes | head`. SIGPIPE itself stays ignored (as
//! Rust sets it), so nothing else a program writes to (a Wayland socket, a child's pipe) can kill
//! it, and a program whose exit status is its answer (`pcpctl hook`) can still give it.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use tracing_subscriber::EnvFilter;

/// The environment variable that asks every pcp binary for the developer's error form.
pub const DEBUG_ENV: &str = "PCP_DEBUG";

/// The exit status of a failure that is not a program's own answer (bad input, a missing file, a
/// device or service that cannot be reached). Every pcp binary uses 2 for it.
pub const FAILURE: u8 = 2;

/// The exit status section every pcp binary's `--help` and man page end with.
pub const EXIT_STATUS: &str = "Exit status: 0 success: done as asked (an intent approved, a config or an \
     audit log found good). 1 the answer is no: an intent denied, a config that does not load, a \
     tampered audit log, a token that does not verify. 2 failure: bad arguments or input, or a \
     file, device or service that cannot be used; the message on stderr names what and where.";

/// Writes one line to stdout, like `println!`, except that a reader that went away ends the
/// program quietly ([`closed_pipe`]) instead of a panic, and any other failure to write ends it
/// with the failure status and a message.
#[macro_export]
macro_rules! outln {
    () => {
        $crate::write_stdout(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::write_stdout(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// What [`outln!`] does: writes `text` to stdout; a broken pipe ends the program by SIGPIPE,
/// another error with [`FAILURE`].
pub fn write_stdout(text: std::fmt::Arguments<'_>) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(text).and_then(|()| out.flush()) {
        drop(out);
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            closed_pipe();
        }
        eprintln!("cannot write to stdout: {e}");
        std::process::exit(i32::from(FAILURE));
    }
}

/// Ends the program as a Unix filter ends when its reader has gone: killed by SIGPIPE, silently
/// (a shell reports no error for it, and `set -o pipefail` still sees the pipeline cut short).
pub fn closed_pipe() -> ! {
    // SAFETY: signal and raise with constants; the default action for SIGPIPE ends the process
    // at once, so nothing after `raise` runs unless the signal was somehow blocked.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        libc::raise(libc::SIGPIPE);
    }
    std::process::exit(128 + libc::SIGPIPE)
}

/// Whether `error` or one of its causes is a write refused because the reader went away.
pub fn is_closed_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// What `--generate` writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Generated {
    /// The man pages, `PROGRAM.1` and `PROGRAM-SUBCOMMAND.1` for each subcommand, into a folder.
    Man(std::path::PathBuf),
    /// The bash completion script on stdout.
    BashCompletion,
}

impl Generated {
    /// Reads `--generate man DIR` or `--generate bash-completion` when it is the whole command
    /// line, so that it needs no place in each program's own arguments; `None` for any other
    /// command line.
    pub fn asked(args: &[std::ffi::OsString]) -> Option<Result<Generated, String>> {
        let [_, flag, what, rest @ ..] = args else {
            return None;
        };
        if flag != "--generate" {
            return None;
        }
        Some(match (what.to_str(), rest) {
            (Some("man"), [dir]) => Ok(Generated::Man(dir.into())),
            (Some("bash-completion"), []) => Ok(Generated::BashCompletion),
            _ => Err(format!(
                "--generate {}: expected `man DIR` or `bash-completion`",
                what.to_string_lossy()
            )),
        })
    }
}

/// Answers `PROGRAM --generate man|bash-completion` from the program's clap definition and
/// gives its exit status, or `None` when the command line asks for something else. Call it
/// first in `main`.
pub fn generate_if_asked(command: impl FnOnce() -> clap::Command) -> Option<ExitCode> {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let asked = Generated::asked(&args)?;
    let mut command = command();
    let name = command.get_name().to_string();
    let result = match asked {
        Ok(Generated::Man(dir)) => clap_mangen::generate_to(command, &dir)
            .map_err(|e| format!("cannot write the man pages into {}: {e}", dir.display())),
        Ok(Generated::BashCompletion) => {
            // Into memory first: clap_complete panics on a write it cannot make.
            let mut script = Vec::new();
            clap_complete::generate(
                clap_complete::Shell::Bash,
                &mut command,
                name.clone(),
                &mut script,
            );
            write_stdout(format_args!("{}", String::from_utf8_lossy(&script)));
            Ok(())
        }
        Err(e) => Err(e),
    };
    Some(match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{name}: {e}");
            ExitCode::from(FAILURE)
        }
    })
}

/// How a binary reports its failure, fixed at its start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Report {
    program: &'static str,
    debug: bool,
}

impl Report {
    /// Starts logging with `default_filter` (`RUST_LOG` overrides it) and decides how errors will
    /// be shown: `debug` is the program's `--debug` flag; `PCP_DEBUG=1` (or `true`, `yes`) turns
    /// it on too. Call it first in `main`, before any thread starts.
    pub fn start(program: &'static str, default_filter: &str, debug: bool) -> Report {
        let report = Report::new(program, debug);
        tracing_subscriber::fmt()
            .with_env_filter(
                EnvFilter::try_from_default_env()
                    .unwrap_or_else(|_| EnvFilter::new(default_filter)),
            )
            .with_writer(std::io::stderr)
            .with_ansi(std::io::stderr().is_terminal())
            .init();
        report
    }

    /// [`Report::start`] for a program that sets up no logging of its own.
    pub fn new(program: &'static str, debug: bool) -> Report {
        let debug = debug || debug_env(std::env::var(DEBUG_ENV).ok().as_deref());
        if debug
            && std::env::var_os("RUST_BACKTRACE").is_none()
            && std::env::var_os("RUST_LIB_BACKTRACE").is_none()
        {
            // anyhow captures a backtrace only when one of these is set, and reads it once, at
            // the first error: asked for one, the developer gets it without knowing the variable.
            // SAFETY: called first in `main`, before any thread exists that could read the
            // environment at the same time.
            unsafe { std::env::set_var("RUST_LIB_BACKTRACE", "1") };
        }
        Report { program, debug }
    }

    /// Whether the developer's form was asked for.
    pub fn debug(&self) -> bool {
        self.debug
    }

    /// Prints the failure on stderr and gives the failure exit status: `program: error: cause:
    /// cause` on one line, or with `--debug`/`PCP_DEBUG` the causes one per line and the
    /// backtrace where the error was made. A failure to write stdout because its reader went
    /// away is no failure to report: the program ends quietly ([`closed_pipe`]).
    pub fn fail(&self, error: &anyhow::Error) -> ExitCode {
        if is_closed_pipe(error) {
            closed_pipe();
        }
        // Said if stderr can take it; the status says it either way.
        let _ = writeln!(std::io::stderr(), "{}", self.render(error));
        ExitCode::from(FAILURE)
    }

    /// [`Report::fail`] for a program whose errors are plain messages (they carry no causes and
    /// no backtrace): `program: message`.
    pub fn fail_message(&self, message: &dyn std::fmt::Display) -> ExitCode {
        let _ = writeln!(std::io::stderr(), "{}: {message}", self.program);
        ExitCode::from(FAILURE)
    }

    /// The text [`Report::fail`] prints.
    pub fn render(&self, error: &anyhow::Error) -> String {
        if self.debug {
            format!("{}: {error:?}", self.program)
        } else {
            format!("{}: {error:#}", self.program)
        }
    }
}

/// Whether a value of `PCP_DEBUG` asks for the developer's form: `1`, `true` or `yes`.
fn debug_env(value: Option<&str>) -> bool {
    value.is_some_and(|v| {
        let v = v.trim();
        v == "1" || v.eq_ignore_ascii_case("true") || v.eq_ignore_ascii_case("yes")
    })
}

#[cfg(test)]
mod tests {
    use anyhow::Context;

    use super::*;

    #[test]
    fn generate_is_asked_only_as_the_whole_command_line() {
        let args = |a: &[&str]| a.iter().map(std::ffi::OsString::from).collect::<Vec<_>>();
        assert_eq!(
            Generated::asked(&args(&["p", "--generate", "man", "out"])),
            Some(Ok(Generated::Man("out".into())))
        );
        assert!(matches!(
            Generated::asked(&args(&["p", "--generate", "man"])),
            Some(Err(_))
        ));
        assert_eq!(
            Generated::asked(&args(&["p", "--generate", "bash-completion"])),
            Some(Ok(Generated::BashCompletion))
        );
        assert!(matches!(
            Generated::asked(&args(&["p", "--generate", "zsh"])),
            Some(Err(e)) if e.contains("zsh")
        ));
        assert_eq!(
            Generated::asked(&args(&["p", "submit", "--generate"])),
            None
        );
        assert_eq!(Generated::asked(&args(&["p"])), None);
    }

    #[test]
    fn a_broken_pipe_is_recognized_through_the_causes() {
        let pipe = std::io::Error::from(std::io::ErrorKind::BrokenPipe);
        let e = anyhow::Error::new(pipe).context("cannot print the audit log");
        assert!(is_closed_pipe(&e));
        let other = anyhow::Error::new(std::io::Error::from(std::io::ErrorKind::StorageFull));
        assert!(!is_closed_pipe(&other));
    }

    #[test]
    fn pcp_debug_values() {
        assert!(debug_env(Some("1")));
        assert!(debug_env(Some("yes")));
        assert!(debug_env(Some("TRUE")));
        assert!(!debug_env(Some("0")));
        assert!(!debug_env(Some("")));
        assert!(!debug_env(None));
    }

    #[test]
    fn an_error_for_people_is_one_line_with_its_causes() {
        let error = std::fs::read("/nonexistent/pcp-cli-test")
            .context("cannot read the content file /nonexistent/pcp-cli-test")
            .expect_err("the file does not exist");
        let report = Report {
            program: "prog",
            debug: false,
        };
        let text = report.render(&error);
        assert_eq!(text.lines().count(), 1, "{text}");
        assert!(
            text.starts_with("prog: cannot read the content file /nonexistent/pcp-cli-test: "),
            "{text}"
        );
        assert!(text.contains("No such file"), "{text}");
    }
}
