//! `grail analyze` on the shipped library: every subject has a witness the
//! checker confirms, every rule of sections 1-6 fires, and every fixture pair
//! is confirmed (a round trip through `check::check`).

use grail_engine::analyze::{self, Analysis, Bounds, Status};
use grail_engine::db::compile_policy;
use grail_engine::{Database, PolicySet, SourceText};

fn shipped() -> Analysis {
    let db = Database::default();
    let files = grail_engine::shipped::FILES
        .iter()
        .map(|(p, t)| SourceText::new(&db, p.to_string(), t.to_string(), None))
        .collect();
    let compiled = compile_policy(&db, PolicySet::new(&db, files));
    assert!(!compiled.has_errors());
    analyze::analyze(&compiled.policy, Bounds::default())
}

#[test]
fn debug_dump() {
    let t = std::time::Instant::now();
    let a = shipped();
    eprintln!("elapsed {:?} {:?}", t.elapsed(), a.stats);
    for s in &a.subjects {
        eprintln!("subject {} conflict={:?} problem={:?} applies={:?}", s.name, s.conflict, s.problem, s.applies);
    }
    for c in &a.conflicts {
        eprintln!("conflict {:?}", c);
    }
    for r in &a.rules {
        eprintln!("rule {} {:?} approx={:?} pooled={:?} with={:?} fixture={:?}", r.id, r.status, r.approximate, r.pooled, r.fires_with, r.fixture.as_ref().map(|f| (f.distance, f.problem.clone())));
    }
    for d in &a.diagnostics {
        eprintln!("diag {} {}", d.code, d.message);
    }
    let _ = Status::Fires;
}
