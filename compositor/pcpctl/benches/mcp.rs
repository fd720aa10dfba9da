//! A routine MCP tool call (a read a manifest declares routine) through `pcpctl mcp` against a
//! running headless compositor, beside the same call straight to the server (budget: the
//! gateway ≤ 1 ms more, DESIGN.md). The server is the scripted one (`tests/mcp/`), kept running
//! across calls in both cases as a client keeps it; the compositor runs on its own thread.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use pcp_compositor::startup;
use pcp_compositor::state::{Compositor, Socket};

const MANIFEST: &str = r#"
[[capability]]
name = "mcp.scripted.read_file"
version = 1
side_effects = "read"
auth_level = "user"
description = "Read a file through the scripted server"
"#;

fn start(dir: PathBuf, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<()> {
    let (tx, rx) = std::sync::mpsc::channel();
    let handle = std::thread::spawn(move || {
        let assets = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets");
        let config = dir.join("config.toml");
        let text = format!(
            "[manifests]\ndirs = [{:?}]\n[state]\npath = {:?}\n[overlay]\nsystem_fonts = false\n\
             [speech]\nenabled = false\n{MANIFEST}",
            assets.join("capabilities.d"),
            dir.join("state.sqlite3")
        );
        std::fs::write(&config, text).expect("config");
        let loaded = startup::load(Some(&config)).expect("load");
        let mut options = startup::options(
            loaded,
            vec!["800x600@0,0".parse().expect("output")],
            Some(Socket::Path(dir.join("wl"))),
            Some(config),
            true,
        )
        .expect("options");
        options.frame_timer = false;
        let mut compositor = Compositor::new(options).expect("compositor");
        let _ = tx.send(());
        while !stop.load(Ordering::Relaxed) {
            let _ = compositor.dispatch(Some(Duration::from_millis(20)));
        }
    });
    let _ = rx.recv();
    handle
}

/// A session with an MCP server (or the gateway in front of it): requests in, lines out.
struct Session {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    line: String,
    next_id: u64,
}

impl Session {
    fn start(mut command: Command) -> Session {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the server");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut s = Session {
            child,
            stdin,
            stdout,
            line: String::new(),
            next_id: 0,
        };
        s.request(
            "initialize",
            r#"{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}"#,
        );
        s.request("tools/list", "{}");
        s
    }

    /// Sends a request and reads lines until its answer; returns the answer.
    fn request(&mut self, method: &str, params: &str) -> &str {
        self.next_id += 1;
        let id = self.next_id;
        writeln!(
            self.stdin,
            r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#
        )
        .expect("write");
        self.stdin.flush().expect("flush");
        let want = format!(r#""id":{id}"#);
        loop {
            self.line.clear();
            let n = self.stdout.read_line(&mut self.line).expect("read");
            assert!(n > 0, "the server closed its output");
            if self.line.contains(&want) {
                return &self.line;
            }
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).expect("0700");
    let stop = Arc::new(AtomicBool::new(false));
    let compositor = start(dir.path().to_path_buf(), Arc::clone(&stop));
    let file = dir.path().join("notes.txt");
    std::fs::write(&file, "hello").expect("file");
    let server =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/mcp/scripted_mcp_server.py");
    let params = format!(
        r#"{{"name":"read_file","arguments":{{"path":{:?}}}}}"#,
        file.to_string_lossy()
    );
    let mut direct = {
        let mut cmd = Command::new("python3");
        cmd.arg(&server);
        Session::start(cmd)
    };
    let mut gateway = {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_pcpctl"));
        cmd.args(["mcp", "--name", "scripted", "--", "python3"])
            .arg(&server)
            .current_dir(dir.path())
            .env("WAYLAND_DISPLAY", dir.path().join("wl"));
        Session::start(cmd)
    };
    let answer = gateway.request("tools/call", &params).to_string();
    assert!(
        answer.contains("hello"),
        "the gateway did not run the routine read: {answer}"
    );
    let mut group = c.benchmark_group("mcp_gateway");
    group.sample_size(50);
    group.bench_function("direct_routine_read", |b| {
        b.iter(|| {
            let a = direct.request("tools/call", &params);
            assert!(a.contains("hello"));
        })
    });
    group.bench_function("gateway_routine_read", |b| {
        b.iter(|| {
            let a = gateway.request("tools/call", &params);
            assert!(a.contains("hello"), "{a}");
        })
    });
    group.finish();
    drop((direct, gateway));
    stop.store(true, Ordering::Relaxed);
    let _ = compositor.join();
}

criterion_group!(benches, bench);
criterion_main!(benches);
