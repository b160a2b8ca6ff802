//! Embeds the shipped guardrail library: the policy (`policies/guardrails/*.grail`)
//! and its fixtures (`policies/guardrails/tests/**`), so that the engine can
//! offer both without touching the file system.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut entries: Vec<PathBuf> =
        std::fs::read_dir(dir).expect("readable folder").filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, out);
        } else {
            println!("cargo:rerun-if-changed={}", p.display());
            out.push(p);
        }
    }
}

fn list(name: &str, doc: &str, root: &Path, files: &[PathBuf]) -> String {
    let mut out = format!("/// {doc}\npub const {name}: &[(&str, &str)] = &[\n");
    for f in files {
        let rel = f.strip_prefix(root).expect("inside the library").to_string_lossy().replace('\\', "/");
        let abs = f.canonicalize().expect("policy path resolves");
        writeln!(out, "    ({rel:?}, include_str!({:?})),", abs.display().to_string()).expect("write to string");
    }
    out.push_str("];\n");
    out
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let root = manifest.join("../policies/guardrails");
    let mut all = Vec::new();
    walk(&root, &mut all);
    let tests = root.join("tests");
    let (fixtures, policy): (Vec<PathBuf>, Vec<PathBuf>) = all.into_iter().partition(|p| p.starts_with(&tests));
    let policy: Vec<PathBuf> = policy.into_iter().filter(|p| p.extension().is_some_and(|x| x == "grail")).collect();
    let mut out = String::new();
    out.push_str(&list(
        "FILES",
        "The policy: (path, text) of every `.grail` file, under `policies/guardrails/`.",
        &manifest.join(".."),
        &policy,
    ));
    out.push_str(&list(
        "FIXTURES",
        "The fixtures: (path relative to the library, text), all under `tests/`.",
        &root,
        &fixtures,
    ));
    let dest = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("shipped.rs");
    std::fs::write(dest, out).expect("OUT_DIR is writable");
}
