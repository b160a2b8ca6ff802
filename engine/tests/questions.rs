//! The shipped library's admission questions, answered for example bindings.

use grail_engine::db::decide_deployment;
use grail_engine::{Database, Deployment, SourceText};

/// The time of the checks here: nine days after the transcripts' capture.
const NOW: &str = "2026-08-20T00:00:00Z";

fn answers(binding: &str) -> Vec<(String, Vec<String>, bool)> {
    answers_at(binding, NOW)
}

/// The answers for a binding checked at the time `now` (RFC 3339).
fn answers_at(binding: &str, now: &str) -> Vec<(String, Vec<String>, bool)> {
    let db = Database::default();
    let set = grail_engine::shipped::policy_set(&db);
    let doc = SourceText::new(&db, "binding.yaml".into(), binding.into(), None);
    let deployment = Deployment::builder(vec![doc], vec![]).now(grail_engine::time::rfc3339_nanos(now)).new(&db);
    decide_deployment(&db, set, deployment)
        .iter()
        .map(|d| (d.question.clone(), d.attributes.iter().map(|(_, _, v)| v.clone()).collect(), d.allowed))
        .collect()
}

fn allowed(answers: &[(String, Vec<String>, bool)], question: &str, tuple: &[&str]) -> bool {
    answers
        .iter()
        .find(|(q, t, _)| q == question && t.iter().map(String::as_str).eq(tuple.iter().copied()))
        .unwrap_or_else(|| panic!("no answer for {question} {tuple:?} in {answers:#?}"))
        .2
}

const GATED: &str = r#"
schema_version: "1.0"
executor_class: self-operated
merge_policy: {C1: auto, C3: auto, C4: auto}
verification_blocking: {C3: blocking}
security_review: {C3: advisory}
escalation_routes: {verification-divergence: oncall}
"#;

#[test]
fn auto_merge_only_where_every_gate_holds() {
    let a = answers(GATED);
    assert!(allowed(&a, "merge.auto_merge", &["C1"]));
    assert!(!allowed(&a, "merge.auto_merge", &["C2"]), "C2 is not bound auto");
    assert!(!allowed(&a, "merge.auto_merge", &["C3"]), "C3's review gate fails");
    assert!(!allowed(&a, "merge.auto_merge", &["C4"]), "C4's ceiling is human");
}

#[test]
fn agents_never_write_the_security_layer() {
    let a = answers(GATED);
    assert!(!allowed(&a, "layer.write", &["security", "agent"]));
    assert!(!allowed(&a, "layer.write", &["security", "operator"]));
    assert!(allowed(&a, "layer.write", &["security", "human"]));
    assert!(allowed(&a, "layer.write", &["repo", "agent"]));
}

#[test]
fn dispatch_is_fail_closed_without_admission_or_proof() {
    // No admission section: nothing may be dispatched, whatever the surfaces.
    let unproven = r#"
schema_version: "1.0"
escalation_routes: {verification-divergence: oncall}
isolation:
  surfaces:
    pool: {level: L1}
"#;
    let a = answers(unproven);
    assert!(a.iter().filter(|(q, _, _)| q == "admission.dispatch").all(|(_, _, ok)| !ok), "{a:#?}");
    // L1 needs no proof, but autonomous dispatch is never below L2: not even C1
    // (whose isolation floor is L1) is dispatched there.
    let admitted = format!("{unproven}admission: {{autonomous_classes: [C1, C2]}}\n");
    let a = answers(&admitted);
    assert!(!allowed(&a, "admission.dispatch", &["C1", "pool"]));
    assert!(!allowed(&a, "admission.dispatch", &["C2", "pool"]));
}

#[test]
fn dispatch_needs_a_surface_proven_at_l2_or_tighter() {
    let binding = |level: &str| {
        format!(
            r#"
schema_version: "1.0"
escalation_routes: {{verification-divergence: oncall}}
isolation:
  surfaces:
    pool:
      level: {level}
      component_reachable_hosts: [api.example.org]
      probe:
        captured_at: "2026-08-11T09:00:00Z"
        client_ready: true
        outer_context_networked: true
        assertions:
          egress_denied: {{host: "a.example.net,api.example.org", outer_exit_code: "0,0", transport_outcome: "tls-failed,peer-substituted", outer_fingerprint: "AA:01,BB:02", inner_fingerprint: "-,CC:03", origin_bytes_read: "0,0"}}
          workspace_host_write_contained: {{canary_shapes: "plain,dotfile,git-relative", host_post_absent: "0", git_config_digest_pre: absent, git_config_digest_post: absent}}
admission: {{autonomous_classes: [C1, C2, C4]}}
"#
        )
    };
    let a = answers(&binding("L2"));
    assert!(allowed(&a, "admission.dispatch", &["C1", "pool"]), "{a:#?}");
    assert!(allowed(&a, "admission.dispatch", &["C2", "pool"]));
    // 63 days after the capture the transcript is stale: the surface is unproven, nothing is dispatched.
    let stale = answers_at(&binding("L2"), "2026-10-13T09:00:00Z");
    assert!(!allowed(&stale, "admission.dispatch", &["C2", "pool"]), "{stale:#?}");
    assert!(allowed(&answers_at(&binding("L2"), "2026-10-12T09:00:00Z"), "admission.dispatch", &["C2", "pool"]));
    assert!(!allowed(&a, "admission.dispatch", &["C3", "pool"]), "C3 is not autonomous");
    assert!(!allowed(&a, "admission.dispatch", &["C4", "pool"]), "C4's floor is L3");
    let a = answers(&binding("L3"));
    assert!(allowed(&a, "admission.dispatch", &["C4", "pool"]));
}
