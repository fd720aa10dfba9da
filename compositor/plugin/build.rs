//! Gives this package's tests an rpath to libvosk, found by pcp-speech's
//! build script (`links = "vosk"` hands us `DEP_VOSK_LIBDIR`), so they run without
//! `LD_LIBRARY_PATH`.

fn main() {
    println!("cargo:rerun-if-env-changed=DEP_VOSK_LIBDIR");
    if let Ok(dir) = std::env::var("DEP_VOSK_LIBDIR") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
    }
}
