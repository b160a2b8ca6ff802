//! The command line as a person sees it: exit codes and output, snapshotted.

mod common;
use common::grail;

#[test]
fn a_good_binding_passes() {
    insta::assert_snapshot!(grail(&["check", "examples/bindings/good.yaml"]));
}

#[test]
fn a_demoted_auto_merge_fails_with_the_binding_line() {
    insta::assert_snapshot!(grail(&["check", "examples/bindings/auto-merge-demoted.yaml"]));
}

#[test]
fn identical_checkers_count_once() {
    insta::assert_snapshot!(grail(&["check", "examples/bindings/identical-checkers.yaml"]));
}

#[test]
fn json_report() {
    insta::assert_snapshot!(grail(&["check", "--format", "json", "examples/bindings/org.json"]));
}

#[test]
fn json_each_writes_one_object_per_line() {
    let out =
        grail(&["check", "--each", "--format", "json", "examples/bindings/good.yaml", "examples/bindings/org.json"]);
    let stdout = out.split("--- stdout\n").nth(1).and_then(|s| s.split("--- stderr").next()).unwrap_or("");
    let lines: Vec<serde_json::Value> =
        stdout.lines().map(|l| serde_json::from_str(l).expect("one JSON object per line")).collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["file"], "examples/bindings/good.yaml");
    assert_eq!(lines[0]["verdict"], "pass");
    assert_eq!(lines[1]["file"], "examples/bindings/org.json");
    assert_eq!(lines[1]["verdict"], "fail");
    assert!(out.starts_with("exit: 1"), "{out}");
}

#[test]
fn malformed_yaml_is_a_located_finding() {
    insta::assert_snapshot!(grail(&["check", "examples/bindings/broken.yaml"]));
}

#[test]
fn malformed_json_is_a_located_finding() {
    insta::assert_snapshot!(grail(&["check", "--format", "json", "tests/inputs/trailing-comma.json"]));
}

#[test]
fn binary_garbage_is_a_located_finding() {
    insta::assert_snapshot!(grail(&["check", "--format", "json", "tests/inputs/garbage.bin"]));
}

#[test]
fn a_duplicate_key_is_taken_from_neither_reader() {
    insta::assert_snapshot!(grail(&["check", "tests/inputs/duplicate.yaml"]));
}

#[test]
fn a_missing_file_cannot_be_checked() {
    insta::assert_snapshot!(grail(&["check", "tests/inputs/no-such-file.yaml"]));
}

#[test]
fn a_folder_of_layered_documents_grants_them_no_trust() {
    // Three bindings, none bound by `--layer`: none of them is read (tests/formats.rs binds them).
    insta::assert_snapshot!(grail(&["check", "examples/org"]));
}

#[test]
fn a_policy_with_errors_stops_every_check() {
    insta::assert_snapshot!(grail(&["check", "--policy", "tests/policies/broken", "examples/bindings/good.yaml"]));
}

#[test]
fn unknown_passes_unless_denied() {
    let allowed = grail(&["check", "--policy", "tests/policies/unknown", "tests/inputs/no-evidence.yaml"]);
    assert!(allowed.starts_with("exit: 0"), "{allowed}");
    let denied =
        grail(&["check", "--deny-unknown", "--policy", "tests/policies/unknown", "tests/inputs/no-evidence.yaml"]);
    assert!(denied.starts_with("exit: 1"), "{denied}");
    insta::assert_snapshot!(denied);
    let proven =
        grail(&["check", "--deny-unknown", "--policy", "tests/policies/unknown", "tests/inputs/evidence.yaml"]);
    assert!(proven.starts_with("exit: 0"), "{proven}");
}

#[test]
fn help_teaches_the_exit_codes() {
    let help = grail(&["check", "--help"]);
    assert!(help.contains("Exit status: 0 when nothing FAILs"), "{help}");
    assert!(help.contains("--deny-unknown"), "{help}");
}

#[test]
fn no_arguments_is_a_usage_error() {
    let out = grail(&["check"]);
    assert!(out.starts_with("exit: 2"), "{out}");
}

/// The binary carries the shipped library compiled (build.rs); a copy of the
/// library read from its folder is compiled from source at run time, and the
/// two give the same verdicts, messages and locations.
#[test]
fn the_precompiled_library_checks_like_its_source() {
    assert!(grail(&["--version"]).contains("(shipped library: precompiled)"));
    for binding in ["examples/bindings/auto-merge-demoted.yaml", "benches/data/binding-3k.json"] {
        let shipped = grail(&["check", "--format", "json", binding]);
        let source = grail(&["check", "--format", "json", "--policy", "./policies/guardrails", binding]);
        assert!(shipped.contains("\"outcome\""), "{shipped}");
        assert_eq!(shipped, source.replace("./policies/guardrails/", "policies/guardrails/"), "{binding}");
    }
}

#[test]
fn the_time_of_the_check_is_given_or_the_clock_and_the_report_says_which() {
    let given = grail(&[
        "check",
        "--policy",
        "tests/policies/clock",
        "--now",
        "2026-08-12T10:00:00+02:00",
        "tests/inputs/grants.yaml",
    ]);
    assert!(given.starts_with("exit: 0"), "{given}");
    assert!(given.contains("time of the check: 2026-08-12T08:00:00Z (--now)\n"), "{given}");
    let later = grail(&[
        "check",
        "--policy",
        "tests/policies/clock",
        "--now",
        "2026-08-12T09:00:00Z",
        "tests/inputs/grants.yaml",
    ]);
    assert!(later.starts_with("exit: 1"), "{later}");
    // `--each` checks the file as a stream, at the same time of the check.
    let each = grail(&[
        "check",
        "--each",
        "--policy",
        "tests/policies/clock",
        "--now",
        "2026-08-12T09:00:00Z",
        "tests/inputs/grants.yaml",
    ]);
    assert_eq!(each, later);
    let json = grail(&[
        "check",
        "--policy",
        "tests/policies/clock",
        "--format",
        "json",
        "--now",
        "2026-08-12T08:00:00.5Z",
        "tests/inputs/grants.yaml",
    ]);
    assert!(
        json.contains(
            r#""now": {
    "value": "2026-08-12T08:00:00.5Z",
    "source": "given"
  }"#
        ),
        "{json}"
    );
    // The clock of this machine is long past 2026-08-12.
    let clock = grail(&["check", "--policy", "tests/policies/clock", "tests/inputs/grants.yaml"]);
    assert!(clock.contains(" (the clock)\n"), "{clock}");
    // A check whose rules never evaluate `now()` (no probed surface) says nothing of the time.
    let shipped = grail(&["check", "--now", "2026-08-12T08:00:00Z", "examples/bindings/good.yaml"]);
    assert!(!shipped.contains("time of the check"), "{shipped}");
}

#[test]
fn a_probe_transcript_is_stale_more_than_62_days_after_its_capture() {
    // examples/org's transcripts were captured on 2026-08-11 (09:00 and 09:30).
    let check = |now: &str| {
        grail(&[
            "check",
            "--now",
            now,
            "--layer",
            "security=examples/org/security.yaml",
            "--layer",
            "operator=examples/org/operator.yaml",
            "--layer",
            "repo=examples/org/repo.yaml",
        ])
    };
    let fresh = check("2026-10-12T09:00:00Z");
    assert!(fresh.contains("time of the check: 2026-10-12T09:00:00Z (--now)\n"), "{fresh}");
    assert!(!fresh.contains("probe.stale"), "{fresh}");
    let stale = check("2026-10-12T09:00:00.000000001Z");
    assert!(stale.contains("probe.stale\n"), "{stale}");
    assert!(stale.contains("the probe of `ci-pool-a` has `captured_at` `2026-08-11T09:00:00Z`"), "{stale}");
    // ci-pool-a's probe is stale, so no surface proves C1 to C3 either.
    assert!(stale.contains("C2 may be dispatched without a human, but no surface is proven"), "{stale}");
    let early = check("2026-08-11T08:59:59Z");
    assert!(early.contains("probe.stale\n"), "{early}");
    // The admission question reads the same time: stale evidence admits nothing.
    let ask = |now: &str| {
        grail(&[
            "authorize",
            "--action",
            "dispatch",
            "--resource",
            "work_class=C2",
            "--resource",
            "surface=ci-pool-a",
            "--layer",
            "security=examples/org/security.yaml",
            "--now",
            now,
        ])
    };
    let allowed = ask("2026-08-20T00:00:00Z");
    assert!(allowed.starts_with("exit: 0"), "{allowed}");
    assert!(allowed.contains("time of the check: 2026-08-20T00:00:00Z (--now)\n"), "{allowed}");
    let denied = ask("2026-10-13T09:00:00Z");
    assert!(denied.starts_with("exit: 1"), "{denied}");
}

/// A scratch policy folder: `tests/policies/clock` with one fixture pair of
/// `grant.live` (the grant expires at 2026-08-12T09:00:00Z), each case a
/// folder with `log.yaml` and, when given, its `now.bind`.
fn clock_policy(name: &str, fail_now: Option<&str>, pass_now: Option<&str>) -> std::path::PathBuf {
    let root = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("now-bind-{name}"));
    let _ = std::fs::remove_dir_all(&root);
    let source = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/policies/clock/clock.grail");
    std::fs::create_dir_all(&root).expect("a scratch folder");
    std::fs::copy(source, root.join("clock.grail")).expect("copy the policy");
    for (case, now) in [("fail", fail_now), ("pass", pass_now)] {
        let dir = root.join("tests/grant.live").join(case);
        std::fs::create_dir_all(&dir).expect("a case folder");
        std::fs::write(dir.join("log.yaml"), "grants:\n  - {id: G-1, expires_at: \"2026-08-12T09:00:00Z\"}\n")
            .expect("write the case");
        if let Some(now) = now {
            std::fs::write(dir.join("now.bind"), format!("{now}\n")).expect("write now.bind");
        }
    }
    root
}

#[test]
fn a_test_case_states_its_time_of_the_check_and_it_wins_over_now() {
    let both = clock_policy("both", Some("2026-08-12T09:00:00Z"), Some("2026-08-12T08:59:59Z"));
    let policy = both.to_str().expect("a UTF-8 path");
    let out = grail(&["test", "--policy", policy]);
    assert!(out.starts_with("exit: 0"), "{out}");
    assert!(out.contains("2 passed, 0 failed\n"), "{out}");
    assert!(out.contains("time of the check: the one a case states (now.bind)"), "{out}");
    // Each case's own time wins over the one `--now` gives (at which the pass case would fail).
    let given = grail(&["test", "--policy", policy, "--now", "2027-01-01T00:00:00Z"]);
    assert!(given.starts_with("exit: 0"), "{given}");
    assert!(given.contains("time of the check: 2027-01-01T00:00:00Z (--now), unless a case states its own"), "{given}");
}

#[test]
fn a_test_case_without_a_time_reads_now_as_missing_evidence_never_the_clock() {
    let untimed = clock_policy("untimed", Some("2026-08-12T09:00:00Z"), None);
    let policy = untimed.to_str().expect("a UTF-8 path");
    // The pass case needs the time: without one it is UNKNOWN, so it does not pass.
    let out = grail(&["test", "--policy", policy]);
    assert!(out.starts_with("exit: 1"), "{out}");
    assert!(out.contains("FAIL tests/grant.live/pass: expected grant.live to pass, got unknown"), "{out}");
    assert!(out.contains("now() (the time of the check was not given)"), "{out}");
    // `--now` gives the time to the case that states none.
    let given = grail(&["test", "--policy", policy, "--now", "2026-08-12T00:00:00Z"]);
    assert!(given.starts_with("exit: 0"), "{given}");
    let late = grail(&["test", "--policy", policy, "--now", "2026-08-12T09:00:00Z"]);
    assert!(late.contains("FAIL tests/grant.live/pass: expected grant.live to pass, got fail"), "{late}");
}

#[test]
fn a_now_bind_that_is_not_one_rfc3339_time_is_a_problem_of_the_case() {
    let bad = clock_policy("bad", Some("2026-08-12 09:00"), Some("2026-08-12T08:59:59Z\n2026-08-12T08:59:58Z"));
    let out = grail(&["test", "--policy", bad.to_str().expect("a UTF-8 path")]);
    assert!(out.starts_with("exit: 1"), "{out}");
    assert!(out.contains("now.bind:1: `2026-08-12 09:00` is not an RFC 3339 date-time"), "{out}");
    assert!(out.contains("now.bind:2: a second time; the file states one"), "{out}");
}

#[test]
fn a_time_of_the_check_that_is_not_rfc3339_is_refused() {
    let out = grail(&["check", "--now", "2026-08-12T09:00:00-+9:00", "examples/bindings/good.yaml"]);
    assert!(out.starts_with("exit: 2"), "{out}");
    assert!(out.contains("`2026-08-12T09:00:00-+9:00` is not an RFC 3339 date-time"), "{out}");
}

#[test]
fn without_files_the_workspace_deployments_are_checked_with_their_layers_bound() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = common::grail_in(&root.join("examples/org"), &["check", "--now", "2026-08-20T00:00:00Z"]);
    assert!(out.starts_with("exit: 0"), "{out}");
    assert!(out.contains("deployment `storefront` (grail.toml)\n"), "{out}");
    // The workspace file binds the three layers: none is read as the lowest.
    assert!(out.contains("Binding `security` = security.yaml (bound by the workspace file)"), "{out}");
    assert!(!out.contains("layer.order"), "{out}");
    assert!(out.contains("leases.yaml"), "{out}");
}
