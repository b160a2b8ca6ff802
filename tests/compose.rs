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
