//! Tables and kinds held once, on a small policy of their own: rows per
//! tuple of the `for`s (filters and `let`s included), absent cells, where
//! each cell was read, and the documents one deployment may not hold together.

use grail_engine::db::{compile_policy, crowded_deployment, table_deployment};
use grail_engine::diagnostic::Provenance;
use grail_engine::{Database, Deployment, PolicySet, SourceText};

const POLICY: &str = r#"
document Sheet as sheet where kind absent {
  on syntax rule sheet.syntax
  on duplicate_key rule sheet.duplicate_key
  on unknown_key rule sheet.unknown_key
  on type rule sheet.type
  at most one per deployment
  items: list Item
}

document Note as note, notes where kind == "note" {
  on syntax rule note.syntax
  on duplicate_key rule note.duplicate_key
  on unknown_key rule note.unknown_key
  on type rule note.type
  kind: string
  text?: string
}

record Item identity name {
  name: string
  size?: int
  tags?: list string
}

rule sheet.named
  for i in sheet.items
  require i.name != "" else fail "an item has no name"

/// The items of the sheet larger than one.
table sheet.items
  for i in sheet.items if i.size > 1
  let twice = i.size * 2
  row name = i.name
  column size = i.size
  column twice = twice
  detail i.tags
"#;

fn deployment(db: &Database, docs: &[(&str, &str)]) -> (PolicySet, Deployment) {
    let policy = SourceText::new(db, "p.grail".into(), POLICY.into(), None);
    let set = PolicySet::new(db, vec![policy]);
    assert!(compile_policy(db, set).diagnostics.is_empty(), "{:?}", compile_policy(db, set).diagnostics);
    let docs: Vec<SourceText> = docs.iter().map(|(p, t)| SourceText::new(db, (*p).into(), (*t).into(), None)).collect();
    (set, Deployment::new(db, docs, vec![]))
}

#[test]
fn a_row_per_tuple_that_passes_the_filter_each_cell_located() {
    let db = Database::default();
    let sheet = "items:\n  - {name: a, size: 3, tags: [x, y]}\n  - {name: b, size: 1}\n  - {name: c, size: 2}\n";
    let (set, d) = deployment(&db, &[("s.yaml", sheet)]);
    let tables = table_deployment(&db, set, d);
    assert_eq!(tables.len(), 1);
    let t = &tables[0];
    assert_eq!(t.id, "sheet.items");
    assert_eq!(t.columns, ["name", "size", "twice"]);
    assert_eq!(t.detail.as_deref(), Some("i.tags"));
    let shown: Vec<Vec<Option<String>>> =
        t.rows.iter().map(|r| std::iter::once(&r.key).chain(&r.cells).map(|c| c.text.clone()).collect()).collect();
    let s = |x: &str| Some(x.to_string());
    // `b` is not larger than one; `c` has no tags.
    assert_eq!(shown, [vec![s("a"), s("3"), s("6")], vec![s("c"), s("2"), s("4")]]);
    let tags: Vec<Option<String>> = t.rows[0].detail.iter().map(|c| c.text.clone()).collect();
    assert_eq!(tags, [s("x"), s("y")]);
    assert_eq!(t.rows[1].detail.len(), 1, "an absent list is one absent value");
    assert_eq!(t.rows[1].detail[0].text, None);
    // The size of `a` was read at `3` in the document; `twice` was computed.
    let at = sheet.find("3").expect("the size of a");
    assert!(matches!(t.rows[0].cells[0].from, Provenance::Document(0, span) if span.start == at), "{:?}", t.rows[0]);
    assert_eq!(t.rows[0].cells[1].from, Provenance::Computed);
}

#[test]
fn a_table_whose_documents_are_not_checked_is_not_shown() {
    let db = Database::default();
    let (set, d) = deployment(&db, &[("n.yaml", "kind: note\n")]);
    assert!(table_deployment(&db, set, d).is_empty());
}

#[test]
fn a_second_document_of_a_kind_held_once_is_named_with_the_first() {
    let db = Database::default();
    let sheet = "items: []\n";
    let (set, d) = deployment(
        &db,
        &[
            ("a.yaml", sheet),
            ("n.yaml", "kind: note\n"),
            ("m.yaml", "kind: note\n"),
            ("b.yaml", sheet),
            ("c.yaml", sheet),
        ],
    );
    let pairs: Vec<(String, u32, u32)> =
        crowded_deployment(&db, set, d).iter().map(|c| (c.kind.clone(), c.first.0, c.second.0)).collect();
    // Notes may be many; every sheet after the first is paired with the first.
    assert_eq!(pairs, [("Sheet".to_string(), 0, 3), ("Sheet".to_string(), 0, 4)]);
    let (set, d) = deployment(&db, &[("a.yaml", sheet), ("n.yaml", "kind: note\n"), ("m.yaml", "kind: note\n")]);
    assert!(crowded_deployment(&db, set, d).is_empty());
}
