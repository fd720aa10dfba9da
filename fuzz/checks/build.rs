//! Gives this crate's binaries an rpath to libvosk: they link pcp-speech (for its phrase
//! matcher), whose build script hands its direct dependents `DEP_VOSK_RPATH` (relative to `$ORIGIN`).

fn main() {
    println!("cargo:rerun-if-env-changed=DEP_VOSK_RPATH");
    if let Ok(rpath) = std::env::var("DEP_VOSK_RPATH") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{rpath}");
    }
}
