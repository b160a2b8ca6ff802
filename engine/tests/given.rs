//! Documents given under a name (`given "NAME"`): selected only by the name
//! the caller gives a file under, never by content; a list root read through
//! `list into`; and a given file that cannot be read, parsed or shaped read as
//! missing evidence (`on unreadable missing`) rather than as a finding.

use grail_engine::db::{NamedDocument, check_deployment, compile_policy, table_deployment};
use grail_engine::{Database, Deployment, Outcome, PolicySet, SourceText};

const POLICY: &str = r#"
document Sheet as sheet where kind absent {
  on syntax rule sheet.syntax
  on duplicate_key rule sheet.duplicate_key
  on unknown_key rule sheet.unknown_key
  on type rule sheet.type
  name: string
}

document Events as events, event_files given "events" {
  on syntax rule events.syntax
  on duplicate_key rule events.duplicate_key
  on unknown_key rule events.unknown_key
  on type rule events.type
  on unreadable missing
  list into entries
  entries: list Event
}

document Strict as strict given "strict" {
  on syntax rule strict.syntax
  on duplicate_key rule strict.duplicate_key
  on unknown_key rule strict.unknown_key
  on type rule strict.type
  list into entries
  entries: list Event
}

record Event {
  what?: string
}

rule events.readable
  require present(events) else unknown "{reason(events)}"

table events.seen
  for f in event_files
  row state = choose(present(events), "read", "unavailable")
  column size = entries(events.entries ?? [])
  line "{sheet.name}: {choose(present(events), show(entries(events.entries)) + " event(s)", reason(events))}"
"#;

type Found = Vec<(String, Outcome, String)>;

/// Checks `sheet.yaml` with each `(name, path, text)` given under its name;
/// `text` `None` is a file the caller could not read.
fn run(given: &[(&str, &str, Option<&str>)]) -> (Found, Vec<String>) {
    let db = Database::default();
    let policy = SourceText::new(&db, "p.grail".into(), POLICY.into(), None);
    let set = PolicySet::new(&db, vec![policy]);
    assert!(compile_policy(&db, set).diagnostics.is_empty(), "{:?}", compile_policy(&db, set).diagnostics);
    let sheet = SourceText::new(&db, "sheet.yaml".into(), "name: s\n".into(), None);
    let named = given
        .iter()
        .map(|(name, path, text)| {
            let document = match text {
                Some(t) => SourceText::new(&db, (*path).into(), (*t).into(), None),
                None => SourceText::builder((*path).into(), String::new(), None)
                    .unread(Some("no such file".into()))
                    .new(&db),
            };
            NamedDocument { name: (*name).into(), document }
        })
        .collect();
    let d = Deployment::builder(vec![sheet], vec![]).named(named).new(&db);
    let found = check_deployment(&db, set, d)
        .findings
        .iter()
        .filter(|f| f.outcome != Outcome::Pass && f.outcome != Outcome::NotApplicable)
        .map(|f| (f.rule.clone(), f.outcome, f.message.clone()))
        .collect();
    let lines = grail_engine::table::verdicts(table_deployment(&db, set, d));
    (found, lines)
}

#[test]
fn a_list_given_under_its_name_is_the_record_its_list_into_field_holds() {
    let (found, lines) = run(&[("events", "e.json", Some(r#"[{"what": "a"}, {"what": "b"}]"#))]);
    assert_eq!(found, vec![]);
    assert_eq!(lines, vec!["s: 2 event(s)".to_string()]);
}

#[test]
fn without_the_file_nothing_judges_or_shows_the_given_kind() {
    let (found, lines) = run(&[]);
    assert_eq!(found, vec![], "a rule of a kind the deployment lacks does not run");
    assert_eq!(lines, Vec::<String>::new());
}

#[test]
fn a_given_file_that_is_unavailable_is_missing_evidence_with_the_reason_and_no_finding() {
    let cases = [
        (None, "`e.json` unavailable (cannot be read: no such file)"),
        (Some("[{"), "`e.json` unavailable (not JSON or YAML: "),
        (Some(r#"{"what": "a"}"#), "`e.json` unavailable (a `Events` is a list, and this document is a mapping)"),
    ];
    for (text, why) in cases {
        let (found, lines) = run(&[("events", "e.json", text)]);
        assert_eq!(found.len(), 1, "only the rule that needs it, no structural finding: {found:?}");
        assert_eq!((found[0].0.as_str(), found[0].1), ("events.readable", Outcome::Unknown));
        assert!(found[0].2.starts_with(why), "{} does not start with {why}", found[0].2);
        assert_eq!(lines.len(), 1, "the document is there, unavailable: {lines:?}");
        assert!(lines[0].starts_with(&format!("s: {why}")), "{lines:?}");
    }
}

#[test]
fn without_on_unreadable_missing_a_misshapen_given_file_is_its_kinds_finding() {
    let (found, _) = run(&[("events", "e.json", Some("[]")), ("strict", "s.json", Some(r#"{"what": "a"}"#))]);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!((found[0].0.as_str(), found[0].1), ("strict.type", Outcome::Fail));
    let (found, _) = run(&[("events", "e.json", Some("[]")), ("strict", "s.json", None)]);
    assert_eq!((found[0].0.as_str(), found[0].1), ("strict.syntax", Outcome::Fail));
}

#[test]
fn content_never_selects_a_given_kind() {
    // A list among the documents is of no kind; a mapping is a `Sheet` by its keys.
    let db = Database::default();
    let policy = SourceText::new(&db, "p.grail".into(), POLICY.into(), None);
    let set = PolicySet::new(&db, vec![policy]);
    let list = SourceText::new(&db, "e.json".into(), r#"[{"what": "a"}]"#.into(), None);
    let d = Deployment::builder(vec![list], vec![]).new(&db);
    let findings = &check_deployment(&db, set, d).findings;
    assert!(findings.iter().any(|f| f.rule == "sheet.type" && f.outcome == Outcome::Fail), "{findings:?}");
    assert!(table_deployment(&db, set, d).iter().all(|t| t.rows.is_empty()));
}

#[test]
fn a_file_given_under_a_name_no_kind_takes_is_a_finding() {
    let (found, _) = run(&[("events", "e.json", Some("[]")), ("other", "o.json", Some("[]"))]);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].2.contains("no document kind of the policy is given as `other`"), "{found:?}");
}
