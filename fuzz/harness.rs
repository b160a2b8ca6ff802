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
/// picks the file name (and so the reader): `.yaml`, `.json`, `.md` (a
/// work item: a fenced record after a marker line) or `.jsonl` (JSON Lines:
/// receipts, acceptance records), by its value modulo 4.
pub fn check_shipped(data: &[u8]) {
    let path = match data.first().map(|b| b % 4) {
        Some(1) => "fuzz.json",
        Some(2) => "fuzz.md",
        Some(3) => "fuzz.jsonl",
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

/// The shipped library in a new database, compiled. The first call compiles
/// it from source and installs the result as the `grail` binary installs
/// its precompiled copy (`grail_engine::prebuilt`); every later database
/// reads it from there, so an input costs its own check, not a compilation.
pub fn shipped() -> (Database, PolicySet) {
    static PREBUILT: std::sync::Once = std::sync::Once::new();
    PREBUILT.call_once(|| {
        let blob = grail_engine::prebuilt::encode(grail_engine::shipped::FILES).expect("the shipped library compiles");
        grail_engine::prebuilt::install(Box::leak(blob.into_boxed_slice()));
    });
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

/// The binding every deployment of [`check_kinds`] is judged with: a proven
/// surface whose transcript is the attached file, the triggers a temporal
/// item names, and a topology whose slot names items and histories reuse.
pub const KINDS_BINDING: &str = r#"schema_version: "1.0"
executor_class: self-operated
merge_policy: {C1: auto}
escalation_routes: {verification-divergence: security-oncall}
verification_topology:
  C3:
    roles:
      - {name: author, role: generator}
      - {name: lint, role: checker, scanner_class: static-analysis}
      - {name: reviewer-a, role: checker, distinct_model_from: [author]}
isolation:
  surfaces:
    pool: {level: L2, component_reachable_hosts: [api.example.org], probe: probe.json}
    other: {level: L3, component_reachable_hosts: [], probe: probe.json}
triggers:
  surfaces:
    nightly-sweep: {class: temporal, scheduler_class: local-scheduler}
admission: {autonomous_classes: [C1, C2], autonomous_concurrency: 1, items_per_run: 1}
"#;

/// A transcript that proves [`KINDS_BINDING`]'s surface.
pub const KINDS_TRANSCRIPT: &str = r#"{"client_ready": true, "outer_context_networked": true, "assertions": {
  "egress_denied": {"host": "a.example.net,api.example.org", "transport_outcome": "tls-failed,connect-failed",
    "outer_fingerprint": "AA:01,BB:02", "inner_fingerprint": "-,-", "origin_bytes_read": "0,0"},
  "workspace_host_write_contained": {"canary_shapes": "plain,dotfile,git-relative", "host_post_absent": "0",
    "git_config_digest_pre": "absent", "git_config_digest_post": "absent"}}}"#;

/// A work item checked with [`KINDS_BINDING`].
pub const KINDS_ITEM: &str = "# item\n\n<!-- autonomy:signal:v1 -->\n```json\n{ \"schema_version\": \"1.0\", \
    \"signal.class\": \"temporal\", \"signal.transport\": \"poll\", \"signal.provenance\": \"system\", \
    \"signal.identity\": \"evt-1\", \"signal.raw_link\": \"file:///var/log/sweep.log\", \
    \"signal.traceparent\": \"00-dab5c21d6389b65c950f6b13f14af7e3-de1b63c53960913b-01\", \
    \"signal.source_surface\": \"nightly-sweep\" }\n```\n";

/// How [`check_kinds`] places its bytes in a deployment, one layout per document kind.
#[derive(Clone, Copy, Debug)]
pub enum Layout {
    /// The bytes are a probe transcript, attached to the binding's surfaces (two of them).
    Transcript,
    /// The bytes are a binding, with the transcript and a work item.
    Binding,
    /// The bytes are a work item (Markdown), checked with the binding.
    Item,
    /// The bytes are a YAML or JSON document of any other kind (a history,
    /// dispatch leases, ...), checked with the binding and an item.
    Other,
}

impl Layout {
    pub const ALL: [Layout; 4] = [Layout::Transcript, Layout::Binding, Layout::Item, Layout::Other];
}

/// Checks (and explains) a deployment in which `data` is one document of the
/// kind `layout` says, beside good documents of the other kinds: every kind
/// of the shipped library, attachments included, gets hostile bytes. Beyond
/// [`check_shipped`]'s properties: `explain` reaches the outcomes `check` does.
pub fn check_kinds(data: &[u8]) {
    let Some((first, rest)) = data.split_first() else { return };
    let layout = Layout::ALL[*first as usize % Layout::ALL.len()];
    let (db, set) = shipped();
    check_kinds_in(&db, set, layout, rest);
}

/// [`check_kinds`] with a given layout, in a given database.
pub fn check_kinds_in(db: &Database, set: PolicySet, layout: Layout, data: &[u8]) {
    use grail_engine::Deployment;
    use grail_engine::db::{AttachedFile, check_deployment, explain_deployment};
    let src = |path: &str, bytes: &[u8]| SourceText::from_bytes(db, path.to_string(), bytes.to_vec());
    let (binding, transcript, item) = match layout {
        Layout::Transcript => (src("binding.yaml", KINDS_BINDING.as_bytes()), src("probe.json", data), None),
        Layout::Binding => (
            src("binding.yaml", data),
            src("probe.json", KINDS_TRANSCRIPT.as_bytes()),
            Some(src("item.md", KINDS_ITEM.as_bytes())),
        ),
        Layout::Item => (
            src("binding.yaml", KINDS_BINDING.as_bytes()),
            src("probe.json", KINDS_TRANSCRIPT.as_bytes()),
            Some(src("item.md", data)),
        ),
        Layout::Other => (
            src("binding.yaml", KINDS_BINDING.as_bytes()),
            src("probe.json", KINDS_TRANSCRIPT.as_bytes()),
            Some(src("other.yaml", data)),
        ),
    };
    let mut documents = vec![binding];
    documents.extend(item);
    // The references the binding names, as the command line attaches them: each path to the one file.
    let attachments: Vec<AttachedFile> = grail_engine::db::document_references(db, set, binding)
        .iter()
        .map(|path| AttachedFile { from: binding, path: path.clone(), read: Ok(transcript) })
        .collect();
    let deployment = Deployment::new(db, documents, attachments);
    let report = check_deployment(db, set, deployment);
    assert!(!report.findings.is_empty(), "a check reports at least one outcome");
    let hostile = match layout {
        Layout::Transcript => Some(transcript),
        Layout::Binding => Some(binding),
        _ => None,
    };
    if let Some(doc) = hostile
        && report.documents.contains(&doc)
        && grail_engine::db::load_document(db, doc).is_err()
    {
        assert!(
            report.findings.iter().any(|f| f.outcome == Outcome::Fail),
            "an unreadable document is never a pass: {:?}",
            report.findings
        );
    }
    for f in &report.findings {
        if let Some((d, span)) = f.location {
            let doc = report.documents.get(d as usize).expect("a finding points into a document of the report");
            assert_span(doc.text(db), span.start, span.end, &f.message);
        }
        if f.outcome != Outcome::Pass && !f.message.is_empty() {
            assert_message(&f.message);
        }
    }
    // `explain` judges with the same code: the same outcomes for the same subjects.
    let explained = explain_deployment(db, set, deployment);
    let outcomes = |fs: &[grail_engine::Finding]| {
        let mut v: Vec<(String, String, Outcome)> =
            fs.iter().map(|f| (f.rule.clone(), f.subject.clone(), f.outcome)).collect();
        v.sort();
        v
    };
    assert_eq!(
        outcomes(&report.findings),
        outcomes(&explained.explanation.findings),
        "explain reaches other outcomes than check"
    );
}
