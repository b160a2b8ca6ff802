# The merge gates and promotion cells of the security binding (schema
# "1.0"), as a Rego author would write them: the second file of the
# translation, in the same package as guardrails.rego, adding to its
# `findings` (same rule ids, subjects and outcomes as grail for a JSON
# binding).
#
# Translated here: merge.unratified, merge.unanimity,
# promotion.review_unratified, promotion.promotable (policies/guardrails/
# merge.grail and promotion.grail). The agreement (`COMPARED` in
# benches/support/mod.rs) compares these with guardrails.rego's eight.
#
# Not translated (grail runs them; the agreement leaves them out, by name):
# every rule that reads an attached file (probe transcripts: probe.*,
# egress.*, credential.*, workspace.*, interop.*; promotion evidence), which
# Rego cannot read without the harness handing it the file (and the sha256
# of interop.sha256 is no Rego built-in); the isolation, marker, admission,
# escalation and topology rules of the binding itself, and the schema's
# structural findings (schema.missing_key, schema.type, schema.unknown_key):
# left for want of time, not for want of a way (BENCHMARKS.md, "The Rego
# translation, on upstream-shaped bindings").
package guardrails

import rego.v1

promotable_cells := {"C2-auto-merge", "C3-auto-merge", "C3-ai-review-blocking"}

auto_merge_cell := {"C2": "C2-auto-merge", "C3": "C3-auto-merge"}

promoted(cell) if input.promotion_state[cell].state == "promoted"

# The classes bound `auto` by an executor that may merge alone (a
# vendor-hosted one is merge.executor_cap's finding, not these).
auto_class contains c if {
	is_object(input.merge_policy)
	some c, m in input.merge_policy
	m == "auto"
	input.executor_class != "vendor-hosted"
}

# merge.unratified: an `auto` C2 or C3 needs its auto-merge cell ratified.
findings contains finding("merge.unratified", sprintf("merge_policy.%s", [c]), "F") if {
	some c in auto_class
	cell := auto_merge_cell[c]
	not promoted(cell)
}

# merge.unanimity: no verification layer of an `auto` class is advisory.
findings contains finding("merge.unanimity", sprintf("merge_policy.%s[%s]", [c, layer]), "F") if {
	some c in auto_class
	some layer in ["deterministic", "ai-review"]
	input.verification_blocking[layer][c] == "advisory"
}

# promotion.review_unratified: a blocking C3 ai-review is an earned flip.
findings contains finding("promotion.review_unratified", "binding", "F") if {
	input.verification_blocking["ai-review"].C3 == "blocking"
	not promoted("C3-ai-review-blocking")
}

# promotion.promotable: only a promotable cell is recorded.
findings contains finding("promotion.promotable", sprintf("promotion_state.%s", [cell]), "F") if {
	is_object(input.promotion_state)
	some cell, _ in input.promotion_state
	not cell in promotable_cells
}
