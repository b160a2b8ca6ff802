//! The CI packaging, tested here as far as it can be: action.yml and the
//! release workflow validate against the schemas check-jsonschema vendors
//! (GitHub's action and workflow schemas, from SchemaStore), the action's
//! check script runs against the examples, and every pre-commit hook's entry
//! runs as pre-commit would run it.

#[allow(dead_code, reason = "this test binary uses `run_in` only")]
mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn check_jsonschema(schema: &str, file: &Path) -> (bool, String) {
    let out = Command::new("check-jsonschema")
        .args(["--builtin-schema", schema])
        .arg(file)
        .output()
        .or_else(|_| {
            Command::new("python3").args(["-m", "check_jsonschema", "--builtin-schema", schema]).arg(file).output()
        })
        .expect("this test needs check-jsonschema: run scripts/test, which installs it");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(!text.contains("No module named"), "this test needs check-jsonschema: run scripts/test\n{text}");
    (out.status.success(), text)
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("grail-ci-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    dir
}

#[test]
fn the_action_and_the_release_workflow_validate_and_the_validator_can_refuse() {
    let (ok, text) = check_jsonschema("vendor.github-actions", &root().join("action.yml"));
    assert!(ok, "action.yml: {text}");
    let (ok, text) = check_jsonschema("vendor.github-workflows", &root().join(".github/workflows/release.yml"));
    assert!(ok, "release.yml: {text}");
    let dir = scratch("schema");
    let action = std::fs::read_to_string(root().join("action.yml")).expect("action.yml");
    let broken = dir.join("action.yml");
    std::fs::write(&broken, action.replace("using: composite", "using: nonsense")).expect("write");
    assert!(!check_jsonschema("vendor.github-actions", &broken).0, "a composite action with `using: nonsense`");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs scripts/action-check.sh as the action does: its inputs as INPUT_* variables.
fn action(inputs: &[(&str, &str)], dir: &Path) -> (i32, String, String) {
    let output = dir.join("github-output");
    let mut cmd = Command::new("bash");
    cmd.arg(root().join("scripts/action-check.sh"))
        .current_dir(root())
        .env("GRAIL", env!("CARGO_BIN_EXE_grail"))
        .env("GITHUB_OUTPUT", &output)
        .env("NO_COLOR", "1");
    for (k, v) in inputs {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("bash runs");
    let outputs = std::fs::read_to_string(&output).unwrap_or_default();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned(), outputs)
}

#[test]
fn the_action_annotates_writes_sarif_and_fails_as_the_check_does() {
    let dir = scratch("action");
    let sarif = dir.join("grail.sarif");
    let sarif_path = sarif.to_str().expect("UTF-8");
    let (code, stdout, outputs) =
        action(&[("INPUT_FILES", "examples/bindings/identical-checkers.yaml"), ("INPUT_SARIF_FILE", sarif_path)], &dir);
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.lines().any(|l| l.starts_with("::error file=examples/bindings/identical-checkers.yaml,")),
        "{stdout}"
    );
    assert!(outputs.contains("exit-code=1"), "{outputs}");
    assert!(outputs.contains(&format!("sarif-file={sarif_path}")), "{outputs}");
    let log: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&sarif).expect("SARIF written")).expect("JSON");
    assert_eq!(log["version"], "2.1.0");
    assert!(!log["runs"][0]["results"].as_array().expect("results").is_empty());

    // The example organisation's deliberate gap: UNKNOWNs, which fail the step.
    let (code, stdout, outputs) =
        action(&[("INPUT_FILES", ""), ("INPUT_LAYERS", ORG_LAYERS), ("INPUT_SARIF_FILE", sarif_path)], &dir);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.lines().any(|l| l.starts_with("::error ") && l.contains("title=UNKNOWN ")), "{stdout}");
    assert!(!stdout.lines().any(|l| l.starts_with("::warning ")), "{stdout}");
    assert!(outputs.contains("exit-code=1"));
    let (code, stdout, outputs) = action(
        &[
            ("INPUT_FILES", ""),
            ("INPUT_LAYERS", ORG_LAYERS),
            ("INPUT_ALLOW_UNKNOWN", "true"),
            ("INPUT_SARIF_FILE", sarif_path),
        ],
        &dir,
    );
    assert_eq!(code, 0, "allow-unknown accepts the UNKNOWNs: {stdout}");
    assert!(stdout.lines().any(|l| l.starts_with("::warning ") && l.contains("title=UNKNOWN ")), "{stdout}");
    assert!(stdout.ends_with("(unknown, allowed by `--allow-unknown`)\n"), "{stdout}");
    assert!(outputs.contains("exit-code=0"));
    let log: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&sarif).expect("SARIF written")).expect("JSON");
    assert_eq!(log["runs"][0]["properties"]["unknown_allowed"], "flag");
    // A check that cannot run writes no report and says so.
    let (code, _, outputs) =
        action(&[("INPUT_FILES", "examples/no-such-file.yaml"), ("INPUT_SARIF_FILE", sarif_path)], &dir);
    assert_eq!(code, 2);
    assert!(outputs.contains("sarif-file=\n"), "{outputs}");
    assert!(!sarif.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// `(id, entry, files)` of each hook of .pre-commit-hooks.yaml.
fn hooks() -> Vec<(String, String, String)> {
    let text = std::fs::read_to_string(root().join(".pre-commit-hooks.yaml")).expect("the hooks");
    let mut out: Vec<(String, String, String)> = Vec::new();
    for line in text.lines() {
        if let Some(id) = line.strip_prefix("- id: ") {
            out.push((id.trim().to_string(), String::new(), String::new()));
        } else if let (Some(last), Some(entry)) = (out.last_mut(), line.strip_prefix("  entry: ")) {
            last.1 = entry.trim().to_string();
        } else if let (Some(last), Some(files)) = (out.last_mut(), line.strip_prefix("  files: ")) {
            last.2 = files.trim().to_string();
        }
    }
    out
}

#[test]
fn every_hook_runs_against_the_examples() {
    let hooks = hooks();
    let ids: Vec<&str> = hooks.iter().map(|(id, _, _)| id.as_str()).collect();
    assert_eq!(ids, ["grail-fmt", "grail-check"]);
    for (id, entry, files) in &hooks {
        let mut words = entry.split_whitespace();
        assert_eq!(words.next(), Some("grail"), "{id}");
        let args: Vec<&str> = words.collect();
        // pre-commit appends the staged files that match `files`.
        let (good, bad): (Vec<&str>, Option<&str>) = match id.as_str() {
            "grail-fmt" => {
                assert_eq!(files, "\\.grail$");
                (vec!["policies/guardrails/topology.grail", "policies/guardrails/merge.grail"], None)
            }
            _ => {
                assert_eq!(files, "\\.(ya?ml|json)$");
                (vec!["examples/bindings/good.yaml"], Some("examples/bindings/identical-checkers.yaml"))
            }
        };
        let mut all: Vec<&str> = args.clone();
        all.extend(&good);
        let out = common::run_in(root(), &all);
        assert_eq!(out.code, 0, "{id} on {good:?}: {}{}", out.stdout, out.stderr);
        if let Some(bad) = bad {
            let mut all = args.clone();
            all.extend(&good);
            all.push(bad);
            let out = common::run_in(root(), &all);
            assert_eq!(out.code, 1, "{id} on {bad}: {}", out.stdout);
        }
    }
    // grail-fmt refuses an unformatted policy.
    let dir = scratch("hooks");
    let file = dir.join("messy.grail");
    let text = std::fs::read_to_string(root().join("policies/guardrails/merge.grail")).expect("a policy");
    std::fs::write(&file, text.replacen("\n", "\n\n\n", 1).replace("  ", "    ")).expect("write");
    let out = common::run_in(root(), &["fmt", "--check", file.to_str().expect("UTF-8")]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_dockerfile_builds_a_static_binary_on_an_empty_base() {
    let text = std::fs::read_to_string(root().join("Dockerfile")).expect("the Dockerfile");
    let stages: Vec<&str> = text.lines().filter(|l| l.starts_with("FROM ")).collect();
    assert_eq!(stages.len(), 2, "{stages:?}");
    assert!(stages[0].contains("-alpine"), "musl, so the binary is static: {}", stages[0]);
    assert_eq!(stages[1], "FROM scratch");
    assert!(text.contains("--locked --bin grail"));
    let rust_version = std::fs::read_to_string(root().join("Cargo.toml"))
        .expect("Cargo.toml")
        .lines()
        .find_map(|l| l.strip_prefix("rust-version = ").map(|v| v.trim_matches('"').to_string()))
        .expect("a rust-version");
    assert!(stages[0].contains(&format!("rust:{rust_version}")), "the image's Rust is the MSRV: {}", stages[0]);
}

/// The example organisation's layers, as the action's `layers` input takes them.
const ORG_LAYERS: &str =
    "security=examples/org/security.yaml\noperator=examples/org/operator.yaml\nrepo=examples/org/repo.yaml\n";
