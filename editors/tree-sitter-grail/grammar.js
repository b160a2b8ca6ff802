/**
 * A tree-sitter grammar for grail policy files (`.grail`), for highlighting
 * and structure in editors. It follows lang/src/grail.pest, the grammar of
 * the compiler; `tests/tree_sitter.rs` parses every `.grail` file of the
 * repository with it and fails on an ERROR node.
 */

const PREC = {
  or: 1,
  and: 2,
  not: 3,
  compare: 4,
  coalesce: 5,
  add: 6,
  mul: 7,
  postfix: 8,
};

const IDENT = /[A-Za-z_][A-Za-z0-9_]*/;

function commaSep1(rule) {
  return seq(rule, repeat(seq(",", rule)));
}

function commaSep(rule) {
  return optional(commaSep1(rule));
}

module.exports = grammar({
  name: "grail",

  extras: ($) => [/\s/, $.comment],

  word: ($) => $.identifier,

  // `count(x in xs by k)` and `count(x in xs)` share their start: both are tried.
  conflicts: ($) => [[$._expression, $.count_by]],

  rules: {
    source_file: ($) => repeat($._item),

    _item: ($) =>
      choice(
        $.enum_declaration,
        $.record_declaration,
        $.document_declaration,
        $.matrix_declaration,
        $.layers_declaration,
        $.question_declaration,
        $.function_declaration,
        $.rule_declaration,
        $.table_declaration,
      ),

    // `///` documents the item or field below; both are comments to the grammar.
    comment: (_) => token(seq("//", /[^\n]*/)),

    identifier: (_) => IDENT,
    rule_id: (_) => token(seq(IDENT, repeat1(seq(".", IDENT)))),

    string: ($) => seq('"', repeat(choice($.string_content, $.escape_sequence)), '"'),
    string_content: (_) => token.immediate(prec(1, /[^"\\\n]+/)),
    escape_sequence: (_) => token.immediate(/\\["\\nt{}]/),
    integer: (_) => /-?[0-9]+/,
    boolean: (_) => choice("true", "false"),

    // ------------------------------------------------------------ items

    enum_declaration: ($) =>
      seq(
        "enum",
        field("name", $.identifier),
        optional(field("order", choice("tightest_first", "ordered"))),
        "{",
        repeat(field("variant", choice($.identifier, $.string))),
        "}",
      ),

    record_declaration: ($) =>
      seq(
        "record",
        field("name", $.identifier),
        optional(seq("identity", field("identity", $.identifier))),
        "{",
        repeat($._member),
        "}",
      ),

    document_declaration: ($) =>
      seq(
        "document",
        field("name", $.identifier),
        "as",
        field("binder", $.identifier),
        optional(seq(",", field("all", $.identifier))),
        choice($.markdown_selector, $.given_selector, $.selector),
        "{",
        repeat($._member),
        "}",
      ),

    selector: ($) => seq("where", $.key_test, repeat(seq("and", $.key_test))),
    key_test: ($) => seq(field("key", $.identifier), choice("absent", "present", seq("==", $.string))),

    markdown_selector: ($) => seq("in", "markdown", "after", $.string, "rule", $.rule_id),
    // `given "evidence"`: the file the invocation gives under that name, and no other.
    given_selector: ($) => seq("given", $.string),

    _member: ($) =>
      choice(
        $.check_rule,
        $.unreadable_clause,
        $.forbid,
        $.lines_clause,
        $.list_clause,
        $.at_most_one,
        $.field_declaration,
      ),

    // `lines into receipts`: in a JSON Lines file, every line after the header is an entry.
    lines_clause: ($) => seq("lines", "into", field("field", $.identifier)),
    // `list into events`: a document whose root is a list is the record whose `events` holds it.
    list_clause: ($) => seq("list", "into", field("field", $.identifier)),
    // A given file that cannot be read, parsed or shaped reads as missing evidence.
    unreadable_clause: (_) => seq("on", "unreadable", "missing"),
    at_most_one: (_) => seq("at", "most", "one", "per", "deployment"),

    check_rule: ($) =>
      seq(
        "on",
        choice(
          "syntax",
          "duplicate_key",
          "unknown_key",
          "missing_key",
          "type",
          "empty",
          "loosen",
          "untrusted",
          "order",
          "claim",
          "change",
        ),
        // `on unknown_key allow`: the record is open; keys it does not declare are read by nothing.
        choice(seq("rule", $.rule_id), "allow"),
      ),

    forbid: ($) => seq("forbid", "key", $.string, "anywhere", "rule", $.rule_id),

    field_declaration: ($) =>
      seq(
        field("name", choice($.identifier, $.string)),
        optional("?"),
        ":",
        field("type", $._type),
        optional(choice($.or_null, $.or_one)),
        repeat(
          choice(
            $.default_clause,
            $.bound_clause,
            $.unique_clause,
            $.invalid_clause,
            $.growth_clause,
            $.complete_clause,
          ),
        ),
      ),

    // `exit_code?: int or null`: the field may hold null, a value of its own.
    or_null: (_) => seq("or", "null"),
    // `distinct_model_from?: list text or one`: a single value reads as a list of one.
    or_one: (_) => seq("or", "one"),
    // `merge_policy: map WorkClass -> Merge complete`: every key of the enumeration is bound.
    complete_clause: (_) => "complete",
    default_clause: ($) =>
      seq("default", choice($.column_reference, $.string, $.integer, $.boolean, seq("[", "]"), seq("{", "}"))),
    bound_clause: ($) => seq(choice("floor", "ceiling"), $.column_reference, "rule", $.rule_id),
    unique_clause: ($) => seq("unique", "rule", $.rule_id),
    invalid_clause: ($) => seq("invalid", "rule", $.rule_id),
    growth_clause: ($) => seq(choice("grows", "shrinks"), "tighter"),
    column_reference: ($) => seq(field("matrix", $.identifier), ".", field("column", $.identifier)),

    _type: ($) => choice($.map_type, $.list_type, $.ref_type, $.int_type, $.type_name),
    ref_type: ($) => seq("ref", $.type_name),
    map_type: ($) => seq("map", $.type_name, "->", $._type),
    list_type: ($) => seq("list", $._type),
    int_type: ($) => prec.right(seq("int", optional(seq(">=", $.integer)))),
    type_name: ($) => $.identifier,

    matrix_declaration: ($) =>
      seq(
        "matrix",
        field("name", $.identifier),
        "by",
        field("key", $.identifier),
        "{",
        $.columns,
        repeat($.row),
        "}",
      ),
    columns: ($) => seq("columns", commaSep1($.column_declaration)),
    column_declaration: ($) => seq(field("name", $.identifier), ":", field("type", $.identifier)),
    row: ($) => prec.right(seq($.row_key, repeat1($.cell))),
    // The key with its colon, one token: a cell is never followed by a colon,
    // so the next row starts where the longer token matches.
    row_key: (_) => token(seq(choice(IDENT, /"[^"\\\n]*"/), /[ \t]*/, ":")),
    cell: ($) => choice($.integer, $.boolean, $.string, $.identifier),

    layers_declaration: ($) =>
      seq(
        "layers",
        "of",
        field("document", $.identifier),
        "{",
        repeat(
          choice(
            $.check_rule,
            $.layer_line,
            $.only_line,
            $.free_line,
            $.claim_line,
            $.standalone_line,
            $.separate_line,
            $.trusted_line,
          ),
        ),
        "}",
      ),
    layer_line: ($) => seq("layer", field("name", $.identifier)),
    claim_line: ($) => seq("claimed", "by", field("key", $.identifier)),
    standalone_line: (_) => "standalone",
    // Each document of the kind is read apart: several may share a layer, none is merged.
    separate_line: (_) => "separate",
    // `trusted from harness rule ID`: a document bound below the layer is a finding, and is not read.
    trusted_line: ($) => seq("trusted", "from", field("layer", $.identifier), "rule", $.rule_id),
    only_line: ($) => seq("only", field("layer", $.identifier), "sets", commaSep1($.identifier)),
    free_line: ($) => seq("any", "layer", "sets", commaSep1($.identifier)),

    question_declaration: ($) =>
      prec.right(
        seq("question", field("name", $.rule_id), "action", $.string, repeat($.question_variable), "allow", $._expression),
      ),
    question_variable: ($) => seq("for", $.pattern, "in", $._expression, "as", $.request_attribute),
    request_attribute: ($) => seq(choice("principal", "resource"), ".", $.identifier),

    // A table of values read from documents: a row per tuple of its `for`s, a cell per column.
    table_declaration: ($) =>
      prec.right(
        seq(
          "table",
          field("name", $.rule_id),
          repeat(choice($.for_clause, $.let_clause)),
          $.table_row,
          repeat1($.table_column),
          optional($.table_detail),
          optional($.table_line),
        ),
      ),
    table_row: ($) => seq("row", field("name", choice($.identifier, $.string)), "=", $._expression),
    table_column: ($) => seq("column", field("name", choice($.identifier, $.string)), "=", $._expression),
    table_detail: ($) => seq("detail", $._expression),
    // A verdict line per row: printed when the check passes, and the report's `verdicts`.
    table_line: ($) => seq("line", $.template),

    function_declaration: ($) =>
      prec.right(
        seq(
          "fn",
          field("name", $.identifier),
          "(",
          commaSep(field("parameter", $.identifier)),
          ")",
          "=",
          field("body", $._expression),
        ),
      ),

    rule_declaration: ($) => prec.right(seq("rule", field("name", $.rule_id), repeat($._clause))),
    _clause: ($) => choice($.for_clause, $.when_clause, $.let_clause, $.require_clause, $.at_clause),
    for_clause: ($) => prec.right(seq("for", $.pattern, "in", $._expression, optional(seq("if", $._expression)))),
    // `when C else report "why"`: a false guard reports what the rule finds, it does not skip it.
    when_clause: ($) => prec.right(seq("when", $._expression, optional(seq("else", optional("report"), $.template)))),
    let_clause: ($) => seq("let", field("name", $.identifier), "=", $._expression),
    require_clause: ($) => seq("require", $._expression, "else", $.outcome, $.template),
    outcome: (_) => choice("fail", "unknown"),
    at_clause: ($) => seq("at", $._expression, optional(seq("by", "position"))),

    pattern: ($) =>
      choice(seq("(", $.identifier, ",", $.identifier, ")"), seq($.identifier, optional(seq(",", $.identifier)))),

    template: ($) =>
      seq('"', repeat(choice($.template_text, $.escape_sequence, $.interpolation)), '"'),
    template_text: (_) => token.immediate(prec(1, /[^"\\{\n]+/)),
    interpolation: ($) => seq(token.immediate("{"), $._expression, "}"),

    // ------------------------------------------------------------ expressions

    _expression: ($) =>
      choice(
        $.binary_expression,
        $.not_expression,
        $.field_expression,
        $.index_expression,
        $.call_expression,
        $.quantifier,
        $.count_by,
        $.list,
        $.set,
        $.parenthesized_expression,
        $.integer,
        $.boolean,
        $.string,
        $.identifier,
      ),

    binary_expression: ($) => {
      const table = [
        [PREC.or, "or"],
        [PREC.and, "and"],
        [PREC.compare, choice("==", "!=", "<=", ">=", "<", ">", "in", seq("not", "in"), "tighter_than", "looser_than")],
        [PREC.coalesce, "??"],
        [PREC.add, choice("+", "-", "++")],
        [PREC.mul, "*"],
      ];
      return choice(
        ...table.map(([p, op]) =>
          prec.left(p, seq(field("left", $._expression), field("operator", op), field("right", $._expression))),
        ),
      );
    },

    not_expression: ($) => prec(PREC.not, seq("not", $._expression)),
    field_expression: ($) => prec(PREC.postfix, seq($._expression, ".", field("field", $.identifier))),
    index_expression: ($) => prec(PREC.postfix, seq($._expression, "[", $._expression, "]")),
    call_expression: ($) =>
      prec(PREC.postfix, seq(field("function", choice($.identifier, "count")), $.arguments)),
    arguments: ($) => seq("(", commaSep($._expression), ")"),

    quantifier: ($) =>
      prec.right(seq(choice("every", "some"), $.pattern, "in", $._expression, ":", $._expression)),
    count_by: ($) => seq("count", "(", $.identifier, "in", $._expression, "by", $._expression, ")"),
    list: ($) => seq("[", optional(seq($._expression, choice($.comprehension, repeat(seq(",", $._expression))))), "]"),
    comprehension: ($) => seq("for", $.pattern, "in", $._expression, optional(seq("if", $._expression))),
    set: ($) => seq("{", commaSep($._expression), "}"),
    parenthesized_expression: ($) => seq("(", $._expression, ")"),
  },
});
