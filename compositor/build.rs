//! Gives this package's binaries, tests and examples the rpath to libvosk that pcp-speech's build
//! script hands us (`links = "vosk"`: `DEP_VOSK_RPATH`, relative to `$ORIGIN`), so they run without
//! `LD_LIBRARY_PATH`, whoever runs them.

fn main() {
    println!("cargo:rerun-if-env-changed=DEP_VOSK_RPATH");
    if let Ok(rpath) = std::env::var("DEP_VOSK_RPATH") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{rpath}");
    }
}
