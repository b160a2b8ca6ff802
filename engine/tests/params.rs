//! `param("name")`: a named parameter of the invocation, a list of strings;
//! known absent (decided) when the caller did not give it.

use grail_engine::check::Param;
use grail_engine::db::{check_deployment, compile_policy};
use grail_engine::{Database, Deployment, Outcome, PolicySet, SourceText};

const POLICY: &str = r#"
/// Where a probe went.
document Probe as probe where kind == "probe" {
  on syntax rule probe.syntax
  on duplicate_key rule probe.duplicate_key
  on unknown_key rule probe.unknown_key
  on type rule probe.type
  kind: string
  host: string
}

/// The probe's host is one the invocation configures.
rule probe.configured
  require lower(probe.host) in param("hosts") else fail "`{probe.host}` is not configured"

/// Whether the invocation gave the parameter at all, decided.
rule probe.given
  when probe.kind == "probe" else "no probe"
  require present(param("hosts")) else fail "no hosts given; {count(param("hosts"))} configured"
"#;

fn outcomes(params: Vec<Param>) -> Vec<(String, Outcome, String)> {
    let db = Database::default();
    let set = PolicySet::new(&db, vec![SourceText::new(&db, "policy.grail".into(), POLICY.into(), None)]);
    assert!(!compile_policy(&db, set).has_errors(), "{:#?}", compile_policy(&db, set).diagnostics);
    let doc = SourceText::new(&db, "probe.json".into(), r#"{"kind": "probe", "host": "A.example"}"#.into(), None);
    let deployment = Deployment::builder(vec![doc], Vec::new()).params(params).new(&db);
    check_deployment(&db, set, deployment)
        .findings
        .iter()
        .filter(|f| f.rule == "probe.configured" || f.rule == "probe.given")
        .map(|f| (f.rule.clone(), f.outcome, f.message.clone()))
        .collect()
}

#[test]
fn a_parameter_given_is_a_list_of_strings() {
    let hosts = Param { name: "hosts".into(), values: vec!["b.example".into(), "a.example".into()] };
    let found = outcomes(vec![hosts]);
    assert!(found.iter().all(|(_, o, _)| *o == Outcome::Pass), "{found:#?}");
}

#[test]
fn a_parameter_not_given_is_known_absent() {
    // Decided, never missing evidence: nothing is in it, it is not present, it counts 0.
    let found = outcomes(Vec::new());
    assert_eq!(
        found,
        [
            ("probe.configured".into(), Outcome::Fail, "`A.example` is not configured".into()),
            ("probe.given".into(), Outcome::Fail, "no hosts given; 0 configured".into()),
        ]
    );
    // Another parameter given does not stand for this one.
    let other = Param { name: "roots".into(), values: vec!["a.example".into()] };
    assert_eq!(outcomes(vec![other]).len(), 2);
}

#[test]
fn an_empty_parameter_is_given_and_holds_nothing() {
    let found = outcomes(vec![Param { name: "hosts".into(), values: Vec::new() }]);
    assert_eq!(found[0].1, Outcome::Fail, "{found:#?}");
    assert_eq!(found[1].1, Outcome::Pass, "{found:#?}");
}
