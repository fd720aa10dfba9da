//! Processes of the session and what they print: the compositor's log is kept line by line (and
//! written to the output folder) so the script can wait for what it says — an output lit, a
//! dialog placed, the microphone open — and `pcpctl submit` runs in the background until it
//! prints its decision.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

/// The nice level of the scripted user's threads (see `session::set_thread_nice`).
pub const USER_NICE: i32 = -10;

/// Lines a process printed, shared with the thread that reads them.
#[derive(Clone, Default)]
pub struct Log {
    lines: Arc<Mutex<Vec<String>>>,
    /// Set when the process closed its output (it has exited): nothing more will come.
    ended: Arc<std::sync::atomic::AtomicBool>,
}

/// Removes terminal colour codes (`ESC [ … m`).
fn plain(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

impl Log {
    /// The number of lines so far: later waits look only at lines after it.
    pub fn mark(&self) -> usize {
        self.lines.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Lines `from..` that contain `needle`.
    pub fn find(&self, from: usize, needle: &str) -> Vec<String> {
        let lines = self.lines.lock().unwrap_or_else(|e| e.into_inner());
        lines
            .iter()
            .skip(from)
            .filter(|l| l.contains(needle))
            .cloned()
            .collect()
    }

    /// Waits for a line after `from` containing `needle`; returns its index and text.
    pub fn wait(&self, from: usize, needle: &str, within: Duration) -> Result<(usize, String)> {
        let start = Instant::now();
        loop {
            {
                let lines = self.lines.lock().unwrap_or_else(|e| e.into_inner());
                if let Some((i, l)) = lines
                    .iter()
                    .enumerate()
                    .skip(from)
                    .find(|(_, l)| l.contains(needle))
                {
                    return Ok((i, l.clone()));
                }
            }
            if self.ended.load(std::sync::atomic::Ordering::Relaxed) {
                bail!("the compositor exited before it logged `{needle}`");
            }
            if start.elapsed() > within {
                bail!(
                    "the compositor did not log `{needle}` within {:.0} s",
                    within.as_secs_f64()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Reads `from` (a child's stdout or stderr) on a thread into this log and `file`.
    fn follow(
        &self,
        from: impl std::io::Read + Send + 'static,
        file: Arc<Mutex<std::fs::File>>,
        last: bool,
    ) {
        let lines = self.lines.clone();
        let ended = self.ended.clone();
        std::thread::spawn(move || {
            crate::session::set_thread_nice(USER_NICE);
            for line in BufReader::new(from).lines() {
                let Ok(line) = line else { break };
                let line = plain(&line);
                if let Ok(mut f) = file.lock() {
                    let _ = writeln!(f, "{line}");
                }
                lines.lock().unwrap_or_else(|e| e.into_inner()).push(line);
            }
            if last {
                ended.store(true, std::sync::atomic::Ordering::Relaxed);
            }
        });
    }
}

/// Starts `cmd` with its stdout and stderr followed into a [`Log`] and written to `file`.
pub fn spawn_logged(cmd: &mut Command, file: &Path) -> Result<(Child, Log)> {
    let out = Arc::new(Mutex::new(
        std::fs::File::create(file).with_context(|| format!("cannot create {}", file.display()))?,
    ));
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot start {cmd:?}"))?;
    let log = Log::default();
    if let Some(s) = child.stdout.take() {
        log.follow(s, out.clone(), false);
    }
    // The compositor logs to stderr: its end is the process's.
    if let Some(s) = child.stderr.take() {
        log.follow(s, out, true);
    }
    Ok((child, log))
}

/// Where a dialog is, from the compositor's `dialog placed on …` line.
#[derive(Debug, Clone, PartialEq)]
pub struct Dialog {
    pub output: String,
    /// The dialog's box (x, y, width, height), global logical pixels.
    pub rect: (f64, f64, f64, f64),
    /// The Approve button's centre, global logical pixels.
    pub approve: (f64, f64),
}

/// Parses `… dialog placed on NAME at X,Y WxH; approve X,Y WxH; deny …`.
pub fn parse_dialog(line: &str) -> Result<Dialog> {
    let bad = || anyhow::anyhow!("cannot read the dialog's place from {line:?}");
    let rest = line.split_once("dialog placed on ").ok_or_else(bad)?.1;
    let (output, rest) = rest.split_once(" at ").ok_or_else(bad)?;
    let num = |s: &str| s.trim().parse::<f64>().map_err(|_| bad());
    // `X,Y WxH` up to the next `;`.
    let boxed = |text: &str| -> Result<(f64, f64, f64, f64)> {
        let text = text.split(';').next().ok_or_else(bad)?;
        let (pos, size) = text.trim().split_once(' ').ok_or_else(bad)?;
        let (x, y) = pos.split_once(',').ok_or_else(bad)?;
        let (w, h) = size.split_once('x').ok_or_else(bad)?;
        Ok((num(x)?, num(y)?, num(w)?, num(h)?))
    };
    let rect = boxed(rest)?;
    let (x, y, w, h) = boxed(rest.split_once("approve ").ok_or_else(bad)?.1)?;
    Ok(Dialog {
        output: output.to_string(),
        rect,
        approve: (x + w / 2.0, y + h / 2.0),
    })
}

/// A `pcpctl submit` running until the compositor decides.
pub struct Submitted {
    /// Taken when the decision is read; a submission dropped before that is killed.
    child: Option<Child>,
    pub started: Instant,
}

impl Drop for Submitted {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// What `pcpctl submit` printed.
#[derive(Debug, Clone)]
pub struct Decided {
    pub resolution: String,
    pub modalities: Vec<String>,
    /// From submission to the decision.
    pub seconds: f64,
}

impl Submitted {
    /// Runs `pcpctl` (as `cmd` is set up: its user, environment) to submit `capability`.
    pub fn start(mut cmd: Command, capability: &str, params: &str) -> Result<Submitted> {
        let child = cmd
            .args(["submit", capability, "--params", params])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("cannot start {cmd:?}"))?;
        Ok(Submitted {
            child: Some(child),
            started: Instant::now(),
        })
    }

    /// The decision, if `pcpctl` has already printed it.
    pub fn finished(&mut self) -> Option<Result<Decided>> {
        let done = self.child.as_mut()?.try_wait().ok()??;
        let _ = done;
        let submitted = Submitted {
            child: self.child.take(),
            started: self.started,
        };
        Some(submitted.wait(Duration::from_secs(1)))
    }

    /// Waits for the decision (at most `within`).
    pub fn wait(mut self, within: Duration) -> Result<Decided> {
        let Some(child) = self.child.as_mut() else {
            bail!("this submission was already read");
        };
        loop {
            if child.try_wait()?.is_some() {
                break;
            }
            if self.started.elapsed() > within {
                bail!(
                    "pcpctl submit got no decision within {:.0} s",
                    within.as_secs_f64()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let seconds = self.started.elapsed().as_secs_f64();
        let Some(child) = self.child.take() else {
            bail!("this submission was already read");
        };
        let out = child.wait_with_output()?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        let json: serde_json::Value = serde_json::from_str(stdout.trim()).with_context(|| {
            format!(
                "pcpctl printed {stdout:?} ({})",
                String::from_utf8_lossy(&out.stderr).trim()
            )
        })?;
        Ok(Decided {
            resolution: json["resolution"].as_str().unwrap_or("").to_string(),
            modalities: json["modalities"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|m| m.as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default(),
            seconds,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dialog_line_gives_the_output_its_box_and_the_approve_centre() {
        let line = "2025-01-01T00:00:00Z  INFO pcp_compositor::overlay_ui: dialog placed on \
                    Virtual-1 at 340,200 600x400; approve 360,520 280x60; deny 660,520 280x60";
        let d = parse_dialog(line).unwrap();
        assert_eq!(d.output, "Virtual-1");
        assert_eq!(d.approve, (500.0, 550.0));
        assert_eq!(d.rect, (340.0, 200.0, 600.0, 400.0));
        assert!(parse_dialog("dialog placed on X at 1,2 3x4; approve none; deny none").is_err());
    }

    #[test]
    fn colour_codes_are_removed() {
        assert_eq!(
            plain("\u{1b}[2mtime\u{1b}[0m \u{1b}[32m INFO\u{1b}[0m x"),
            "time  INFO x"
        );
    }
}
