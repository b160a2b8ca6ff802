//! The server driven over in-memory streams, as an editor drives it.

mod common;

use common::*;
use grail_engine::Database;
use serde_json::{Value, json};

/// An upstream-shaped binding that passes every rule, but for `min_checkers`
/// of C3 below its floor (2), on line 10.
const BELOW_FLOOR: &str = "schema_version: \"1.0\"
executor_class: self-operated
dispatch_posture: human-gated-only
isolation_bindings:
  dev-sandbox:
    L1: {substrate: per-command-sandbox, substrate_class: os-sandbox, probe_evidence: probes/dev-sandbox-l1.txt}
merge_policy: {C1: human, C2: human, C3: human, C4: human, C5: human}
verification_topology:
  C3:
    min_checkers: 1
    min_model_checkers: 1
    cross_vendor_required: false
    roles:
      - {name: author, role: generator}
      - {name: lint, role: checker, scanner_class: static-analysis}
      - {name: reviewer-a, role: checker, distinct_model_from: [author]}
verification_blocking:
  deterministic: {C1: not-required, C2: blocking, C3: blocking, C4: blocking, C5: blocking}
  ai-review: {C1: not-required, C2: not-required, C3: advisory, C4: blocking, C5: blocking}
escalation_routes:
  gate-failure: queue:escalations/gate-failure
  verification-divergence: security-oncall
  admission-rejection: queue:escalations/admission-rejection
  demotion: security-oncall
  structural-plan-approval: queue:escalations/structural-plan-approval
  untrusted-provenance: security-oncall
admission:
  classification:
    tracker-vcs-event: {autonomy:audit: C1, autonomy:mechanical: C2}
  rules:
    - {signal_class: \"*\", provenance: \"*\", work_class: C1, disposition: autonomous-eligible}
    - {signal_class: \"*\", provenance: \"*\", work_class: C2, disposition: autonomous-eligible}
  autonomous_concurrency: 1
  items_per_run: 3
";

fn codes(diagnostics: &[Value]) -> Vec<String> {
    diagnostics.iter().map(|d| d["code"].as_str().unwrap_or_default().to_string()).collect()
}

#[tokio::test]
async fn a_bad_binding_gets_its_finding_and_an_edit_clears_it() {
    let dir = TempDir::new("diagnostics");
    let mut c = TestClient::start(Database::default(), Some(&dir.0)).await;
    let uri = uri(&dir.0.join("org.yaml"));
    c.open(&uri, BELOW_FLOOR).await;
    let d = c.diagnostics(&uri).await;
    assert_eq!(codes(&d), ["floor.min_checkers"], "{d:#?}");
    assert_eq!(d[0]["range"], json!({"start": {"line": 9, "character": 18}, "end": {"line": 9, "character": 19}}));
    assert_eq!(d[0]["severity"], 1);
    let related = &d[0]["relatedInformation"][0];
    assert!(
        related["location"]["uri"].as_str().unwrap_or_default().ends_with("policies/guardrails/binding.grail"),
        "{related}"
    );

    // Replace `1` by `2`: nothing is left to report.
    let edit =
        json!([{"range": {"start": {"line": 9, "character": 18}, "end": {"line": 9, "character": 19}}, "text": "2"}]);
    c.change(&uri, 2, edit).await;
    assert_eq!(c.diagnostics(&uri).await, Vec::<Value>::new());
    c.shutdown().await;
}

#[tokio::test]
async fn hover_definition_and_references_on_a_binding_key() {
    let dir = TempDir::with_shipped_policy("hover");
    let mut c = TestClient::start(Database::default(), Some(&dir.0)).await;
    let uri = uri(&dir.0.join("org.yaml"));
    c.open(&uri, BELOW_FLOOR).await;
    c.diagnostics(&uri).await;
    let at = position_of(BELOW_FLOOR, "min_checkers: 1", 3);
    let hover = c.request("textDocument/hover", json!({"textDocument": {"uri": uri}, "position": at})).await;
    let text = hover["contents"]["value"].as_str().unwrap_or_default();
    assert!(text.contains("floor `2` (`guardrails.min_checkers[C3]`"), "{text}");
    assert!(text.contains("value `1` (set in this document, line 10)"), "{text}");
    assert_eq!(hover["range"]["start"], json!({"line": 9, "character": 4}));

    let defs = c.request("textDocument/definition", json!({"textDocument": {"uri": uri}, "position": at})).await;
    let binding = common::uri(&dir.0.join("policies/guardrails/binding.grail"));
    assert_eq!(defs[0]["uri"], json!(binding), "{defs}");
    let policy = std::fs::read_to_string(dir.0.join("policies/guardrails/binding.grail")).expect("policy");
    assert_eq!(defs[0]["range"]["start"], position_of(&policy, "min_checkers: int", 0));

    let refs = c
        .request(
            "textDocument/references",
            json!({"textDocument": {"uri": uri}, "position": at, "context": {"includeDeclaration": false}}),
        )
        .await;
    let refs = refs.as_array().cloned().unwrap_or_default();
    assert!(refs.iter().any(|r| r["uri"].as_str().unwrap_or_default().ends_with("slots.grail")), "{refs:?}");
    c.shutdown().await;
}

#[tokio::test]
async fn hover_and_definition_in_a_policy_file() {
    let dir = TempDir::with_shipped_policy("policy-hover");
    let mut c = TestClient::start(Database::default(), Some(&dir.0)).await;
    let path = dir.0.join("policies/guardrails/topology.grail");
    let text = std::fs::read_to_string(&path).expect("policy");
    let uri = uri(&path);
    c.open(&uri, &text).await;
    assert_eq!(c.diagnostics(&uri).await, Vec::<Value>::new());
    let at = position_of(&text, "model_slots(t)", 1);
    let hover = c.request("textDocument/hover", json!({"textDocument": {"uri": uri}, "position": at})).await;
    let shown = hover["contents"]["value"].as_str().unwrap_or_default();
    assert!(shown.contains("fn model_slots(t) ="), "{shown}");
    let defs = c.request("textDocument/definition", json!({"textDocument": {"uri": uri}, "position": at})).await;
    assert!(defs[0]["uri"].as_str().unwrap_or_default().ends_with("slots.grail"), "{defs}");

    // Inside `count(...)`: the built-in's two forms, at its first argument.
    let at = position_of(&text, "count(model_slots(t))", 6);
    let help = c.request("textDocument/signatureHelp", json!({"textDocument": {"uri": uri}, "position": at})).await;
    let labels: Vec<&str> =
        help["signatures"].as_array().into_iter().flatten().filter_map(|s| s["label"].as_str()).collect();
    assert_eq!(labels, vec!["count(xs)", "count(x in xs by key)"], "{help}");
    assert_eq!(help["activeParameter"], json!(0));
    assert_eq!(help["signatures"][0]["parameters"][0]["label"], json!("xs"));
    // On the name of a built-in: its hover.
    let at = position_of(&text, "count(model_slots(t))", 2);
    let hover = c.request("textDocument/hover", json!({"textDocument": {"uri": uri}, "position": at})).await;
    let shown = hover["contents"]["value"].as_str().unwrap_or_default();
    assert!(shown.contains("count(x in xs by key)") && shown.contains("distinct identities"), "{shown}");
    c.shutdown().await;
}

#[tokio::test]
async fn a_broken_policy_file_gets_located_diagnostics() {
    let dir = TempDir::with_shipped_policy("policy-diagnostics");
    let mut c = TestClient::start(Database::default(), Some(&dir.0)).await;
    let path = dir.0.join("policies/guardrails/topology.grail");
    let text = std::fs::read_to_string(&path).expect("policy");
    let uri = uri(&path);
    c.open(&uri, &text).await;
    c.diagnostics(&uri).await;
    let at = position_of(&text, "count(model_slots(t))", 6);
    let end = json!({"line": at["line"], "character": at["character"].as_u64().unwrap_or(0) + 11});
    c.change(&uri, 2, json!([{"range": {"start": at, "end": end}, "text": "model_slot"}])).await;
    let d = c.diagnostics(&uri).await;
    assert_eq!(codes(&d)[0], "unknown-name", "{d:#?}");
    assert_eq!(d[0]["range"]["start"], at);
    assert!(d[0]["message"].as_str().unwrap_or_default().contains("did you mean `model_slots`?"), "{d:#?}");
    c.shutdown().await;
}

#[tokio::test]
async fn completion_offers_the_keys_allowed_at_the_cursor() {
    let dir = TempDir::new("completion");
    let mut c = TestClient::start(Database::default(), Some(&dir.0)).await;
    let uri = uri(&dir.0.join("org.yaml"));
    let text = BELOW_FLOOR.replace("    min_model_checkers: 1\n", "    min_mo\n");
    c.open(&uri, &text).await;
    let at = position_of(&text, "min_mo\n", 6);
    let list = c.request("textDocument/completion", json!({"textDocument": {"uri": uri}, "position": at})).await;
    let items = list["items"].as_array().cloned().unwrap_or_default();
    let labels: Vec<&str> = items.iter().filter_map(|i| i["label"].as_str()).collect();
    assert_eq!(labels, ["min_model_checkers"], "keys of Topology not yet present: {list}");
    assert_eq!(items[0]["textEdit"]["newText"], "min_model_checkers: ");
    assert_eq!(items[0]["textEdit"]["range"]["start"], position_of(&text, "min_mo\n", 0));
    c.shutdown().await;
}

#[tokio::test]
async fn a_code_action_raises_the_value_to_its_floor() {
    let dir = TempDir::new("code-action");
    let mut c = TestClient::start(Database::default(), Some(&dir.0)).await;
    let uri = uri(&dir.0.join("org.yaml"));
    c.open(&uri, BELOW_FLOOR).await;
    let d = c.diagnostics(&uri).await;
    let actions = c
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": d[0]["range"], "context": {"diagnostics": d}}),
        )
        .await;
    let action = &actions[0];
    assert_eq!(action["title"], "set `verification_topology.C3.min_checkers` to its floor `2`");
    assert_eq!(action["kind"], "quickfix");
    let edits = action["edit"]["changes"][&uri].as_array().cloned().unwrap_or_default();
    let fixed = apply_edits(BELOW_FLOOR, &edits);
    assert_eq!(fixed, BELOW_FLOOR.replace("min_checkers: 1", "min_checkers: 2"));
    c.change(&uri, 2, json!([{"text": fixed}])).await;
    assert_eq!(c.diagnostics(&uri).await, Vec::<Value>::new());
    c.shutdown().await;
}

#[tokio::test]
async fn a_code_action_declares_the_checker_distinct_from_the_generator() {
    let dir = TempDir::new("code-action-generator");
    let mut c = TestClient::start(Database::default(), Some(&dir.0)).await;
    let uri = uri(&dir.0.join("org.yaml"));
    let text =
        BELOW_FLOOR.replace("min_checkers: 1", "min_checkers: 2").replace(", distinct_model_from: [author]}", "}");
    c.open(&uri, &text).await;
    let d = c.diagnostics(&uri).await;
    assert!(codes(&d).contains(&"topology.generator_independence".to_string()), "{d:#?}");
    let target: Vec<Value> = d.iter().filter(|x| x["code"] == "topology.generator_independence").cloned().collect();
    let actions = c
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": target[0]["range"], "context": {"diagnostics": target}}),
        )
        .await;
    let action = actions
        .as_array()
        .and_then(|a| a.iter().find(|x| x["title"].as_str().unwrap_or_default().contains("distinct_model_from")))
        .cloned()
        .unwrap_or_else(|| panic!("an action for the generator: {actions}"));
    let edits = action["edit"]["changes"][&uri].as_array().cloned().unwrap_or_default();
    let fixed = apply_edits(&text, &edits);
    c.change(&uri, 2, json!([{"text": fixed}])).await;
    let after = c.diagnostics(&uri).await;
    assert!(!codes(&after).contains(&"topology.generator_independence".to_string()), "{after:#?}");
    c.shutdown().await;
}

#[tokio::test]
async fn a_code_action_removes_an_unknown_key() {
    let dir = TempDir::new("code-action-unknown");
    let mut c = TestClient::start(Database::default(), Some(&dir.0)).await;
    let uri = uri(&dir.0.join("org.json"));
    let text = "{\n  \"schema_version\": \"1.0\",\n  \"colour\": \"red\"\n}\n";
    c.open(&uri, text).await;
    let d = c.diagnostics(&uri).await;
    assert!(codes(&d).contains(&"schema.unknown_key".to_string()), "{d:#?}");
    let target: Vec<Value> = d.iter().filter(|x| x["code"] == "schema.unknown_key").cloned().collect();
    let actions = c
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": target[0]["range"], "context": {"diagnostics": target}}),
        )
        .await;
    assert_eq!(actions[0]["title"], "remove `colour`");
    let edits = actions[0]["edit"]["changes"][&uri].as_array().cloned().unwrap_or_default();
    assert_eq!(apply_edits(text, &edits), "{\n  \"schema_version\": \"1.0\"\n}\n");
    c.shutdown().await;
}

#[tokio::test]
async fn an_edit_to_a_document_does_not_recompile_the_policy() {
    let (db, log) = Database::with_log();
    let dir = TempDir::new("incremental");
    let mut c = TestClient::start(db, Some(&dir.0)).await;
    let a = uri(&dir.0.join("a.yaml"));
    let b = uri(&dir.0.join("b.yaml"));
    c.open(&a, BELOW_FLOOR).await;
    c.open(&b, BELOW_FLOOR).await;
    c.diagnostics(&a).await;
    c.diagnostics(&b).await;
    log.lock().expect("log").clear();

    let edit =
        json!([{"range": {"start": {"line": 9, "character": 18}, "end": {"line": 9, "character": 19}}, "text": "2"}]);
    c.change(&a, 2, edit).await;
    assert_eq!(c.diagnostics(&a).await, Vec::<Value>::new());
    let ran = std::mem::take(&mut *log.lock().expect("log"));
    // Checked as `grail check FILE` checks it: a deployment of it alone.
    assert!(ran.iter().any(|q| q.starts_with("check_deployment")), "the edited document is checked: {ran:#?}");
    assert!(ran.iter().any(|q| q.starts_with("load_document")), "{ran:#?}");
    for q in ["compile_policy", "parse_policy", "policy_index"] {
        assert!(!ran.iter().any(|r| r.starts_with(q)), "`{q}` ran again after a document edit: {ran:#?}");
    }
    assert_eq!(
        ran.iter().filter(|q| q.starts_with("check_deployment")).count(),
        1,
        "only the edited document: {ran:#?}"
    );
    c.shutdown().await;
}

#[tokio::test]
async fn a_policy_file_deleted_while_open_leaves_the_policy() {
    let dir = TempDir::with_shipped_policy("deleted");
    let extra = dir.0.join("policies/extra.grail");
    let rule = "rule extra.version\n  require binding.schema_version == \"2.0\" else fail \"not 2.0\"\n";
    std::fs::write(&extra, rule).expect("write");
    let mut c = TestClient::start(Database::default(), Some(&dir.0)).await;
    let doc = uri(&dir.0.join("org.yaml"));
    c.open(&doc, BELOW_FLOOR).await;
    let d = c.diagnostics(&doc).await;
    assert!(codes(&d).contains(&"extra.version".to_string()), "{d:#?}");
    let extra_uri = uri(&extra);
    c.open(&extra_uri, rule).await;
    std::fs::remove_file(&extra).expect("delete");
    c.notify("workspace/didChangeWatchedFiles", json!({"changes": [{"uri": extra_uri, "type": 3}]})).await;
    c.notify("textDocument/didClose", json!({"textDocument": {"uri": extra_uri}})).await;
    let d = c.diagnostics_until(&doc, |d| !codes(d).contains(&"extra.version".to_string())).await;
    assert_eq!(codes(&d), ["floor.min_checkers"], "{d:#?}");
    c.shutdown().await;
}

#[tokio::test]
async fn an_edit_to_a_policy_file_reparses_that_file_only() {
    let (db, log) = Database::with_log();
    let dir = TempDir::with_shipped_policy("incremental-policy");
    let mut c = TestClient::start(db, Some(&dir.0)).await;
    let path = dir.0.join("policies/guardrails/topology.grail");
    let text = std::fs::read_to_string(&path).expect("policy");
    let policy = uri(&path);
    let doc = uri(&dir.0.join("org.yaml"));
    c.open(&doc, BELOW_FLOOR).await;
    c.open(&policy, &text).await;
    c.diagnostics(&policy).await;
    log.lock().expect("log").clear();

    let at = position_of(&text, "counts distinct names", 0);
    c.change(&policy, 2, json!([{"range": {"start": at, "end": at}, "text": "really "}])).await;
    assert_eq!(c.diagnostics(&policy).await, Vec::<Value>::new());
    let d = c.diagnostics(&doc).await;
    assert_eq!(codes(&d), ["floor.min_checkers"], "{d:#?}");
    let ran = std::mem::take(&mut *log.lock().expect("log"));
    let parsed: Vec<&String> = ran.iter().filter(|q| q.starts_with("parse_policy")).collect();
    assert_eq!(parsed.len(), 1, "only the edited file is parsed again: {ran:#?}");
    assert!(ran.iter().any(|q| q.starts_with("compile_policy")), "{ran:#?}");
    c.shutdown().await;
}

#[tokio::test]
async fn formatting_a_policy_file_is_grail_fmt() {
    let dir = TempDir::with_shipped_policy("formatting");
    let mut c = TestClient::start(Database::default(), Some(&dir.0)).await;
    let path = dir.0.join("policies/guardrails/vocabulary.grail");
    let formatted = std::fs::read_to_string(&path).expect("policy");
    let messy =
        formatted.replace("enum Merge tightest_first { human auto }", "enum Merge   tightest_first {human\n  auto }");
    assert_ne!(messy, formatted);
    let uri = uri(&path);
    c.open(&uri, &messy).await;
    let params = json!({"textDocument": {"uri": uri}, "options": {"tabSize": 2, "insertSpaces": true}});
    let edits = c.request("textDocument/formatting", params.clone()).await;
    let edits = edits.as_array().cloned().unwrap_or_default();
    assert_eq!(apply_edits(&messy, &edits), formatted);
    // Half-typed: nothing is formatted.
    c.change(&uri, 2, json!([{"text": "enum Merge {"}])).await;
    assert_eq!(c.request("textDocument/formatting", params).await, Value::Null);
    c.shutdown().await;
}

#[tokio::test]
async fn a_markdown_work_item_is_checked_and_a_readme_is_not() {
    let dir = TempDir::new("markdown");
    let mut c = TestClient::start(Database::default(), Some(&dir.0)).await;
    let item = include_str!("../../examples/org/items/tracker-issue-412.md");
    let uri_item = uri(&dir.0.join("item.md"));
    c.open(&uri_item, item).await;
    assert_eq!(c.diagnostics(&uri_item).await, Vec::<Value>::new());
    let at = position_of(item, "\"C2\"", 1);
    let end = json!({"line": at["line"], "character": at["character"].as_u64().unwrap_or(0) + 2});
    c.change(&uri_item, 2, json!([{"range": {"start": at, "end": end}, "text": "C9"}])).await;
    let d = c.diagnostics(&uri_item).await;
    assert_eq!(codes(&d), ["envelope.enum"], "{d:#?}");
    assert_eq!(d[0]["range"]["start"]["line"], at["line"]);

    let readme = uri(&dir.0.join("README.md"));
    c.open(&readme, "# Notes\n\nNothing to check here.\n").await;
    assert_eq!(c.diagnostics(&readme).await, Vec::<Value>::new());
    c.shutdown().await;
}

#[tokio::test]
async fn the_fix_all_action_fixes_every_fixable_finding_at_once() {
    let dir = TempDir::new("fix-all");
    let mut c = TestClient::start(Database::default(), Some(&dir.0)).await;
    let kinds = c.capabilities["codeActionProvider"]["codeActionKinds"].clone();
    assert!(kinds.as_array().into_iter().flatten().any(|k| k == "source.fixAll.grail"), "{kinds}");
    let uri = uri(&dir.0.join("org.yaml"));
    // Below its floor, and an unknown key: two findings, each with its fix.
    let text = BELOW_FLOOR.replace("executor_class: self-operated\n", "executor_class: self-operated\ncolour: red\n");
    c.open(&uri, &text).await;
    let d = c.diagnostics(&uri).await;
    let mut found = codes(&d);
    found.sort();
    assert_eq!(found, ["floor.min_checkers", "schema.unknown_key"], "{d:#?}");
    // Asked for by a save action: the range is the cursor, on neither finding.
    let at = json!({"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}});
    let actions = c
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": at, "context": {"diagnostics": [], "only": ["source.fixAll"]}}),
        )
        .await;
    let actions = actions.as_array().cloned().unwrap_or_default();
    assert_eq!(actions.len(), 1, "only the fix-all action: {actions:#?}");
    let action = &actions[0];
    assert_eq!(action["kind"], "source.fixAll.grail");
    assert_eq!(action["title"], "fix 2 findings");
    let mut diagnosed = codes(action["diagnostics"].as_array().expect("the findings it fixes"));
    diagnosed.sort();
    assert_eq!(diagnosed, found);
    let edits = action["edit"]["changes"][&uri].as_array().cloned().unwrap_or_default();
    let fixed = apply_edits(&text, &edits);
    assert_eq!(fixed, BELOW_FLOOR.replace("min_checkers: 1", "min_checkers: 2"));
    c.change(&uri, 2, json!([{"text": fixed}])).await;
    assert_eq!(c.diagnostics(&uri).await, Vec::<Value>::new());

    // Nothing left to fix: no action.
    let actions = c
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": at, "context": {"diagnostics": [], "only": ["source.fixAll"]}}),
        )
        .await;
    assert_eq!(actions, json!([]));
    c.shutdown().await;
}

/// A policy of the test's own: a map whose missing keys take matrix defaults,
/// and a map of records whose missing keys do too.
const DEFAULTS: &str = "/// A risk tier.
enum Tier ordered { T1 T2 T3 }

/// Who opens a gate: `human` is tighter than `auto`.
enum Gate tightest_first { human auto }

/// Shipped defaults per tier.
matrix limits by Tier {
  columns gate: Gate, reviewers: int, audited: bool
  T1: auto  1 false
  T2: human 1 false
  T3: human 2 true
}

/// A gate configuration.
document Conf as conf where kind absent {
  on syntax rule conf.syntax
  on duplicate_key rule conf.duplicate_key
  on unknown_key rule conf.unknown_key
  on type rule conf.type
  version: string
  /// Per tier, who opens the gate.
  gates?: map Tier -> Gate
    default limits.gate
    ceiling limits.gate rule conf.gate_cap
  /// Per tier, its review.
  reviews?: map Tier -> Review
}

/// The review of one tier.
record Review {
  reviewers?: int >= 1
    default limits.reviewers
    floor limits.reviewers rule conf.reviewers
  audited?: bool default limits.audited
  names?: list string
}
";

#[tokio::test]
async fn an_inlay_hint_shows_the_default_of_a_key_left_out() {
    let dir = TempDir::new("inlay-hints");
    std::fs::create_dir_all(dir.0.join("policy")).expect("a folder");
    std::fs::write(dir.0.join("policy/policy.grail"), DEFAULTS).expect("write");
    std::fs::write(dir.0.join("grail.toml"), "[policy]\nfolders = [\"policy\"]\n").expect("write");
    let mut c = TestClient::start(Database::default(), Some(&dir.0)).await;
    assert_eq!(c.capabilities["inlayHintProvider"], json!(true));
    let uri = uri(&dir.0.join("conf.yaml"));
    let good = "# The gates.\nversion: \"1\"\ngates: {T1: auto}\nreviews:\n  T3:\n    names: [ana, bo]\n";
    let text = good.replace("gates: {T1: auto}\n", "");
    assert_ne!(text, good);
    c.open(&uri, &text).await;
    assert_eq!(c.diagnostics(&uri).await, Vec::<Value>::new());
    let whole = json!({"start": {"line": 0, "character": 0}, "end": {"line": 40, "character": 0}});
    let hints = c.request("textDocument/inlayHint", json!({"textDocument": {"uri": uri}, "range": whole})).await;
    let hints = hints.as_array().cloned().unwrap_or_default();
    let labels: Vec<&str> = hints.iter().filter_map(|h| h["label"].as_str()).collect();
    // T3's review leaves its two keys with defaults out as well.
    let t3 = "reviewers: 2, audited: true (default)";
    assert_eq!(labels, ["gates: {T1: auto, T2: human, T3: human} (default)", t3], "{hints:#?}");
    // At the end of the first line of the mapping, after the comments above it.
    assert_eq!(hints[0]["position"], position_of(&text, "version: \"1\"", 12));
    let tooltip = hints[0]["tooltip"]["value"].as_str().unwrap_or_default();
    assert!(tooltip.contains("- `T2`: `human`, from the policy's default"), "{tooltip}");
    // A key left out inside an entry: at the end of the entry's key line.
    assert_eq!(hints[1]["position"], position_of(&text, "  T3:", 5));
    let tooltip = hints[1]["tooltip"]["value"].as_str().unwrap_or_default();
    assert!(tooltip.starts_with("left out of `reviews.T3`"), "{tooltip}");
    assert!(tooltip.contains("- `reviewers`: `2`, from the policy's default"), "{tooltip}");

    // Set in the document: no hint for it; T3's stays.
    c.change(&uri, 2, json!([{"text": good}])).await;
    c.diagnostics(&uri).await;
    let hints = c.request("textDocument/inlayHint", json!({"textDocument": {"uri": uri}, "range": whole})).await;
    let labels: Vec<&str> = hints.as_array().into_iter().flatten().filter_map(|h| h["label"].as_str()).collect();
    assert_eq!(labels, [t3]);
    // And T3 stating its reviewers: the other remains.
    let stated = good.replace("  T3:\n    names:", "  T3:\n    reviewers: 3\n    names:");
    assert_ne!(stated, good);
    c.change(&uri, 3, json!([{"text": stated}])).await;
    c.diagnostics(&uri).await;
    let hints = c.request("textDocument/inlayHint", json!({"textDocument": {"uri": uri}, "range": whole})).await;
    let labels: Vec<&str> = hints.as_array().into_iter().flatten().filter_map(|h| h["label"].as_str()).collect();
    assert_eq!(labels, ["audited: true (default)"]);
    c.shutdown().await;
}

/// The editor is not CI: a FAIL is an error, an UNKNOWN (missing evidence) a
/// warning, whatever `grail check` makes of it (where it fails the check
/// unless allowed). The policy states both outcomes (tests/policies/stated-unknown).
#[tokio::test]
async fn a_fail_and_an_unknown_are_errors_and_an_allowed_unknown_a_warning() {
    let dir = TempDir::new("unknown-warning");
    let policy = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/policies/stated-unknown/policy.grail"),
    )
    .expect("the policy");
    std::fs::create_dir_all(dir.0.join("policy")).expect("a folder");
    std::fs::write(dir.0.join("policy/policy.grail"), policy).expect("write");
    // A deployment whose UNKNOWN outcomes are allowed, as `grail check` allows them.
    std::fs::write(
        dir.0.join("grail.toml"),
        "[policy]\nfolders = [\"policy\"]\n\n[deployments.known_gap]\ndocuments = [\"allowed.yaml\"]\nallow_unknown = true\n",
    )
    .expect("write");
    std::fs::write(dir.0.join("allowed.yaml"), "broken: true\n").expect("write");
    let severities = |d: &[Value]| {
        let mut s: Vec<(String, i64)> = d
            .iter()
            .map(|d| (d["code"].as_str().unwrap_or_default().to_string(), d["severity"].as_i64().unwrap_or_default()))
            .collect();
        s.sort();
        s
    };
    let mut c = TestClient::start(Database::default(), Some(&dir.0)).await;
    let allowed = uri(&dir.0.join("allowed.yaml"));
    let d = c.diagnostics(&allowed).await;
    // 1 is an error, 2 a warning.
    assert_eq!(severities(&d), [("s.broken".to_string(), 1), ("s.evidence".to_string(), 2)], "{d:#?}");
    // Checked alone, as `grail check FILE` checks it: an UNKNOWN fails the check, so it is an error.
    let uri = uri(&dir.0.join("doc.yaml"));
    c.open(&uri, "broken: true\n").await;
    let d = c.diagnostics(&uri).await;
    assert_eq!(severities(&d), [("s.broken".to_string(), 1), ("s.evidence".to_string(), 1)], "{d:#?}");
    c.shutdown().await;
}
