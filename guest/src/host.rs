//! The virtio-serial port to `cargo xtask session-test` on the host: one request per line
//! (`shot NAME`, `unplug gpu1`, `plug gpu1`, `keys ctrl alt f2`), answered `ok …` or `err …`;
//! `log …` lines show progress there and get no answer; `done VERDICT` ends the session.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;

use anyhow::{Context, Result, bail};

/// The port's name, as QEMU's `virtserialport` sets it.
const PORT_NAME: &str = "pcp.control";

pub struct Host {
    reader: BufReader<File>,
    writer: File,
}

/// The `/dev/vportNpM` node of the port named [`PORT_NAME`].
fn find_port() -> Result<PathBuf> {
    for entry in std::fs::read_dir("/sys/class/virtio-ports")
        .context("no virtio-ports in sysfs (is virtio_console loaded?)")?
    {
        let entry = entry?;
        let name = std::fs::read_to_string(entry.path().join("name")).unwrap_or_default();
        if name.trim() == PORT_NAME {
            return Ok(PathBuf::from("/dev").join(entry.file_name()));
        }
    }
    bail!("no virtio-serial port named {PORT_NAME}")
}

impl Host {
    pub fn open() -> Result<Host> {
        let path = find_port()?;
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .with_context(|| format!("cannot open {}", path.display()))?;
        Ok(Host {
            reader: BufReader::new(file.try_clone()?),
            writer: file,
        })
    }

    fn send(&mut self, line: &str) -> Result<()> {
        self.writer
            .write_all(format!("{}\n", line.replace('\n', " ")).as_bytes())
            .context("writing to the host")
    }

    /// Shows `text` on the host's console.
    pub fn log(&mut self, text: &str) {
        eprintln!("{text}");
        let _ = self.send(&format!("log {text}"));
    }

    /// Asks the host for `request`; its answer after `ok`.
    pub fn ask(&mut self, request: &str) -> Result<String> {
        self.send(request)?;
        let mut line = String::new();
        if self.reader.read_line(&mut line)? == 0 {
            bail!("the host closed the control port");
        }
        let line = line.trim();
        match line.split_once(' ').unwrap_or((line, "")) {
            ("ok", rest) => Ok(rest.to_string()),
            ("err", why) => bail!("the host could not {request}: {why}"),
            _ => bail!("the host answered {line:?} to {request}"),
        }
    }

    pub fn done(&mut self, verdict: &str) {
        let _ = self.send(&format!("done {verdict}"));
    }
}
