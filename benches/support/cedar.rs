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

/// The time of every check here: nine days after the examples' and the
/// generated transcripts' capture (2026-08-11), so `probe.stale` decides the
/// same on every run and proven surfaces stay proven.
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

/// A probe transcript that proves its surface isolated, for the hosts it may reach.
fn good_probe(rng: &mut Rng, reachable: &[String]) -> Value {
    let mut hosts: Vec<String> = vec!["canary.example.net".into()];
    hosts.extend(reachable.iter().map(|h| h.trim_end_matches('.').to_lowercase()));
    if hosts.len() < 2 {
        hosts.push("canary-2.example.net".into());
    }
    let substituted = rng.chance(50);
    let outcome = if substituted { "peer-substituted" } else { "dns-unresolved" };
    let mut host = hosts.clone();
    let mut family = vec!["ipv4"; hosts.len()];
    let mut exit = vec!["0"; hosts.len()];
    let mut outcomes = vec![outcome; hosts.len()];
    let mut outer: Vec<String> = (0..hosts.len()).map(|i| format!("AA:{i:02}")).collect();
    let mut inner: Vec<String> =
        (0..hosts.len()).map(|i| if substituted { format!("BB:{i:02}") } else { "-".to_string() }).collect();
    if rng.chance(30) {
        // The first host has no IPv6 address: recorded `not-applicable`, and no target.
        host.push(hosts[0].clone());
        family.push("ipv6");
        exit.push("6");
        outcomes.push("not-applicable");
        outer.push("-".into());
        inner.push("-".into());
    }
    json!({
        "captured_at": "2026-08-11T09:00:00Z",
        "client_ready": true,
        "outer_context_networked": true,
        "assertions": {
            "egress_denied": {
                "host": host.join(","),
                "address_family": family.join(","),
                "outer_exit_code": exit.join(","),
                "transport_outcome": outcomes.join(","),
                "outer_fingerprint": outer.join(","),
                "inner_fingerprint": inner.join(","),
                "origin_bytes_read": vec!["0"; host.len()].join(","),
            },
            "credentials_absent": {"credential": "AWS_SECRET_ACCESS_KEY,GH_TOKEN", "found": "0,0"},
            "workspace_host_write_contained": {
                "canary_shapes": "plain,dotfile,git-relative",
                "host_post_absent": "0",
                "git_config_digest_pre": "sha256:8c1f0e",
                "git_config_digest_post": "sha256:8c1f0e",
            }
        }
    })
}

/// One way a transcript can fail to prove its surface.
fn break_probe(rng: &mut Rng, probe: &mut Value) {
    let egress = "/assertions/egress_denied";
    match rng.below(12) {
        7 => probe["outer_context_networked"] = json!(false),
        8 => {
            let e = probe.pointer_mut(egress).expect("egress block");
            let n = e["host"].as_str().unwrap_or_default().split(',').count();
            e["outer_exit_code"] = json!(vec!["7"; n].join(","));
        }
        9 => probe["assertions"]["credentials_absent"]["found"] = json!("0,1"),
        10 => probe["assertions"]["workspace_host_write_contained"]["host_workspace_observable"] = json!(false),
        11 => probe["assertions"]["workspace_host_write_contained"]["canary_shapes"] = json!("plain,hidden,nested"),
        0 => probe["client_ready"] = json!(false),
        1 => {
            if let Some(o) = probe.as_object_mut() {
                o.remove("client_ready");
            }
        }
        2 => {
            // The first host was reached: same fingerprint inside and out, bytes read.
            let e = probe.pointer_mut(egress).expect("egress block");
            let outer = e["outer_fingerprint"].as_str().unwrap_or_default().to_string();
            e["inner_fingerprint"] = json!(outer);
            let n = outer.split(',').count();
            e["origin_bytes_read"] = json!(vec!["512"; n].join(","));
        }
        3 => {
            if let Some(o) = probe.pointer_mut("/assertions").and_then(Value::as_object_mut) {
                o.remove("workspace_host_write_contained");
            }
        }
        4 => probe["assertions"]["workspace_host_write_contained"]["host_post_absent"] = json!("1"),
        5 => probe["assertions"]["workspace_host_write_contained"]["canary_shapes"] = json!("plain,plain"),
        _ => probe.pointer_mut(egress).expect("egress block")["transport_outcome"] = json!("teleported"),
    }
}

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

/// A binding over the vocabulary of the shipped library, with mutations of
/// merge policies, gates, the executor, admission and surfaces (probes inline).
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
    match r.below(10) {
        0 => {}
        1 => {
            doc.insert("executor_class".into(), json!("vendor-hosted"));
        }
        _ => {
            doc.insert("executor_class".into(), json!("self-operated"));
        }
    }
    if r.chance(85) {
        // Classes above the ceiling (C4, C5) are bound `auto` rarely: that fails `merge.ceiling`.
        let mut merge = serde_json::Map::new();
        for (i, class) in CLASSES.iter().enumerate() {
            if r.chance(50) {
                let auto = if i < 3 { r.chance(65) } else { r.chance(10) };
                merge.insert(class.to_string(), json!(if auto { "auto" } else { "human" }));
            }
        }
        doc.insert("merge_policy".into(), Value::Object(merge));
    }
    let map = |r: &mut Rng, percent: u64, values: &[&str]| -> Value {
        let m: serde_json::Map<String, Value> =
            some_classes(r, percent).into_iter().map(|c| (c.to_string(), json!(r.pick(values)))).collect();
        Value::Object(m)
    };
    let gates = ["blocking", "blocking", "blocking", "blocking", "blocking", "blocking", "advisory", "advisory", "off"];
    if r.chance(70) {
        doc.insert("verification_blocking".into(), map(r, 40, &gates));
    }
    if r.chance(70) {
        doc.insert("security_review".into(), map(r, 40, &gates));
    }
    if r.chance(95) {
        doc.insert("escalation_routes".into(), json!({"verification-divergence": "security-oncall"}));
    }
    if r.chance(25) {
        doc.insert(
            "verification_topology".into(),
            json!({"C3": {"roles": [
                {"name": "author", "role": "generator"},
                {"name": "lint", "role": "checker", "scanner_class": "static-analysis"},
                {"name": "reviewer-a", "role": "checker", "distinct_model_from": ["author"]}
            ]}}),
        );
    }
    if r.chance(85) {
        let mut surfaces = serde_json::Map::new();
        for _ in 0..r.below(4) {
            let name = r.pick(SURFACES).to_string();
            let level = r.pick(&["L1", "L2", "L2", "L3", "L3"]);
            let mut s = serde_json::Map::new();
            s.insert("level".into(), json!(level));
            let reachable: Vec<String> = if r.chance(85) {
                let mut hosts: Vec<String> = Vec::new();
                for h in HOSTS {
                    if r.chance(40) {
                        // Sometimes written as the probe does not: upper case, a trailing dot.
                        hosts.push(if r.chance(20) { format!("{}.", h.to_uppercase()) } else { h.to_string() });
                    }
                }
                s.insert("component_reachable_hosts".into(), json!(hosts));
                hosts
            } else {
                Vec::new()
            };
            if r.chance(75) {
                let mut probe = good_probe(r, &reachable);
                if r.chance(30) {
                    break_probe(r, &mut probe);
                }
                s.insert("probe".into(), probe);
            }
            surfaces.insert(name, Value::Object(s));
        }
        doc.insert("isolation".into(), json!({"surfaces": surfaces}));
    }
    if r.chance(75) {
        let mut admission = serde_json::Map::new();
        if r.chance(90) {
            admission.insert("autonomous_classes".into(), json!(some_classes(r, 45)));
        }
        if r.chance(30) {
            admission.insert("autonomous_concurrency".into(), json!(r.below(3) + 1));
        }
        doc.insert("admission".into(), Value::Object(admission));
    }
    let mut documents = vec![(format!("generated/{seed}.json"), Value::Object(doc).to_string())];
    // A lower layer that tightens, or tries to loosen, what the first one says.
    if r.chance(20) {
        let layer = r.pick(&["operator", "repo"]);
        let class = r.pick(&CLASSES);
        let lower = match r.below(3) {
            0 => json!({"schema_version": "1.0", "layer": layer, "merge_policy": {class: "human"}}),
            1 => json!({"schema_version": "1.0", "layer": layer, "merge_policy": {class: "auto"}}),
            _ => {
                json!({"schema_version": "1.0", "layer": layer, "security_review": {class: r.pick(&["blocking", "advisory"])}})
            }
        };
        documents.push((format!("generated/{seed}-{layer}.json"), lower.to_string()));
    }
    if r.chance(60) {
        documents.push((format!("generated/{seed}-history.json"), history(r).to_string()));
    }
    Case { name: format!("generated binding {seed}"), documents, layers: Vec::new(), given: Vec::new() }
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
