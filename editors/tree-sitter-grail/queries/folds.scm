[
  (enum_declaration)
  (record_declaration)
  (document_declaration)
  (matrix_declaration)
  (layers_declaration)
  (rule_declaration)
  (question_declaration)
  (function_declaration)
] @fold
