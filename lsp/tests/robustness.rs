//! A seeded stream of random edits to a binding and to a policy file, with a
//! request after each: the server never panics and always answers.

mod common;

use common::*;
use grail_engine::Database;
use serde_json::{Value, json};

/// xorshift64*: a small, seeded generator, so a failure can be replayed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }
}

/// Fragments that make the text half-typed in interesting ways.
const PIECES: &[&str] = &[
    "a",
    "C3",
    ":",
    " ",
    "\n",
    "\r\n",
    "- ",
    "{",
    "}",
    "[",
    "]",
    ",",
    "\"",
    "'",
    "#",
    "é",
    "😀",
    "\t",
    "  ",
    "min_checkers: ",
    "roles:\n  - {name: x, role: generator}\n",
    "rule x.y\n",
    "require ",
    " and ",
    "for c, t in ",
    "binding.",
    "(",
    ")",
    "{c}",
    "enum ",
    "record R {\n",
    "&a ",
    "*a",
    "!!str ",
    "---\n",
    "0",
    "-1",
    "true",
];

/// A random edit of `text`: an insertion, a deletion or a replacement at
/// random protocol positions, some of them past the end of a line or of the text.
fn random_edit(rng: &mut Rng, text: &str) -> (Value, String) {
    let lines = text.split('\n').count() as u64;
    let pos = |rng: &mut Rng| {
        let line = rng.below(lines + 2);
        let character = rng.below(90);
        position(line as u32, character as u32)
    };
    let (mut a, mut b) = (pos(rng), pos(rng));
    if (b.line, b.character) < (a.line, a.character) {
        std::mem::swap(&mut a, &mut b);
    }
    let insert = match rng.below(3) {
        0 => String::new(),
        _ => (0..=rng.below(3)).map(|_| rng.pick(PIECES)).collect(),
    };
    if rng.below(2) == 0 {
        b = a;
    }
    let change = json!({"range": {"start": a, "end": b}, "text": insert});
    let applied = apply_edits(text, &[json!({"range": change["range"], "newText": insert})]);
    (change, applied)
}

async fn random_request(rng: &mut Rng, c: &mut TestClient, uri: &str, text: &str) {
    let lines = text.split('\n').count() as u64;
    let at = json!({"line": rng.below(lines + 1), "character": rng.below(60)});
    let doc = json!({"uri": uri});
    let answer = match rng.below(7) {
        0 => c.request("textDocument/hover", json!({"textDocument": doc, "position": at})).await,
        1 => c.request("textDocument/completion", json!({"textDocument": doc, "position": at})).await,
        2 => c.request("textDocument/definition", json!({"textDocument": doc, "position": at})).await,
        3 => {
            let params = json!({"textDocument": doc, "position": at, "context": {"includeDeclaration": true}});
            c.request("textDocument/references", params).await
        }
        4 => c.request("textDocument/semanticTokens/full", json!({"textDocument": doc})).await,
        5 => {
            let range = json!({"start": {"line": 0, "character": 0}, "end": at});
            c.request("textDocument/inlayHint", json!({"textDocument": doc, "range": range})).await
        }
        _ => {
            let range = json!({"start": {"line": 0, "character": 0}, "end": at});
            let params = json!({"textDocument": doc, "range": range, "context": {"diagnostics": []}});
            c.request("textDocument/codeAction", params).await
        }
    };
    assert!(answer.get("error").is_none(), "an error answer (a panic in a query) for {uri}: {answer}\n{text}");
}

#[tokio::test]
async fn random_edits_never_crash_the_server() {
    let dir = TempDir::with_shipped_policy("random");
    let mut c = TestClient::start(Database::default(), Some(&dir.0)).await;
    let policy_path = dir.0.join("policies/guardrails/topology.grail");
    let policy_uri = uri(&policy_path);
    let binding_uri = uri(&dir.0.join("org.yaml"));
    let mut policy = std::fs::read_to_string(&policy_path).expect("policy");
    let mut binding = include_str!("../../examples/bindings/good.yaml").to_string();
    c.open(&policy_uri, &policy).await;
    c.open(&binding_uri, &binding).await;

    let mut rng = Rng(0x005E_ED0F_6A11);
    for version in 2..300 {
        let on_policy = rng.below(3) == 0;
        let (uri, text) = if on_policy { (&policy_uri, &mut policy) } else { (&binding_uri, &mut binding) };
        let (change, applied) = random_edit(&mut rng, text);
        *text = applied;
        c.change(uri, version, json!([change])).await;
        let text = text.clone();
        random_request(&mut rng, &mut c, uri, &text).await;
        random_request(&mut rng, &mut c, &binding_uri, &binding).await;
    }
    // A last full replacement: the server still answers.
    c.change(&binding_uri, 400, json!([{"text": binding}])).await;
    let answer = c
        .request("textDocument/hover", json!({"textDocument": {"uri": binding_uri}, "position": position(0, 0)}))
        .await;
    assert!(answer.get("error").is_none(), "{answer}");
    c.shutdown().await;
}

#[tokio::test]
async fn random_edits_of_a_json_binding_never_crash_the_server() {
    let dir = TempDir::new("random-json");
    let mut c = TestClient::start(Database::default(), Some(&dir.0)).await;
    let uri = uri(&dir.0.join("org.json"));
    let mut text = include_str!("../../examples/bindings/org.json").to_string();
    c.open(&uri, &text).await;
    let mut rng = Rng(0xC0FF_EE00_1234);
    for version in 2..200 {
        let (change, applied) = random_edit(&mut rng, &text);
        text = applied;
        c.change(&uri, version, json!([change])).await;
        random_request(&mut rng, &mut c, &uri, &text).await;
    }
    c.shutdown().await;
}

#[tokio::test]
async fn a_workspace_of_ten_thousand_files_is_served() {
    let dir = TempDir::with_shipped_policy("many-files");
    for d in 0..100 {
        let sub = dir.0.join(format!("bindings/team-{d}"));
        std::fs::create_dir_all(&sub).expect("a folder");
        for f in 0..100 {
            std::fs::write(sub.join(format!("b{f}.yaml")), "schema_version: \"1.0\"\n").expect("a file");
        }
    }
    let mut c = TestClient::start(Database::default(), Some(&dir.0)).await;
    let doc = uri(&dir.0.join("bindings/team-7/b7.yaml"));
    c.open(&doc, "schema_version: \"1.0\"\nmerge_policy: {C4: auto}\n").await;
    let d = c.diagnostics(&doc).await;
    assert!(d.iter().any(|x| x["code"] == "merge.ceiling"), "{d:?}");
    c.shutdown().await;
}
