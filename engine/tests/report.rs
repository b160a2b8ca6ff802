//! `when C else report "why"`: a false guard does not skip the rule; a FAIL
//! or UNKNOWN it then finds is NOT APPLICABLE, said after the reason, and
//! `holds` and `failure` still see it.

use grail_engine::db::{check_deployment, compile_policy, table_deployment};
use grail_engine::{Database, Deployment, Outcome, PolicySet, SourceText};

const POLICY: &str = r#"
/// A runner and how it is run.
document Runner as runner where kind == "runner" {
  on syntax rule runner.syntax
  on duplicate_key rule runner.duplicate_key
  on unknown_key rule runner.unknown_key
  on type rule runner.type
  kind: string
  attended: bool
  sandboxed: bool
  networked: bool
}

/// An unattended runner is sandboxed; an attended one is reported, not judged.
rule runner.sandboxed
  when not runner.attended else report "attended: reported, not a finding"
  require runner.sandboxed else fail "the runner is not sandboxed"

/// An unattended runner is offline; an attended one is reported, not judged.
rule runner.offline
  when not runner.attended else report "attended: reported, not a finding"
  require not runner.networked else fail "the runner is networked"

/// Why the runner may not run unattended, as a verdict says it.
table runner.verdict
  for r in [runner]
  row kind = r.kind
  column trusted = holds(["runner.sandboxed", "runner.offline"], r)
  column because = failure(["runner.sandboxed", "runner.offline"], r) ?? "-"
"#;

/// A rule's outcome, with its message.
type Found = Vec<(String, Outcome, String)>;

/// The outcomes of the two rules, and the table's cells (trusted, because).
fn check(doc: &str) -> (Found, Vec<Option<String>>) {
    let db = Database::default();
    let set = PolicySet::new(&db, vec![SourceText::new(&db, "policy.grail".into(), POLICY.into(), None)]);
    assert!(!compile_policy(&db, set).has_errors(), "{:#?}", compile_policy(&db, set).diagnostics);
    let doc = SourceText::new(&db, "runner.json".into(), doc.into(), None);
    let deployment = Deployment::builder(vec![doc], Vec::new()).new(&db);
    let run = check_deployment(&db, set, deployment);
    let mut found = run
        .findings
        .iter()
        .filter(|f| f.rule.starts_with("runner.") && f.rule != "runner.syntax" && !f.rule.ends_with("_key"))
        .filter(|f| f.rule != "runner.type")
        .map(|f| (f.rule.clone(), f.outcome, f.message.clone()))
        .collect::<Found>();
    found.sort();
    let tables = table_deployment(&db, set, deployment);
    (found, tables[0].rows[0].cells.iter().map(|c| c.text.clone()).collect())
}

#[test]
fn a_false_guard_that_reports_judges_on_and_reports() {
    let (found, tables) = check(r#"{"kind": "runner", "attended": true, "sandboxed": false, "networked": true}"#);
    assert_eq!(
        found,
        [
            (
                "runner.offline".into(),
                Outcome::NotApplicable,
                "attended: reported, not a finding: the runner is networked".into()
            ),
            (
                "runner.sandboxed".into(),
                Outcome::NotApplicable,
                "attended: reported, not a finding: the runner is not sandboxed".into()
            ),
        ]
    );
    // The subject does not hold, and the first failure is said without the reason.
    assert_eq!(tables, [Some("false".into()), Some("the runner is not sandboxed".into())]);
}

#[test]
fn a_true_guard_judges_as_ever() {
    let (found, _) = check(r#"{"kind": "runner", "attended": false, "sandboxed": false, "networked": false}"#);
    assert_eq!(
        found,
        [
            ("runner.offline".into(), Outcome::Pass, String::new()),
            ("runner.sandboxed".into(), Outcome::Fail, "the runner is not sandboxed".into()),
        ]
    );
}

#[test]
fn what_passes_under_a_reporting_guard_passes_and_holds() {
    let (found, tables) = check(r#"{"kind": "runner", "attended": true, "sandboxed": true, "networked": false}"#);
    assert!(found.iter().all(|(_, o, _)| *o == Outcome::Pass), "{found:#?}");
    assert_eq!(tables, [Some("true".into()), Some("-".into())]);
}
