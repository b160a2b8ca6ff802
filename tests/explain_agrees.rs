//! `explain`'s effective state is what `check` judges with: for every
//! generated deployment (one to three layers of an upstream-shaped binding,
//! each bound by the invocation, whose cells hold valid values, values of the
//! wrong type, `null`, or nothing), every value
//! `explain` shows as effective is the value `check`'s rules read at that
//! cell, or, when explain says it was demoted, a present value that `check`
//! failed a rule for. A refused value (a `null`, a wrong type) is never shown
//! in effect: rules read it as unknown, and so does the effective state.
//!
//! `PROPTEST_CASES` sets the number of cases (default 64 here).

use grail_engine::check::{Input, run};
use grail_engine::document::{self, Format, Limits};
use grail_engine::hir::Policy;
use grail_engine::layers::{Bound, BoundBy};
use grail_engine::value::{Val, ValKind};
use grail_engine::{Database, Outcome};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

const CLASSES: [&str; 5] = ["C1", "C2", "C3", "C4", "C5"];

/// A cell's value: valid, of the wrong type, `null`.
fn cell(valid: &'static [&'static str]) -> impl Strategy<Value = Value> {
    prop_oneof![
        4 => proptest::sample::select(valid).prop_map(Value::from),
        1 => Just(Value::Null),
        1 => Just(json!(7)),
        1 => Just(json!(["blocking"])),
    ]
}

fn int_cell() -> impl Strategy<Value = Value> {
    prop_oneof![4 => (0i64..5).prop_map(Value::from), 1 => Just(Value::Null), 1 => Just(json!("two"))]
}

fn by_class(value: impl Strategy<Value = Value>) -> impl Strategy<Value = Value> {
    proptest::collection::btree_map(proptest::sample::select(&CLASSES[..]), value, 0..4)
        .prop_map(|m| Value::Object(m.into_iter().map(|(k, v)| (k.to_string(), v)).collect()))
}

/// One layer of a binding in upstream's shape: some of its class-keyed cells
/// set. The security layer always binds some classes' merge policy, so that
/// explain has cells to show.
fn layer(name: &'static str) -> impl Strategy<Value = Value> {
    let topology = (int_cell(), int_cell(), cell(&["true", "false"])).prop_map(
        |(a, b, c)| json!({"min_checkers": a, "min_model_checkers": b, "cross_vendor_required": c == "true"}),
    );
    let forces: &'static [&'static str] = &["blocking", "advisory", "not-required"];
    let merge = by_class(cell(&["human", "auto"])).prop_filter("the security layer binds a merge policy", move |m| {
        name != "security" || m.as_object().is_some_and(|m| !m.is_empty())
    });
    (
        proptest::option::of(merge),
        proptest::option::of((by_class(cell(forces)), by_class(cell(forces)))),
        proptest::option::of(by_class(topology)),
        any::<bool>(),
    )
        .prop_map(move |(merge, vblock, topo, exec)| {
            let mut m = Map::new();
            m.insert("schema_version".into(), json!("1.0"));
            if name == "security" {
                m.insert("merge_policy".into(), merge.clone().unwrap_or_else(|| json!({"C1": "human"})));
                if exec {
                    m.insert("executor_class".into(), json!("self-operated"));
                }
            } else if let Some(merge) = merge {
                m.insert("merge_policy".into(), merge);
            }
            if let Some((deterministic, review)) = vblock {
                m.insert("verification_blocking".into(), json!({"deterministic": deterministic, "ai-review": review}));
            }
            if let Some(t) = topo {
                m.insert("verification_topology".into(), t);
            }
            Value::Object(m)
        })
}

/// One to three layers, each with the layer the invocation binds it to.
fn deployment() -> impl Strategy<Value = Vec<(&'static str, Value)>> {
    (layer("security"), proptest::option::of(layer("operator")), proptest::option::of(layer("repo"))).prop_map(
        |(s, o, r)| {
            let mut v = vec![("security", s)];
            v.extend(o.map(|o| ("operator", o)));
            v.extend(r.map(|r| ("repo", r)));
            v
        },
    )
}

/// The value at `column` (`merge_policy` or `verification_topology.min_checkers`) for `key` in a conformed root.
fn read(policy: &Policy, record: u32, root: &Val, column: &str, key: &str) -> Option<Val> {
    let (field, inner) = column.split_once('.').map_or((column, None), |(a, b)| (a, Some(b)));
    let ValKind::Record(_, fields) = &root.kind else { return None };
    let def = &policy.records[record as usize];
    let i = def.field(field)?;
    let ValKind::Map(entries) = &fields[i].kind else { return None };
    let (_, v) = entries.iter().find(|(k, _)| k.display(policy) == key)?;
    match inner {
        None => Some(v.clone()),
        Some(name) => {
            let grail_engine::hir::Ty::Map(_, vt) = &def.fields[i].ty else { return None };
            let grail_engine::hir::Ty::Record(r) = **vt else { return None };
            let ValKind::Record(_, inner_fields) = &v.kind else { return Some(Val::unknown()) };
            Some(inner_fields[policy.records[r as usize].field(name)?].clone())
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(64)
    ))]

    #[test]
    fn every_effective_value_explain_shows_is_the_one_check_reads(docs in deployment()) {
        let db = Database::default();
        let set = grail_engine::shipped::policy_set(&db);
        let compiled = grail_engine::db::compile_policy(&db, set);
        let policy = &compiled.policy;
        let texts: Vec<String> = docs.iter().map(|(_, d)| serde_json::to_string_pretty(d).unwrap_or_default()).collect();
        let loaded: Vec<_> = texts.iter().map(|t| document::load(t, Format::Json, &Limits::default())).collect();
        let paths: Vec<String> = (0..texts.len()).map(|i| format!("layer-{i}.json")).collect();
        let inputs: Vec<Input<'_>> = texts
            .iter()
            .zip(&loaded)
            .zip(&paths)
            .map(|((text, loaded), path)| Input { path, text, loaded: Some(loaded), given: None, markdown: false })
            .collect();
        // Each document bound to the layer it was written for, as `--layer` binds it.
        let bindings: Vec<Bound> = docs
            .iter()
            .enumerate()
            .map(|(input, (layer, _))| Bound { input, layer: layer.to_string(), by: BoundBy::Flag })
            .collect();
        let checked = run(policy, &inputs, &[], &bindings, false, None);
        let explained = grail_engine::explain::explain_with(policy, &inputs, &[], &bindings, None, &[]);
        let kind = policy.documents.iter().position(|d| d.binder == "binding").expect("a binding kind");
        let root = checked.single[kind].as_ref().expect("the merged binding");
        let record = policy.documents[kind].record;
        prop_assert!(!explained.cells.is_empty());
        for c in &explained.cells {
            let read = read(policy, record, root, &c.column, &c.key).expect("the cell is in the merged document");
            // What explain shows as the cell's value is what the rules read.
            prop_assert_eq!(&c.value, &read.display(policy), "{} {}", c.key, c.column);
            if let Some(d) = &c.demoted {
                // A demotion stands for a value the rules read, that check failed a rule for.
                prop_assert!(!read.is_absent(), "{} {} demoted from a value the rules cannot read", c.key, c.column);
                for (rule, _) in &d.because {
                    prop_assert!(
                        checked.findings.iter().any(|f| &f.rule == rule && matches!(f.outcome, Outcome::Fail | Outcome::Unknown)),
                        "{} {} demoted by `{}`, which check did not fail", c.key, c.column, rule
                    );
                }
            }
        }
        // And the findings are check's, outcome for outcome.
        let outcomes = |fs: &[grail_engine::Finding]| {
            let mut v: Vec<(String, String, Outcome)> = fs.iter().map(|f| (f.rule.clone(), f.subject.clone(), f.outcome)).collect();
            v.sort();
            v
        };
        prop_assert_eq!(outcomes(&checked.findings), outcomes(&explained.findings));
    }
}

#[test]
fn a_refused_null_is_not_in_effect_in_explain_either() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_grail"))
        .args(["explain", "--format", "json", "tests/inputs/explain/refused-null.yaml"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("grail runs");
    assert_eq!(out.status.code(), Some(1), "check fails the null");
    let json: Value = serde_json::from_slice(&out.stdout).expect("json");
    let cell = json["state"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["key"] == "C3" && c["column"] == "merge_policy")
        .expect("the C3 merge_policy cell");
    // Not in effect: the value written there is invalid (its type finding says why), never `null` or a default.
    assert_eq!(cell["value"], "invalid", "{cell}");
    assert!(cell["demoted_because"].is_null(), "{cell}");
    assert!(cell["refused"][0].as_str().is_some_and(|m| m.contains("found null")), "{cell}");
}
