//! Gives this package's binaries, tests and examples the rpath to the recognizer libraries
//! (libvosk; libmoonshine and its ONNX Runtime), as any host of pcp-plugin with its `voice`
//! feature does (`docs/embedding.md`, "Dependencies", quotes this function): the plugin's build
//! script hands it on as `DEP_PCP_PLUGIN_VOSK_RPATH` (relative to `$ORIGIN`, the `pcp-lib`
//! folder beside the build's binaries), so they run without `LD_LIBRARY_PATH`, whoever runs
//! them.

fn main() {
    // pcp-plugin's `voice` links the recognizers: their folder goes into the binary's rpath.
    println!("cargo:rerun-if-env-changed=DEP_PCP_PLUGIN_VOSK_RPATH");
    if let Ok(rpath) = std::env::var("DEP_PCP_PLUGIN_VOSK_RPATH") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{rpath}");
    }
    // libmoonshine's ONNX Runtime is found beside it when linking.
    println!("cargo:rerun-if-env-changed=DEP_PCP_PLUGIN_VOSK_LIBDIR");
    if let Ok(dir) = std::env::var("DEP_PCP_PLUGIN_VOSK_LIBDIR") {
        println!("cargo:rustc-link-arg=-Wl,-rpath-link,{dir}");
    }
}
