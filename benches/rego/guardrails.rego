# A Rego translation of part of the shipped library (policies/guardrails),
# as a peer for grail's benchmarks: the bounds of the matrix and the
# vendor-hosted executor's cap, over a security binding in upstream's shape
# (schema "1.0"). Same rule ids, same subjects, same outcomes as grail for a
# JSON binding:
#
#   data.guardrails.findings = every FAIL and UNKNOWN, as
#   {"rule": id, "subject": what was judged, "outcome": "fail" | "unknown"}
#
# Translated: schema.version, merge.ceiling, merge.executor_cap,
# floor.verification_blocking, floor.ai_review, floor.min_checkers,
# floor.min_model_checkers, floor.cross_vendor_required (the rules the
# benchmarks' agreement compares, `COMPARED` in benches/support/mod.rs).
# The schema's structural findings and the rules of topology, promotion,
# merge gates, isolation, admission and escalation are in upstream.rego.
# A bound is judged only on a value of its type, as grail's schema judges it:
# a value of the wrong type is the schema's finding, not the bound's.
package guardrails

import rego.v1

# The shipped matrix (policies/guardrails/matrix.grail).
matrix := {
	"C1": {"merge_cap": "human", "deterministic_floor": "not-required", "review_floor": "not-required", "min_checkers": 1, "min_model_checkers": 0, "cross_vendor": false},
	"C2": {"merge_cap": "auto", "deterministic_floor": "blocking", "review_floor": "not-required", "min_checkers": 1, "min_model_checkers": 0, "cross_vendor": false},
	"C3": {"merge_cap": "auto", "deterministic_floor": "blocking", "review_floor": "advisory", "min_checkers": 2, "min_model_checkers": 1, "cross_vendor": false},
	"C4": {"merge_cap": "human", "deterministic_floor": "blocking", "review_floor": "blocking", "min_checkers": 3, "min_model_checkers": 2, "cross_vendor": true},
	"C5": {"merge_cap": "human", "deterministic_floor": "blocking", "review_floor": "blocking", "min_checkers": 3, "min_model_checkers": 2, "cross_vendor": true},
}

# Tightest first.
force_rank := {"blocking": 0, "advisory": 1, "not-required": 2}

merge_rank := {"human": 0, "auto": 1}

finding(rule, subject, "F") := {"rule": rule, "subject": subject, "outcome": "fail"}

finding(rule, subject, "U") := {"rule": rule, "subject": subject, "outcome": "unknown"}

# schema.version: the supported set is exactly {"1.0"}; a missing version is
# not in it, a value of another type cannot be compared (UNKNOWN). Its subject
# is the document, by the path grail is told it has (`PATH` in
# benches/support/mod.rs).
# A document that is not a mapping is the schema's `schema.type` finding
# alone: no key of it is judged.
findings contains finding("schema.version", "binding.json", "F") if {
	is_object(input)
	not has(input, "schema_version")
}

findings contains finding("schema.version", "binding.json", "F") if {
	is_string(input.schema_version)
	input.schema_version != "1.0"
}

findings contains finding("schema.version", "binding.json", "U") if {
	has(input, "schema_version")
	not is_string(input.schema_version)
}

has(x, k) if {
	is_object(x)
	_ = x[k]
}

# merge.ceiling: a class bound looser than its cap.
findings contains finding("merge.ceiling", sprintf("merge_policy.%s", [c]), "F") if {
	is_object(input.merge_policy)
	some c, v in input.merge_policy
	matrix[c]
	merge_rank[v] > merge_rank[matrix[c].merge_cap]
}

# merge.executor_cap: a vendor-hosted executor never merges alone. Every
# class is bound (a complete map): a class left out, a value outside the
# vocabulary, or an executor that is missing or outside its vocabulary
# leaves the rule UNKNOWN; a `merge_policy` that is not a mapping leaves it
# UNKNOWN for the whole binding.
findings contains finding("merge.executor_cap", "binding", "U") if {
	has(input, "merge_policy")
	not is_object(input.merge_policy)
}

merge_value(c) := input.merge_policy[c] if has(input.merge_policy, c) else := "missing"

executor_state := input.executor_class if input.executor_class in {"self-operated", "vendor-hosted"} else := "U"

findings contains finding("merge.executor_cap", sprintf("merge_policy.%s", [c]), "U") if {
	is_object(input.merge_policy)
	some c, _ in matrix
	not has(merge_rank, merge_value(c))
}

findings contains finding("merge.executor_cap", sprintf("merge_policy.%s", [c]), k) if {
	is_object(input.merge_policy)
	some c, _ in matrix
	merge_value(c) == "auto"
	k := {"vendor-hosted": "F", "U": "U"}[executor_state]
}

layer_floors := {"deterministic": {"rule": "floor.verification_blocking", "column": "deterministic_floor"}, "ai-review": {"rule": "floor.ai_review", "column": "review_floor"}}

# floor.verification_blocking, floor.ai_review: a layer looser than its floor.
findings contains finding(f.rule, sprintf("verification_blocking.%s.%s", [layer, c]), "F") if {
	is_object(input.verification_blocking)
	some layer, f in layer_floors
	is_object(input.verification_blocking[layer])
	some c, v in input.verification_blocking[layer]
	matrix[c]
	force_rank[v] > force_rank[matrix[c][f.column]]
}

topology_floors := {"min_checkers": {"rule": "floor.min_checkers", "least": 1}, "min_model_checkers": {"rule": "floor.min_model_checkers", "least": 0}}

# The topologies of the classes the binding declares.
topology[c] := t if {
	is_object(input.verification_topology)
	some c, t in input.verification_topology
	matrix[c]
	is_object(t)
}

# floor.min_checkers, floor.min_model_checkers: a count below its floor.
findings contains finding(bound.rule, sprintf("verification_topology.%s.%s", [c, f]), "F") if {
	some c, t in topology
	some f, bound in topology_floors
	is_number(t[f])
	t[f] == floor(t[f])
	t[f] >= bound.least
	t[f] < matrix[c][f]
}

# floor.cross_vendor_required: cross-vendor checking switched off where the floor requires it.
findings contains finding("floor.cross_vendor_required", sprintf("verification_topology.%s.cross_vendor_required", [c]), "F") if {
	some c, t in topology
	t.cross_vendor_required == false
	matrix[c].cross_vendor == true
}
