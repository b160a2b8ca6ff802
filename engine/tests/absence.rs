//! Absent, unknown and invalid (docs/language.md, "Absent, unknown and
//! invalid"): a small policy whose rules each read one construct, checked
//! over twin documents one token apart, every outcome asserted.

mod support;

use grail_engine::Outcome;

const POLICY: &str = r#"
enum Tier tightest_first { high low }
document Team as team where kind absent {
  on syntax rule team.syntax
  on duplicate_key rule team.duplicate_key
  on unknown_key rule team.unknown_key
  on type rule team.type
  name: string
  lead?: string
  level?: int >= 0
  tier?: Tier
  home?: string
  base?: string
  slots?: list Slot
  labels?: map string -> string
  extra?: list string
}
record Slot identity name {
  name: string
  scanner?: id
  tags?: list string
}
rule is.eq
  require team.lead == "ada" else fail "lead"
rule is.ne
  require team.lead != "ada" else fail "lead"
rule is.in
  require team.lead in {"ada", "bob"} else fail "lead"
rule is.not_in
  require team.lead not in {"eve"} else fail "lead"
rule is.held
  require "ada" in team.slots[0].tags else fail "tags"
rule is.lt
  require team.level < 3 else fail "level"
rule is.ge
  require team.level >= 3 else fail "level"
rule is.tighter
  require team.tier tighter_than "low" else fail "tier"
rule is.arith
  require team.level + 1 > 3 else fail "level"
rule is.max
  require max(team.level, 1) >= 1 else fail "level"
rule is.lower
  require lower(team.lead) == "ada" else fail "lead"
rule is.matches
  require not matches(team.lead, "^e") else fail "lead"
rule is.present
  require present(team.lead) else fail "lead"
rule is.absent
  require absent(team.lead) else fail "lead"
rule is.coalesce
  require (team.lead ?? "nobody") == "nobody" else fail "lead"
rule is.some
  require some s in team.slots: s.scanner == "secret-scan" else fail "no scanner"
rule is.every
  require every s in team.slots: s.scanner == "secret-scan" else fail "not every"
rule is.count
  require count(team.slots) == 0 else fail "slots"
rule is.empty
  require empty(team.slots) else fail "slots"
rule is.entries
  require entries(team.slots) == 0 else fail "slots"
rule is.built
  require count([s for s in team.slots if present(s.scanner)]) == 0 else fail "slots"
rule is.joined
  require count(team.extra ++ [team.name]) == 1 else fail "extra"
rule is.each
  for s in team.slots
  require present(s.scanner) else fail "slot {s.name}"
rule is.entry
  require team.labels["owner"] == "ada" else fail "owner"
rule is.index
  require team.slots[1].name == "b" else fail "slot b"
rule is.url_host
  require url_host(team.home) != "evil.example" else fail "home"
rule is.url_whole
  require url(team.home) != "https://evil.example/" else fail "home"
rule is.int
  require int(team.home) != 7 else fail "home"
rule is.relative
  require relative_path(team.home, team.base) != "x" else fail "home"
rule is.name
  require team.name == "core" else fail "name"
rule is.name_coalesce
  require (team.name ?? "core") == "core" else fail "name"
rule is.scanner_slots
  require count([s for s in team.slots if absent(s.scanner)]) >= 2 else fail "model slots"
rule is.no_frontier_tag
  for s in team.slots
  require not ("frontier" in (s.tags ?? [])) else fail "slot {s.name}"
rule is.and_unknown
  require present(team.lead) and team.name == "core" else fail "lead"
rule is.or_unknown
  require absent(team.lead) or team.name == "core" else fail "lead"
"#;

type Found = Vec<(String, Outcome, String, String)>;

fn check(doc: &str) -> Found {
    support::check(POLICY, &[("team.json", doc)], None)
}

/// The outcome of `rule` (for the subject `subject`, the document by default).
#[track_caller]
fn of(found: &Found, rule: &str, subject: &str) -> (Outcome, String) {
    found
        .iter()
        .find(|(r, _, s, _)| r == rule && s == subject)
        .map(|(_, o, _, m)| (*o, m.clone()))
        .unwrap_or_else(|| panic!("no finding of {rule} for {subject} in {found:#?}"))
}

/// Asserts each `(rule, outcome)` for the document.
#[track_caller]
fn expect(found: &Found, cases: &[(&str, Outcome)]) {
    let mut wrong = Vec::new();
    for (rule, want) in cases {
        let (got, message) = of(found, rule, "team.json");
        if got != *want {
            wrong.push(format!("{rule}: {got:?} ({message}), expected {want:?}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

use Outcome::{Fail, NotApplicable, Pass, Unknown};

#[test]
fn a_left_out_optional_field_is_decidedly_absent() {
    // The twins: `lead`, `level` and `tier` left out, and written.
    let absent = check(r#"{"name": "core"}"#);
    expect(
        &absent,
        &[
            ("is.eq", Fail),
            ("is.ne", Pass),
            ("is.in", Fail),
            ("is.not_in", Pass),
            ("is.held", Fail),
            ("is.lt", Fail),
            ("is.ge", Fail),
            ("is.tighter", Fail),
            ("is.arith", Fail),
            ("is.max", Fail),
            ("is.lower", Fail),
            ("is.matches", Pass),
            ("is.present", Fail),
            ("is.absent", Pass),
            ("is.coalesce", Pass),
            ("is.url_host", Pass),
            ("is.url_whole", Pass),
            ("is.int", Pass),
            ("is.and_unknown", Fail),
            ("is.or_unknown", Pass),
        ],
    );
    let there = check(r#"{"name": "core", "lead": "ada", "level": 3, "tier": "high"}"#);
    expect(
        &there,
        &[
            ("is.eq", Pass),
            ("is.ne", Fail),
            ("is.in", Pass),
            ("is.not_in", Pass),
            ("is.lt", Fail),
            ("is.ge", Pass),
            ("is.tighter", Pass),
            ("is.arith", Pass),
            ("is.max", Pass),
            ("is.lower", Pass),
            ("is.matches", Pass),
            ("is.present", Pass),
            ("is.absent", Fail),
            ("is.coalesce", Fail),
        ],
    );
}

#[test]
fn an_absent_collection_is_empty() {
    let absent = check(r#"{"name": "core"}"#);
    expect(
        &absent,
        &[
            ("is.some", Fail),
            ("is.every", Pass),
            ("is.count", Pass),
            ("is.empty", Pass),
            ("is.entries", Pass),
            ("is.built", Pass),
            ("is.joined", Pass),
            ("is.each", NotApplicable),
            ("is.scanner_slots", Fail),
        ],
    );
    assert!(of(&absent, "is.each", "team.json").1.contains("is absent"));
    // One slot, one token apart: without a scanner, and with one.
    let none = check(r#"{"name": "core", "slots": [{"name": "a"}]}"#);
    expect(&none, &[("is.some", Fail), ("is.every", Fail), ("is.count", Fail), ("is.empty", Fail)]);
    assert_eq!(of(&none, "is.each", "slots.a").0, Fail);
    let one = check(r#"{"name": "core", "slots": [{"name": "a", "scanner": "secret-scan"}]}"#);
    expect(&one, &[("is.some", Pass), ("is.every", Pass), ("is.built", Fail)]);
    assert_eq!(of(&one, "is.each", "slots.a").0, Pass);
}

#[test]
fn what_is_read_below_an_absence_is_absent() {
    // A map without the entry, a list without the index, a field of an absent slot.
    let without = check(r#"{"name": "core", "labels": {"team": "ada"}, "slots": [{"name": "a"}]}"#);
    expect(&without, &[("is.entry", Fail), ("is.index", Fail), ("is.held", Fail)]);
    let with = check(
        r#"{"name": "core", "labels": {"owner": "ada"}, "slots": [{"name": "a", "tags": ["ada"]}, {"name": "b"}]}"#,
    );
    expect(&with, &[("is.entry", Pass), ("is.index", Pass), ("is.held", Pass)]);
}

#[test]
fn what_a_function_derives_is_absent_or_unknown_as_it_says() {
    // A URL without a host has decidedly none: `!=` holds.
    let no_host = check(r#"{"name": "core", "home": "mailto:a@evil.example"}"#);
    expect(&no_host, &[("is.url_host", Pass), ("is.url_whole", Pass)]);
    let host = check(r#"{"name": "core", "home": "https://evil.example/"}"#);
    expect(&host, &[("is.url_host", Fail), ("is.url_whole", Fail)]);
    // A text that is no URL, and no integer, is missing evidence: never invalid, never a pass.
    let no_url = check(r#"{"name": "core", "home": "evil.example"}"#);
    expect(&no_url, &[("is.url_host", Unknown), ("is.url_whole", Unknown), ("is.int", Unknown)]);
    let (_, why) = of(&no_url, "is.url_host", "team.json");
    assert!(why.contains("`evil.example` (not a URL)") && !why.contains("invalid"), "{why}");
    let seven = check(r#"{"name": "core", "home": "7"}"#);
    expect(&seven, &[("is.int", Fail)]);
    // Not below the base is a decided fact.
    let outside = check(r#"{"name": "core", "home": "/etc/x", "base": "/work"}"#);
    expect(&outside, &[("is.relative", Pass)]);
    let inside = check(r#"{"name": "core", "home": "/work/x", "base": "/work"}"#);
    expect(&inside, &[("is.relative", Fail)]);
}

#[test]
fn a_required_field_left_out_is_missing_evidence() {
    let missing = check(r#"{"lead": "ada"}"#);
    assert!(missing.iter().any(|(r, o, s, _)| r == "team.type" && *o == Fail && s == "name"), "{missing:#?}");
    expect(&missing, &[("is.name", Unknown), ("is.name_coalesce", Pass)]);
    // `false and unknown` is false; `true or unknown` is true.
    expect(&missing, &[("is.and_unknown", Unknown)]);
    let (_, why) = of(&missing, "is.name", "team.json");
    assert!(why.contains("`name` is absent"), "{why}");
    let no_lead = check(r#"{"level": 1}"#);
    expect(&no_lead, &[("is.and_unknown", Fail), ("is.or_unknown", Pass)]);
    let named = check(r#"{"name": "core", "lead": "ada"}"#);
    expect(&named, &[("is.name", Pass), ("is.and_unknown", Pass)]);
}

#[test]
fn an_invalid_value_is_unknown_even_to_present_absent_and_coalesce() {
    // The twins: a lead that is a string, and one that is a list.
    let invalid = check(r#"{"name": "core", "lead": ["ada"]}"#);
    expect(
        &invalid,
        &[
            ("is.present", Unknown),
            ("is.absent", Unknown),
            ("is.coalesce", Unknown),
            ("is.eq", Unknown),
            ("is.ne", Unknown),
            ("is.in", Unknown),
        ],
    );
    assert!(invalid.iter().any(|(r, o, s, _)| r == "team.type" && *o == Fail && s == "lead"), "{invalid:#?}");
    let (_, why) = of(&invalid, "is.present", "team.json");
    assert!(why.contains("invalid"), "{why}");
    let valid = check(r#"{"name": "core", "lead": "ada"}"#);
    expect(&valid, &[("is.present", Pass), ("is.absent", Fail), ("is.coalesce", Fail)]);
    // Below its minimum, or outside its vocabulary, alike.
    let below = check(r#"{"name": "core", "level": -1, "tier": "middle"}"#);
    expect(&below, &[("is.ge", Unknown), ("is.lt", Unknown), ("is.tighter", Unknown)]);
}

#[test]
fn a_scanner_of_the_wrong_type_makes_no_model_slot_and_no_empty_list() {
    // The issue's examples: `scanner: [frontier]` does not make `b` a model
    // slot (which would make two, and pass), and `tags: frontier` does not
    // read as `[]` (which would pass).
    let invalid = check(
        r#"{"name": "core", "slots": [{"name": "a"}, {"name": "b", "scanner": ["frontier"], "tags": "frontier"}]}"#,
    );
    assert_eq!(of(&invalid, "is.scanner_slots", "team.json").0, Unknown);
    let (o, why) = of(&invalid, "is.no_frontier_tag", "slots.b");
    assert_eq!(o, Unknown, "{why}");
    assert!(why.contains("invalid"), "{why}");
    let valid = check(
        r#"{"name": "core", "slots": [{"name": "a"}, {"name": "b", "scanner": "frontier", "tags": ["frontier"]}]}"#,
    );
    assert_eq!(of(&valid, "is.scanner_slots", "team.json").0, Fail);
    assert_eq!(of(&valid, "is.no_frontier_tag", "slots.b").0, Fail);
    let absent = check(r#"{"name": "core", "slots": [{"name": "a"}, {"name": "b"}]}"#);
    assert_eq!(of(&absent, "is.scanner_slots", "team.json").0, Pass);
    assert_eq!(of(&absent, "is.no_frontier_tag", "slots.b").0, Pass);
}
