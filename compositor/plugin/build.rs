//! libvosk's folder for the plugin's own tests and for the host that embeds it. pcp-speech's
//! build script finds libvosk (`links = "vosk"` hands us `DEP_VOSK_LIBDIR` when the `voice`
//! feature is on). `cargo:rustc-link-arg` reaches only this package's own targets, so the rpath
//! below serves the plugin's tests; a host's binary gets it from the host's own build script,
//! which reads `DEP_PCP_PLUGIN_VOSK_LIBDIR` (this package declares `links = "pcp-plugin"`, so
//! the `cargo:vosk_libdir=` line reaches the build script of every crate that depends on it
//! directly). `docs/embedding.md` gives the host's three lines.

fn main() {
    println!("cargo:rerun-if-env-changed=DEP_VOSK_LIBDIR");
    if let Ok(dir) = std::env::var("DEP_VOSK_LIBDIR") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
        println!("cargo:vosk_libdir={dir}");
    }
}
