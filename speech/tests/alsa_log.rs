//! ALSA's own error messages reach the log, not stderr: looking up a device makes cpal open
//! PCMs this machine does not define (`pipewire`, `pulse`, `jack` under the test config), and
//! each "Unknown PCM" ALSA reports must arrive as a `tracing` event with target `alsa`.

use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// Collects everything the subscriber writes.
#[derive(Clone, Default)]
struct Collected(Arc<Mutex<Vec<u8>>>);

impl Write for Collected {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn alsa_errors_of_a_device_lookup_are_logged_under_the_alsa_target() {
    let collected = Collected::default();
    let writer = collected.clone();
    tracing_subscriber::fmt()
        .with_env_filter("alsa=debug")
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .init();
    let dir = tempfile::tempdir().unwrap();
    let capture = dir.path().join("capture.raw");
    std::fs::write(&capture, [0u8; 8192]).unwrap();
    let ours = Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets/alsa/pcp-test.conf");
    // SAFETY: this test is the only one in its binary.
    unsafe {
        std::env::set_var(
            "ALSA_CONFIG_PATH",
            format!("/usr/share/alsa/alsa.conf:{}", ours.display()),
        );
        std::env::set_var("PCP_ALSA_CAPTURE_FILE", &capture);
        std::env::set_var("PCP_ALSA_PLAYBACK_FILE", dir.path().join("played.raw"));
    }
    let missing = pcp_speech::capture::input_device("pcp-no-such-microphone");
    assert!(missing.is_err(), "the device does not exist");
    let log = String::from_utf8(collected.0.lock().unwrap().clone()).unwrap();
    assert!(
        log.lines()
            .any(|l| l.contains("alsa:") && l.contains("Unknown PCM")),
        "ALSA's message went to the log: {log}"
    );
}
