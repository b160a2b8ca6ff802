//! `grail check` with no files: the deployments of the workspace file
//! `grail.toml`, found in the working directory or its parents.

mod common;

use std::path::{Path, PathBuf};

use common::{grail_in, run_in};

fn org() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/org")
}

/// A folder removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("grail-workspace-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a temporary folder");
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn the_deployments_of_grail_toml_are_checked() {
    insta::assert_snapshot!(grail_in(&org(), &["check"]));
}

#[test]
fn it_is_found_in_a_parent_folder() {
    let out = run_in(&org().join("items"), &["check", "--format", "json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report: serde_json::Value = serde_json::from_str(out.stdout.trim()).expect("one JSON object per deployment");
    assert_eq!(report["deployment"], "storefront");
    assert_eq!(report["verdict"], "unknown");
}

#[test]
fn the_deployment_agrees_with_the_same_files_named() {
    let named = run_in(
        &org(),
        &[
            "check",
            "--format",
            "json",
            "operator.yaml",
            "repo.yaml",
            "security.yaml",
            "items/nightly-sweep-2026-08-11.md",
            "items/split-retry-policy.md",
            "items/tracker-issue-412.md",
            "history/step-002.yaml",
        ],
    );
    let workspace = run_in(&org(), &["check", "--format", "json"]);
    let mut from_file: serde_json::Value = serde_json::from_str(workspace.stdout.trim()).expect("JSON");
    from_file.as_object_mut().map(|o| o.remove("deployment"));
    let from_names: serde_json::Value = serde_json::from_str(&named.stdout).expect("JSON");
    assert_eq!(from_file, from_names);
}

#[test]
fn a_broken_workspace_file_is_located() {
    let dir = TempDir::new("broken");
    std::fs::write(dir.0.join("grail.toml"), "[deployments.a]\ndocuments = [\"a.yaml\"]\nlayer = {}\n").expect("write");
    insta::assert_snapshot!(grail_in(&dir.0, &["check"]).replace(&dir.0.display().to_string(), "DIR"));
}

#[test]
fn a_layer_the_policy_does_not_declare_is_refused() {
    let dir = TempDir::new("layer");
    std::fs::write(dir.0.join("a.yaml"), "schema_version: \"1.0\"\n").expect("write");
    std::fs::write(dir.0.join("grail.toml"), "[deployments.a]\nlayers = { securty = \"a.yaml\" }\n").expect("write");
    insta::assert_snapshot!(grail_in(&dir.0, &["check"]).replace(&dir.0.display().to_string(), "DIR"));
}

#[test]
fn without_files_or_a_workspace_file_nothing_is_checked() {
    let dir = TempDir::new("none");
    let out = run_in(&dir.0, &["check"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("no documents named, and no `grail.toml`"), "{}", out.stderr);
    let out = run_in(&org(), &["check", "--each"]);
    assert_eq!(out.code, 2, "--each needs files: {}", out.stderr);
}
