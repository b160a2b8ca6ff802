//! The policy cache: a `--policy DIR` is compiled once and read from the
//! cache on later runs; a changed byte of the policy compiles it again, and
//! a truncated or corrupted cache file is ignored and written again.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A fresh folder for one test, under cargo's temporary folder for tests.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cache-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    dir
}

/// `grail check --format json --policy policy doc.json` in `dir`, with the cache in `dir/cache`.
fn check(dir: &Path, extra: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_grail"))
        .args(extra)
        .args(["check", "--format", "json", "--policy", "policy", "doc.json"])
        .current_dir(dir)
        .env("GRAIL_CACHE_DIR", dir.join("cache"))
        .output()
        .expect("grail runs");
    format!(
        "exit: {:?}\n{}{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The cache's files and their bytes, by name.
fn cached(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let Ok(entries) = std::fs::read_dir(dir.join("cache")) else { return Vec::new() };
    let mut files: Vec<(String, Vec<u8>)> = entries
        .map(|e| e.expect("an entry").path())
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&p).expect("readable")))
        .collect();
    files.sort();
    files
}

const POLICY: &str = include_str!("policies/unknown/policy.grail");

#[test]
fn a_policy_is_compiled_once_and_any_change_compiles_it_again() {
    let dir = scratch("once");
    std::fs::create_dir_all(dir.join("policy")).unwrap();
    std::fs::write(dir.join("policy/policy.grail"), POLICY).unwrap();
    std::fs::write(dir.join("doc.json"), r#"{"evidence": false}"#).unwrap();

    let uncached = check(&dir, &["--no-cache"]);
    assert!(uncached.contains("the evidence says no"), "{uncached}");
    assert!(cached(&dir).is_empty(), "--no-cache writes nothing");

    let first = check(&dir, &[]);
    assert_eq!(first, uncached);
    let written = cached(&dir);
    assert_eq!(written.len(), 1, "{written:?}");
    assert!(written[0].0.ends_with(".policy"), "{}", written[0].0);

    // Read from the cache: the same report, the cache untouched.
    assert_eq!(check(&dir, &[]), first);
    assert_eq!(cached(&dir), written);

    // One changed byte of the policy: compiled again, its own cache file.
    std::fs::write(dir.join("policy/policy.grail"), POLICY.replace("says no", "says nx")).unwrap();
    let edited = check(&dir, &[]);
    assert!(edited.contains("the evidence says nx"), "{edited}");
    assert_eq!(cached(&dir).len(), 2);
    std::fs::write(dir.join("policy/policy.grail"), POLICY).unwrap();
    assert_eq!(check(&dir, &[]), first);

    // A truncated, an emptied or a corrupted cache file is ignored and written again.
    let (name, bytes) = &written[0];
    let path = dir.join("cache").join(name);
    let middle = bytes.len() / 2;
    let mut flipped = bytes.clone();
    flipped[middle] ^= 1;
    let mut last = bytes.clone();
    *last.last_mut().unwrap() ^= 1;
    for broken in [bytes[..middle].to_vec(), Vec::new(), flipped, last, b"not a policy".to_vec()] {
        std::fs::write(&path, &broken).unwrap();
        assert_eq!(check(&dir, &[]), first);
        assert_eq!(&std::fs::read(&path).unwrap(), bytes, "the cache file is written again");
    }

    // A file the cache cannot be written to is no error: the policy is compiled.
    let blocked = scratch("blocked");
    std::fs::create_dir_all(blocked.join("policy")).unwrap();
    std::fs::write(blocked.join("policy/policy.grail"), POLICY).unwrap();
    std::fs::write(blocked.join("doc.json"), r#"{"evidence": false}"#).unwrap();
    std::fs::write(blocked.join("cache"), "a file where the folder would be").unwrap();
    assert_eq!(check(&blocked, &[]), first);
}
