//! Gives the harness tests and benches an rpath to libvosk (and libmoonshine) (they link pcp-speech through
//! pcp-compositor): pcp-speech's build script hands us `DEP_VOSK_LIBDIR`, so they run without
//! `LD_LIBRARY_PATH`.

fn main() {
    // libmoonshine (the English recognizer), when pcp-speech is built with it.
    println!("cargo:rerun-if-env-changed=DEP_VOSK_MOONSHINE_LIBDIR");
    if let Ok(dir) = std::env::var("DEP_VOSK_MOONSHINE_LIBDIR") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
        println!("cargo:rustc-link-arg=-Wl,-rpath-link,{dir}");
        // The polkit agent test copies libmoonshine and its ONNX Runtime like libvosk.
        println!("cargo:rustc-env=PCP_MOONSHINE_LIBDIR={dir}");
    }
    println!("cargo:rerun-if-env-changed=DEP_VOSK_LIBDIR");
    if let Ok(dir) = std::env::var("DEP_VOSK_LIBDIR") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
        // The polkit agent test copies libvosk where its test user can load it.
        println!("cargo:rustc-env=PCP_VOSK_LIBDIR={dir}");
    }
}
