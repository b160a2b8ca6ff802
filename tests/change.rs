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
