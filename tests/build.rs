//! Gives the harness tests, benches and examples (`pcp-harness`) the rpath to the recognizers'
//! libraries that pcp-speech's build script hands us (`DEP_VOSK_RPATH`, relative to `$ORIGIN`):
//! they link pcp-speech through pcp-compositor, and run without `LD_LIBRARY_PATH`, whoever runs
//! them.

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
