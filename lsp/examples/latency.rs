//! A benchmark, not a test: the latency from `didChange` to
//! `publishDiagnostics` for a one-character edit, in a workspace of about
//! 5,000 lines of policy and 200 open bindings.
//!
//! cargo run --release -p grail-lsp --example latency [-- EDITS]
//!
//! The policy is the shipped library and copies of its rule files under new
//! rule ids; each binding is a variant of `examples/bindings/good.yaml`. One
//! edit toggles a digit of one binding (`min_checkers: 2` <-> `3`); another
//! series toggles a digit in a rule of a policy file, which re-checks every
//! open binding. The server runs in this process, over in-memory streams.

#[path = "../tests/common/mod.rs"]
mod common;

use std::time::{Duration, Instant};

use common::{TempDir, TestClient, uri};
use grail_engine::db::{check_document, compile_policy};
use grail_engine::{Database, PolicySet, SourceText};
use salsa::Setter as _;
use serde_json::json;

const BINDINGS: usize = 200;
const POLICY_LINES: usize = 5_000;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn report(what: &str, mut samples: Vec<Duration>) {
    samples.sort();
    println!(
        "{what}: {} edits, median {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        samples.len(),
        percentile(&samples, 0.5).as_secs_f64() * 1e3,
        percentile(&samples, 0.99).as_secs_f64() * 1e3,
        samples.last().copied().unwrap_or_default().as_secs_f64() * 1e3,
    );
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let edits: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(300);
    let dir = TempDir::with_shipped_policy("latency");

    // About 5,000 lines of policy: the rule files again and again, under new rule ids.
    let mut lines: usize = grail_engine::shipped::FILES.iter().map(|(_, t)| t.lines().count()).sum();
    let rules: Vec<&str> = grail_engine::shipped::FILES
        .iter()
        .filter(|(p, _)| ["topology", "merge", "escalation", "schema.grail"].iter().any(|n| p.contains(n)))
        .map(|(_, t)| *t)
        .collect();
    let mut copy = 0;
    while lines < POLICY_LINES {
        for text in &rules {
            let renamed = text.replace("\nrule ", &format!("\nrule copy{copy}."));
            lines += renamed.lines().count();
            std::fs::write(dir.0.join(format!("policies/copy{copy}.grail")), renamed).expect("write a policy file");
            copy += 1;
        }
    }

    let mut client = TestClient::start(Database::default(), Some(&dir.0)).await;
    let good = include_str!("../../examples/bindings/good.yaml");
    let mut uris = Vec::new();
    for i in 0..BINDINGS {
        let u = uri(&dir.0.join(format!("binding-{i}.yaml")));
        client.open(&u, &good.replace("security-oncall", &format!("oncall-{i}"))).await;
        client.diagnostics(&u).await;
        uris.push(u);
    }
    println!("workspace: {lines} lines of policy in {} files, {BINDINGS} open bindings", copy + 8);

    // The digit of `min_checkers: 2` under C3, line 12 of good.yaml.
    let line = good.lines().position(|l| l.trim() == "min_checkers: 2").expect("a min_checkers line") as u32;
    let column = good.lines().nth(line as usize).and_then(|l| l.find('2')).expect("a digit") as u32;
    let mut samples = Vec::new();
    for n in 0..edits {
        let u = uris[n % BINDINGS].clone();
        let digit = if (n / BINDINGS).is_multiple_of(2) { "3" } else { "2" };
        let range =
            json!({"start": {"line": line, "character": column}, "end": {"line": line, "character": column + 1}});
        let start = Instant::now();
        client.change(&u, 2 + (n / BINDINGS) as i32, json!([{"range": range, "text": digit}])).await;
        client.diagnostics(&u).await;
        samples.push(start.elapsed());
    }
    report("binding edit -> its diagnostics", samples);

    // A digit in a rule of a policy file: the policy recompiles and every open binding is checked again.
    let policy = dir.0.join("policies/guardrails/topology.grail");
    let text = std::fs::read_to_string(&policy).expect("policy");
    let policy_uri = uri(&policy);
    client.open(&policy_uri, &text).await;
    client.diagnostics(&policy_uri).await;
    let at = text.find("models >= 2").expect("a digit in a rule") + "models >= ".len();
    let idx = grail_lsp::position::LineIndex::new(&text);
    let p = idx.position(&text, at);
    let mut own = Vec::new();
    let mut every = Vec::new();
    for n in 0..edits.min(30) {
        let digit = if n.is_multiple_of(2) { "3" } else { "2" };
        let range = json!({"start": p, "end": {"line": p.line, "character": p.character + 1}});
        let start = Instant::now();
        client.change(&policy_uri, 2 + n as i32, json!([{"range": range, "text": digit}])).await;
        client.diagnostics(&policy_uri).await;
        own.push(start.elapsed());
        // Every open binding is checked again, in the background.
        for u in &uris {
            client.diagnostics(u).await;
        }
        every.push(start.elapsed());
    }
    report("policy edit -> its diagnostics", own);
    report(&format!("policy edit -> the diagnostics of all {BINDINGS} open bindings"), every);
    client.shutdown().await;

    // The engine alone, without the protocol: a binding's text set, then checked.
    let mut db = Database::default();
    let mut files = Vec::new();
    for entry in walk(&dir.0.join("policies")) {
        let text = std::fs::read_to_string(&entry).expect("policy");
        files.push(SourceText::new(&db, entry.display().to_string(), text, None));
    }
    let set = PolicySet::new(&db, files);
    assert!(!compile_policy(&db, set).has_errors());
    let doc = SourceText::new(&db, "binding.yaml".into(), good.to_string(), None);
    check_document(&db, set, doc);
    let mut samples = Vec::new();
    for n in 0..edits {
        let text =
            if n.is_multiple_of(2) { good.replace("min_checkers: 2", "min_checkers: 3") } else { good.to_string() };
        let start = Instant::now();
        doc.set_text(&mut db).to(text);
        check_document(&db, set, doc);
        samples.push(start.elapsed());
    }
    report("engine only: set_text + check_document", samples);
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("a folder").flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else if path.extension().is_some_and(|e| e == "grail") {
            out.push(path);
        }
    }
    out.sort();
    out
}
