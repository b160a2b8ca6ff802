//! `on unknown_key allow` (an open record: a key it does not declare is no
//! finding, and the records nested in it are open too unless one names its
//! own `unknown_key` rule), and Markdown records read as upstream reads a
//! queued item (the marker found as text, exactly once; white space, then
//! the fence).

use grail_engine::db::{check_deployment, compile_policy};
use grail_engine::{Database, Deployment, Outcome, PolicySet, SourceText};

const POLICY: &str = r#"
/// A binding another tool owns: grail reads its surfaces only.
document Autonomy as autonomy where triggers present {
  on syntax rule a.syntax
  on duplicate_key rule a.duplicate_key
  on unknown_key allow
  on type rule a.type
  triggers: Triggers
  strict?: Strict
  "*"?: map string -> Section default {}
}

/// Any other section: its surfaces.
record Section {
  surfaces?: map string -> Surface default {}
}

/// Surfaces by name.
record Triggers {
  surfaces?: map string -> Surface default {}
}

/// A surface: open, as the document is.
record Surface {
  class?: string
}

/// A part that is closed again.
record Strict {
  on unknown_key rule a.strict_key
  name?: string
}

/// A record after a marker.
document Item as item, items in markdown after "<!-- item:v1 -->" rule item.marker {
  on syntax rule item.syntax
  on duplicate_key rule item.duplicate_key
  on unknown_key allow
  on type rule item.type
  on empty rule item.empty
  name: string
}

/// Every surface of another section has a class.
rule a.other_classes
  for k, sec in autonomy["*"]
  for n, s in sec.surfaces
  require present(s.class) else fail "`{k}.surfaces.{n}` has no class"
  at s

/// Every surface has a class.
rule a.classes
  for k, s in autonomy.triggers.surfaces
  require present(s.class) else fail "`{k}` has no class"
  at s

/// An item has a name.
rule item.named
  require item.name != "" else fail "no name"
  at item.name
"#;

fn findings(files: &[(&str, &str)]) -> Vec<(String, Outcome, String)> {
    let db = Database::default();
    let set = PolicySet::new(&db, vec![SourceText::new(&db, "policy.grail".into(), POLICY.into(), None)]);
    assert!(!compile_policy(&db, set).has_errors(), "{:#?}", compile_policy(&db, set).diagnostics);
    let docs = files.iter().map(|(p, t)| SourceText::new(&db, (*p).into(), (*t).into(), None)).collect();
    let deployment = Deployment::builder(docs, Vec::new()).new(&db);
    let mut out: Vec<_> = check_deployment(&db, set, deployment)
        .findings
        .iter()
        .filter(|f| !matches!(f.outcome, Outcome::Pass | Outcome::NotApplicable))
        .map(|f| (f.rule.clone(), f.outcome, f.message.clone()))
        .collect();
    out.sort();
    out
}

#[test]
fn an_open_record_ignores_the_keys_it_does_not_declare_at_every_depth() {
    let found = findings(&[(
        "binding.json",
        r#"{"roles": {"x": null}, "budget": "free", "triggers": {"drain": {"cadence": "hourly"},
            "surfaces": {"cron": {"class": "temporal", "execution_surface": "ci"}}}}"#,
    )]);
    assert_eq!(found, Vec::new());
}

#[test]
fn a_nested_record_that_names_its_unknown_key_rule_is_closed_again() {
    let found = findings(&[("binding.json", r#"{"triggers": {}, "strict": {"name": "a", "nmae": "b"}}"#)]);
    let fails: Vec<_> = found.iter().filter(|(_, o, _)| *o == Outcome::Fail).collect();
    assert_eq!(fails.len(), 1, "{found:?}");
    assert_eq!(fails[0].0, "a.strict_key");
}

#[test]
fn an_open_record_still_types_the_keys_it_declares() {
    let found = findings(&[("binding.json", r#"{"triggers": {"surfaces": {"cron": {"class": 3}}}}"#)]);
    assert!(found.iter().any(|(rule, outcome, _)| rule == "a.type" && *outcome == Outcome::Fail), "{found:?}");
}

#[test]
fn only_unknown_keys_can_be_allowed() {
    let db = Database::default();
    let text = POLICY.replace("on type rule a.type", "on type allow");
    let set = PolicySet::new(&db, vec![SourceText::new(&db, "policy.grail".into(), text, None)]);
    let compiled = compile_policy(&db, set);
    assert!(
        compiled.diagnostics.iter().any(|d| d.message.contains("only unknown keys can be allowed")),
        "{:#?}",
        compiled.diagnostics
    );
}

const RECORD: &str = "```json\n{\"name\": \"a\"}\n```\n";

#[test]
fn the_marker_is_found_as_text_exactly_once() {
    let good = format!("# An item\n\n<!-- item:v1 -->\n{RECORD}");
    assert_eq!(findings(&[("item.md", &good)]), Vec::new());
    // Quoted in a sentence, the marker is a second one.
    let quoted = format!("Quoting `<!-- item:v1 -->` here.\n\n<!-- item:v1 -->\n{RECORD}");
    let found = findings(&[("item.md", &quoted)]);
    assert!(
        found.iter().any(|(r, o, m)| r == "item.marker" && *o == Outcome::Fail && m.contains("2 times")),
        "{found:?}"
    );
    // Inside a code block too.
    let fenced = format!("<!-- item:v1 -->\n{RECORD}\n```\n<!-- item:v1 -->\n```\n");
    assert!(findings(&[("item.md", &fenced)]).iter().any(|(r, _, _)| r == "item.marker"));
}

#[test]
fn white_space_may_come_between_the_marker_and_the_fence_and_text_may_not() {
    for (text, passes) in [
        (format!("<!-- item:v1 -->\n\n\n{RECORD}"), true),
        (format!("<!-- item:v1 -->\n   {RECORD}"), true),
        (format!("<!-- item:v1 --> {RECORD}"), true),
        ("<!-- item:v1 -->\r\n```json\r\n{\"name\": \"a\"}\r\n```\r\n".to_string(), true),
        (format!("<!-- item:v1 -->\nSee below.\n{RECORD}"), false),
        ("<!-- item:v1 -->\n```JSON\n{\"name\": \"a\"}\n```\n".to_string(), false),
        ("<!-- item:v1 -->\n```json\n{\"name\": \"a\"}\n".to_string(), false),
        ("<!-- item:v1 -->\n```json {\"name\": \"a\"}\n```\n".to_string(), false),
    ] {
        let found = findings(&[("item.md", &text)]);
        let marker = found.iter().any(|(r, o, _)| r == "item.marker" && *o == Outcome::Fail);
        assert_eq!(!marker, passes, "{text:?}: {found:?}");
    }
}

#[test]
fn a_record_that_is_not_json_is_the_syntax_finding() {
    let found = findings(&[("item.md", "<!-- item:v1 -->\n```json\n{name: a}\n```\n")]);
    assert!(found.iter().any(|(r, o, _)| r == "item.syntax" && *o == Outcome::Fail), "{found:?}");
}

#[test]
fn a_field_named_star_holds_every_other_key_whose_value_fits() {
    // `channels` is a section; `budget` (a string) and `roles` (null) are not
    // mappings, so the open record leaves them unread.
    let found = findings(&[(
        "binding.json",
        r#"{"triggers": {}, "budget": "free", "roles": null,
            "channels": {"surfaces": {"feed": {"transport": "poll"}}}}"#,
    )]);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, "a.other_classes");
    assert!(found[0].2.contains("`channels.surfaces.feed` has no class"), "{found:?}");
    let fine =
        findings(&[("binding.json", r#"{"triggers": {}, "channels": {"surfaces": {"feed": {"class": "temporal"}}}}"#)]);
    assert_eq!(fine, Vec::new());
}
