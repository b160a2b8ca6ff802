//! Small edges of the command line (issue 41, item 8), each as a user meets it.

use std::path::Path;
use std::process::{Command, Output};

fn grail(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_grail"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("grail runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("grail-edges-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    dir
}

#[test]
fn source_of_a_structural_rule_prints_each_clause_once() {
    let out = grail(&["source", "schema.syntax"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let headers: Vec<&str> = stdout.lines().filter(|l| l.contains("is named by a clause of")).collect();
    assert!(headers.len() > 1, "several kinds name schema.syntax:\n{stdout}");
    let mut unique = headers.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), headers.len(), "every clause once:\n{stdout}");
}

#[test]
fn lsp_help_says_the_policy_comes_from_grail_toml() {
    let out = grail(&["lsp", "--help"]);
    let help = text(&out.stdout);
    assert!(help.contains("grail.toml"), "the server reads grail.toml:\n{help}");
    assert!(!help.contains("workspace's `.grail` files"), "the server does not take a folder's .grail files:\n{help}");
}

#[test]
fn graph_of_a_document_that_does_not_parse_is_its_syntax_finding() {
    let dir = scratch("graph");
    let bad = dir.join("bad.yaml");
    std::fs::write(&bad, "a: [\n").expect("write");
    let out = grail(&["graph", bad.to_str().expect("UTF-8")]);
    assert_eq!(out.status.code(), Some(1), "as `grail check`: a finding, exit 1");
    assert!(out.stdout.is_empty(), "no drawing: {}", text(&out.stdout));
    let err = text(&out.stderr);
    assert!(err.contains("schema.syntax") && err.contains("bad.yaml:2:1"), "the located syntax finding:\n{err}");
    let check = grail(&["check", bad.to_str().expect("UTF-8")]);
    assert_eq!(check.status.code(), out.status.code());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn explain_refuses_a_class_the_policy_does_not_know() {
    let out = grail(&["explain", "--class", "C9", "examples/bindings/good.yaml"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("`C9`") && err.contains("`C1`") && err.contains("`C5`"), "names the classes:\n{err}");
    let known = grail(&["explain", "--class", "C3", "examples/bindings/good.yaml"]);
    assert_eq!(known.status.code(), Some(0), "{}", text(&known.stderr));
}

#[test]
fn fmt_of_a_folder_without_policy_files_says_so() {
    let dir = scratch("fmt");
    let out = grail(&["fmt", "--check", dir.to_str().expect("UTF-8")]);
    assert_eq!(out.status.code(), Some(0), "nothing is misformatted: exit 0, as ruff");
    let err = text(&out.stderr);
    assert!(err.contains("warning: no .grail file under"), "said:\n{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_syntax_errors_help_points_at_the_clause_of_the_kind_an_empty_document_is_of() {
    let dir = scratch("syntax");
    let bad = dir.join("bad.yaml");
    std::fs::write(&bad, "a: [\n").expect("write");
    let out = grail(&["check", bad.to_str().expect("UTF-8")]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    let help = stdout.lines().find(|l| l.contains("help: rule `schema.syntax`")).expect("a help line");
    // The shipped library's security binding (`Binding`), the kind a
    // document with no keys is of, not `Leases`, the first kind declared.
    let binding =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("policies/guardrails/binding.grail"))
            .expect("binding.grail");
    let line = binding.lines().position(|l| l.trim() == "on syntax rule schema.syntax").expect("the clause") + 1;
    assert!(help.contains(&format!("binding.grail:{line}:")), "{help}");
    let _ = std::fs::remove_dir_all(&dir);
}
