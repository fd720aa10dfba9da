//! Gives the module an rpath to libvosk (it links pcp-speech through pcp-compositor):
//! pcp-speech's build script hands us `DEP_VOSK_LIBDIR`, so WLCS loads the module without
//! `LD_LIBRARY_PATH`.

fn main() {
    println!("cargo:rerun-if-env-changed=DEP_VOSK_LIBDIR");
    if let Ok(dir) = std::env::var("DEP_VOSK_LIBDIR") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
    }
}
