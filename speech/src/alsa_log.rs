//! ALSA's own error messages, routed into `tracing` (target `alsa`, debug level) instead of
//! stderr. cpal opens every PCM name it knows of when it lists devices, so on a machine without
//! PipeWire, PulseAudio or JACK each device probe (the compositor probes every few seconds) would
//! print "Unknown PCM pipewire" and the like. The handler itself is C (csrc/alsa_log.c).

use std::ffi::{CStr, c_char, c_int};
use std::sync::Once;

unsafe extern "C" {
    fn pcp_speech_route_alsa_errors() -> c_int;
}

/// Called by the C handler with the formatted message.
///
/// # Safety
/// Every pointer is null or a NUL-terminated string valid for the call (ALSA's and our C
/// handler's contract).
#[unsafe(no_mangle)]
unsafe extern "C" fn pcp_speech_alsa_message(
    file: *const c_char,
    line: c_int,
    function: *const c_char,
    err: c_int,
    message: *const c_char,
) {
    let text = |p: *const c_char| {
        if p.is_null() {
            String::new()
        } else {
            // SAFETY: non-null pointers are NUL-terminated strings (see above).
            unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
        }
    };
    tracing::debug!(
        target: "alsa",
        file = %text(file),
        line,
        function = %text(function),
        err,
        "{}",
        text(message)
    );
}

/// Installs the handler once per process (before the first device lookup).
pub fn route_alsa_errors() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: sets a process-wide handler that stays valid for the life of the process.
        let status = unsafe { pcp_speech_route_alsa_errors() };
        if status < 0 {
            tracing::warn!("ALSA's error messages cannot be routed to the log ({status})");
        }
    });
}
