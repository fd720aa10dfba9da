//! `pcpctl` itself never links libvosk; its `submit` tests do, through the reference compositor
//! they serve from, and so does its `hook` bench. This gives the test and bench binaries — and
//! only them — the rpath to the copy of libvosk pcp-speech's build script puts in the profile
//! folder (`<target>/<profile>/pcp-lib/`, see speech/build.rs), so they run without
//! `LD_LIBRARY_PATH`. (A dev-dependency's build metadata does not reach this script, so the
//! folder is named here.)

/// Where the test and bench binaries (in `<target>/<profile>/deps/`) find the copy.
const RPATH: &str = "$ORIGIN/../pcp-lib";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rustc-link-arg-tests=-Wl,-rpath,{RPATH}");
    // `-tests` does not reach `[[bench]]` targets: without this the bench cannot start.
    println!("cargo:rustc-link-arg-benches=-Wl,-rpath,{RPATH}");
}
