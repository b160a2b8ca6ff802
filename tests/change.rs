//! Tighten-only over time (spec section 10a): `grail check --base OLD NEW`.

#[allow(dead_code, reason = "this test binary uses `run_in` only")]
mod common;

use common::run_in;
use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn a_loosened_version_fails_at_the_new_line_naming_the_old_one() {
    let out = run_in(root(), &["check", "--base", "examples/org/security.yaml", "examples/changes/security.yaml"]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    let changes: Vec<&str> = out.stdout.lines().filter(|l| l.contains("FAIL:")).collect();
    assert!(
        changes
            .iter()
            .any(|l| l.contains("`verification_blocking.ai-review.C3` was `blocking` (examples/org/security.yaml:47)")),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("examples/changes/security.yaml:34:51"), "located in the new file: {}", out.stdout);
    // The same file against itself changes nothing.
    let same = run_in(root(), &["check", "-v", "--base", "examples/org/security.yaml", "examples/org/security.yaml"]);
    assert!(!same.stdout.contains("FAIL: `"), "{}", same.stdout);
    assert!(same.stdout.lines().any(|l| l.contains("pass") && l.contains("change.loosen")), "{}", same.stdout);
}

#[test]
fn the_layered_form_compares_the_document_bound_to_the_layer() {
    let out = run_in(
        root(),
        &[
            "check",
            "--layer",
            "security=examples/changes/security.yaml",
            "--layer",
            "operator=examples/org/operator.yaml",
            "--base",
            "security=examples/org/security.yaml",
        ],
    );
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert_eq!(out.stdout.matches("\nchange.loosen\n").count(), 2, "{}", out.stdout);
}

#[test]
fn a_base_that_cannot_be_placed_or_compared_stops_the_check() {
    // Two documents and no layer named: whose previous version is it?
    let two = run_in(
        root(),
        &[
            "check",
            "--base",
            "examples/org/security.yaml",
            "examples/org/operator.yaml",
            "examples/changes/security.yaml",
        ],
    );
    assert_eq!(two.code, 2, "{}{}", two.stdout, two.stderr);
    assert!(two.stderr.contains("--base LAYER=OLD"), "{}", two.stderr);
    // A kind whose policy declares no direction of change.
    let state =
        run_in(root(), &["check", "--base", "examples/recovery/state.yaml", "examples/recovery/recovered.yaml"]);
    assert_eq!(state.code, 2, "{}{}", state.stdout, state.stderr);
    assert!(state.stderr.contains("declares no `on change rule`"), "{}", state.stderr);
    // With --each, every file is its own deployment.
    let each =
        run_in(root(), &["check", "--each", "--base", "examples/org/security.yaml", "examples/changes/security.yaml"]);
    assert_eq!(each.code, 2, "{}{}", each.stdout, each.stderr);
}

/// A scratch file of the tests below, written under the target folder.
fn scratch(name: &str, text: &str) -> String {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("change");
    std::fs::create_dir_all(&dir).expect("scratch folder");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write");
    path.to_str().expect("a UTF-8 path").to_string()
}

#[test]
fn a_base_that_cannot_be_read_stops_the_check_at_its_place() {
    // Each once became the shipped defaults, and a loosening passed with exit 0.
    let cases = [
        ("empty.yaml", "", ":1:1: the previous version is empty"),
        ("blank.yaml", "\n  \n", ":1:1: the previous version is empty"),
        ("comment.yaml", "# nothing but a comment\n", ":1:1: the previous version cannot be read"),
        ("malformed.yaml", "schema_version: \"1.0\"\nmerge_policy: [\n", ":3:1: the previous version cannot be read"),
        ("list.json", "[\"a\", \"b\"]\n", ":1:1: the previous version cannot be read: a document must be a mapping"),
        (
            "other-kind.yaml",
            "kind: task-state\n",
            ":1:1: the previous version is a `TaskState`, and the new version a `Binding`",
        ),
    ];
    for (name, text, said) in cases {
        let old = scratch(name, text);
        let out = run_in(root(), &["check", "--allow-unknown", "--base", &old, "examples/changes/security.yaml"]);
        assert_eq!(out.code, 2, "{name}: {}{}", out.stdout, out.stderr);
        assert!(out.stderr.contains(&format!("`--base {old}`: {old}{said}")), "{name}: {}", out.stderr);
    }
}

#[test]
fn a_base_with_findings_of_its_own_fails_the_comparison_naming_them() {
    // `min_checkers: 3.0` is no integer: the old value is not there to compare, never absent.
    let org = std::fs::read_to_string(root().join("examples/org/security.yaml")).expect("the example");
    let mistyped = org.replacen("    min_checkers: 2\n", "    min_checkers: 3.0\n", 1);
    assert_ne!(mistyped, org);
    let old = scratch("mistyped.yaml", &mistyped);
    let line = org.lines().position(|l| l == "    min_checkers: 2").expect("C3's line") + 1;
    let out =
        run_in(root(), &["check", "--format", "json", "--allow-unknown", "--base", &old, "examples/org/security.yaml"]);
    assert_eq!(out.code, 1, "a FAIL, which --allow-unknown does not accept: {}{}", out.stdout, out.stderr);
    let report: serde_json::Value = serde_json::from_str(&out.stdout).expect("one JSON object");
    let changes: Vec<&serde_json::Value> =
        report["findings"].as_array().expect("findings").iter().filter(|f| f["rule"] == "change.loosen").collect();
    assert_eq!(changes.len(), 1, "{report:#}");
    assert_eq!(changes[0]["outcome"], "fail", "{report:#}");
    let message = changes[0]["message"].as_str().unwrap_or_default();
    let said = format!("{old}:{line}:19: `verification_topology.C3.min_checkers` must be an integer");
    assert!(message.contains(&said), "named as the previous version's: {message}");
    assert!(message.contains("`schema.type` of the previous version"), "{message}");
    assert_eq!(changes[0]["line"], line, "at the same key of the new version: {report:#}");
    // Its twin, the same file with an integer there, compares and passes.
    let twin = scratch("twin.yaml", &org.replacen("    min_checkers: 2\n", "    min_checkers: 3\n", 1));
    let out = run_in(root(), &["check", "--allow-unknown", "--base", &twin, "examples/org/security.yaml"]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("was `3`"), "the loosening itself: {}", out.stdout);
    let same = scratch("same.yaml", &org);
    let out = run_in(root(), &["check", "--allow-unknown", "--base", &same, "examples/org/security.yaml"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
}
