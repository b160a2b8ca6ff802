//! The workspace file in the server: the policy it names, documents checked
//! with the rest of their deployment, findings shown in the file they point
//! into, reloads on disk changes, and what happens without one.

mod common;

use common::*;
use grail_engine::Database;
use serde_json::{Value, json};

fn codes(diagnostics: &[Value]) -> Vec<String> {
    let mut c: Vec<String> = diagnostics.iter().map(|d| d["code"].as_str().unwrap_or_default().to_string()).collect();
    c.sort();
    c
}

/// The binding of the repo layer of the example organisation.
fn repo_yaml(dir: &TempDir) -> String {
    std::fs::read_to_string(dir.0.join("repo.yaml")).expect("repo.yaml")
}

#[tokio::test]
async fn a_document_is_checked_with_the_rest_of_its_deployment() {
    let dir = TempDir::with_org("deployment");
    let mut c = TestClient::start(Database::default(), Some(&dir.0)).await;
    let repo = uri(&dir.0.join("repo.yaml"));
    c.open(&repo, &repo_yaml(&dir)).await;
    // Alone, the repo layer would fail `schema.missing_key` (its required keys come from the
    // security layer); with its deployment, nothing of it fails.
    assert_eq!(c.diagnostics(&repo).await, Vec::<Value>::new());

    // A finding of the deployment located in a file that is not open is shown in that file.
    let security = uri(&dir.0.join("security.yaml"));
    let d = c.diagnostics_until(&security, |d| !d.is_empty()).await;
    assert!(codes(&d).contains(&"isolation.reachable_hosts".to_string()), "{d:#?}");
    c.shutdown().await;
}

/// The repo layer tries to loosen the model review of C2 (blocking in the security layer).
const LOOSER: &str = "verification_blocking:\n  ai-review: {C2: advisory}\n";
/// The start of the line of `security.yaml` that the edit tests change, and what it becomes:
/// then the repo layer's advisory review no longer loosens anything.
const EDITED: &str = "  ai-review: {C1: not-required, C2: blocking,";
const EDIT: &str = "  ai-review: {C1: not-required, C2: advisory,";

#[tokio::test]
async fn an_edit_of_one_layer_changes_what_another_shows() {
    let dir = TempDir::with_org("edit-layer");
    let mut c = TestClient::start(Database::default(), Some(&dir.0)).await;
    let repo = uri(&dir.0.join("repo.yaml"));
    c.open(&repo, &format!("{}{LOOSER}", repo_yaml(&dir))).await;
    let d = c.diagnostics(&repo).await;
    assert_eq!(codes(&d), ["layer.loosen"], "{d:#?}");
    let security_path = dir.0.join("security.yaml");
    let text = std::fs::read_to_string(&security_path).expect("security.yaml");
    let security = uri(&security_path);
    c.open(&security, &text).await;
    let at = position_of(&text, EDITED, 0);
    let end = json!({"line": at["line"], "character": EDITED.len()});
    c.change(&security, 2, json!([{"range": {"start": at, "end": end}, "text": EDIT}])).await;
    let d = c.diagnostics_until(&repo, |d| d.is_empty()).await;
    assert_eq!(d, Vec::<Value>::new());
    c.shutdown().await;
}

#[tokio::test]
async fn a_change_on_disk_is_read_again() {
    let dir = TempDir::with_org("disk");
    let repo_path = dir.0.join("repo.yaml");
    std::fs::write(&repo_path, format!("{}{LOOSER}", repo_yaml(&dir))).expect("write");
    let mut c = TestClient::start(Database::default(), Some(&dir.0)).await;
    let repo = uri(&repo_path);
    // Published for the members of the deployment without opening them.
    let d = c.diagnostics_until(&repo, |d| !d.is_empty()).await;
    assert_eq!(codes(&d), ["layer.loosen"], "{d:#?}");
    let security_path = dir.0.join("security.yaml");
    let text = std::fs::read_to_string(&security_path).expect("security.yaml");
    std::fs::write(&security_path, text.replace(EDITED, EDIT)).expect("write");
    let changed = json!({"changes": [{"uri": uri(&security_path), "type": 2}]});
    c.notify("workspace/didChangeWatchedFiles", changed).await;
    let d = c.diagnostics_until(&repo, |d| d.is_empty()).await;
    assert_eq!(d, Vec::<Value>::new());
    c.shutdown().await;
}

#[tokio::test]
async fn without_a_workspace_file_the_server_says_so_once() {
    let dir = TempDir::new("no-workspace-file");
    // A fixture folder full of broken policy files is not the policy.
    std::fs::create_dir_all(dir.0.join("tests/fixtures")).expect("mkdir");
    std::fs::write(dir.0.join("tests/fixtures/broken.grail"), "rule {{{\n").expect("write");
    let mut c = TestClient::start(Database::default(), Some(&dir.0)).await;
    let message = c.notification("window/showMessage").await;
    let text = message["message"].as_str().unwrap_or_default();
    assert!(text.contains("no `grail.toml`"), "{message}");
    assert!(text.contains("the shipped library, each document checked alone"), "{message}");
    let doc = uri(&dir.0.join("org.yaml"));
    c.open(&doc, "schema_version: \"1.0\"\nexecutor_class: self-operated\n").await;
    let d = c.diagnostics(&doc).await;
    assert!(!codes(&d).contains(&"policy".to_string()), "the shipped library compiles: {d:#?}");
    assert!(!d.is_empty(), "checked alone against the shipped library");
    assert_eq!(c.pending_count("window/showMessage"), 0, "said once");
    c.shutdown().await;
}

#[tokio::test]
async fn a_broken_workspace_file_is_located() {
    let dir = TempDir::new("broken-workspace-file");
    let text = "[deployments.a]\nlayers = { security = \"missing.yaml\" }\n";
    std::fs::write(dir.0.join("grail.toml"), text).expect("write");
    let mut c = TestClient::start(Database::default(), Some(&dir.0)).await;
    let message = c.notification("window/showMessage").await;
    assert_eq!(message["type"], 1, "an error: {message}");
    let d = c.diagnostics(&uri(&dir.0.join("grail.toml"))).await;
    assert_eq!(codes(&d), ["workspace"], "{d:#?}");
    assert!(
        d[0]["message"].as_str().unwrap_or_default().starts_with("`missing.yaml` of deployment `a` does not exist"),
        "{d:#?}"
    );
    assert_eq!(d[0]["range"]["start"], position_of(text, "\"missing.yaml\"", 0));
    c.shutdown().await;
}

#[tokio::test]
async fn a_marker_near_miss_in_a_work_item_is_said() {
    let dir = TempDir::new("near-miss");
    let mut c = TestClient::start(Database::default(), Some(&dir.0)).await;
    let item =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/org/items/tracker-issue-412.md"))
            .expect("a work item");
    let typo = item.replace("<!-- autonomy:signal:v1 -->", "<!-- autonomy:signal:v2 -->");
    let doc = uri(&dir.0.join("item.md"));
    c.open(&doc, &typo).await;
    let d = c.diagnostics(&doc).await;
    assert!(codes(&d).contains(&"marker".to_string()), "{d:#?}");
    let marker = d.iter().find(|d| d["code"] == "marker").expect("the marker diagnostic");
    assert_eq!(marker["range"]["start"], position_of(&typo, "<!-- autonomy:signal:v2", 0));
    assert!(marker["message"].as_str().unwrap_or_default().contains("`<!-- autonomy:signal:v1 -->`"), "{marker}");

    // A Markdown file with no such line (a README) is not checked and says nothing.
    let readme = uri(&dir.0.join("README.md"));
    c.open(&readme, "# Notes\n\nNothing to check here.\n").await;
    assert_eq!(c.diagnostics(&readme).await, Vec::<Value>::new());
    c.shutdown().await;
}

#[tokio::test]
async fn a_deployment_with_two_packs_is_refused_at_both_as_the_command_line_refuses_it() {
    let dir = TempDir::new("two-packs");
    let pack = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/scenarios/pack.yaml"))
        .expect("the example pack");
    std::fs::write(dir.0.join("a.yaml"), &pack).expect("write");
    std::fs::write(dir.0.join("b.yaml"), &pack).expect("write");
    let toml = "[policy]\nfolders = [\"shipped\"]\n\n[deployments.packs]\ndocuments = [\"a.yaml\", \"b.yaml\"]\n";
    std::fs::write(dir.0.join("grail.toml"), toml).expect("write");
    let mut c = TestClient::start(Database::default(), Some(&dir.0)).await;
    for name in ["a.yaml", "b.yaml"] {
        let doc = uri(&dir.0.join(name));
        c.open(&doc, &pack).await;
        let d = c.diagnostics_until(&doc, |d| !d.is_empty()).await;
        assert_eq!(codes(&d), ["at-most-one"], "{name}: {d:#?}");
        let message = d[0]["message"].as_str().unwrap_or_default();
        assert!(message.contains("a.yaml") && message.contains("b.yaml"), "{message}");
    }
    c.shutdown().await;
}

#[tokio::test]
async fn inlay_hints_show_the_effective_state_of_the_deployment() {
    let dir = TempDir::with_org("inlay-hints");
    let mut c = TestClient::start(Database::default(), Some(&dir.0)).await;
    let repo = uri(&dir.0.join("repo.yaml"));
    // The repo layer leaves `merge_policy` to the layers above, and tightens one count of C3.
    let text = repo_yaml(&dir)
        .replace("merge_policy: {C2: human}\n", "verification_topology:\n  C3: {min_model_checkers: 2}\n");
    c.open(&repo, &text).await;
    c.diagnostics(&repo).await;
    let whole = json!({"start": {"line": 0, "character": 0}, "end": {"line": 40, "character": 0}});
    let hints = c.request("textDocument/inlayHint", json!({"textDocument": {"uri": repo}, "range": whole})).await;
    let labels: Vec<&str> = hints.as_array().into_iter().flatten().filter_map(|h| h["label"].as_str()).collect();
    // The security layer binds every class's merge; of C3's counts, the operator layer
    // raises one and the security layer sets the other.
    assert_eq!(
        labels,
        [
            "merge_policy: {C1: human, C2: auto, C3: auto, C4: human, C5: human} (security.yaml)",
            "min_checkers: 3, cross_vendor_required: false (operator.yaml, security.yaml)",
        ],
        "{hints:#?}"
    );
    c.shutdown().await;
}

/// Upstream's graded `valid.json` in folder `name` of `dir`, with the probe
/// transcript it names beside it, as in upstream's layout: its URI, its
/// text, and the transcript's URI.
fn upstream_binding(dir: &TempDir, name: &str) -> (String, String, String) {
    let fixtures =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/upstream/fixtures/security-binding");
    let folder = dir.0.join(name);
    std::fs::create_dir_all(folder.join("probe-transcripts")).expect("create folders");
    let text = std::fs::read_to_string(fixtures.join("valid.json")).expect("valid.json");
    let transcript = "probe-transcripts/ci-pool-a-l2.json";
    std::fs::copy(fixtures.join(transcript), folder.join(transcript)).expect("copy the transcript");
    std::fs::write(folder.join("valid.json"), &text).expect("write the binding");
    (uri(&folder.join("valid.json")), text, uri(&folder.join(transcript)))
}

/// A request the server answers after everything it published for the messages before it.
async fn settled(c: &mut TestClient, document: &str) {
    c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": document}, "position": {"line": 0, "character": 0}}),
    )
    .await;
}

/// Two bindings checked alone, each attaching its own transcript, where the
/// check locates a finding (no credential roots are given). An edit of one
/// publishes its own transcript, and no other: the findings another check
/// located there did not move. When the edited binding stops attaching its
/// transcript, what it showed there is cleared.
#[tokio::test]
async fn an_edit_publishes_again_the_files_its_check_attaches_and_no_other() {
    let dir = TempDir::new("attached");
    let mut c = TestClient::start(Database::default(), Some(&dir.0)).await;
    let (a, a_text, a_probe) = upstream_binding(&dir, "a");
    let (b, b_text, b_probe) = upstream_binding(&dir, "b");
    c.open(&a, &a_text).await;
    c.diagnostics(&a).await;
    assert_eq!(codes(&c.diagnostics(&a_probe).await), ["credential.roots"]);
    c.open(&b, &b_text).await;
    c.diagnostics(&b).await;
    assert_eq!(codes(&c.diagnostics(&b_probe).await), ["credential.roots"]);
    settled(&mut c, &b).await;
    c.take_pending_diagnostics(&a_probe);
    c.take_pending_diagnostics(&b_probe);

    // `b` names a transcript that is not there: it attaches its own no longer.
    let name = "ci-pool-a-l2.json";
    let start = position_of(&b_text, name, 0);
    let end = position_of(&b_text, name, name.len());
    c.change(&b, 2, json!([{"range": {"start": start, "end": end}, "text": "missing.json"}])).await;
    c.diagnostics(&b).await;
    assert_eq!(c.diagnostics(&b_probe).await, Vec::<Value>::new());
    settled(&mut c, &b).await;
    assert_eq!(c.take_pending_diagnostics(&a_probe), 0, "the edit of `b` published `a`'s transcript again");
    c.shutdown().await;
}
