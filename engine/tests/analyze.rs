//! `grail analyze` on the shipped library, as a round trip through the
//! checker: every subject has a witness `check::check` confirms, every rule
//! of spec sections 1-6 fires on a document the checker confirms and passes
//! on a twin the checker confirms, and no rule is dead.

use grail_engine::Database;
use grail_engine::analyze::{self, Analysis, Bounds, Status};
use grail_engine::db::compile_policy;

fn shipped() -> Analysis {
    let db = Database::default();
    let compiled = compile_policy(&db, grail_engine::shipped::policy_set(&db));
    assert!(!compiled.has_errors());
    analyze::analyze(&compiled.policy, Bounds::default())
}

/// The rules of spec sections 1-6: schema, floors, topology, merge, escalation.
fn sections_1_to_6(id: &str) -> bool {
    ["schema.", "floor.", "topology.", "merge.", "escalation."].iter().any(|p| id.starts_with(p))
}

#[test]
fn the_shipped_library_is_satisfiable_and_every_rule_fires() {
    let a = shipped();
    let mut problems = Vec::new();
    for s in &a.subjects {
        match (&s.witness, &s.problem) {
            (Some(_), None) => {}
            (_, Some(p)) => problems.push(format!("subject {}: {p}", s.name)),
            (None, None) => problems.push(format!("subject {}: no witness", s.name)),
        }
    }
    for c in &a.conflicts {
        problems.push(format!("conflict: {c:?}"));
    }
    for r in &a.rules {
        if matches!(r.status, Status::Dead(_)) {
            problems.push(format!("{}: dead", r.id));
        }
        if sections_1_to_6(&r.id) {
            if r.status != Status::Fires || !r.approximate.is_empty() {
                problems.push(format!("{}: {:?} approximate {:?}", r.id, r.status, r.approximate));
            }
            match &r.fixture {
                Some(f) if f.problem.is_none() => {}
                Some(f) => problems.push(format!("{}: {:?}", r.id, f.problem)),
                None => problems.push(format!("{}: no fixture pair", r.id)),
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // Sections 1-6 all analysed: the schema checks with bounds, and the rules.
    let analysed: Vec<&str> = a.rules.iter().map(|r| r.id.as_str()).filter(|id| sections_1_to_6(id)).collect();
    assert!(analysed.len() >= 20, "{analysed:?}");
    assert!(!a.failed());
}
