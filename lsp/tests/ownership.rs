//! Which files the server judges (docs/workspace.md, "Which files the editor
//! judges"): a document named by a deployment of `grail.toml`, or one a kind
//! of the policy picks that no well-known format claims. A `package.json`
//! and a GitHub workflow are JSON and YAML without a `kind` key, which the
//! shipped library's security binding would pick: they get nothing, and
//! nothing stays shown of a file the server stopped judging.

mod common;

use common::*;
use grail_engine::Database;
use serde_json::{Value, json};

const PACKAGE_JSON: &str = r#"{
  "name": "storefront",
  "version": "1.4.0",
  "scripts": { "test": "jest" },
  "dependencies": { "express": "^4.19.2" }
}
"#;

const WORKFLOW: &str = "name: release
on:
  push:
    tags: [\"v*\"]
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: cargo build --release --locked
";

/// A Kubernetes manifest: a mapping with a `kind` no kind of the shipped library selects.
const MANIFEST: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: storefront
spec:
  replicas: 2
";

/// A binding with failures of its own (examples/bindings/identical-checkers.yaml).
fn binding() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/bindings/identical-checkers.yaml"))
        .expect("the example binding")
}

fn codes(diagnostics: &[Value]) -> Vec<String> {
    let mut c: Vec<String> = diagnostics.iter().map(|d| d["code"].as_str().unwrap_or_default().to_string()).collect();
    c.sort();
    c.dedup();
    c
}

/// The titles of the code lenses of a file.
async fn lenses(c: &mut TestClient, uri: &str) -> Vec<String> {
    let answer = c.request("textDocument/codeLens", json!({"textDocument": {"uri": uri}})).await;
    answer.as_array().into_iter().flatten().filter_map(|l| l["command"]["title"].as_str().map(str::to_string)).collect()
}

/// A folder with `grail.toml` naming `guardrails/security.yaml` as the security layer of
/// deployment `storefront`, a `package.json` and a release workflow beside it.
fn workspace(name: &str) -> TempDir {
    let dir = TempDir::new(name);
    std::fs::create_dir_all(dir.0.join("guardrails")).expect("mkdir");
    std::fs::create_dir_all(dir.0.join(".github/workflows")).expect("mkdir");
    std::fs::write(dir.0.join("guardrails/security.yaml"), binding()).expect("write");
    std::fs::write(dir.0.join("package.json"), PACKAGE_JSON).expect("write");
    std::fs::write(dir.0.join(".github/workflows/release.yml"), WORKFLOW).expect("write");
    let toml = "[deployments.storefront]\nlayers = { security = \"guardrails/security.yaml\" }\n";
    std::fs::write(dir.0.join("grail.toml"), toml).expect("write");
    dir
}

#[tokio::test]
async fn with_a_workspace_file_only_the_binding_is_judged() {
    let dir = workspace("owned");
    let mut c = TestClient::start(Database::default(), Some(&dir.0)).await;
    let binding_uri = uri(&dir.0.join("guardrails/security.yaml"));
    let package = uri(&dir.0.join("package.json"));
    let workflow = uri(&dir.0.join(".github/workflows/release.yml"));
    c.open(&binding_uri, &binding()).await;
    let d = c.diagnostics_until(&binding_uri, |d| !d.is_empty()).await;
    assert!(codes(&d).contains(&"topology.duplicate_scanner_class".to_string()), "{d:#?}");

    c.open(&package, PACKAGE_JSON).await;
    assert_eq!(c.diagnostics(&package).await, Vec::<Value>::new(), "a package manifest is not grail's");
    c.open(&workflow, WORKFLOW).await;
    assert_eq!(c.diagnostics(&workflow).await, Vec::<Value>::new(), "a GitHub workflow is not grail's");

    // Nor does it answer anything else about them.
    let at = |uri: &str| json!({"textDocument": {"uri": uri}, "position": {"line": 1, "character": 4}});
    assert_eq!(c.request("textDocument/hover", at(&package)).await, Value::Null);
    assert_eq!(c.request("textDocument/hover", at(&workflow)).await, Value::Null);
    let completion = c.request("textDocument/completion", at(&workflow)).await;
    assert_eq!(completion, Value::Null, "{completion}");
    let whole = json!({"start": {"line": 0, "character": 0}, "end": {"line": 20, "character": 0}});
    let hints = c.request("textDocument/inlayHint", json!({"textDocument": {"uri": package}, "range": whole})).await;
    assert_eq!(hints, Value::Null, "{hints}");

    // The binding says which deployment it belongs to; the others say nothing.
    assert_eq!(
        lenses(&mut c, &binding_uri).await,
        ["grail: `Binding` of deployment `storefront`, layer `security` (grail.toml)"]
    );
    assert_eq!(lenses(&mut c, &package).await, Vec::<String>::new());
    assert_eq!(lenses(&mut c, &workflow).await, Vec::<String>::new());
    c.shutdown().await;
}

#[tokio::test]
async fn a_file_the_workspace_file_names_is_judged_whatever_its_name() {
    let dir = workspace("named");
    // An odd choice, but the user's: the workspace file's word wins over the list.
    let toml = "[deployments.storefront]\nlayers = { security = \"guardrails/security.yaml\" }\ndocuments = [\"package.json\"]\n";
    std::fs::write(dir.0.join("grail.toml"), toml).expect("write");
    let mut c = TestClient::start(Database::default(), Some(&dir.0)).await;
    let package = uri(&dir.0.join("package.json"));
    // Published for the members of the deployment without opening them.
    let d = c.diagnostics_until(&package, |d| !d.is_empty()).await;
    assert!(!d.is_empty());

    // The workspace file stops naming it: what it showed is cleared, though it is not open.
    let toml = "[deployments.storefront]\nlayers = { security = \"guardrails/security.yaml\" }\n";
    std::fs::write(dir.0.join("grail.toml"), toml).expect("write");
    let changed = json!({"changes": [{"uri": uri(&dir.0.join("grail.toml")), "type": 2}]});
    c.notify("workspace/didChangeWatchedFiles", changed).await;
    assert_eq!(c.diagnostics_until(&package, |d| d.is_empty()).await, Vec::<Value>::new());
    c.shutdown().await;
}

#[tokio::test]
async fn without_a_workspace_file_a_document_is_judged_when_a_kind_picks_it() {
    let dir = TempDir::new("unowned");
    let mut c = TestClient::start(Database::default(), Some(&dir.0)).await;
    let binding_uri = uri(&dir.0.join("org.yaml"));
    c.open(&binding_uri, &binding()).await;
    assert!(!c.diagnostics(&binding_uri).await.is_empty(), "a binding alone is judged");
    assert_eq!(lenses(&mut c, &binding_uri).await, ["grail: `Binding`, checked alone (no grail.toml)"]);

    for (name, text) in [("deploy.yaml", MANIFEST), ("docker-compose.yml", "services:\n  web:\n    image: nginx\n")] {
        let other = uri(&dir.0.join(name));
        c.open(&other, text).await;
        assert_eq!(c.diagnostics(&other).await, Vec::<Value>::new(), "{name}");
        assert_eq!(lenses(&mut c, &other).await, Vec::<String>::new(), "{name}");
    }

    // A file that does not parse is judged by the top-level keys its lines show: a Helm
    // template (not YAML) is a manifest's, a half-typed binding is grail's from the start.
    let template = uri(&dir.0.join("service.yaml"));
    let helm = "apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Release.Name }}\n  labels:\n    {{- include \"labels\" . | nindent 4 }}\n";
    c.open(&template, helm).await;
    assert_eq!(c.diagnostics(&template).await, Vec::<Value>::new());
    let typing = uri(&dir.0.join("new.yaml"));
    c.open(&typing, "schema_version: \"1.0\"\nexecutor_class: self-operated\nmerge_policy: {C1: human\n").await;
    let d = c.diagnostics(&typing).await;
    assert_eq!(codes(&d), ["schema.syntax"], "{d:#?}");
    c.shutdown().await;
}

#[tokio::test]
async fn a_document_that_stops_being_grails_is_cleared_and_one_being_typed_is_not() {
    let dir = TempDir::new("edits");
    let mut c = TestClient::start(Database::default(), Some(&dir.0)).await;
    let doc = uri(&dir.0.join("org.yaml"));
    let text = binding();
    c.open(&doc, &text).await;
    assert!(!c.diagnostics(&doc).await.is_empty());

    // A syntax error while typing keeps the document judged: its error is shown.
    let broken = text.replacen("merge_policy: {", "merge_policy: {{", 1);
    c.change(&doc, 2, json!([{"text": broken}])).await;
    let d = c.diagnostics(&doc).await;
    assert_eq!(codes(&d), ["schema.syntax"], "{d:#?}");

    // Made into another format's file, it is no longer judged, and nothing stays shown.
    c.change(&doc, 3, json!([{"text": MANIFEST}])).await;
    assert_eq!(c.diagnostics(&doc).await, Vec::<Value>::new());
    c.change(&doc, 4, json!([{"text": "kind: Deployment\nspec: [\n"}])).await;
    assert_eq!(c.diagnostics(&doc).await, Vec::<Value>::new(), "nor while it does not parse");

    // And back.
    c.change(&doc, 5, json!([{"text": text}])).await;
    assert!(!c.diagnostics(&doc).await.is_empty());
    c.shutdown().await;
}
