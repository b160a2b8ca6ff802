//! What the engine's data-driven tests share: a policy of the test's own,
//! checked over documents.

use grail_engine::db::{AttachedFile, check_deployment, compile_policy};
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

/// A listed finding's place: `(rule, outcome, path, attachment_path, related)`.
pub type Placed = (String, Outcome, String, Option<String>, Vec<String>);

/// The places of the findings a report lists (every outcome but PASS) of
/// checking `docs` (path, text) against `policy`, with `attached` files
/// (index of the document that names it, path as written, text), in report order.
pub fn places(policy: &str, docs: &[(&str, &str)], attached: &[(usize, &str, &str)]) -> Vec<Placed> {
    let db = Database::default();
    let set = PolicySet::new(&db, vec![SourceText::new(&db, "policy.grail".into(), policy.into(), None)]);
    let compiled = compile_policy(&db, set);
    assert!(!compiled.has_errors(), "the policy compiles: {:#?}", compiled.diagnostics);
    let documents: Vec<SourceText> =
        docs.iter().map(|(p, t)| SourceText::new(&db, p.to_string(), t.to_string(), None)).collect();
    let attachments = attached
        .iter()
        .map(|(from, path, text)| AttachedFile {
            from: documents[*from],
            path: path.to_string(),
            read: Ok(SourceText::new(&db, path.to_string(), text.to_string(), None)),
        })
        .collect();
    let deployment = Deployment::builder(documents, attachments).new(&db);
    check_deployment(&db, set, deployment)
        .findings
        .iter()
        .filter(|f| f.outcome != Outcome::Pass)
        .map(|f| {
            let p = f.place.paths.as_ref().expect("a listed finding has a path");
            (f.rule.clone(), f.outcome, p.path.clone(), p.attachment_path.clone(), p.related.clone())
        })
        .collect()
}
