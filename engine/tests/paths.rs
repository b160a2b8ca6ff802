//! Key paths of findings (docs/language.md, "Where a finding is"): a small
//! policy whose rules and structural checks each point at one kind of
//! place, checked over small documents, every listed finding's path asserted.

use grail_engine::db::{AttachedFile, check_deployment, compile_policy};
use grail_engine::{Database, Deployment, Outcome, PolicySet, SourceText};

/// A listed finding's place: `(rule, outcome, path, attachment_path, related)`.
type Placed = (String, Outcome, String, Option<String>, Vec<String>);

/// The places of the findings a report lists (every outcome but PASS) of
/// checking `docs` (path, text) against `policy`, with `attached` files
/// (index of the document that names it, path as written, text), in report
/// order. (As `support::check`, with files attached.)
fn places(policy: &str, docs: &[(&str, &str)], attached: &[(usize, &str, &str)]) -> Vec<Placed> {
    let db = Database::default();
    let set = PolicySet::new(&db, vec![SourceText::new(&db, "policy.grail".into(), policy.into(), None)]);
    let compiled = compile_policy(&db, set);
    assert!(!compiled.has_errors(), "the policy compiles: {:#?}", compiled.diagnostics);
    let documents: Vec<SourceText> =
        docs.iter().map(|(p, t)| SourceText::new(&db, p.to_string(), t.to_string(), None)).collect();
    let attachments = attached
        .iter()
        .map(|(from, path, text)| AttachedFile {
            from: documents[*from],
            path: path.to_string(),
            read: Ok(SourceText::new(&db, path.to_string(), text.to_string(), None)),
        })
        .collect();
    let deployment = Deployment::builder(documents, attachments).new(&db);
    check_deployment(&db, set, deployment)
        .findings
        .iter()
        .filter(|f| f.outcome != Outcome::Pass)
        .map(|f| {
            let p = f.place.paths.as_ref().expect("a listed finding has a path");
            (f.rule.clone(), f.outcome, p.path.clone(), p.attachment_path.clone(), p.related.clone())
        })
        .collect()
}

const POLICY: &str = r#"
enum Level { low high }
document Team as team where kind absent {
  on syntax rule team.syntax
  on duplicate_key rule team.duplicate_key
  on unknown_key rule team.unknown_key
  on type rule team.type
  on missing_key rule team.missing_key
  name: string
  lead?: string
  levels?: map Level -> Step
  slots?: list Slot unique rule slot.unique
  labels?: map string -> Label
  probe?: ref Probe
  modes?: map Level -> string default "on"
}
record Step {
  size: int
  mode?: string
}
record Slot identity name {
  name: string
  peer?: string
}
record Label {
  url?: string
}
record Probe {
  ok: bool
  detail?: Detail
}
record Detail {
  code: int
}
rule team.named
  require team.name != "nobody" else fail "the team has no name"
rule team.led
  require present(team.lead) else fail "no lead"
  at team.lead
rule step.size
  for l, s in team.levels
  require s.size < 10 else fail "{l} is too large"
  at s.size
rule step.mode
  for l, s in team.levels
  require s.mode != "off" else fail "{l} is off"
  at s.mode
rule slot.peer
  for s in team.slots
  require s.peer != s.name else fail "{s.name} is its own peer"
  at s.peer
rule label.url
  for k, l in team.labels
  require l.url != "" else fail "{k} has an empty url"
  at l.url
rule probe.ok
  when present(team.probe)
  require team.probe.ok else fail "the probe failed"
  at team.probe.ok
rule probe.code
  when present(team.probe)
  require team.probe.detail.code == 0 else fail "the probe's code is not 0"
  at team.probe.detail.code
"#;

/// Rules that read what the document leaves to the policy's defaults, and past the end of a list.
const DEFAULTS: &str = r#"
rule mode.off
  for l, m in team.modes
  require m == "off" else fail "{l} is not off"
rule slot.sixth
  require present(team.slots[5]) else fail "there is no sixth slot"
  at team.slots[5]
"#;

/// The FAIL and UNKNOWN findings of `doc` as `rule: path`, one a line.
fn paths(doc: &str) -> String {
    paths_with(POLICY, doc)
}

fn paths_with(policy: &str, doc: &str) -> String {
    places(policy, &[("team.json", doc)], &[])
        .iter()
        .filter(|(_, outcome, ..)| *outcome != Outcome::NotApplicable)
        .map(|(rule, _, path, ..)| format!("{rule}: {path}\n"))
        .collect()
}

#[test]
fn a_finding_about_the_whole_document_is_at_the_binder() {
    // A rule without `for` or `at` points at the document; so does one that
    // reads a known-absent optional key, at that key.
    assert_eq!(paths(r#"{"name": "nobody"}"#), "team.led: lead\nteam.named: team\n");
    // A `for` over a collection the document leaves out does not apply: at that key.
    let found = places(POLICY, &[("team.json", r#"{"name": "a"}"#)], &[]);
    let step = found.iter().find(|p| p.0 == "step.size").expect("step.size is listed");
    assert_eq!((step.1, step.2.as_str()), (Outcome::NotApplicable, "levels"));
}

#[test]
fn a_nested_key_and_a_missing_one() {
    let doc = r#"{"name": "a", "lead": "b", "levels": {"high": {"size": 12, "mode": "off"}, "low": {}}}"#;
    assert_eq!(
        paths(doc),
        "step.size: levels.high.size\nstep.mode: levels.high.mode\nstep.size: levels.low.size\n\
         team.missing_key: levels.low.size\n"
    );
}

#[test]
fn a_list_entry_is_named_by_its_identity_in_a_rule_and_by_position_in_a_structural_finding() {
    let doc = r#"{"name": "a", "lead": "b", "slots": [{"name": "x.y", "peer": "x.y"}, {"name": "c", "peer": 3}]}"#;
    assert_eq!(paths(doc), "slot.peer: slots[\"x.y\"].peer\nslot.peer: slots[\"c\"].peer\nteam.type: slots[1].peer\n");
}

/// A rule that numbers the entries its findings are about: `at ... by position`.
const BY_POSITION: &str = r#"
rule slot.peer_numbered
  for s in team.slots
  require s.peer != s.name else fail "{s.name} is its own peer"
  at s.peer by position
"#;

#[test]
fn a_rule_at_a_value_by_position_numbers_the_entries() {
    let doc = r#"{"name": "a", "lead": "b", "slots": [{"name": "x", "peer": "y"}, {"name": "c", "peer": "c"}]}"#;
    let policy = format!("{POLICY}{BY_POSITION}");
    assert_eq!(paths_with(&policy, doc), "slot.peer: slots[\"c\"].peer\nslot.peer_numbered: slots[1].peer\n");
}

#[test]
fn a_key_outside_letters_digits_dash_and_underscore_is_quoted() {
    let doc = r#"{"name": "a", "lead": "b", "labels": {"ci.health review": {"url": ""}, "plain-key_1": {"url": ""}}}"#;
    assert_eq!(paths(doc), "label.url: labels.\"ci.health review\".url\nlabel.url: labels.plain-key_1.url\n");
}

#[test]
fn structural_findings_are_at_the_key_they_are_about() {
    // Unknown key: the key itself; wrong type: the value; missing required
    // key: the parent's path and the key, at the top level too.
    let doc = r#"{"lead": "b", "levels": {"low": {"size": "big", "extra": 1}}}"#;
    assert_eq!(
        paths(doc),
        "team.missing_key: name\nteam.named: team\nstep.size: levels.low.size\nteam.type: levels.low.size\n\
         team.unknown_key: levels.low.extra\n"
    );
}

#[test]
fn related_locations_have_their_paths() {
    let doc = r#"{"name": "a", "lead": "b", "slots": [{"name": "c"}, {"name": "d"}, {"name": "c"}]}"#;
    let found = places(POLICY, &[("team.json", doc)], &[]);
    let unique: Vec<_> = found.iter().filter(|p| p.0 == "slot.unique" && p.1 == Outcome::Fail).collect();
    assert_eq!(unique.len(), 1, "{found:?}");
    assert_eq!((unique[0].2.as_str(), unique[0].4.as_slice()), ("slots[2]", &["slots[0]".to_string()][..]));
}

#[test]
fn a_finding_in_an_attached_file_is_at_the_entry_that_names_it() {
    let doc = r#"{"name": "a", "lead": "b", "probe": "probe.json"}"#;
    let found = places(
        POLICY,
        &[("team.json", doc)],
        &[(0, "probe.json", r#"{"ok": false, "detail": {"code": 2, "other": true}}"#)],
    );
    let shown: Vec<String> = found
        .iter()
        .filter(|(_, outcome, ..)| *outcome != Outcome::NotApplicable)
        .map(|(rule, _, path, inner, _)| format!("{rule}: {path} {}", inner.as_deref().unwrap_or("-")))
        .collect();
    assert_eq!(
        shown,
        // The entry that names the file is the record holding the `ref` field: here the document.
        ["probe.ok: team ok", "probe.code: team detail.code", "team.unknown_key: team detail.other"],
        "{found:?}"
    );
}

#[test]
fn an_entry_the_defaults_fill_is_at_its_key_and_an_index_past_the_end_at_its_index() {
    // `modes` is left out: each of its entries is the policy's default, placed
    // at the key it would have; `slots[5]` is past the end of the list.
    let doc = r#"{"name": "a", "lead": "b", "slots": [{"name": "c"}]}"#;
    let policy = format!("{POLICY}{DEFAULTS}");
    assert_eq!(paths_with(&policy, doc), "slot.sixth: slots[5]\nmode.off: modes.high\nmode.off: modes.low\n");
    // `modes` is there without `low`; `slots` is left out (known absent).
    let doc = r#"{"name": "a", "lead": "b", "modes": {"high": "off"}}"#;
    assert_eq!(paths_with(&policy, doc), "slot.sixth: slots\nmode.off: modes.low\n");
}
