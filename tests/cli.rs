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
    // A policy that never reads the time says nothing of it.
    let shipped = grail(&["check", "--now", "2026-08-12T08:00:00Z", "examples/bindings/good.yaml"]);
    assert!(!shipped.contains("time of the check"), "{shipped}");
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
    let out = common::grail_in(&root.join("examples/org"), &["check"]);
    assert!(out.starts_with("exit: 0"), "{out}");
    assert!(out.contains("deployment `storefront` (grail.toml)\n"), "{out}");
    // The workspace file binds the three layers: none is read as the lowest.
    assert!(out.contains("Binding `security` = security.yaml (bound by the workspace file)"), "{out}");
    assert!(!out.contains("layer.order"), "{out}");
    assert!(out.contains("leases.yaml"), "{out}");
}
