//! Gives this package's binaries, tests and examples an rpath to libvosk, as any host of
//! pcp-plugin with its `voice` feature does (`docs/embedding.md`, "Dependencies"): the plugin's
//! build script hands libvosk's folder on as `DEP_PCP_PLUGIN_VOSK_LIBDIR`, so they run without
//! `LD_LIBRARY_PATH`.

fn main() {
    // pcp-plugin's `voice` links libvosk: its folder goes into the binary's rpath.
    if let Ok(dir) = std::env::var("DEP_PCP_PLUGIN_VOSK_LIBDIR") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
    }
}
