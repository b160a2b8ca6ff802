//! Attacks on trust (issue 13): no document, by any content, changes the
//! layer it is checked as. Each test is one attack, as a person reads its
//! report; the snapshots are the findings.

mod common;
use common::grail;

const SECURITY: &str = "security=tests/inputs/attacks/security.yaml";

/// The report's findings that are not NOT APPLICABLE, as `rule outcome subject`, sorted.
fn findings(out: &str) -> Vec<String> {
    let stdout = out.split("--- stdout\n").nth(1).and_then(|s| s.split("--- stderr").next()).unwrap_or("");
    let json: serde_json::Value = serde_json::from_str(stdout).unwrap_or_else(|e| panic!("{e}: {out}"));
    let mut v: Vec<String> = json["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| f["outcome"] != "not_applicable")
        .map(|f| {
            format!(
                "{} {} {}",
                f["rule"].as_str().unwrap_or(""),
                f["outcome"].as_str().unwrap_or(""),
                f["subject"].as_str().unwrap_or("")
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn a_repo_file_without_a_layer_key_cannot_set_what_only_security_sets() {
    // The file of the issue: an executor, a route, C3 auto, bound to no layer.
    let out = grail(&["check", "--layer", SECURITY, "tests/inputs/attacks/no-claim.yaml"]);
    assert!(out.starts_with("exit: 1"), "{out}");
    insta::assert_snapshot!(out);
}

#[test]
fn without_any_binding_two_layered_files_are_refused_whatever_their_order() {
    let a = grail(&[
        "check",
        "--format",
        "json",
        "tests/inputs/attacks/operator.yaml",
        "tests/inputs/attacks/no-claim.yaml",
    ]);
    let b = grail(&[
        "check",
        "--format",
        "json",
        "tests/inputs/attacks/no-claim.yaml",
        "tests/inputs/attacks/operator.yaml",
    ]);
    assert!(a.starts_with("exit: 1") && b.starts_with("exit: 1"), "{a}\n{b}");
    assert_eq!(findings(&a), findings(&b));
    assert!(findings(&a).iter().filter(|f| f.starts_with("layer.order fail")).count() == 2, "{a}");
    // Neither document is read: C3 stays with the shipped `human`, so nothing auto-merges from them.
    assert!(!findings(&a).iter().any(|f| f.starts_with("merge.")), "{a}");
}

#[test]
fn swapping_the_order_of_bound_files_changes_nothing() {
    let args = |first: &'static str, second: &'static str| {
        vec!["check", "--format", "json", "--layer", first, "--layer", second, "tests/inputs/attacks/no-claim.yaml"]
    };
    let operator = "operator=tests/inputs/attacks/operator.yaml";
    let a = grail(&args(SECURITY, operator));
    let b = grail(&args(operator, SECURITY));
    assert_eq!(findings(&a), findings(&b));
    insta::assert_snapshot!(findings(&a).join("\n"));
}

#[test]
fn one_file_bound_twice_is_of_no_layer() {
    let out = grail(&[
        "check",
        "--format",
        "json",
        "--layer",
        SECURITY,
        "--layer",
        "repo=tests/inputs/attacks/security.yaml",
    ]);
    let f = findings(&out);
    assert!(f.contains(&"layer.order fail tests/inputs/attacks/security.yaml".to_string()), "{out}");
    // Not read, so nothing of it is judged: the binding is the refusal alone.
    assert_eq!(f.iter().filter(|x| x.contains(" fail ")).count(), 1, "{out}");
}

#[test]
fn with_no_document_bound_to_security_its_keys_come_from_no_one() {
    let out = grail(&["check", "--format", "json", "--layer", "repo=tests/inputs/attacks/security.yaml"]);
    let f = findings(&out);
    assert!(f.contains(&"layer.untrusted_source fail escalation_routes".to_string()), "{out}");
    assert!(f.contains(&"layer.untrusted_source fail executor_class".to_string()), "{out}");
}

#[test]
fn layer_flags_are_checked_before_anything_runs() {
    let typo = grail(&["check", "--layer", "secuirty=tests/inputs/attacks/security.yaml"]);
    let missing = grail(&["check", "--layer", "security=tests/inputs/attacks/missing.yaml"]);
    let each = grail(&["check", "--each", "--layer", SECURITY, "tests/inputs/attacks/no-claim.yaml"]);
    let malformed = grail(&["check", "--layer", "security", "tests/inputs/attacks/no-claim.yaml"]);
    let kind = grail(&["check", "--layer", "security=examples/org/history/step-002.yaml"]);
    insta::assert_snapshot!([typo, missing, each, malformed, kind].join("\n"));
}
