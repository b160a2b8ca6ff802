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
    // Linked at a fixed address rather than as a position-independent
    // executable on Linux with glibc: the loader then relocates nothing of
    // the binary's own (35,000 pointers of `.data.rel.ro`, each page of it
    // copied and written at start, a sixth of a cold check's page faults).
    // Not for musl, whose static binaries rustc links as static-pie (that
    // needs `-C relocation-model=static` for every crate, not a link flag).
    let target = |key: &str| std::env::var(key).unwrap_or_default();
    if target("CARGO_CFG_TARGET_OS") == "linux" && target("CARGO_CFG_TARGET_ENV") == "gnu" {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
