//! Real apps as processes: their stdout lines and stderr gathered on threads, the popups the
//! compositor maps, and windows moved where a test needs them.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::{Fixture, WAIT};

/// A running app: kill on drop.
pub struct App {
    child: Child,
    lines: Receiver<String>,
    stderr: Arc<Mutex<String>>,
    /// Every stdout line read so far.
    pub seen: Vec<String>,
}

impl App {
    /// Pumps (drawing frames) until the app prints a line starting with `prefix`; returns it.
    pub fn wait_line(&mut self, fx: &mut Fixture, prefix: &str) -> String {
        let start = Instant::now();
        loop {
            if let Some(line) = self.seen.iter().find(|l| l.starts_with(prefix)) {
                return line.clone();
            }
            assert!(
                start.elapsed() < WAIT,
                "timed out waiting for `{prefix}` from the app; it said {:?}, stderr: {}",
                self.seen,
                self.stderr()
            );
            fx.render();
            fx.pump();
            self.seen.extend(self.lines.try_iter());
        }
    }

    /// The stdout lines that arrived since the last look.
    pub fn new_lines(&mut self) -> Vec<String> {
        let new: Vec<String> = self.lines.try_iter().collect();
        self.seen.extend(new.iter().cloned());
        new
    }

    /// What the app wrote to stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().map(|s| s.clone()).unwrap_or_default()
    }
}

impl Drop for App {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Fixture {
    /// Starts an app with this compositor's display (GTK on Wayland) and collects its output.
    pub fn spawn_app(&mut self, mut command: Command) -> App {
        command
            .env("GDK_BACKEND", "wayland")
            .env_remove("DISPLAY")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().expect("spawn app");
        let (tx, lines) = channel();
        let out = child.stdout.take().expect("stdout");
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let err = child.stderr.take().expect("stderr");
        let sink = stderr.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                if let Ok(mut s) = sink.lock() {
                    s.push_str(&line);
                    s.push('\n');
                }
            }
        });
        App {
            child,
            lines,
            stderr,
            seen: Vec::new(),
        }
    }

    /// The mapped popups' geometries (global logical x, y, w, h).
    pub fn popup_rects(&mut self) -> Vec<(i32, i32, i32, i32)> {
        self.state()
            .popup_rects()
            .into_iter()
            .map(|r| (r.loc.x, r.loc.y, r.size.w, r.size.h))
            .collect()
    }

    /// Moves the first window's geometry to (x, y).
    pub fn move_first_window(&mut self, x: i32, y: i32) {
        self.state().move_first_window(x, y);
    }
}

impl App {
    /// The app's process id.
    pub fn id(&self) -> u32 {
        self.child.id()
    }
}

impl Fixture {
    /// Whether a screen locker holds the session.
    pub fn locked(&mut self) -> bool {
        self.state().is_locked()
    }
}

/// Evdev codes of the keys and buttons the real-app tests press.
pub const KEY_LEFTCTRL: u32 = 29;
pub const KEY_LEFTSHIFT: u32 = 42;
pub const KEY_C: u32 = 46;
pub const KEY_V: u32 = 47;
pub const BTN_MIDDLE: u32 = 0x112;

impl Fixture {
    /// Presses `keys` in order and releases them in reverse (a shortcut such as Ctrl+V).
    pub fn chord(&mut self, keys: &[u32]) {
        for k in keys {
            self.inject_key(*k, true);
        }
        for k in keys.iter().rev() {
            self.inject_key(*k, false);
        }
    }

    /// Clicks pointer button `code` at (x, y).
    pub fn click_button(&mut self, code: u32, x: f64, y: f64) {
        self.inject_pointer_motion(x, y);
        self.state().inject_button(code, true);
        self.state().inject_button(code, false);
    }

    /// The top-left corner of the window of the process `pid`.
    pub fn window_location_of_pid(&mut self, pid: u32) -> Option<(i32, i32)> {
        self.state().window_location_of_pid(pid)
    }
}
