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

/// Samples per policy for the differential tests: `GRAIL_DIFFERENTIAL_SAMPLES`
/// for a longer run, `GRAIL_DIFFERENTIAL_SEED` to replay one.
pub fn differential_budget(default: usize) -> (u64, usize) {
    let samples = std::env::var("GRAIL_DIFFERENTIAL_SAMPLES").ok().and_then(|s| s.parse().ok()).unwrap_or(default);
    let seed = std::env::var("GRAIL_DIFFERENTIAL_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x6772_6169_6c21);
    (seed, samples)
}

fn disagreements(d: &analyze::Differential, seed: u64) -> String {
    let mut out = format!("seed {seed}: {} disagreement(s) in {} samples\n", d.disagreements.len(), d.compared);
    for x in d.disagreements.iter().take(3) {
        out.push_str(&format!("{}: the encoding says {}, the checker {}\n", x.rule, x.encoded, x.checked));
        for doc in &x.documents {
            out.push_str(&format!("--- {}\n{}", doc.path, doc.text));
        }
    }
    out
}

/// The symbolic evaluator (`analyze/symbolic.rs`) mirrors `eval.rs` by hand:
/// on random deployments within the bounds, every rule the encoding states
/// exactly says of each deployment what the checker says (FAIL or UNKNOWN
/// somewhere, its declared FAIL, a PASS somewhere). A rule the analysis
/// calls dead that the checker fires, or a deployment passing a subject the
/// analysis calls unsatisfiable, is such a disagreement.
#[test]
fn the_encoding_of_the_shipped_library_agrees_with_the_checker_on_random_deployments() {
    let db = Database::default();
    let compiled = compile_policy(&db, grail_engine::shipped::policy_set(&db));
    let (seed, samples) = differential_budget(40);
    let d = analyze::differential(&compiled.policy, Bounds::default(), seed, samples);
    assert!(d.disagreements.is_empty(), "{}", disagreements(&d, seed));
    assert!(d.compared * 10 >= samples * 9, "only {} of {samples} samples decoded", d.compared);
    // Not vacuous: most rules fail and pass somewhere in the samples.
    let both = d.exact.iter().filter(|id| d.bad[*id] > 0 && d.passed[*id] > 0).count();
    eprintln!(
        "seed {seed}: {} of {samples} samples compared, {} rules exact ({both} both failed and passed), {} left out, {} solver calls",
        d.compared,
        d.exact.len(),
        d.left_out.len(),
        d.solves
    );
    assert!(
        d.exact.len() >= 80 && both * 2 >= d.exact.len(),
        "{both} of {} rules both failed and passed",
        d.exact.len()
    );
    // What the comparison leaves out is what the encoding over-approximates, by name.
    for (id, why) in &d.left_out {
        assert!(!why.is_empty() && !d.exact.contains(id), "{id}");
    }
}

/// An optional record the document leaves out is a known absence (NOT
/// APPLICABLE below it), as in `eval.rs`; the encoding read it as missing
/// evidence (UNKNOWN) until the differential test found it.
#[test]
fn an_absent_optional_record_is_not_applicable_in_the_encoding_as_in_the_checker() {
    let policy = r#"
document Pack as pack where kind absent {
  on syntax rule scenario.syntax
  on duplicate_key rule scenario.duplicate_key
  on unknown_key rule scenario.unknown_key
  on type rule scenario.type
  version: string
  runs?: RunIndex
}

record RunIndex {
  date?: string
  results?: map string -> Result
}

record Result {
  enforcement?: string
  control?: string
}

rule scenario.index_axes
  for id, r in pack.runs.results
  require present(r.enforcement) and present(r.control)
    else unknown "the result for `{id}` does not grade both axes"
"#;
    let db = Database::default();
    let set = grail_engine::PolicySet::new(
        &db,
        vec![grail_engine::SourceText::new(&db, "policy.grail".into(), policy.into(), None)],
    );
    let compiled = compile_policy(&db, set);
    assert!(!compiled.has_errors());
    let (seed, samples) = differential_budget(200);
    let d = analyze::differential(&compiled.policy, Bounds::default(), seed, samples);
    assert!(d.disagreements.is_empty(), "{}", disagreements(&d, seed));
    let id = "scenario.index_axes";
    assert!(d.bad[id] > 0 && d.passed[id] > 0 && d.compared > d.bad[id] + d.passed[id], "{d:?}");
}
