//! Shapes a document kind can state beyond types (docs/language.md,
//! "Document kinds and records"): `text` (a string that is not empty),
//! `list T or one` (one value read as a list of one), `complete` maps (a key
//! for every variant) and partial documents of lower layers. Each case is a
//! pair of documents one token apart.

mod support;

use grail_engine::Outcome;

const POLICY: &str = r#"
enum Tier ordered { T1 T2 T3 }
enum Gate tightest_first { closed open }
document Plan as plan where kind absent {
  on syntax rule plan.syntax
  on duplicate_key rule plan.duplicate_key
  on unknown_key rule plan.unknown_key
  on missing_key rule plan.missing_key
  on type rule plan.type
  owner: text
  notes?: list text
  peers?: list text or one
  gates?: map Tier -> Gate complete
}
rule plan.two_peers
  require count(plan.peers) >= 2 else fail "{count(plan.peers)} peers"
  at plan.peers
"#;

fn outcomes(doc: &str) -> Vec<(String, Outcome, String)> {
    support::check(POLICY, &[("plan.yaml", doc)], None)
        .into_iter()
        .filter(|(_, o, _, _)| *o != Outcome::Pass)
        .map(|(rule, o, subject, _)| (rule, o, subject))
        .collect()
}

fn fails(doc: &str) -> Vec<(String, String)> {
    outcomes(doc).into_iter().filter(|(_, o, _)| *o == Outcome::Fail).map(|(r, _, s)| (r, s)).collect()
}

#[test]
fn text_refuses_the_empty_string_and_takes_any_other() {
    assert_eq!(fails("owner: ''\npeers: [a, b]\n"), [("plan.type".to_string(), "owner".to_string())]);
    assert_eq!(fails("owner: ' '\npeers: [a, b]\n"), []);
    assert_eq!(fails("owner: ada\nnotes: [x, '']\npeers: [a, b]\n"), [("plan.type".into(), "notes[1]".into())]);
    assert_eq!(fails("owner: ada\nnotes: [x, y]\npeers: [a, b]\n"), []);
}

#[test]
fn or_one_reads_a_single_value_as_a_list_of_one() {
    // One value: a list of one, so two peers are not there.
    assert_eq!(fails("owner: ada\npeers: a\n"), [("plan.two_peers".to_string(), "plan.yaml".to_string())]);
    assert_eq!(fails("owner: ada\npeers: [a, b]\n"), []);
    // The element type still holds for the single value.
    assert_eq!(fails("owner: ada\npeers: ''\n"), [("plan.type".to_string(), "peers".to_string())]);
    assert_eq!(fails("owner: ada\npeers: 7\n"), [("plan.type".to_string(), "peers".to_string())]);
}

#[test]
fn a_complete_map_needs_every_variant() {
    let missing = fails("owner: ada\npeers: [a, b]\ngates: {T1: closed, T2: open}\n");
    assert_eq!(missing, [("plan.missing_key".to_string(), "gates.T3".to_string())]);
    assert_eq!(fails("owner: ada\npeers: [a, b]\ngates: {T1: closed, T2: open, T3: open}\n"), []);
    // Left out entirely, an optional complete map is absent, not incomplete.
    assert_eq!(fails("owner: ada\npeers: [a, b]\n"), []);
}

#[test]
fn a_required_key_left_out_is_the_kinds_missing_key_finding() {
    assert_eq!(fails("peers: [a, b]\n"), [("plan.missing_key".to_string(), "owner".to_string())]);
}

const LAYERED: &str = r#"
enum Gate tightest_first { closed open }
enum Layer { top low }
document Plan as plan where kind absent {
  on syntax rule plan.syntax
  on duplicate_key rule plan.duplicate_key
  on unknown_key rule plan.unknown_key
  on missing_key rule plan.missing_key
  on type rule plan.type
  owner: text
  gate: Gate
}
layers of Plan {
  layer top
  layer low
  standalone
  only top sets owner
  on loosen rule layer.loosen
  on untrusted rule layer.untrusted
  on unknown_key rule layer.unknown_key
  on order rule layer.order
}
"#;

/// The failures of checking `top` and `low` bound to their layers.
fn layered(top: &str, low: &str) -> Vec<(String, String)> {
    use grail_engine::db::{LayerBinding, PolicySet, check_deployment, compile_policy};
    use grail_engine::layers::BoundBy;
    use grail_engine::{Database, Deployment, SourceText};
    let db = Database::default();
    let set = PolicySet::new(&db, vec![SourceText::new(&db, "p.grail".into(), LAYERED.into(), None)]);
    assert!(!compile_policy(&db, set).has_errors());
    let docs = vec![
        SourceText::new(&db, "top.yaml".into(), top.into(), None),
        SourceText::new(&db, "low.yaml".into(), low.into(), None),
    ];
    let bindings = ["top", "low"]
        .iter()
        .enumerate()
        .map(|(i, l)| LayerBinding { document: docs[i], layer: l.to_string(), by: BoundBy::Flag })
        .collect();
    let deployment = Deployment::builder(docs, Vec::new()).bindings(bindings).new(&db);
    check_deployment(&db, set, deployment)
        .findings
        .iter()
        .filter(|f| f.outcome == Outcome::Fail)
        .map(|f| (f.rule.clone(), f.subject.clone()))
        .collect()
}

#[test]
fn a_lower_layer_is_a_partial_document() {
    // Below the top layer, a document says only what it changes: `owner` is the top's.
    assert_eq!(layered("owner: ada\ngate: open\n", "gate: closed\n"), []);
    // The top layer itself is whole: without `owner` it is missing a key.
    let top_partial = layered("gate: open\n", "gate: closed\n");
    assert_eq!(top_partial, [("plan.missing_key".to_string(), "owner".to_string())]);
    // A partial document still only tightens.
    let loosened = layered("owner: ada\ngate: closed\n", "gate: open\n");
    assert!(loosened.iter().any(|(r, _)| r == "layer.loosen"), "{loosened:#?}");
}

const VALIDITY: &str = r#"
enum Gate tightest_first { closed open }
document Plan as plan where kind absent {
  on syntax rule plan.syntax
  on duplicate_key rule plan.duplicate_key
  on unknown_key rule plan.unknown_key
  on type rule plan.type
  gate?: Gate
}
rule plan.valid_gate
  require valid(plan.gate) else fail "no gate of the vocabulary"
rule plan.present_gate
  require present(plan.gate) else fail "no gate"
"#;

/// `valid(x)` is decided where `present(x)` is not: a value outside its
/// vocabulary is as good as none, never unknown.
#[test]
fn valid_is_decided_for_an_invalid_value() {
    let outcome = |doc: &str, rule: &str| {
        support::check(VALIDITY, &[("plan.yaml", doc)], None)
            .into_iter()
            .find(|(r, ..)| r == rule)
            .map(|(_, o, ..)| o)
            .expect("an outcome")
    };
    assert_eq!(outcome("gate: closed\n", "plan.valid_gate"), Outcome::Pass);
    assert_eq!(outcome("gate: ajar\n", "plan.valid_gate"), Outcome::Fail);
    assert_eq!(outcome("{}\n", "plan.valid_gate"), Outcome::Fail);
    // `present` of the same invalid value cannot be decided.
    assert_eq!(outcome("gate: ajar\n", "plan.present_gate"), Outcome::Unknown);
}
