//! Gives this package's tests an rpath to libvosk (and libmoonshine), found by pcp-speech's
//! build script (`links = "vosk"` hands us `DEP_VOSK_LIBDIR`), so they run without
//! `LD_LIBRARY_PATH`.

fn main() {
    // libmoonshine (the English recognizer), when pcp-speech is built with it.
    println!("cargo:rerun-if-env-changed=DEP_VOSK_MOONSHINE_LIBDIR");
    if let Ok(dir) = std::env::var("DEP_VOSK_MOONSHINE_LIBDIR") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
        println!("cargo:rustc-link-arg=-Wl,-rpath-link,{dir}");
    }
    println!("cargo:rerun-if-env-changed=DEP_VOSK_LIBDIR");
    if let Ok(dir) = std::env::var("DEP_VOSK_LIBDIR") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
    }
}
