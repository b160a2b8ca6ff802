; Highlights of grail policy files (`.grail`).

(comment) @comment

[
  "enum" "record" "document" "matrix" "layers" "question" "fn" "rule" "table"
] @keyword

[
  "for" "in" "if" "when" "let" "require" "else" "report" "at" "every" "some" "count" "allow"
] @keyword.control

[
  "and" "or" "not" "tighter_than" "looser_than"
] @keyword.operator

[
  "as" "where" "absent" "markdown" "after" "on" "forbid" "key" "anywhere"
  "default" "floor" "ceiling" "unique" "identity" "columns" "by" "position" "of" "layer"
  "only" "sets" "any" "action" "principal" "resource" "tightest_first" "ordered"
  "syntax" "duplicate_key" "unknown_key" "missing_key" "type" "empty" "loosen"
  "untrusted" "order" "invalid" "grows" "shrinks" "tighter" "one"
  "row" "column" "detail" "line"
] @keyword

[ "map" "list" "ref" "int" ] @type.builtin

(complete_clause) @keyword

; The built-in scalar types are names, as a declared type is.
((type_name (identifier) @type.builtin)
  (#any-of? @type.builtin "string" "text" "id" "bool" "date" "duration"))

(outcome) @constant.builtin

(string) @string
(template) @string
(escape_sequence) @string.escape
(interpolation ["{" "}"] @punctuation.special)

(integer) @number
(boolean) @boolean

(rule_id) @label

(enum_declaration name: (identifier) @type)
(enum_declaration variant: (identifier) @constant)
(record_declaration name: (identifier) @type)
(document_declaration name: (identifier) @type)
(matrix_declaration name: (identifier) @type)
(matrix_declaration key: (identifier) @type)
(layers_declaration document: (identifier) @type)
(type_name (identifier) @type)
(column_declaration name: (identifier) @property)
(column_declaration type: (identifier) @type)
(field_declaration name: (_) @property)
(column_reference column: (identifier) @property)
(field_expression field: (identifier) @property)

(function_declaration name: (identifier) @function)
(function_declaration parameter: (identifier) @variable.parameter)
(call_expression function: (identifier) @function.call)

[ "==" "!=" "<=" ">=" "<" ">" "??" "+" "-" "++" "*" "=" "->" "?" ] @operator
[ "(" ")" "[" "]" "{" "}" ] @punctuation.bracket
[ "," ":" "." ] @punctuation.delimiter
