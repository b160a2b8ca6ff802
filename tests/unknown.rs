//! An UNKNOWN fails the check (exit 1) unless the caller accepts it, with
//! `--allow-unknown` or a deployment's `allow_unknown` in `grail.toml`, and
//! every format says it the same way: an error for FAIL and UNKNOWN, a
//! warning for an allowed UNKNOWN, and who allowed it.
//!
//! The policy `tests/policies/stated-unknown` states its outcomes with
//! `else unknown` and `else fail` over `present` and `absent`, so that they
//! do not depend on how an absent value reads. `tests/inputs/no-evidence.yaml`
//! gives it one UNKNOWN and nothing else that is not a pass; its twin
//! `evidence.yaml` passes; `broken.yaml` FAILs.

mod common;

use std::path::{Path, PathBuf};

use common::{ORG_LAYERS, grail, run_in};
use serde_json::Value;

const POLICY: &str = "tests/policies/stated-unknown";
const UNKNOWN_ONLY: &str = "tests/inputs/no-evidence.yaml";
const PROVEN: &str = "tests/inputs/evidence.yaml";
const FAILING: &str = "tests/inputs/broken.yaml";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn check(extra: &[&str], file: &str) -> common::Output {
    let mut args = vec!["check", "--policy", POLICY];
    args.extend(extra);
    args.push(file);
    run_in(root(), &args)
}

fn json(out: &common::Output) -> Value {
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", out.stdout))
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("unknown-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    dir
}

#[test]
fn a_check_whose_only_finding_is_unknown_exits_1_and_0_when_allowed() {
    let failed = grail(&["check", "--policy", POLICY, UNKNOWN_ONLY]);
    assert!(failed.starts_with("exit: 1"), "{failed}");
    insta::assert_snapshot!("unknown_fails", failed);
    let allowed = grail(&["check", "--allow-unknown", "--policy", POLICY, UNKNOWN_ONLY]);
    assert!(allowed.starts_with("exit: 0"), "{allowed}");
    assert!(
        allowed.contains(": 0 failed, 1 unknown, 5 passed, 0 not applicable (unknown, allowed by `--allow-unknown`)\n")
    );
    insta::assert_snapshot!("unknown_allowed", allowed);
    // The twin that gives its evidence passes, with the flag or without.
    for extra in [&[][..], &["--allow-unknown"]] {
        let proven = check(extra, PROVEN);
        assert_eq!(proven.code, 0, "{}", proven.stdout);
        assert!(!proven.stdout.contains("allowed"), "nothing UNKNOWN, nothing to say: {}", proven.stdout);
    }
    // A FAIL fails, UNKNOWN allowed or not.
    assert_eq!(check(&["--allow-unknown"], FAILING).code, 1);
    assert_eq!(check(&[], FAILING).code, 1);
}

#[test]
fn each_file_on_its_own_exits_as_the_check_does() {
    for format in ["human", "json"] {
        let failed = check(&["--each", "--format", format, PROVEN], UNKNOWN_ONLY);
        assert_eq!(failed.code, 1, "{format}: {}", failed.stdout);
        let allowed = check(&["--each", "--allow-unknown", "--format", format, PROVEN], UNKNOWN_ONLY);
        assert_eq!(allowed.code, 0, "{format}: {}", allowed.stdout);
        if format == "json" {
            let lines: Vec<Value> =
                allowed.stdout.lines().map(|l| serde_json::from_str(l).expect("a JSON object per line")).collect();
            assert_eq!(lines.len(), 2);
            assert!(lines.iter().all(|l| l["unknown_allowed"] == "flag"), "{}", allowed.stdout);
            assert_eq!(lines[1]["verdict"], "unknown");
            let strict: Value = serde_json::from_str(failed.stdout.lines().nth(1).expect("two lines")).expect("JSON");
            assert_eq!(strict.get("unknown_allowed"), None, "{strict}");
        }
    }
}

#[test]
fn the_json_report_says_who_allowed_the_unknowns() {
    let strict = check(&["--format", "json"], UNKNOWN_ONLY);
    assert_eq!(strict.code, 1);
    let report = json(&strict);
    assert_eq!(report["verdict"], "unknown");
    assert_eq!(report.get("unknown_allowed"), None, "{report}");
    let allowed = check(&["--format", "json", "--allow-unknown"], UNKNOWN_ONLY);
    assert_eq!(allowed.code, 0);
    let report = json(&allowed);
    assert_eq!(report["verdict"], "unknown");
    assert_eq!(report["unknown_allowed"], "flag");
    assert_eq!(report["summary"]["unknown"], 1);
}

/// `(level, outcome)` of each SARIF result, and the run's `unknown_allowed`.
fn sarif(extra: &[&str], file: &str) -> (i32, Vec<(String, String)>, Value) {
    let mut args = vec!["--format", "sarif"];
    args.extend(extra);
    let out = check(&args, file);
    let log = json(&out);
    let run = &log["runs"][0];
    let results = run["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| {
            (
                r["level"].as_str().unwrap_or_default().to_string(),
                r["properties"]["outcome"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    (out.code, results, run["properties"]["unknown_allowed"].clone())
}

#[test]
fn sarif_marks_fail_and_unknown_as_errors_and_an_allowed_unknown_as_a_warning() {
    let (code, results, by) = sarif(&[], UNKNOWN_ONLY);
    assert_eq!((code, results, by), (1, vec![("error".into(), "unknown".into())], Value::Null));
    let (code, results, by) = sarif(&["--allow-unknown"], UNKNOWN_ONLY);
    assert_eq!((code, results, by), (0, vec![("warning".into(), "unknown".into())], Value::from("flag")));
    let (code, results, _) = sarif(&["--allow-unknown"], FAILING);
    assert_eq!((code, results), (1, vec![("error".into(), "fail".into())]));
}

#[test]
fn junit_fails_fail_and_unknown_and_skips_an_allowed_unknown() {
    let strict = check(&["--format", "junit"], UNKNOWN_ONLY);
    assert_eq!(strict.code, 1);
    assert!(strict.stdout.contains("failures=\"1\" errors=\"0\" skipped=\"0\">"), "{}", strict.stdout);
    assert!(
        strict.stdout.contains("<failure type=\"UNKNOWN\" message=\"UNKNOWN: no evidence was given\">"),
        "{}",
        strict.stdout
    );
    assert!(strict.stdout.contains("<testsuites name=\"grail\" tests=\"6\" failures=\"1\""), "{}", strict.stdout);
    let allowed = check(&["--format", "junit", "--allow-unknown"], UNKNOWN_ONLY);
    assert_eq!(allowed.code, 0);
    assert!(allowed.stdout.contains("failures=\"0\" errors=\"0\" skipped=\"1\">"), "{}", allowed.stdout);
    assert!(
        allowed.stdout.contains(
            "<skipped type=\"UNKNOWN\" message=\"UNKNOWN (allowed by `--allow-unknown`): no evidence was given\">"
        ),
        "{}",
        allowed.stdout
    );
    let failing = check(&["--format", "junit", "--allow-unknown"], FAILING);
    assert_eq!(failing.code, 1);
    assert!(failing.stdout.contains("<failure type=\"FAIL\" message=\"the document says it is broken\">"));
}

#[test]
fn github_annotates_fail_and_unknown_as_errors_and_an_allowed_unknown_as_a_warning() {
    let strict = check(&["--format", "github"], UNKNOWN_ONLY);
    assert_eq!(strict.code, 1);
    assert!(strict.stdout.starts_with("::error file=tests/inputs/no-evidence.yaml,"), "{}", strict.stdout);
    assert!(strict.stdout.contains("title=UNKNOWN s.evidence::"), "{}", strict.stdout);
    assert!(strict.stdout.ends_with("(unknown)\n"), "{}", strict.stdout);
    let allowed = check(&["--format", "github", "--allow-unknown"], UNKNOWN_ONLY);
    assert_eq!(allowed.code, 0);
    assert!(allowed.stdout.starts_with("::warning file=tests/inputs/no-evidence.yaml,"), "{}", allowed.stdout);
    assert!(allowed.stdout.ends_with("(unknown, allowed by `--allow-unknown`)\n"), "{}", allowed.stdout);
    let failing = check(&["--format", "github", "--allow-unknown"], FAILING);
    assert_eq!(failing.code, 1);
    assert!(failing.stdout.starts_with("::error "), "{}", failing.stdout);
}

#[test]
fn the_human_and_table_reports_mark_an_allowed_unknown_a_warning() {
    let strict = check(&[], UNKNOWN_ONLY);
    assert!(strict.stdout.contains("× UNKNOWN: no evidence was given"), "{}", strict.stdout);
    let allowed = check(&["--allow-unknown"], UNKNOWN_ONLY);
    assert!(allowed.stdout.contains("⚠ UNKNOWN: no evidence was given"), "{}", allowed.stdout);
    let table = check(&["--format", "table"], UNKNOWN_ONLY);
    assert_eq!(table.code, 1);
    assert!(table.stdout.ends_with("(unknown)\n"), "{}", table.stdout);
    let table = check(&["--format", "table", "--allow-unknown"], UNKNOWN_ONLY);
    assert_eq!(table.code, 0);
    assert!(table.stdout.ends_with("(unknown, allowed by `--allow-unknown`)\n"), "{}", table.stdout);
}

/// A workspace of two deployments over the policy: `gap` (a document with
/// no evidence) and `strict` (one with the text given), `gap` carrying
/// `allow_unknown = ALLOW` when `allow` says so.
fn workspace(name: &str, allow: Option<&str>, strict: &str) -> PathBuf {
    let dir = scratch(name);
    std::fs::create_dir_all(dir.join("policy")).expect("a folder");
    let policy = std::fs::read_to_string(root().join(POLICY).join("policy.grail")).expect("the policy");
    std::fs::write(dir.join("policy/policy.grail"), policy).expect("write");
    std::fs::write(dir.join("gap.yaml"), "{}\n").expect("write");
    std::fs::write(dir.join("strict.yaml"), strict).expect("write");
    let key = allow.map(|a| format!("allow_unknown = {a}\n")).unwrap_or_default();
    let toml = format!(
        "[policy]\nfolders = [\"policy\"]\n\n[deployments.gap]\ndocuments = [\"gap.yaml\"]\n{key}\n[deployments.strict]\ndocuments = [\"strict.yaml\"]\n"
    );
    std::fs::write(dir.join("grail.toml"), toml).expect("write");
    dir
}

#[test]
fn a_deployment_of_the_workspace_file_may_allow_its_unknowns() {
    // `gap` allows its UNKNOWN, `strict` gives its evidence: exit 0.
    let dir = workspace("allowed", Some("true"), "evidence: true\n");
    let out = run_in(&dir, &["check"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("gap.yaml: 0 failed, 1 unknown, 5 passed, 0 not applicable (unknown, allowed by `allow_unknown` in grail.toml)\n"), "{}", out.stdout);
    assert!(
        out.stdout.contains("strict.yaml: 0 failed, 0 unknown, 6 passed, 0 not applicable (pass)\n"),
        "{}",
        out.stdout
    );
    let lines: Vec<Value> = run_in(&dir, &["check", "--format", "json"])
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON"))
        .collect();
    assert_eq!(lines[0]["deployment"], "gap");
    assert_eq!(lines[0]["unknown_allowed"], "workspace");
    assert_eq!(lines[1].get("unknown_allowed"), None, "the key is the deployment's alone: {}", lines[1]);
    let log = json(&run_in(&dir, &["check", "--format", "sarif"]));
    assert_eq!(log["runs"][0]["properties"]["unknown_allowed"], "workspace");
    assert_eq!(log["runs"][0]["results"][0]["level"], "warning");

    // The twin one line apart: `strict` has no evidence either, and its UNKNOWN is not allowed.
    let dir = workspace("strict", Some("true"), "{}\n");
    let out = run_in(&dir, &["check"]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(
        out.stdout.contains("strict.yaml: 0 failed, 1 unknown, 5 passed, 0 not applicable (unknown)\n"),
        "{}",
        out.stdout
    );
    // The flag allows every deployment's, and the report says the flag did.
    let out = run_in(&dir, &["check", "--allow-unknown", "--format", "json"]);
    assert_eq!(out.code, 0, "{}", out.stdout);
    assert!(out.stdout.lines().all(|l| l.contains("\"unknown_allowed\":\"flag\"")), "{}", out.stdout);

    // Without the key, or with `false`, `gap` fails.
    for allow in [None, Some("false")] {
        let dir = workspace("unset", allow, "evidence: true\n");
        let out = run_in(&dir, &["check"]);
        assert_eq!(out.code, 1, "{allow:?}: {}", out.stdout);
    }
    // Only a boolean: anything else makes the file unusable (exit 2), located.
    let dir = workspace("typo", Some("\"yes\""), "evidence: true\n");
    let out = run_in(&dir, &["check"]);
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(out.stderr.contains("allow_unknown = \"yes\""), "{}", out.stderr);
}

#[test]
fn deny_unknown_is_gone_and_says_what_replaced_it() {
    for command in
        [&["check"][..], &["compile", "--target", "cedar", "--out", "build/x"], &["authorize", "--action", "a"]]
    {
        let mut args = command.to_vec();
        args.extend(["--deny-unknown", UNKNOWN_ONLY]);
        let out = run_in(root(), &args);
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
        assert!(out.stderr.starts_with("error: unexpected argument '--deny-unknown' found"), "{}", out.stderr);
        assert!(
            out.stderr.ends_with(
                "help: `--deny-unknown` is gone: UNKNOWN (missing evidence) fails the check by default now; drop the flag (`--allow-unknown` accepts UNKNOWN)\n"
            ),
            "{}",
            out.stderr
        );
    }
    // Another unknown argument gets clap's error alone.
    let out = run_in(root(), &["check", "--no-such-flag", UNKNOWN_ONLY]);
    assert_eq!(out.code, 2);
    assert!(!out.stderr.contains("deny-unknown"), "{}", out.stderr);
}

#[test]
fn help_teaches_the_exit_codes_and_the_flag() {
    let help = grail(&["check", "--help"]);
    assert!(
        help.contains(
            "Exit status: 0 when nothing FAILs and nothing is\nUNKNOWN, 1 when something FAILs or is UNKNOWN"
        ),
        "{help}"
    );
    assert!(help.contains("--allow-unknown"), "{help}");
    assert!(!help.contains("--deny-unknown"), "{help}");
    for command in ["compile", "authorize", "explain"] {
        let help = grail(&[command, "--help"]);
        assert!(help.contains("--allow-unknown"), "{command}: {help}");
    }
}

#[test]
fn compile_refuses_an_unknown_unless_allowed_and_says_so() {
    let dir = scratch("compile");
    let out = |name: &str| dir.join(name).to_string_lossy().into_owned();
    let (refused, written) = (out("refused"), out("written"));
    let run = run_in(root(), &["compile", "--target", "cedar", "--out", &refused, "--policy", POLICY, UNKNOWN_ONLY]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(!dir.join("refused").exists());
    assert!(run.stderr.contains("× UNKNOWN: no evidence was given"), "{}", run.stderr);
    assert!(run.stderr.ends_with("help: `--allow-unknown` compiles it with its UNKNOWN outcomes\n"), "{}", run.stderr);
    let run = run_in(
        root(),
        &["compile", "--target", "cedar", "--allow-unknown", "--out", &written, "--policy", POLICY, UNKNOWN_ONLY],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(dir.join("written").exists());
    assert_eq!(run.stderr, "note: the check's 1 UNKNOWN outcome(s) are allowed by `--allow-unknown` (`s.evidence`)\n");
    // A FAIL is refused, allowed UNKNOWN or not.
    let run = run_in(
        root(),
        &["compile", "--target", "cedar", "--allow-unknown", "--out", &out("failing"), "--policy", POLICY, FAILING],
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn explain_exits_as_the_check_does() {
    let strict = run_in(root(), &["explain", "--policy", POLICY, UNKNOWN_ONLY]);
    assert_eq!(strict.code, 1, "{}", strict.stdout);
    let allowed = run_in(root(), &["explain", "--allow-unknown", "--policy", POLICY, UNKNOWN_ONLY]);
    assert_eq!(allowed.code, 0, "{}", allowed.stdout);
    assert!(
        allowed.stdout.contains(": unknown, allowed by `--allow-unknown` (0 failed, 1 unknown"),
        "{}",
        allowed.stdout
    );
    let allowed = run_in(root(), &["explain", "--format", "json", "--allow-unknown", "--policy", POLICY, UNKNOWN_ONLY]);
    assert_eq!(json(&allowed)["unknown_allowed"], "flag");
    assert_eq!(run_in(root(), &["explain", "--policy", POLICY, PROVEN]).code, 0);
}

/// The example organisation's transcripts are not verified yet, so its L2
/// and L3 levels are UNKNOWN. `authorize` denies everything while the check
/// has them, as `compile` refuses it; with `--allow-unknown` it answers, and
/// says so; what stays unproven stays refused (no dispatch without a human).
#[test]
fn authorize_denies_while_the_check_has_an_unknown_unless_allowed() {
    let ask = |extra: &[&str], action: &str, resource: &[String]| {
        let mut args = vec!["authorize", "--action", action];
        for r in resource {
            args.extend(["--resource", r.as_str()]);
        }
        args.extend(["--now", "2026-08-20T00:00:00Z", "--format", "json"]);
        args.extend(ORG_LAYERS);
        args.extend(extra);
        let out = run_in(root(), &args);
        (out.code, json(&out))
    };
    let c3 = ["work_class=C3".to_string()];
    let (code, answer) = ask(&[], "auto-merge", &c3);
    assert_eq!((code, &answer["decision"]), (1, &Value::from("deny")), "{answer}");
    let reason = answer["reasons"][0].as_str().unwrap_or_default();
    assert!(reason.contains("does not pass `grail check` (0 failed, "), "{answer}");
    assert!(reason.ends_with("(`--allow-unknown` accepts UNKNOWN)"), "{answer}");
    assert_eq!(answer.get("unknown_allowed"), None);
    let (code, answer) = ask(&["--allow-unknown"], "auto-merge", &c3);
    assert_eq!((code, &answer["decision"]), (0, &Value::from("allow")), "{answer}");
    assert_eq!(answer["unknown_allowed"], "flag");
    // An unproven surface stays refused: fail-closed.
    let dispatch = ["work_class=C2".to_string(), "surface=ci-pool-a".to_string()];
    let (code, answer) = ask(&["--allow-unknown"], "dispatch", &dispatch);
    assert_eq!((code, &answer["decision"]), (1, &Value::from("deny")), "{answer}");
}
