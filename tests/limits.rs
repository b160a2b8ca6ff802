//! Hostile and broken documents through the command line: each limit with an
//! input just under it and one just over it; every refusal is a located
//! finding (exit 1) or, when the command itself cannot run, exit 2 with a
//! message; never a crash, never a pass.

use std::path::{Path, PathBuf};

use serde_json::Value;

const GOOD: &str = "examples/bindings/good.yaml";

// Only `run_in` of the shared helpers is used here.
#[allow(dead_code)]
mod common;
use common::Output;

fn grail(args: &[&str]) -> Output {
    common::run_in(Path::new(env!("CARGO_MANIFEST_DIR")), args)
}

/// The JSON report of checking one file.
fn report(path: &Path, extra: &[&str]) -> (i32, Value) {
    let path = path.to_str().expect("a UTF-8 path");
    let mut args = vec!["check", "--format", "json"];
    args.extend_from_slice(extra);
    args.push(path);
    let out = grail(&args);
    let value = serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {} {}", out.stdout, out.stderr));
    (out.code, value)
}

/// The findings of one rule, as (outcome, message, line, column).
fn of(report: &Value, rule: &str) -> Vec<(String, String, u64, u64)> {
    report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["rule"] == rule)
        .map(|f| {
            (
                f["outcome"].as_str().unwrap_or_default().to_string(),
                f["message"].as_str().unwrap_or_default().to_string(),
                f["line"].as_u64().unwrap_or_default(),
                f["column"].as_u64().unwrap_or_default(),
            )
        })
        .collect()
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("limits").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    dir
}

fn good() -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join(GOOD)).expect("the good example")
}

/// The good example padded with a trailing comment to exactly `size` bytes.
fn padded(size: usize) -> Vec<u8> {
    let mut bytes = good();
    bytes.extend_from_slice(b"#");
    assert!(bytes.len() < size);
    bytes.resize(size - 1, b'x');
    bytes.push(b'\n');
    bytes
}

#[test]
fn a_document_at_the_size_cap_is_read_and_one_byte_over_is_a_finding() {
    let dir = scratch("size");
    let at = dir.join("at.yaml");
    let over = dir.join("over.yaml");
    std::fs::write(&at, padded(4096)).expect("write");
    std::fs::write(&over, padded(4097)).expect("write");
    let (code, r) = report(&at, &["--max-document-size", "4KiB"]);
    assert_eq!((code, r["verdict"].as_str()), (0, Some("pass")), "{r}");
    let (code, r) = report(&over, &["--max-document-size", "4KiB"]);
    assert_eq!(code, 1);
    assert_eq!(
        of(&r, "schema.syntax"),
        [("fail".into(), "the document is 4097 bytes, over the 4 KiB limit on what is read".into(), 1, 1)]
    );
    assert_eq!(r["summary"]["pass"], 0, "nothing is judged of a document that was not read: {r}");
}

#[test]
fn the_default_size_cap_is_16_mib() {
    let dir = scratch("default-size");
    let over = dir.join("over.yaml");
    std::fs::write(&over, padded((16 << 20) + 1)).expect("write");
    let (code, r) = report(&over, &[]);
    assert_eq!(code, 1);
    assert_eq!(
        of(&r, "schema.syntax")[0].1,
        "the document is 16.0 MiB (16777217 bytes), over the 16 MiB limit on what is read"
    );
    let at = dir.join("at.yaml");
    std::fs::write(&at, padded(16 << 20)).expect("write");
    let (code, r) = report(&at, &[]);
    assert_eq!((code, r["verdict"].as_str()), (0, Some("pass")), "{r}");
}

#[test]
fn a_device_is_refused_without_reading_it() {
    if !Path::new("/dev/zero").exists() {
        return;
    }
    let out = grail(&["check", "--max-document-size", "1MiB", "/dev/zero"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("cannot read `/dev/zero`: it is a device, not a regular file"), "{}", out.stderr);
}

#[cfg(unix)]
#[test]
fn a_fifo_is_refused_without_opening_it() {
    let dir = scratch("fifo");
    let fifo = dir.join("binding.yaml");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        return; // no mkfifo here
    }
    // Opening a FIFO for reading waits for a writer: were it opened, this would never end.
    let out = grail(&["check", fifo.to_str().expect("a UTF-8 path")]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("it is a FIFO, not a regular file"), "{}", out.stderr);
}

#[test]
fn a_bad_size_is_a_usage_error() {
    for bad in ["16 parsecs", "99999999999999999999GiB", "", "17179869184GiB"] {
        let out = grail(&["check", "--max-document-size", bad, GOOD]);
        assert_eq!(out.code, 2, "{bad}: {}", out.stderr);
        assert!(out.stderr.contains("is not a size") || out.stderr.contains("too large"), "{}", out.stderr);
    }
    assert_eq!(grail(&["check", "--max-document-size", "-1", GOOD]).code, 2);
    assert_eq!(grail(&["check", "--max-document-size", "65536", GOOD]).code, 0);
}

#[cfg(unix)]
#[test]
fn symbolic_links_are_followed_and_loops_end() {
    use std::os::unix::fs::symlink;
    let dir = scratch("links");
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join(GOOD);
    let link = dir.join("link.yaml");
    symlink(&target, &link).expect("symlink");
    let (code, r) = report(&link, &[]);
    assert_eq!((code, r["verdict"].as_str()), (0, Some("pass")));

    let dangling = dir.join("dangling.yaml");
    symlink(dir.join("nowhere.yaml"), &dangling).expect("symlink");
    let out = grail(&["check", dangling.to_str().expect("utf-8")]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("cannot read") && out.stderr.contains("no such file or directory"), "{}", out.stderr);

    let looped = dir.join("loop.yaml");
    symlink(&looped, &looped).expect("symlink");
    let out = grail(&["check", looped.to_str().expect("utf-8")]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.starts_with("error: cannot read"), "{}", out.stderr);

    // A policy folder that links back to itself is read once, not for ever.
    let policy = dir.join("policy");
    std::fs::create_dir_all(&policy).expect("mkdir");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/policies/unknown/policy.grail"),
        policy.join("policy.grail"),
    )
    .expect("copy");
    symlink(&policy, policy.join("again")).expect("symlink");
    let out = grail(&["check", "--policy", policy.to_str().expect("utf-8"), "tests/inputs/evidence.yaml"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
}

#[test]
fn encodings_nul_bytes_and_byte_order_marks() {
    let dir = scratch("encodings");
    /// A file name, its bytes, and the syntax finding expected (message, line, column).
    type Case<'a> = (&'a str, &'a [u8], Option<(&'a str, u64, u64)>);
    let cases: [Case<'_>; 7] = [
        ("bom.yaml", b"\xef\xbb\xbfschema_version: \"1.0\"\n", None),
        ("bom.json", b"\xef\xbb\xbf{\"schema_version\": \"1.0\"}", None),
        (
            "invalid.yaml",
            b"schema_version: \"1.\xff0\"\n",
            Some(("the document is not valid UTF-8: byte 19 starts an invalid sequence", 1, 20)),
        ),
        (
            "truncated.yaml",
            b"schema_version: \"1.0\"\nname: \xe2\x82",
            Some(("the document is not valid UTF-8: byte 28 starts an invalid sequence", 2, 7)),
        ),
        (
            "utf16.yaml",
            b"\xff\xfes\x00c\x00",
            Some(("the document is UTF-16 (it starts with a UTF-16 byte order mark); grail reads UTF-8", 1, 1)),
        ),
        ("nul.yaml", b"schema_version: \"1.0\"\n\x00\n", Some(("character `U+0000` is not allowed in YAML", 2, 1))),
        ("nul.json", b"{\"schema_version\": \"1.0\"\x00}", Some(("unexpected token `\\0`", 1, 25))),
    ];
    for (name, bytes, expected) in cases {
        let path = dir.join(name);
        std::fs::write(&path, bytes).expect("write");
        let (code, r) = report(&path, &[]);
        let syntax = of(&r, "schema.syntax");
        match expected {
            None => {
                assert_eq!(syntax, [], "{name}: {r}");
                assert!(of(&r, "schema.version").is_empty(), "{name}: the version is read: {r}");
            }
            Some((message, line, column)) => {
                assert_eq!(code, 1, "{name}");
                assert_eq!(syntax, [("fail".into(), message.into(), line, column)], "{name}");
            }
        }
    }
    // The last valid sequence just before the end is fine; one byte short of it is not.
    let path = dir.join("euro.yaml");
    std::fs::write(&path, "schema_version: \"1.0\"\nname: €".as_bytes()).expect("write");
    let (_, r) = report(&path, &[]);
    assert_eq!(of(&r, "schema.syntax"), []);
}

#[test]
fn numbers_at_the_edge_of_range() {
    let dir = scratch("numbers");
    let doc = |n: &str| format!("schema_version: \"1.0\"\nverification_topology:\n  C3:\n    min_checkers: {n}\n");
    let cases = [
        ("max.yaml", doc("9223372036854775807"), None),
        // Integers of any size are exact: past 64 bits is still an integer, and below the minimum is below it.
        ("over.yaml", doc("9223372036854775808"), None),
        ("far-over.yaml", doc(&"9".repeat(60)), None),
        ("under.yaml", doc("-9223372036854775809"), Some(("schema.type", "`verification_topology.C3.min_checkers` must be an integer of at least 1, found `-9223372036854775809`"))),
        ("float-max.yaml", doc("1.5e308"), Some(("schema.type", "`verification_topology.C3.min_checkers` must be an integer, found the number `1.5e308`"))),
        ("float-over.yaml", doc("1e309"), Some(("schema.syntax", "number `1e309` is out of range"))),
        ("min.json", "{\"schema_version\": \"1.0\", \"verification_topology\": {\"C3\": {\"min_checkers\": -9223372036854775808}}}".to_string(), Some(("schema.type", "`verification_topology.C3.min_checkers` must be an integer of at least 1, found `-9223372036854775808`"))),
    ];
    for (name, text, expected) in cases {
        let path = dir.join(name);
        std::fs::write(&path, text).expect("write");
        let (_, r) = report(&path, &[]);
        match expected {
            None => {
                assert_eq!(of(&r, "schema.type"), [("pass".into(), String::new(), 0, 0)][..0], "{name}: {r}");
                assert_eq!(of(&r, "schema.syntax"), [], "{name}");
            }
            Some((rule, message)) => {
                let found = of(&r, rule);
                assert_eq!(found.len(), 1, "{name}: {r}");
                assert_eq!(found[0].0, "fail");
                assert_eq!(found[0].1, message, "{name}");
                assert_eq!(found[0].2, if name.ends_with(".json") { 1 } else { 4 }, "{name}");
            }
        }
    }
}

#[test]
fn yaml_tags_and_keys_that_are_not_strings() {
    let dir = scratch("yaml");
    let cases = [
        ("str-tag.yaml", "schema_version: !!str 1.0\n", None),
        (
            "custom-tag.yaml",
            "schema_version: !version \"1.0\"\n",
            Some(("schema.syntax", "unsupported YAML tag `!version`", 1, 17)),
        ),
        (
            "int-key.yaml",
            "schema_version: \"1.0\"\nmerge_policy: {3: auto}\n",
            Some(("schema.unknown_key", "unknown key `3` in `merge_policy`; did you mean `C3`?", 2, 16)),
        ),
        (
            "null-key.yaml",
            "schema_version: \"1.0\"\n~: x\n",
            Some(("schema.unknown_key", "unknown key `~` at the top level", 2, 1)),
        ),
        (
            "complex-key.yaml",
            "schema_version: \"1.0\"\n? [C3]\n: auto\n",
            Some(("schema.syntax", "a mapping key must be a scalar", 2, 3)),
        ),
        (
            "merge-key.yaml",
            "schema_version: \"1.0\"\nbase: &b {C3: auto}\n",
            Some(("schema.unknown_key", "unknown key `base` at the top level", 2, 1)),
        ),
    ];
    for (name, text, expected) in cases {
        let path = dir.join(name);
        std::fs::write(&path, text).expect("write");
        let (code, r) = report(&path, &[]);
        match expected {
            None => {
                assert_eq!(of(&r, "schema.syntax"), [], "{name}");
                assert_eq!(of(&r, "schema.version"), [], "{name}: the version is read and passes: {r}");
            }
            Some((rule, message, line, column)) => {
                assert_eq!(code, 1, "{name}");
                let found: Vec<_> = of(&r, rule).into_iter().filter(|f| f.0 == "fail").collect();
                assert_eq!(found, [("fail".into(), message.into(), line, column)], "{name}");
            }
        }
    }
}
