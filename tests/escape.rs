//! Inputs that try to escape: a file a `ref` field names out of the
//! document's folder, a symbolic link out of it, a FIFO, a file far too
//! large, one file named many times, attachments over their total cap (a
//! policy of its own, tests/policies/attach); a work item with two markers
//! (the shipped library). Each gives its located finding, and nothing else
//! fails.

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use common::grail;

/// A fresh folder under the system's temporary folder.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("grail-escape-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("temporary folder");
    dir
}

/// The policy of these checks: a sheet of surfaces, each naming its probe's
/// transcript by `ref` (tests/policies/attach).
const POLICY: &str = "tests/policies/attach";

const TRANSCRIPT: &str = r#"{"captured_at": "2026-08-11T09:00:00Z", "client_ready": true}"#;

fn binding(probe: &str) -> String {
    format!("surfaces:\n  pool: {{probe: {probe}}}\n")
}

/// The rules that did not pass, as `rule:outcome` (JSON report).
fn not_passing(dir: &Path, file: &str) -> Vec<String> {
    not_passing_under(POLICY, dir, file)
}

/// The rules of `policy` that did not pass, as `rule:outcome:message`.
fn not_passing_under(policy: &str, dir: &Path, file: &str) -> Vec<String> {
    let path = dir.join(file);
    let out = grail(&["check", "--policy", policy, "--format", "json", path.to_str().expect("utf-8 path")]);
    let stdout = out.split("--- stdout\n").nth(1).and_then(|s| s.split("--- stderr").next()).unwrap_or("");
    let json: serde_json::Value = serde_json::from_str(stdout).unwrap_or_else(|e| panic!("{e}: {out}"));
    let mut v: Vec<String> = json["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| f["outcome"] == "fail" || f["outcome"] == "unknown")
        .map(|f| {
            format!("{}:{}:{}", f["rule"].as_str().unwrap_or(""), f["outcome"].as_str().unwrap_or(""), f["message"])
        })
        .collect();
    v.sort();
    v
}

#[test]
fn a_readable_transcript_is_attached_and_read() {
    let dir = scratch("good");
    fs::write(dir.join("probe.json"), TRANSCRIPT).expect("write");
    fs::write(dir.join("binding.yaml"), binding("probe.json")).expect("write");
    assert_eq!(not_passing(&dir, "binding.yaml"), Vec::<String>::new());
}

#[test]
fn a_path_out_of_the_folder_is_probe_missing_and_nothing_else() {
    let dir = scratch("dotdot");
    fs::write(dir.join("binding.yaml"), binding("../../etc/passwd")).expect("write");
    let found = not_passing(&dir, "binding.yaml");
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(
        found[0].starts_with("probe.missing:unknown") && found[0].contains("leaves the document's folder"),
        "{found:#?}"
    );
}

#[cfg(unix)]
#[test]
fn a_symbolic_link_out_of_the_folder_is_probe_missing_and_nothing_else() {
    let outside = scratch("outside");
    fs::write(outside.join("probe.json"), TRANSCRIPT).expect("write");
    let dir = scratch("symlink");
    std::os::unix::fs::symlink(outside.join("probe.json"), dir.join("probe.json")).expect("symlink");
    fs::write(dir.join("binding.yaml"), binding("probe.json")).expect("write");
    let found = not_passing(&dir, "binding.yaml");
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(found[0].starts_with("probe.missing:unknown") && found[0].contains("symbolic link"), "{found:#?}");
}

#[test]
fn a_transcript_of_a_gigabyte_is_refused_before_it_is_read() {
    let dir = scratch("huge");
    let file = fs::File::create(dir.join("probe.json")).expect("create");
    file.set_len(1 << 30).expect("a sparse file of 1 GiB");
    fs::write(dir.join("binding.yaml"), binding("probe.json")).expect("write");
    let found = not_passing(&dir, "binding.yaml");
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(found[0].starts_with("probe.missing:unknown") && found[0].contains("bytes"), "{found:#?}");
}

#[test]
fn a_work_item_with_two_markers_is_envelope_marker_and_nothing_else() {
    let dir = scratch("markers");
    let record = "```json\n{\"signal.class\": \"channel-feed\"}\n```\n";
    let item = format!("# item\n<!-- autonomy:signal:v1 -->\n{record}\n<!-- autonomy:signal:v1 -->\n{record}");
    fs::write(dir.join("item.md"), item).expect("write");
    let found = not_passing_under("shipped", &dir, "item.md");
    // The marker finding; and, since no envelope could be read, `envelope.empty`.
    assert!(found.iter().any(|f| f.starts_with("envelope.marker:fail") && f.contains("2 times")), "{found:#?}");
    assert!(found.iter().all(|f| f.starts_with("envelope.marker:") || f.starts_with("envelope.empty:")), "{found:#?}");
}

#[cfg(unix)]
#[test]
fn a_fifo_named_as_a_transcript_is_probe_missing_without_being_opened() {
    let dir = scratch("fifo");
    let made = std::process::Command::new("mkfifo").arg(dir.join("probe.json")).status();
    if !made.is_ok_and(|s| s.success()) {
        return; // no mkfifo here
    }
    fs::write(dir.join("binding.yaml"), binding("probe.json")).expect("write");
    // Were the FIFO opened, the check would wait for a writer forever.
    let found = not_passing(&dir, "binding.yaml");
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(found[0].starts_with("probe.missing:unknown") && found[0].contains("a FIFO"), "{found:#?}");
}

/// A sheet of `n` surfaces, each naming the transcript `probe`.
fn surfaces(n: usize, probe: impl Fn(usize) -> String) -> String {
    let mut b = String::from("surfaces:\n");
    for i in 0..n {
        b.push_str(&format!("  pool-{i}: {{probe: {}}}\n", probe(i)));
    }
    b
}

#[test]
fn a_transcript_named_by_300_surfaces_is_read_and_judged_once() {
    let dir = scratch("many");
    // A transcript with one type error: read once, it is reported once, not once per surface.
    let broken = TRANSCRIPT.replace("\"client_ready\": true", "\"client_ready\": \"yes\"");
    fs::write(dir.join("probe.json"), broken).expect("write");
    fs::write(
        dir.join("binding.yaml"),
        surfaces(300, |i| if i % 2 == 0 { "probe.json".into() } else { "./probe.json".into() }),
    )
    .expect("write");
    let found = not_passing(&dir, "binding.yaml");
    let types: Vec<&String> = found.iter().filter(|f| f.starts_with("sheet.type:")).collect();
    assert_eq!(types.len(), 1, "{types:#?}");
    // Every surface reads the same (invalid) `client_ready`.
    assert_eq!(found.iter().filter(|f| f.starts_with("probe.client_ready:unknown")).count(), 300);
}

#[test]
fn the_attachments_of_one_check_are_capped_together() {
    let dir = scratch("total");
    // Four transcripts of about 1.5 KiB each (1530 to 1533 bytes), padded; a cap of 4700 bytes admits three.
    let padded = |i: usize| format!("{}{}", TRANSCRIPT, " ".repeat(1530 + i - TRANSCRIPT.len()));
    for i in 0..4 {
        fs::write(dir.join(format!("probe-{i}.json")), padded(i)).expect("write");
    }
    fs::write(dir.join("binding.yaml"), surfaces(4, |i| format!("probe-{i}.json"))).expect("write");
    let path = dir.join("binding.yaml");
    let out = grail(&[
        "check",
        "--policy",
        POLICY,
        "--format",
        "json",
        "--max-total-size",
        "4700",
        path.to_str().expect("utf-8"),
    ]);
    let stdout = out.split("--- stdout\n").nth(1).and_then(|s| s.split("--- stderr").next()).unwrap_or("");
    let json: serde_json::Value = serde_json::from_str(stdout).unwrap_or_else(|e| panic!("{e}: {out}"));
    let missing: Vec<String> = json["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| f["rule"] == "probe.missing" && f["outcome"] == "unknown")
        .map(|f| f["message"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(missing.len(), 1, "{missing:#?}");
    assert!(missing[0].contains("`--max-total-size`"), "{missing:#?}");
    // At the default cap all four are read.
    assert_eq!(not_passing(&dir, "binding.yaml"), Vec::<String>::new());
}
