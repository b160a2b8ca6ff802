//! Folders and fixtures as a user meets them (issue 41, item 7): a folder's
//! files that are no document of the policy are said and skipped, never read
//! as a failing item; in the envelope mode every file under a target must
//! carry its marker, as upstream's checker wants; `grail test` names the
//! files that are no case, and counts the lines twins really differ in.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn grail(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_grail")).args(args).current_dir(dir).output().expect("grail runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("grail-folders-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    dir
}

/// A folder of the example organisation's items, with a README and notes.
fn items_with_a_readme(name: &str) -> PathBuf {
    let dir = scratch(name);
    let items = dir.join("items");
    std::fs::create_dir_all(&items).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/org/items");
    for e in std::fs::read_dir(&root).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), items.join(e.file_name())).unwrap();
    }
    std::fs::write(items.join("README.md"), "# The queue\n\nOne file per queued item.\n").unwrap();
    std::fs::write(items.join("notes.txt"), "to do\n").unwrap();
    dir
}

#[test]
fn a_folders_readme_is_skipped_with_its_reason_outside_the_envelope_mode() {
    let dir = items_with_a_readme("skip");
    let out = grail(&dir, &["check", "--policy", "shipped", "--format", "json", "items"]);
    let stderr = text(&out.stderr);
    assert!(stderr.contains("skipped `items/README.md`: no `<!-- autonomy:signal:v1 -->` marker"), "{stderr}");
    assert!(stderr.contains("skipped `items/notes.txt`: not a document"), "{stderr}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("a JSON report");
    let files: Vec<&str> = report["findings"].as_array().unwrap().iter().filter_map(|f| f["file"].as_str()).collect();
    assert!(!files.iter().any(|f| f.ends_with("README.md")), "the README is no item: {files:?}");
}

#[test]
fn in_the_envelope_mode_every_file_under_a_target_carries_its_marker() {
    let dir = items_with_a_readme("envelopes");
    let out = grail(&dir, &["check", "--envelopes", "--format", "json", "items"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("a JSON report");
    let failing: Vec<(String, String)> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["outcome"] == "fail")
        .map(|f| (f["rule"].as_str().unwrap().to_string(), f["file"].as_str().unwrap_or("").to_string()))
        .collect();
    assert!(failing.contains(&("envelope.marker".into(), "items/README.md".into())), "{failing:?}");
    assert!(failing.contains(&("envelope.marker".into(), "items/notes.txt".into())), "{failing:?}");
    // Without the README and the notes, the items pass as upstream's checker passes them.
    std::fs::remove_file(dir.join("items/README.md")).unwrap();
    std::fs::remove_file(dir.join("items/notes.txt")).unwrap();
    let out = grail(&dir, &["check", "--envelopes", "items"]);
    // The temporal item names its surface: without --binding it does not resolve.
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/org");
    let (a, s) = (root.join("autonomy.yaml"), root.join("security.yaml"));
    let out =
        grail(&dir, &["check", "--binding", a.to_str().unwrap(), "--security-binding", s.to_str().unwrap(), "items"]);
    assert_eq!(out.status.code(), Some(0), "{}{}", text(&out.stdout), text(&out.stderr));
}

#[test]
fn no_record_under_the_targets_is_a_finding() {
    let dir = scratch("empty");
    std::fs::create_dir_all(dir.join("items")).unwrap();
    let out = grail(&dir, &["check", "--envelopes", "items"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stdout).contains("envelope.empty"), "{}", text(&out.stdout));
    // A target that is not there is no finding: the check cannot run.
    let out = grail(&dir, &["check", "--envelopes", "missing.md"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
}

/// A policy folder with one rule and its fixtures.
fn policy_with_fixtures(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = scratch(name);
    std::fs::write(
        dir.join("policy.grail"),
        r#"/// A runner.
document Runner as runner where kind == "runner" {
  on syntax rule runner.syntax
  on duplicate_key rule runner.duplicate_key
  on unknown_key rule runner.unknown_key
  on type rule runner.type
  kind: string
  sandboxed: bool
  note?: string
}

/// A runner is sandboxed.
rule runner.sandboxed
  require runner.sandboxed else fail "the runner is not sandboxed"
"#,
    )
    .unwrap();
    for (path, text) in files {
        let p = dir.join("tests/runner.sandboxed").join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

#[test]
fn a_fixture_that_names_no_case_is_a_problem_not_silence() {
    let dir = policy_with_fixtures(
        "misnamed",
        &[
            ("fail.yaml", "kind: runner\nsandboxed: false\n"),
            ("pass.yaml", "kind: runner\nsandboxed: true\n"),
            ("failing.yaml", "kind: runner\nsandboxed: false\n"),
        ],
    );
    let out = grail(&dir, &["test", "--policy", "."]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(all.contains("tests/runner.sandboxed/failing.yaml is no case"), "{all}");
}

#[test]
fn twins_two_lines_apart_are_two_lines_apart() {
    let dir = policy_with_fixtures(
        "distance",
        &[
            ("fail.yaml", "kind: runner\nnote: a\n# one\n# two\n# three\nsandboxed: false\n"),
            ("pass.yaml", "kind: runner\nnote: b\n# one\n# two\n# three\nsandboxed: true\n"),
        ],
    );
    let out = grail(&dir, &["test", "--policy", "."]);
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(all.contains("differ in 2 lines"), "{all}");
}
