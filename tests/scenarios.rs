//! Boundary scenario packs: the seed's own pack (`tests/data/seed-004-pack.json`,
//! see `tests/data/README.md`), checked as it is, and the example pack with
//! its run records.

#[allow(dead_code, reason = "this test binary uses `run_in` only")]
mod common;

use common::run_in;
use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn json(args: &[&str]) -> (i32, serde_json::Value) {
    let out = run_in(root(), args);
    assert!(out.stderr.is_empty(), "grail wrote to standard error: {}", out.stderr);
    (out.code, serde_json::from_str(&out.stdout).expect("one JSON object"))
}

#[test]
fn the_seed_pack_is_checked_without_a_crash_and_every_finding_is_located() {
    let (code, report) = json(&["check", "--format", "json", "tests/data/seed-004-pack.json"]);
    // No FAIL: what it lacks is missing evidence.
    assert_eq!(code, 0, "{report:#}");
    let findings: Vec<&serde_json::Value> =
        report["findings"].as_array().expect("findings").iter().filter(|f| f["outcome"] != "not_applicable").collect();
    assert_eq!(findings.len(), 24, "{report:#}");
    for f in findings {
        // The index grades enforcement and the control, never evidence quality on its own.
        assert_eq!(f["rule"], "scenario.index_axes", "{f:#}");
        assert_eq!(f["outcome"], "unknown", "{f:#}");
        assert_eq!(f["file"], "tests/data/seed-004-pack.json", "{f:#}");
        assert!(f["line"].as_u64().is_some() && f["column"].as_u64().is_some(), "not located: {f:#}");
    }
    assert_eq!(report["summary"]["fail"], 0);
    assert_eq!(report["summary"]["unknown"], 24);
}

#[test]
fn example_runs_are_judged_each_on_its_own_against_the_pack() {
    let pack = "examples/scenarios/pack.yaml";
    let runs = "examples/scenarios/runs";
    for (run, refused) in [
        ("clean-pass", None),
        ("safe-refusal", None),
        ("mocked-deployment", Some("run.mocked_scope")),
        ("detected-not-prevented", Some("run.forbidden_effect")),
        ("na-without-scope", Some("run.not_applicable")),
    ] {
        let file = format!("{runs}/{run}.yaml");
        let (code, report) = json(&["check", "--format", "json", pack, &file]);
        // Findings hold every outcome but PASS; NOT APPLICABLE ones stay (each with its reason).
        let findings: Vec<&serde_json::Value> = report["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .filter(|f| f["outcome"] != "not_applicable")
            .collect();
        match refused {
            None => {
                assert_eq!(code, 0, "{run}: {report:#}");
                assert!(findings.is_empty(), "{run}: {report:#}");
            }
            Some(rule) => {
                assert_eq!(code, 1, "{run}: {report:#}");
                assert_eq!(findings.len(), 1, "{run}: {report:#}");
                assert_eq!(findings[0]["rule"], rule, "{run}: {report:#}");
                assert_eq!(findings[0]["outcome"], "fail", "{run}: {report:#}");
                assert_eq!(findings[0]["file"], file.as_str(), "{run}: {report:#}");
            }
        }
    }
}

#[test]
fn a_run_checked_without_its_pack_is_unknown_never_pass() {
    let (code, report) = json(&["check", "--format", "json", "examples/scenarios/runs/clean-pass.yaml"]);
    assert_eq!(code, 0, "{report:#}");
    let unknown: Vec<&str> = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["outcome"] == "unknown")
        .map(|f| f["rule"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(unknown, ["run.case", "run.pack_version"], "{report:#}");
}
