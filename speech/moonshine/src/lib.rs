//! The part of Moonshine's C API (`moonshine-c-api.h`, libmoonshine from the PyPI wheel
//! `moonshine-voice==0.1.0`) that pcp-speech's English recognizer uses: loading a transcriber
//! from its model files, transcribing a block of audio, and streams (audio added as it arrives,
//! transcribed when asked).
//!
//! **What is checked.** The library's version against the header this binding was written for
//! ([`HEADER_VERSION`]; the same major release, and not older); every returned handle and error
//! code; the struct sizes the binding reads (asserted at compile time, as the wheel's own
//! `moonshine_api.py` asserts them at import); null pointers and counts of every array read, with
//! a bound on each; text is read as UTF-8 with invalid bytes replaced. Audio lengths are passed
//! from the slices themselves.
//!
//! **Lifetimes.** The library owns every transcript it returns, "valid until the next call to
//! that transcriber": each [`Transcriber`] serializes the calls that return one behind a mutex
//! and copies the lines out before releasing it. Handles are freed on drop (a stream before its
//! transcriber: a [`Stream`] holds an `Arc` of it).
//!
//! **Failures.** The C API reports errors as negative codes and catches the C++ exceptions of
//! its own code; those come back here as [`MoonshineError`]. A fault that aborts inside the
//! library or its ONNX Runtime (`std::terminate`, `abort()`, a segmentation fault) cannot be
//! caught in-process and ends the process, as a crash inside libvosk would.

use std::ffi::{CStr, CString, c_char};
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

/// The header version this binding was written against (`MOONSHINE_HEADER_VERSION` of the
/// 0.1.0 wheel's `moonshine_api.py`): passed to the loader so a newer library behaves like this
/// one, and compared with the loaded library's own version.
pub const HEADER_VERSION: i32 = 30_000;

/// The environment variable libmoonshine reads when it makes its ONNX Runtime sessions: set,
/// inference runs on the calling thread alone. Without it ONNX Runtime starts a pool of threads
/// that spin while they wait; on one CPU a short answer then took about three times as long to
/// transcribe (measured here: median 280 against 94 ms for 1.5 s of audio).
pub const ONE_THREAD_ENV: &str = "MOONSHINE_ORT_SINGLE_THREAD";

/// Sets [`ONE_THREAD_ENV`] to `1` unless the environment already sets it.
///
/// # Safety
/// As for [`std::env::set_var`]: no other thread may read or write the environment meanwhile.
/// Call it first thing in `main`, before any thread starts.
pub unsafe fn prefer_one_thread() {
    if std::env::var_os(ONE_THREAD_ENV).is_none() {
        // SAFETY: the caller guarantees no other thread touches the environment.
        unsafe { std::env::set_var(ONE_THREAD_ENV, "1") };
    }
}

/// The rate the library works at: other rates are resampled inside it.
pub const SAMPLE_RATE: u32 = 16_000;

/// At most this many lines, words or bytes of text are read from one transcript: far beyond
/// anything a voice prompt produces, and a bound against walking a corrupt count.
const MAX_LINES: u64 = 100_000;
const MAX_TEXT_BYTES: usize = 1 << 20;

/// The C declarations, exactly as `moonshine-c-api.h` (header version 30000) has them.
mod ffi {
    use std::ffi::c_char;

    #[repr(C)]
    pub struct Option_ {
        pub name: *const c_char,
        pub value: *const c_char,
    }

    #[repr(C)]
    pub struct Word {
        pub text: *const c_char,
        pub start: f32,
        pub end: f32,
        pub confidence: f32,
    }

    #[repr(C)]
    pub struct SpeakerSpan {
        pub start_time: f32,
        pub duration: f32,
        pub speaker_id: u64,
        pub speaker_index: u32,
        pub start_char: u64,
        pub end_char: u64,
    }

    #[repr(C)]
    pub struct Line {
        pub text: *const c_char,
        pub audio_data: *const f32,
        pub audio_data_count: usize,
        pub start_time: f32,
        pub duration: f32,
        pub id: u64,
        pub is_complete: i8,
        pub is_updated: i8,
        pub is_new: i8,
        pub has_text_changed: i8,
        pub have_speakers_changed: i8,
        pub speaker_spans: *const SpeakerSpan,
        pub speaker_span_count: u64,
        pub last_transcription_latency_ms: u32,
        pub words: *const Word,
        pub word_count: u64,
    }

    #[repr(C)]
    pub struct Transcript {
        pub lines: *const Line,
        pub line_count: u64,
    }

    // The sizes the wheel's binding asserts for the 64-bit ABI: a drift would make the line
    // array walked with the wrong stride.
    const _: () = assert!(size_of::<Word>() == 24);
    const _: () = assert!(size_of::<SpeakerSpan>() == 40);
    const _: () = assert!(size_of::<Line>() == 88);
    const _: () = assert!(size_of::<Transcript>() == 16);

    unsafe extern "C" {
        pub fn moonshine_get_version() -> i32;
        pub fn moonshine_error_to_string(error: i32) -> *const c_char;
        pub fn moonshine_load_transcriber_from_files(
            path: *const c_char,
            model_arch: u32,
            options: *const Option_,
            options_count: u64,
            moonshine_version: i32,
        ) -> i32;
        pub fn moonshine_free_transcriber(transcriber: i32);
        pub fn moonshine_transcribe_without_streaming(
            transcriber: i32,
            audio_data: *mut f32,
            audio_length: u64,
            sample_rate: i32,
            flags: u32,
            out_transcript: *mut *mut Transcript,
        ) -> i32;
        pub fn moonshine_create_stream(transcriber: i32, flags: u32) -> i32;
        pub fn moonshine_free_stream(transcriber: i32, stream: i32) -> i32;
        pub fn moonshine_start_stream(transcriber: i32, stream: i32) -> i32;
        pub fn moonshine_stop_stream(transcriber: i32, stream: i32) -> i32;
        pub fn moonshine_transcribe_add_audio_to_stream(
            transcriber: i32,
            stream: i32,
            new_audio_data: *const f32,
            audio_length: u64,
            sample_rate: i32,
            flags: u32,
        ) -> i32;
        pub fn moonshine_transcribe_stream(
            transcriber: i32,
            stream: i32,
            flags: u32,
            out_transcript: *mut *mut Transcript,
        ) -> i32;
    }
}

/// `MOONSHINE_FLAG_FORCE_UPDATE`: transcribe now, whatever the library's own interval says.
const FLAG_FORCE_UPDATE: u32 = 1;

/// What went wrong, naming the call and the library's own message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MoonshineError {
    /// The loaded library is not a release this binding was written for.
    #[error(
        "libmoonshine reports version {library}, but this program was built for header version \
         {HEADER_VERSION} (the same major release, not older)"
    )]
    Version { library: i32 },
    /// A call returned an error code.
    #[error("{call} failed: {message} ({code})")]
    Call {
        call: &'static str,
        code: i32,
        message: String,
    },
    /// An argument this binding refuses before calling (a path or option with a NUL byte, an
    /// audio block too long to pass).
    #[error("{0}")]
    Argument(String),
}

/// The model's architecture (`MOONSHINE_MODEL_ARCH_*`): which files the directory holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arch {
    Tiny = 0,
    Base = 1,
}

/// One line of a transcript, copied out of the library's memory.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// The text as the model wrote it (case, punctuation and all); empty when the voice activity
    /// detector found speech but the model no words.
    pub text: String,
    /// Where the line starts in the stream or the audio, and how long it is, in seconds.
    pub start_s: f32,
    pub duration_s: f32,
    /// The library's stable identifier of the line.
    pub id: u64,
    /// The speaker has finished this line (streams; always true without streaming).
    pub complete: bool,
    /// Its text changed since the previous call.
    pub text_changed: bool,
}

/// The library's version (`MAJOR * 10000 + MINOR * 100 + PATCH`).
pub fn library_version() -> i32 {
    // SAFETY: no arguments, no preconditions.
    unsafe { ffi::moonshine_get_version() }
}

/// Fails unless the loaded library is the header's major release and not older than it.
pub fn check_version() -> Result<(), MoonshineError> {
    let library = library_version();
    if library / 10_000 == HEADER_VERSION / 10_000 && library >= HEADER_VERSION {
        Ok(())
    } else {
        Err(MoonshineError::Version { library })
    }
}

/// The library's message for an error code.
fn message(code: i32) -> String {
    // SAFETY: returns null or a static NUL-terminated string owned by the library.
    let text = unsafe { ffi::moonshine_error_to_string(code) };
    if text.is_null() {
        return "no message".into();
    }
    // SAFETY: non-null, NUL-terminated, static (checked above).
    let text = unsafe { CStr::from_ptr(text) };
    text.to_string_lossy().chars().take(500).collect()
}

/// `Ok(())` for `MOONSHINE_ERROR_NONE`, else the error naming `call`.
fn checked(call: &'static str, code: i32) -> Result<i32, MoonshineError> {
    if code < 0 {
        Err(MoonshineError::Call {
            call,
            code,
            message: message(code),
        })
    } else {
        Ok(code)
    }
}

/// A loaded model. Every call that returns a transcript holds its lock until the lines are
/// copied, so no other call on the transcriber can free them meanwhile.
pub struct Transcriber {
    handle: i32,
    calls: Mutex<()>,
}

impl std::fmt::Debug for Transcriber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transcriber")
            .field("handle", &self.handle)
            .finish()
    }
}

impl Transcriber {
    /// Loads the model files in `dir` (`encoder_model.ort`, `decoder_model_merged.ort`,
    /// `tokenizer.bin`) with `options` (`name`, `value` pairs the C API reads, such as
    /// `vad_threshold`), after checking the library's version.
    pub fn load(
        dir: &Path,
        arch: Arch,
        options: &[(String, String)],
    ) -> Result<Transcriber, MoonshineError> {
        check_version()?;
        let nul = |what: &str| MoonshineError::Argument(format!("{what} has a NUL byte"));
        let path = CString::new(dir.as_os_str().as_encoded_bytes())
            .map_err(|_| nul(&format!("the model path {}", dir.display())))?;
        let mut owned = Vec::with_capacity(options.len());
        for (name, value) in options {
            let name_c = CString::new(name.as_str()).map_err(|_| nul("an option name"))?;
            let value_c = CString::new(value.as_str()).map_err(|_| nul("an option value"))?;
            owned.push((name_c, value_c));
        }
        let raw: Vec<ffi::Option_> = owned
            .iter()
            .map(|(n, v)| ffi::Option_ {
                name: n.as_ptr(),
                value: v.as_ptr(),
            })
            .collect();
        // SAFETY: `path` and every option string live until the call returns; the array holds
        // `raw.len()` options (a null pointer with a count of zero is what the C API takes).
        let handle = unsafe {
            ffi::moonshine_load_transcriber_from_files(
                path.as_ptr(),
                arch as u32,
                if raw.is_empty() {
                    std::ptr::null()
                } else {
                    raw.as_ptr()
                },
                raw.len() as u64,
                HEADER_VERSION,
            )
        };
        let handle = checked("moonshine_load_transcriber_from_files", handle)?;
        Ok(Transcriber {
            handle,
            calls: Mutex::new(()),
        })
    }

    fn lock(&self) -> MutexGuard<'_, ()> {
        // The guard protects no data of ours, only the library's: a panic elsewhere leaves
        // nothing inconsistent here.
        self.calls.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Transcribes `audio` (mono, −1..1, at `rate` Hz) in one call: the library finds the speech
    /// in it with its voice activity detector and returns one complete line per stretch of
    /// speech.
    pub fn transcribe(&self, audio: &[f32], rate: u32) -> Result<Vec<Line>, MoonshineError> {
        let rate = i32::try_from(rate)
            .map_err(|_| MoonshineError::Argument(format!("a sample rate of {rate} Hz")))?;
        // The C API takes a mutable pointer; it gets a copy, never the caller's slice.
        let mut copy = audio.to_vec();
        let _calls = self.lock();
        let mut out: *mut ffi::Transcript = std::ptr::null_mut();
        // SAFETY: `copy` holds `copy.len()` samples for the call; `out` is written by it.
        let code = unsafe {
            ffi::moonshine_transcribe_without_streaming(
                self.handle,
                copy.as_mut_ptr(),
                copy.len() as u64,
                rate,
                0,
                &mut out,
            )
        };
        checked("moonshine_transcribe_without_streaming", code)?;
        // SAFETY: on success `out` is null or the library's transcript, valid while we hold
        // the lock (no other call on this transcriber can run).
        Ok(unsafe { read_transcript(out) })
    }

    /// A new stream on this model, started.
    pub fn stream(self: &Arc<Self>) -> Result<Stream, MoonshineError> {
        // SAFETY: a live transcriber handle.
        let handle = unsafe { ffi::moonshine_create_stream(self.handle, 0) };
        let handle = checked("moonshine_create_stream", handle)?;
        let stream = Stream {
            transcriber: Arc::clone(self),
            handle,
        };
        stream.start()?;
        Ok(stream)
    }
}

impl Drop for Transcriber {
    fn drop(&mut self) {
        // SAFETY: our handle, freed once; every stream holds an Arc of us, so none is left.
        unsafe { ffi::moonshine_free_transcriber(self.handle) };
    }
}

/// One stream: audio is added as it arrives and transcribed when asked. Its lines cover the
/// speech since it was (re)started.
pub struct Stream {
    transcriber: Arc<Transcriber>,
    handle: i32,
}

impl Stream {
    /// The model this stream runs on.
    pub fn transcriber(&self) -> &Transcriber {
        &self.transcriber
    }

    /// Starts (or restarts) the stream: what comes after is a new stretch of audio.
    pub fn start(&self) -> Result<(), MoonshineError> {
        // SAFETY: live handles.
        let code = unsafe { ffi::moonshine_start_stream(self.transcriber.handle, self.handle) };
        checked("moonshine_start_stream", code).map(|_| ())
    }

    /// Stops the stream: the speech so far is complete (transcribe once more to read it).
    pub fn stop(&self) -> Result<(), MoonshineError> {
        // SAFETY: live handles.
        let code = unsafe { ffi::moonshine_stop_stream(self.transcriber.handle, self.handle) };
        checked("moonshine_stop_stream", code).map(|_| ())
    }

    /// Adds `audio` (mono, −1..1, at `rate` Hz) to the stream; nothing is transcribed yet.
    pub fn add_audio(&self, audio: &[f32], rate: u32) -> Result<(), MoonshineError> {
        let rate = i32::try_from(rate)
            .map_err(|_| MoonshineError::Argument(format!("a sample rate of {rate} Hz")))?;
        // SAFETY: live handles; `audio` holds `audio.len()` samples for the call, which only
        // copies them.
        let code = unsafe {
            ffi::moonshine_transcribe_add_audio_to_stream(
                self.transcriber.handle,
                self.handle,
                audio.as_ptr(),
                audio.len() as u64,
                rate,
                0,
            )
        };
        checked("moonshine_transcribe_add_audio_to_stream", code).map(|_| ())
    }

    /// The stream's lines since it was started: transcribed now with `force`, else only where
    /// the library's own interval (`transcription_interval`) has passed (its voice activity
    /// detector runs either way).
    pub fn transcribe(&self, force: bool) -> Result<Vec<Line>, MoonshineError> {
        let flags = if force { FLAG_FORCE_UPDATE } else { 0 };
        let _calls = self.transcriber.lock();
        let mut out: *mut ffi::Transcript = std::ptr::null_mut();
        // SAFETY: live handles; `out` is written by the call.
        let code = unsafe {
            ffi::moonshine_transcribe_stream(self.transcriber.handle, self.handle, flags, &mut out)
        };
        checked("moonshine_transcribe_stream", code)?;
        // SAFETY: as in `Transcriber::transcribe`: valid while the lock is held.
        Ok(unsafe { read_transcript(out) })
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        // SAFETY: our handles, the stream freed once, before its transcriber (we hold an Arc).
        unsafe { ffi::moonshine_free_stream(self.transcriber.handle, self.handle) };
    }
}

/// Copies the lines of a transcript the library returned.
///
/// # Safety
/// `transcript` is null or points to a `transcript_t` the library owns and keeps valid for the
/// whole call.
unsafe fn read_transcript(transcript: *const ffi::Transcript) -> Vec<Line> {
    // SAFETY: per the contract, null or valid.
    let Some(transcript) = (unsafe { transcript.as_ref() }) else {
        return Vec::new();
    };
    if transcript.lines.is_null() || transcript.line_count == 0 {
        return Vec::new();
    }
    let count = transcript.line_count.min(MAX_LINES) as usize;
    // SAFETY: the library's array of `line_count` lines (bounded above).
    let lines = unsafe { std::slice::from_raw_parts(transcript.lines, count) };
    lines
        .iter()
        .map(|l| Line {
            // SAFETY: null or a NUL-terminated string the library owns for the call.
            text: unsafe { text(l.text) },
            start_s: l.start_time,
            duration_s: l.duration,
            id: l.id,
            complete: l.is_complete != 0,
            text_changed: l.has_text_changed != 0,
        })
        .collect()
}

/// A C string as UTF-8 (invalid bytes replaced), at most [`MAX_TEXT_BYTES`] long.
///
/// # Safety
/// `text` is null or a NUL-terminated string valid for the call.
unsafe fn text(text: *const c_char) -> String {
    if text.is_null() {
        return String::new();
    }
    // SAFETY: per the contract.
    let bytes = unsafe { CStr::from_ptr(text) }.to_bytes();
    String::from_utf8_lossy(&bytes[..bytes.len().min(MAX_TEXT_BYTES)]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_loaded_library_is_the_release_this_binding_was_written_for() {
        check_version().unwrap();
        assert_eq!(library_version(), HEADER_VERSION);
    }

    #[test]
    fn a_missing_model_is_an_error_with_the_library_message() {
        let dir = std::env::temp_dir().join("pcp-moonshine-no-such-model");
        let e = Transcriber::load(&dir, Arch::Tiny, &[]).unwrap_err();
        match &e {
            MoonshineError::Call { call, code, .. } => {
                assert_eq!(*call, "moonshine_load_transcriber_from_files");
                assert!(*code < 0);
            }
            other => panic!("{other:?}"),
        }
        let e = Transcriber::load(Path::new("a\0b"), Arch::Tiny, &[]).unwrap_err();
        assert!(matches!(e, MoonshineError::Argument(_)), "{e}");
    }

    #[test]
    fn a_null_transcript_or_text_reads_as_nothing() {
        // SAFETY: null is allowed by both.
        assert!(unsafe { read_transcript(std::ptr::null()) }.is_empty());
        assert_eq!(unsafe { text(std::ptr::null()) }, "");
        let empty = ffi::Transcript {
            lines: std::ptr::null(),
            line_count: 5,
        };
        // SAFETY: a valid transcript whose array is null: nothing is read.
        assert!(unsafe { read_transcript(&empty) }.is_empty());
    }
}
