//! The session's polkit authentication agent, plugged into the engine as one more front end:
//! [`start`] registers `pcp-polkit`'s agent with polkitd (as the session's user, for its logind
//! session or this process, or `[polkit] subject`), carries its events into the event loop,
//! and hands them to the [front end](front) that turns them into engine commands. When another
//! agent already holds the subject, or the system bus or polkitd is missing, it logs why and
//! the session carries on without one. See `docs/polkit.md`.

pub mod config;
pub mod front;

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Mutex;

use pcp_plugin::{FrontEnd, Request};
use pcp_polkit::{Agent, AgentConfig, AgentEvent, EventSink, Subject, SubjectChoice};

pub use self::config::PolkitConfig;
use self::front::Front;
use crate::state::{Compositor, State};

/// The front end as the engine holds it: it shares [`Front`] with the agent's event source.
struct Shared(Rc<RefCell<Front>>);

impl FrontEnd for Shared {
    fn deliver(&mut self, delivery: pcp_plugin::Delivery) -> Option<Request> {
        self.0.borrow_mut().deliver(delivery)
    }
}

/// Why the agent is not running.
#[derive(Debug, thiserror::Error)]
pub enum PolkitStartError {
    #[error("[polkit] subject: {0}")]
    Subject(pcp_polkit::StartError),
    #[error("{0}")]
    Agent(#[from] pcp_polkit::StartError),
    #[error("cannot watch the agent's events: {0}")]
    Loop(String),
}

/// Starts the agent when `[polkit]` (of the policy in force at start; checked when the config
/// was loaded) asks: `session` says whether this is a real session (on by default) or headless
/// (off unless `enabled = true`). Returns the agent's unique name on the system bus when it
/// runs, else why not (also logged). Never fatal: the session carries on without an agent.
pub fn start(compositor: &mut Compositor, session: bool) -> Result<String, String> {
    let config = compositor.state.settings.polkit.clone();
    if !config.starts(session) {
        tracing::info!("polkit agent off ([polkit] enabled)");
        return Err("[polkit] enabled is off".into());
    }
    start_with(compositor, &config).map_err(|e| {
        tracing::warn!("polkit agent not started: {e}");
        e.to_string()
    })
}

fn start_with(
    compositor: &mut Compositor,
    config: &PolkitConfig,
) -> Result<String, PolkitStartError> {
    let subject = match &config.subject {
        Some(text) => {
            SubjectChoice::Fixed(Subject::parse(text).map_err(PolkitStartError::Subject)?)
        }
        None => SubjectChoice::Auto,
    };
    let (tx, rx) = calloop::channel::channel::<AgentEvent>();
    // The sink runs on the agent's threads: it only hands the event to the event loop.
    let tx = Mutex::new(tx);
    let sink: EventSink = Box::new(move |event| {
        let sent = tx.lock().is_ok_and(|tx| tx.send(event).is_ok());
        if !sent {
            tracing::debug!("a polkit event arrived after the compositor stopped listening");
        }
    });
    let agent_config = AgentConfig {
        subject,
        max_tries: config.tries,
        ..AgentConfig::default()
    };
    let agent = Agent::start(agent_config, sink)?;
    let name = agent.bus_name().unwrap_or_default();
    let state: &mut State = &mut compositor.state;
    // The front end's id is only known once it is added: until then no event can reach it
    // (the source below is not inserted yet), so the placeholder is never used.
    let front = Rc::new(RefCell::new(Front::new(
        pcp_plugin::FrontEndId::WAYLAND,
        config.text.clone(),
    )));
    let id = state.pcp.add_front_end(Box::new(Shared(Rc::clone(&front))));
    {
        let mut front = front.borrow_mut();
        front.id = id;
        front.agent = Some(agent);
    }
    let source_front = Rc::clone(&front);
    let handle = compositor.event_loop.handle();
    handle
        .insert_source(rx, move |event, _, state: &mut State| {
            let calloop::channel::Event::Msg(event) = event else {
                return;
            };
            // The borrow ends before the engine runs: its deliveries borrow the front end.
            let commands = {
                let mut front = source_front.borrow_mut();
                let mut commands = front.session_locked(state.desktop.is_locked());
                commands.extend(front.event(event));
                commands
            };
            for command in commands {
                pcp_plugin::run(state, command);
            }
        })
        .map_err(|e| PolkitStartError::Loop(e.to_string()))?;
    // Requests held while the session was locked go on when it unlocks.
    let (ping, unlocked) =
        calloop::ping::make_ping().map_err(|e| PolkitStartError::Loop(e.to_string()))?;
    handle
        .insert_source(unlocked, move |(), _, state: &mut State| {
            let commands = front.borrow_mut().session_locked(state.desktop.is_locked());
            for command in commands {
                pcp_plugin::run(state, command);
            }
        })
        .map_err(|e| PolkitStartError::Loop(e.to_string()))?;
    compositor.state.desktop.wake_on_unlock(ping);
    Ok(name)
}
