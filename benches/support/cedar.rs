//! The population of the Cedar differential test (`tests/cedar.rs`) and of the
//! Cedar peer bench (`benches/cedar_peer.rs`), which include this file by
//! path: the example deployments and seeded generated ones, the requests
//! asked of each, grail's answer to a request, the compiled Cedar as
//! cedar-policy reads it, and both derivations of a disagreement.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use cedar_policy::{
    Context, Entities, EntityUid, PolicySet as CedarPolicies, Request, Response, Schema, ValidationMode, Validator,
};
use grail_engine::db::{AttachedFile, LayerBinding, compile_policy, document_references};
use grail_engine::emit::cedar::{self, Cedar, PRINCIPAL_TYPE, RESOURCE_TYPE};
use grail_engine::explain::subject_mentions;
use grail_engine::hir::{Policy, QuestionDef};
use grail_engine::layers::BoundBy;
use grail_engine::question::Decision;
use grail_engine::{Database, Deployment, Outcome, PolicySet, SourceText};
use grail_lang::ast::RequestSide;
use serde_json::{Value, json};

/// How many generated deployments the population has (seeds `0..POPULATION`).
pub const POPULATION: u64 = 1200;

// ------------------------------------------------------------------ deployments

/// A deployment to compile: documents (path, text), checked together.
pub struct Case {
    pub name: String,
    pub documents: Vec<(String, String)>,
    /// Layer bindings, as `--layer NAME=FILE` gives them: (layer, path of a document).
    pub layers: Vec<(String, String)>,
    /// Files attached under recorded paths, as `--attach RECORDED=FILE` gives them.
    pub given: Vec<(String, String)>,
}

/// The bindings of a folder's `layers.bind` (`NAME=FILE` per line, as a fixture folder writes them).
pub fn folder_layers(dir: &Path, root: &Path) -> Vec<(String, String)> {
    folder_bind(dir, root, "layers.bind", str::split_once)
}

/// The attachments of a folder's `attach.bind` (`RECORDED=FILE` per line, split at the last `=`).
pub fn folder_attachments(dir: &Path, root: &Path) -> Vec<(String, String)> {
    folder_bind(dir, root, "attach.bind", str::rsplit_once)
}

/// The `NAME=FILE` lines of a folder's manifest, each FILE relative to the root.
fn folder_bind(
    dir: &Path,
    root: &Path,
    manifest: &str,
    split: fn(&str, char) -> Option<(&str, &str)>,
) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(dir.join(manifest)).unwrap_or_default();
    text.lines()
        .filter_map(|l| split(l.split('#').next()?.trim(), '='))
        .map(|(name, file)| {
            let path = dir.join(file.trim());
            (name.trim().to_string(), path.strip_prefix(root).unwrap_or(&path).to_string_lossy().into_owned())
        })
        .collect()
}

pub fn shipped(db: &Database) -> PolicySet {
    grail_engine::shipped::policy_set(db)
}

fn is_document(p: &Path) -> bool {
    matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml" | "json" | "jsonl" | "md"))
}

fn sorted_entries(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> =
        std::fs::read_dir(dir).map(|r| r.flatten().map(|e| e.path()).collect()).unwrap_or_default();
    v.sort();
    v
}

fn documents_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for p in sorted_entries(dir) {
        if p.is_dir() {
            documents_under(&p, out);
        } else if is_document(&p) {
            out.push(p);
        }
    }
}

/// Every example deployment: each file of `examples/bindings/` on its own, and
/// each other folder of `examples/` (an organisation: layers, work items,
/// histories) as one deployment of every document in it, less the files its
/// documents name with `ref` (probe transcripts, attached to them).
pub fn example_cases() -> Vec<Case> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let read = |p: &Path| {
        let rel = p.strip_prefix(root).unwrap_or(p).to_string_lossy().into_owned();
        (rel, std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
    };
    let db = Database::default();
    let set = shipped(&db);
    let mut cases = Vec::new();
    for dir in sorted_entries(&root.join("examples")).into_iter().filter(|p| p.is_dir()) {
        if dir.ends_with("bindings") {
            for f in sorted_entries(&dir).into_iter().filter(|p| p.is_file() && is_document(p)) {
                let doc = read(&f);
                cases.push(Case { name: doc.0.clone(), documents: vec![doc], layers: Vec::new(), given: Vec::new() });
            }
            continue;
        }
        let mut files = Vec::new();
        documents_under(&dir, &mut files);
        let mut attached = Vec::new();
        for f in &files {
            let (path, text) = read(f);
            for r in document_references(&db, set, SourceText::new(&db, path, text, None)) {
                attached.push(f.parent().unwrap_or(root).join(r));
            }
        }
        let documents: Vec<(String, String)> =
            files.iter().filter(|f| !attached.contains(f)).map(|f| read(f)).collect();
        if !documents.is_empty() {
            let layers = folder_layers(&dir, root);
            let given = folder_attachments(&dir, root);
            cases.push(Case {
                name: format!("{}/", dir.strip_prefix(root).unwrap_or(&dir).display()),
                documents,
                layers,
                given,
            });
        }
    }
    assert!(cases.len() >= 5, "the examples were not found: {}", cases.len());
    cases
}

/// The time of every check here: nine days after the examples' capture
/// (2026-08-11), so every rule that reads the time decides the same on every run.
pub const NOW: &str = "2026-08-20T00:00:00Z";

/// The deployment of a case, checked at [`NOW`]; `ref` fields are followed inside the document's folder.
pub fn deployment(db: &Database, set: PolicySet, case: &Case) -> Deployment {
    let docs: Vec<SourceText> =
        case.documents.iter().map(|(p, t)| SourceText::new(db, p.clone(), t.clone(), None)).collect();
    let mut attached = Vec::new();
    for d in &docs {
        for path in document_references(db, set, *d) {
            let folder =
                Path::new(env!("CARGO_MANIFEST_DIR")).join(Path::new(d.path(db)).parent().unwrap_or(Path::new("")));
            let read = std::fs::read_to_string(folder.join(path))
                .map(|t| SourceText::new(db, format!("{}/{path}", folder.display()), t, None))
                .map_err(|e| format!("cannot be read: {e}"));
            attached.push(AttachedFile { from: *d, path: path.clone(), read });
        }
    }
    let bindings = case
        .layers
        .iter()
        .filter_map(|(layer, path)| {
            let document = *docs.iter().find(|d| d.path(db) == path)?;
            Some(LayerBinding { document, layer: layer.clone(), by: BoundBy::Flag })
        })
        .collect();
    let given = case
        .given
        .iter()
        .map(|(recorded, file)| {
            let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
            let read = std::fs::read_to_string(&path)
                .map(|t| SourceText::new(db, file.clone(), t, None))
                .map_err(|e| format!("cannot be read: {e}"));
            grail_engine::db::GivenFile { recorded: recorded.clone(), read }
        })
        .collect();
    Deployment::builder(docs, attached)
        .bindings(bindings)
        .given(given)
        .now(grail_engine::time::rfc3339_nanos(NOW))
        .new(db)
}

// ------------------------------------------------------------------ generator

/// splitmix64: small, seeded, the same on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len())]
    }
}

const CLASSES: [&str; 5] = ["C1", "C2", "C3", "C4", "C5"];
/// Surface names, some of them hard to quote in Cedar.
const SURFACES: &[&str] =
    &["ci-pool-a", "secure-pool", "laptop-runner", "Pool B", "quote\"pool", "back\\slash", "ünï-池", "in", "has x"];
const HOSTS: &[&str] = &["registry.example.org", "api.tracker.example", "mirror.example.net"];

fn some_classes(rng: &mut Rng, percent: u64) -> Vec<&'static str> {
    CLASSES.iter().copied().filter(|_| rng.chance(percent)).collect()
}

/// A remediation history: attempts, corrective decisions, guarded or not.
fn history(r: &mut Rng) -> Value {
    let decision = |r: &mut Rng, ordinal: usize, what: &str| {
        let reviewer = if r.chance(10) { "agent:auditor:T-1" } else { "agent:reviewer:T-1" };
        json!({"type": "corrective-decision", "ordinal": ordinal, "decision": what,
               "auditor": "agent:auditor:T-1", "reviewer": reviewer})
    };
    let mut events = Vec::new();
    let attempts = r.below(4);
    let mut stopped = false;
    for k in 1..=attempts {
        if k == 3 && r.chance(60) {
            events.push(decision(r, 3, "continue-fix"));
        }
        let ordinal = if r.chance(10) { k + 1 } else { k };
        let outcome = r.pick(&["failed", "failed", "failed", "checks-failed", "passed"]);
        stopped |= k == 3 && outcome != "passed";
        events.push(json!({"type": "remediation", "ordinal": ordinal, "outcome": outcome}));
    }
    if (stopped && r.chance(50)) || r.chance(10) {
        let what = r.pick(&["split-required", "stop-escalate", "continue-fix", "replan-required"]);
        events.push(decision(r, 4, what));
    }
    let mut h = json!({"schema_version": "1.0", "kind": "remediation-history", "step": "STEP-001", "events": events});
    match r.below(7) {
        0 => {}
        1 => h["guarded"] = json!(false),
        _ => h["guarded"] = json!(true),
    }
    h
}

/// A level binding of a surface: L1 claims no boundary; L2 and L3 name the
/// hosts their component may reach; most name the markers of a runner.
fn level_binding(r: &mut Rng, surface: &str, level: &str) -> Value {
    let (substrate, class) = match level {
        "L1" => ("per-command-sandbox", "os-sandbox"),
        "L2" => ("egress-denied-container-pool", "container"),
        _ => (
            "firecracker-pool",
            // A container at L3 lacks kernel separation: `isolation.l3_substrate`.
            if r.chance(90) { "vm-microvm" } else { "container" },
        ),
    };
    let mut b = json!({
        "substrate": substrate,
        "substrate_class": class,
        "probe_evidence": format!("probe-transcripts/{}.json", level.to_lowercase()),
    });
    if level != "L1" {
        if r.chance(85) {
            b["host_interop"] = json!("none");
        }
        let hosts: Vec<&str> = HOSTS.iter().copied().filter(|_| r.chance(40)).collect();
        b["component_reachable_hosts"] = json!(hosts);
    }
    // Markers of one surface and level only; now and then none (`marker.missing` under autonomous dispatch).
    if r.chance(90) {
        b["runtime_markers"] = json!({"pool": format!("{surface}/{level}")});
    }
    b
}

/// A ratified promotion of the cell `cell`.
fn promotion(cell: &str) -> Value {
    json!({
        "state": "promoted",
        "ratified_by_change": format!("change/2026-06-30-{}", cell.to_lowercase()),
        "evidence_window": "2026-06-01..2026-06-28",
        "ratified_at": "2026-06-30T00:00:00Z",
    })
}

/// A binding in upstream's shape, over the vocabulary of the shipped library,
/// with mutations of merge policies, verification layers, promotions, the
/// executor, the dispatch posture, admission and surfaces; sometimes a lower
/// layer that tightens or tries to loosen it, and a remediation history.
pub fn generated(seed: u64) -> Case {
    let mut rng = Rng(seed);
    let r = &mut rng;
    let mut doc = serde_json::Map::new();
    match r.below(40) {
        0 => {}
        1 => {
            doc.insert("schema_version".into(), json!("2.0"));
        }
        _ => {
            doc.insert("schema_version".into(), json!("1.0"));
        }
    }
    match r.below(20) {
        0 => {}
        1 | 2 => {
            doc.insert("executor_class".into(), json!("vendor-hosted"));
        }
        _ => {
            doc.insert("executor_class".into(), json!("self-operated"));
        }
    }
    match r.below(3) {
        0 => {}
        1 => {
            doc.insert("dispatch_posture".into(), json!("human-gated-only"));
        }
        _ => {
            doc.insert("dispatch_posture".into(), json!("autonomous-enabled"));
        }
    }
    // Surfaces: one to three, each with one or two levels.
    let mut surfaces = serde_json::Map::new();
    for _ in 0..=r.below(3) {
        let name = r.pick(SURFACES).to_string();
        let mut levels = serde_json::Map::new();
        for _ in 0..=r.below(2) {
            let level = r.pick(&["L1", "L2", "L2", "L3"]);
            levels.insert(level.into(), level_binding(r, &name, level));
        }
        surfaces.insert(name, Value::Object(levels));
    }
    doc.insert("isolation_bindings".into(), Value::Object(surfaces));
    // Every class is bound; one left out now and then (`schema.missing_key`).
    // Classes above the ceiling (C4, C5) are bound `auto` rarely: that fails `merge.ceiling`.
    let mut merge = serde_json::Map::new();
    for (i, class) in CLASSES.iter().enumerate() {
        if r.chance(99) {
            let auto = match i {
                0 => r.chance(10),
                1 | 2 => r.chance(65),
                _ => r.chance(5),
            };
            merge.insert(class.to_string(), json!(if auto { "auto" } else { "human" }));
        }
    }
    doc.insert("merge_policy".into(), Value::Object(merge));
    // Each class at its floor or tighter, now and then looser (`floor.verification_blocking`, `floor.ai_review`).
    let forces = ["blocking", "advisory", "not-required"];
    let layer = |r: &mut Rng, floors: [usize; 5]| -> Value {
        let m: serde_json::Map<String, Value> = CLASSES
            .iter()
            .zip(floors)
            .map(|(c, floor)| {
                let force = match r.below(100) {
                    0..60 => 0,
                    60..94 => r.below(floor + 1),
                    _ => r.below(forces.len()),
                };
                (c.to_string(), json!(forces[force]))
            })
            .collect();
        Value::Object(m)
    };
    let deterministic = layer(r, [2, 0, 0, 0, 0]);
    let review = layer(r, [2, 2, 1, 0, 0]);
    doc.insert("verification_blocking".into(), json!({"deterministic": deterministic, "ai-review": review}));
    let mut promotions = serde_json::Map::new();
    for cell in ["C2-auto-merge", "C3-auto-merge", "C3-ai-review-blocking"] {
        if r.chance(85) {
            promotions.insert(cell.into(), promotion(cell));
        }
    }
    if !promotions.is_empty() {
        doc.insert("promotion_state".into(), Value::Object(promotions));
    }
    if r.chance(25) {
        doc.insert(
            "verification_topology".into(),
            json!({"C3": {"min_checkers": 2, "min_model_checkers": 1, "cross_vendor_required": false, "roles": [
                {"name": "author", "role": "generator"},
                {"name": "lint", "role": "checker", "scanner_class": "static-analysis"},
                {"name": "reviewer-a", "role": "checker", "distinct_model_from": "author"}
            ]}}),
        );
    }
    let mut routes = json!({
        "gate-failure": "queue:escalations/gate-failure",
        "verification-divergence": "security-oncall",
        "admission-rejection": "queue:escalations/admission-rejection",
        "demotion": "security-oncall",
        "structural-plan-approval": "queue:escalations/structural-plan-approval",
        "untrusted-provenance": "security-oncall",
    });
    if r.chance(5)
        && let Some(o) = routes.as_object_mut()
    {
        o.remove("demotion");
    }
    doc.insert("escalation_routes".into(), routes);
    let dispositions = ["autonomous-eligible", "autonomous-eligible", "human-gated", "audited-rejection"];
    let rules: Vec<Value> = CLASSES
        .iter()
        .map(|c| {
            // C3 and above may be autonomous-eligible only with a justification (`admission.override_required`).
            let disposition = if *c <= "C2" || r.chance(20) { r.pick(&dispositions) } else { "human-gated" };
            let mut rule = json!({"signal_class": "*", "provenance": "*", "work_class": c, "disposition": disposition});
            if *c > "C2" && disposition == "autonomous-eligible" && r.chance(70) {
                rule["override_justification"] = json!("the class is mechanical here");
            }
            rule
        })
        .collect();
    doc.insert(
        "admission".into(),
        json!({
            "classification": {"tracker-vcs-event": {
                "autonomy:audit": "C1", "autonomy:mechanical": "C2", "autonomy:scoped": "C3",
                "autonomy:structural": "C4", "autonomy:untrusted": "C5"}},
            "rules": rules,
            "autonomous_concurrency": r.below(3) + 1,
            "items_per_run": r.below(5) + 1,
        }),
    );
    let main = format!("generated/{seed}.json");
    let mut documents = vec![(main.clone(), Value::Object(doc).to_string())];
    let mut layers = Vec::new();
    // A lower layer that tightens, or tries to loosen, what the security layer says.
    if r.chance(20) {
        let layer = r.pick(&["operator", "repo"]);
        let class = r.pick(&CLASSES);
        let lower = match r.below(3) {
            0 => json!({"schema_version": "1.0", "merge_policy": {class: "human"}}),
            1 => json!({"schema_version": "1.0", "merge_policy": {class: "auto"}}),
            _ => {
                json!({"schema_version": "1.0", "verification_blocking": {"ai-review": {class: r.pick(&["blocking", "advisory"])}}})
            }
        };
        let path = format!("generated/{seed}-{layer}.json");
        documents.push((path.clone(), lower.to_string()));
        layers.push(("security".to_string(), main));
        layers.push((layer.to_string(), path));
    }
    if r.chance(60) {
        documents.push((format!("generated/{seed}-history.json"), history(r).to_string()));
    }
    Case { name: format!("generated binding {seed}"), documents, layers, given: Vec::new() }
}

// ------------------------------------------------------------------ requests

/// A request's attribute values, per side and attribute name; a missing one is absent.
pub type Attributes = BTreeMap<(u8, String), String>;

pub fn side_key(side: RequestSide) -> u8 {
    match side {
        RequestSide::Principal => 0,
        RequestSide::Resource => 1,
    }
}

/// A value no binding lists.
pub const UNLISTED: &str = "grail-unlisted-value";

/// The requests asked for one question: every combination of each attribute's
/// values grail answered, an unlisted value and absence; each also asked with
/// every other declared attribute set (which the question must ignore).
pub fn requests(
    question: &str,
    vars: &[(RequestSide, String)],
    decisions: &[Decision],
    all: &Attributes,
) -> Vec<Attributes> {
    let mut choices: Vec<Vec<Option<String>>> = Vec::new();
    for (i, _) in vars.iter().enumerate() {
        let mut values: Vec<Option<String>> = Vec::new();
        for d in decisions.iter().filter(|d| d.question == question) {
            let v = Some(d.attributes[i].2.clone());
            if !values.contains(&v) {
                values.push(v);
            }
        }
        values.push(Some(UNLISTED.into()));
        values.push(None);
        choices.push(values);
    }
    let mut combos: Vec<Attributes> = vec![Attributes::new()];
    for (i, (side, name)) in vars.iter().enumerate() {
        let mut next = Vec::new();
        for c in &combos {
            for v in &choices[i] {
                let mut c = c.clone();
                if let Some(v) = v {
                    c.insert((side_key(*side), name.clone()), v.clone());
                }
                next.push(c);
            }
        }
        combos = next;
    }
    let mut out = Vec::new();
    for c in combos {
        let mut wide = c.clone();
        for (k, v) in all {
            if !vars.iter().any(|(s, n)| (side_key(*s), n.clone()) == *k) {
                wide.insert(k.clone(), v.clone());
            }
        }
        if wide != c {
            out.push(wide);
        }
        out.push(c);
    }
    out
}

/// grail's answer: the decision for exactly the request's tuple; none means denied.
pub fn grail_answer<'d>(
    question: &str,
    vars: &[(RequestSide, String)],
    decisions: &'d [Decision],
    request: &Attributes,
) -> Vec<&'d Decision> {
    decisions
        .iter()
        .filter(|d| d.question == question)
        .filter(|d| {
            vars.iter()
                .enumerate()
                .all(|(i, (side, name))| request.get(&(side_key(*side), name.clone())) == Some(&d.attributes[i].2))
        })
        .collect()
}

pub fn entity(ty: &str, attrs: &Attributes, side: u8) -> Value {
    let a: serde_json::Map<String, Value> =
        attrs.iter().filter(|((s, _), _)| *s == side).map(|((_, n), v)| (n.clone(), json!(v))).collect();
    json!({"uid": {"type": ty, "id": "request"}, "attrs": a, "parents": []})
}

pub fn uid(ty: &str, id: &str) -> EntityUid {
    EntityUid::from_str(&format!("{ty}::{}", cedar::string(id))).expect("an entity uid")
}

// ------------------------------------------------------------------ Cedar

/// A compiled deployment, as cedar-policy reads it.
pub struct Compiled {
    pub schema: Schema,
    pub policies: CedarPolicies,
    /// `entities.json`: the action entities, added to every request's.
    pub actions: Value,
}

/// The three texts of the Cedar target, parsed (nothing validated).
pub fn parse_cedar(out: &Cedar, name: &str) -> Compiled {
    let (schema, _) = Schema::from_cedarschema_str(&out.schema)
        .unwrap_or_else(|e| panic!("{name}: the schema does not parse: {e:?}\n{}", out.schema));
    let policies = CedarPolicies::from_str(&out.policies)
        .unwrap_or_else(|e| panic!("{name}: the policies do not parse: {e:?}\n{}", out.policies));
    let actions: Value = serde_json::from_str(&out.entities).expect("entities.json is JSON");
    Compiled { schema, policies, actions }
}

/// A deployment's answers compiled to Cedar and read back; the policies
/// validate in strict mode and `entities.json` conforms to the schema.
pub fn cedar_of(policy: &Policy, decisions: &[Decision], name: &str) -> Compiled {
    let out = cedar::cedar(policy, decisions);
    let compiled = parse_cedar(&out, name);
    let result = Validator::new(compiled.schema.clone()).validate(&compiled.policies, ValidationMode::Strict);
    let errors: Vec<String> = result.validation_errors().map(|e| format!("{e:?}")).collect();
    assert!(errors.is_empty(), "{name}: strict validation fails:\n{}\n{}", errors.join("\n"), out.policies);
    Entities::from_json_str(&out.entities, Some(&compiled.schema))
        .unwrap_or_else(|e| panic!("{name}: entities.json does not conform to the schema: {e:?}"));
    compiled
}

/// What Cedar is asked for one request: its principal and resource, carrying
/// the request's attributes, with the compiled actions; and the request.
pub fn cedar_request(compiled: &Compiled, action: &str, request: &Attributes, name: &str) -> (Entities, Request) {
    let mut list = vec![entity(PRINCIPAL_TYPE, request, 0), entity(RESOURCE_TYPE, request, 1)];
    list.extend(compiled.actions.as_array().cloned().unwrap_or_default());
    let entities = Entities::from_json_value(Value::Array(list), Some(&compiled.schema))
        .unwrap_or_else(|e| panic!("{name}: the request's entities do not conform: {e:?}"));
    let cedar_request = Request::new(
        uid(PRINCIPAL_TYPE, "request"),
        uid("Action", action),
        uid(RESOURCE_TYPE, "request"),
        Context::empty(),
        Some(&compiled.schema),
    )
    .unwrap_or_else(|e| panic!("{name}: the request does not conform: {e:?}"));
    (entities, cedar_request)
}

// ------------------------------------------------------------------ the requests asked

/// A question's variables, as [`requests`] and [`grail_answer`] take them.
pub fn question_vars(q: &QuestionDef) -> Vec<(RequestSide, String)> {
    q.body.vars.iter().map(|v| (v.side, v.attribute.clone())).collect()
}

/// Every attribute the schema declares, set to a value some answer names
/// ([`UNLISTED`] when none does).
pub fn declared_attributes(policy: &Policy, decisions: &[Decision]) -> Attributes {
    let mut all = Attributes::new();
    for q in &policy.questions {
        for v in &q.body.vars {
            all.entry((side_key(v.side), v.attribute.clone())).or_insert_with(|| UNLISTED.into());
        }
    }
    for d in decisions {
        for (side, name, value) in &d.attributes {
            all.insert((side_key(*side), name.clone()), value.clone());
        }
    }
    all
}

/// One request asked of a compiled deployment: grail's answer, and Cedar's inputs.
pub struct Asked {
    /// The index of the question in the policy.
    pub question: usize,
    pub request: Attributes,
    /// grail's decisions for exactly the request's tuple: none means denied.
    pub matching: Vec<Decision>,
    /// grail's answer: one of the matching decisions allows the request.
    pub allowed: bool,
    pub entities: Entities,
    pub cedar: Request,
}

/// Every request asked of one compiled deployment, question by question:
/// [`requests`] over the attributes its answers name.
pub fn asked(policy: &Policy, decisions: &[Decision], compiled: &Compiled, name: &str) -> Vec<Asked> {
    let all = declared_attributes(policy, decisions);
    let mut out = Vec::new();
    for (question, q) in policy.questions.iter().enumerate() {
        let vars = question_vars(q);
        for request in requests(&q.id, &vars, decisions, &all) {
            let matching: Vec<Decision> =
                grail_answer(&q.id, &vars, decisions, &request).into_iter().cloned().collect();
            let allowed = matching.iter().any(|d| d.allowed);
            let (entities, cedar) = cedar_request(compiled, &q.action, &request, name);
            out.push(Asked { question, request, matching, allowed, entities, cedar });
        }
    }
    out
}

/// Both derivations: grail's decision with the findings about the tuple's
/// values, and Cedar's decision with the permits that decided it and its errors.
pub fn disagreement(
    db: &Database,
    set: PolicySet,
    dep: Deployment,
    case: &Case,
    asked: &Asked,
    compiled: &Compiled,
    response: &Response,
) -> String {
    let policy = compile_policy(db, set).policy.clone();
    let question = &policy.questions[asked.question].id;
    let request = &asked.request;
    let mut s = format!("== {} / {question} / request {request:?}\n", case.name);
    for (path, text) in &case.documents {
        let _ = writeln!(s, "--- {path}\n{text}");
    }
    let _ = writeln!(
        s,
        "grail: {}",
        match asked.matching.as_slice() {
            [] => "denied: grail answers no such tuple".to_string(),
            ds => ds
                .iter()
                .map(|d| format!("{} for {:?}", if d.allowed { "allowed" } else { "denied" }, d.attributes))
                .collect::<Vec<_>>()
                .join("; "),
        }
    );
    let _ = writeln!(s, "  allow {}", policy.questions[asked.question].body.allow.text);
    let explained = grail_engine::db::explain_deployment(db, set, dep);
    for (d, reads) in &explained.explanation.answers {
        if asked.matching.contains(d) {
            for r in reads {
                let _ = writeln!(s, "    read {} = {} ({:?})", r.expr, r.value, r.from);
            }
        }
    }
    for f in &explained.explanation.findings {
        if f.outcome != Outcome::Pass && request.values().any(|v| subject_mentions(&f.subject, v)) {
            let _ = writeln!(s, "  {} {} {}: {}", f.outcome.as_str(), f.rule, f.subject, f.message);
            for step in &f.trace {
                let _ = writeln!(s, "    {} => {}", step.clause, step.result);
            }
        }
    }
    let _ = writeln!(s, "cedar: {:?}", response.decision());
    for id in response.diagnostics().reason() {
        let text = compiled.policies.policy(id).map(|p| p.to_string()).unwrap_or_default();
        let _ = writeln!(s, "  permitted by {id}: {text}");
    }
    for e in response.diagnostics().errors() {
        let _ = writeln!(s, "  error: {e}");
    }
    s
}
