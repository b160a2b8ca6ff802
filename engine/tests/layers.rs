//! Layers of trust for any document kind (issue 20, item 7), on a small
//! policy of its own: protected records count only when the invocation bound
//! them to their trusted layer, and layer names are scoped per kind.

use grail_engine::db::{LayerBinding, PolicySet, check_deployment};
use grail_engine::layers::BoundBy;
use grail_engine::{Database, Deployment, Outcome, SourceText};

const POLICY: &str = r#"
enum Phase { plan build }

document Plan as plan where kind absent {
  on syntax rule plan.syntax
  on duplicate_key rule plan.duplicate_key
  on unknown_key rule plan.unknown_key
  on type rule plan.type
  phase: Phase
  owner?: string
}

document Receipt as receipt, receipts where kind == "receipt" {
  on syntax rule receipt.syntax
  on duplicate_key rule receipt.duplicate_key
  on unknown_key rule receipt.unknown_key
  on type rule receipt.type
  kind: string
  phase: Phase
}

layers of Plan {
  layer lead
  layer team
  standalone
  any layer sets phase, owner
  on loosen rule plan.loosen
  on untrusted rule plan.untrusted
  on unknown_key rule plan.layer_unknown_key
  on order rule plan.layer_order
}

/// Receipts are written by the harness; anything else is untrusted. A
/// receipt nobody bound is of no trusted layer.
layers of Receipt {
  layer harness
  layer untrusted
  any layer sets kind, phase
  on loosen rule receipt.loosen
  on untrusted rule receipt.untrusted
  on unknown_key rule receipt.layer_unknown_key
  on order rule receipt.layer_order
}

/// The plan's phase is vouched for by a receipt the harness wrote.
rule receipt.harness_bound
  require bound_to(receipt.phase, "harness") and receipt.phase == plan.phase
    else fail "the phase `{plan.phase}` has no receipt bound to the harness"
"#;

fn outcome(bindings: &[(&str, usize)]) -> Vec<(String, Outcome)> {
    let db = Database::default();
    let policy = SourceText::new(&db, "p.grail".into(), POLICY.into(), None);
    let set = PolicySet::new(&db, vec![policy]);
    let compiled = grail_engine::db::compile_policy(&db, set);
    assert!(!compiled.has_errors(), "{:#?}", compiled.diagnostics);
    let plan = SourceText::new(&db, "plan.yaml".into(), "phase: build\n".into(), None);
    let receipt = SourceText::new(&db, "receipt.yaml".into(), "kind: receipt\nphase: build\n".into(), None);
    let docs = vec![plan, receipt];
    let bindings = bindings
        .iter()
        .map(|(layer, d)| LayerBinding { document: docs[*d], layer: layer.to_string(), by: BoundBy::Flag })
        .collect();
    let deployment = Deployment::builder(docs, Vec::new()).bindings(bindings).new(&db);
    let mut v: Vec<(String, Outcome)> = check_deployment(&db, set, deployment)
        .findings
        .iter()
        .filter(|f| f.rule.starts_with("receipt.") || f.rule.starts_with("plan.layer"))
        .filter(|f| f.outcome != Outcome::NotApplicable)
        .map(|f| (f.rule.clone(), f.outcome))
        .collect();
    v.sort();
    v
}

fn has(v: &[(String, Outcome)], rule: &str, outcome: Outcome) -> bool {
    v.iter().any(|(r, o)| r == rule && *o == outcome)
}

#[test]
fn a_receipt_counts_only_when_bound_to_the_harness() {
    // Bound by the invocation: the rule passes.
    let bound = outcome(&[("harness", 1)]);
    assert!(has(&bound, "receipt.harness_bound", Outcome::Pass), "{bound:?}");
    // The same receipt, bound by nothing: of the lowest layer, and bound to no layer.
    let unbound = outcome(&[]);
    assert!(has(&unbound, "receipt.harness_bound", Outcome::Fail), "{unbound:?}");
    // Bound to the untrusted layer: the same.
    let untrusted = outcome(&[("untrusted", 1)]);
    assert!(has(&untrusted, "receipt.harness_bound", Outcome::Fail), "{untrusted:?}");
}

#[test]
fn layer_names_are_scoped_per_kind() {
    // `lead` is a layer of Plan, not of Receipt: binding the receipt to it is refused.
    let wrong = outcome(&[("lead", 1)]);
    assert!(has(&wrong, "receipt.layer_order", Outcome::Fail), "{wrong:?}");
    assert!(has(&wrong, "receipt.harness_bound", Outcome::Fail), "{wrong:?}");
    // Each kind's layers bind its own documents, side by side.
    let both = outcome(&[("lead", 0), ("harness", 1)]);
    assert!(has(&both, "receipt.harness_bound", Outcome::Pass), "{both:?}");
    assert!(has(&both, "plan.layer_order", Outcome::Pass), "{both:?}");
}

#[test]
fn bound_to_names_a_declared_layer() {
    let db = Database::default();
    let text = POLICY.replace("bound_to(receipt.phase, \"harness\")", "bound_to(receipt.phase, \"harnes\")");
    let set = PolicySet::new(&db, vec![SourceText::new(&db, "p.grail".into(), text, None)]);
    let compiled = grail_engine::db::compile_policy(&db, set);
    let d = compiled.diagnostics.iter().find(|d| d.code == "unknown-name").expect("an unknown layer");
    assert!(d.message.contains("harnes"), "{d:?}");
}
