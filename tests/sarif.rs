//! `grail check --format sarif`: the output validates against the official
//! SARIF 2.1.0 schema (tests/data/, with a note on its origin), and says what
//! the JSON report says.

use std::process::Command;

use serde_json::Value;

fn grail(args: &[&str]) -> (i32, Value) {
    let out = Command::new(env!("CARGO_BIN_EXE_grail"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("NO_COLOR", "1")
        .output()
        .expect("grail runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"));
    (out.status.code().unwrap_or(-1), value)
}

fn validator() -> jsonschema::Validator {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/sarif-schema-2.1.0.json"))
        .expect("the schema is in tests/data");
    let schema: Value = serde_json::from_str(&text).expect("the schema is JSON");
    // One `pattern` of the official schema (`run.language`) is written for
    // Python's regex flavour: a stray `]` that Python reads as a literal and
    // ECMA-262 refuses (check-jsonschema needs `--regex-variant python` for
    // the same reason). Escaping it keeps Python's meaning; the file itself
    // stays as published.
    const PUBLISHED: &str = "^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$";
    fn escape(v: &mut Value) -> usize {
        match v {
            Value::String(s) if s == PUBLISHED => {
                *s = "^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}\\]?$".into();
                1
            }
            Value::Array(items) => items.iter_mut().map(escape).sum(),
            Value::Object(map) => map.values_mut().map(escape).sum(),
            _ => 0,
        }
    }
    let mut schema = schema;
    assert_eq!(escape(&mut schema), 2, "the published pattern, on `run` and `toolComponent`");
    jsonschema::options().should_validate_formats(true).build(&schema).expect("the schema compiles")
}

#[track_caller]
fn assert_valid(log: &Value) {
    let errors: Vec<String> = validator().iter_errors(log).map(|e| format!("{} at {}", e, e.instance_path())).collect();
    assert!(errors.is_empty(), "not valid SARIF 2.1.0:\n{}", errors.join("\n"));
}

#[test]
fn the_validator_rejects_what_sarif_forbids() {
    // The test can fail: a relative helpUri and a missing version are refused.
    let (_, mut log) = grail(&["check", "--format", "sarif", "examples/bindings/good.yaml"]);
    assert_valid(&log);
    log["runs"][0]["tool"]["driver"]["rules"][0]["helpUri"] = "docs/rules.md#schema.syntax".into();
    assert!(!validator().is_valid(&log), "a relative helpUri is not a URI");
    let (_, mut log) = grail(&["check", "--format", "sarif", "examples/bindings/good.yaml"]);
    log.as_object_mut().expect("an object").remove("version");
    assert!(!validator().is_valid(&log));
}

#[test]
fn every_example_validates() {
    let mut checked = 0;
    for entry in std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/bindings")).expect("examples") {
        let path = entry.expect("an entry").path();
        let rel = format!("examples/bindings/{}", path.file_name().and_then(|n| n.to_str()).expect("a name"));
        let (code, log) = grail(&["check", "--format", "sarif", &rel]);
        assert!(code == 0 || code == 1, "{rel}: exit {code}");
        assert_valid(&log);
        checked += 1;
    }
    assert!(checked >= 4);
    // Broken and hostile documents too, and several at once.
    for args in [
        &["check", "--format", "sarif", "tests/inputs/garbage.bin"][..],
        &["check", "--format", "sarif", "tests/inputs/duplicate.yaml", "examples/bindings/org.json"],
        &["check", "--format", "sarif", "--each", "examples/bindings/good.yaml", "examples/bindings/broken.yaml"],
        &["check", "--format", "sarif", "--policy", "tests/policies/unknown", "tests/inputs/no-evidence.yaml"],
        &[
            "check",
            "--format",
            "sarif",
            "--allow-unknown",
            "--policy",
            "tests/policies/stated-unknown",
            "tests/inputs/no-evidence.yaml",
        ],
        // The example organisation: three layers, work items, a history (acceptance of issue 7).
        &[
            "check",
            "--format",
            "sarif",
            "--layer",
            "security=examples/org/security.yaml",
            "--layer",
            "operator=examples/org/operator.yaml",
            "--layer",
            "repo=examples/org/repo.yaml",
        ],
        &[
            "check",
            "--format",
            "sarif",
            "--binding",
            "examples/org/security.yaml",
            "examples/org/items/tracker-issue-412.md",
            "examples/org/items/nightly-sweep-2026-08-11.md",
            "examples/org/items/split-retry-policy.md",
        ],
        &["check", "--format", "sarif", "examples/org/history/step-002.yaml"],
    ] {
        let (_, log) = grail(args);
        assert_valid(&log);
    }
}

#[test]
fn results_say_what_the_json_report_says() {
    let file = "examples/bindings/org.json";
    let (sarif_code, log) = grail(&["check", "--format", "sarif", file]);
    let (json_code, report) = grail(&["check", "--format", "json", file]);
    assert_eq!(sarif_code, json_code);
    let run = &log["runs"][0];
    let results = run["results"].as_array().expect("results");
    let listed: Vec<&Value> = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["outcome"] == "fail" || f["outcome"] == "unknown")
        .collect();
    assert_eq!(results.len(), listed.len());
    assert!(!results.is_empty());
    let rules = run["tool"]["driver"]["rules"].as_array().expect("rules");
    for (r, f) in results.iter().zip(&listed) {
        assert_eq!(r["ruleId"], f["rule"]);
        // FAIL and UNKNOWN both fail the check: both are errors (an allowed UNKNOWN a warning: tests/unknown.rs).
        assert_eq!(r["level"], "error", "{f}");
        assert_eq!(r["properties"]["outcome"], f["outcome"]);
        assert_eq!(r["message"]["text"], f["message"]);
        let region = &r["locations"][0]["physicalLocation"]["region"];
        assert_eq!(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], file);
        assert_eq!(region["startLine"], f["line"]);
        assert_eq!(region["startColumn"], f["column"]);
        let index = r["ruleIndex"].as_u64().expect("a rule index") as usize;
        assert_eq!(rules[index]["id"], f["rule"]);
        let related = &r["relatedLocations"][0]["physicalLocation"];
        assert_eq!(related["artifactLocation"]["uri"], f["policy"]["file"]);
        assert_eq!(related["region"]["startLine"], f["policy"]["line"]);
    }
    let summary = &run["properties"]["summary"];
    assert_eq!(summary, &report["summary"]);
}

#[test]
fn rules_carry_their_documentation() {
    let (_, log) = grail(&["check", "--format", "sarif", "examples/bindings/good.yaml"]);
    let rules = log["runs"][0]["tool"]["driver"]["rules"].as_array().expect("rules").clone();
    let rule = |id: &str| rules.iter().find(|r| r["id"] == id).unwrap_or_else(|| panic!("no rule {id}")).clone();
    // From the rule's `///` comment in policies/guardrails/topology.grail.
    let count = rule("topology.checker_count");
    assert_eq!(
        count["shortDescription"]["text"],
        "Enough checking roles: distinct names of `checker` and `cross_vendor_checker` roles, scanners included, against the binding's `min_checkers` (the shipped floor where it sets none)."
    );
    assert!(count["help"]["text"].as_str().expect("help").contains("policies/guardrails/topology.grail:150:"));
    // A bound takes its field's documentation.
    assert!(rule("floor.min_checkers")["fullDescription"]["text"].as_str().expect("text").contains("distinct checker"));
    // No rule lacks a description, and no rule claims a help URI it cannot have.
    for r in &rules {
        assert!(!r["shortDescription"]["text"].as_str().unwrap_or_default().is_empty(), "{r}");
        assert!(r.get("helpUri").is_none());
    }
    // Every shipped rule is listed once.
    let ids: std::collections::BTreeSet<&str> = rules.iter().filter_map(|r| r["id"].as_str()).collect();
    assert_eq!(ids.len(), rules.len());
    let db = grail_engine::Database::default();
    let compiled = grail_engine::db::compile_policy(&db, grail_engine::shipped::policy_set(&db));
    let shipped: std::collections::BTreeSet<&str> = compiled.policy.rule_ids().into_iter().map(|(id, _)| id).collect();
    assert_eq!(ids, shipped, "every rule id of the library, once");
    // The embedded library is not in the checked repository: its files are
    // relative to a base that says so.
    let base = &log["runs"][0]["originalUriBaseIds"]["GRAIL_LIBRARY"];
    assert!(base["description"]["text"].as_str().is_some(), "{base}");
    assert_eq!(count["properties"]["declaration"]["artifactLocation"]["uriBaseId"], "GRAIL_LIBRARY");
}

#[test]
fn a_good_binding_has_no_results_but_keeps_its_counts() {
    let (code, log) = grail(&["check", "--format", "sarif", "examples/bindings/good.yaml"]);
    assert_eq!(code, 0);
    assert_eq!(log["runs"][0]["results"], serde_json::json!([]));
    assert_eq!(log["runs"][0]["properties"]["verdict"], "pass");
    assert!(log["runs"][0]["properties"]["summary"]["pass"].as_u64().unwrap_or_default() > 0);
}

#[test]
fn each_file_is_a_run_of_its_own() {
    let (code, log) =
        grail(&["check", "--format", "sarif", "--each", "examples/bindings/good.yaml", "examples/bindings/org.json"]);
    assert_eq!(code, 1);
    let runs = log["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0]["artifacts"][0]["location"]["uri"], "examples/bindings/good.yaml");
    assert_eq!(runs[1]["properties"]["verdict"], "fail");
}
