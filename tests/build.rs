//! Gives the harness tests and benches an rpath to libvosk (they link pcp-speech through
//! pcp-compositor): pcp-speech's build script hands us `DEP_VOSK_LIBDIR`, so they run without
//! `LD_LIBRARY_PATH`.

fn main() {
    println!("cargo:rerun-if-env-changed=DEP_VOSK_LIBDIR");
    if let Ok(dir) = std::env::var("DEP_VOSK_LIBDIR") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
        // The polkit agent test copies libvosk where its test user can load it.
        println!("cargo:rustc-env=PCP_VOSK_LIBDIR={dir}");
    }
}
