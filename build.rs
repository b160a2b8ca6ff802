//! Compiles the shipped guardrail library when the `grail` binary is built,
//! so that a cold `grail check` reads the lowered policy instead of parsing
//! and lowering twelve files (see `grail_engine::prebuilt`). The engine
//! itself is the compiler: the blob is exactly what `compile_policy` gives.
//! A library with any diagnostic yields an empty blob, and grail then
//! compiles it from source at run time as before.
//!
//! It also links the binary with packed relative relocations where the
//! toolchain and the C library support them ([`packed_relocations`]).

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let files: Vec<(&str, &str)> = grail_engine::shipped::FILES.to_vec();
    let blob = grail_engine::prebuilt::encode(&files).unwrap_or_default();
    let state = if blob.is_empty() { "compiled at run time" } else { "precompiled" };
    std::fs::write(out.join("shipped.policy"), &blob).expect("OUT_DIR is writable");
    println!("cargo:rustc-env=GRAIL_SHIPPED_LIBRARY={state}");
    println!("cargo:rerun-if-changed=build.rs");
    let packed = packed_relocations(&out);
    if packed {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
    // For `tests/packaging.rs`, which reads the binary's dynamic section.
    println!("cargo:rustc-env=GRAIL_PACKED_RELOCATIONS={}", if packed { "yes" } else { "no" });
}

/// Whether the binary is linked with packed relative relocations (`DT_RELR`,
/// `-z pack-relative-relocs`). A position-independent binary holds about
/// 20,000 pointers the loader adds its load address to at every start; as
/// `.rela.dyn` that is 24 bytes each (470 KB read and walked entry by
/// entry), as `.relr.dyn` a few KB of bitmaps. The binary stays
/// position-independent (ARCHITECTURE.md, "Packaging").
///
/// Only for Linux with glibc, and only when a small program linked the same
/// way (this `rustc`, its linker, `-C linker` if cargo names one) links
/// without a warning and runs: the linker must know the option (binutils
/// 2.38, LLVM 15) and the C library's loader must read `DT_RELR` (glibc
/// 2.36, which the linker then requires by the symbol version
/// `GLIBC_ABI_DT_RELR`). A cross build, where the program cannot run here,
/// keeps the plain relocations. musl is left out: its static binaries relocate
/// themselves (`rcrt1.o`), and whether the musl a toolchain ships reads
/// `DT_RELR` there is not checked.
fn packed_relocations(out: &Path) -> bool {
    let var = |key: &str| std::env::var(key).unwrap_or_default();
    println!("cargo:rerun-if-env-changed=RUSTC_LINKER");
    if var("CARGO_CFG_TARGET_OS") != "linux" || var("CARGO_CFG_TARGET_ENV") != "gnu" || var("HOST") != var("TARGET") {
        return false;
    }
    let dir = out.join("relr-probe");
    if std::fs::create_dir_all(&dir).is_err() {
        return false;
    }
    let source = dir.join("probe.rs");
    // A pointer in writable data: a relative relocation in any
    // position-independent executable, so the linker must pack one.
    let program = "static X: u8 = 7;\n\
                   static P: std::sync::atomic::AtomicPtr<u8> = std::sync::atomic::AtomicPtr::new(&X as *const u8 as *mut u8);\n\
                   fn main() {\n\
                       let p = P.load(std::sync::atomic::Ordering::Relaxed);\n\
                       std::process::exit(if unsafe { *p } == 7 { 0 } else { 1 });\n\
                   }\n";
    if std::fs::write(&source, program).is_err() {
        return false;
    }
    let exe = dir.join("probe");
    let mut rustc = Command::new(std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into()));
    rustc.arg("--target").arg(var("TARGET")).arg("--edition=2021").arg("-o").arg(&exe).arg(&source);
    rustc.args(["-C", "link-arg=-Wl,-z,pack-relative-relocs", "-C", "link-arg=-Wl,--fatal-warnings"]);
    if let Some(linker) = std::env::var_os("RUSTC_LINKER") {
        let mut flag = std::ffi::OsString::from("linker=");
        flag.push(linker);
        rustc.arg("-C").arg(flag);
    }
    let linked = rustc.output().is_ok_and(|o| o.status.success());
    linked && Command::new(&exe).status().is_ok_and(|s| s.success())
}
