//! The constructs of the language at work: a small policy of its own per
//! feature, checked over documents, each outcome asserted.

mod support;

use grail_engine::db::{check_deployment, compile_policy};
use grail_engine::{Database, Deployment, Outcome, PolicySet, SourceText};
use support::check;

/// The outcome of `rule` for `subject`.
#[track_caller]
fn outcome(findings: &[(String, Outcome, String, String)], rule: &str, subject: &str) -> (Outcome, String) {
    findings
        .iter()
        .find(|(r, _, s, _)| r == rule && s == subject)
        .map(|(_, o, _, m)| (*o, m.clone()))
        .unwrap_or_else(|| panic!("no finding of {rule} for {subject} in {findings:#?}"))
}

const GRANTS: &str = r#"
document Log as log where kind absent {
  on syntax rule log.syntax
  on duplicate_key rule log.duplicate_key
  on unknown_key rule log.unknown_key
  on type rule log.type
  grants?: list Grant
}
record Grant identity id {
  id: string
  created_at: string
  expires_at: string
}
rule grant.length
  for g in log.grants
  let lasts = timestamp(g.expires_at) - timestamp(g.created_at)
  require lasts >= seconds(0) and lasts <= hours(72) else fail "{g.id} lasts {lasts}"
rule grant.live
  for g in log.grants
  require timestamp(g.expires_at) > now() else fail "{g.id} expired at {timestamp(g.expires_at)}"
rule grant.window
  for g in log.grants
  require timestamp(g.created_at) + days(3) - minutes(1) * 2 < timestamp(g.expires_at)
    else fail "{g.id} is short"
"#;

fn grant(created: &str, expires: &str) -> String {
    format!("grants:\n  - {{id: G, created_at: \"{created}\", expires_at: \"{expires}\"}}\n")
}

#[test]
fn durations_are_exact_to_the_nanosecond() {
    let over = check(GRANTS, &[("log.yaml", &grant("2026-08-11T09:00:00Z", "2026-08-14T09:00:00.999Z"))], None);
    assert_eq!(outcome(&over, "grant.length", "grants.G"), (Outcome::Fail, "G lasts 72h 999ms".into()));
    let nano = check(GRANTS, &[("log.yaml", &grant("2026-08-11T09:00:00Z", "2026-08-14T09:00:00.000000001Z"))], None);
    assert_eq!(outcome(&nano, "grant.length", "grants.G").0, Outcome::Fail);
    let exact = check(GRANTS, &[("log.yaml", &grant("2026-08-11T11:00:00+02:00", "2026-08-14T09:00:00.000Z"))], None);
    assert_eq!(outcome(&exact, "grant.length", "grants.G").0, Outcome::Pass);
    let reversed = check(GRANTS, &[("log.yaml", &grant("2026-08-11T09:00:00.5Z", "2026-08-11T09:00:00Z"))], None);
    assert_eq!(outcome(&reversed, "grant.length", "grants.G"), (Outcome::Fail, "G lasts -500ms".into()));
    assert_eq!(outcome(&exact, "grant.window", "grants.G").0, Outcome::Pass);
}

#[test]
fn a_malformed_offset_is_unknown_never_a_pass() {
    for bad in ["2026-08-11T09:00:00-+9:00", "2026-08-11T09:00:00+9:00", "2026-08-11 09:00:00Z", "2026-08-11"] {
        let f = check(GRANTS, &[("log.yaml", &grant(bad, "2026-08-12T09:00:00Z"))], Some("2026-08-12T00:00:00Z"));
        let (o, m) = outcome(&f, "grant.length", "grants.G");
        assert_eq!(o, Outcome::Unknown, "{bad}: {m}");
    }
}

#[test]
fn now_is_the_time_the_check_was_given() {
    let doc = grant("2026-08-11T09:00:00Z", "2026-08-12T09:00:00Z");
    let before = check(GRANTS, &[("log.yaml", &doc)], Some("2026-08-12T09:00:00.999+01:00"));
    assert_eq!(outcome(&before, "grant.live", "grants.G").0, Outcome::Pass);
    let after = check(GRANTS, &[("log.yaml", &doc)], Some("2026-08-12T09:00:00Z"));
    assert_eq!(outcome(&after, "grant.live", "grants.G"), (Outcome::Fail, "G expired at 2026-08-12T09:00:00Z".into()));
    // Without a time of the check, `now()` is missing evidence.
    let untimed = check(GRANTS, &[("log.yaml", &doc)], None);
    let (o, m) = outcome(&untimed, "grant.live", "grants.G");
    assert_eq!(o, Outcome::Unknown);
    assert!(m.contains("the time of the check was not given"), "{m}");
}

const KINDS: &str = r#"
document Binding as binding where kind absent and cases absent {
  on syntax rule b.syntax
  on duplicate_key rule b.duplicate_key
  on unknown_key rule b.unknown_key
  on type rule b.type
  name?: string
}
document Pack as pack where cases present and kind absent {
  on syntax rule p.syntax
  on duplicate_key rule p.duplicate_key
  on unknown_key rule p.unknown_key
  on type rule p.type
  cases: list string
}
rule p.some_case
  require count(pack.cases) >= 1 else fail "no case"
rule b.named
  require present(binding.name) else fail "no name"
"#;

#[test]
fn a_kind_is_recognised_by_a_key_it_carries() {
    let f = check(KINDS, &[("pack.yaml", "cases: [a]\n"), ("binding.yaml", "name: x\n")], None);
    assert_eq!(outcome(&f, "p.some_case", "pack.yaml").0, Outcome::Pass);
    assert_eq!(outcome(&f, "b.named", "binding.yaml").0, Outcome::Pass);
    assert!(!f.iter().any(|(r, _, s, _)| r == "b.named" && s == "pack.yaml"), "{f:#?}");
    // A document of neither kind says what each kind has.
    let neither = check(KINDS, &[("odd.yaml", "kind: x\ncases: []\n")], None);
    let (o, m) = outcome(&neither, "b.type", "kind");
    assert_eq!(o, Outcome::Fail);
    assert!(m.contains("no `kind` key and no `cases` key or a `cases` key and no `kind` key"), "{m}");
}

const CREDITS: &str = r#"
document Run as run where kind absent {
  on syntax rule r.syntax
  on duplicate_key rule r.duplicate_key
  on unknown_key rule r.unknown_key
  on type rule r.type
  items?: list Item default []
}
record Item {
  credit?: int
}
rule r.total
  let credits = [i.credit for i in run.items]
  require sum(credits) <= 10 and max(credits) <= 6 and min(credits) >= 0
    else fail "{sum(credits)} in all, {max(credits)} at most, {min(credits)} at least"
"#;

#[test]
fn sums_count_every_entry_and_an_unknown_entry_is_unknown() {
    let ok = check(CREDITS, &[("run.yaml", "items: [{credit: 5}, {credit: 5}]\n")], None);
    assert_eq!(outcome(&ok, "r.total", "run.yaml").0, Outcome::Pass);
    let over = check(CREDITS, &[("run.yaml", "items: [{credit: 5}, {credit: 5}, {credit: 1}]\n")], None);
    assert_eq!(outcome(&over, "r.total", "run.yaml"), (Outcome::Fail, "11 in all, 5 at most, 1 at least".into()));
    // An entry of the wrong type is unknown, and so is the sum.
    let unknown = check(CREDITS, &[("run.yaml", "items: [{credit: 5}, {credit: five}]\n")], None);
    assert_eq!(outcome(&unknown, "r.total", "run.yaml").0, Outcome::Unknown);
    // A credit left out is absent, and so is the sum: no comparison with it holds.
    let absent = check(CREDITS, &[("run.yaml", "items: [{credit: 5}, {}]\n")], None);
    assert_eq!(outcome(&absent, "r.total", "run.yaml").0, Outcome::Fail);
    // The least of no credits is not there: UNKNOWN, never a pass.
    let none = check(CREDITS, &[("run.yaml", "items: []\n")], None);
    assert_eq!(outcome(&none, "r.total", "run.yaml").0, Outcome::Unknown);
}

/// Like [`check`], with layer bindings `(layer, path)` and files given
/// under recorded paths `(recorded, text)`, as `--layer` and `--attach` do.
fn check_given(
    policy: &str,
    docs: &[(&str, &str)],
    layers: &[(&str, &str)],
    given: &[(&str, &str)],
) -> Vec<(String, Outcome, String, String)> {
    use grail_engine::db::{GivenFile, LayerBinding};
    let db = Database::default();
    let set = PolicySet::new(&db, vec![SourceText::new(&db, "policy.grail".into(), policy.into(), None)]);
    let compiled = compile_policy(&db, set);
    assert!(!compiled.has_errors(), "the policy compiles: {:#?}", compiled.diagnostics);
    let documents: Vec<SourceText> =
        docs.iter().map(|(p, t)| SourceText::new(&db, p.to_string(), t.to_string(), None)).collect();
    let bindings = layers
        .iter()
        .map(|(layer, path)| LayerBinding {
            document: documents[docs.iter().position(|(p, _)| p == path).expect("a document")],
            layer: layer.to_string(),
            by: grail_engine::layers::BoundBy::Flag,
        })
        .collect();
    let given = given
        .iter()
        .map(|(recorded, text)| GivenFile {
            recorded: recorded.to_string(),
            read: Ok(SourceText::new(&db, format!("local/{recorded}"), text.to_string(), None)),
        })
        .collect();
    let deployment = Deployment::builder(documents, Vec::new()).bindings(bindings).given(given).new(&db);
    check_deployment(&db, set, deployment)
        .findings
        .iter()
        .map(|f| (f.rule.clone(), f.outcome, f.subject.clone(), f.message.clone()))
        .collect()
}

const RECEIPTS: &str = r#"
document Receipts as receipt_file, receipt_files where kind == "tool-receipts" {
  on syntax rule receipts.syntax
  on duplicate_key rule receipts.duplicate_key
  on unknown_key rule receipts.unknown_key
  on type rule receipts.type
  lines into receipts
  kind: string
  receipts?: list Receipt default []
}
record Receipt identity tool_use_id {
  tool_use_id: id
  command: string
  exit_code?: int or null
  strict_code?: int
  cwd?: string
  artifacts?: list Artifact default []
  protected?: list string default []
}
record Artifact identity path {
  path: string
  sha256: string
}
layers of Receipts {
  layer harness
  layer agent
  separate
  on order rule receipts.layer_order
}
rule receipts.trusted
  require bound_to(receipt_file.kind, "harness") else fail "not bound to the harness"
rule receipts.exit_zero
  for r in receipt_file.receipts
  require present(r.exit_code) and r.exit_code == 0 else fail "{r.tool_use_id} exited {r.exit_code}"
rule receipts.null_is_decided
  for r in receipt_file.receipts
  require r.exit_code < 1 or r.exit_code >= 1 or is_null(r.exit_code) else fail "{r.tool_use_id}: neither"
rule receipts.artifact_hash
  for r in receipt_file.receipts
  for a in r.artifacts
  require sha256(attached(a.path)) == lower(a.sha256) else fail "{a.path} differs"
rule receipts.protected
  for r in receipt_file.receipts
  for a in r.artifacts
  require some p in r.protected: matches_glob(relative_path(a.path, r.cwd), p)
    else fail "{a.path} is not protected"
rule receipts.lines
  for r in receipt_file.receipts
  for a in r.artifacts
  require count(lines(text(attached(a.path)))) == 2 else fail "{a.path} has not two lines"
"#;

fn jsonl(lines: &[&str]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

#[test]
fn null_is_a_value_of_its_own_decided_in_every_comparison() {
    let doc = jsonl(&[
        r#"{"kind": "tool-receipts"}"#,
        r#"{"tool_use_id": "t0", "command": "make", "exit_code": 0}"#,
        r#"{"tool_use_id": "t1", "command": "make", "exit_code": null}"#,
        r#"{"tool_use_id": "t2", "command": "make"}"#,
    ]);
    let f = check_given(RECEIPTS, &[("r.jsonl", &doc)], &[("harness", "r.jsonl")], &[]);
    assert_eq!(outcome(&f, "receipts.exit_zero", "receipts.t0").0, Outcome::Pass);
    assert_eq!(outcome(&f, "receipts.exit_zero", "receipts.t1"), (Outcome::Fail, "t1 exited null".into()));
    // Absent is not null: the rule says `present(...)`, so it fails, never passes.
    assert_eq!(outcome(&f, "receipts.exit_zero", "receipts.t2").0, Outcome::Fail);
    assert_eq!(outcome(&f, "receipts.null_is_decided", "receipts.t1").0, Outcome::Pass);
    // Absent is decided too: neither less nor more than anything, and not null.
    assert_eq!(outcome(&f, "receipts.null_is_decided", "receipts.t2").0, Outcome::Fail);
    // A field without `or null` refuses null.
    let strict =
        jsonl(&[r#"{"kind": "tool-receipts"}"#, r#"{"tool_use_id": "t0", "command": "x", "strict_code": null}"#]);
    let g = check_given(RECEIPTS, &[("r.jsonl", &strict)], &[("harness", "r.jsonl")], &[]);
    let (o, m) = outcome(&g, "receipts.type", "receipts[0].strict_code");
    assert_eq!(o, Outcome::Fail);
    assert!(m.contains("found null"), "{m}");
}

#[test]
fn json_lines_are_a_header_and_entries_each_located() {
    let db = Database::default();
    let doc = jsonl(&[
        r#"{"kind": "tool-receipts"}"#,
        r#"{"tool_use_id": "t0", "command": "make", "exit_code": 0}"#,
        "",
        r#"{"tool_use_id": "t1", "command": "make", "exit_code": 2}"#,
    ]);
    let set = PolicySet::new(&db, vec![SourceText::new(&db, "policy.grail".into(), RECEIPTS.into(), None)]);
    let d = SourceText::new(&db, "r.jsonl".into(), doc.clone(), None);
    let report = check_deployment(&db, set, Deployment::builder(vec![d], Vec::new()).new(&db));
    let failed = report.findings.iter().find(|f| f.rule == "receipts.exit_zero" && f.subject == "receipts.t1");
    let (_, span) = failed.and_then(|f| f.location).expect("located");
    // The finding points into the fourth line, the entry of `t1`.
    assert_eq!(doc[..span.start].matches('\n').count(), 3, "{:?}", &doc[span.start..span.end]);
    // A line that is not JSON is a syntax finding that names its line.
    let broken = jsonl(&[r#"{"kind": "tool-receipts"}"#, r#"{"tool_use_id": "t0", "#]);
    let f = check_given(RECEIPTS, &[("r.jsonl", &broken)], &[], &[]);
    let syntax = f.iter().find(|(r, ..)| r == "receipts.syntax").expect("a syntax finding");
    assert_eq!(syntax.1, Outcome::Fail);
    assert!(syntax.3.starts_with("line 2:"), "{}", syntax.3);
    // The header may not write the list the lines fill.
    let twice = jsonl(&[r#"{"kind": "tool-receipts", "receipts": []}"#, r#"{"tool_use_id": "t0", "command": "x"}"#]);
    let f = check_given(RECEIPTS, &[("r.jsonl", &twice)], &[], &[]);
    assert_eq!(outcome(&f, "receipts.duplicate_key", "receipts").0, Outcome::Fail);
}

#[test]
fn separate_layers_read_every_document_apart() {
    let a = jsonl(&[r#"{"kind": "tool-receipts"}"#, r#"{"tool_use_id": "t0", "command": "make", "exit_code": 0}"#]);
    let b = jsonl(&[r#"{"kind": "tool-receipts"}"#, r#"{"tool_use_id": "t9", "command": "make", "exit_code": 0}"#]);
    let c = "kind: tool-receipts\nreceipts: []\n";
    let docs = [("a.jsonl", a.as_str()), ("b.jsonl", b.as_str()), ("c.yaml", c)];
    // Two documents of one layer, and an unbound one: no order finding, each judged on its own.
    let f = check_given(RECEIPTS, &docs, &[("harness", "a.jsonl"), ("harness", "b.jsonl")], &[]);
    assert_eq!(outcome(&f, "receipts.layer_order", "deployment").0, Outcome::Pass);
    assert_eq!(outcome(&f, "receipts.trusted", "a.jsonl").0, Outcome::Pass);
    assert_eq!(outcome(&f, "receipts.trusted", "b.jsonl").0, Outcome::Pass);
    assert_eq!(outcome(&f, "receipts.trusted", "c.yaml").0, Outcome::Fail);
    assert_eq!(outcome(&f, "receipts.exit_zero", "receipts.t9").0, Outcome::Pass);
    // A `layer:` of its own raises nothing: the file is what the invocation says.
    let claimed = "kind: tool-receipts\nlayer: harness\nreceipts: []\n";
    let f = check_given(RECEIPTS, &[("c.yaml", claimed)], &[], &[]);
    assert_eq!(outcome(&f, "receipts.trusted", "c.yaml").0, Outcome::Fail);
}

#[test]
fn attached_files_are_hashed_and_read_only_when_the_invocation_gives_them() {
    let sha = "c9eb2dbf5fcbd1c6a8ef5a5a6d1cde0db1d2d5d8ab6dd71c2d5d8d6f1f2fb1a5";
    let receipt = |hash: &str| {
        jsonl(&[
            r#"{"kind": "tool-receipts"}"#,
            &format!(
                r#"{{"tool_use_id": "t0", "command": "make", "exit_code": 0, "cwd": "/work/repo", "protected": ["build/**"], "artifacts": [{{"path": "/work/repo/build/./out/../report.xml", "sha256": "{hash}"}}]}}"#
            ),
        ])
    };
    let content = "<ok/>\n<done/>\n";
    let real = {
        use sha2::Digest as _;
        sha2::Sha256::digest(content.as_bytes()).iter().map(|b| format!("{b:02x}")).collect::<String>()
    };
    let path = "/work/repo/build/./out/../report.xml";
    let doc = receipt(&real.to_uppercase());
    let f = check_given(RECEIPTS, &[("r.jsonl", &doc)], &[("harness", "r.jsonl")], &[(path, content)]);
    let subject = format!("receipts.t0[{path}]");
    assert_eq!(outcome(&f, "receipts.artifact_hash", &subject).0, Outcome::Pass);
    assert_eq!(outcome(&f, "receipts.lines", &subject).0, Outcome::Pass);
    assert_eq!(outcome(&f, "receipts.protected", &subject).0, Outcome::Pass);
    let other = receipt(sha);
    let f = check_given(RECEIPTS, &[("r.jsonl", &other)], &[("harness", "r.jsonl")], &[(path, content)]);
    assert_eq!(outcome(&f, "receipts.artifact_hash", &subject).0, Outcome::Fail);
    // Nothing attached for the recorded path: missing evidence, never a pass.
    let f = check_given(RECEIPTS, &[("r.jsonl", &doc)], &[("harness", "r.jsonl")], &[]);
    let (o, m) = outcome(&f, "receipts.artifact_hash", &subject);
    assert_eq!(o, Outcome::Unknown);
    assert!(m.contains("no file was attached for it"), "{m}");
}

#[test]
fn paths_resolve_by_their_text_and_globs_keep_to_segments() {
    use grail_engine::eval::{glob, relative_path, resolve_path};
    assert_eq!(resolve_path("/work/repo", "build/../report.xml"), "/work/repo/report.xml");
    assert_eq!(resolve_path("/work/repo", "/etc/./x"), "/etc/x");
    assert_eq!(resolve_path("/", "../../x"), "/x");
    assert_eq!(resolve_path("a", "../../x"), "../x");
    assert_eq!(relative_path("/work/repo/a/b", "/work/repo/"), Some("a/b".into()));
    assert_eq!(relative_path("/work/repository/a", "/work/repo"), None);
    assert_eq!(relative_path("/work/repo", "/work/repo"), Some(".".into()));
    let g = glob("evidence/**").expect("a glob");
    assert!(g.is_match("evidence/ledger.jsonl") && g.is_match("evidence/a/b.jsonl"));
    assert!(!g.is_match("state/evidence/ledger.jsonl"));
    let star = glob("state/*").expect("a glob");
    assert!(star.is_match("state/x.yaml") && !star.is_match("state/T-1/workflow.yaml"));
    assert!(glob("a/[").is_err());
}

const JOIN: &str = r#"
document Audit as audit where kind absent {
  on syntax rule audit.syntax
  on duplicate_key rule audit.duplicate_key
  on unknown_key rule audit.unknown_key
  on type rule audit.type
  source: string
  rebound: string
}
fn suffix() = " Rebound."
rule audit.rebound
  require audit.rebound == audit.source + suffix() else fail "`{audit.rebound}` is not `{audit.source + suffix()}`"
"#;

#[test]
fn strings_join_with_plus_and_compare_exactly() {
    let pass = check(JOIN, &[("a.yaml", "source: Risks bounded.\nrebound: Risks bounded. Rebound.\n")], None);
    assert_eq!(outcome(&pass, "audit.rebound", "a.yaml").0, Outcome::Pass);
    // The suffix in front, twice, or without its space: each is another string.
    for rebound in ["Rebound. Risks bounded.", "Risks bounded. Rebound. Rebound.", "Risks bounded.Rebound."] {
        let doc = format!("source: Risks bounded.\nrebound: {rebound}\n");
        let (o, m) = outcome(&check(JOIN, &[("a.yaml", &doc)], None), "audit.rebound", "a.yaml");
        assert_eq!(o, Outcome::Fail, "{rebound}");
        assert!(m.contains("is not `Risks bounded. Rebound.`"), "{m}");
    }
}
