//! The editor queries of `grail_engine::ide` over the shipped library.
//! Inputs mark the cursor with `$0`; fixes are applied and the document
//! checked again.

use grail_engine::db::check_document;
use grail_engine::ide::{self, Fix};
use grail_engine::{Database, Finding, Outcome, PolicySet, SourceText};

fn shipped(db: &Database) -> PolicySet {
    grail_engine::shipped::policy_set(db)
}

/// A policy of the test's own, for what the shipped library does not declare:
/// a map whose missing keys take matrix defaults under a ceiling, and a
/// forbidden key.
const GATES: &str = "/// A risk tier.
enum Tier ordered { T1 T2 T3 }

/// Who opens a gate: `human` is tighter than `auto`.
enum Gate tightest_first { human auto }

/// Shipped defaults and caps per tier.
matrix limits by Tier {
  columns gate: Gate, cap: Gate
  T1: auto auto
  T2: human auto
  T3: human human
}

/// A gate configuration.
document Conf as conf where kind absent {
  on syntax rule conf.syntax
  on duplicate_key rule conf.duplicate_key
  on unknown_key rule conf.unknown_key
  on type rule conf.type
  forbid key \"bypass\" anywhere rule conf.no_bypass
  version?: string
  /// Who owns the configuration.
  owners?: list string
  /// Who reviews it.
  reviewers?: list string
  /// Per tier, who opens the gate.
  gates?: map Tier -> Gate
    default limits.gate
    ceiling limits.cap rule conf.gate_cap
}

/// A tier whose gate opens on its own is audited.
rule conf.audited
  for t, g in conf.gates
  require g == \"human\" or t != \"T3\"
    else fail \"{t} opens on its own\"
  at g

/// Every owner reviews.
rule conf.reviewed
  when present(conf.owners) and present(conf.reviewers) else \"no owners or no reviewers\"
  require every o in conf.owners: o in conf.reviewers
    else fail \"an owner does not review\"
  at conf.reviewers
";

/// The policy set of [`GATES`] alone.
fn gates(db: &Database) -> PolicySet {
    PolicySet::new(db, vec![SourceText::new(db, "policy.grail".into(), GATES.into(), None)])
}

/// The text without its `$0` mark, and the mark's offset.
fn cursor(marked: &str) -> (String, usize) {
    let at = marked.find("$0").expect("a `$0` mark");
    (marked.replacen("$0", "", 1), at)
}

fn document(path: &str, marked: &str) -> (Database, PolicySet, SourceText, usize) {
    document_in(shipped, path, marked)
}

fn document_in(
    policy: fn(&Database) -> PolicySet,
    path: &str,
    marked: &str,
) -> (Database, PolicySet, SourceText, usize) {
    let db = Database::default();
    let set = policy(&db);
    let (text, at) = cursor(marked);
    let doc = SourceText::new(&db, path.into(), text, None);
    (db, set, doc, at)
}

/// The policy file `name` with a cursor at the first occurrence of `needle`, `k` bytes in.
fn in_policy(db: &Database, set: PolicySet, name: &str, needle: &str, k: usize) -> (SourceText, usize) {
    let file = *set.files(db).iter().find(|f| f.path(db).ends_with(name)).expect("policy file");
    let at = file.text(db).find(needle).expect("needle in policy file") + k;
    (file, at)
}

fn hover(path: &str, marked: &str) -> String {
    hover_in(shipped, path, marked)
}

fn hover_in(policy: fn(&Database) -> PolicySet, path: &str, marked: &str) -> String {
    let (db, set, doc, at) = document_in(policy, path, marked);
    ide::hover(&db, set, doc, at).map(|h| h.markdown).unwrap_or_default()
}

fn labels(path: &str, marked: &str) -> Vec<String> {
    let (db, set, doc, at) = document(path, marked);
    ide::completions(&db, set, doc, at).map(|c| c.items.into_iter().map(|i| i.label).collect()).unwrap_or_default()
}

fn failing(db: &Database, set: PolicySet, doc: SourceText, rule: &str) -> Vec<Finding> {
    check_document(db, set, doc)
        .iter()
        .filter(|f| f.rule == rule && matches!(f.outcome, Outcome::Fail | Outcome::Unknown))
        .cloned()
        .collect()
}

/// Applies the single fix of the first finding of `rule` and returns the new text and the fix;
/// the finding must be gone afterwards.
fn fixed(path: &str, text: &str, rule: &str) -> (String, Fix) {
    fixed_in(shipped, path, text, rule)
}

fn fixed_in(policy: fn(&Database) -> PolicySet, path: &str, text: &str, rule: &str) -> (String, Fix) {
    let db = Database::default();
    let set = policy(&db);
    let doc = SourceText::new(&db, path.into(), text.into(), None);
    let finding = failing(&db, set, doc, rule).into_iter().next().unwrap_or_else(|| panic!("`{rule}` fails"));
    let fixes = ide::fixes(&db, set, doc, &finding);
    assert_eq!(fixes.len(), 1, "one fix for {finding:?}: {fixes:?}");
    let new = ide::apply(text, &fixes[0].edits);
    let again = SourceText::new(&db, path.into(), new.clone(), None);
    let left: Vec<Finding> =
        failing(&db, set, again, rule).into_iter().filter(|f| f.subject == finding.subject).collect();
    assert!(left.is_empty(), "still reported after the fix:\n{new}\n{left:#?}");
    (new, fixes[0].clone())
}

const TOPOLOGY: &str = "schema_version: \"1.0\"
verification_topology:
  C3:
    min_checkers: 1
    roles:
      - {name: author, role: generator}
      - {name: lint, role: checker, scanner_class: static-analysis}
      - {name: reviewer-a, role: checker, distinct_model_from: [author]}
";

#[test]
fn hover_on_a_binding_key_shows_type_docs_value_floor_and_readers() {
    let text = TOPOLOGY.replace("min_checkers: 1", "min_$0checkers: 1");
    let h = hover("b.yaml", &text);
    assert!(h.contains("**`verification_topology.C3.min_checkers`**: `int >= 1`"), "{h}");
    assert!(h.contains("How many distinct checker roles"), "{h}");
    assert!(h.contains("value `1` (set in this document, line 4)"), "{h}");
    assert!(h.contains("floor `2` (`guardrails.min_checkers[C3]`, rule `floor.min_checkers`"), "{h}");
    assert!(h.contains("`topology.checker_count`"), "{h}");
}

#[test]
fn hover_on_a_map_shows_defaults_with_their_origin() {
    let h = hover_in(gates, "c.yaml", "version: \"1\"\ngat$0es: {T1: human}\n");
    assert!(h.contains("`T1`: `human` (set in this document, line 2)"), "{h}");
    assert!(h.contains("`T2`: `human` (policy default, policy.grail:"), "{h}");
    assert!(h.contains("ceiling `limits.cap`"), "{h}");
    assert!(h.contains("`conf.gate_cap`"), "{h}");
    assert!(h.contains("`conf.audited`"), "{h}");
}

#[test]
fn hover_in_a_policy_names_the_declaration() {
    let db = Database::default();
    let set = shipped(&db);
    let (file, at) = in_policy(&db, set, "topology.grail", "t.roles", 3);
    let h = ide::hover(&db, set, file, at).expect("hover").markdown;
    assert!(h.contains("field `roles` of `Topology`"), "{h}");
    assert!(h.contains("roles: list Slot grows tighter"), "{h}");
    let (file, at) = in_policy(&db, set, "topology.grail", "rule topology.pairwise_distinct", 6);
    let h = ide::hover(&db, set, file, at).expect("hover").markdown;
    assert!(h.contains("No two model-adjudicated checkers may be one"), "{h}");
    let (file, at) = in_policy(&db, set, "topology.grail", "for c, t in", 7);
    let h = ide::hover(&db, set, file, at).expect("hover").markdown;
    assert!(h.contains("t: Topology"), "{h}");
}

#[test]
fn definition_from_a_binding_key_is_its_schema_field() {
    let (db, set, doc, at) = document("b.yaml", &TOPOLOGY.replace("roles:", "ro$0les:"));
    let targets = ide::definition(&db, set, doc, at);
    assert_eq!(targets.len(), 1);
    let file = set.files(&db)[targets[0].file as usize];
    assert!(file.path(&db).ends_with("binding.grail"));
    assert_eq!(&file.text(&db)[targets[0].span.start..targets[0].span.end], "roles");
    // A key of a map keyed by an enumeration is the variant.
    let (db, set, doc, at) = document("b.yaml", &TOPOLOGY.replace("C3:", "C$03:"));
    let targets = ide::definition(&db, set, doc, at);
    let file = set.files(&db)[targets[0].file as usize];
    assert!(file.path(&db).ends_with("vocabulary.grail"));
}

#[test]
fn definition_and_references_in_a_policy() {
    let db = Database::default();
    let set = shipped(&db);
    let (file, at) = in_policy(&db, set, "topology.grail", "model_slots(t)", 2);
    let targets = ide::definition(&db, set, file, at);
    let target = set.files(&db)[targets[0].file as usize];
    assert!(target.path(&db).ends_with("slots.grail"));
    let refs = ide::references(&db, set, file, at, false);
    assert_eq!(refs.len(), 5, "every call of `model_slots`: {refs:?}");
    // `s.name` in a function body resolves through the call's argument types.
    let (file, at) = in_policy(&db, set, "binding.grail", "  name: text", 2);
    let refs = ide::references(&db, set, file, at, true);
    let files: Vec<&str> = refs.iter().map(|l| set.files(&db)[l.file as usize].path(&db).as_str()).collect();
    assert!(files.iter().any(|f| f.ends_with("slots.grail")), "{files:?}");
    assert!(files.iter().any(|f| f.ends_with("topology.grail")), "{files:?}");
}

#[test]
fn completion_of_keys_and_values_in_a_binding() {
    let top = labels("b.yaml", "schema_version: \"1.0\"\n$0\n");
    assert!(top.contains(&"merge_policy".to_string()) && !top.contains(&"schema_version".to_string()), "{top:?}");
    let classes = labels("b.yaml", "merge_policy:\n  C1: auto\n  $0\n");
    assert_eq!(classes, ["C2", "C3", "C4", "C5"]);
    let merge = labels("b.yaml", "merge_policy:\n  C1: a$0\n");
    assert_eq!(merge, ["human", "auto"]);
    let slot =
        labels("b.yaml", &TOPOLOGY.replace("{name: author, role: generator}", "{name: author, role: generator, $0}"));
    assert!(slot.contains(&"distinct_model_from".to_string()) && !slot.contains(&"name".to_string()), "{slot:?}");
    let role = labels("b.yaml", &TOPOLOGY.replace("role: generator", "role: gen$0"));
    assert_eq!(role, ["generator", "checker", "cross_vendor_checker", "ranker"]);
    let json = labels("b.json", "{\"schema_version\": \"1.0\", $0}");
    assert!(json.contains(&"verification_topology".to_string()), "{json:?}");
}

#[test]
fn completion_in_a_policy_offers_declared_names() {
    let db = Database::default();
    let set = shipped(&db);
    let (file, at) = in_policy(&db, set, "topology.grail", "model_slots(t)", 3);
    let c = ide::completions(&db, set, file, at).expect("completions");
    let names: Vec<&str> = c.items.iter().map(|i| i.label.as_str()).collect();
    for n in ["model_slots", "guardrails", "binding", "WorkClass", "count", "t"] {
        assert!(names.contains(&n), "{n} in {names:?}");
    }
}

#[test]
fn fix_raises_a_value_to_its_floor() {
    let (new, fix) = fixed("b.yaml", TOPOLOGY, "floor.min_checkers");
    assert!(new.contains("min_checkers: 2\n"), "{new}");
    assert_eq!(fix.title, "set `verification_topology.C3.min_checkers` to its floor `2`");
    let json = "{\"verification_blocking\": {\"deterministic\": {\"C4\": \"advisory\"}}}";
    let (new, _) = fixed("b.json", json, "floor.verification_blocking");
    assert_eq!(new, "{\"verification_blocking\": {\"deterministic\": {\"C4\": \"blocking\"}}}");
    let (new, _) = fixed("b.yaml", "merge_policy:\n  C4: 'auto'\n", "merge.ceiling");
    assert_eq!(new, "merge_policy:\n  C4: human\n");
}

#[test]
fn fix_removes_an_unknown_key() {
    let (new, fix) = fixed(
        "b.yaml",
        "schema_version: \"1.0\"\nmerge_polcy:\n  C1: auto\nexecutor_class: self-operated\n",
        "schema.unknown_key",
    );
    assert_eq!(new, "schema_version: \"1.0\"\nexecutor_class: self-operated\n");
    assert_eq!(fix.title, "remove `merge_polcy`");
    let flow = TOPOLOGY.replace("role: generator}", "role: generator, colour: red}");
    let (new, _) = fixed("b.yaml", &flow, "topology.unknown_predicate");
    assert_eq!(new, TOPOLOGY);
    let (new, _) = fixed("b.json", "{\"schema_version\": \"1.0\", \"extra\": 1}", "schema.unknown_key");
    assert_eq!(new, "{\"schema_version\": \"1.0\"}");
    let (new, _) = fixed("b.json", "{\n  \"extra\": [1, 2],\n  \"schema_version\": \"1.0\"\n}\n", "schema.unknown_key");
    assert_eq!(new, "{\n  \"schema_version\": \"1.0\"\n}\n");
    // A forbidden key is removed too.
    let (new, fix) = fixed_in(gates, "c.yaml", "version: \"1\"\nbypass: because\n", "conf.no_bypass");
    assert_eq!(new, "version: \"1\"\n");
    assert_eq!(fix.title, "remove `bypass`");
}

#[test]
fn fix_declares_a_slot_distinct_from_every_generator() {
    // Two generators, a checker distinct from neither: one is enough, the first.
    let two = TOPOLOGY
        .replace("      - {name: lint", "      - {name: fixer, role: generator}\n      - {name: lint")
        .replace("distinct_model_from: [author]", "distinct_model_from: [lint]");
    let (new, fix) = fixed("b.yaml", &two, "topology.generator_independence");
    assert!(new.contains("distinct_model_from: [lint, author]}"), "{new}");
    assert_eq!(fix.title, "add `author` to `distinct_model_from` of `reviewer-a`");
    // Every member the rule finds missing is added, one after the other.
    let (new, fix) = fixed_in(gates, "c.yaml", "owners: [ana, bo, cy]\nreviewers: [bo]\n", "conf.reviewed");
    assert_eq!(new, "owners: [ana, bo, cy]\nreviewers: [bo, ana, cy]\n");
    assert_eq!(fix.title, "add `ana`, `cy` to `reviewers` of `Conf`");
    // No list yet: the key is added.
    let none = TOPOLOGY.replace(", distinct_model_from: [author]", "");
    let (new, _) = fixed("b.yaml", &none, "topology.generator_independence");
    assert!(new.contains("{name: reviewer-a, role: checker, distinct_model_from: [author]}"), "{new}");
    // Block style.
    let block = "verification_topology:\n  C3:\n    roles:\n      - name: author\n        role: generator\n      - name: reviewer-a\n        role: checker\n        distinct_model_from:\n          - someone\n";
    let (new, _) = fixed("b.yaml", block, "topology.generator_independence");
    assert!(new.ends_with("        distinct_model_from:\n          - someone\n          - author\n"), "{new}");
    let block_none = "verification_topology:\n  C3:\n    roles:\n      - name: author\n        role: generator\n      - name: reviewer-a\n        role: checker\n";
    let (new, _) = fixed("b.yaml", block_none, "topology.generator_independence");
    assert!(new.ends_with("        role: checker\n        distinct_model_from: [author]\n"), "{new}");
}

#[test]
fn hover_snapshots() {
    let key = hover("b.yaml", &TOPOLOGY.replace("min_checkers: 1", "min_$0checkers: 1"));
    insta::assert_snapshot!("hover_binding_key", key);
    let variant = hover("b.yaml", &TOPOLOGY.replace("role: checker, scanner", "role: chec$0ker, scanner"));
    insta::assert_snapshot!("hover_binding_enum_value", variant);
    let db = Database::default();
    let set = shipped(&db);
    let (file, at) = in_policy(&db, set, "topology.grail", "rule topology.generator_independence", 8);
    let rule = ide::hover(&db, set, file, at).expect("hover").markdown;
    insta::assert_snapshot!("hover_policy_rule", rule);
    let (file, at) = in_policy(&db, set, "slots.grail", "guardrails[c].min_checkers", 15);
    let column = ide::hover(&db, set, file, at).expect("hover").markdown;
    insta::assert_snapshot!("hover_policy_column", column);
}

/// A small policy: a comment, an enumeration, a document kind, a function and a rule.
const SMALL: &str = "// levels of care
enum Level ordered { low high }

/// A configuration.
document Conf as conf where kind absent {
  on syntax rule conf.syntax
  on duplicate_key rule conf.duplicate_key
  on unknown_key rule conf.unknown_key
  on type rule conf.type
  level?: Level
  limit?: int
}

fn is_high(c) = c.level == \"high\"

rule conf.level
  require is_high(conf) or present(conf.limit) and conf.limit > 3
    else fail \"level is {conf.level}\"
";

/// The token kinds of `text` as policy file `path`, each with its text.
fn tokens_of(path: &str, text: &str) -> Vec<(String, ide::TokenKind, bool)> {
    let db = Database::default();
    let file = SourceText::new(&db, path.into(), text.into(), None);
    let set = PolicySet::new(&db, vec![file]);
    let compiled = grail_engine::db::compile_policy(&db, set);
    assert!(!compiled.has_errors(), "{:#?}", compiled.diagnostics);
    let tokens = ide::semantic_tokens(&db, set, file);
    for pair in tokens.windows(2) {
        assert!(pair[0].span.end <= pair[1].span.start, "in order and apart: {pair:?}");
    }
    tokens.iter().map(|t| (text[t.span.start..t.span.end].to_string(), t.kind, t.declaration)).collect()
}

#[test]
fn semantic_tokens_classify_names_from_the_index_and_the_rest_from_the_text() {
    use ide::TokenKind::*;
    let tokens = tokens_of("small.grail", SMALL);
    let kind = |text: &str, k: usize| {
        tokens.iter().filter(|(t, ..)| t == text).nth(k).map(|(_, kind, d)| (*kind, *d)).unwrap_or_else(|| {
            panic!("no token `{text}` #{k} in {tokens:#?}");
        })
    };
    assert_eq!(kind("// levels of care", 0), (Comment, false));
    assert_eq!(kind("/// A configuration.", 0), (Comment, false));
    assert_eq!(kind("enum", 0), (Keyword, false));
    assert_eq!(kind("Level", 0), (Type, true));
    assert_eq!(kind("Level", 1), (Type, false));
    assert_eq!(kind("high", 0), (EnumMember, true));
    assert_eq!(kind("Conf", 0), (Type, true));
    assert_eq!(kind("conf.unknown_key", 0), (Rule, true));
    assert_eq!(kind("level", 0), (Field, true));
    assert_eq!(kind("is_high", 0), (Function, true));
    assert_eq!(kind("is_high", 1), (Function, false));
    assert_eq!(kind("present", 0), (Function, false));
    assert_eq!(kind("conf.level", 0), (Rule, true));
    // A string compared with a field of an enumeration is the variant it names.
    assert_eq!(kind("\"high\"", 0), (EnumMember, false));
    assert_eq!(kind("3", 0), (Number, false));
    assert_eq!(kind(">", 0), (Operator, false));
    assert_eq!(kind("==", 0), (Operator, false));
    assert_eq!(kind("require", 0), (Keyword, false));
    // A message is a string with its holes read as code.
    assert_eq!(kind("\"level is ", 0), (String, false));
    assert_eq!(kind("\"", 0), (String, false));
    let hole = tokens.iter().rposition(|(t, ..)| t == "level").expect("the field in the hole");
    assert_eq!(tokens[hole].1, Field, "{tokens:#?}");
    // `conf`, the document's binder, is its kind.
    assert_eq!(tokens[hole - 1], ("conf".to_string(), Type, false), "{tokens:#?}");
}

#[test]
fn semantic_tokens_of_a_broken_policy_are_still_lexical() {
    let db = Database::default();
    let text = "rule a.b\n  require \"line\\\n  count(x \"open";
    let file = SourceText::new(&db, "broken.grail".into(), text.into(), None);
    let set = PolicySet::new(&db, vec![file]);
    let tokens = ide::semantic_tokens(&db, set, file);
    let shown: Vec<(&str, ide::TokenKind)> = tokens.iter().map(|t| (&text[t.span.start..t.span.end], t.kind)).collect();
    use ide::TokenKind::*;
    // A string ends with its line, even after a backslash.
    assert_eq!(
        shown,
        [
            ("rule", Keyword),
            ("a.b", Rule),
            ("require", Keyword),
            ("\"line\\", String),
            ("count", Keyword),
            ("\"open", String)
        ]
    );
}

#[test]
fn fix_all_leaves_out_a_fix_whose_edit_touches_one_taken() {
    let db = Database::default();
    let set = shipped(&db);
    // Two unknown keys side by side: removing either takes the text between them.
    let text = "{\"schema_version\": \"1.0\", \"colour\": \"red\", \"size\": 3}\n";
    let doc = SourceText::new(&db, "org.json".into(), text.into(), None);
    assert_eq!(failing(&db, set, doc, "schema.unknown_key").len(), 2);
    let (fix, fixed) = ide::fix_all(&db, set, doc).expect("something to fix");
    assert_eq!(fix.title, "fix 1 finding");
    assert_eq!(fixed.len(), 1);
    let after = ide::apply(text, &fix.edits);
    assert_eq!(after, "{\"schema_version\": \"1.0\", \"size\": 3}\n");
    // Asked again, the other is fixed.
    let again = SourceText::new(&db, "org.json".into(), after.clone(), None);
    let (fix, _) = ide::fix_all(&db, set, again).expect("the other key");
    assert_eq!(ide::apply(&after, &fix.edits), "{\"schema_version\": \"1.0\"}\n");
}
