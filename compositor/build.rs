//! Gives this package's binaries, tests and examples the rpath to the recognizers' libraries
//! (libvosk; libmoonshine and its ONNX Runtime) that pcp-speech's build script hands us
//! (`links = "vosk"`: `DEP_VOSK_RPATH`, relative to `$ORIGIN`), so they run without
//! `LD_LIBRARY_PATH`, whoever runs them.

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
