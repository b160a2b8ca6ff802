//! The engine's limits on hostile input, each with an input just under it
//! (accepted) and one just over it (a located error, never a crash).

use grail_engine::document::{Format, Limits, NodeKind, load};
use grail_engine::lower::{MAX_EXPANSION_DEPTH, MAX_EXPANSIONS};

fn codes(policy: &str) -> Vec<(&'static str, String)> {
    let parsed = grail_lang::parse(policy);
    assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
    let lowered = grail_engine::lower::lower(&[&parsed.file]);
    lowered.diagnostics.iter().map(|d| (d.code, d.message.clone())).collect()
}

const DOC: &str = "enum K { a }\ndocument D as d where kind absent {\n  on syntax rule s.syntax\n  on duplicate_key rule s.dup\n  on unknown_key rule s.unknown\n  on type rule s.type\n  n?: int\n}\n";

/// `f0(x) = d.n`, `f{i}(x) = f{i-1}(f{i-1}(x))`: calling `f{k}` expands 2^(k+1) - 1 calls.
fn doubling(k: usize) -> String {
    let mut text = String::from(DOC);
    text.push_str("fn f0(x) = d.n\n");
    for i in 1..=k {
        text.push_str(&format!("fn f{i}(x) = f{}(x) + f{}(x)\n", i - 1, i - 1));
    }
    text.push_str(&format!("rule r.r\n  require f{k}(1) > 0 else fail \"m\"\n"));
    text
}

#[test]
fn function_expansion_just_under_the_cap_compiles_and_just_over_is_refused() {
    // 2^12 - 1 = 4095 expansions: under; 2^13 - 1: over.
    assert_eq!((1usize << 12) - 1, MAX_EXPANSIONS - 1);
    assert_eq!(codes(&doubling(11)), vec![]);
    let over = codes(&doubling(12));
    assert_eq!(over.len(), 1, "{over:?}");
    assert_eq!(over[0].0, "expansion-limit");
    // Far over returns quickly too (2^40 calls if nothing stopped it).
    assert_eq!(codes(&doubling(40))[0].0, "expansion-limit");
}

/// `g0(x) = d.n`, `g{i}(x) = g{i-1}(x)`: calling `g{k}` nests k + 1 calls.
fn chain(k: usize) -> String {
    let mut text = String::from(DOC);
    text.push_str("fn g0(x) = d.n\n");
    for i in 1..=k {
        text.push_str(&format!("fn g{i}(x) = g{}(x)\n", i - 1));
    }
    text.push_str(&format!("rule r.r\n  require g{k}(1) > 0 else fail \"m\"\n"));
    text
}

#[test]
fn nested_calls_just_under_the_depth_cap_compile_and_just_over_are_refused() {
    assert_eq!(codes(&chain(MAX_EXPANSION_DEPTH - 1)), vec![]);
    let over = codes(&chain(MAX_EXPANSION_DEPTH));
    assert_eq!(over.len(), 1, "{over:?}");
    assert_eq!(over[0].0, "expansion-limit");
}

fn yaml(text: &str) -> Result<grail_engine::document::Node, grail_engine::document::SyntaxError> {
    load(text, Format::Yaml, &Limits::default())
}

#[test]
fn yaml_alias_expansion_just_under_the_cap_loads_and_just_over_is_refused() {
    // The anchored list is 100 nodes (itself and 99 items); 100 aliases expand 10_000.
    let cap = Limits::default().max_alias_expansions;
    assert_eq!(cap, 10_000);
    let anchored: Vec<String> = (0..99).map(|i| i.to_string()).collect();
    let doc = |aliases: usize| format!("a: &a [{}]\nb: [{}]\n", anchored.join(", "), vec!["*a"; aliases].join(", "));
    let under = yaml(&doc(100)).expect("10_000 expanded nodes are accepted");
    let NodeKind::Map(entries) = under.kind else { panic!("a map") };
    assert!(matches!(&entries[1].value.kind, NodeKind::List(items) if items.len() == 100));
    let over = yaml(&doc(101)).expect_err("10_100 expanded nodes are refused");
    assert_eq!(over.message, "YAML alias expansion exceeds 10000 nodes");
    let text = doc(101);
    assert_eq!(&text[over.span.start..over.span.end], "*a");
}

#[test]
fn nesting_just_under_the_depth_cap_loads_and_just_over_is_refused() {
    let depth = Limits::default().max_depth;
    assert_eq!(depth, 128);
    for format in [Format::Json, Format::Yaml] {
        let nested = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        load(&nested(depth), format, &Limits::default()).expect("128 levels load");
        let e = load(&nested(depth + 1), format, &Limits::default()).expect_err("129 levels are refused");
        assert_eq!(e.message, "nesting deeper than 128 levels");
        assert_eq!(e.span.start, 128);
        // Block mappings count the same way.
        let block =
            |n: usize| (0..n).map(|i| format!("{}k:\n", " ".repeat(i))).collect::<String>() + &" ".repeat(n) + "v";
        if format == Format::Yaml {
            load(&block(depth), format, &Limits::default()).expect("128 levels of keys load");
            let e = load(&block(depth + 1), format, &Limits::default()).expect_err("129 levels are refused");
            assert_eq!(e.message, "nesting deeper than 128 levels");
        }
    }
}

/// A quadratic rule: every pair of items must name one another in `apart_from`.
const PAIRWISE: &str = "document D as d where kind absent {
  on syntax rule s.syntax
  on duplicate_key rule s.dup
  on unknown_key rule s.unknown
  on type rule s.type
  items: list Item
}
record Item identity name {
  name: string
  apart_from?: list string default []
}
rule r.pairwise
  for (a, b) in pairs(d.items)
  require b.name in a.apart_from or a.name in b.apart_from
    else fail \"`{a.name}` and `{b.name}` name no relation between them\"
";

/// Steps taken by [`PAIRWISE`] over a document of `items` items that name
/// no relation, within `budget`, and its findings.
fn pairwise(items: usize, budget: u64) -> (u64, Vec<grail_engine::Finding>) {
    use grail_engine::eval::{Roots, evaluate_rule_within};
    let parsed = grail_lang::parse(PAIRWISE);
    assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
    let lowered = grail_engine::lower::lower(&[&parsed.file]);
    assert!(lowered.diagnostics.is_empty(), "{:?}", lowered.diagnostics);
    let policy = &lowered.policy;
    let mut text = String::from("items:\n");
    for i in 0..items {
        text.push_str(&format!("  - {{name: m{i}}}\n"));
    }
    let root = yaml(&text).expect("a document");
    let kind = grail_engine::conform::select_kind(policy, 0, &root).expect("a document of kind D");
    let never = |_: &str| grail_engine::conform::Resolved::Refused("not read".into());
    let none = grail_engine::hir::Checks::default();
    let env = grail_engine::conform::Env { overrides: &none, resolve: &never, partial: false };
    let (value, _) = grail_engine::conform::conform(policy, kind, 0, &root, &env);
    let mut single = vec![None; policy.documents.len()];
    let mut all = vec![Vec::new(); policy.documents.len()];
    single[kind as usize] = Some(value.clone());
    all[kind as usize] = vec![("d".to_string(), value)];
    let rule = policy.rules.iter().find(|r| r.id == "r.pairwise").expect("the rule");
    let mut out = Vec::new();
    let roots = Roots::of(&single, &all);
    let steps = evaluate_rule_within(policy, rule, &roots, &[], false, &mut out, budget);
    (steps, out)
}

#[test]
fn a_rule_within_its_step_budget_is_judged_and_one_step_short_fails_whole() {
    use grail_engine::Outcome;
    let (needed, findings) = pairwise(40, u64::MAX);
    assert_eq!(findings.len(), 40 * 39 / 2, "every pair of 40 items that name no relation fails");
    let (taken, at) = pairwise(40, needed);
    assert_eq!((taken, at.len()), (needed, findings.len()), "exactly the budget: judged in full");
    let (_, short) = pairwise(40, needed - 1);
    let stopped: Vec<_> = short.iter().filter(|f| f.message.starts_with("this rule stopped after")).collect();
    assert_eq!(stopped.len(), 1, "{:?}", short.last());
    assert_eq!(stopped[0].outcome, Outcome::Fail);
    assert!(short.iter().all(|f| f.outcome == Outcome::Fail));
    // The shipped budget stops a quadratic rule early, quickly.
    let started = std::time::Instant::now();
    let (taken, huge) = pairwise(3000, grail_engine::eval::MAX_STEPS_PER_RULE);
    assert!(taken <= grail_engine::eval::MAX_STEPS_PER_RULE);
    assert_eq!(huge.len(), 1, "the pairs alone are over budget: nothing is judged");
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
}

/// Lowers `policy` on a thread with the 2 MiB stack of a test or a small
/// worker thread, and returns the codes of its diagnostics.
fn codes_on_a_small_stack(policy: String) -> Vec<&'static str> {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || codes(&policy).into_iter().map(|(c, _)| c).collect())
        .expect("a thread")
        .join()
        .expect("no overflow")
}

#[test]
fn expanded_nesting_just_under_the_cap_compiles_and_just_over_is_refused_once() {
    use grail_engine::lower::MAX_LOWERED_DEPTH;
    // `h{i}(x) = h{i-1}(x) + 1`: each level adds a call and an operator.
    let chain = |k: usize| {
        let mut text = String::from(DOC);
        text.push_str("fn h0(x) = d.n\n");
        for i in 1..=k {
            text.push_str(&format!("fn h{i}(x) = h{}(x) + 1\n", i - 1));
        }
        text.push_str(&format!("rule r.r\n  require h{k}(1) > 0 else fail \"m\"\n"));
        text
    };
    let first_refused = (1..MAX_LOWERED_DEPTH)
        .find(|&k| !codes_on_a_small_stack(chain(k)).is_empty())
        .expect("refused before the cap in calls");
    assert!(first_refused > 20, "{first_refused}");
    assert_eq!(codes_on_a_small_stack(chain(first_refused - 1)), Vec::<&str>::new());
    // Reported once per rule, however many calls are over.
    assert_eq!(codes_on_a_small_stack(chain(first_refused)), vec!["expansion-limit"]);
    // A long chain of operators in one function, called at every level of a
    // doubling: found by the mutation run as a stack overflow in lowering.
    let mut text = String::from(DOC);
    text.push_str("fn f0(x) = d.n\n");
    for i in 1..=12 {
        let body = vec![format!("f{}(x)", i - 1); if i == 7 { 120 } else { 2 }].join(" + ");
        text.push_str(&format!("fn f{i}(x) = {body}\n"));
    }
    text.push_str("rule r.r\n  require f12(1) > 0 else fail \"m\"\n");
    // Over both caps (calls and depth): each reported once.
    let over = codes_on_a_small_stack(text);
    assert!(!over.is_empty() && over.len() <= 2 && over.iter().all(|c| *c == "expansion-limit"), "{over:?}");
}

#[test]
fn an_edited_source_is_decoded_like_a_new_one() {
    use grail_engine::{Database, ReadError, SourceText};
    let mut db = Database::default();
    let doc = SourceText::from_bytes(&db, "d.yaml".into(), b"a: 1\n".to_vec());
    assert!(grail_engine::db::load_document(&db, doc).is_ok());
    doc.set_bytes(&mut db, b"a: \xff\n".to_vec());
    assert_eq!(doc.read_error(&db), Some(ReadError::InvalidUtf8 { at: 3 }));
    assert!(grail_engine::db::load_document(&db, doc).is_err());
    doc.set_bytes(&mut db, b"\xff\xfea\x00".to_vec());
    assert_eq!(doc.read_error(&db), Some(ReadError::Utf16));
    doc.set_bytes(&mut db, b"a: 2\n".to_vec());
    assert_eq!((doc.read_error(&db), doc.text(&db).as_str()), (None, "a: 2\n"));
}
