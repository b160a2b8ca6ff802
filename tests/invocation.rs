//! The parameters of an invocation that upstream's checker takes as flags:
//! `--probe-evidence-root DIR`, `--egress-hosts H,H`, `--credential-roots
//! R,R` on `grail check` and `grail explain`, and the same keys in a
//! deployment of `grail.toml`. Rules read them with `param("name")`; the
//! root is also where `ref` fields resolve. A policy of the test's own
//! reports what it read.

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use common::{grail, grail_in, run_in};

const POLICY: &str = r#"
/// A capture: the hosts it reached, and the file it was written to.
document Capture as capture where kind == "capture" {
  on syntax rule capture.syntax
  on duplicate_key rule capture.duplicate_key
  on unknown_key rule capture.unknown_key
  on type rule capture.type
  kind: string
  hosts: list string default []
  file?: ref string
}

/// Every host is one the invocation configures.
rule capture.host_configured
  for h in capture.hosts
  require h in param("egress-hosts") else fail "`{h}` is not configured"

/// The capture's file can be read.
rule capture.file_readable
  require present(capture.file) else unknown "the file cannot be read: {reason(capture.file)}"

/// Some root is trusted.
rule capture.root_trusted
  require capture.kind == "capture" and count(param("credential-roots")) >= 1 else fail "no trusted root"

/// The root the invocation names, shown.
rule capture.root_named
  for r in param("probe-evidence-root")
  require r == capture.kind else fail "root `{r}`"
"#;

/// A fresh folder with the policy (`policy/`), the capture (`docs/capture.json`,
/// naming `file`) and a root folder (`root/`) holding `probe.txt`.
fn scratch(name: &str, file: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("grail-invocation-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    for sub in ["policy", "docs", "root"] {
        fs::create_dir_all(dir.join(sub)).expect("temporary folder");
    }
    fs::write(dir.join("policy/capture.grail"), POLICY).expect("write");
    let capture = format!(r#"{{"kind": "capture", "hosts": ["probe.example.net"], "file": "{file}"}}"#);
    fs::write(dir.join("docs/capture.json"), capture).expect("write");
    fs::write(dir.join("root/probe.txt"), "captured\n").expect("write");
    dir
}

/// The exit status, and `rule outcome: message` of every finding that did not pass.
fn check(dir: &Path, command: &str, flags: &[&str]) -> (i32, Vec<String>) {
    let mut args = vec![command, "--format", "json"];
    if !flags.contains(&"--workspace") {
        args.extend(["--policy", "policy"]);
    }
    args.extend(flags.iter().filter(|f| **f != "--workspace"));
    if !flags.contains(&"--workspace") {
        args.push("docs/capture.json");
    }
    let out = run_in(dir, &args);
    let Ok(json) = serde_json::from_str::<serde_json::Value>(&out.stdout) else {
        return (out.code, vec![out.stderr]);
    };
    let mut found: Vec<String> = json["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| f["outcome"] != "pass" && f["outcome"] != "not_applicable")
        .map(|f| {
            format!(
                "{} {}: {}",
                f["rule"].as_str().unwrap_or(""),
                f["outcome"].as_str().unwrap_or(""),
                f["message"].as_str().unwrap_or("")
            )
        })
        .collect();
    found.sort();
    (out.code, found)
}

#[test]
fn without_the_flags_nothing_is_configured_and_refs_resolve_beside_the_document() {
    let dir = scratch("none", "probe.txt");
    let (code, found) = check(&dir, "check", &[]);
    assert_eq!(code, 1);
    assert_eq!(found.len(), 3, "{found:#?}");
    assert_eq!(
        found[0],
        "capture.file_readable unknown: the file cannot be read: `probe.txt` (cannot be read: no such file or directory (os error 2))"
    );
    assert_eq!(found[1], "capture.host_configured fail: `probe.example.net` is not configured");
    assert_eq!(found[2], "capture.root_trusted fail: no trusted root");
}

#[test]
fn egress_hosts_are_trimmed_lowered_and_lose_a_trailing_dot() {
    let dir = scratch("hosts", "probe.txt");
    let (_, found) = check(&dir, "check", &["--egress-hosts", " Probe.Example.NET. ,,other.example"]);
    assert!(!found.iter().any(|f| f.starts_with("capture.host_configured")), "{found:#?}");
    // Given with no entry: the configured set is empty, and nothing is in it.
    let (_, found) = check(&dir, "check", &["--egress-hosts", " , "]);
    assert!(found.iter().any(|f| f.starts_with("capture.host_configured fail")), "{found:#?}");
}

#[test]
fn credential_roots_without_an_entry_are_not_given() {
    let dir = scratch("roots", "probe.txt");
    let (_, found) = check(&dir, "check", &["--credential-roots", " /home/runner , "]);
    assert!(!found.iter().any(|f| f.starts_with("capture.root_trusted")), "{found:#?}");
    let (_, found) = check(&dir, "check", &["--credential-roots", " ,"]);
    assert!(found.contains(&"capture.root_trusted fail: no trusted root".to_string()), "{found:#?}");
}

#[test]
fn the_evidence_root_is_where_refs_resolve_and_a_parameter() {
    let dir = scratch("root", "probe.txt");
    let flags = ["--probe-evidence-root", "root", "--egress-hosts", "probe.example.net", "--credential-roots", "/r"];
    let (code, found) = check(&dir, "check", &flags);
    assert_eq!(found, ["capture.root_named fail: root `root`"], "exit {code}");
    // `explain` takes the same deployment.
    let (code, found) = check(&dir, "explain", &flags);
    assert_eq!((code, found), (1, vec!["capture.root_named fail: root `root`".to_string()]));
}

#[test]
fn the_evidence_root_refuses_escapes() {
    let dir = scratch("escape", "../docs/capture.json");
    let (_, found) = check(&dir, "check", &["--probe-evidence-root", "root"]);
    let readable: Vec<&String> = found.iter().filter(|f| f.starts_with("capture.file_readable")).collect();
    assert_eq!(readable.len(), 1, "{found:#?}");
    assert!(readable[0].ends_with("(the path leaves the evidence root `root`)"), "{found:#?}");

    let dir = scratch("absolute", "/etc/hostname");
    let (_, found) = check(&dir, "check", &["--probe-evidence-root", "root"]);
    assert!(found.iter().any(|f| f.contains("the path is absolute")), "{found:#?}");

    #[cfg(unix)]
    {
        let dir = scratch("link", "out.txt");
        fs::write(dir.join("docs/secret.txt"), "secret\n").expect("write");
        std::os::unix::fs::symlink(dir.join("docs/secret.txt"), dir.join("root/out.txt")).expect("link");
        let (_, found) = check(&dir, "check", &["--probe-evidence-root", "root"]);
        assert!(
            found
                .iter()
                .any(|f| f.ends_with("(the path leads out of the evidence root `root` through a symbolic link)")),
            "{found:#?}"
        );
    }
}

#[test]
fn an_evidence_root_that_is_not_a_folder_stops_the_check() {
    let dir = scratch("missing-root", "probe.txt");
    let (code, found) = check(&dir, "check", &["--probe-evidence-root", "nowhere"]);
    assert_eq!(code, 2);
    assert!(found[0].contains("`--probe-evidence-root nowhere`: `nowhere` does not exist"), "{found:#?}");
}

#[test]
fn a_deployment_of_the_workspace_file_gives_the_same_parameters() {
    let dir = scratch("workspace", "probe.txt");
    let toml = "[policy]\nfolders = [\"policy\"]\n\n[deployments.probes]\ndocuments = [\"docs/capture.json\"]\n\
                probe_evidence_root = \"root\"\negress_hosts = [\"Probe.Example.NET.\"]\ncredential_roots = [\"/r\", \" \"]\n";
    fs::write(dir.join("grail.toml"), toml).expect("write");
    let (code, found) = check(&dir, "check", &["--workspace"]);
    assert_eq!(found, ["capture.root_named fail: root `root`"], "exit {code}");
    // A flag wins over the key.
    let (_, found) = check(&dir, "check", &["--workspace", "--egress-hosts", "other.example"]);
    assert!(found.contains(&"capture.host_configured fail: `probe.example.net` is not configured".to_string()));
    // A root that is not there is an error located in the file.
    fs::write(dir.join("grail.toml"), toml.replace("\"root\"", "\"nowhere\"")).expect("write");
    let out = grail_in(&dir, &["check"]);
    assert!(out.starts_with("exit: 2\n"), "{out}");
    assert!(out.contains("`probe_evidence_root` `nowhere` of deployment `probes` does not exist"), "{out}");
}

#[test]
fn help_teaches_the_flags_with_an_example() {
    let help = grail(&["check", "--help"]);
    for flag in ["--probe-evidence-root <DIR>", "--egress-hosts <H,H>", "--credential-roots <R,R>"] {
        assert!(help.contains(flag), "{flag}: {help}");
    }
    assert!(help.contains("--credential-roots /home/runner"), "{help}");
}
