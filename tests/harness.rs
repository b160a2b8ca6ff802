//! The trust of the harness records: an agent-bound document is never why a
//! rule that needs the harness's (or a person's) records passes. Every pass
//! fixture of the library that binds a document is checked again with each
//! of its bindings lowered to `agent`: the rule it passed must no longer pass.

use std::path::Path;

use grail_engine::Outcome;
use grail_engine::testing::{self, File};

/// Every file under `dir`, as `tests/<rule>/<case>/...` paths and texts.
fn fixtures(root: &Path) -> Vec<(String, String)> {
    fn walk(dir: &Path, root: &Path, out: &mut Vec<(String, String)>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, root, out);
            } else if let Ok(text) = std::fs::read_to_string(&p) {
                let rel = p.strip_prefix(root).expect("below the root").to_string_lossy().replace('\\', "/");
                out.push((rel, text));
            }
        }
    }
    let mut out = Vec::new();
    walk(&root.join("tests"), root, &mut out);
    out.sort();
    out
}

#[test]
fn an_agent_bound_document_never_makes_a_trusted_only_rule_pass() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("policies/guardrails");
    let db = grail_engine::Database::default();
    let compiled = grail_engine::db::compile_policy(&db, grail_engine::shipped::policy_set(&db));
    let policy = &compiled.policy;
    // The kinds whose documents count only from a trusted layer, and those layers.
    let trusted: Vec<(String, String)> = policy
        .layers
        .iter()
        .filter_map(|l| {
            let (top, _) = l.trusted.as_ref()?;
            Some((policy.documents[l.document as usize].name.clone(), l.layers[*top].clone()))
        })
        .collect();
    assert!(trusted.len() >= 5, "the harness kinds are trusted only from a layer: {trusted:?}");
    let files = fixtures(&root);
    let all: Vec<File<'_>> = files.iter().map(|(p, t)| File { path: p, text: t }).collect();
    let mut checked = Vec::new();
    // The rules the policy states, and the trust rule itself (a structural
    // check, such as `evidence.version`, judges a document's shape whoever wrote it).
    let judged = |rule: &str| {
        policy.rules.iter().any(|r| r.id == rule)
            || policy.layers.iter().any(|l| l.trusted.as_ref().is_some_and(|(_, c)| c.rule == rule))
    };
    for case in testing::discover(&all).into_iter().filter(|c| !c.fires && judged(&c.rule)) {
        let Some(bind) = case.files.iter().find(|p| p.ends_with("/layers.bind")) else { continue };
        let text = &files.iter().find(|(p, _)| p == bind).expect("the bindings").1;
        // Only bindings to a trusted layer of a harness kind are lowered.
        let lowered: String = text
            .lines()
            .map(|line| match line.split_once('=') {
                Some((layer, file)) if trusted.iter().any(|(_, l)| l == layer.trim()) => format!("agent={file}\n"),
                _ => format!("{line}\n"),
            })
            .collect();
        if lowered == *text {
            continue;
        }
        let changed: Vec<File<'_>> = files
            .iter()
            .map(|(p, t)| File { path: p, text: if p == bind { lowered.as_str() } else { t.as_str() } })
            .collect();
        let findings = testing::run_case(policy, &case, &changed, None).expect("the case runs");
        // As `grail test` judges a pass case: a PASS, and no FAIL or UNKNOWN.
        let mine: Vec<Outcome> = findings.iter().filter(|f| f.rule == case.rule).map(|f| f.outcome).collect();
        let passed =
            mine.contains(&Outcome::Pass) && !mine.iter().any(|o| matches!(o, Outcome::Fail | Outcome::Unknown));
        assert!(
            !passed,
            "{}/{}: with its harness and human documents bound to `agent`, it still passes",
            case.rule, case.name
        );
        checked.push(format!("{}/{}", case.rule, case.name));
    }
    // Every rule that reads a harness record is among them.
    for rule in [
        "evidence.untrusted",
        "report.ownership",
        "report.freshness",
        "claim.receipt_exact",
        "claim.artifact_hash",
        "claim.receipt_owner",
        "claim.exit_explicit",
        "claim.demo_citation",
        "acceptance.ghost",
        "spawn.package",
        "signoff.out_of_band",
        "guard.ledger_coverage",
        "guard.workspace_fail_closed",
    ] {
        assert!(
            checked.iter().any(|c| c.starts_with(&format!("{rule}/"))),
            "no pass fixture of {rule} binds a document: {checked:?}"
        );
    }
}
