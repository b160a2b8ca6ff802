//! The hostile corpus (`tests/hostile/<class>/<case>/`): inputs crafted as an
//! attacker would, by class, each through the command line. A case is a
//! folder: `args` holds the arguments after `grail check`, one per line, run
//! from the case's folder at a fixed time of the check ([`NOW`]); `expect` the findings that must be there
//! (`rule outcome`, one per line: each class's inputs failed before the
//! defences of spec section 9a, and pass, that is are caught, after). Every
//! finding that is not a pass is snapshotted (`tests/snapshots/hostile__*.snap`).

use std::path::Path;

#[allow(dead_code, reason = "this test binary uses `run_in` only")]
mod common;
use common::run_in;

/// The time of every check of the corpus, so that its snapshots never
/// depend on the clock.
const NOW: &str = "2026-08-20T00:00:00Z";

/// The findings that did not pass, as `rule outcome subject: message`, sorted.
fn not_passing(json: &serde_json::Value) -> Vec<String> {
    let mut out: Vec<String> = json["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| f["outcome"] == "fail" || f["outcome"] == "unknown")
        .map(|f| {
            format!(
                "{} {} {} @ {}:{}: {}",
                f["rule"].as_str().unwrap_or(""),
                f["outcome"].as_str().unwrap_or(""),
                f["subject"].as_str().unwrap_or(""),
                f["file"].as_str().unwrap_or("-"),
                f["line"].as_u64().unwrap_or(0),
                f["message"].as_str().unwrap_or("")
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn every_hostile_input_is_caught() {
    insta::glob!("hostile/*/*/args", |args_file| {
        let dir = args_file.parent().expect("a case folder");
        let args: Vec<String> = std::fs::read_to_string(args_file)
            .expect("args")
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(String::from)
            .collect();
        let mut argv = vec!["check", "--format", "json", "--now", NOW];
        argv.extend(args.iter().map(String::as_str));
        let out = run_in(dir, &argv);
        let json: serde_json::Value = serde_json::from_str(&out.stdout)
            .unwrap_or_else(|e| panic!("{}: {e}\n{}\n{}", dir.display(), out.stdout, out.stderr));
        let found = not_passing(&json);
        let expect = std::fs::read_to_string(dir.join("expect")).expect("expect");
        for want in expect.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
            assert!(
                found.iter().any(|f| f.starts_with(&format!("{want} "))),
                "{}: expected `{want}` among\n{}",
                dir.display(),
                found.join("\n")
            );
        }
        assert_ne!(out.code, 0, "{}: a hostile input never exits 0 here\n{}", dir.display(), found.join("\n"));
        insta::assert_snapshot!(format!("exit: {}\n{}\n", out.code, found.join("\n")));
    });
}

#[test]
fn the_corpus_covers_every_class() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hostile");
    let mut classes: Vec<String> = std::fs::read_dir(&root)
        .expect("tests/hostile")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    classes.sort();
    // `numbers` and `positional` wait in `tests/hostile-pending/` (its README
    // says why); `escape-key` went with the rule that forbade a key anywhere.
    for class in ["identifiers", "markers", "missing-sections", "unversioned", "urls"] {
        assert!(classes.iter().any(|c| c == class), "no `{class}` class in {classes:?}");
    }
}
