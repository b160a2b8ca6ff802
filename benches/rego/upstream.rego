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

# ---- escalation.grail

runner_events := {"runner-needs-human", "runner-cap-exceeded"}

# `present` of an optional text field: a string that is not empty (`""` and
# a value of another type are the schema's `type` finding, read as absent).
present_text(x, k) if {
	is_string(x[k])
	x[k] != ""
}

# escalation.runner_route: a severity bound for a runner event class needs a route for it.
findings contains finding("escalation.runner_route", sprintf("escalation_severity.%s", [ev]), "F") if {
	is_object(input.escalation_severity)
	some ev, _ in input.escalation_severity
	ev in runner_events
	not present_text(input.escalation_routes, ev)
}

# escalation.empty_legs: a severity's legs bind at least one leg.
findings contains finding("escalation.empty_legs", sprintf("escalation_severity_routes.%s", [sev]), "F") if {
	is_object(input.escalation_severity_routes)
	some sev, legs in input.escalation_severity_routes
	is_object(legs)
	not present_text(legs, "channel")
	not present_text(legs, "push")
}

# escalation.push_without_channel: a push leg needs the channel leg below it.
findings contains finding("escalation.push_without_channel", sprintf("escalation_severity_routes.%s", [sev]), "F") if {
	is_object(input.escalation_severity_routes)
	some sev, legs in input.escalation_severity_routes
	is_object(legs)
	present_text(legs, "push")
	not present_text(legs, "channel")
}

# escalation.reescalation_cap: 1 is the only cap. grail's subject is the
# index of `escalation_ack` in the one-element list the rule ranges over.
findings contains finding("escalation.reescalation_cap", "0", "F") if {
	cap := input.escalation_ack.reescalation_cap
	is_number(cap)
	cap == floor(cap)
	cap > 1
}

# ---- isolation.grail (the binding's own rules; the transcripts' are not translated)

# Autonomous dispatch is the default posture.
autonomous if not has(input, "dispatch_posture")

autonomous if input.dispatch_posture == "autonomous-enabled"

# isolation.l3_substrate: an L3 entry ratifies a kernel-separated substrate class.
findings contains finding("isolation.l3_substrate", sprintf("isolation_bindings.%s.L3", [s]), "F") if {
	is_object(input.isolation_bindings)
	some s, levels in input.isolation_bindings
	is_string(levels.L3.substrate_class)
	not levels.L3.substrate_class in {"vm-microvm", "hosted-ephemeral-executor"}
}

# isolation.no_l2: under autonomous dispatch some surface binds L2 or L3.
findings contains finding("isolation.no_l2", "binding", "F") if {
	autonomous
	is_object(input.isolation_bindings)
	not some_l2
}

some_l2 if {
	some _, levels in input.isolation_bindings
	is_object(levels)
	some l, _ in levels
	l in {"L2", "L3"}
}

# Marker sets that can attest a runner: present and not empty.
attests(e) if count(e.runtime_markers) > 0

# No key the two marker sets share has two values.
jointly_satisfiable(a, b) if {
	every k, v in a {
		not conflicts(b, k, v)
	}
}

conflicts(b, k, v) if b[k] != v

# marker.missing: under autonomous dispatch every level entry names runtime markers.
findings contains finding("marker.missing", sprintf("isolation_bindings.%s.%s", [s, l]), "F") if {
	autonomous
	is_object(input.isolation_bindings)
	some s, levels in input.isolation_bindings
	is_object(levels)
	some l, e in levels
	not attests(e)
}

# marker.level_ambiguous: no two level entries of one surface have jointly
# satisfiable markers (Rego orders the keys as the ordered levels do).
findings contains finding("marker.level_ambiguous", sprintf("isolation_bindings.%s.%s.%s", [s, x, y]), "F") if {
	autonomous
	is_object(input.isolation_bindings)
	some s, levels in input.isolation_bindings
	is_object(levels)
	some x, ea in levels
	some y, eb in levels
	x < y
	attests(ea)
	attests(eb)
	jointly_satisfiable(ea.runtime_markers, eb.runtime_markers)
}

# ---- promotion.ratified_at

# upstream's strict instant, as grail's `timestamp_millis` reads it
# (engine/src/time.rs): RFC 3339 with at most three fraction digits, no
# second 60, an offset within ±23:59, and a date of the calendar.
strict_instant(s) if {
	regex.match(`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])[Tt]([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]{1,3})?([Zz]|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`, s)
	digits(s, 8, 2) <= days_in_month(digits(s, 0, 4), digits(s, 5, 2))
}

# The number `n` digits of `s` from `at` write (regorus's `to_number` refuses a leading zero).
digits(s, at, n) := to_number(concat("", ["1", substring(s, at, n)])) - {2: 100, 4: 10000}[n]

days_in_month(_, m) := 31 if m in {1, 3, 5, 7, 8, 10, 12}

days_in_month(_, m) := 30 if m in {4, 6, 9, 11}

days_in_month(y, 2) := 29 if leap(y)

days_in_month(y, 2) := 28 if not leap(y)

leap(y) if {
	y % 4 == 0
	y % 100 != 0
}

leap(y) if y % 400 == 0

# promotion.ratified_at: a ratification instant is upstream's strict form.
findings contains finding("promotion.ratified_at", sprintf("promotion_state.%s", [cell]), "F") if {
	is_object(input.promotion_state)
	some cell, p in input.promotion_state
	is_string(p.ratified_at)
	not strict_instant(p.ratified_at)
}

# ---- admission.grail (the decision table and the routine identities)

rule_axes := {
	"signal_class": {"tracker-vcs-event", "temporal", "agent-internal", "channel-feed", "*"},
	"provenance": {"human", "agent", "system", "*"},
	"work_class": {"C1", "C2", "C3", "C4", "C5", "*"},
	"disposition": {"audited-rejection", "human-gated", "autonomous-eligible"},
}

# Tightest first.
disposition_rank := {"audited-rejection": 0, "human-gated": 1, "autonomous-eligible": 2}

admission_default := {"C1": "autonomous-eligible", "C2": "autonomous-eligible", "C3": "human-gated", "C4": "human-gated", "C5": "human-gated"}

# Every axis and the disposition hold a value of their vocabulary.
valid_rule(r) if {
	is_object(r)
	every axis, values in rule_axes {
		r[axis] in values
	}
}

covers(r, c) if r.work_class in {"*", c}

# A class the rule covers whose shipped default it loosens.
weakens(r) if {
	some c, d in admission_default
	covers(r, c)
	disposition_rank[r.disposition] > disposition_rank[d]
}

specificity(r) := count([a | some a in ["signal_class", "provenance", "work_class"]; r[a] != "*"])

compatible(a, b) if a == "*"

compatible(a, b) if b == "*"

compatible(a, b) if a == b

jointly_matchable(q, r) if {
	compatible(q.signal_class, r.signal_class)
	compatible(q.provenance, r.provenance)
	compatible(q.work_class, r.work_class)
}

admission_rules := input.admission.rules if is_array(input.admission.rules)

# admission.override_required: a rule looser than the shipped default carries a justification.
findings contains finding("admission.override_required", sprintf("admission.rules.%d", [i]), "F") if {
	some i, r in admission_rules
	valid_rule(r)
	not present_text(r, "override_justification")
	weakens(r)
}

# admission.ambiguous: no two rules of equal specificity and different
# dispositions can match one item. grail's subject is the later rule's path,
# then the earlier one's index.
findings contains finding("admission.ambiguous", sprintf("admission.rules.%d.%d", [j, i]), "F") if {
	some j, r in admission_rules
	valid_rule(r)
	some i, q in admission_rules
	i < j
	valid_rule(q)
	specificity(q) == specificity(r)
	q.disposition != r.disposition
	jointly_matchable(q, r)
}

# admission.temporal_identity: a temporal classification's key is a routine identity.
findings contains finding("admission.temporal_identity", sprintf("admission.classification.temporal.%s", [k]), "F") if {
	is_object(input.admission.classification.temporal)
	some k, _ in input.admission.classification.temporal
	not regex.match(`^[a-z][a-z0-9-]*(/[a-z][a-z0-9-]*)?$`, k)
}

# ---- topology.grail and slots.grail (the roles of a declared class)

# The declared classes' topologies (`topology[c]`, guardrails.rego) with a list of roles.
roles_of[c] := t.roles if {
	some c, t in topology
	is_array(t.roles)
}

# A role's identity is its name: the roles of class `c` as `distinct` reads
# them, each name's first declaration, in the binding's order.
distinct_roles[c] := [s |
	some i, s in roles
	not declared_before(roles, i, s)
] if {
	some c, roles in roles_of
}

declared_before(roles, i, s) if {
	some j, o in roles
	j < i
	o.name == s.name
}

is_checker(s) if s.role in {"checker", "cross_vendor_checker"}

present_value(s, k) if {
	is_object(s)
	s[k] != null
}

checker_slots[c] := [s | some s in distinct_roles[c]; is_checker(s)] if some c, _ in distinct_roles

model_slots[c] := [s | some s in distinct_roles[c]; is_checker(s); not present_text(s, "scanner_class")] if some c, _ in distinct_roles

deterministic_slots[c] := [s | some s in distinct_roles[c]; is_checker(s); present_text(s, "scanner_class")] if some c, _ in distinct_roles

generators[c] := [s | some s in distinct_roles[c]; s.role == "generator"] if some c, _ in distinct_roles

# `list text or one`: one name reads as a list of one.
as_list(x) := x if is_array(x)

as_list(x) := [x] if is_string(x)

names_in(s, k) := as_list(s[k]) if present_value(s, k)

names_in(s, k) := [] if not present_value(s, k)

model_distinct(a, b) if b.name in names_in(a, "distinct_model_from")

model_distinct(a, b) if vendor_distinct(a, b)

vendor_distinct(a, b) if b.name in names_in(a, "distinct_vendor_from")

relation_keys := ["distinct_model_from", "distinct_vendor_from"]

predicate_keys := ["requires_modality", "requires_feature"]

slot_keys := {"name", "role", "scanner_class", "distinct_model_from", "distinct_vendor_from", "min_context_tokens", "requires_modality", "requires_feature"}

effective_min(c, t, k) := t[k] if is_number(t[k])

effective_min(c, t, k) := matrix[c][k] if not is_number(t[k])

cross_vendor(t) if t.cross_vendor_required == true

# topology.empty_roles: a declared class seats at least one role.
findings contains finding("topology.empty_roles", sprintf("verification_topology.%s", [c]), "F") if {
	some c, roles in roles_of
	count(roles) == 0
}

# topology.empty_relation, topology.repeated_target: a relation names at least one role, each once.
findings contains finding(rule, sprintf("verification_topology.%s[%s].%d", [c, s.name, i]), "F") if {
	some c, roles in roles_of
	some s in roles
	some i, k in relation_keys
	present_value(s, k)
	r := as_list(s[k])
	some rule in relation_breaks(r)
}

relation_breaks(r) := {"topology.empty_relation"} if count(r) == 0

relation_breaks(r) := {"topology.repeated_target"} if count(r) != count({n | some n in r})

# topology.empty_predicate, topology.repeated_token: a predicate lists at least one token, each once.
findings contains finding(rule, sprintf("verification_topology.%s[%s].%d", [c, s.name, i]), "F") if {
	some c, roles in roles_of
	some s in roles
	some i, k in predicate_keys
	is_array(s[k])
	some rule in predicate_breaks(s[k])
}

predicate_breaks(p) := {"topology.empty_predicate"} if count(p) == 0

predicate_breaks(p) := {"topology.repeated_token"} if count(p) != count({n | some n in p})

# topology.duplicate_slot: a role name is declared once per class.
findings contains finding("topology.duplicate_slot", sprintf("verification_topology.%s", [c]), "F") if {
	some c, roles in roles_of
	count(distinct_roles[c]) != count(roles)
}

# topology.undeclared_role: a relation names another role of the class.
findings contains finding("topology.undeclared_role", sprintf("verification_topology.%s[%s].%d", [c, s.name, i]), "F") if {
	some c, roles in roles_of
	some s in distinct_roles[c]
	some i, k in relation_keys
	present_value(s, k)
	some n in as_list(s[k])
	not declared_other(roles, s, n)
}

declared_other(roles, s, n) if {
	n != s.name
	some o in roles
	o.name == n
}

# topology.cross_vendor_no_generator: a cross_vendor_checker's class declares a generator.
findings contains finding("topology.cross_vendor_no_generator", sprintf("verification_topology.%s[%s]", [c, s.name]), "F") if {
	some c, slots in distinct_roles
	some s in slots
	s.role == "cross_vendor_checker"
	count(generators[c]) == 0
}

# topology.scanner_role: only a `checker` carries a scanner_class.
findings contains finding("topology.scanner_role", sprintf("verification_topology.%s[%s]", [c, s.name]), "F") if {
	some c, slots in distinct_roles
	some s in slots
	present_text(s, "scanner_class")
	s.role != "checker"
}

# topology.deterministic_relation: no model relation or predicate on a scanner.
findings contains finding("topology.deterministic_relation", sprintf("verification_topology.%s[%s].%d", [c, s.name, i]), "F") if {
	some c, slots in deterministic_slots
	some s in slots
	some i, k in array.concat(relation_keys, predicate_keys)
	present_value(s, k)
}

# topology.deterministic_context: no min_context_tokens on a scanner.
findings contains finding("topology.deterministic_context", sprintf("verification_topology.%s[%s]", [c, s.name]), "F") if {
	some c, slots in deterministic_slots
	some s in slots
	present_value(s, "min_context_tokens")
}

# topology.duplicate_scanner_class: two scanners of one class are one scanner.
findings contains finding("topology.duplicate_scanner_class", sprintf("verification_topology.%s", [c]), "F") if {
	some c, slots in deterministic_slots
	count({s.scanner_class | some s in slots}) != count(slots)
}

# topology.generator_independence: every model checker is distinct from a generator.
findings contains finding("topology.generator_independence", sprintf("verification_topology.%s[%s]", [c, m.name]), "F") if {
	some c, gens in generators
	count(gens) > 0
	some m in model_slots[c]
	not distinct_from_some(m, gens)
}

distinct_from_some(m, gens) if {
	some g in gens
	model_distinct(m, g)
}

# topology.model_checker_count, topology.checker_count: enough distinct names.
findings contains finding("topology.model_checker_count", sprintf("verification_topology.%s", [c]), "F") if {
	some c, slots in model_slots
	count(slots) < effective_min(c, topology[c], "min_model_checkers")
}

findings contains finding("topology.checker_count", sprintf("verification_topology.%s", [c]), "F") if {
	some c, slots in checker_slots
	count(slots) < effective_min(c, topology[c], "min_checkers")
}

# The pairs of a list, each once, in the list's order.
pairs(xs) := [[a, b] | some i, a in xs; some j, b in xs; i < j]

# topology.pairwise_distinct: each pair of model checkers is related in one direction.
findings contains finding("topology.pairwise_distinct", sprintf("verification_topology.%s[%s, %s]", [c, a.name, b.name]), "F") if {
	some c, slots in model_slots
	some [a, b] in pairs(slots)
	not model_distinct(a, b)
	not model_distinct(b, a)
}

# topology.cross_vendor_population: cross-vendor checking needs two model checkers.
findings contains finding("topology.cross_vendor_population", sprintf("verification_topology.%s", [c]), "F") if {
	some c, slots in model_slots
	cross_vendor(topology[c])
	count(slots) < 2
}

# topology.cross_vendor_generator: some checker is of another vendor than the generator.
findings contains finding("topology.cross_vendor_generator", sprintf("verification_topology.%s", [c]), "F") if {
	some c, slots in checker_slots
	cross_vendor(topology[c])
	not other_vendor_checker(c, slots)
}

other_vendor_checker(_, slots) if {
	some s in slots
	s.role == "cross_vendor_checker"
}

other_vendor_checker(c, slots) if {
	some s in slots
	some g in generators[c]
	vendor_distinct(s, g)
}

# topology.cross_vendor_pairwise: every two model checkers are of different vendors.
findings contains finding("topology.cross_vendor_pairwise", sprintf("verification_topology.%s[%s, %s]", [c, a.name, b.name]), "F") if {
	some c, slots in model_slots
	cross_vendor(topology[c])
	some [a, b] in pairs(slots)
	not vendor_distinct(a, b)
	not vendor_distinct(b, a)
}

# topology.unknown_predicate: a role declares only the keys of a slot (the
# schema's unknown-key finding of the `Slot` record).
findings contains finding("topology.unknown_predicate", sprintf("verification_topology.%s.roles[%d].%s", [c, i, k]), "F") if {
	some c, roles in roles_of
	some i, s in roles
	is_object(s)
	some k, _ in s
	not k in slot_keys
}
