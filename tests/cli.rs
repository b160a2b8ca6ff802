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

/// Every listed finding says where it is in the document, as a key path:
/// a rule's at the value its `at` names, a structural one at its key, with
/// the earlier key of a duplicate related, and one about the whole document
/// at the document's root, `binding`.
#[test]
fn json_findings_carry_their_key_path() {
    let findings = |file: &str| -> Vec<serde_json::Value> {
        let out = grail(&["check", "--format", "json", file]);
        let stdout = out.split("--- stdout\n").nth(1).and_then(|s| s.split("--- stderr").next()).unwrap_or("");
        let report: serde_json::Value = serde_json::from_str(stdout).expect("a JSON report");
        let findings = report["findings"].as_array().expect("findings").clone();
        assert!(findings.iter().all(|f| f["path"].is_string()), "{stdout}");
        findings
    };
    let at = |findings: &[serde_json::Value], rule: &str| {
        findings.iter().find(|f| f["rule"] == rule && f["outcome"] == "fail").expect(rule).clone()
    };
    let identical = findings("examples/bindings/identical-checkers.yaml");
    assert_eq!(at(&identical, "topology.duplicate_scanner_class")["path"], "verification_topology.C4.roles");
    let duplicate = at(&findings("tests/inputs/duplicate.yaml"), "schema.duplicate_key");
    assert_eq!(duplicate["path"], "merge_policy");
    assert_eq!(duplicate["related"], serde_json::json!(["merge_policy"]));
    assert_eq!(at(&findings("examples/bindings/broken.yaml"), "schema.syntax")["path"], "binding");
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

// An UNKNOWN fails the check unless allowed, in every format: tests/unknown.rs.

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
    // The example's deliberate gap (an L3 probe that could not run) is UNKNOWN: it fails the check.
    let gap = common::grail_in(&root.join("examples/org"), &["check", "--now", "2026-08-20T00:00:00Z"]);
    assert!(gap.starts_with("exit: 1"), "{gap}");
    let out =
        common::grail_in(&root.join("examples/org"), &["check", "--now", "2026-08-20T00:00:00Z", "--allow-unknown"]);
    assert!(out.starts_with("exit: 0"), "{out}");
    assert!(out.contains("not applicable (unknown, allowed by `--allow-unknown`)\n"), "{out}");
    assert_eq!(
        out.replace(", allowed by `--allow-unknown`", "").replace("⚠", "×"),
        gap.replacen("exit: 1", "exit: 0", 1)
    );
    assert!(out.contains("deployment `storefront` (grail.toml)\n"), "{out}");
    // The workspace file binds the three layers: none is read as the lowest.
    assert!(out.contains("Binding `security` = security.yaml (bound by the workspace file)"), "{out}");
    assert!(!out.contains("layer.order"), "{out}");
    assert!(out.contains("leases.yaml"), "{out}");
}

/// The stdout of a `grail` run that must succeed.
fn stdout_of(args: &[&str]) -> String {
    let out = common::run_in(std::path::Path::new(env!("CARGO_MANIFEST_DIR")), args);
    assert_eq!(out.code, 0, "grail {args:?}: {}", out.stderr);
    out.stdout
}

#[test]
fn source_lists_every_file_with_its_lines_and_rule_ids() {
    let out = stdout_of(&["source"]);
    let files = grail_engine::shipped::FILES;
    assert_eq!(out.lines().count(), files.len() + 1, "{out}");
    for ((path, text), line) in files.iter().zip(out.lines()) {
        let mut words = line.split_whitespace();
        assert_eq!(words.next(), Some(*path), "{line}");
        assert_eq!(words.next(), Some(text.lines().count().to_string().as_str()), "{line}");
    }
    let escalation = out.lines().find(|l| l.starts_with("policies/guardrails/escalation.grail")).unwrap_or_default();
    assert!(escalation.ends_with("escalation.reescalation_cap"), "{escalation}");
    assert!(out.lines().last().unwrap_or_default().starts_with(&format!("{} files, ", files.len())), "{out}");
}

/// The help line of a finding of the shipped library names the command
/// that prints the rule, and that command prints the very line it names.
#[test]
fn a_help_line_of_the_shipped_library_says_how_to_print_the_rule_and_it_prints_that_line() {
    let human = grail(&["check", "examples/bindings/org.json"]);
    let flat = human.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains(
            "help: rule `merge.executor_cap` is declared at policies/guardrails/merge.grail:17:6 (shipped library: `grail source merge.executor_cap` prints it)"
        ),
        "{human}"
    );
    let json: serde_json::Value = serde_json::from_str(
        &common::run_in(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")),
            &["check", "--format", "json", "examples/bindings/org.json"],
        )
        .stdout,
    )
    .expect("a JSON report");
    let findings = json["findings"].as_array().cloned().unwrap_or_default();
    let fail = findings.iter().find(|f| f["rule"] == "merge.executor_cap").expect("the rule fails");
    let policy = &fail["policy"];
    assert_eq!(policy["file"], "policies/guardrails/merge.grail", "the JSON report keeps the library's path");
    let line = policy["line"].as_u64().expect("a line");

    let out = stdout_of(&["source", "merge.executor_cap"]);
    let mut lines = out.lines();
    assert_eq!(lines.next(), Some(format!("policies/guardrails/merge.grail:{line}").as_str()), "{out}");
    assert!(out.contains(&format!(">{line} | rule merge.executor_cap\n")), "{out}");
    assert!(out.contains("| /// A vendor-hosted executor never merges alone"), "the doc comment comes with it: {out}");
    assert!(out.ends_with(" 22 |   at m\n"), "the whole rule, and no more: {out}");
}

#[test]
fn source_prints_a_file_by_its_path_or_its_name_and_the_lines_around_one() {
    let by_name = stdout_of(&["source", "escalation.grail"]);
    assert_eq!(by_name, stdout_of(&["source", "policies/guardrails/escalation.grail"]));
    let text = grail_engine::shipped::FILES
        .iter()
        .find(|(p, _)| *p == "policies/guardrails/escalation.grail")
        .map(|(_, t)| *t)
        .unwrap_or_default();
    let mut expected = "policies/guardrails/escalation.grail:1\n".to_string();
    let width = text.lines().count().to_string().len();
    for (i, l) in text.lines().enumerate() {
        expected.push_str(&format!(" {:>width$} | {l}\n", i + 1));
    }
    assert_eq!(by_name, expected);

    let around = stdout_of(&["source", "merge.grail:17"]);
    let numbers: Vec<&str> = around.lines().skip(1).map(|l| l.split('|').next().unwrap_or_default().trim()).collect();
    assert_eq!(numbers, ["12", "13", "14", "15", "16", ">17", "18", "19", "20", "21", "22"], "{around}");
    assert!(around.starts_with("policies/guardrails/merge.grail:17\n"), "{around}");

    let past = grail(&["source", "merge.grail:999"]);
    assert!(past.starts_with("exit: 2"), "{past}");
    assert!(past.contains("there is no line 999"), "{past}");
}

#[test]
fn source_prints_a_declaration_by_name_and_each_clause_a_structural_rule_id_names() {
    let binding = stdout_of(&["source", "Binding"]);
    assert!(binding.starts_with("policies/guardrails/binding.grail:"), "{binding}");
    assert!(binding.contains("| document Binding as binding"), "{binding}");
    let unknown_key = stdout_of(&["source", "schema.unknown_key"]);
    assert!(unknown_key.contains("is named by a clause of `Binding`"), "{unknown_key}");
    assert!(unknown_key.contains("on unknown_key rule schema.unknown_key\n"), "{unknown_key}");
}

#[test]
fn an_unknown_name_is_a_usage_error_with_the_nearest_name() {
    let out = grail(&["source", "escalation.runner_rout"]);
    assert!(out.starts_with("exit: 2\n--- stdout\n--- stderr\n"), "{out}");
    assert!(
        out.contains(
            "error: the policy has no rule, declaration or file `escalation.runner_rout`; did you mean `escalation.runner_route`?"
        ),
        "{out}"
    );
    let file = grail(&["source", "escalaton.grail:3"]);
    assert!(file.starts_with("exit: 2"), "{file}");
    assert!(
        file.contains("error: the policy has no file `escalaton.grail`; did you mean `escalation.grail`?"),
        "{file}"
    );
    let rule = grail(&["source", "merge.executor_cap:3"]);
    assert!(rule.starts_with("exit: 2"), "{rule}");
    assert!(
        rule.contains("the policy has no file `merge.executor_cap`\n"),
        "a rule id is no file, and no file is near: {rule}"
    );
}

/// `--out` writes the library and its fixtures; the folder it names is the
/// same policy: the same report, the same fixtures passing, and help lines
/// that name the user's own files.
#[test]
fn source_out_writes_a_policy_that_checks_like_the_shipped_library() {
    let root = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("source-out");
    let _ = std::fs::remove_dir_all(&root);
    let dir = root.to_str().expect("a UTF-8 path");
    let wrote = stdout_of(&["source", "--out", dir]);
    let folder = format!("{dir}/policies/guardrails");
    assert!(wrote.contains(&format!("--policy {folder} ")), "the hint names the folder to read back: {wrote}");
    let fixtures = grail_engine::shipped::FIXTURES.len();
    let files = grail_engine::shipped::FILES.len();
    assert!(wrote.starts_with(&format!("wrote {0} of {0} files", files + fixtures)), "{wrote}");

    let org = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/bindings/org.json");
    let org = org.to_str().expect("a UTF-8 path");
    let shipped = common::run_in(&root, &["check", "--format", "json", org]);
    let copy = common::run_in(&root, &["check", "--format", "json", "--policy", "policies/guardrails", org]);
    assert_eq!(shipped.code, 1);
    assert_eq!(copy.code, shipped.code);
    assert_eq!(copy.stdout, shipped.stdout);

    let tested = grail(&["test", "--policy", &folder]);
    assert!(tested.starts_with("exit: 0"), "{tested}");
    assert!(tested.contains(" passed, 0 failed"), "{tested}");

    let human = grail(&["check", "--policy", &folder, "examples/bindings/org.json"]);
    assert!(human.contains("help: rule `merge.executor_cap` is declared at "), "{human}");
    assert!(!human.contains("shipped library"), "a user's own file is named as it is: {human}");
    let github = grail(&["check", "--format", "github", "--policy", &folder, "examples/bindings/org.json"]);
    assert!(
        github.contains(&format!("(rule `merge.executor_cap` is declared at {folder}/merge.grail:17:6)\n")),
        "{github}"
    );

    // A file that differs is not replaced without --force, and nothing is written.
    let merge = root.join("policies/guardrails/merge.grail");
    std::fs::write(&merge, "// mine\n").expect("edit the copy");
    std::fs::remove_file(root.join("policies/guardrails/escalation.grail")).expect("remove a file");
    let refused = grail(&["source", "--out", dir]);
    assert!(refused.starts_with("exit: 2"), "{refused}");
    assert!(refused.contains("merge.grail`; nothing was written"), "{refused}");
    assert!(refused.contains("help: `--force` replaces it"), "{refused}");
    assert_eq!(std::fs::read_to_string(&merge).ok().as_deref(), Some("// mine\n"));
    assert!(!root.join("policies/guardrails/escalation.grail").exists(), "nothing was written");
    let forced = stdout_of(&["source", "--out", dir, "--force"]);
    assert!(forced.starts_with("wrote 2 of "), "{forced}");
    assert!(forced.contains("1 replaced"), "{forced}");
    assert_ne!(std::fs::read_to_string(&merge).ok().as_deref(), Some("// mine\n"));
}

/// With `--policy shipped --policy ours/`, a rule of the library says how
/// to print it and a rule of the user's folder names the user's file as it is.
#[test]
fn in_a_policy_of_the_library_and_a_folder_only_the_library_rules_point_at_grail_source() {
    let ours = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("source-ours");
    let _ = std::fs::remove_dir_all(&ours);
    std::fs::create_dir_all(&ours).expect("a scratch folder");
    std::fs::write(
        ours.join("ours.grail"),
        "/// Ours: the executor is our own.\nrule ours.self_operated\n  require binding.executor_class == \"self-operated\"\n    else fail \"executor_class is `{binding.executor_class}`\"\n  at binding.executor_class\n",
    )
    .expect("write the policy");
    let dir = ours.to_str().expect("a UTF-8 path");
    let both = ["--policy", "shipped", "--policy", dir];
    let github = grail(&[&["check", "--format", "github"][..], &both, &["examples/bindings/org.json"]].concat());
    assert!(github.contains(&format!("(rule `ours.self_operated` is declared at {dir}/ours.grail:2:6)\n")), "{github}");
    assert!(
        github.contains("(rule `merge.executor_cap` is declared at policies/guardrails/merge.grail:17:6 (shipped library: `grail source merge.executor_cap` prints it))\n"),
        "{github}"
    );
    let sarif = grail(&[&["check", "--format", "sarif"][..], &both, &["examples/bindings/org.json"]].concat());
    assert!(
        sarif.contains("\"uriBaseId\": \"GRAIL_LIBRARY\""),
        "the library's files are relative to its base id: {sarif}"
    );
    assert!(sarif.contains(&format!("declared at {dir}/ours.grail:2:6\"")), "{sarif}");

    let mine = stdout_of(&[&["source"][..], &both, &["ours.self_operated"]].concat());
    assert!(mine.starts_with(&format!("{dir}/ours.grail:2\n")), "{mine}");
    let refused = grail(&[&["source"][..], &both, &["--out", dir]].concat());
    assert!(refused.starts_with("exit: 2"), "an absolute policy path has no place under --out: {refused}");
}

/// `grail test --coverage` counts a rule's own fixture pair: a rule that
/// another rule's fixtures happen to fire and pass, with no `tests/` folder
/// of its own, is not covered.
#[test]
fn coverage_counts_a_rules_own_fixture_pair() {
    let root = std::env::temp_dir().join(format!("grail-coverage-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("tests/team.named/fail")).expect("a folder");
    std::fs::create_dir_all(root.join("tests/team.named/pass")).expect("a folder");
    std::fs::write(
        root.join("team.grail"),
        "document Team as team where kind absent {\n  on syntax rule team.syntax\n  on duplicate_key rule team.duplicate_key\n  \
         on unknown_key rule team.unknown_key\n  on type rule team.type\n  name?: string\n}\n\n\
         /// The team has a name.\nrule team.named\n  require present(team.name) else fail \"no name\"\n\n\
         /// The same condition, with no fixture of its own.\nrule team.also_named\n  require present(team.name) else fail \"no name\"\n",
    )
    .expect("the policy");
    std::fs::write(root.join("tests/team.named/fail/team.yaml"), "other: 1\n").expect("fail");
    std::fs::write(root.join("tests/team.named/pass/team.yaml"), "name: a\n").expect("pass");
    let policy = root.to_str().expect("a UTF-8 path");
    let out = grail(&["test", "--policy", policy, "--coverage"]);
    assert!(out.starts_with("exit: 1"), "{out}");
    assert!(out.contains("fires yes  passes yes  team.named"), "{out}");
    assert!(out.contains("fires NO   passes NO   team.also_named"), "{out}");
    let _ = std::fs::remove_dir_all(&root);
}

/// A reader that closes the pipe early (`grail doc | head -1`) is no error:
/// the command exits as its work decided, 0 here, without a word.
#[test]
fn a_closed_output_pipe_is_not_an_error() {
    use std::io::BufRead as _;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_grail"))
        .arg("doc")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("grail starts");
    let mut first = String::new();
    std::io::BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut first).expect("a line");
    assert!(first.starts_with("<!-- Generated by `grail doc"), "{first}");
    // The reader is gone: the rest of the reference has nowhere to go.
    let out = child.wait_with_output().expect("grail exits");
    assert!(out.status.success(), "{:?}: {}", out.status, String::from_utf8_lossy(&out.stderr));
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
}
