//! Decided absence at the command line (issue 36): an organisation's own
//! rule, beside the shipped library, written the natural way.

mod common;
use common::grail;

const ACME: [&str; 5] = ["check", "--policy", "shipped", "--policy", "tests/policies/acme"];

#[test]
fn a_c4_without_a_secret_scanner_fails_the_acme_rule() {
    // Its slots carry no `scanner_class: secret-scan`: each slot's is
    // absent or another one, so the `some` is false, decided.
    let out = grail(&[&ACME[..], &["tests/inputs/acme/c4-no-secret-scan.yaml"]].concat());
    assert!(out.starts_with("exit: 1"), "{out}");
    assert!(out.contains("acme.c4_secret_scanner"), "{out}");
    assert!(out.contains("C4 has no secret scanner among its slots"), "{out}");
    assert!(!out.contains("could not be established"), "{out}");
    insta::assert_snapshot!(out);
}

#[test]
fn a_c4_with_a_secret_scanner_is_silent() {
    // The twin, one token apart: `sast` is a `secret-scan` scanner.
    let out = grail(&[&ACME[..], &["tests/inputs/acme/c4-secret-scan.yaml"]].concat());
    assert!(out.starts_with("exit: 0"), "{out}");
    assert!(!out.contains("acme.c4_secret_scanner"), "{out}");
    let json = grail(&[&ACME[..], &["--format", "json", "tests/inputs/acme/c4-secret-scan.yaml"]].concat());
    let body = json.split("--- stdout\n").nth(1).and_then(|s| s.split("--- stderr").next()).unwrap_or("");
    let report: serde_json::Value = serde_json::from_str(body).expect("a JSON report");
    let acme: Vec<&serde_json::Value> = report["findings"]
        .as_array()
        .map(|f| f.iter().filter(|f| f["rule"] == "acme.c4_secret_scanner").collect())
        .unwrap_or_default();
    assert!(acme.iter().all(|f| f["outcome"] == "pass"), "{json}");
    assert_eq!(report["summary"]["unknown"], 0, "{json}");
}
