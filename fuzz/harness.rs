//! The properties every fuzz target checks, shared by two drivers: the
//! cargo-fuzz targets in `fuzz/fuzz_targets/` (libFuzzer, nightly) and the
//! seeded mutation run in `tests/mutation.rs` (stable, in `cargo test` and
//! `.ci/run`). Each function takes arbitrary bytes and panics when grail
//! misbehaves on them; returning is a pass.
//!
//! What "misbehaves" means, for every input: no panic, no hang (the drivers
//! time each run), every reported span lies on character boundaries of the
//! text, every message follows STYLE.md's shape (not empty, no final period),
//! and an input that cannot be read is never a pass.

#![allow(dead_code)] // each driver uses the targets it runs

use grail_engine::db::{check_document, compile_policy};
use grail_engine::document::{self, Format, Limits, Node, NodeKind};
use grail_engine::{Database, Outcome, PolicySet, SourceText};

/// Parses `data` as a policy file, then lowers it alone.
pub fn parse_policy(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let parsed = grail_lang::parse(text);
    for e in &parsed.errors {
        assert_span(text, e.span.start, e.span.end, &e.message);
        assert_message(&e.message);
    }
    let lowered = grail_engine::lower::lower(&[&parsed.file]);
    for d in &lowered.diagnostics {
        assert_span(text, d.loc.span.start, d.loc.span.end, &d.message);
        assert_message(&d.message);
    }
}

/// Loads `data` as a JSON document.
pub fn load_json(data: &[u8]) {
    load(data, Format::Json);
}

/// Loads `data` as a YAML document.
pub fn load_yaml(data: &[u8]) {
    load(data, Format::Yaml);
}

fn load(data: &[u8], format: Format) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    match document::load(text, format, &Limits::default()) {
        Ok(node) => assert_node(text, &node),
        Err(e) => {
            assert_span(text, e.span.start, e.span.end, &e.message);
            assert_message(&e.message);
        }
    }
}

/// Checks `data` as a document against the shipped library. The first byte
/// picks the file name (and so the reader): `.yaml`, `.json` or `.md` (a
/// work item: a fenced record after a marker line), by its value modulo 3.
pub fn check_shipped(data: &[u8]) {
    let path = match data.first().map(|b| b % 3) {
        Some(1) => "fuzz.json",
        Some(2) => "fuzz.md",
        _ => "fuzz.yaml",
    };
    let data = data.get(1..).unwrap_or_default();
    // A database per input. One kept across inputs and edited (as an editor
    // would, `SourceText::set_bytes`) makes LeakSanitizer report about 330
    // bytes per edit from inside salsa: not the engine's to fix here, and not
    // what the command line does (a database per run).
    let (db, set) = shipped();
    check_shipped_in(&db, set, path, data);
}

/// The shipped library in a new database, compiled.
pub fn shipped() -> (Database, PolicySet) {
    let db = Database::default();
    let set = grail_engine::shipped::policy_set(&db);
    assert!(!compile_policy(&db, set).has_errors(), "the shipped library compiles");
    (db, set)
}

/// [`check_shipped`] with a new input in a given database (the stable driver
/// keeps one database, and its inputs, for the length of its run).
pub fn check_shipped_in(db: &Database, set: PolicySet, path: &str, data: &[u8]) {
    check_shipped_doc(db, set, SourceText::from_bytes(db, path.to_string(), data.to_vec()));
}

fn check_shipped_doc(db: &Database, set: PolicySet, doc: SourceText) {
    let path = doc.path(db).clone();
    let findings = check_document(db, set, doc);
    let text = doc.text(db);
    assert!(!findings.is_empty(), "a check reports at least one outcome");
    // A Markdown file is not read as YAML or JSON; its record is checked by its own rules.
    let unreadable = !path.ends_with(".md") && grail_engine::db::load_document(db, doc).is_err();
    if unreadable {
        assert!(
            findings.iter().any(|f| f.outcome == Outcome::Fail),
            "an unreadable document is never a pass: {findings:?}"
        );
    }
    for f in findings {
        if let Some((d, span)) = f.location {
            assert_eq!(d, 0, "one document, index 0");
            assert_span(text, span.start, span.end, &f.message);
        }
        if f.outcome != Outcome::Pass && !f.message.is_empty() {
            assert_message(&f.message);
        }
    }
}

#[track_caller]
fn assert_span(text: &str, start: usize, end: usize, message: &str) {
    assert!(start <= end && text.get(start..end).is_some(), "span {start}..{end} is not within the text: {message}");
}

#[track_caller]
fn assert_message(message: &str) {
    assert!(!message.trim().is_empty(), "an empty message");
    assert!(!message.ends_with('.'), "a message ends with a period: {message}");
}

fn assert_node(text: &str, node: &Node) {
    // An explicit stack: a deep tree must not overflow the checker's own stack.
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        assert_span(text, n.span.start, n.span.end, "a node");
        match &n.kind {
            NodeKind::List(items) => stack.extend(items),
            NodeKind::Map(entries) => {
                for e in entries {
                    assert_span(text, e.key_span.start, e.key_span.end, "a key");
                    stack.push(&e.value);
                }
            }
            _ => {}
        }
    }
}
