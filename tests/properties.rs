//! Properties of checking, over bindings generated from the vocabulary of the
//! spec (sections 1-4), with proptest:
//! - the evaluator is deterministic: the same text, checked in two fresh
//!   databases, gives byte-identical JSON and SARIF reports;
//! - reordering the keys of any mapping changes no verdict: the multiset of
//!   (rule, outcome, subject) is the same.
//!
//! - trust comes from the invocation: in a deployment of a bound `security`
//!   layer and an unbound lower document, the lower document allows no
//!   admission answer that the security layer alone refuses, and swapping the
//!   order of the files changes no outcome and no answer.
//!
//! `PROPTEST_CASES` sets the number of cases (default 64 here).

#[path = "../src/excerpt.rs"]
#[allow(dead_code)]
mod excerpt;
#[path = "../src/outcome.rs"]
#[allow(dead_code)]
mod outcome;
#[path = "../src/render.rs"]
#[allow(dead_code)]
mod render;
#[path = "../src/sarif.rs"]
#[allow(dead_code)]
mod sarif;

use grail_engine::db::{LayerBinding, check_deployment, decide_deployment};
use grail_engine::layers::BoundBy;
use grail_engine::{Database, Deployment, Outcome, PolicySet, SourceText};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

const CLASSES: [&str; 6] = ["C1", "C2", "C3", "C4", "C5", "C9"];
const MERGE: [&str; 3] = ["human", "auto", "manual"];
const FORCE: [&str; 4] = ["blocking", "advisory", "not-required", "strict"];
const LEVELS: [&str; 4] = ["L1", "L2", "L3", "L4"];
const ROUTES: [&str; 7] = [
    "gate-failure",
    "verification-divergence",
    "admission-rejection",
    "demotion",
    "structural-plan-approval",
    "untrusted-provenance",
    "outage",
];
const CELLS: [&str; 4] = ["C2-auto-merge", "C3-auto-merge", "C3-ai-review-blocking", "C4-auto-merge"];
const ROLES: [&str; 5] = ["generator", "checker", "cross_vendor_checker", "ranker", "judge"];
const NAMES: [&str; 5] = ["author", "lint", "sast", "reviewer-a", "reviewer-b"];

fn pick(options: &'static [&'static str]) -> impl Strategy<Value = Value> {
    proptest::sample::select(options).prop_map(Value::from)
}

/// A map from some of `keys` to values of `value`.
fn map_of(keys: &'static [&'static str], value: impl Strategy<Value = Value>) -> impl Strategy<Value = Value> {
    proptest::collection::btree_map(proptest::sample::select(keys), value, 0..4)
        .prop_map(|m| Value::Object(m.into_iter().map(|(k, v)| (k.to_string(), v)).collect()))
}

fn names() -> impl Strategy<Value = Value> {
    proptest::sample::subsequence(NAMES.to_vec(), 0..3).prop_map(|v| json!(v))
}

fn slot() -> impl Strategy<Value = Value> {
    (
        proptest::sample::select(&NAMES[..]),
        pick(&ROLES),
        proptest::option::of(pick(&["static-analysis", "secrets"])),
        proptest::option::of(names()),
        proptest::option::of(names()),
        proptest::option::of(1i64..200_000),
        proptest::bool::weighted(0.05),
    )
        .prop_map(|(name, role, scanner, model, vendor, tokens, stray)| {
            let mut m = Map::new();
            m.insert("name".into(), name.into());
            m.insert("role".into(), role);
            let optional = [
                ("scanner_class", scanner),
                ("distinct_model_from", model),
                ("distinct_vendor_from", vendor),
                ("min_context_tokens", tokens.map(Value::from)),
            ];
            for (k, v) in optional {
                if let Some(v) = v {
                    m.insert(k.into(), v);
                }
            }
            if stray {
                m.insert("override_justification".into(), "because".into());
            }
            Value::Object(m)
        })
}

fn topology() -> impl Strategy<Value = Value> {
    (
        proptest::option::of(0i64..5),
        proptest::option::of(0i64..4),
        proptest::option::of(any::<bool>()),
        proptest::option::of(proptest::collection::vec(slot(), 0..6)),
    )
        .prop_map(|(min, models, cross, roles)| {
            let mut m = Map::new();
            let fields = [
                ("min_checkers", min.map(Value::from)),
                ("min_model_checkers", models.map(Value::from)),
                ("cross_vendor_required", cross.map(Value::from)),
                ("roles", roles.map(Value::from)),
            ];
            for (k, v) in fields {
                if let Some(v) = v {
                    m.insert(k.into(), v);
                }
            }
            Value::Object(m)
        })
}

/// One level of a surface: its substrate, and some of the optional keys.
fn level() -> impl Strategy<Value = Value> {
    (
        pick(&["container", "os-sandbox", "vm-microvm", "vm"]),
        proptest::option::of(pick(&["none", "wsl2"])),
        proptest::option::of(proptest::sample::subsequence(vec!["registry.example.org", "api.example"], 0..3)),
        any::<bool>(),
    )
        .prop_map(|(class, interop, hosts, markers)| {
            let mut m = Map::new();
            m.insert("substrate".into(), json!("pool"));
            m.insert("substrate_class".into(), class);
            m.insert("probe_evidence".into(), json!("probes/pool.json"));
            if let Some(i) = interop {
                m.insert("host_interop".into(), i);
            }
            if let Some(h) = hosts {
                m.insert("component_reachable_hosts".into(), json!(h));
            }
            if markers {
                m.insert("runtime_markers".into(), json!({"pool": "pool"}));
            }
            Value::Object(m)
        })
}

/// A ratified (or not) promotion of a cell.
fn promotion() -> impl Strategy<Value = Value> {
    pick(&["promoted", "unpromoted", "earned"]).prop_map(|state| {
        json!({"state": state, "ratified_by_change": "change/1", "evidence_window": "2026-06-01..2026-06-28",
               "ratified_at": "2026-06-30T00:00:00Z"})
    })
}

/// An admission table: a row per class, some of them overriding the default.
fn admission() -> impl Strategy<Value = Value> {
    (
        proptest::collection::vec(pick(&["autonomous-eligible", "human-gated", "audited-rejection"]), 5),
        proptest::option::of(0i64..3),
    )
        .prop_map(|(dispositions, concurrency)| {
            let rules: Vec<Value> = CLASSES[..5]
                .iter()
                .zip(dispositions)
                .map(|(c, d)| json!({"signal_class": "*", "provenance": "*", "work_class": c, "disposition": d}))
                .collect();
            let mut m = Map::new();
            m.insert("classification".into(), json!({"tracker-vcs-event": {"autonomy:mechanical": "C2"}}));
            m.insert("rules".into(), json!(rules));
            m.insert("items_per_run".into(), json!(3));
            if let Some(c) = concurrency {
                m.insert("autonomous_concurrency".into(), json!(c));
            }
            Value::Object(m)
        })
}

/// A binding in upstream's shape: every key optional, values in and out of
/// the vocabulary.
fn binding() -> impl Strategy<Value = Value> {
    (
        (
            proptest::option::of(pick(&["1.0", "2.0"])),
            proptest::option::of(pick(&["self-operated", "vendor-hosted", "hosted"])),
            proptest::option::of(pick(&["human-gated-only", "autonomous-enabled"])),
            proptest::option::of(map_of(&["ci-pool", "secure-pool"], map_of(&LEVELS, level()))),
        ),
        (
            proptest::option::of(map_of(&CLASSES, pick(&MERGE))),
            proptest::option::of((
                proptest::option::of(map_of(&CLASSES, pick(&FORCE))),
                proptest::option::of(map_of(&CLASSES, pick(&FORCE))),
            )),
            proptest::option::of(map_of(&CLASSES, topology())),
            proptest::option::of(map_of(&CELLS, promotion())),
        ),
        (
            proptest::option::of(map_of(&ROUTES, pick(&["oncall", "security"]))),
            proptest::option::of(admission()),
            proptest::bool::weighted(0.1),
        ),
    )
        .prop_map(
            |(
                (version, executor, posture, isolation),
                (merge, vblock, topology, promotions),
                (routes, admission, unknown),
            )| {
                let vblock = vblock.map(|(deterministic, review)| {
                    let mut m = Map::new();
                    if let Some(d) = deterministic {
                        m.insert("deterministic".into(), d);
                    }
                    if let Some(r) = review {
                        m.insert("ai-review".into(), r);
                    }
                    Value::Object(m)
                });
                let mut m = Map::new();
                let fields = [
                    ("schema_version", version),
                    ("executor_class", executor),
                    ("dispatch_posture", posture),
                    ("isolation_bindings", isolation),
                    ("merge_policy", merge),
                    ("verification_blocking", vblock),
                    ("verification_topology", topology),
                    ("promotion_state", promotions),
                    ("escalation_routes", routes),
                    ("admission", admission),
                ];
                for (k, v) in fields {
                    if let Some(v) = v {
                        m.insert(k.into(), v);
                    }
                }
                if unknown {
                    m.insert("merge_polcy".into(), json!({"C1": "auto"}));
                }
                Value::Object(m)
            },
        )
}

/// Every mapping's keys in an order drawn from `seed` (lists keep theirs).
fn shuffled(v: &Value, seed: &mut u64) -> Value {
    match v {
        Value::Object(m) => {
            let mut entries: Vec<(&String, &Value)> = m.iter().collect();
            for i in (1..entries.len()).rev() {
                *seed ^= *seed << 13;
                *seed ^= *seed >> 7;
                *seed ^= *seed << 17;
                entries.swap(i, (*seed % (i as u64 + 1)) as usize);
            }
            Value::Object(entries.into_iter().map(|(k, v)| (k.clone(), shuffled(v, seed))).collect())
        }
        Value::Array(items) => Value::Array(items.iter().map(|i| shuffled(i, seed)).collect()),
        other => other.clone(),
    }
}

fn shipped(db: &Database) -> PolicySet {
    grail_engine::shipped::policy_set(db)
}

/// The JSON and SARIF reports of checking `text` as `path`, in a fresh database.
fn reports(path: &str, text: &str) -> (String, String) {
    let db = Database::default();
    let set = shipped(&db);
    let doc = SourceText::new(&db, path.into(), text.into(), None);
    let report = check_deployment(&db, set, Deployment::new(&db, vec![doc], Vec::new()));
    let (policy, docs) = (render::Texts::policy(&db, set), render::Texts::sources(&db, &report.documents));
    let added = render::Added {
        layers: serde_json::Value::Null,
        now: None,
        allowed: None,
        deployment: None,
        file: None,
        verdicts: None,
        passes: 0,
    };
    let json = render::json_text(&policy, &docs, &report.findings, added, false);
    let runs = [sarif::Deployment {
        documents: report.documents.clone(),
        findings: std::borrow::Cow::Borrowed(report.findings.as_slice()),
        allowed: None,
    }];
    let shipped = vec![true; set.files(&db).len()];
    let log = sarif::log(&db, sarif::Policy { set, shipped: &shipped }, &runs);
    (json, serde_json::to_string(&log).expect("JSON"))
}

/// The multiset of (rule, outcome, subject) of checking `text` as `path`.
fn verdicts(path: &str, text: &str) -> Vec<(String, Outcome, String)> {
    let db = Database::default();
    let set = shipped(&db);
    let doc = SourceText::new(&db, path.into(), text.into(), None);
    let mut v: Vec<_> = check_deployment(&db, set, Deployment::new(&db, vec![doc], Vec::new()))
        .findings
        .iter()
        .map(|f| (f.rule.clone(), f.outcome, f.subject.clone()))
        .collect();
    v.sort();
    v
}

/// What a deployment of `security` (bound by the flag) and, when given,
/// `lower` (unbound) decides: every outcome, and the admission answers allowed.
fn layered(security: &str, lower: Option<&str>, lower_first: bool) -> (Vec<(String, Outcome, String)>, Vec<String>) {
    let db = Database::default();
    let set = shipped(&db);
    let top = SourceText::new(&db, "security.json".into(), security.into(), None);
    let mut docs = vec![top];
    if let Some(lower) = lower {
        let low = SourceText::new(&db, "lower.json".into(), lower.into(), None);
        docs.insert(usize::from(!lower_first), low);
    }
    let bindings = vec![LayerBinding { document: top, layer: "security".into(), by: BoundBy::Flag }];
    let deployment = Deployment::builder(docs, Vec::new()).bindings(bindings).new(&db);
    let mut v: Vec<_> = check_deployment(&db, set, deployment)
        .findings
        .iter()
        .map(|f| (f.rule.clone(), f.outcome, f.subject.clone()))
        .collect();
    v.sort();
    let mut allowed: Vec<String> = decide_deployment(&db, set, deployment)
        .iter()
        .filter(|d| d.allowed)
        .map(|d| format!("{} {:?}", d.question, d.attributes))
        .collect();
    allowed.sort();
    (v, allowed)
}

fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(64);
    ProptestConfig { cases, ..ProptestConfig::default() }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn the_same_binding_gives_byte_identical_reports(b in binding(), yaml in any::<bool>()) {
        let path = if yaml { "binding.yaml" } else { "binding.json" };
        let text = serde_json::to_string_pretty(&b).expect("JSON");
        prop_assert_eq!(reports(path, &text), reports(path, &text));
    }

    #[test]
    fn reordering_keys_changes_no_verdict(b in binding(), seed in any::<u64>(), yaml in any::<bool>()) {
        let path = if yaml { "binding.yaml" } else { "binding.json" };
        let original = verdicts(path, &serde_json::to_string_pretty(&b).expect("JSON"));
        let mut seed = seed | 1;
        let reordered = verdicts(path, &serde_json::to_string_pretty(&shuffled(&b, &mut seed)).expect("JSON"));
        prop_assert_eq!(original, reordered);
    }

    #[test]
    fn an_unbound_document_or_the_file_order_never_grants_trust(top in binding(), lower in binding()) {
        let top = serde_json::to_string_pretty(&top).expect("JSON");
        let lower = serde_json::to_string_pretty(&lower).expect("JSON");
        let (_, alone) = layered(&top, None, false);
        let with_lower = layered(&top, Some(&lower), false);
        for answer in &with_lower.1 {
            prop_assert!(alone.contains(answer), "the unbound document allows {}", answer);
        }
        prop_assert_eq!(with_lower, layered(&top, Some(&lower), true));
    }
}

#[test]
fn the_generator_reaches_every_outcome() {
    // A property over inputs that never fail would prove little.
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..64 {
        let b = binding().new_tree(&mut runner).expect("a binding").current();
        for (_, outcome, _) in verdicts("b.json", &serde_json::to_string(&b).expect("JSON")) {
            seen.insert(outcome);
        }
    }
    assert_eq!(seen.len(), 4, "{seen:?}");
}
