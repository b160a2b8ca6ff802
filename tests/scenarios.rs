//! Boundary scenario packs: the seed's own pack (`tests/data/seed-004-pack.json`,
//! see `tests/data/README.md`), checked as it is, and the example pack with
//! its run records.

#[allow(dead_code, reason = "this test binary uses `grail` and `run_in` only")]
mod common;

use common::{grail, run_in};
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
    // No FAIL: what it lacks is missing evidence, which fails the check (exit 1).
    assert_eq!(code, 1, "{report:#}");
    assert_eq!(report["summary"]["fail"], 0, "{report:#}");
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
    // Missing evidence is never a pass: the check fails.
    assert_eq!(code, 1, "{report:#}");
    assert_eq!(report["summary"]["fail"], 0, "{report:#}");
    let unknown: Vec<&str> = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["outcome"] == "unknown")
        .map(|f| f["rule"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(unknown, ["run.case", "run.pack_version"], "{report:#}");
}

const PACK: &str = "examples/scenarios/pack.yaml";
const RUNS: &str = "examples/scenarios/runs";

#[test]
fn a_second_pack_is_a_usage_error_naming_both_files() {
    let seed = "tests/data/seed-004-pack.json";
    let out = run_in(root(), &["check", seed, PACK, RUNS]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stdout.is_empty(), "nothing is checked: {}", out.stdout);
    assert!(out.stderr.contains(PACK) && out.stderr.contains(seed), "{}", out.stderr);
    insta::assert_snapshot!(grail(&["check", seed, PACK, RUNS]));
    // The seed's pack is one line of JSON: named by its position, never printed.
    let out = run_in(root(), &["check", PACK, seed]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains(&format!("{seed}:1:1")) && out.stderr.len() < 2000, "{}", out.stderr);
    // Every command that reads a deployment refuses it alike.
    for command in [&["explain"][..], &["graph"], &["compile", "--target", "cedar", "--out", "target/crowded"]] {
        let mut args = command.to_vec();
        args.extend([PACK, "tests/data/seed-004-pack.json"]);
        let out = run_in(root(), &args);
        assert_eq!(out.code, 2, "{command:?}: {}", out.stderr);
        assert!(out.stderr.contains("at most one"), "{command:?}: {}", out.stderr);
    }
    // One pack with its runs is no usage error.
    assert_ne!(run_in(root(), &["check", PACK, RUNS]).code, 2);
}

#[test]
fn the_table_of_the_example_runs_shows_each_axis_on_its_own() {
    let out = grail(&["check", "--format", "table", PACK, RUNS]);
    insta::assert_snapshot!(out);
    // A row per run record, each axis in a column of its own.
    let rows: Vec<&str> = out.lines().filter(|l| l.trim_start().starts_with("SC-")).collect();
    assert_eq!(rows.len(), 5, "{out}");
    assert!(rows.iter().any(|r| r.contains("PASS") && r.contains("FAIL")), "the safe refusal: {out}");
    assert!(rows.iter().any(|r| r.contains("NOT APPLICABLE")), "{out}");
}

#[test]
fn a_check_without_a_table_of_its_documents_says_so_and_counts_its_findings() {
    let out = run_in(root(), &["check", "--format", "table", "examples/scenarios/pack.yaml"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stdout,
        "no table of the policy reads the documents checked\n\
         examples/scenarios/pack.yaml: 0 failed, 0 unknown, 16 passed, 3 not applicable (pass)\n"
    );
}

#[test]
fn explain_of_a_run_shows_each_axis_and_the_evidence_for_it() {
    let out = grail(&["explain", PACK, "examples/scenarios/runs/clean-pass.yaml"]);
    for needed in
        ["enforcement: PASS", "evidence: PASS", "utility: PASS", "source: observer", "evidence/sc-01-observer.txt"]
    {
        assert!(out.contains(needed), "`{needed}` is not shown:\n{out}");
    }
    insta::assert_snapshot!(out);
}

/// The values of `grail check --format`, as its help lists them.
fn check_formats() -> Vec<String> {
    let help = run_in(root(), &["check", "--help"]).stdout;
    let mut formats = Vec::new();
    let mut inside = false;
    for line in help.lines() {
        let t = line.trim();
        if t.starts_with("--format") {
            inside = true;
        } else if inside && t.starts_with("--") {
            break;
        } else if inside && let Some(value) = t.strip_prefix("- ").and_then(|v| v.split(':').next()) {
            formats.push(value.trim().to_string());
        }
    }
    formats
}

/// Words that name one number made of many grades.
const COLLAPSING: [&str; 8] = ["score", "total", "aggregate", "overall", "average", "weighted", "percent", "rating"];

/// A line where such a word is given a number (`score: 7`, `"total": 3`,
/// `overall 80`), or a number is a percentage (`80 %`).
fn collapsed(text: &str) -> Option<String> {
    let lower = text.to_lowercase();
    for (i, line) in lower.lines().enumerate() {
        let numbered = COLLAPSING.iter().any(|w| {
            line.match_indices(w).any(|(at, _)| {
                let after = line[at + w.len()..].trim_start_matches(|c: char| " :=\"'".contains(c));
                after.starts_with(|c: char| c.is_ascii_digit())
            })
        });
        let percentage =
            line.match_indices('%').any(|(at, _)| line[..at].trim_end().ends_with(|c: char| c.is_ascii_digit()));
        if numbered || percentage {
            return Some(format!("line {}: {}", i + 1, line));
        }
    }
    None
}

#[test]
fn a_collapsed_grade_is_seen() {
    assert!(collapsed("  \"score\": 7,").is_some());
    assert!(collapsed("SC-01 overall 80").is_some());
    assert!(collapsed("passed: 66 %").is_some());
    assert!(collapsed("the key `score` appears anywhere, declared at x.grail:95:3").is_none());
    let mut problems = Vec::new();
    json_problems(&serde_json::json!({"grades": {"total": 2}, "mean": 0.5}), &mut problems);
    assert_eq!(problems, ["key `total`", "the number 0.5"]);
}

/// Every key of a JSON value, and every number that is not an integer.
fn json_problems(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                if COLLAPSING.iter().any(|w| k.to_lowercase().contains(w)) {
                    out.push(format!("key `{k}`"));
                }
                json_problems(x, out);
            }
        }
        serde_json::Value::Array(xs) => xs.iter().for_each(|x| json_problems(x, out)),
        serde_json::Value::Number(n) if !n.is_i64() && !n.is_u64() => out.push(format!("the number {n}")),
        _ => {}
    }
}

#[test]
fn no_format_collapses_the_grades_into_one_number() {
    let formats = check_formats();
    for known in ["human", "json", "sarif", "junit", "github", "table"] {
        assert!(formats.iter().any(|f| f == known), "`{known}` is not among {formats:?}");
    }
    let mut outputs: Vec<(String, String)> = Vec::new();
    for f in &formats {
        let out = run_in(root(), &["check", "--format", f, PACK, RUNS]);
        assert_eq!(out.code, 1, "--format {f}: three runs are refused: {}", out.stderr);
        outputs.push((format!("check --format {f}"), out.stdout));
        let each = run_in(root(), &["check", "--each", "--format", f, RUNS]);
        outputs.push((format!("check --each --format {f}"), each.stdout));
    }
    for f in ["human", "json"] {
        let out = run_in(root(), &["explain", "--format", f, PACK, RUNS]);
        outputs.push((format!("explain --format {f}"), out.stdout));
    }
    for (what, text) in &outputs {
        assert!(!text.is_empty(), "{what} wrote nothing");
        assert_eq!(collapsed(text), None, "{what} collapses grades into a number:\n{text}");
        let mut problems = Vec::new();
        for line in text.lines().filter(|l| l.starts_with('{')) {
            if let Ok(v) = serde_json::from_str::<serde_json::Value>(line) {
                json_problems(&v, &mut problems);
            }
        }
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(text) {
            json_problems(&v, &mut problems);
        }
        assert!(problems.is_empty(), "{what}: {problems:?}");
    }
    // Counts of findings per outcome stay, as they are.
    let (_, report) = json(&["check", "--format", "json", PACK, RUNS]);
    for outcome in ["pass", "fail", "unknown", "not_applicable"] {
        assert!(report["summary"][outcome].is_u64(), "{report:#}");
    }
}
