//! Exiting while the model still loads: a process whose `SpeechEngine` started loading the model
//! (`prepare`, as the compositor does when a voice prompt begins) and then ends (main returns; here the test harness exits after its only test) must exit
//! cleanly. Without `SpeechEngine`'s shutdown-on-drop it can die with SIGSEGV, or OpenBLAS's
//! "Bad memory unallocation", when libvosk's exit-time teardown (its bundled OpenBLAS frees its
//! buffers) runs while the load thread is still computing inside Vosk. The race hits only some
//! exits, so each round runs this binary again as a child that starts engines and returns after
//! a different delay, and the exit falls at different points of the load.

use std::process::Command;
use std::time::Duration;

use pcp_speech::{Config, SpeechEngine};

/// The child's entry: only run by `exiting_while_the_model_loads_exits_cleanly`.
const CHILD: &str = "child_starts_an_engine_and_returns_at_once";
const DELAY_VAR: &str = "PCP_SPEECH_TEST_EXIT_AFTER_MS";
/// Engines (model loads) per child, started this many milliseconds apart.
const ENGINES: usize = 2;
const ENGINE_SPACING_MS: u64 = 60;
/// The children exit this long after their last engine started, in 25 ms steps: where runs
/// without the fix crashed here (the load's first matrix work).
const EXIT_FROM_MS: u64 = 125;
const EXIT_TO_MS: u64 = 325;
/// What libvosk's bundled OpenBLAS prints when its exit-time teardown frees buffers that a
/// load still uses (the other face of the crash).
const BLAS_TEARDOWN: &str = "Bad memory unallocation";

#[test]
#[ignore = "the child process of exiting_while_the_model_loads_exits_cleanly"]
fn child_starts_an_engine_and_returns_at_once() {
    let delay: u64 = std::env::var(DELAY_VAR)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    // Several loads at once, started apart, make it likely that one is inside Vosk at exit.
    let mut engines = Vec::new();
    for _ in 0..ENGINES {
        let engine = SpeechEngine::start(Config::for_language("ko"));
        engine.prepare();
        engines.push(engine);
        std::thread::sleep(Duration::from_millis(ENGINE_SPACING_MS));
    }
    std::thread::sleep(Duration::from_millis(delay));
    drop(engines);
}

#[test]
fn exiting_while_the_model_loads_exits_cleanly() {
    // Finding the model must work here, or the child would exit without loading anything.
    pcp_speech::model::find_model(None, "ko").expect("the Korean model (run `cargo xtask setup`)");
    let exe = std::env::current_exe().unwrap();
    for (round, delay_ms) in (EXIT_FROM_MS..=EXIT_TO_MS).step_by(25).enumerate() {
        let out = Command::new(&exe)
            .args([
                "--ignored",
                "--exact",
                CHILD,
                "--nocapture",
                "--test-threads=1",
            ])
            .env(DELAY_VAR, delay_ms.to_string())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && stdout.contains("1 passed") && !stderr.contains(BLAS_TEARDOWN),
            "round {round} (exit after {delay_ms} ms): {:?}\n{stdout}\n{}",
            out.status,
            stderr,
        );
    }
}
