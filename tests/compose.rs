//! Composition: `--policy shipped --policy ours/` adds an organisation's own
//! rules (and their fixtures) to the shipped library, in every command that
//! takes a policy.

#[allow(dead_code, reason = "this test binary uses `run_in` only")]
mod common;

use common::run_in;
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A folder of one rule of our own, with its fixture pair.
fn ours(name: &str, rule: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("compose").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    let cases = dir.join("tests").join("ours.no_c5_auto");
    for case in ["fail", "pass"] {
        std::fs::create_dir_all(cases.join(case)).expect("scratch folder");
    }
    std::fs::write(dir.join("org.grail"), rule).expect("write");
    let good = std::fs::read_to_string(root().join("examples/bindings/good.yaml")).expect("good.yaml");
    std::fs::write(cases.join("pass/binding.yaml"), &good).expect("write");
    // The twin differs in one line: the merge policy's C5 is `auto`.
    let merge = good.lines().find(|l| l.starts_with("merge_policy: {")).expect("a merge policy on one line");
    assert!(merge.contains("C5: human"), "the example's C5 merges by a human: {merge}");
    let loose = good.replace(merge, &merge.replace("C5: human", "C5: auto"));
    std::fs::write(cases.join("fail/binding.yaml"), loose).expect("write");
    dir
}

const RULE: &str = r#"/// Our organisation never lets C5 merge without a human.
rule ours.no_c5_auto
  require binding.merge_policy["C5"] == "human"
    else fail "C5 must merge by a human; the binding says `{binding.merge_policy["C5"]}`"
  at binding.merge_policy
"#;

#[test]
fn our_rules_run_with_the_shipped_ones_and_so_do_their_fixtures() {
    let dir = ours("added", RULE);
    let d = dir.to_string_lossy().to_string();
    let fail = dir.join("tests/ours.no_c5_auto/fail/binding.yaml").to_string_lossy().to_string();
    let out = run_in(root(), &["check", "--policy", "shipped", "--policy", &d, &fail]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    // Ours and the shipped library's own ceiling both refuse C5 merging alone.
    assert!(
        out.stdout.contains("\nours.no_c5_auto\n") || out.stdout.starts_with("ours.no_c5_auto\n"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("\nmerge.ceiling\n") || out.stdout.starts_with("merge.ceiling\n"), "{}", out.stdout);
    // `grail test` runs the shipped fixtures and ours: two more cases than the library alone.
    let count = |args: &[&str]| {
        let out = run_in(root(), args);
        assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
        let last = out.stdout.lines().rfind(|l| l.ends_with("0 failed")).unwrap_or_default().to_string();
        last.split_whitespace().next().and_then(|n| n.parse::<usize>().ok()).unwrap_or(0)
    };
    let shipped = count(&["test"]);
    let both = count(&["test", "--policy", "shipped", "--policy", &d]);
    assert!(shipped > 100, "{shipped}");
    assert_eq!(both, shipped + 2);
    // Ours alone has no binding kind: it does not compile.
    let alone = run_in(root(), &["test", "--policy", &d]);
    assert_eq!(alone.code, 2, "{}{}", alone.stdout, alone.stderr);
}

#[test]
fn a_rule_id_declared_twice_is_one_error_naming_both_files() {
    let dir = ours("twice", &RULE.replace("ours.no_c5_auto", "merge.ceiling"));
    let d = dir.to_string_lossy().to_string();
    let out = run_in(root(), &["check", "--policy", "shipped", "--policy", &d, "examples/bindings/good.yaml"]);
    assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
    assert!(out.stderr.contains("`merge.ceiling` is defined twice"), "{}", out.stderr);
    assert!(out.stderr.contains("org.grail:2:6"), "ours is located: {}", out.stderr);
    assert!(out.stderr.contains("policies/guardrails/"), "the shipped one is named: {}", out.stderr);
}

#[test]
fn a_policy_folder_that_is_not_there_says_how_to_name_the_shipped_library() {
    let out = run_in(root(), &["check", "--policy", "shiped", "examples/bindings/good.yaml"]);
    assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
    assert!(out.stderr.contains("`--policy shipped` for the shipped library"), "{}", out.stderr);
}

/// A folder with a `grail.toml` naming `folders = ["shipped", "ours"]` and a
/// deployment `shop` of one binding that our rule (and the shipped ceiling) fails.
fn workspace(name: &str) -> PathBuf {
    let ours = ours(&format!("{name}/ours"), RULE);
    let dir = ours.parent().expect("the workspace folder").to_path_buf();
    let fail = std::fs::read_to_string(ours.join("tests/ours.no_c5_auto/fail/binding.yaml")).expect("fixture");
    std::fs::write(dir.join("fail.yaml"), fail).expect("write");
    std::fs::write(
        dir.join("grail.toml"),
        "[policy]\nfolders = [\"shipped\", \"ours\"]\n\n[deployments.shop]\ndocuments = [\"fail.yaml\"]\n",
    )
    .expect("write");
    dir
}

const FROM_FILE: &str = "policy `shipped`, `ours` (grail.toml)\n";
const SHOP: &str = "deployment `shop` (grail.toml)\n";

#[test]
fn check_of_a_file_uses_the_policy_of_grail_toml_and_says_so() {
    let dir = workspace("ws-check");
    let out = run_in(&dir, &["check", "fail.yaml"]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("ours.no_c5_auto"), "{}", out.stdout);
    assert!(out.stdout.contains("merge.ceiling"), "{}", out.stdout);
    assert!(out.stderr.contains(FROM_FILE), "{}", out.stderr);
    // `--policy` wins over the file.
    let flag = run_in(&dir, &["check", "--policy", "shipped", "fail.yaml"]);
    assert_eq!(flag.code, 1, "{}{}", flag.stdout, flag.stderr);
    assert!(!flag.stdout.contains("ours.no_c5_auto"), "{}", flag.stdout);
    assert!(!flag.stderr.contains("grail.toml"), "{}", flag.stderr);
}

#[test]
fn test_runs_the_fixtures_of_the_policy_folders_of_grail_toml() {
    let dir = workspace("ws-test");
    let out = run_in(&dir, &["test", "--verbose"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("ok   tests/ours.no_c5_auto/fail\n"), "{}", out.stdout);
    assert!(out.stdout.contains("ok   tests/ours.no_c5_auto/pass\n"), "{}", out.stdout);
    assert!(out.stderr.contains(FROM_FILE), "{}", out.stderr);
}

#[test]
fn source_finds_a_rule_of_the_policy_folders_of_grail_toml() {
    let dir = workspace("ws-source");
    let out = run_in(&dir, &["source", "ours.no_c5_auto"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("rule ours.no_c5_auto"), "{}", out.stdout);
    assert!(out.stderr.contains(FROM_FILE), "{}", out.stderr);
}

#[test]
fn explain_without_files_explains_the_deployment_of_grail_toml() {
    let dir = workspace("ws-explain");
    let out = run_in(&dir, &["explain", "--format", "json"]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    let json: serde_json::Value = serde_json::from_str(&out.stdout).expect("standard output stays JSON");
    assert!(json.to_string().contains("ours.no_c5_auto"), "{}", out.stdout);
    assert!(out.stderr.contains(FROM_FILE) && out.stderr.contains(SHOP), "{}", out.stderr);
    // Named files win over the file's deployment, with its policy.
    let files = run_in(&dir, &["explain", "fail.yaml"]);
    assert!(files.stdout.contains("ours.no_c5_auto"), "{}", files.stdout);
    assert!(!files.stderr.contains(SHOP), "{}", files.stderr);
}

#[test]
fn graph_without_files_draws_the_deployment_of_grail_toml() {
    let dir = workspace("ws-graph");
    let out = run_in(&dir, &["graph"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.starts_with("digraph"), "{}", out.stdout);
    assert!(out.stdout.contains("fail.yaml"), "{}", out.stdout);
    assert!(out.stderr.contains(SHOP), "{}", out.stderr);
}

#[test]
fn authorize_without_files_answers_for_the_deployment_of_grail_toml() {
    let dir = workspace("ws-authorize");
    let ask = ["authorize", "--action", "dispatch", "--resource", "work_class=C2", "--resource", "surface=ci-pool-a"];
    let out = run_in(&dir, &ask);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("DENY"), "{}", out.stdout);
    assert!(out.stdout.contains("ours.no_c5_auto"), "our rule fails the check: {}", out.stdout);
    assert!(out.stderr.contains(SHOP), "{}", out.stderr);
}

#[test]
fn compile_without_files_compiles_the_deployment_of_grail_toml() {
    let dir = workspace("ws-compile");
    let out = run_in(&dir, &["compile", "--target", "cedar", "--out", "out"]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(out.stderr.contains("ours.no_c5_auto"), "{}", out.stderr);
    assert!(out.stderr.contains(SHOP), "{}", out.stderr);
}

#[test]
fn analyze_and_doc_read_the_policy_of_grail_toml() {
    let dir = workspace("ws-analyze");
    let out = run_in(&dir, &["analyze", "--format", "json"]);
    let json: serde_json::Value = serde_json::from_str(&out.stdout).expect("standard output stays JSON");
    assert!(json.to_string().contains("ours.no_c5_auto"), "{}", out.stdout);
    assert!(out.stderr.contains(FROM_FILE), "{}", out.stderr);
    let doc = run_in(&dir, &["doc"]);
    assert_eq!(doc.code, 0, "{}", doc.stderr);
    assert!(doc.stdout.contains("ours.no_c5_auto"), "{}", doc.stdout);
}

#[test]
fn of_several_deployments_a_command_that_reads_one_is_told_which() {
    let dir = workspace("ws-several");
    let toml = std::fs::read_to_string(dir.join("grail.toml")).expect("read");
    std::fs::write(dir.join("grail.toml"), format!("{toml}\n[deployments.other]\ndocuments = [\"fail.yaml\"]\n"))
        .expect("write");
    let out = run_in(&dir, &["graph"]);
    assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
    assert!(out.stderr.contains("declares 2 deployments (`other`, `shop`)"), "{}", out.stderr);
    assert!(out.stderr.contains("--deployment NAME"), "{}", out.stderr);
    let one = run_in(&dir, &["graph", "--deployment", "shop"]);
    assert_eq!(one.code, 0, "{}{}", one.stdout, one.stderr);
    assert!(one.stderr.contains(SHOP), "{}", one.stderr);
    let none = run_in(&dir, &["graph", "--deployment", "shops"]);
    assert_eq!(none.code, 2, "{}{}", none.stdout, none.stderr);
    assert!(none.stderr.contains("declares no deployment `shops`"), "{}", none.stderr);
    // A bare check with `--policy` checks every deployment with the flag's policy.
    let check = run_in(&dir, &["check", "--policy", "shipped"]);
    assert_eq!(check.code, 1, "{}{}", check.stdout, check.stderr);
    assert!(check.stdout.contains("deployment `other` (grail.toml)"), "{}", check.stdout);
    assert!(!check.stdout.contains("ours.no_c5_auto") && !check.stderr.contains(FROM_FILE), "{}", check.stdout);
}
