//! Static checks of policies, as data: each case is grail source in which a
//! line of `^^^` marks the span of the line above that a diagnostic must
//! cover, followed by `code: message`. The case passes when the policy yields
//! exactly the marked diagnostics.

use grail_engine::db::compile_policy;
use grail_engine::{Database, PolicySet, SourceText};

/// A small policy every case builds on (file 0).
const PRELUDE: &str = r#"
enum Class ordered { low high }
enum Force tightest_first { blocking advisory off }
enum Merge tightest_first { human auto }
enum Color { red green }
matrix table by Class {
  columns force: Force, floor: int
  low: advisory 1
  high: blocking 2
}
record Item identity name {
  name: string
  size?: int
}
record Blob {
  size?: int
}
document Doc as doc where kind absent {
  on syntax rule t.syntax
  on duplicate_key rule t.duplicate_key
  on unknown_key rule t.unknown_key
  on type rule t.type
  force?: map Class -> Force default table.force
  items?: list Item
  blobs?: list Blob
  color?: Color
}
"#;

/// Checks one case (file 1) against its marks: `^^^ code: message | help: text`.
#[track_caller]
fn check(case: &str) {
    let mut source = String::new();
    let mut expected: Vec<(usize, usize, String)> = Vec::new();
    let mut previous_line_start = 0;
    for line in case.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with('^') {
            let column = line.len() - trimmed.len();
            let carets = trimmed.chars().take_while(|c| *c == '^').count();
            let note = trimmed[carets..].trim().to_string();
            expected.push((previous_line_start + column, previous_line_start + column + carets, note));
        } else {
            previous_line_start = source.len();
            source.push_str(line);
            source.push('\n');
        }
    }
    let db = Database::default();
    let files = vec![
        SourceText::new(&db, "prelude.grail".into(), PRELUDE.into(), None),
        SourceText::new(&db, "case.grail".into(), source.clone(), None),
    ];
    let compiled = compile_policy(&db, PolicySet::new(&db, files));
    let mut actual: Vec<(usize, usize, String)> = compiled
        .diagnostics
        .iter()
        .map(|d| {
            assert_eq!(d.loc.file, 1, "a diagnostic in the prelude: {d:?}");
            let help = d.help.as_ref().map(|h| format!(" | help: {h}")).unwrap_or_default();
            (d.loc.span.start, d.loc.span.end, format!("{}: {}{help}", d.code, d.message))
        })
        .collect();
    expected.sort();
    actual.sort();
    let show = |v: &[(usize, usize, String)]| {
        v.iter()
            .map(|(s, e, m)| format!("  {:?} {m}", &source[*s..(*e).min(source.len())]))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(actual, expected, "\nexpected:\n{}\nactual:\n{}\n", show(&expected), show(&actual));
}

#[test]
fn a_valid_rule_has_no_diagnostics() {
    check(
        r#"
rule ok.rule
  for c, f in doc.force
  when c == "high"
  require f == "blocking" and not (f looser_than table[c].force) else fail "{c} is {f}"
"#,
    );
}

#[test]
fn unknown_name_suggests_a_near_one() {
    check(
        r#"
rule a.b
  require present(dco.color) else fail "x"
                  ^^^ unknown-name: unknown name `dco` | help: did you mean `doc`?
"#,
    );
}

#[test]
fn unknown_field_is_a_path_the_schema_does_not_have() {
    check(
        r#"
rule a.b
  require present(doc.colour) else fail "x"
                      ^^^^^^ unknown-name: `Doc` has no field `colour` | help: did you mean `color`?
"#,
    );
}

#[test]
fn unknown_variant_lists_the_variants() {
    check(
        r#"
rule a.b
  require doc.color == "rde" else fail "x"
                       ^^^^^ unknown-variant: `rde` is not a variant of `Color` | help: did you mean `red`? the variants are `red`, `green`
"#,
    );
}

#[test]
fn comparison_between_different_enumerations() {
    check(
        r#"
rule a.b
  for c, f in doc.force
  require f == doc.color else fail "x"
          ^^^^^^^^^^^^^^ enum-mismatch: comparison between different enumerations `Force` and `Color` | help: values of two enumerations are never equal; compare like with like
"#,
    );
}

#[test]
fn type_errors_are_located() {
    check(
        r#"
rule a.b
  require doc.color and true else fail "x"
          ^^^^^^^^^ type-mismatch: expected `bool`, found `Color` in `doc.color`
"#,
    );
}

#[test]
fn order_needs_an_ordered_enumeration() {
    check(
        r#"
rule a.b
  require doc.color < "red" else fail "x"
          ^^^^^^^^^^^^^^^^^ type-mismatch: `Color` has no order, so `<` cannot compare it
"#,
    );
}

#[test]
fn a_rule_id_defined_twice() {
    check(
        r#"
rule a.b
  require present(doc.color) else fail "x"
rule a.b
     ^^^ duplicate-rule: rule `a.b` is defined twice | help: every rule identifier names exactly one rule
  require present(doc.color) else fail "y"
"#,
    );
}

#[test]
fn count_needs_distinct_identities() {
    check(
        r#"
rule a.b
  require count(doc.blobs) >= 1 else fail "x"
          ^^^^^^^^^^^^^^^^ count-identity: `count` counts distinct identities, and `Blob` declares none | help: declare `identity FIELD` on `Blob`, or count by a key: `count(x in doc.blobs by x.FIELD)`
"#,
    );
}

#[test]
fn count_by_a_key_needs_no_identity() {
    check(
        r#"
rule a.b
  require count(b in doc.blobs by b.size) >= 1 and count(doc.items) >= 1 else fail "x"
"#,
    );
}

#[test]
fn functions_may_not_recurse() {
    check(
        r#"
fn loop(x) = loop(x)
             ^^^^^^^ recursion: function `loop` calls itself | help: grail is total: functions may not recurse, directly or through others
rule a.b
  require loop(doc.color) else fail "x"
"#,
    );
}

#[test]
fn a_rule_needs_a_require_and_a_document() {
    check(
        r#"
rule a.b
     ^^^ missing-require: rule `a.b` has no `require` clause | help: add `require EXPR else fail "message"`
  when present(doc.color)
rule c.d
     ^^^ reads-nothing: rule `c.d` reads no document | help: a rule judges documents: refer to one, such as `doc`
  require 1 < 2 else fail "x"
"#,
    );
}

#[test]
fn a_syntax_error_does_not_hide_the_next_rule() {
    check(
        r#"
rule a.b
  require doc.color == else fail "x"
                       ^^^^ syntax: expected `true` or `false`, a name, a string or an integer, found the keyword `else`
rule c.d
  require present(dco.color) else fail "x"
                  ^^^ unknown-name: unknown name `dco` | help: did you mean `doc`?
"#,
    );
}

#[test]
fn wrong_arity() {
    check(
        r#"
rule a.b
  require present(doc.color, doc.force) else fail "x"
          ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ arity: `present` takes 1 argument, found 2
"#,
    );
}

#[test]
fn a_bound_needs_an_order() {
    check(
        r#"
matrix colors by Class {
  columns c: Color
  low: red
  high: green
}
record Painted {
  color?: Color floor colors.c rule p.floor
                ^^^^^^^^^^^^^^^^^^^^^^^^^^^ unordered-bound: `Color` has no order to tighten along | help: a bound needs an int, a bool, or an enumeration declared `tightest_first`
}
"#,
    );
}

#[test]
fn a_matrix_needs_a_row_per_key() {
    check(
        r#"
matrix partial by Class {
       ^^^^^^^ missing-row: matrix `partial` has no row for `high` | help: add a row `high:` with one cell per column; every variant of `Class` needs one
  columns n: int
  low: 1
}
"#,
    );
}

#[test]
fn matrix_cells_are_typed() {
    check(
        r#"
matrix typed by Class {
  columns f: Force
  low: blocking
  high: blockng
        ^^^^^^^ unknown-variant: `blockng` is not a variant of `Force` | help: did you mean `blocking`? the variants are `blocking`, `advisory`, `off`
}
"#,
    );
}

#[test]
fn conflicting_layer_declarations() {
    check(
        r#"
layers of Doc {
  layer red
  layer green
  on loosen rule l.loosen
  on untrusted rule l.untrusted
  on unknown_key rule l.unknown_key
  on order rule l.order
}
layers of Doc {
          ^^^ duplicate-name: `Doc` has its layers declared twice
  layer green
  layer red
  on loosen rule l.loosen
  on untrusted rule l.untrusted
  on unknown_key rule l.unknown_key
  on order rule l.order
}
"#,
    );
}

#[test]
fn layers_need_two_and_a_claim_rule() {
    check(
        r#"
layers of Doc {
          ^^^ missing-check: the layers of `Doc` declare 1 layer(s); they need at least two | help: an unbound document is of the last layer: declare a least trusted one, e.g. `layer untrusted`
  layer red
  on loosen rule l.loosen
  on untrusted rule l.untrusted
  on unknown_key rule l.unknown_key
  on order rule l.order
}
"#,
    );
    check(
        r#"
layers of Doc {
          ^^^ missing-check: the layers of `Doc` do not say which rule reports `claim` findings | help: add `on claim rule <id>`
  layer red
  layer green
  claimed by color
  on loosen rule l.loosen
  on untrusted rule l.untrusted
  on unknown_key rule l.unknown_key
  on order rule l.order
}
"#,
    );
}

#[test]
fn holds_names_known_rules_and_no_cycle() {
    check(
        r#"
rule a.first
     ^^^^^^^ rule-cycle: rule `a.first` depends on itself through `holds`
  for c, f in doc.force
  require holds(["a.second"], f) else fail "x"
rule a.second
  for c, f in doc.force
  require holds(["a.first", "a.nothing.*"], f) else fail "y"
                            ^^^^^^^^^^^^^ unknown-name: unknown rule `a.nothing.*`
"#,
    );
}

#[test]
fn a_regex_is_checked_when_the_policy_compiles() {
    check(
        r#"
rule a.b
  for i in doc.items
  require matches(i.name, "([a-z]") else fail "x"
                          ^^^^^^^^ bad-regex: `([a-z]` is not a regular expression: error: unclosed group
"#,
    );
}

#[test]
fn two_questions_cannot_ask_about_one_action() {
    check(
        r#"
question q.first
  action "merge"
  for c in Class as resource.class
  allow doc.force[c] == "blocking"
question q.second
  action "merge"
         ^^^^^^^ duplicate-name: `merge` is the action of two questions
  for c in Class as resource.class
  allow true
"#,
    );
}

#[test]
fn an_int_is_not_a_duration() {
    check(
        r#"
rule a.b
  for i in doc.items
  require timestamp(i.name) - timestamp(i.name) <= 72 * 3600 else fail "x"
          ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ type-mismatch: `timestamp(i.name) - timestamp(i.name) <= 72 * 3600` compares `duration` with `int` | help: an int has no unit: write the length of time with one, e.g. `hours(72)`, `days(7)`, `seconds(30)`
"#,
    );
}

#[test]
fn instants_do_not_add() {
    check(
        r#"
rule a.b
  for i in doc.items
  require timestamp(i.name) + now() > now() else fail "x"
          ^^^^^^^^^^^^^^^^^^^^^^^^^ type-mismatch: `timestamp(i.name) + now()` adds `time` and `time` | help: instants subtract to a duration (`t2 - t1`); a duration is added to an instant or another duration
"#,
    );
}

#[test]
fn an_instant_is_not_a_string() {
    check(
        r#"
rule a.b
  for i in doc.items
  require now() > i.name else fail "x"
          ^^^^^^^^^^^^^^ type-mismatch: `now() > i.name` compares `time` with `string` | help: read the string as an instant first: `timestamp(s)`
"#,
    );
}

#[test]
fn now_takes_no_argument() {
    check(
        r#"
rule a.b
  for i in doc.items
  require timestamp(i.name) < now(1) else fail "x"
                              ^^^^^^ arity: `now` takes 0 arguments, found 1
"#,
    );
}

#[test]
fn two_kinds_that_can_claim_one_document() {
    check(
        r#"
document Pack as pack where cases present {
                            ^^^^^^^^^^^^^ overlapping-kinds: a document can be both `Doc` and `Pack`: its kind would depend on the order of declaration | help: add `and cases absent` to the selector of `Doc`
  on syntax rule p.syntax
  on duplicate_key rule p.duplicate_key
  on unknown_key rule p.unknown_key
  on type rule p.type
  cases: list string
}
document Log as log where kind == "log" and cases absent {
  on syntax rule l.syntax
  on duplicate_key rule l.duplicate_key
  on unknown_key rule l.unknown_key
  on type rule l.type
  kind: string
}
"#,
    );
}

#[test]
fn sum_adds_numbers() {
    check(
        r#"
rule a.b
  require sum(doc.items) >= 1 else fail "x"
              ^^^^^^^^^ type-mismatch: `sum` needs a list of ints or durations, not of `Item` | help: make a list of numbers from it: `sum([x.FIELD for x in doc.items])`
"#,
    );
}

#[test]
fn a_table_with_two_columns_of_one_name() {
    check(
        r#"
table t.items
  for i in doc.items
  row name = i.name
  column size = i.size
  column size = i.name
         ^^^^ duplicate-name: table `t.items` has two columns named `size`
"#,
    );
}

#[test]
fn a_table_id_is_a_rule_id() {
    check(
        r#"
rule t.items
  require present(doc.color) else fail "x"
table t.items
      ^^^^^^^ duplicate-rule: rule `t.items` is defined twice | help: every rule identifier names exactly one rule
  for i in doc.items
  row name = i.name
  column size = i.size
"#,
    );
}

#[test]
fn a_table_that_reads_no_document() {
    check(
        r#"
table t.classes
      ^^^^^^^^^ reads-nothing: table `t.classes` reads no document | help: a table shows values of documents: iterate over a kind's documents
  for c in Class
  row class = c
  column force = table[c].force
"#,
    );
}

#[test]
fn a_table_cell_is_type_checked() {
    check(
        r#"
table t.items
  for i in doc.items
  row name = i.name
  column size = i.weight
                  ^^^^^^ unknown-name: `Item` has no field `weight`
"#,
    );
}
