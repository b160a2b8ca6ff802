//! The constructs of the language at work: a small policy of its own per
//! feature, checked over documents, each outcome asserted.

use grail_engine::db::{check_deployment, compile_policy};
use grail_engine::{Database, Deployment, Outcome, PolicySet, SourceText};

/// The outcomes of checking `docs` (path, text) against `policy`, as
/// `(rule, outcome, subject, message)`, PASS included, in report order.
fn check(policy: &str, docs: &[(&str, &str)], now: Option<&str>) -> Vec<(String, Outcome, String, String)> {
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

/// The outcome of `rule` for `subject`.
#[track_caller]
fn outcome(findings: &[(String, Outcome, String, String)], rule: &str, subject: &str) -> (Outcome, String) {
    findings
        .iter()
        .find(|(r, _, s, _)| r == rule && s == subject)
        .map(|(_, o, _, m)| (*o, m.clone()))
        .unwrap_or_else(|| panic!("no finding of {rule} for {subject} in {findings:#?}"))
}

const GRANTS: &str = r#"
document Log as log where kind absent {
  on syntax rule log.syntax
  on duplicate_key rule log.duplicate_key
  on unknown_key rule log.unknown_key
  on type rule log.type
  grants?: list Grant
}
record Grant identity id {
  id: string
  created_at: string
  expires_at: string
}
rule grant.length
  for g in log.grants
  let lasts = timestamp(g.expires_at) - timestamp(g.created_at)
  require lasts >= seconds(0) and lasts <= hours(72) else fail "{g.id} lasts {lasts}"
rule grant.live
  for g in log.grants
  require timestamp(g.expires_at) > now() else fail "{g.id} expired at {timestamp(g.expires_at)}"
rule grant.window
  for g in log.grants
  require timestamp(g.created_at) + days(3) - minutes(1) * 2 < timestamp(g.expires_at)
    else fail "{g.id} is short"
"#;

fn grant(created: &str, expires: &str) -> String {
    format!("grants:\n  - {{id: G, created_at: \"{created}\", expires_at: \"{expires}\"}}\n")
}

#[test]
fn durations_are_exact_to_the_nanosecond() {
    let over = check(GRANTS, &[("log.yaml", &grant("2026-08-11T09:00:00Z", "2026-08-14T09:00:00.999Z"))], None);
    assert_eq!(outcome(&over, "grant.length", "grants.G"), (Outcome::Fail, "G lasts 72h 999ms".into()));
    let nano = check(GRANTS, &[("log.yaml", &grant("2026-08-11T09:00:00Z", "2026-08-14T09:00:00.000000001Z"))], None);
    assert_eq!(outcome(&nano, "grant.length", "grants.G").0, Outcome::Fail);
    let exact = check(GRANTS, &[("log.yaml", &grant("2026-08-11T11:00:00+02:00", "2026-08-14T09:00:00.000Z"))], None);
    assert_eq!(outcome(&exact, "grant.length", "grants.G").0, Outcome::Pass);
    let reversed = check(GRANTS, &[("log.yaml", &grant("2026-08-11T09:00:00.5Z", "2026-08-11T09:00:00Z"))], None);
    assert_eq!(outcome(&reversed, "grant.length", "grants.G"), (Outcome::Fail, "G lasts -500ms".into()));
    assert_eq!(outcome(&exact, "grant.window", "grants.G").0, Outcome::Pass);
}

#[test]
fn a_malformed_offset_is_unknown_never_a_pass() {
    for bad in ["2026-08-11T09:00:00-+9:00", "2026-08-11T09:00:00+9:00", "2026-08-11 09:00:00Z", "2026-08-11"] {
        let f = check(GRANTS, &[("log.yaml", &grant(bad, "2026-08-12T09:00:00Z"))], Some("2026-08-12T00:00:00Z"));
        let (o, m) = outcome(&f, "grant.length", "grants.G");
        assert_eq!(o, Outcome::Unknown, "{bad}: {m}");
    }
}

#[test]
fn now_is_the_time_the_check_was_given() {
    let doc = grant("2026-08-11T09:00:00Z", "2026-08-12T09:00:00Z");
    let before = check(GRANTS, &[("log.yaml", &doc)], Some("2026-08-12T09:00:00.999+01:00"));
    assert_eq!(outcome(&before, "grant.live", "grants.G").0, Outcome::Pass);
    let after = check(GRANTS, &[("log.yaml", &doc)], Some("2026-08-12T09:00:00Z"));
    assert_eq!(outcome(&after, "grant.live", "grants.G"), (Outcome::Fail, "G expired at 2026-08-12T09:00:00Z".into()));
    // Without a time of the check, `now()` is missing evidence.
    let untimed = check(GRANTS, &[("log.yaml", &doc)], None);
    let (o, m) = outcome(&untimed, "grant.live", "grants.G");
    assert_eq!(o, Outcome::Unknown);
    assert!(m.contains("the time of the check was not given"), "{m}");
}

const KINDS: &str = r#"
document Binding as binding where kind absent and cases absent {
  on syntax rule b.syntax
  on duplicate_key rule b.duplicate_key
  on unknown_key rule b.unknown_key
  on type rule b.type
  name?: string
}
document Pack as pack where cases present and kind absent {
  on syntax rule p.syntax
  on duplicate_key rule p.duplicate_key
  on unknown_key rule p.unknown_key
  on type rule p.type
  cases: list string
}
rule p.some_case
  require count(pack.cases) >= 1 else fail "no case"
rule b.named
  require present(binding.name) else fail "no name"
"#;

#[test]
fn a_kind_is_recognised_by_a_key_it_carries() {
    let f = check(KINDS, &[("pack.yaml", "cases: [a]\n"), ("binding.yaml", "name: x\n")], None);
    assert_eq!(outcome(&f, "p.some_case", "pack.yaml").0, Outcome::Pass);
    assert_eq!(outcome(&f, "b.named", "binding.yaml").0, Outcome::Pass);
    assert!(!f.iter().any(|(r, _, s, _)| r == "b.named" && s == "pack.yaml"), "{f:#?}");
    // A document of neither kind says what each kind has.
    let neither = check(KINDS, &[("odd.yaml", "kind: x\ncases: []\n")], None);
    let (o, m) = outcome(&neither, "b.type", "kind");
    assert_eq!(o, Outcome::Fail);
    assert!(m.contains("no `kind` key and no `cases` key or a `cases` key and no `kind` key"), "{m}");
}

const CREDITS: &str = r#"
document Run as run where kind absent {
  on syntax rule r.syntax
  on duplicate_key rule r.duplicate_key
  on unknown_key rule r.unknown_key
  on type rule r.type
  items?: list Item default []
}
record Item {
  credit?: int
}
rule r.total
  let credits = [i.credit for i in run.items]
  require sum(credits) <= 10 and max(credits) <= 6 and min(credits) >= 0
    else fail "{sum(credits)} in all, {max(credits)} at most, {min(credits)} at least"
"#;

#[test]
fn sums_count_every_entry_and_an_unknown_entry_is_unknown() {
    let ok = check(CREDITS, &[("run.yaml", "items: [{credit: 5}, {credit: 5}]\n")], None);
    assert_eq!(outcome(&ok, "r.total", "run.yaml").0, Outcome::Pass);
    let over = check(CREDITS, &[("run.yaml", "items: [{credit: 5}, {credit: 5}, {credit: 1}]\n")], None);
    assert_eq!(outcome(&over, "r.total", "run.yaml"), (Outcome::Fail, "11 in all, 5 at most, 1 at least".into()));
    let unknown = check(CREDITS, &[("run.yaml", "items: [{credit: 5}, {}]\n")], None);
    assert_eq!(outcome(&unknown, "r.total", "run.yaml").0, Outcome::Unknown);
    // The least of no credits is not there: UNKNOWN, never a pass.
    let none = check(CREDITS, &[("run.yaml", "items: []\n")], None);
    assert_eq!(outcome(&none, "r.total", "run.yaml").0, Outcome::Unknown);
}
