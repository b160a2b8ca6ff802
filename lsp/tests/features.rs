//! Outline, workspace symbols, folding, rename, document links and the
//! diagnostics of a name declared twice, over the protocol.

mod common;

use common::*;
use grail_engine::Database;
use serde_json::{Value, json};

fn policy(dir: &TempDir, file: &str) -> (String, String) {
    let path = dir.0.join("policies/guardrails").join(file);
    (uri(&path), std::fs::read_to_string(&path).expect("a policy file"))
}

#[tokio::test]
async fn the_outline_of_a_policy_file_lists_its_items_and_their_members() {
    let dir = TempDir::with_shipped_policy("outline");
    let mut c = TestClient::start(Database::default(), Some(&dir.0)).await;
    let (u, text) = policy(&dir, "vocabulary.grail");
    c.open(&u, &text).await;
    let symbols = c.request("textDocument/documentSymbol", json!({"textDocument": {"uri": u}})).await;
    let symbols = symbols.as_array().cloned().unwrap_or_default();
    let merge = symbols.iter().find(|s| s["name"] == "Merge").expect("enum Merge in the outline");
    assert_eq!(merge["kind"], 10, "an enum: {merge}");
    let variants: Vec<&str> =
        merge["children"].as_array().into_iter().flatten().filter_map(|v| v["name"].as_str()).collect();
    assert_eq!(variants, ["human", "auto"], "{merge}");
    assert_eq!(merge["selectionRange"]["start"], position_of(&text, "Merge tightest_first", 0));
    c.shutdown().await;
}

#[tokio::test]
async fn workspace_symbols_find_rules_functions_and_kinds() {
    let dir = TempDir::with_shipped_policy("workspace-symbols");
    let mut c = TestClient::start(Database::default(), Some(&dir.0)).await;
    let found = c.request("workspace/symbol", json!({"query": "model_slots"})).await;
    let found = found.as_array().cloned().unwrap_or_default();
    let f = found.iter().find(|s| s["name"] == "model_slots").expect("the function");
    assert_eq!(f["kind"], 12, "a function: {f}");
    assert!(f["location"]["uri"].as_str().unwrap_or_default().ends_with("slots.grail"), "{f}");
    let rules = c.request("workspace/symbol", json!({"query": "checker_count"})).await;
    assert!(rules.as_array().into_iter().flatten().any(|s| s["name"] == "topology.checker_count"), "{rules}");
    c.shutdown().await;
}

#[tokio::test]
async fn every_multi_line_item_folds() {
    let dir = TempDir::with_shipped_policy("folding");
    let mut c = TestClient::start(Database::default(), Some(&dir.0)).await;
    let (u, text) = policy(&dir, "binding.grail");
    c.open(&u, &text).await;
    let folds = c.request("textDocument/foldingRange", json!({"textDocument": {"uri": u}})).await;
    let folds = folds.as_array().cloned().unwrap_or_default();
    let document = position_of(&text, "document Binding as binding", 0);
    // The document kind, from its documentation comment to its closing brace.
    let line = document["line"].as_u64();
    let fold = folds
        .iter()
        .find(|f| f["startLine"].as_u64() <= line && f["endLine"].as_u64() > line.map(|l| l + 10))
        .unwrap_or_else(|| panic!("the document kind folds: {folds:?}"));
    assert!(fold["endLine"].as_u64() > fold["startLine"].as_u64(), "{fold}");
    c.shutdown().await;
}

#[tokio::test]
async fn a_function_is_renamed_across_the_policy() {
    let dir = TempDir::with_shipped_policy("rename");
    let mut c = TestClient::start(Database::default(), Some(&dir.0)).await;
    let (u, text) = policy(&dir, "topology.grail");
    c.open(&u, &text).await;
    let at = position_of(&text, "model_slots(t)", 1);
    let prepared = c.request("textDocument/prepareRename", json!({"textDocument": {"uri": u}, "position": at})).await;
    assert_eq!(prepared["start"], position_of(&text, "model_slots(t)", 0), "{prepared}");
    let edit = c
        .request(
            "textDocument/rename",
            json!({"textDocument": {"uri": u}, "position": at, "newName": "slots_of_models"}),
        )
        .await;
    let changes = edit["changes"].as_object().cloned().unwrap_or_default();
    let slots = changes.iter().find(|(k, _)| k.ends_with("slots.grail")).expect("the declaration is renamed");
    let slots_text = std::fs::read_to_string(dir.0.join("policies/guardrails/slots.grail")).expect("slots.grail");
    let renamed = apply_edits(&slots_text, slots.1.as_array().expect("edits"));
    assert!(renamed.contains("fn slots_of_models("), "{renamed}");
    let here = apply_edits(&text, changes[&u].as_array().expect("edits in topology.grail"));
    assert!(!here.contains("model_slots"), "every use is renamed: {here}");

    let refused = c
        .request("textDocument/rename", json!({"textDocument": {"uri": u}, "position": at, "newName": "not a name"}))
        .await;
    assert!(
        refused["error"]["message"].as_str().unwrap_or_default().contains("`not a name` is not a name"),
        "{refused}"
    );
    c.shutdown().await;
}

#[tokio::test]
async fn an_attached_file_is_a_link_to_its_file() {
    let dir = TempDir::new("links");
    let example = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/recovery");
    for name in ["state.yaml", "step-002.yaml", "plan.md"] {
        std::fs::copy(example.join(name), dir.0.join(name)).expect("copy the recovery example");
    }
    let mut c = TestClient::start(Database::default(), Some(&dir.0)).await;
    let path = dir.0.join("state.yaml");
    let text = std::fs::read_to_string(&path).expect("state.yaml");
    let u = uri(&path);
    c.open(&u, &text).await;
    let links = c.request("textDocument/documentLink", json!({"textDocument": {"uri": u}})).await;
    let links = links.as_array().cloned().unwrap_or_default();
    for (name, written) in [("step-002.yaml", "history: step-002.yaml"), ("plan.md", "plan: plan.md")] {
        let target = uri(&dir.0.join(name));
        let link = links.iter().find(|l| l["target"] == json!(target)).unwrap_or_else(|| panic!("{links:#?}"));
        let start = position_of(&text, written, 0);
        assert_eq!(link["range"]["start"]["line"], start["line"], "{link}");
    }
    c.shutdown().await;
}

#[tokio::test]
async fn a_rule_id_declared_twice_is_reported_in_the_file_where_it_is_typed() {
    let dir = TempDir::with_shipped_policy("duplicate-rule");
    let mut c = TestClient::start(Database::default(), Some(&dir.0)).await;
    // `admission.grail` comes first in the policy; the rule it declares twice lives in `topology.grail`.
    let (u, text) = policy(&dir, "admission.grail");
    c.open(&u, &text).await;
    assert_eq!(c.diagnostics(&u).await, Vec::<Value>::new());
    let typed = "\nrule topology.checker_count\n  require true else fail \"never\"\n";
    let end = LineEnd::of(&text);
    c.change(&u, 2, json!([{"range": {"start": end, "end": end}, "text": typed}])).await;
    let d = c.diagnostics_until(&u, |d| !d.is_empty()).await;
    assert!(d.iter().any(|d| d["code"] == "duplicate-rule"), "{d:#?}");
    let at = d.iter().find(|d| d["code"] == "duplicate-rule").expect("found");
    let full = format!("{text}{typed}");
    assert_eq!(at["range"]["start"], position_of(&full, "topology.checker_count", 0), "{at}");
    c.shutdown().await;
}

/// The position of the end of a text.
struct LineEnd;

impl LineEnd {
    fn of(text: &str) -> Value {
        let p = grail_lsp::position::LineIndex::new(text).position(text, text.len());
        json!({"line": p.line, "character": p.character})
    }
}

/// A rule with an astral character before a message's hole, so that columns count UTF-16 units.
const CAFE: &str = "/// Checks the café.
rule extra.cafe
  for c, t in binding.verification_topology
  require count(model_slots(t)) >= 0 else fail \"𝄞 {c} naïve\"
";

/// The protocol's relative encoding decoded: (line, start, length, type, modifiers) per token.
fn decode(data: &[Value], legend: &[Value]) -> Vec<(u64, u64, u64, String, u64)> {
    let numbers: Vec<u64> = data.iter().map(|v| v.as_u64().expect("a number")).collect();
    assert_eq!(numbers.len() % 5, 0, "five numbers a token: {numbers:?}");
    let (mut line, mut start) = (0, 0);
    let mut out = Vec::new();
    for t in numbers.chunks(5) {
        line += t[0];
        start = if t[0] == 0 { start + t[1] } else { t[1] };
        let kind = legend[t[3] as usize].as_str().expect("a type name").to_string();
        out.push((line, start, t[2], kind, t[4]));
    }
    out
}

#[tokio::test]
async fn semantic_tokens_of_a_policy_file_are_delta_encoded_in_utf16() {
    let dir = TempDir::with_shipped_policy("semantic-tokens");
    let path = dir.0.join("policies/extra.grail");
    std::fs::write(&path, CAFE).expect("write");
    let mut c = TestClient::start(Database::default(), Some(&dir.0)).await;
    let u = uri(&path);
    c.open(&u, CAFE).await;
    assert_eq!(c.diagnostics(&u).await, Vec::<Value>::new());
    let legend = c.capabilities["semanticTokensProvider"]["legend"].clone();
    let types = legend["tokenTypes"].as_array().cloned().unwrap_or_default();
    assert_eq!(legend["tokenModifiers"], json!(["declaration", "documentation"]));
    let tokens = c.request("textDocument/semanticTokens/full", json!({"textDocument": {"uri": u}})).await;
    let decoded = decode(tokens["data"].as_array().expect("data"), &types);
    let t = |line, start, len, kind: &str, modifiers| (line, start, len, kind.to_string(), modifiers);
    assert_eq!(
        decoded,
        [
            t(0, 0, 20, "comment", 2),
            t(1, 0, 4, "keyword", 0),
            t(1, 5, 10, "namespace", 1),
            t(2, 2, 3, "keyword", 0),
            t(2, 6, 1, "variable", 1),
            t(2, 9, 1, "variable", 1),
            t(2, 11, 2, "keyword", 0),
            t(2, 14, 7, "type", 0),
            t(2, 22, 21, "property", 0),
            t(3, 2, 7, "keyword", 0),
            t(3, 10, 5, "keyword", 0),
            t(3, 16, 11, "function", 0),
            t(3, 28, 1, "variable", 0),
            t(3, 32, 2, "operator", 0),
            t(3, 35, 1, "number", 0),
            t(3, 37, 4, "keyword", 0),
            t(3, 42, 4, "keyword", 0),
            // `"𝄞 `: the astral character counts two units.
            t(3, 47, 4, "string", 0),
            t(3, 52, 1, "variable", 0),
            t(3, 54, 7, "string", 0),
        ]
    );
    c.shutdown().await;
}
