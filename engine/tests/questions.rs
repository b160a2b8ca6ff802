//! The shipped library's admission questions, answered for example bindings.

use grail_engine::db::decide_deployment;
use grail_engine::{Database, Deployment, SourceText};

/// The time of the checks here.
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

/// An upstream-shaped binding: C2 and C3 bound `auto`, every promotable cell
/// ratified, C3's model review advisory, C4 bound `auto` above its ceiling.
const GATED: &str = r#"
schema_version: "1.0"
executor_class: self-operated
isolation_bindings:
  ci-pool-a:
    L2:
      substrate: egress-denied-container-pool
      substrate_class: container
      host_interop: none
      component_reachable_hosts: [example.com]
      probe_evidence: probe-transcripts/ci-pool-a-l2.json
      runtime_markers: {runner-pool: ci-pool-a}
merge_policy: {C1: human, C2: auto, C3: auto, C4: auto, C5: human}
verification_blocking:
  deterministic: {C1: not-required, C2: blocking, C3: blocking, C4: blocking, C5: blocking}
  ai-review: {C1: not-required, C2: not-required, C3: advisory, C4: blocking, C5: blocking}
promotion_state:
  C2-auto-merge: {state: promoted, ratified_by_change: "change/101", evidence_window: 30d, ratified_at: "2026-08-01T00:00:00Z"}
  C3-auto-merge: {state: promoted, ratified_by_change: "change/102", evidence_window: 30d, ratified_at: "2026-08-01T00:00:00Z"}
  C3-ai-review-blocking: {state: promoted, ratified_by_change: "change/103", evidence_window: 30d, ratified_at: "2026-08-01T00:00:00Z"}
escalation_routes:
  gate-failure: queue:escalations/gate-failure
  verification-divergence: queue:escalations/verification-divergence
  admission-rejection: queue:escalations/admission-rejection
  demotion: queue:escalations/demotion
  structural-plan-approval: queue:escalations/structural-plan-approval
  untrusted-provenance: queue:escalations/untrusted-provenance
admission:
  classification:
    tracker-vcs-event: {autonomy:audit: C1, autonomy:mechanical: C2}
  rules:
    - {signal_class: "*", provenance: "*", work_class: C1, disposition: autonomous-eligible}
    - {signal_class: "*", provenance: "*", work_class: C2, disposition: autonomous-eligible}
    - {signal_class: "*", provenance: "*", work_class: C3, disposition: human-gated}
    - {signal_class: "*", provenance: "*", work_class: C4, disposition: human-gated}
    - {signal_class: "*", provenance: "*", work_class: C5, disposition: human-gated}
  autonomous_concurrency: 1
  items_per_run: 3
"#;

#[test]
fn auto_merge_only_where_every_gate_holds() {
    let a = answers(GATED);
    assert!(allowed(&a, "merge.auto_merge", &["C2"]), "{a:#?}");
    assert!(!allowed(&a, "merge.auto_merge", &["C1"]), "C1 is not bound auto");
    assert!(!allowed(&a, "merge.auto_merge", &["C3"]), "C3's model review is advisory");
    assert!(!allowed(&a, "merge.auto_merge", &["C4"]), "C4's ceiling is human");
    // Without its ratification, C2 is not allowed either.
    let unratified = GATED.replace("C2-auto-merge: {state: promoted", "C2-auto-merge: {state: unpromoted");
    assert!(!allowed(&answers(&unratified), "merge.auto_merge", &["C2"]));
    // A vendor-hosted executor never merges alone.
    let hosted = GATED.replace("executor_class: self-operated", "executor_class: vendor-hosted");
    assert!(!allowed(&answers(&hosted), "merge.auto_merge", &["C2"]));
}

#[test]
fn agents_never_write_the_security_layer() {
    let a = answers(GATED);
    assert!(!allowed(&a, "layer.write", &["security", "agent"]));
    assert!(!allowed(&a, "layer.write", &["security", "operator"]));
    assert!(allowed(&a, "layer.write", &["security", "human"]));
    assert!(allowed(&a, "layer.write", &["repo", "agent"]));
}

/// Whether any class may be dispatched without a human on any surface.
fn any_dispatched(a: &[(String, Vec<String>, bool)]) -> bool {
    a.iter().any(|(q, _, ok)| q == "admission.dispatch" && *ok)
}

#[test]
fn dispatch_is_fail_closed_without_admission_or_proof() {
    // Every class and surface is asked, and C1 and C2 are admitted
    // autonomously; but the only surface is L2, and no probe transcript is
    // verified yet: the level is unproven, nothing is dispatched.
    let a = answers(GATED);
    assert_eq!(a.iter().filter(|(q, _, _)| q == "admission.dispatch").count(), 5, "{a:#?}");
    assert!(!allowed(&a, "admission.dispatch", &["C1", "ci-pool-a"]));
    assert!(!allowed(&a, "admission.dispatch", &["C2", "ci-pool-a"]));
    // An L1 level needs no proof, but autonomous dispatch is never below L2.
    let l1 = GATED.replace("    L2:\n", "    L1:\n");
    assert!(!any_dispatched(&answers(&l1)));
    // No admission rule admits a class: nothing may be dispatched.
    let none = GATED.replace("disposition: autonomous-eligible", "disposition: human-gated");
    assert!(!any_dispatched(&answers(&none)));
    // Under `human-gated-only`, nothing is dispatched by declaration.
    let gated = GATED.replace(
        "executor_class: self-operated\n",
        "executor_class: self-operated\ndispatch_posture: human-gated-only\n",
    );
    assert!(!any_dispatched(&answers(&gated)));
}
