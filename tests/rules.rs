//! Every rule of the shipped library has a fixture pair in `tests/rules/<rule id>/`:
//! `fail.*` makes the rule fire, and `pass.*`, its twin one line apart,
//! makes it pass. One harness runs them all; a rule without a pair fails it.
//!
//! A fixture's first line may say `# expect: unknown` when the rule's
//! violation outcome is UNKNOWN rather than FAIL.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use grail_engine::db::{check_document, compile_policy};
use grail_engine::{Database, Outcome, PolicySet, SourceText};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/rules");

fn shipped(db: &Database) -> PolicySet {
    let files = grail_engine::shipped::FILES
        .iter()
        .map(|(p, t)| SourceText::new(db, p.to_string(), t.to_string(), None))
        .collect();
    PolicySet::new(db, files)
}

/// The outcomes `rule` has when checking `path`.
fn outcomes(db: &Database, set: PolicySet, path: &Path, rule: &str) -> Vec<(Outcome, String)> {
    let bytes = fs::read(path).expect("readable fixture");
    let doc = SourceText::from_bytes(db, path.display().to_string(), bytes);
    check_document(db, set, doc).iter().filter(|f| f.rule == rule).map(|f| (f.outcome, f.message.clone())).collect()
}

fn fixture(dir: &Path, stem: &str) -> Option<PathBuf> {
    ["yaml", "yml", "json", "md"].iter().map(|e| dir.join(format!("{stem}.{e}"))).find(|p| p.exists())
}

/// The twins differ in one line: what remains after their common first and last lines.
fn differing_lines(a: &str, b: &str) -> (usize, usize) {
    let (a, b): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..].iter().rev().zip(b[prefix..].iter().rev()).take_while(|(x, y)| x == y).count();
    (a.len() - prefix - suffix, b.len() - prefix - suffix)
}

#[test]
fn every_rule_fires_on_its_failing_fixture_and_passes_on_its_twin() {
    let db = Database::default();
    let set = shipped(&db);
    let compiled = compile_policy(&db, set);
    assert!(!compiled.has_errors(), "the shipped library compiles: {:#?}", compiled.diagnostics);
    let rules: BTreeSet<String> = compiled.policy.rule_ids().into_iter().map(|(id, _)| id.to_string()).collect();

    let mut problems = Vec::new();
    let mut checked = 0;
    for rule in &rules {
        let dir = Path::new(DIR).join(rule);
        let (Some(fail), Some(pass)) = (fixture(&dir, "fail"), fixture(&dir, "pass")) else {
            problems.push(format!("{rule}: no fixture pair in tests/rules/{rule}/ (fail.* and pass.*)"));
            continue;
        };
        let fail_text = fs::read_to_string(&fail).unwrap_or_default();
        let pass_text = fs::read_to_string(&pass).unwrap_or_default();
        let want = if fail_text.starts_with("# expect: unknown") { Outcome::Unknown } else { Outcome::Fail };

        let got = outcomes(&db, set, &fail, rule);
        if !got.iter().any(|(o, _)| *o == want) {
            problems.push(format!("{rule}: {} does not make it {want:?}; outcomes: {got:?}", fail.display()));
        }
        let got = outcomes(&db, set, &pass, rule);
        if got.iter().any(|(o, _)| matches!(o, Outcome::Fail | Outcome::Unknown))
            || !got.iter().any(|(o, _)| *o == Outcome::Pass)
        {
            problems.push(format!("{rule}: {} does not make it pass; outcomes: {got:?}", pass.display()));
        }
        let (a, b) = differing_lines(&fail_text, &pass_text);
        if a > 1 || b > 1 {
            problems.push(format!("{rule}: the twins differ in {a} and {b} lines; they should differ in one"));
        }
        checked += 1;
    }
    for entry in fs::read_dir(DIR).expect("tests/rules exists") {
        let name = entry.expect("entry").file_name().to_string_lossy().to_string();
        if !rules.contains(&name) {
            problems.push(format!("tests/rules/{name}/ names no rule of the library"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(checked >= 26, "only {checked} rules checked");
}
