//! Compiles the shipped guardrail library when the `grail` binary is built,
//! so that a cold `grail check` reads the lowered policy instead of parsing
//! and lowering twelve files (see `grail_engine::prebuilt`). The engine
//! itself is the compiler: the blob is exactly what `compile_policy` gives.
//! A library with any diagnostic yields an empty blob, and grail then
//! compiles it from source at run time as before.

use std::path::PathBuf;

fn main() {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let files: Vec<(&str, &str)> = grail_engine::shipped::FILES.to_vec();
    let blob = grail_engine::prebuilt::encode(&files).unwrap_or_default();
    let state = if blob.is_empty() { "compiled at run time" } else { "precompiled" };
    std::fs::write(out.join("shipped.policy"), &blob).expect("OUT_DIR is writable");
    println!("cargo:rustc-env=GRAIL_SHIPPED_LIBRARY={state}");
    println!("cargo:rerun-if-changed=build.rs");
}
