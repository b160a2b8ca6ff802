//! `--format junit` and `--format github`, read back by independent readers
//! (the JUnit schema of Jenkins' xUnit plugin through Python's `xmlschema`;
//! the runner's escaping rules for workflow commands), and the inputs `-`
//! (standard input) and folders.

mod common;

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

use common::{ORG_LAYERS, grail, run_in};
use serde_json::Value;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `grail check --format json` at a fixed time of the check (nine days after
/// the example organisation's probes were captured), so that two reports of
/// one deployment are equal.
fn json(args: &[&str]) -> Value {
    let mut all = vec!["check", "--format", "json", "--now", "2026-08-20T00:00:00Z"];
    all.extend_from_slice(args);
    let out = run_in(root(), &all);
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", out.stdout))
}

/// Validates XML against tests/data/junit-10.xsd with Python's `xmlschema`:
/// `Ok` when valid, `Err` with the reader's complaint.
fn validate_junit(xml: &str) -> Result<(), String> {
    let mut child = Command::new("python3")
        .args([
            "-c",
            "import sys, xmlschema\nschema = xmlschema.XMLSchema(sys.argv[1])\nerrors = [str(e) for e in schema.iter_errors(sys.stdin.buffer)]\nprint('\\n'.join(errors))\nsys.exit(1 if errors else 0)",
        ])
        .arg(root().join("tests/data/junit-10.xsd"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("this test needs python3 with xmlschema: run scripts/test, which installs it");
    child.stdin.take().expect("stdin").write_all(xml.as_bytes()).expect("write the XML");
    let out = child.wait_with_output().expect("python3 runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("ModuleNotFoundError"),
        "this test needs Python's xmlschema: run scripts/test, which installs it\n{stderr}"
    );
    if out.status.success() { Ok(()) } else { Err(format!("{}{stderr}", String::from_utf8_lossy(&out.stdout))) }
}

#[test]
fn junit_validates_against_the_schema_and_the_schema_can_refuse() {
    for args in [
        &["check", "--format", "junit", "examples/bindings/identical-checkers.yaml"][..],
        &["check", "--format", "junit", "--each", "examples/bindings/good.yaml", "examples/bindings/broken.yaml"],
        &["check", "--format", "junit", "tests/inputs/garbage.bin"],
        // An UNKNOWN, failed and allowed.
        &["check", "--format", "junit", "--policy", "tests/policies/stated-unknown", "tests/inputs/no-evidence.yaml"],
        &[
            "check",
            "--format",
            "junit",
            "--allow-unknown",
            "--policy",
            "tests/policies/stated-unknown",
            "tests/inputs/no-evidence.yaml",
        ],
        &[
            "check",
            "--format",
            "junit",
            "examples/org/security.yaml",
            "examples/org/operator.yaml",
            "examples/org/repo.yaml",
        ],
    ] {
        let out = run_in(root(), args);
        assert!(out.code == 0 || out.code == 1, "{args:?}: {}", out.stderr);
        if let Err(e) = validate_junit(&out.stdout) {
            panic!("{args:?}: not valid JUnit XML: {e}\n{}", out.stdout);
        }
    }
    // The reader is not a rubber stamp: a test case without its name is refused.
    let out = run_in(root(), &["check", "--format", "junit", "examples/bindings/good.yaml"]);
    let broken = out.stdout.replacen("<testcase name=", "<testcase nom=", 1);
    assert!(validate_junit(&broken).is_err());
}

#[test]
fn junit_has_a_case_per_rule_and_subject_as_the_json_report_counts_them() {
    let file = "examples/bindings/identical-checkers.yaml";
    let out = run_in(root(), &["check", "--format", "junit", file]);
    let report = json(&[file]);
    let summary = &report["summary"];
    let count = |key: &str| summary[key].as_u64().expect("a count") as usize;
    let total = count("pass") + count("fail") + count("unknown") + count("not_applicable");
    assert_eq!(out.stdout.matches("<testcase ").count(), total);
    assert_eq!(out.stdout.matches("<failure type=\"FAIL\"").count(), count("fail"));
    // An UNKNOWN fails the check, so it is a failure too (skipped only when allowed: tests/unknown.rs).
    assert_eq!(out.stdout.matches("<failure type=\"UNKNOWN\"").count(), count("unknown"));
    assert_eq!(out.stdout.matches("<skipped type=\"UNKNOWN\"").count(), 0);
    assert_eq!(out.stdout.matches("<skipped type=\"NOT APPLICABLE\"").count(), count("not_applicable"));
    assert!(out.stdout.contains(&format!("failures=\"{}\"", count("fail") + count("unknown"))));
    assert_eq!(out.code, 1);
    insta::assert_snapshot!(
        out.stdout.lines().filter(|l| l.contains("topology.checker_count")).collect::<Vec<_>>().join("\n")
    );
}

/// A workflow command as the runner reads it: its name, its properties, its message.
type WorkflowCommand = (String, Vec<(String, String)>, String);

/// Reads workflow commands back as the runner does: `::NAME k=v,k=v::message`,
/// with `%25`, `%0D`, `%0A` (and in properties `%3A`, `%2C`) unescaped.
fn read_commands(text: &str) -> Vec<WorkflowCommand> {
    let unescape = |s: &str| {
        s.replace("%0D", "\r").replace("%0A", "\n").replace("%3A", ":").replace("%2C", ",").replace("%25", "%")
    };
    text.lines()
        .filter_map(|l| l.strip_prefix("::"))
        .map(|l| {
            let (head, message) = l.split_once("::").expect("a command ends its properties with `::`");
            let (name, props) = head.split_once(' ').unwrap_or((head, ""));
            let props = props
                .split(',')
                .filter(|p| !p.is_empty())
                .map(|p| {
                    let (k, v) = p.split_once('=').expect("key=value");
                    (k.to_string(), unescape(v))
                })
                .collect();
            (name.to_string(), props, unescape(message))
        })
        .collect()
}

#[test]
fn github_annotations_say_what_the_json_report_says() {
    let file = "examples/bindings/identical-checkers.yaml";
    let out = run_in(root(), &["check", "--format", "github", file]);
    assert_eq!(out.code, 1);
    let commands = read_commands(&out.stdout);
    let report = json(&[file]);
    let listed: Vec<&Value> = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["outcome"] == "fail" || f["outcome"] == "unknown")
        .collect();
    assert_eq!(commands.len(), listed.len());
    assert!(!commands.is_empty());
    for ((name, props, message), f) in commands.iter().zip(&listed) {
        let prop = |k: &str| props.iter().find(|(key, _)| key == k).map(|(_, v)| v.clone());
        // FAIL and UNKNOWN both fail the check: both are errors (an allowed UNKNOWN a warning: tests/unknown.rs).
        assert_eq!(name, "error", "{f}");
        assert_eq!(prop("file").as_deref(), f["file"].as_str());
        assert_eq!(prop("line"), f["line"].as_u64().map(|n| n.to_string()));
        assert_eq!(prop("col"), f["column"].as_u64().map(|n| n.to_string()));
        let title = prop("title").expect("a title");
        assert!(title.ends_with(f["rule"].as_str().expect("a rule")), "{title}");
        assert!(message.contains(f["message"].as_str().expect("a message")), "{message}");
    }
    let last = out.stdout.lines().last().expect("a closing line");
    assert!(last.starts_with(&format!("{file}: ")), "{last}");
    insta::assert_snapshot!(out.stdout);
}

#[test]
fn standard_input_is_the_document_dash() {
    let text = std::fs::read(root().join("examples/bindings/identical-checkers.yaml")).expect("the example");
    let mut child = Command::new(env!("CARGO_BIN_EXE_grail"))
        .args(["check", "--format", "json", "-"])
        .current_dir(root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("grail runs");
    child.stdin.take().expect("stdin").write_all(&text).expect("write");
    let out = child.wait_with_output().expect("grail ends");
    assert_eq!(out.status.code(), Some(1));
    let piped: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let named = json(&["examples/bindings/identical-checkers.yaml"]);
    assert_eq!(piped["summary"], named["summary"]);
    assert_eq!(piped["findings"][0]["file"], "-");
    assert_eq!(piped["findings"][0]["line"], named["findings"][0]["line"]);
}

#[test]
fn a_folder_stands_for_the_documents_directly_in_it() {
    // examples/org: autonomy.yaml, leases.yaml, operator.yaml, repo.yaml and security.yaml (probes/, items/ and history/ are folders).
    let layers = ORG_LAYERS;
    let folder = json(&[&layers[..], &["examples/org"]].concat());
    let named = json(
        &[
            &layers[..],
            &[
                "examples/org/autonomy.yaml",
                "examples/org/leases.yaml",
                "examples/org/operator.yaml",
                "examples/org/repo.yaml",
                "examples/org/security.yaml",
            ],
        ]
        .concat(),
    );
    assert_eq!(folder, named);
    assert_eq!(folder["verdict"], "unknown");
    // Unbound, its three layered documents are read as none: the folder grants no trust.
    let unbound = json(&["examples/org"]);
    assert_eq!(unbound["verdict"], "fail");
    assert!(unbound["findings"].as_array().expect("findings").iter().any(|f| f["rule"] == "layer.order"));
}

#[test]
fn a_folder_leaves_out_the_files_its_documents_attach() {
    // A policy whose documents attach their transcripts by `ref` (tests/policies/attach).
    let dir = std::env::temp_dir().join(format!("grail-folder-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a folder");
    let sheet = "surfaces:\n  a: {probe: a.json}\n  b: {probe: b.json}\n";
    std::fs::write(dir.join("sheet.yaml"), sheet).expect("write");
    for probe in ["a.json", "b.json"] {
        std::fs::write(dir.join(probe), "{\"captured_at\": \"2026-08-01T00:00:00Z\", \"client_ready\": true}\n")
            .expect("write");
    }
    let d = dir.to_str().expect("a UTF-8 path");
    let policy = "tests/policies/attach";
    let folder = json(&["--policy", policy, d]);
    let alone = json(&["--policy", policy, &format!("{d}/sheet.yaml")]);
    assert_eq!(folder["summary"], alone["summary"], "{folder}");
    assert_eq!(folder["verdict"], "pass", "{folder}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_folder_without_documents_cannot_be_checked() {
    insta::assert_snapshot!(grail(&["check", "tests/nvim"]));
}
