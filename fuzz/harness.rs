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

/// The files of the project's examples the layouts of [`check_kinds`] are
/// built from, by their path under `examples/`: a deployment of each
/// document kind of the shipped library, with the files it attaches.
const EXAMPLES: &[(&str, &str)] = &[
    ("org/security.yaml", include_str!("../examples/org/security.yaml")),
    ("org/autonomy.yaml", include_str!("../examples/org/autonomy.yaml")),
    ("org/leases.yaml", include_str!("../examples/org/leases.yaml")),
    ("org/operator.yaml", include_str!("../examples/org/operator.yaml")),
    ("org/repo.yaml", include_str!("../examples/org/repo.yaml")),
    ("org/probes/ci-pool-a-l2.json", include_str!("../examples/org/probes/ci-pool-a-l2.json")),
    ("org/probes/secure-pool-l3.json", include_str!("../examples/org/probes/secure-pool-l3.json")),
    ("org/items/tracker-issue-412.md", include_str!("../examples/org/items/tracker-issue-412.md")),
    ("org/items/nightly-sweep-2026-08-11.md", include_str!("../examples/org/items/nightly-sweep-2026-08-11.md")),
    ("org/items/split-retry-policy.md", include_str!("../examples/org/items/split-retry-policy.md")),
    ("org/history/step-002.yaml", include_str!("../examples/org/history/step-002.yaml")),
    ("recovery/state.yaml", include_str!("../examples/recovery/state.yaml")),
    ("recovery/step-002.yaml", include_str!("../examples/recovery/step-002.yaml")),
    ("recovery/plan.md", include_str!("../examples/recovery/plan.md")),
    (
        "recovery/.versions/plan.md.44327674dad35c4fa0bdf6acd25f317b9f3586a3c64bbb9d4410f676ba5d3f25",
        include_str!(
            "../examples/recovery/.versions/plan.md.44327674dad35c4fa0bdf6acd25f317b9f3586a3c64bbb9d4410f676ba5d3f25"
        ),
    ),
    ("scenarios/pack.yaml", include_str!("../examples/scenarios/pack.yaml")),
    ("scenarios/runs/clean-pass.yaml", include_str!("../examples/scenarios/runs/clean-pass.yaml")),
    (
        "scenarios/runs/evidence/sc-01-observer.txt",
        include_str!("../examples/scenarios/runs/evidence/sc-01-observer.txt"),
    ),
    ("scenarios/runs/evidence/sc-01-stdout.txt", include_str!("../examples/scenarios/runs/evidence/sc-01-stdout.txt")),
    ("harness/registry.yaml", include_str!("../examples/harness/registry.yaml")),
    ("harness/receipts.jsonl", include_str!("../examples/harness/receipts.jsonl")),
    ("harness/acceptance.jsonl", include_str!("../examples/harness/acceptance.jsonl")),
    ("harness/guard.yaml", include_str!("../examples/harness/guard.yaml")),
    ("harness/signoffs.yaml", include_str!("../examples/harness/signoffs.yaml")),
    ("harness/report-build.yaml", include_str!("../examples/harness/report-build.yaml")),
    ("harness/report-review.yaml", include_str!("../examples/harness/report-review.yaml")),
    ("harness/packages/A-7.md", include_str!("../examples/harness/packages/A-7.md")),
    ("harness/packages/A-9.md", include_str!("../examples/harness/packages/A-9.md")),
    ("harness/build/report.xml", include_str!("../examples/harness/build/report.xml")),
    ("evidence/promotion-evidence.json", include_str!("../examples/evidence/promotion-evidence.json")),
    ("bindings/good.yaml", include_str!("../examples/bindings/good.yaml")),
];

/// The security layers of the example organisation, with the documents checked beside them.
const ORG: &[(&str, Option<&str>)] = &[
    ("org/security.yaml", Some("security")),
    ("org/leases.yaml", Some("security")),
    ("org/operator.yaml", Some("operator")),
    ("org/repo.yaml", Some("repo")),
    ("org/autonomy.yaml", None),
    ("org/items/tracker-issue-412.md", None),
    ("org/items/nightly-sweep-2026-08-11.md", None),
    ("org/items/split-retry-policy.md", None),
    ("org/history/step-002.yaml", None),
];
const ORG_PARAMS: &[(&str, &str)] = &[("probe-evidence-root", "org/probes"), ("credential-roots", "/home/runner")];
const RECOVERY: &[(&str, Option<&str>)] = &[("recovery/state.yaml", None)];
const SCENARIOS: &[(&str, Option<&str>)] = &[("scenarios/pack.yaml", None), ("scenarios/runs/clean-pass.yaml", None)];
const HARNESS: &[(&str, Option<&str>)] = &[
    ("harness/registry.yaml", Some("harness")),
    ("harness/receipts.jsonl", Some("harness")),
    ("harness/acceptance.jsonl", Some("harness")),
    ("harness/guard.yaml", Some("harness")),
    ("harness/signoffs.yaml", Some("human")),
    ("harness/report-build.yaml", None),
    ("harness/report-review.yaml", None),
];
const HARNESS_GIVEN: &[(&str, &str)] = &[("/work/repo/build/report.xml", "harness/build/report.xml")];
const PROMOTION: &[(&str, Option<&str>)] = &[("bindings/good.yaml", None)];

/// How [`check_kinds`] places its bytes: one example deployment, in which
/// the file `hostile` (a document, or a file a document attaches) is the
/// fuzzed bytes, and the others are the example's own.
#[derive(Clone, Copy, Debug)]
pub struct Layout {
    /// What the bytes stand for: a document kind of the shipped library, or
    /// a file a `ref` field attaches.
    pub kind: &'static str,
    /// The file the bytes replace (a path under `examples/`).
    pub hostile: &'static str,
    /// The deployment's documents and the layer each is bound to (as `--layer` binds it).
    pub documents: &'static [(&'static str, Option<&'static str>)],
    /// The invocation's parameters (`--probe-evidence-root` ...): the
    /// evidence root is also where `ref` paths resolve.
    pub params: &'static [(&'static str, &'static str)],
    /// The files given under recorded paths (`--attach RECORDED=FILE`).
    pub given: &'static [(&'static str, &'static str)],
    /// The file given as `evidence` (`--evidence FILE`).
    pub evidence: Option<&'static str>,
}

impl Layout {
    const fn of(
        kind: &'static str,
        hostile: &'static str,
        documents: &'static [(&'static str, Option<&'static str>)],
    ) -> Layout {
        Layout { kind, hostile, documents, params: &[], given: &[], evidence: None }
    }

    const fn org(kind: &'static str, hostile: &'static str) -> Layout {
        Layout { params: ORG_PARAMS, ..Layout::of(kind, hostile, ORG) }
    }

    const fn harness(kind: &'static str, hostile: &'static str) -> Layout {
        Layout { given: HARNESS_GIVEN, ..Layout::of(kind, hostile, HARNESS) }
    }

    /// A layout per document kind of the shipped library (`document` in
    /// `policies/guardrails/*.grail`) and per kind of attached file; the
    /// first byte of a [`check_kinds`] input picks one (modulo their number).
    pub const ALL: [Layout; 19] = [
        Layout::org("probe transcript (attached)", "org/probes/ci-pool-a-l2.json"),
        Layout::org("Binding", "org/security.yaml"),
        Layout::org("Binding (operator layer)", "org/operator.yaml"),
        Layout::org("AutonomyBinding", "org/autonomy.yaml"),
        Layout::org("Envelope (signal envelope)", "org/items/tracker-issue-412.md"),
        Layout::org("Leases", "org/leases.yaml"),
        Layout::org("History", "org/history/step-002.yaml"),
        Layout::of("TaskState", "recovery/state.yaml", RECOVERY),
        Layout::of("History (attached)", "recovery/step-002.yaml", RECOVERY),
        Layout::of("Plan (attached)", "recovery/plan.md", RECOVERY),
        Layout::of("Pack", "scenarios/pack.yaml", SCENARIOS),
        Layout::of("Run", "scenarios/runs/clean-pass.yaml", SCENARIOS),
        Layout::harness("SubagentRegistry", "harness/registry.yaml"),
        Layout::harness("ToolReceipts", "harness/receipts.jsonl"),
        Layout::harness("AcceptanceEvents", "harness/acceptance.jsonl"),
        Layout::harness("HarnessGuard", "harness/guard.yaml"),
        Layout::harness("Signoffs", "harness/signoffs.yaml"),
        Layout::harness("AgentReport", "harness/report-build.yaml"),
        Layout {
            evidence: Some("evidence/promotion-evidence.json"),
            ..Layout::of("PromotionEvidence", "evidence/promotion-evidence.json", PROMOTION)
        },
    ];

    /// The example file the bytes replace: the layout's own seed.
    pub fn seed(&self) -> &'static str {
        example(self.hostile).expect("a layout's file is an example")
    }
}

fn example(path: &str) -> Option<&'static str> {
    EXAMPLES.iter().find(|(p, _)| *p == path).map(|(_, t)| *t)
}

/// `path` (as a `ref` field writes it) from the folder `dir`: `.` and `..`
/// taken away, as the command line's reader resolves it on disk.
fn joined(dir: &str, path: &str) -> String {
    let mut parts: Vec<&str> = dir.split('/').filter(|p| !p.is_empty()).collect();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    parts.join("/")
}

/// Checks (and explains) a deployment in which `data` is one file of the
/// kind the first byte picks ([`Layout::ALL`]), beside the example's other
/// files: every document kind of the shipped library, and every kind of
/// file a document attaches, gets hostile bytes. Beyond [`check_shipped`]'s
/// properties: `explain` reaches the outcomes `check` does.
pub fn check_kinds(data: &[u8]) {
    let Some((first, rest)) = data.split_first() else { return };
    let layout = Layout::ALL[*first as usize % Layout::ALL.len()];
    let (db, set) = shipped();
    check_kinds_in(&db, set, layout, rest);
}

/// [`check_kinds`] with a given layout, in a given database.
pub fn check_kinds_in(db: &Database, set: PolicySet, layout: Layout, data: &[u8]) {
    let Some((deployment, _)) = deployment(db, set, layout, data) else { return };
    check_deployment_properties(db, set, layout, deployment);
}

/// The syntax, type and unknown-key findings of a layout's own example, as
/// `rule: message` (none, for a layout that reads its file as its kind).
pub fn structural_findings(db: &Database, set: PolicySet, layout: Layout) -> Vec<String> {
    let Some((deployment, _)) = deployment(db, set, layout, layout.seed().as_bytes()) else {
        return vec!["the deployment holds two documents of a kind allowed once".into()];
    };
    let report = grail_engine::db::check_deployment(db, set, deployment);
    report
        .findings
        .iter()
        .filter(|f| f.outcome != Outcome::Pass)
        .filter(|f| [".syntax", ".type", ".unknown_key", ".duplicate_key"].iter().any(|k| f.rule.ends_with(k)))
        .map(|f| format!("{}: {}", f.rule, f.message))
        .collect()
}

/// The deployment of a layout with `data` as its file; `None` when it holds
/// two documents of a kind allowed once (a usage error, exit 2).
fn deployment(
    db: &Database,
    set: PolicySet,
    layout: Layout,
    data: &[u8],
) -> Option<(grail_engine::Deployment, Vec<SourceText>)> {
    use grail_engine::Deployment;
    use grail_engine::db::{AttachedFile, GivenFile, LayerBinding, NamedDocument};
    let mut made: Vec<(&str, SourceText)> = Vec::new();
    let mut file = |path: &str| -> Option<SourceText> {
        if let Some((_, doc)) = made.iter().find(|(p, _)| *p == path) {
            return Some(*doc);
        }
        let (path, bytes) = if path == layout.hostile {
            (layout.hostile, data)
        } else {
            let (p, t) = EXAMPLES.iter().find(|(p, _)| *p == path)?;
            (*p, t.as_bytes())
        };
        let doc = SourceText::from_bytes(db, path.to_string(), bytes.to_vec());
        made.push((path, doc));
        Some(doc)
    };
    let mut documents = Vec::new();
    let mut bindings = Vec::new();
    for (path, layer) in layout.documents {
        let doc = file(path).expect("a layout's documents are examples");
        documents.push(doc);
        if let Some(layer) = layer {
            bindings.push(LayerBinding {
                document: doc,
                layer: layer.to_string(),
                by: grail_engine::layers::BoundBy::Flag,
            });
        }
    }
    // The references each document names, as the command line attaches them:
    // under the evidence root when the invocation gives one, else beside the document.
    let root = layout.params.iter().find(|(n, _)| *n == "probe-evidence-root").map(|(_, v)| *v);
    let mut attachments = Vec::new();
    for doc in documents.clone() {
        let from = doc.path(db).clone();
        let dir = root.unwrap_or_else(|| from.rsplit_once('/').map_or("", |(d, _)| d));
        for path in grail_engine::db::document_references(db, set, doc) {
            let read = match grail_engine::check::path_leaves_folder(path) {
                Some(reason) => Err(reason.to_string()),
                None => file(&joined(dir, path)).ok_or_else(|| "cannot be read: no such file".to_string()),
            };
            attachments.push(AttachedFile { from: doc, path: path.clone(), read });
        }
    }
    let given: Vec<GivenFile> = layout
        .given
        .iter()
        .map(|(recorded, path)| GivenFile { recorded: recorded.to_string(), read: file(path).ok_or_else(String::new) })
        .collect();
    let named: Vec<NamedDocument> = layout
        .evidence
        .and_then(&mut file)
        .map(|document| NamedDocument { name: "evidence".into(), document })
        .into_iter()
        .collect();
    let params = layout.params.iter().filter_map(|(n, v)| grail_engine::check::Param::from_flag(n, v)).collect();
    let deployment = Deployment::builder(documents, attachments)
        .bindings(bindings)
        .given(given)
        .named(named)
        .params(params)
        .now(Some(1_786_000_000_000_000_000))
        .new(db);
    if !grail_engine::db::crowded_deployment(db, set, deployment).is_empty() {
        return None;
    }
    let hostile = made.iter().filter(|(p, _)| *p == layout.hostile).map(|(_, d)| *d).collect();
    Some((deployment, hostile))
}

fn check_deployment_properties(db: &Database, set: PolicySet, layout: Layout, deployment: grail_engine::Deployment) {
    use grail_engine::db::{check_deployment, explain_deployment};
    let report = check_deployment(db, set, deployment);
    assert!(!report.findings.is_empty(), "a check reports at least one outcome");
    let hostile = report.documents.iter().find(|d| d.path(db) == layout.hostile).copied();
    if let Some(doc) = hostile
        && report.documents.contains(&doc)
        && !layout.hostile.ends_with(".md")
        && !layout.hostile.ends_with(".txt")
        && layout.evidence.is_none()
        && grail_engine::db::load_document(db, doc).is_err()
    {
        assert!(
            report.findings.iter().any(|f| matches!(f.outcome, Outcome::Fail | Outcome::Unknown)),
            "an unreadable document is never a pass ({}): {:?}",
            layout.kind,
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
        "explain reaches other outcomes than check ({})",
        layout.kind
    );
}
