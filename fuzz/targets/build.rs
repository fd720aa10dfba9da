//! Gives this crate's binaries an rpath to the recognizers' libraries: they link pcp-speech (for
//! its phrase matcher), whose build script hands its direct dependents `DEP_VOSK_RPATH` (relative
//! to `$ORIGIN`).

fn main() {
    println!("cargo:rerun-if-env-changed=DEP_VOSK_RPATH");
    if let Ok(rpath) = std::env::var("DEP_VOSK_RPATH") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{rpath}");
    }
    // The linker reads what the libraries there need (libmoonshine's ONNX Runtime) from the
    // same folder.
    println!("cargo:rerun-if-env-changed=DEP_VOSK_LIBDIR");
    if let Ok(dir) = std::env::var("DEP_VOSK_LIBDIR") {
        println!("cargo:rustc-link-arg=-Wl,-rpath-link,{dir}");
    }
}
