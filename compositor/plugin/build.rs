//! Recognizer libraries for the plugin's own tests and for the host that embeds it. pcp-speech's
//! build script stages libvosk, libmoonshine and its ONNX Runtime in a `pcp-lib` folder beside
//! the build's binaries and hands us (`links = "vosk"`, when the `voice` feature is on) the rpath
//! to it, relative to `$ORIGIN`, as `DEP_VOSK_RPATH`, and the folder itself as `DEP_VOSK_LIBDIR`.
//! `cargo:rustc-link-arg` reaches only this package's own targets, so the lines below serve the
//! plugin's tests; a host's binary gets them from the host's own build script, which reads
//! `DEP_PCP_PLUGIN_VOSK_RPATH` and `DEP_PCP_PLUGIN_VOSK_LIBDIR` (this package declares
//! `links = "pcp-plugin"`, so the `cargo:vosk_*=` lines reach the build script of every crate
//! that depends on it directly). `docs/embedding.md` gives the host's lines.

fn main() {
    println!("cargo:rerun-if-env-changed=DEP_VOSK_RPATH");
    println!("cargo:rerun-if-env-changed=DEP_VOSK_LIBDIR");
    if let Ok(rpath) = std::env::var("DEP_VOSK_RPATH") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{rpath}");
        println!("cargo:vosk_rpath={rpath}");
    }
    // The linker reads what the libraries there need (libmoonshine's ONNX Runtime) from the
    // same folder.
    if let Ok(dir) = std::env::var("DEP_VOSK_LIBDIR") {
        println!("cargo:rustc-link-arg=-Wl,-rpath-link,{dir}");
        println!("cargo:vosk_libdir={dir}");
    }
}
