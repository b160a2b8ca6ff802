//! What the engine's data-driven tests share: a policy of the test's own,
//! checked over documents.

use grail_engine::db::{check_deployment, compile_policy};
use grail_engine::{Database, Deployment, Outcome, PolicySet, SourceText};

/// The outcomes of checking `docs` (path, text) against `policy`, as
/// `(rule, outcome, subject, message)`, PASS included, in report order.
pub fn check(policy: &str, docs: &[(&str, &str)], now: Option<&str>) -> Vec<(String, Outcome, String, String)> {
    let db = Database::default();
    let set = PolicySet::new(&db, vec![SourceText::new(&db, "policy.grail".into(), policy.into(), None)]);
    let compiled = compile_policy(&db, set);
    assert!(!compiled.has_errors(), "the policy compiles: {:#?}", compiled.diagnostics);
    let documents = docs.iter().map(|(p, t)| SourceText::new(&db, p.to_string(), t.to_string(), None)).collect();
    let now = now.map(|t| grail_engine::time::rfc3339_nanos(t).expect("a time"));
    let deployment = Deployment::builder(documents, Vec::new()).now(now).new(&db);
    check_deployment(&db, set, deployment)
        .findings
        .iter()
        .map(|f| (f.rule.clone(), f.outcome, f.subject.clone(), f.message.clone()))
        .collect()
}
