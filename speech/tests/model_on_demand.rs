//! The model is in memory only around voice prompts: an engine starts with it unloaded (loading
//! it at once only with `load_at_start`), a prompt loads it (the listener waits for it, then
//! hears the answer through the real device path), it is released after `unload_after_s`
//! without a prompt, and the next prompt loads it again. This binary holds only this test: it
//! sets ALSA's environment.

mod common;

use std::time::{Duration, Instant};

use common::{device_config, device_encoding, point_alsa_at, speech};
use pcp_speech::{Config, KeeperState, SpeechEngine, SpeechEvent, SpokenAnswer};

/// Polls `listener` until it ends (a guard against a hang, not a timing assertion), noting the
/// model's state when listening began.
fn answer(engine: &SpeechEngine) -> (Vec<SpeechEvent>, Option<KeeperState>) {
    let mut listener = engine.ask("질문");
    let guard = Instant::now() + Duration::from_secs(120);
    let mut events = Vec::new();
    let mut state_when_listening = None;
    while !listener.is_done() && Instant::now() < guard {
        match listener.poll() {
            Some(e) => {
                if matches!(e, SpeechEvent::Listening { .. }) && state_when_listening.is_none() {
                    state_when_listening = Some(engine.model_state());
                }
                events.push(e);
            }
            None => std::thread::sleep(Duration::from_millis(5)),
        }
    }
    (events, state_when_listening)
}

fn wait_for(engine: &SpeechEngine, want: KeeperState, within: Duration) -> bool {
    let until = Instant::now() + within;
    while Instant::now() < until {
        if engine.model_state() == want {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

#[test]
fn a_prompt_loads_the_model_waits_for_it_and_an_idle_engine_releases_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.raw");
    let placeholder = dir.path().join("none.raw");
    std::fs::write(&placeholder, [0u8; 8192]).unwrap();
    // SAFETY: the only test of this binary; no other thread reads the environment.
    unsafe { point_alsa_at(&placeholder, &out) };
    // The load counts against the prompt's timeout; on a machine busy enough to stretch a ~2 s
    // load toward 10 s the answer would time out, which is not what this test is about.
    let cfg = Config {
        unload_after_s: 1,
        timeout_ms: 60_000,
        ..device_config()
    };
    let enc = device_encoding(&cfg);
    let engine = SpeechEngine::start(cfg);
    assert_eq!(
        engine.model_state(),
        KeeperState::Unloaded,
        "nothing loads at start"
    );
    assert_eq!(
        engine.available(),
        Ok(()),
        "an unloaded model is no reason to drop voice"
    );

    // The first prompt loads the model; the listener listens only once it is loaded.
    let yes = speech(dir.path(), "yes.raw", "네", 44_100, 2, enc, (0.5, 1.5));
    // SAFETY: as above.
    unsafe { point_alsa_at(&yes, &out) };
    let (events, state) = answer(&engine);
    assert_eq!(state, Some(KeeperState::Ready), "{events:?}");
    assert!(
        matches!(
            events.last(),
            Some(SpeechEvent::Heard {
                answer: SpokenAnswer::Approve,
                ..
            })
        ),
        "{events:?}"
    );
    assert_eq!(engine.model_loads(), 1);

    // Idle for `unload_after_s`: released.
    assert!(
        wait_for(&engine, KeeperState::Unloaded, Duration::from_secs(30)),
        "still {:?}",
        engine.model_state()
    );

    // The next prompt loads it again.
    let deny = speech(dir.path(), "no.raw", "아니요", 44_100, 2, enc, (0.5, 1.5));
    // SAFETY: as above.
    unsafe { point_alsa_at(&deny, &out) };
    let (events, state) = answer(&engine);
    assert_eq!(state, Some(KeeperState::Ready), "{events:?}");
    assert!(
        matches!(
            events.last(),
            Some(SpeechEvent::Heard {
                answer: SpokenAnswer::Deny,
                ..
            })
        ),
        "{events:?}"
    );
    assert_eq!(engine.model_loads(), 2);

    // `prepare` starts a load ahead of a prompt without waiting for it.
    assert!(wait_for(
        &engine,
        KeeperState::Unloaded,
        Duration::from_secs(30)
    ));
    engine.prepare();
    assert_ne!(engine.model_state(), KeeperState::Unloaded);
    assert!(wait_for(
        &engine,
        KeeperState::Ready,
        Duration::from_secs(60)
    ));
    assert_eq!(engine.model_loads(), 3);

    // A load that outlasts the prompt's timeout ends it as a timeout: the listener never
    // reports listening with no model to listen with.
    let hurried = SpeechEngine::start(Config {
        timeout_ms: 50,
        ..device_config()
    });
    let (events, state) = answer(&hurried);
    assert_eq!(state, None, "never listening: {events:?}");
    assert!(
        matches!(events.last(), Some(SpeechEvent::Timeout)),
        "{events:?}"
    );
    drop(hurried);

    // `load_at_start`: the engine loads the model before any prompt asks for it.
    let eager = SpeechEngine::start(Config {
        load_at_start: true,
        ..device_config()
    });
    assert_ne!(
        eager.model_state(),
        KeeperState::Unloaded,
        "loading from the start"
    );
    assert!(
        wait_for(&eager, KeeperState::Ready, Duration::from_secs(60)),
        "still {:?}",
        eager.model_state()
    );
    assert_eq!(eager.model_loads(), 1);
}
