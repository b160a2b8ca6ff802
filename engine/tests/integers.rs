//! Integers of any size (binding-v1 section 9a): a document's integer past
//! 64 bits, or `int(s)` of a long digit string, compares exactly with any
//! other, never overflowing into UNKNOWN. Twin documents one token apart:
//! one fails, one passes.

use grail_engine::db::{check_deployment, compile_policy};
use grail_engine::{Database, Deployment, Outcome, PolicySet, SourceText};

const POLICY: &str = r#"
document Map as map where kind absent {
  on syntax rule map.syntax
  on duplicate_key rule map.duplicate_key
  on unknown_key rule map.unknown_key
  on type rule map.type
  revision: int >= 1
  previous?: int
  counts?: list int
  distinct_counts?: list int unique rule map.unique_count
  read?: string
}

rule map.advances
  require map.revision > map.previous else fail "revision {map.revision} is not past {map.previous}"

rule map.at_most
  require map.revision <= map.previous else fail "revision {map.revision} is past {map.previous}"

rule map.same
  require map.revision == map.previous else fail "revision {map.revision} is not {map.previous}"

rule map.next
  require map.revision - map.previous == 1 else fail "revision {map.revision} does not follow {map.previous}"

rule map.square_small
  require map.revision * map.revision < 4 else fail "the revision is not small"

rule map.two_counts
  require count(map.counts) == 2 else fail "the counts are not two distinct values"

rule map.largest
  require max(map.counts) == map.revision and min(map.counts) < map.revision
    else fail "the revision is not the largest count"

rule map.previous_first
  require map.previous < max(map.counts) else fail "the previous revision is not below every count"

rule map.pairwise
  require max(map.revision, map.previous) == map.revision else fail "the revision is not the larger"

rule map.long_enough
  require seconds(map.revision) > days(365) else fail "{map.revision} seconds are not a year"

rule map.indexed
  require map.counts[map.revision] ?? 0 == 0 else fail "the count at the revision is not zero"

rule map.read_above_zero
  require int(map.read) > 0 else fail "`{map.read}` bytes were read"
"#;

/// The outcome and message of `rule` on the document `text`, named `name`
/// (its extension gives its syntax).
#[track_caller]
fn judge(rule: &str, name: &str, text: &str) -> (Outcome, String) {
    let db = Database::default();
    let set = PolicySet::new(&db, vec![SourceText::new(&db, "policy.grail".into(), POLICY.into(), None)]);
    let compiled = compile_policy(&db, set);
    assert!(!compiled.has_errors(), "the policy compiles: {:#?}", compiled.diagnostics);
    let documents = vec![SourceText::new(&db, name.into(), text.into(), None)];
    let report = check_deployment(&db, set, Deployment::builder(documents, Vec::new()).new(&db));
    let found: Vec<_> = report.findings.iter().filter(|f| f.rule == rule).collect();
    let f = found.iter().find(|f| f.outcome != Outcome::Pass).or(found.first());
    let f = f.unwrap_or_else(|| panic!("no finding of {rule} on {text}: {:#?}", report.findings));
    (f.outcome, f.message.clone())
}

/// `rule` on a map of `revision` and `previous`, written in YAML and in JSON
/// (the JSON reader's two paths agree: see its unit tests).
#[track_caller]
fn outcome(rule: &str, revision: &str, previous: &str) -> Outcome {
    let yaml = judge(rule, "map.yaml", &format!("revision: {revision}\nprevious: {previous}\n"));
    let json = judge(rule, "map.json", &format!(r#"{{"revision": {revision}, "previous": {previous}}}"#));
    assert_eq!(yaml, json, "{rule} on {revision}, {previous}: YAML and JSON agree");
    yaml.0
}

#[track_caller]
fn twins(rule: &str, failing: (&str, &str), passing: (&str, &str)) {
    assert_eq!(outcome(rule, failing.0, failing.1), Outcome::Fail, "{rule} fails on {failing:?}");
    assert_eq!(outcome(rule, passing.0, passing.1), Outcome::Pass, "{rule} passes on {passing:?}");
}

const BIG: &str = "18446744073709551617";
const BIG_LESS: &str = "18446744073709551616";
const I64_MAX: &str = "9223372036854775807";
const I64_MAX_PLUS: &str = "9223372036854775808";

#[test]
fn a_revision_past_64_bits_compares_exactly() {
    // A Knowledge Map-like revision, one token apart from its twin.
    twins("map.advances", (BIG_LESS, BIG), (BIG, BIG_LESS));
    twins("map.advances", (BIG, BIG), (BIG, BIG_LESS));
    twins("map.at_most", (BIG, BIG_LESS), (BIG, BIG));
    twins("map.same", (BIG, BIG_LESS), (BIG, BIG));
    // Far apart: a hundred digits against a small one.
    let huge = format!("1{}", "0".repeat(99));
    twins("map.advances", ("5", &huge), (&huge, "5"));
    twins("map.advances", ("1", "5"), ("1", &format!("-{huge}")));
    // A revision below its minimum is invalid: unknown, not a comparison.
    assert_eq!(outcome("map.advances", &format!("-{huge}"), "-5"), Outcome::Unknown);
}

#[test]
fn comparisons_cross_the_64_bit_boundary_both_ways() {
    twins("map.advances", (I64_MAX, I64_MAX_PLUS), (I64_MAX_PLUS, I64_MAX));
    twins("map.at_most", (I64_MAX_PLUS, I64_MAX), (I64_MAX, I64_MAX_PLUS));
    twins("map.advances", ("1", I64_MAX_PLUS), ("1", "-9223372036854775809"));
    // Below the negative end: the previous revision against the largest count.
    let doc = |previous: &str, count: &str| format!("revision: 1\nprevious: {previous}\ncounts: [{count}]\n");
    let (min, below) = ("-9223372036854775808", "-9223372036854775809");
    assert_eq!(judge("map.previous_first", "map.yaml", &doc(min, below)).0, Outcome::Fail);
    assert_eq!(judge("map.previous_first", "map.yaml", &doc(below, min)).0, Outcome::Pass);
    assert_eq!(judge("map.previous_first", "map.yaml", &doc(below, below)).0, Outcome::Fail);
    twins("map.same", ("1", "-18446744073709551617"), ("1", "1"));
    twins("map.pairwise", ("1", I64_MAX_PLUS), (I64_MAX_PLUS, "1"));
    twins("map.pairwise", (BIG_LESS, BIG), (BIG, BIG_LESS));
}

#[test]
fn arithmetic_is_exact_past_64_bits_and_unknown_past_128() {
    twins("map.next", (BIG, I64_MAX_PLUS), (BIG, BIG_LESS));
    twins("map.next", (I64_MAX_PLUS, "9223372036854775806"), (I64_MAX_PLUS, I64_MAX));
    // 2^64 + 1 squared is past 2^127 and not less than 4: unknown, never a wrong answer.
    assert_eq!(outcome("map.square_small", BIG, "0"), Outcome::Unknown);
    assert_eq!(outcome("map.square_small", "1", "0"), Outcome::Pass);
    assert_eq!(outcome("map.square_small", "2", "0"), Outcome::Fail);
    // A product of 64-bit ints past 64 bits is exact, not clamped.
    assert_eq!(outcome("map.square_small", "4294967296", "0"), Outcome::Fail);
}

#[test]
fn a_duration_or_an_index_past_64_bits_is_exact() {
    twins("map.long_enough", ("31535999", "0"), (BIG, "0"));
    // 2^64 + 1 seconds is a duration of 128-bit nanoseconds; far beyond, unknown.
    assert_eq!(outcome("map.long_enough", &"9".repeat(40), "0"), Outcome::Unknown);
    // An index past 64 bits is past the end: absent, so the default.
    let doc = |revision: &str| format!("revision: {revision}\ncounts: [0, 5]\n");
    assert_eq!(judge("map.indexed", "map.yaml", &doc("1")).0, Outcome::Fail);
    assert_eq!(judge("map.indexed", "map.yaml", &doc(BIG)).0, Outcome::Pass);
}

#[test]
fn a_minimum_holds_for_integers_of_any_size() {
    let doc = |revision: &str| format!("revision: {revision}\n");
    assert_eq!(judge("map.type", "map.yaml", &doc(BIG)).0, Outcome::Pass);
    let (o, m) = judge("map.type", "map.yaml", &doc("-99999999999999999999"));
    assert_eq!(o, Outcome::Fail, "{m}");
    assert_eq!(m, "`revision` must be an integer of at least 1, found `-99999999999999999999`");
    let (o, m) = judge("map.type", "map.json", r#"{"revision": -99999999999999999999}"#);
    assert_eq!(
        (o, m.as_str()),
        (Outcome::Fail, "`revision` must be an integer of at least 1, found `-99999999999999999999`")
    );
    // A number with a fraction is not an int, however large.
    let (o, m) = judge("map.type", "map.yaml", &doc("18446744073709551617.5"));
    assert_eq!(o, Outcome::Fail, "{m}");
    assert_eq!(judge("map.type", "map.yaml", &doc("1.0")).0, Outcome::Fail);
}

#[test]
fn a_digit_string_of_any_length_is_above_zero_when_a_digit_is_not_zero() {
    let doc = |read: &str| format!("revision: 1\nread: \"{read}\"\n");
    let rule = "map.read_above_zero";
    let zeros = "0".repeat(40);
    let one = format!("{}1", "0".repeat(39));
    let forty = "1234567890".repeat(4);
    for (bad, good) in [(zeros.as_str(), one.as_str()), (&format!("-{forty}"), forty.as_str()), ("0", "1")] {
        assert_eq!(judge(rule, "map.yaml", &doc(bad)).0, Outcome::Fail, "{bad}");
        assert_eq!(judge(rule, "map.yaml", &doc(good)).0, Outcome::Pass, "{good}");
    }
    // Not digits: absent, so unknown.
    assert_eq!(judge(rule, "map.yaml", &doc("1e40")).0, Outcome::Unknown);
}

#[test]
fn count_max_and_min_see_big_integers_exactly() {
    let doc = |counts: &str| format!("revision: {BIG}\ncounts: [{counts}]\n");
    let json = |counts: &str| format!(r#"{{"revision": {BIG}, "counts": [{counts}]}}"#);
    for (bad, good) in [
        (format!("{BIG}, {BIG}"), format!("{BIG}, {BIG_LESS}")),
        (format!("{BIG}, 0{BIG}"), format!("{BIG}, -{BIG}")),
        (format!("{I64_MAX_PLUS}, {I64_MAX_PLUS}"), format!("{I64_MAX_PLUS}, {I64_MAX}")),
    ] {
        for (read, name) in [(&doc as &dyn Fn(&str) -> String, "map.yaml"), (&json, "map.json")] {
            if name == "map.json" && bad.contains(", 0") {
                continue; // JSON has no leading zeros
            }
            assert_eq!(judge("map.two_counts", name, &read(&bad)).0, Outcome::Fail, "{bad} in {name}");
            assert_eq!(judge("map.two_counts", name, &read(&good)).0, Outcome::Pass, "{good} in {name}");
        }
    }
    let unique = |counts: &str| format!("revision: 1\ndistinct_counts: [{counts}]\n");
    let (o, m) = judge("map.unique_count", "map.yaml", &unique(&format!("{BIG}, +{BIG}")));
    assert_eq!(o, Outcome::Fail, "{m}");
    assert_eq!(judge("map.unique_count", "map.yaml", &unique(&format!("{BIG}, {BIG_LESS}"))).0, Outcome::Pass);
    assert_eq!(judge("map.largest", "map.yaml", &doc(&format!("1, {BIG_LESS}"))).0, Outcome::Fail);
    assert_eq!(judge("map.largest", "map.yaml", &doc(&format!("{BIG_LESS}, {BIG}, -{BIG}"))).0, Outcome::Pass);
}
