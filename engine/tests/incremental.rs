//! Incrementality: an edit re-runs only the queries that depend on what changed.

use grail_engine::db::{QueryLog, check_document, compile_policy};
use grail_engine::{Database, PolicySet, SourceText};
use salsa::Setter as _;

const VOCABULARY: &str = "enum Color { red green }\n";
const SCHEMA: &str = r#"
document Doc as doc where kind absent {
  on syntax rule t.syntax
  on duplicate_key rule t.duplicate_key
  on unknown_key rule t.unknown_key
  on type rule t.type
  color?: Color
}
rule t.red
  require doc.color == "red" else fail "not red"
"#;

fn take(log: &QueryLog) -> Vec<String> {
    std::mem::take(&mut *log.lock().expect("log lock"))
}

fn ran(log: &[String], query: &str, id: impl std::fmt::Debug) -> bool {
    let id = format!("{id:?}");
    // Entries read `parse_policy(Id(0))`; an input's debug form starts with its id.
    let id = id
        .split_once("[salsa id]: ")
        .map(|(_, rest)| rest.split([',', ' ']).next().unwrap_or("").to_string())
        .unwrap_or(id);
    log.iter().any(|l| l.starts_with(query) && l.contains(&format!("({id})")))
}

#[test]
fn editing_one_policy_file_does_not_reparse_the_other() {
    let (mut db, log) = Database::with_log();
    let a = SourceText::new(&db, "a.grail".into(), VOCABULARY.into(), None);
    let b = SourceText::new(&db, "b.grail".into(), SCHEMA.into(), None);
    let set = PolicySet::new(&db, vec![a, b]);
    assert!(!compile_policy(&db, set).has_errors());
    let first = take(&log);
    assert!(ran(&first, "parse_policy", a) && ran(&first, "parse_policy", b), "{first:#?}");

    b.set_text(&mut db).to(SCHEMA.replace("not red", "still not red"));
    assert!(!compile_policy(&db, set).has_errors());
    let second = take(&log);
    assert!(ran(&second, "parse_policy", b), "the edited file is parsed again: {second:#?}");
    assert!(!ran(&second, "parse_policy", a), "the other file is not: {second:#?}");
    assert!(second.iter().any(|l| l.starts_with("compile_policy")), "{second:#?}");
}

#[test]
fn editing_a_document_does_not_recompile_the_policy() {
    let (mut db, log) = Database::with_log();
    let a = SourceText::new(&db, "a.grail".into(), VOCABULARY.into(), None);
    let b = SourceText::new(&db, "b.grail".into(), SCHEMA.into(), None);
    let set = PolicySet::new(&db, vec![a, b]);
    let doc = SourceText::new(&db, "doc.yaml".into(), "color: green\n".into(), None);
    let other = SourceText::new(&db, "other.yaml".into(), "color: red\n".into(), None);
    let failed = |db: &Database, d| {
        check_document(db, set, d).iter().any(|f| f.rule == "t.red" && f.outcome == grail_engine::Outcome::Fail)
    };
    assert!(failed(&db, doc));
    assert!(!failed(&db, other));
    take(&log);

    doc.set_text(&mut db).to("color: red\n".into());
    assert!(!failed(&db, doc));
    assert!(!failed(&db, other));
    let log = take(&log);
    assert!(!log.iter().any(|l| l.starts_with("compile_policy") || l.starts_with("parse_policy")), "{log:#?}");
    assert!(ran(&log, "load_document", doc), "the edited document is reloaded: {log:#?}");
    assert!(!ran(&log, "load_document", other), "the other document is not: {log:#?}");
}
