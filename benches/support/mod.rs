//! Shared by the benches (`benches/*.rs`) and the bench examples
//! (`examples/bench_*.rs`): a seeded generator of bindings in upstream's
//! shape, grail's verdicts, and the Rego peer's (regorus evaluating
//! `benches/rego/guardrails.rego`); the timing and the table (`timing`).
//! `cedar.rs` is not part of it: the Cedar differential test and the Cedar
//! peer include it by path.
#![allow(dead_code)]

pub mod timing;

use std::collections::BTreeSet;
use std::sync::Arc;

use grail_engine::check::{self, Input};
use grail_engine::db::compile_policy;
use grail_engine::document::{self, Format, Limits};
use grail_engine::hir::Policy;
use grail_engine::{Database, Finding, Outcome};
use serde_json::{Map, Value, json};

/// The Rego translation of the rules of [`COMPARED`], in two files of one package.
pub const REGO: &str = include_str!("../rego/guardrails.rego");
/// Its merge gates and promotion cells (the rules the upstream-shaped corpus adds).
pub const REGO_UPSTREAM: &str = include_str!("../rego/upstream.rego");
/// The realistic ~3 KB binding every "one binding" figure checks.
pub const BINDING_3K: &str = include_str!("../data/binding-3k.json");
/// The same binding with one failure (C3 auto-merge with an advisory review), for `explain`.
pub const BINDING_3K_DEMOTED: &str = include_str!("../data/binding-3k-demoted.json");
/// The path grail is told the generated documents have (the subject of `schema.version`).
pub const PATH: &str = "binding.json";
/// The seed of the 10,000 bindings.
pub const SEED: u64 = 0x6772_6169_6c21;
pub const COUNT: usize = 10_000;

// ---------------------------------------------------------------- PRNG

/// SplitMix64: small, seeded, the same sequence on every machine.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// True with probability `percent` / 100.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
}

// ---------------------------------------------------------------- generator

const CLASSES: [&str; 5] = ["C1", "C2", "C3", "C4", "C5"];
const SCANNERS: [&str; 4] = ["static-analysis", "secret-scan", "dependency-audit", "license-scan"];
const MODELS: [&str; 6] = ["reviewer-a", "reviewer-b", "reviewer-c", "reviewer-d", "auditor", "red-team"];
const GENERATORS: [&str; 2] = ["author", "co-author"];
const FEATURES: [&str; 3] = ["tool-use", "long-context", "code-execution"];
const MODALITIES: [&str; 4] = ["text", "image", "audio", "video"];

/// The rules of `guardrails.rego`, the only ones the agreement on the
/// generated sets ([`agreement`]) compares: the bounds of the matrix
/// (`merge.ceiling` and the floors) and the vendor-hosted executor's cap.
/// The agreement over files compares [`COMPARED_UPSTREAM`] too.
pub const COMPARED: [&str; 8] = [
    "merge.ceiling",
    "merge.executor_cap",
    "floor.verification_blocking",
    "floor.ai_review",
    "floor.min_checkers",
    "floor.min_model_checkers",
    "floor.cross_vendor_required",
    "schema.version",
];

/// The `COUNT` bindings of the benchmarks, as JSON texts (valid and invalid mixed).
pub fn bindings(seed: u64, count: usize) -> Vec<String> {
    let mut rng = Rng::new(seed);
    (0..count).map(|_| binding(&mut rng)).collect()
}

/// The shipped floor of a verification layer per class, as upstream's matrix has it.
fn layer_floor(layer: &str, class: &str) -> &'static str {
    match (layer, class) {
        (_, "C1") => "not-required",
        ("deterministic", _) | (_, "C4" | "C5") => "blocking",
        (_, "C2") => "not-required",
        _ => "advisory",
    }
}

/// One binding in upstream's shape (its `valid.json`, every required key
/// there): a plausible organisation's binding, then (for about half of
/// them) one to four mutations that break a bound, a rule or a key.
pub fn binding(rng: &mut Rng) -> String {
    let sloppy = rng.chance(10);
    let mut b = Map::new();
    b.insert("schema_version".into(), json!("1.0"));
    b.insert("executor_class".into(), json!(if rng.chance(85) { "self-operated" } else { "vendor-hosted" }));
    b.insert("dispatch_posture".into(), json!(if rng.chance(70) { "human-gated-only" } else { "autonomous-enabled" }));
    b.insert(
        "isolation_bindings".into(),
        json!({"ci-pool-a": {"L2": {
            "substrate": "egress-denied-container-pool",
            "substrate_class": "container",
            "host_interop": "none",
            "component_reachable_hosts": ["example.com"],
            "probe_evidence": "probe-transcripts/ci-pool-a-l2.json",
            "runtime_markers": {"runner-pool": "ci-pool-a", "region": "us-east"}
        }}}),
    );
    let mut merge = Map::new();
    for c in CLASSES {
        // Within the matrix's cap (auto for C2 and C3 only), unless sloppy.
        let auto = if c == "C2" || c == "C3" { rng.chance(40) } else { sloppy && rng.chance(30) };
        merge.insert(c.into(), json!(if auto { "auto" } else { "human" }));
    }
    b.insert("merge_policy".into(), Value::Object(merge));
    let mut blocking = Map::new();
    for layer in ["deterministic", "ai-review"] {
        let mut m = Map::new();
        for c in CLASSES {
            let v = if rng.chance(if sloppy { 40 } else { 10 }) {
                *rng.pick(&["blocking", "advisory", "not-required"])
            } else if rng.chance(20) {
                "blocking"
            } else {
                layer_floor(layer, c)
            };
            m.insert(c.into(), json!(v));
        }
        blocking.insert(layer.into(), Value::Object(m));
    }
    b.insert("verification_blocking".into(), Value::Object(blocking));
    if rng.chance(90) {
        let mut topo = Map::new();
        for c in CLASSES {
            if rng.chance(55) {
                topo.insert(c.into(), topology(rng, c, sloppy));
            }
        }
        b.insert("verification_topology".into(), Value::Object(topo));
    }
    let events = [
        "gate-failure",
        "verification-divergence",
        "admission-rejection",
        "demotion",
        "structural-plan-approval",
        "untrusted-provenance",
    ];
    let routes: Map<String, Value> =
        events.iter().map(|e| (e.to_string(), json!(format!("queue:escalations/{e}")))).collect();
    b.insert("escalation_routes".into(), Value::Object(routes));
    let rules: Vec<Value> = CLASSES
        .iter()
        .map(|c| {
            let d = if *c <= "C2" { "autonomous-eligible" } else { "human-gated" };
            json!({"signal_class": "*", "provenance": "*", "work_class": c, "disposition": d})
        })
        .collect();
    b.insert(
        "admission".into(),
        json!({
            "classification": {"tracker-vcs-event": {"autonomy:audit": "C1", "autonomy:mechanical": "C2",
                "autonomy:scoped": "C3", "autonomy:structural": "C4", "autonomy:untrusted": "C5"}},
            "rules": rules,
            "autonomous_concurrency": 1,
            "items_per_run": 3
        }),
    );
    let mut doc = Value::Object(b);
    if rng.chance(50) {
        for _ in 0..1 + rng.below(4) {
            mutate(rng, &mut doc);
        }
    }
    doc.to_string()
}

/// A class's topology, its four keys declared: consistent with its floors
/// unless `sloppy`, when counts go below them and slots and relations go
/// missing at random.
fn topology(rng: &mut Rng, class: &str, sloppy: bool) -> Value {
    let strict = class >= "C4";
    let mut t = Map::new();
    let (floor, model_floor): (usize, usize) = match class {
        "C1" | "C2" => (1, 0),
        "C3" => (2, 1),
        _ => (3, 2),
    };
    let need = if sloppy { (floor + rng.below(2)).saturating_sub(rng.below(2)).max(1) } else { floor + rng.below(2) };
    let need_models = if sloppy { model_floor.saturating_sub(rng.below(2)) } else { model_floor + rng.below(2) };
    t.insert("min_checkers".into(), json!(need));
    t.insert("min_model_checkers".into(), json!(need_models));
    let cross = if sloppy { rng.chance(50) } else { strict || rng.chance(10) };
    t.insert("cross_vendor_required".into(), json!(cross));
    let drop = if sloppy { 12 } else { 1 };
    let mut roles = Vec::new();
    let generators: Vec<&str> = GENERATORS[..if rng.chance(85) { 1 } else { 2 }].to_vec();
    for g in &generators {
        roles.push(json!({"name": g, "role": "generator"}));
    }
    let mut models = need_models.max(1).max(if cross { 2 } else { 1 }) + rng.below(2);
    let mut scanners = need.saturating_sub(models) + rng.below(2);
    if sloppy {
        models = 1 + rng.below(3);
        scanners = rng.below(3);
    }
    for i in 0..scanners {
        let scanner = if rng.chance(drop) { SCANNERS[0] } else { SCANNERS[i % SCANNERS.len()] };
        roles.push(json!({"name": format!("scan-{i}"), "role": "checker", "scanner_class": scanner}));
    }
    let mut declared: Vec<&str> = Vec::new();
    for name in MODELS.iter().take(models.min(MODELS.len())) {
        let mut s = Map::new();
        s.insert("name".into(), json!(name));
        let cross_checker = cross && rng.chance(40);
        s.insert("role".into(), json!(if cross_checker { "cross_vendor_checker" } else { "checker" }));
        let vendor = cross || rng.chance(30);
        let mut vendor_from = Vec::new();
        let mut model_from = Vec::new();
        for g in generators.iter().chain(&declared) {
            if !rng.chance(drop) {
                if vendor { vendor_from.push(*g) } else { model_from.push(*g) }
            }
        }
        if !model_from.is_empty() {
            s.insert("distinct_model_from".into(), json!(model_from));
        }
        if !vendor_from.is_empty() {
            s.insert("distinct_vendor_from".into(), json!(vendor_from));
        }
        if rng.chance(25) {
            s.insert("min_context_tokens".into(), json!(32_000 * (1 + rng.below(8))));
        }
        if rng.chance(20) {
            let n = 1 + rng.below(2);
            s.insert("requires_modality".into(), json!(MODALITIES[..n]));
        }
        if rng.chance(15) {
            s.insert("requires_feature".into(), json!([rng.pick(&FEATURES)]));
        }
        roles.push(Value::Object(s));
        declared.push(name);
    }
    if rng.chance(20) {
        roles.push(json!({"name": "ranker", "role": "ranker"}));
    }
    t.insert("roles".into(), Value::Array(roles));
    Value::Object(t)
}

/// A handle on one slot of one class, if the binding has any.
fn some_slot<'a>(rng: &mut Rng, doc: &'a mut Value) -> Option<&'a mut Map<String, Value>> {
    let topo = doc.get_mut("verification_topology")?.as_object_mut()?;
    let keys: Vec<String> = topo.keys().cloned().collect();
    if keys.is_empty() {
        return None;
    }
    let c = rng.pick(&keys).clone();
    let roles = topo.get_mut(&c)?.get_mut("roles")?.as_array_mut()?;
    if roles.is_empty() {
        return None;
    }
    let i = rng.below(roles.len());
    roles[i].as_object_mut()
}

fn some_topology<'a>(rng: &mut Rng, doc: &'a mut Value) -> Option<&'a mut Map<String, Value>> {
    let topo = doc.get_mut("verification_topology")?.as_object_mut()?;
    let keys: Vec<String> = topo.keys().cloned().collect();
    if keys.is_empty() {
        return None;
    }
    let c = rng.pick(&keys).clone();
    topo.get_mut(&c)?.as_object_mut()
}

fn top(doc: &mut Value) -> &mut Map<String, Value> {
    doc.as_object_mut().expect("a binding is a mapping")
}

fn map_of<'a>(doc: &'a mut Value, path: &[&str]) -> &'a mut Map<String, Value> {
    let mut here = top(doc);
    for key in path {
        if !here.get(*key).is_some_and(Value::is_object) {
            here.insert(key.to_string(), json!({}));
        }
        here = here.get_mut(*key).and_then(Value::as_object_mut).expect("just inserted");
    }
    here
}

/// One mutation: a bound loosened, a rule broken, a key out of the schema.
fn mutate(rng: &mut Rng, doc: &mut Value) {
    let class = *rng.pick(&CLASSES);
    match rng.below(16) {
        0 => drop(top(doc).insert("schema_version".into(), json!(*rng.pick(&["2.0", "1", "1.1"])))),
        1 => drop(top(doc).insert("executor_class".into(), json!("vendor-hosted"))),
        2 => drop(map_of(doc, &["merge_policy"]).insert(class.into(), json!("auto"))),
        3 => {
            let layer = *rng.pick(&["deterministic", "ai-review"]);
            let v = *rng.pick(&["advisory", "not-required"]);
            map_of(doc, &["verification_blocking", layer]).insert(class.into(), json!(v));
        }
        4 => {
            if let Some(t) = some_topology(rng, doc) {
                t.insert("min_checkers".into(), json!(1 + rng.below(2)));
            }
        }
        5 => {
            if let Some(t) = some_topology(rng, doc) {
                t.insert("min_model_checkers".into(), json!(rng.below(3)));
            }
        }
        6 => {
            if let Some(t) = some_topology(rng, doc) {
                t.insert("cross_vendor_required".into(), json!(false));
            }
        }
        7 => {
            // A slot declared twice (same name, maybe different attributes).
            if let Some(t) = some_topology(rng, doc)
                && let Some(roles) = t.get_mut("roles").and_then(Value::as_array_mut)
                && !roles.is_empty()
            {
                let i = rng.below(roles.len());
                let copy = roles[i].clone();
                roles.push(copy);
            }
        }
        8 => {
            if let Some(s) = some_slot(rng, doc) {
                let name = s.get("name").cloned().unwrap_or(json!("x"));
                let target = if rng.chance(50) { name } else { json!("ghost") };
                s.insert(rng.pick(&["distinct_model_from", "distinct_vendor_from"]).to_string(), json!([target]));
            }
        }
        9 => {
            if let Some(s) = some_slot(rng, doc) {
                s.insert("scanner_class".into(), json!("static-analysis"));
            }
        }
        10 => {
            if let Some(s) = some_slot(rng, doc) {
                s.insert(rng.pick(&["vendor", "model", "temperature"]).to_string(), json!("x"));
            }
        }
        11 => {
            // The generators removed, or one checker's relations dropped.
            if let Some(t) = some_topology(rng, doc)
                && let Some(roles) = t.get_mut("roles").and_then(Value::as_array_mut)
            {
                if rng.chance(50) {
                    roles.retain(|s| s.get("role") != Some(&json!("generator")));
                } else if let Some(s) = roles.iter_mut().find(|s| s.get("role") == Some(&json!("checker")))
                    && let Some(s) = s.as_object_mut()
                {
                    s.remove("distinct_vendor_from");
                    s.remove("distinct_model_from");
                }
            }
        }
        12 => {
            if let Some(s) = some_slot(rng, doc) {
                match rng.below(3) {
                    0 => drop(s.insert("requires_modality".into(), json!(["text", "text"]))),
                    1 => drop(s.insert("requires_feature".into(), json!([]))),
                    _ => drop(s.insert("distinct_model_from".into(), json!("author"))),
                }
            }
        }
        13 => drop(top(doc).insert(rng.pick(&["notes", "owner", "merge_polcy"]).to_string(), json!("x"))),
        14 => {
            let cell = *rng.pick(&["C2-auto-merge", "C3-auto-merge", "C3-ai-review-blocking"]);
            map_of(doc, &["promotion_state"]).insert(
                cell.into(),
                json!({"state": "promoted", "ratified_by_change": "change/1", "evidence_window": "30d",
                    "ratified_at": "2026-06-30T00:00:00Z"}),
            );
        }
        _ => {
            // A topology for a class that had none, with too few checkers.
            map_of(doc, &["verification_topology"]).insert(
                class.into(),
                json!({"min_checkers": 1, "min_model_checkers": 0, "cross_vendor_required": false,
                    "roles": [{"name": "author", "role": "generator"}, {"name": "reviewer-a", "role": "checker"}]}),
            );
        }
    }
}

// ------------------------------------------------------ the examples, mutated

/// The second data set: the bindings of `examples/bindings/` (small,
/// realistic, written by hand), each copy with zero to three mutations of
/// the kinds a careless edit makes: an integer changed, a key copied under
/// a name the schema does not know, a string replaced by a word outside its
/// vocabulary, a key deleted. As JSON text.
pub fn example_bindings(seed: u64, count: usize) -> Vec<String> {
    let bases = examples();
    let mut rng = Rng::new(seed);
    (0..count)
        .map(|_| {
            let mut doc = rng.pick(&bases).clone();
            for _ in 0..rng.below(4) {
                mutate_anywhere(&mut rng, &mut doc);
            }
            serde_json::to_string(&doc).expect("a value is JSON")
        })
        .collect()
}

/// The example bindings as JSON values (their YAML read by grail's own loader).
fn examples() -> Vec<Value> {
    // `broken.yaml` is left out: it is not YAML (on purpose), and the Rego peer reads JSON values.
    const FILES: [&str; 4] = [
        include_str!("../../examples/bindings/org.json"),
        include_str!("../../examples/bindings/good.yaml"),
        include_str!("../../examples/bindings/auto-merge-demoted.yaml"),
        include_str!("../../examples/bindings/identical-checkers.yaml"),
    ];
    FILES
        .iter()
        .map(|text| {
            let node = document::load(text, Format::Yaml, &Limits::default()).expect("an example binding is YAML");
            node.to_json()
        })
        .collect()
}

/// One mutation at a place chosen uniformly among the document's values.
fn mutate_anywhere(rng: &mut Rng, doc: &mut Value) {
    let mut places = Vec::new();
    collect_places(doc, &mut Vec::new(), &mut places);
    if places.is_empty() {
        return;
    }
    let at = rng.pick(&places).clone();
    let kind = rng.below(4);
    let Some((last, parent_path)) = at.split_last() else { return };
    let Some(parent) = parent_path.iter().try_fold(&mut *doc, |v, step| step_into(v, step)) else { return };
    match (kind, parent) {
        (0, parent) => {
            if let Some(v) = step_into(parent, last) {
                *v = match v.as_i64() {
                    Some(i) => json!(if rng.chance(50) { i + 1 } else { (i - 1).max(0) }),
                    None => json!(rng.below(6)),
                };
            }
        }
        (1, Value::Object(m)) => {
            if let Some(v) = m.get(last).cloned() {
                m.insert(format!("{last}_extra"), v);
            }
        }
        (2, parent) => {
            if let Some(v) = step_into(parent, last) {
                *v = json!("bogus");
            }
        }
        (_, Value::Object(m)) => {
            m.remove(last);
        }
        (_, Value::Array(xs)) => {
            if let Ok(i) = last.parse::<usize>()
                && i < xs.len()
            {
                xs.remove(i);
            }
        }
        _ => {}
    }
}

/// Every path (keys, and list positions as numbers) to a value below the top.
fn collect_places(v: &Value, path: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    let children: Vec<(String, &Value)> = match v {
        Value::Object(m) => m.iter().map(|(k, v)| (k.clone(), v)).collect(),
        Value::Array(xs) => xs.iter().enumerate().map(|(i, v)| (i.to_string(), v)).collect(),
        _ => Vec::new(),
    };
    for (k, child) in children {
        path.push(k);
        out.push(path.clone());
        collect_places(child, path, out);
        path.pop();
    }
}

fn step_into<'a>(v: &'a mut Value, step: &str) -> Option<&'a mut Value> {
    match v {
        Value::Object(m) => m.get_mut(step),
        Value::Array(xs) => step.parse::<usize>().ok().and_then(move |i| xs.get_mut(i)),
        _ => None,
    }
}

// ---------------------------------------------------------------- grail

/// The shipped library, compiled (as the command line does: a salsa database).
pub fn grail_policy() -> Arc<Policy> {
    let db = Database::default();
    let set = grail_engine::shipped::policy_set(&db);
    let compiled = compile_policy(&db, set);
    assert!(!compiled.has_errors(), "the shipped library compiles: {:?}", compiled.diagnostics);
    compiled.policy.clone()
}

/// Loads and checks one JSON binding on the non-incremental fast path.
pub fn grail_check(policy: &Policy, text: &str) -> Vec<Finding> {
    let loaded = document::load(text, Format::Json, &Limits::default());
    check::check(policy, &[Input { path: PATH, text, loaded: Some(&loaded), given: None, markdown: false }], &[])
}

/// (rule, subject, outcome) of a finding.
pub type Verdict = (String, String, String);

/// grail's FAIL and UNKNOWN findings of the rules the Rego translation covers ([`COMPARED`]).
pub fn grail_verdicts(findings: &[Finding]) -> BTreeSet<Verdict> {
    all_verdicts(findings).into_iter().filter(|(rule, ..)| COMPARED.contains(&rule.as_str())).collect()
}

/// grail's FAIL and UNKNOWN findings, of every rule.
pub fn all_verdicts(findings: &[Finding]) -> BTreeSet<Verdict> {
    findings
        .iter()
        .filter(|f| matches!(f.outcome, Outcome::Fail | Outcome::Unknown))
        .map(|f| (f.rule.clone(), f.subject.clone(), f.outcome.as_str().to_string()))
        .collect()
}

// ---------------------------------------------------------------- Rego

/// regorus with the Rego translation loaded.
pub struct Rego {
    engine: regorus::Engine,
}

impl Rego {
    pub fn new() -> Rego {
        let mut engine = regorus::Engine::new();
        engine.add_policy("benches/rego/guardrails.rego".into(), REGO.into()).expect("the Rego translation parses");
        engine
            .add_policy("benches/rego/upstream.rego".into(), REGO_UPSTREAM.into())
            .expect("the Rego translation parses");
        Rego { engine }
    }

    /// Evaluates `data.guardrails.findings` for one binding (JSON text).
    pub fn eval(&mut self, json: &str) -> regorus::Value {
        self.engine.set_input_json(json).expect("the input is JSON");
        self.engine.eval_rule("data.guardrails.findings".into()).expect("the rule evaluates")
    }

    /// The Rego side's FAIL and UNKNOWN findings.
    pub fn verdicts(&mut self, json: &str) -> BTreeSet<Verdict> {
        let value = self.eval(json);
        let text = value.to_json_str().expect("a set of findings");
        let found: Vec<Value> = serde_json::from_str(&text).expect("findings are JSON");
        found
            .iter()
            .map(|f| {
                let s = |k: &str| f.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
                (s("rule"), s("subject"), s("outcome"))
            })
            .collect()
    }
}

impl Default for Rego {
    fn default() -> Self {
        Rego::new()
    }
}

/// How many bindings each (rule, outcome) of grail's FAIL and UNKNOWN
/// verdicts occurs in: what the generated population exercises.
pub fn tally(policy: &Policy, docs: &[String]) -> std::collections::BTreeMap<(String, String), usize> {
    let mut out = std::collections::BTreeMap::new();
    for doc in docs {
        let seen: BTreeSet<(String, String)> =
            all_verdicts(&grail_check(policy, doc)).into_iter().map(|(r, _, o)| (r, o)).collect();
        for k in seen {
            *out.entry(k).or_default() += 1;
        }
    }
    out
}

/// Counts a document on which the two sides' verdicts differ in `bad`, and
/// prints the first five, each side's own verdicts under `head`, in `report`.
fn disagreement(
    bad: &mut usize,
    report: &mut String,
    head: &str,
    ours: &BTreeSet<Verdict>,
    theirs: &BTreeSet<Verdict>,
) {
    if ours == theirs {
        return;
    }
    *bad += 1;
    if *bad <= 5 {
        report.push_str(&format!("{head}\n"));
        for v in ours.difference(theirs) {
            report.push_str(&format!("  grail only: {v:?}\n"));
        }
        for v in theirs.difference(ours) {
            report.push_str(&format!("  rego only:  {v:?}\n"));
        }
    }
}

/// Checks that grail and the Rego translation agree on every binding;
/// returns how many verdicts (rule, subject, outcome) were compared, or the
/// disagreements, both sides printed.
pub fn agreement(policy: &Policy, rego: &mut Rego, docs: &[String]) -> Result<usize, String> {
    let mut compared = 0;
    let mut report = String::new();
    let mut bad = 0;
    for (i, doc) in docs.iter().enumerate() {
        let ours = grail_verdicts(&grail_check(policy, doc));
        let theirs: BTreeSet<Verdict> =
            rego.verdicts(doc).into_iter().filter(|(r, ..)| COMPARED.contains(&r.as_str())).collect();
        compared += ours.len();
        disagreement(&mut bad, &mut report, &format!("binding {i}: {doc}"), &ours, &theirs);
    }
    if bad == 0 { Ok(compared) } else { Err(format!("{bad} of {} bindings disagree\n{report}", docs.len())) }
}

/// The rules `benches/rego/upstream.rego` adds, compared on the
/// upstream-shaped corpus only ([`agreement_on_files`]): they agree there on
/// every verdict, but do not yet read a value of the wrong type as grail
/// does everywhere (UNKNOWN: a class bound to a number, a promotion cell or
/// an `ai-review` layer that is not a mapping), which the mutated examples
/// of `agreement` exercise and the upstream fixtures do not. 13 of the 49
/// have no FAIL or UNKNOWN in that corpus (BENCHMARKS.md lists them).
pub const COMPARED_UPSTREAM: [&str; 41] = [
    "merge.unratified",
    "merge.unanimity",
    "promotion.review_unratified",
    "promotion.promotable",
    "promotion.ratified_at",
    "escalation.runner_route",
    "escalation.empty_legs",
    "escalation.push_without_channel",
    "escalation.reescalation_cap",
    "isolation.l3_substrate",
    "isolation.no_l2",
    "marker.missing",
    "marker.level_ambiguous",
    "admission.override_required",
    "admission.ambiguous",
    "admission.temporal_identity",
    "topology.empty_roles",
    "topology.empty_relation",
    "topology.repeated_target",
    "topology.empty_predicate",
    "topology.repeated_token",
    "topology.duplicate_slot",
    "topology.undeclared_role",
    "topology.cross_vendor_no_generator",
    "topology.scanner_role",
    "topology.deterministic_relation",
    "topology.deterministic_context",
    "topology.duplicate_scanner_class",
    "topology.generator_independence",
    "topology.model_checker_count",
    "topology.checker_count",
    "topology.pairwise_distinct",
    "topology.cross_vendor_population",
    "topology.cross_vendor_generator",
    "topology.cross_vendor_pairwise",
    "topology.unknown_predicate",
    "schema.missing_key",
    "schema.type",
    "schema.unknown_key",
    "merge.unheard_checkers",
    "topology.capability_label",
];

/// Whether the agreement over files compares `rule`.
fn compared_on_files(rule: &str) -> bool {
    COMPARED.contains(&rule) || COMPARED_UPSTREAM.contains(&rule)
}

/// How many files each (rule, outcome) occurs in.
pub type Tally = std::collections::BTreeMap<(String, String), usize>;

/// The agreement over files on disk (`bench_stream agree-each`): `lines`
/// are grail's `check --each --format json` reports, one per file of
/// `files` in the same order; each is compared with the Rego translation
/// evaluated on the file's text, on the FAIL and UNKNOWN verdicts of the
/// rules of [`COMPARED`] and [`COMPARED_UPSTREAM`]. The rest of grail's verdicts (the rules not
/// translated, among them every rule that reads an attached transcript or
/// evidence file) are left out of the comparison by that list, and counted
/// per (rule, outcome) in the tally, with the compared ones.
///
/// `schema.version`'s subject is the document's path: grail's is the file
/// as given, the translation's the fixed [`PATH`] it is written for, which is
/// read here as the file's.
pub fn agreement_on_files(rego: &mut Rego, lines: &[String], files: &[String]) -> Result<(usize, Tally), String> {
    if lines.len() != files.len() {
        return Err(format!("{} report lines for {} files", lines.len(), files.len()));
    }
    let (mut compared, mut bad) = (0, 0);
    let mut report = String::new();
    let mut tally = std::collections::BTreeMap::new();
    for (line, file) in lines.iter().zip(files) {
        let parsed: Value = serde_json::from_str(line).map_err(|e| format!("{file}: grail's line is not JSON: {e}"))?;
        if parsed.get("file").and_then(Value::as_str) != Some(file.as_str()) {
            return Err(format!("{file}: grail's line is about {:?}", parsed.get("file")));
        }
        let all: BTreeSet<Verdict> = parsed["findings"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|f| {
                let s = |k: &str| f.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
                (s("rule"), s("subject"), s("outcome"))
            })
            .filter(|(_, _, o)| o == "fail" || o == "unknown")
            .collect();
        for (rule, outcome) in all.iter().map(|(r, _, o)| (r.clone(), o.clone())).collect::<BTreeSet<_>>() {
            let translated = if compared_on_files(&rule) { "compared" } else { "grail only" };
            *tally.entry((format!("{rule} ({translated})"), outcome)).or_insert(0) += 1;
        }
        let ours: BTreeSet<Verdict> = all.into_iter().filter(|(r, ..)| compared_on_files(r)).collect();
        let text = std::fs::read_to_string(file).map_err(|e| format!("{file}: {e}"))?;
        let theirs: BTreeSet<Verdict> = rego
            .verdicts(&text)
            .into_iter()
            .map(|(r, s, o)| if r == "schema.version" && s == PATH { (r, file.clone(), o) } else { (r, s, o) })
            .filter(|(r, ..)| compared_on_files(r))
            .collect();
        compared += ours.len();
        disagreement(&mut bad, &mut report, &format!("{file}:"), &ours, &theirs);
    }
    if bad == 0 { Ok((compared, tally)) } else { Err(format!("{bad} of {} files disagree\n{report}", files.len())) }
}
