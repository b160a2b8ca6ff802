//! The shipped library proves itself: every fixture pair next to the policy
//! holds, every rule is fired by one fixture and passed by another, and twins
//! differ in one line (the same run as `grail test --coverage`).

use grail_engine::Database;
use grail_engine::db::compile_policy;
use grail_engine::testing::{self, File};

#[test]
fn every_rule_fires_on_its_failing_fixture_and_passes_on_its_twin() {
    let db = Database::default();
    let compiled = compile_policy(&db, grail_engine::shipped::policy_set(&db));
    assert!(!compiled.has_errors(), "the shipped library compiles: {:#?}", compiled.diagnostics);
    let rules: Vec<String> = compiled.policy.rule_ids().into_iter().map(|(id, _)| id.to_string()).collect();
    let fixtures: Vec<File<'_>> =
        grail_engine::shipped::FIXTURES.iter().map(|(path, text)| File { path, text }).collect();
    // As `grail test` without `--now`: a case's own `now.bind`, or no time at all.
    let report = testing::run(&compiled.policy, &rules, &fixtures, None);

    let mut problems: Vec<String> = report
        .results
        .iter()
        .filter_map(|r| r.problem.as_ref().map(|p| format!("tests/{}/{}: {p}", r.case.rule, r.case.name)))
        .collect();
    problems.extend(report.problems.iter().cloned());
    for (rule, c) in report.uncovered() {
        problems.push(format!("{rule}: no fixture {}", if !c.fires { "fires it" } else { "passes it" }));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(report.results.len() >= 2 * rules.len(), "{} cases for {} rules", report.results.len(), rules.len());
}
