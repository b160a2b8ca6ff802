//! Guarded remediation recovery (remediation-recovery.md, seed 003), end to
//! end: the example state recovers, each refused variant fails exactly the
//! rule it is about, missing evidence is UNKNOWN, an unbound state counts for
//! nothing, and `workflow.next` answers `run` and `recover` as the spec says.

#[allow(dead_code, reason = "this test binary uses `run_in` only")]
mod common;

use common::run_in;
use std::path::{Path, PathBuf};

const STEP: &str = "step=STEP-002-FORMALIZATION-CONTRACTS";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn json(dir: &Path, args: &[&str]) -> serde_json::Value {
    let out = run_in(dir, args);
    assert!(out.stderr.is_empty(), "grail wrote to standard error: {}", out.stderr);
    serde_json::from_str(&out.stdout).expect("one JSON object")
}

/// The findings of `rule` (or of every `recovery.*` rule with `"recovery."`), as (rule, outcome).
fn outcomes(report: &serde_json::Value, prefix: &str) -> Vec<(String, String)> {
    report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["rule"].as_str().is_some_and(|r| r.starts_with(prefix)))
        .map(|f| (f["rule"].as_str().unwrap_or("").to_string(), f["outcome"].as_str().unwrap_or("").to_string()))
        .collect()
}

fn check(dir: &Path, state: &str) -> serde_json::Value {
    let bind = format!("harness={state}");
    json(dir, &["check", "--format", "json", "--layer", &bind, state])
}

/// `ALLOW` or `DENY` for an event of the example's step.
fn answer(dir: &Path, state: &str, event: &str) -> String {
    let bind = format!("harness={state}");
    let event = format!("event={event}");
    let out = run_in(
        dir,
        &["authorize", "--action", "record", "--resource", STEP, "--resource", &event, "--layer", &bind, state],
    );
    out.stdout.split_whitespace().next().unwrap_or("").to_string()
}

/// A scratch copy of `examples/recovery/` with `state.yaml` edited by `edit`.
fn copy(name: &str, source: &str, edit: impl Fn(String) -> String) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("recovery").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join(".versions")).expect("scratch folder");
    let example = root().join("examples/recovery");
    for f in ["plan.md", "step-002.yaml"] {
        std::fs::copy(example.join(f), dir.join(f)).expect("copy");
    }
    for e in std::fs::read_dir(example.join(".versions")).expect("versions").flatten() {
        std::fs::copy(e.path(), dir.join(".versions").join(e.file_name())).expect("copy");
    }
    let text = std::fs::read_to_string(example.join(source)).expect("the example state");
    let edited = edit(text.clone());
    assert_ne!(edited, text, "the edit of {name} changes nothing");
    std::fs::write(dir.join("state.yaml"), edited).expect("write");
    dir
}

#[test]
fn the_example_recovers_and_each_refused_variant_fails_only_its_rule() {
    let report = check(root(), "examples/recovery/state.yaml");
    assert_eq!(report["verdict"], "pass", "{report:#}");
    // Every rule of the spec judged it, and passed.
    let listed = run_in(
        root(),
        &["check", "-v", "--layer", "harness=examples/recovery/state.yaml", "examples/recovery/state.yaml"],
    );
    for rule in [
        "posture",
        "plan_artifacts",
        "semantic_equivalence",
        "direct_rebind",
        "knowledge_map",
        "execution_authorization",
        "shared_grant",
        "risk_audit",
        "chronology",
        "chain",
        "version",
        "untrusted",
    ] {
        let line = format!(" recovery.{rule} ");
        assert!(
            listed.stdout.lines().any(|l| l.trim_start().starts_with("pass") && format!("{l} ").contains(&line)),
            "recovery.{rule} did not pass:\n{}",
            listed.stdout
        );
    }
    for (variant, rule) in [
        ("second-changed-line", "recovery.semantic_equivalence"),
        ("intermediate-rebind", "recovery.direct_rebind"),
        ("revoked-grant", "recovery.shared_grant"),
        ("task-scoped-grant", "recovery.shared_grant"),
        ("replaced-risk-audit", "recovery.risk_audit"),
    ] {
        let state = format!("examples/recovery-refused/{variant}/state.yaml");
        let report = check(root(), &state);
        let failed: Vec<String> =
            outcomes(&report, "").into_iter().filter(|(_, o)| o == "fail" || o == "unknown").map(|(r, _)| r).collect();
        assert_eq!(failed, vec![rule.to_string()], "{variant}: {report:#}");
        assert_eq!(answer(root(), &state, "recover"), "DENY", "{variant}");
        assert_eq!(answer(root(), &state, "run"), "DENY", "{variant}");
    }
}

#[test]
fn an_unbound_state_is_untrusted_and_no_recovery_rule_passes() {
    let report = json(root(), &["check", "--format", "json", "examples/recovery/state.yaml"]);
    let found = outcomes(&report, "recovery.");
    assert!(found.contains(&("recovery.untrusted".into(), "fail".into())), "{report:#}");
    let unknown = found.iter().filter(|(_, o)| o == "unknown").count();
    assert!(unknown >= 11, "every rule over the unread state is UNKNOWN: {found:?}");
    assert!(!found.iter().any(|(r, o)| o == "pass" && r != "recovery.untrusted"), "{found:?}");
    for event in ["run", "recover", "remediation"] {
        let out = run_in(
            root(),
            &[
                "authorize",
                "--action",
                "record",
                "--resource",
                STEP,
                "--resource",
                &format!("event={event}"),
                "examples/recovery/state.yaml",
            ],
        );
        assert!(out.stdout.starts_with("DENY"), "{event}: {}", out.stdout);
    }
}

#[test]
fn a_file_that_cannot_be_read_is_unknown_never_pass() {
    let dir = copy("no-history", "state.yaml", |t| t.replace("history: step-002.yaml", "history: gone.yaml"));
    let report = check(&dir, "state.yaml");
    assert!(outcomes(&report, "recovery.posture").iter().all(|(_, o)| o == "unknown"), "{report:#}");
    assert!(!outcomes(&report, "recovery.posture").is_empty(), "{report:#}");
    let dir = copy("no-plan", "state.yaml", |t| t.replace("  plan: plan.md", "  plan: plan-gone.md"));
    let report = check(&dir, "state.yaml");
    let found = outcomes(&report, "recovery.plan_artifacts");
    assert_eq!(found, vec![("recovery.plan_artifacts".to_string(), "unknown".to_string())], "{report:#}");
    assert_eq!(answer(&dir, "state.yaml", "recover"), "DENY");
}

/// Issue 40 class 1: a Plan version whose bytes differ from the hashed
/// original only where the original held U+FFFD (a lossy decoding reads
/// them as one text) fails its hash: the hash is over the exact bytes.
/// (A fixture pair cannot hold bytes that are not UTF-8: the library's
/// fixtures are built into the binary as text.)
#[test]
fn a_plan_equal_to_its_hash_only_once_decoded_fails_its_hash() {
    let versions = root().join("examples/recovery/.versions");
    let name = std::fs::read_dir(&versions).expect("versions").flatten().next().expect("one version").file_name();
    let name = name.to_str().expect("a name").to_string();
    let recorded = name.trim_start_matches("plan.md.").to_string();
    let original = std::fs::read(versions.join(&name)).expect("the decision Plan");
    let held = [&original[..], "\n- A note: \u{fffd}\n".as_bytes()].concat();
    let hash = {
        use sha2::Digest as _;
        sha2::Sha256::digest(&held).iter().map(|b| format!("{b:02x}")).collect::<String>()
    };
    for (case, bytes) in
        [("fffd-exact", held.clone()), ("fffd-forged", [&original[..], b"\n- A note: \xff\n"].concat())]
    {
        let dir = copy(case, "state.yaml", |t| t.replace(&recorded, &hash));
        std::fs::remove_file(dir.join(".versions").join(&name)).expect("the copied version");
        std::fs::write(dir.join(".versions").join(format!("plan.md.{hash}")), &bytes).expect("write");
        assert_eq!(String::from_utf8_lossy(&bytes), String::from_utf8_lossy(&held), "one text once decoded");
        let report = check(&dir, "state.yaml");
        let found = outcomes(&report, "recovery.plan_artifacts");
        let want =
            if bytes == held { vec![] } else { vec![("recovery.plan_artifacts".to_string(), "fail".to_string())] };
        assert_eq!(found, want, "{case}: {report:#}");
    }
}

#[test]
fn a_revocation_after_the_authorization_keeps_the_history_and_blocks_run() {
    let revoke = |t: String| {
        t.replacen(
            "expires_at: \"2026-08-16T09:00:00Z\"}",
            "expires_at: \"2026-08-16T09:00:00Z\", revoked_at: \"2026-08-14T12:00:00Z\"}",
            1,
        )
    };
    let recovered = copy("revoked-after-recovery", "recovered.yaml", revoke);
    let report = check(&recovered, "state.yaml");
    assert_eq!(report["verdict"], "pass", "the recovery's history stands: {report:#}");
    assert_eq!(answer(&recovered, "state.yaml", "run"), "DENY");
    // Without the revocation, the recovered state runs.
    assert_eq!(answer(root(), "examples/recovery/recovered.yaml", "run"), "ALLOW");
    let pending = copy("revoked-before-recovery", "state.yaml", revoke);
    assert_eq!(answer(&pending, "state.yaml", "recover"), "ALLOW");
    assert_eq!(answer(&pending, "state.yaml", "run"), "DENY");
}

#[test]
fn after_a_refresh_the_step_routes_to_recovery_never_a_second_decision() {
    let state = "examples/recovery/state.yaml";
    assert_eq!(answer(root(), state, "recover"), "ALLOW");
    assert_eq!(answer(root(), state, "continue-fix"), "DENY");
    assert_eq!(answer(root(), state, "run"), "DENY");
    assert_eq!(answer(root(), state, "remediation"), "DENY");
    // Recovered: run, and neither a second recovery nor a second decision.
    let recovered = "examples/recovery/recovered.yaml";
    assert_eq!(answer(root(), recovered, "run"), "ALLOW");
    assert_eq!(answer(root(), recovered, "recover"), "DENY");
    assert_eq!(answer(root(), recovered, "continue-fix"), "DENY");
}

#[test]
fn the_cedar_output_holds_every_step_answer_with_its_step() {
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("recovery-cedar");
    let _ = std::fs::remove_dir_all(&out);
    let out_arg = out.to_string_lossy().to_string();
    let run = run_in(
        root(),
        &[
            "compile",
            "--target",
            "cedar",
            "--out",
            &out_arg,
            "--layer",
            "harness=examples/recovery/state.yaml",
            "examples/recovery/state.yaml",
        ],
    );
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let cedar = std::fs::read_to_string(out.join("guardrails.cedar")).expect("the policies");
    let step = "resource.step == \"STEP-002-FORMALIZATION-CONTRACTS\"";
    let permits: Vec<&str> = cedar.split("@question(").filter(|p| p.starts_with("\"workflow.next\"")).collect();
    assert!(permits.iter().all(|p| p.contains(step)), "{cedar}");
    assert!(permits.iter().any(|p| p.contains("resource.event == \"recover\"")), "{cedar}");
    assert!(!permits.iter().any(|p| p.contains("resource.event == \"run\"")), "{cedar}");
    assert!(!permits.iter().any(|p| p.contains("resource.event == \"continue-fix\"")), "{cedar}");
}

#[test]
fn two_histories_are_each_answered_under_their_own_step() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("recovery-two-histories");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch folder");
    std::fs::copy(root().join("examples/org/history/step-002.yaml"), dir.join("step-002.yaml")).expect("copy");
    // A second step after one failed attempt: another remediation may run.
    let second = "kind: remediation-history\nschema_version: \"1.0\"\nstep: STEP-007\nguarded: true\nevents:\n  - {type: remediation, ordinal: 1, outcome: failed}\n";
    std::fs::write(dir.join("step-007.yaml"), second).expect("write");
    let ask = |step: &str, event: &str| {
        let (step, event) = (format!("step={step}"), format!("event={event}"));
        let out = run_in(
            &dir,
            &[
                "authorize",
                "--action",
                "record",
                "--resource",
                &step,
                "--resource",
                &event,
                "step-002.yaml",
                "step-007.yaml",
            ],
        );
        out.stdout.split_whitespace().next().unwrap_or("").to_string()
    };
    // STEP-002 is at its hard stop; STEP-007 is not.
    assert_eq!(ask("STEP-002", "remediation"), "DENY");
    assert_eq!(ask("STEP-002", "split-required"), "ALLOW");
    assert_eq!(ask("STEP-007", "remediation"), "ALLOW");
    assert_eq!(ask("STEP-007", "split-required"), "ALLOW");
    // A step that no history records is answered for nothing.
    assert_eq!(ask("STEP-999", "remediation"), "DENY");
}
