//! Gives this crate's binaries an rpath to libvosk (and libmoonshine): they link pcp-speech (for its phrase
//! matcher), whose build script hands its direct dependents `DEP_VOSK_LIBDIR`.

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
