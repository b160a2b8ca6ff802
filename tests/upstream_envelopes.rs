//! Agreement with upstream's envelope checker (`check-signal-envelope.mjs`),
//! measured on the envelope cases of `tests/data/upstream/envelopes/`: each
//! case folder holds the targets, the bindings, and `case.json`, what the
//! checker said when run on exactly those files (its arguments, exit status
//! and output lines; see the README there).
//!
//! Per case: `grail check --envelopes` with the case's arguments, run in the
//! case folder as the checker was, compared with the checker's answer: the
//! exit status, and the defects named in both directions (every finding
//! line's rule, by the message map of docs/upstream.md, is a FAIL or
//! UNKNOWN of that rule about that file; every grail FAIL or UNKNOWN is
//! such a line). A case where grail differs on purpose is listed in
//! `envelope-agreement.toml` with the divergence of docs/upstream.md it
//! shows; the test fails when a listed case agrees (so the list stays
//! true). The table prints with `cargo test --test upstream_envelopes -- --nocapture`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

#[allow(dead_code, reason = "these tests read the message maps only")]
mod common;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/upstream")
}

/// The envelope message map of docs/upstream.md: the text a message holds,
/// and the rules that report it.
fn message_map() -> Vec<(String, Vec<String>)> {
    common::message_table("Envelope messages and the rules that report them")
}

/// A case's defects as upstream named them: (file, the rules of its
/// message), the file empty for the run as a whole ("nothing was verified").
type Named = BTreeSet<(String, Vec<String>)>;

struct Outcome {
    case: String,
    exit: (i64, i32),
    missing: Vec<(String, Vec<String>)>,
    extra: Vec<(String, String)>,
    unmapped: Vec<String>,
}

impl Outcome {
    fn agrees(&self) -> bool {
        self.exit.0 == i64::from(self.exit.1)
            && self.missing.is_empty()
            && self.extra.is_empty()
            && self.unmapped.is_empty()
    }
}

fn run_case(dir: &Path, map: &[(String, Vec<String>)]) -> Outcome {
    let case: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("case.json")).expect("case.json")).expect("JSON");
    let name = dir.file_name().unwrap().to_string_lossy().to_string();
    // An empty folder is not kept by git: the case that needs one makes it.
    for arg in case["args"].as_array().expect("args") {
        let target = dir.join(arg.as_str().unwrap_or(""));
        if name.contains("empty-folder") && target.extension().is_none() {
            std::fs::create_dir_all(&target).expect("the empty folder");
        }
    }
    let mut upstream = Named::new();
    let mut unmapped = Vec::new();
    for line in case["stderr"].as_array().expect("stderr").iter().filter_map(Value::as_str) {
        let Some(body) = line.strip_prefix("- ") else { continue };
        let (file, message) = match body.split_once(": ") {
            Some((file, message)) if !body.starts_with("no signal envelopes") => (file.to_string(), message),
            _ => (String::new(), body),
        };
        match map.iter().filter(|(text, _)| message.contains(text.as_str())).max_by_key(|(text, _)| text.len()) {
            Some((_, rules)) => {
                upstream.insert((file, rules.clone()));
            }
            None => unmapped.push(message.to_string()),
        }
    }
    let args: Vec<&str> = case["args"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    let out = Command::new(env!("CARGO_BIN_EXE_grail"))
        .arg("check")
        .args(&args)
        .args(["--envelopes", "--format", "json"])
        .current_dir(dir)
        .output()
        .expect("grail runs");
    let report: Option<Value> = serde_json::from_slice(&out.stdout).ok();
    let mut grail: BTreeSet<(String, String)> = BTreeSet::new();
    for f in report.as_ref().and_then(|r| r["findings"].as_array()).into_iter().flatten() {
        if matches!(f["outcome"].as_str(), Some("fail" | "unknown")) {
            let rule = f["rule"].as_str().unwrap_or("").to_string();
            // The kind's `empty` finding is about the run, not a file.
            let file =
                if f["subject"] == "deployment" { String::new() } else { f["file"].as_str().unwrap_or("").to_string() };
            grail.insert((file, rule));
        }
    }
    let missing = upstream
        .iter()
        .filter(|(file, rules)| !grail.iter().any(|(f, r)| f == file && rules.contains(r)))
        .cloned()
        .collect();
    let extra = grail
        .iter()
        .filter(|(file, rule)| !upstream.iter().any(|(f, rules)| f == file && rules.contains(rule)))
        .cloned()
        .collect();
    Outcome {
        case: name,
        exit: (case["exit"].as_i64().unwrap_or(-1), out.status.code().unwrap_or(-1)),
        missing,
        extra,
        unmapped,
    }
}

/// The cases that differ on purpose: case name -> the divergence's title.
fn divergences() -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(root().join("envelope-agreement.toml")).expect("envelope-agreement.toml");
    let table: toml::Table = text.parse().expect("TOML");
    table
        .get("divergences")
        .and_then(|d| d.as_table())
        .map(|d| d.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_string())).collect())
        .unwrap_or_default()
}

#[test]
fn grail_agrees_with_the_envelope_checker_on_every_case() {
    let map = message_map();
    let listed = divergences();
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/upstream.md")).unwrap();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root().join("envelopes"))
        .expect("the cases")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("case.json").exists())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 100, "the envelope cases are there ({} found)", dirs.len());
    let mut problems = Vec::new();
    let (mut agree, mut differ) = (0, 0);
    for dir in &dirs {
        let o = run_case(dir, &map);
        let why = listed.get(&o.case);
        match (o.agrees(), why) {
            (true, None) => agree += 1,
            (false, Some(title)) => {
                differ += 1;
                if !doc.contains(&format!("**{title}**")) {
                    problems.push(format!("{}: divergence `{title}` is not in docs/upstream.md", o.case));
                }
                if o.exit.0 != i64::from(o.exit.1) && o.exit.0 == 0 && o.exit.1 != 1 {
                    problems.push(format!("{}: upstream accepts, grail exits {}", o.case, o.exit.1));
                }
            }
            (true, Some(_)) => {
                problems.push(format!("{}: agrees now; remove it from envelope-agreement.toml", o.case))
            }
            (false, None) => problems.push(format!(
                "{}: exit upstream {} grail {}; upstream names, grail does not: {:?}; grail names, upstream does not: {:?}; no message map row: {:?}",
                o.case, o.exit.0, o.exit.1, o.missing, o.extra, o.unmapped
            )),
        }
    }
    println!("envelope cases: {} ; agree {agree} ; differ on purpose {differ}", dirs.len());
    for name in listed.keys() {
        if !dirs.iter().any(|d| d.ends_with(name)) {
            problems.push(format!("{name}: listed in envelope-agreement.toml, but no such case"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_envelope_message_map_names_rules_of_the_library() {
    let library = common::library_text();
    for (text, rules) in message_map() {
        assert!(!rules.is_empty(), "the row `{text}` names no rule");
        for rule in rules {
            assert!(
                library.contains(&format!("rule {rule}\n")) || library.contains(&format!("rule {rule} ")),
                "the row `{text}` names `{rule}`, which the library does not declare"
            );
        }
    }
}

/// Upstream's own envelope case (its test of the setup slice: an autonomy
/// binding and the one envelope it must accept), run as the test runs the
/// checker: it passes.
#[test]
fn upstreams_own_envelope_case_passes() {
    let dir = root().join("envelopes/setup-slice-test");
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).expect("expected.json")).unwrap();
    assert_eq!(expected["exit"], 0);
    let out = Command::new(env!("CARGO_BIN_EXE_grail"))
        .args(["check", "envelope.md", "--binding", "binding.json"])
        .current_dir(&dir)
        .output()
        .expect("grail runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
