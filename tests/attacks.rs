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
    // The file of the issue: no `layer:` key, an executor, routes, C3 auto.
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
fn an_agent_file_claiming_security_is_a_claim_finding() {
    let out = grail(&["check", "--layer", SECURITY, "tests/inputs/attacks/claims-security.yaml"]);
    assert!(out.contains("layer.claim") && out.contains("a claim is never a grant"), "{out}");
    insta::assert_snapshot!(out);
}

#[test]
fn a_claim_bound_by_the_flag_to_repo_is_refused_too() {
    let out = grail(&[
        "check",
        "--format",
        "json",
        "--layer",
        SECURITY,
        "--layer",
        "repo=tests/inputs/attacks/claims-security.yaml",
    ]);
    let f = findings(&out);
    assert!(f.contains(&"layer.claim fail tests/inputs/attacks/claims-security.yaml".to_string()), "{out}");
    assert!(f.contains(&"layer.loosen fail merge_policy.C3".to_string()), "{out}");
}

#[test]
fn duplicate_layer_keys_are_both_judged() {
    let out = grail(&["check", "--format", "json", "--layer", SECURITY, "tests/inputs/attacks/duplicate-claim.yaml"]);
    let f = findings(&out);
    assert!(f.contains(&"schema.duplicate_key fail layer".to_string()), "{out}");
    assert!(f.contains(&"layer.claim fail tests/inputs/attacks/duplicate-claim.yaml".to_string()), "{out}");
    assert!(f.contains(&"layer.loosen fail merge_policy.C3".to_string()), "{out}");
}

#[test]
fn yaml_tags_anchors_and_key_case_do_not_promote() {
    let out = grail(&["check", "--format", "json", "--layer", SECURITY, "tests/inputs/attacks/tagged-claim.yaml"]);
    insta::assert_snapshot!(findings(&out).join("\n"));
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
    // Not read, so the routes it holds are not there: the defaults stand in for `security`.
    assert!(f.iter().any(|x| x.starts_with("escalation.required_route fail")), "{out}");
}

#[test]
fn with_no_document_bound_to_security_routes_are_missing() {
    let out = grail(&["check", "--format", "json", "--layer", "repo=tests/inputs/attacks/security.yaml"]);
    let f = findings(&out);
    assert!(f.iter().any(|x| x.starts_with("escalation.required_route fail")), "{out}");
    assert!(f.iter().any(|x| x.starts_with("layer.untrusted_source fail")), "{out}");
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
