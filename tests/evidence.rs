//! `--evidence FILE`: the file given to the deployment as `evidence`
//! (upstream's evaluation mode). The shipped library reads it as promotion
//! evidence: the effective state of each promotable cell is a verdict line of
//! the report, and never changes the exit status.

#[allow(dead_code, reason = "this test binary uses `run_in` only")]
mod common;

use std::path::{Path, PathBuf};

use common::run_in;

/// Upstream's fixtures (tests/data/upstream, with LICENSE.upstream).
fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/upstream/fixtures/security-binding")
}

/// A folder holding upstream's promoted binding and `files`.
fn folder(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("evidence-{name}"));
    std::fs::create_dir_all(&dir).expect("the folder is made");
    std::fs::copy(fixtures().join("promoted-c2c3.json"), dir.join("promoted-c2c3.json")).expect("copied");
    for (path, text) in files {
        std::fs::write(dir.join(path), text).expect("written");
    }
    dir
}

/// The exit status and the promotion verdict lines of `grail check --format json` in `dir`.
fn verdicts(dir: &Path, args: &[&str]) -> (i32, Vec<String>) {
    let mut all = vec!["check", "--format", "json", "promoted-c2c3.json"];
    all.extend(args);
    let out = run_in(dir, &all);
    let report: serde_json::Value = serde_json::from_str(&out.stdout).expect("a JSON report");
    let lines = report["verdicts"]
        .as_array()
        .map(|v| v.iter().filter_map(|l| l.as_str()).filter(|l| !l.starts_with("surface ")).map(String::from).collect())
        .unwrap_or_default();
    (out.code, lines)
}

const ROUTE: &str = "demotion files an escalation item on route \"queue:escalations/demotion\" requesting the human-ratified binding update";

#[test]
fn without_evidence_there_is_no_promotion_verdict() {
    let (_, lines) = verdicts(&fixtures(), &[]);
    assert_eq!(lines, Vec::<String>::new());
}

#[test]
fn a_reverted_c2_merge_lowers_c2_and_c3_as_upstream_says() {
    let (bare, _) = verdicts(&fixtures(), &[]);
    let (code, lines) = verdicts(&fixtures(), &["--evidence", "evidence-c2-revert-cascades-c3.json"]);
    assert_eq!(code, bare, "a demotion never changes the exit status");
    assert_eq!(
        lines,
        vec![
            format!(
                "C2-auto-merge: bound promoted -> effective unpromoted — ceiling lowered by contrary evidence (reverted-merge at 2026-07-10T12:00:00Z) WITHOUT modifying the binding; {ROUTE}"
            ),
            format!(
                "C3-auto-merge: bound promoted -> effective unpromoted — ceiling lowered by contrary evidence (C2-auto-merge (prerequisite cell) reverted-merge at 2026-07-10T12:00:00Z) WITHOUT modifying the binding; {ROUTE}"
            ),
            "C3-ai-review-blocking: bound promoted -> effective promoted".to_string(),
        ]
    );
}

#[test]
fn a_prerequisite_demoted_in_its_own_epoch_lowers_the_dependent_cell_with_it() {
    // C2 was ratified at 2026-06-30T00:00:00Z and C3 at 2026-07-01: the event is
    // in C2's epoch and before C3's, so C3 falls with C2 (pass 2), not by the event.
    let events = r#"[{"cell": "C2-auto-merge", "event": "gate-failure", "at": "2026-06-30T12:00:00Z"},
                     {"cell": "C3-ai-review-blocking", "event": "verification-divergence", "at": "2026-06-01T00:00:00Z"},
                     {"cell": "C3-ai-review-blocking", "event": "merged", "at": "2026-07-02T00:00:00Z"}]"#;
    let dir = folder("cascade", &[("events.json", events)]);
    let (_, lines) = verdicts(&dir, &["--evidence", "events.json"]);
    assert_eq!(
        lines,
        vec![
            format!("C2-auto-merge: bound promoted -> effective unpromoted — ceiling lowered by contrary evidence (gate-failure at 2026-06-30T12:00:00Z) WITHOUT modifying the binding; {ROUTE}"),
            "C3-auto-merge: bound promoted -> effective unpromoted — prerequisite cell(s) not effective-promoted (C2-auto-merge: demoted by contrary evidence (gate-failure at 2026-06-30T12:00:00Z)); the predicate this cell was earned on requires its prerequisite promoted, so the dependent promotion lowers with it".to_string(),
            "C3-ai-review-blocking: bound promoted -> effective promoted (1 pre-epoch contrary event(s) ignored: verification-divergence at 2026-06-01T00:00:00Z — predate ratified_at 2026-06-29T00:00:00Z and were consumed by the re-earn)".to_string(),
        ]
    );
}

#[test]
fn an_event_that_cannot_be_placed_in_an_epoch_counts_against_the_cell() {
    let events = r#"[{"cell": "C3-ai-review-blocking", "event": "gate-failure", "at": "2026-07-02 00:00:00"}]"#;
    let dir = folder("unplaceable", &[("events.json", events)]);
    let (_, lines) = verdicts(&dir, &["--evidence", "events.json"]);
    assert_eq!(
        lines[2],
        format!(
            "C3-ai-review-blocking: bound promoted -> effective unpromoted — ceiling lowered by contrary evidence (gate-failure with non-ISO or unparsable at \"2026-07-02 00:00:00\" — cannot be assigned to an epoch, treated as contrary (fail-closed)) WITHOUT modifying the binding; {ROUTE}"
        )
    );
}

/// Evidence that cannot be read, is not JSON, or is not an array: every cell
/// falls to unpromoted, the first line says why, and the exit status stays.
#[test]
fn unavailable_evidence_lowers_every_cell_fail_closed() {
    let dir = folder(
        "unavailable",
        &[("not-json.json", "reverted-merge, C2"), ("object.json", r#"{"cell": "C2-auto-merge"}"#)],
    );
    let (bare, _) = verdicts(&dir, &[]);
    let reasons = [
        ("missing.json", "cannot be read: no such file or directory (os error 2)"),
        ("not-json.json", "not JSON or YAML: "),
        ("object.json", "a PromotionEvidence is a list, and this document is a mapping"),
    ];
    for (file, reason) in reasons {
        let (code, lines) = verdicts(&dir, &["--evidence", file]);
        assert_eq!(code, bare, "unavailable evidence never changes the exit status ({file})");
        assert_eq!(lines.len(), 4, "{lines:?}");
        assert!(lines[0].starts_with(&format!("evidence source {file} unavailable ({reason}")), "{}", lines[0]);
        assert!(
            lines[0].ends_with(") — fail-closed: every cell resolves to effective state unpromoted"),
            "{}",
            lines[0]
        );
        for (line, cell) in lines[1..].iter().zip(["C2-auto-merge", "C3-auto-merge", "C3-ai-review-blocking"]) {
            assert_eq!(
                *line,
                format!("{cell}: bound promoted -> effective unpromoted (evidence unavailable, fail-closed)")
            );
        }
    }
}

#[test]
fn the_table_and_explain_show_the_verdicts() {
    let args = ["--evidence", "evidence-c2-revert-cascades-c3.json", "promoted-c2c3.json"];
    let table = run_in(&fixtures(), &[&["check", "--format", "table"][..], &args].concat());
    assert!(
        table.stdout.contains("  - C3-ai-review-blocking: bound promoted -> effective promoted\n"),
        "{}",
        table.stdout
    );
    let explain = run_in(&fixtures(), &[&["explain"][..], &args].concat());
    assert!(
        explain.stdout.contains("    verdict: C3-ai-review-blocking: bound promoted -> effective promoted\n"),
        "{}",
        explain.stdout
    );
}

#[test]
fn a_policy_that_reads_no_evidence_refuses_the_flag() {
    let dir = folder(
        "no-kind",
        &[
            (
                "p.grail",
                "document D as d where kind absent {\n  on syntax rule d.syntax\n  on duplicate_key rule d.duplicate_key\n  on unknown_key rule d.unknown_key\n  on type rule d.type\n}\n\nrule d.any\n  require true else fail \"never\"\n  at d\n",
            ),
            ("e.json", "[]"),
        ],
    );
    let out = run_in(&dir, &["check", "--policy", "p.grail", "--evidence", "e.json", "promoted-c2c3.json"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("the policy reads no document given as `evidence`"), "{}", out.stderr);
}
