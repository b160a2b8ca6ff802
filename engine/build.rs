//! Embeds the shipped guardrail library (`policies/guardrails/*.grail`) so that
//! the engine can offer it as the default policy without touching the file system.

use std::fmt::Write as _;
use std::path::PathBuf;

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let dir = root.join("../policies/guardrails");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("policies/guardrails exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "grail"))
        .collect();
    files.sort();
    let mut out = String::from(
        "/// The shipped library: (path, text) of every policy file.\npub const FILES: &[(&str, &str)] = &[\n",
    );
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
        let name = f.file_name().and_then(|n| n.to_str()).expect("utf-8 file name");
        let abs = f.canonicalize().expect("policy path resolves");
        writeln!(
            out,
            "    ({:?}, include_str!({:?})),",
            format!("policies/guardrails/{name}"),
            abs.display().to_string()
        )
        .expect("write to string");
    }
    out.push_str("];\n");
    let dest = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("shipped.rs");
    std::fs::write(dest, out).expect("OUT_DIR is writable");
}
