//! `grail explain` and layers of trust, as a person reads them.

mod common;
use common::grail;

#[test]
fn a_demoted_c3_auto_merge_names_the_gate_and_the_review_cell() {
    let out = grail(&["explain", "examples/bindings/auto-merge-demoted.yaml"]);
    assert!(out.contains("demoted from `auto`"), "{out}");
    insta::assert_snapshot!(out);
}

#[test]
fn a_loosened_repo_layer_value_is_refused_and_explained() {
    let out = grail(&[
        "explain",
        "--class",
        "C3",
        "--layer",
        "security=tests/inputs/layers/security.yaml",
        "tests/inputs/layers/repo-loosen.yaml",
    ]);
    assert!(out.contains("refused"), "{out}");
    insta::assert_snapshot!(out);
}

#[test]
fn a_vendor_independence_failure_names_the_two_checkers() {
    let out = grail(&["explain", "tests/inputs/explain/vendor.yaml"]);
    assert!(out.contains("topology.cross_vendor_pairwise"), "{out}");
    assert!(out.contains("reviewer-a") && out.contains("reviewer-b"), "{out}");
    insta::assert_snapshot!(out);
}

#[test]
fn explain_as_json_carries_derivations_and_state() {
    let out = grail(&["explain", "--format", "json", "examples/bindings/auto-merge-demoted.yaml"]);
    let json: serde_json::Value =
        serde_json::from_str(out.split("--- stdout\n").nth(1).and_then(|s| s.split("--- stderr").next()).unwrap_or(""))
            .expect("one JSON object");
    let finding = &json["findings"][0];
    assert_eq!(finding["rule"], "merge.unanimity");
    assert!(finding["derivation"].as_array().is_some_and(|d| d.len() >= 3), "{finding}");
    let c3 =
        json["state"].as_array().and_then(|s| s.iter().find(|c| c["key"] == "C3" && c["column"] == "merge_policy"));
    assert_eq!(c3.map(|c| c["value"].clone()), Some(serde_json::json!("human")), "{json}");
}

#[test]
fn an_agent_writable_layer_is_never_why_a_security_rule_passes() {
    // The security layer binds C2 auto on a vendor-hosted executor; the repo layer
    // (agents write it) claims a self-operated executor. The claim is refused, and the
    // executor gate still fails.
    let out = grail(&[
        "check",
        "--format",
        "json",
        "--layer",
        "security=tests/inputs/layers/security.yaml",
        "tests/inputs/layers/repo-executor.yaml",
    ]);
    let stdout = out.split("--- stdout\n").nth(1).and_then(|s| s.split("--- stderr").next()).unwrap_or("");
    let json: serde_json::Value = serde_json::from_str(stdout).expect("one JSON object");
    let findings = json["findings"].as_array().cloned().unwrap_or_default();
    let has = |rule: &str, outcome: &str| findings.iter().any(|f| f["rule"] == rule && f["outcome"] == outcome);
    assert!(has("layer.untrusted_source", "fail"), "{stdout}");
    assert!(has("merge.executor_cap", "fail"), "{stdout}");
    // Alone, the security layer fails the same gate: the repo layer changed nothing.
    let alone = grail(&["check", "--format", "json", "tests/inputs/layers/security.yaml"]);
    assert!(alone.contains("\"merge.executor_cap\""), "{alone}");
}

#[test]
fn two_documents_of_one_layer_are_located_findings() {
    // Two documents bound to no layer: neither is read, whatever their order.
    for (a, b) in [("repo-loosen", "repo-twice"), ("repo-twice", "repo-loosen")] {
        let twice = grail(&[
            "check",
            "--layer",
            "security=tests/inputs/layers/security.yaml",
            &format!("tests/inputs/layers/{a}.yaml"),
            &format!("tests/inputs/layers/{b}.yaml"),
        ]);
        assert!(twice.contains("layer.order") && twice.contains("repo-twice.yaml:2:"), "{twice}");
        assert!(twice.contains("repo-loosen.yaml:2:"), "{twice}");
    }
}

#[test]
fn explain_refuses_an_unknown_rule_with_a_suggestion() {
    let out = grail(&["explain", "--rule", "merge.celing", "examples/bindings/good.yaml"]);
    assert!(out.starts_with("exit: 2") && out.contains("did you mean `merge.ceiling`?"), "{out}");
}
