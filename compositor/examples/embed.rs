//! The embedding example of `docs/embedding.md`: a bare compositor serving pcp-intent-v1 that
//! prints prompts and takes answers from stdin. Keep it identical to the document's code block.

use std::io::BufRead;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use pcp_compositor::delegate_intent;
use pcp_compositor::intent::{IntentHandler, IntentManagerState, answer_visual, tick};
use pcp_gate::{Answer, Gate, GateConfig};
use serde_json::Value;
use wayland_server::{Display, ListeningSocket};

struct App {
    intents: IntentManagerState,
    running: bool,
}

impl IntentHandler for App {
    fn intent_state(&mut self) -> &mut IntentManagerState {
        &mut self.intents
    }

    fn now_ms(&self) -> i64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64)
    }

    fn execute_builtin(&mut self, capability: &str, _params: &Value) -> Result<(), String> {
        match capability {
            "session.logout" => {
                self.running = false;
                Ok(())
            }
            other => Err(format!("{other} is not supported here")),
        }
    }

    fn prompts_changed(&mut self) {
        if let Some(p) = self.intents.gate().active() {
            let who = p.intent.client.display_name();
            println!(
                "{who} asks: {} [{}] (type y or n)",
                p.description,
                p.risk.as_str()
            );
        }
    }
}

delegate_intent!(App);

fn main() -> anyhow::Result<()> {
    let config = std::env::args().nth(1).expect("usage: embed CONFIG.toml");
    let gate = Gate::open(GateConfig::load(config.as_ref())?)?;
    let mut display: Display<App> = Display::new()?;
    let intents = IntentManagerState::new::<App>(&display.handle(), gate);
    let mut app = App {
        intents,
        running: true,
    };

    let socket = ListeningSocket::bind_auto("wayland", 1..33)?;
    println!("WAYLAND_DISPLAY={:?}", socket.socket_name());

    // Stdin stands in for the seat: a real compositor calls answer_visual from its input code.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });

    while app.running {
        while let Some(stream) = socket.accept()? {
            display.handle().insert_client(stream, Arc::new(()))?;
        }
        display.dispatch_clients(&mut app)?;
        if let Ok(line) = rx.try_recv() {
            let answer = if line.trim() == "y" {
                Answer::Approve
            } else {
                Answer::Deny
            };
            answer_visual(&mut app, answer);
        }
        tick(&mut app);
        display.flush_clients()?;
        std::thread::sleep(Duration::from_millis(10));
    }
    Ok(())
}
