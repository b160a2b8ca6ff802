# The merge gates and promotion cells of the security binding (schema
# "1.0"), as a Rego author would write them: the second file of the
# translation, in the same package as guardrails.rego, adding to its
# `findings` (same rule ids, subjects and outcomes as grail for a JSON
# binding).
#
# Translated here (41 rules; with guardrails.rego's eight, the 49 that
# `COMPARED` and `COMPARED_UPSTREAM` in benches/support/mod.rs compare):
# the merge gates and promotion cells (merge.unratified, merge.unanimity,
# merge.unheard_checkers, promotion.review_unratified, promotion.promotable,
# promotion.ratified_at), escalation.*, the binding's own isolation and
# marker rules (isolation.l3_substrate, isolation.no_l2, marker.missing,
# marker.level_ambiguous), admission.override_required, admission.ambiguous,
# admission.temporal_identity, the topology rules, and the schema's
# structural findings (schema.missing_key, schema.type, schema.unknown_key,
# topology.unknown_predicate).
#
# Not translated (grail runs them; the agreement leaves them out, by name):
# every rule that reads an attached file (probe transcripts: probe.*,
# egress.*, credential.*, workspace.*, interop.*, and isolation.host_interop
# and isolation.reachable_hosts, which judge a level by its transcript's
# proof; promotion evidence), which Rego cannot read without the harness
# handing it the file (and the sha256 of interop.sha256 is no Rego
# built-in); marker.ambiguous, admission.temporal_surface_unique and
# admission.temporal_producer_unique, whose subjects are indices in the
# document's order of a mapping's keys, which Rego's objects do not keep;
# admission.run_link_prefix, which parses a URL (no Rego built-in); the
# layer rules, which compare several documents (BENCHMARKS.md, "The Rego
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
attests(e) if {
	is_object(e.runtime_markers)
	count(e.runtime_markers) > 0
}

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

# (A role without a name is the schema's finding; no relation names it.)
model_distinct(a, b) if {
	is_string(b.name)
	b.name in names_in(a, "distinct_model_from")
}

model_distinct(a, b) if vendor_distinct(a, b)

vendor_distinct(a, b) if {
	is_string(b.name)
	b.name in names_in(a, "distinct_vendor_from")
}

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
	is_string(s.name)
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

# ---- the schema's structural findings (binding.grail): schema.missing_key,
# schema.type, schema.unknown_key, and the `Slot` record's
# topology.unknown_predicate above. Rego has no recursion, so each place of
# the binding's shape is a rule of its own; `schema_at` judges one record
# (its keys, and each field's value by its kind), `map_at` one map, `list_at`
# one list. A value of the wrong kind is a `type` finding, and nothing below
# it is judged.

enums := {
	"WorkClass": {"C1", "C2", "C3", "C4", "C5"},
	"Merge": {"human", "auto"},
	"Force": {"blocking", "advisory", "not-required"},
	"Level": {"L0", "L1", "L2", "L3"},
	"Executor": {"self-operated", "vendor-hosted"},
	"Posture": {"human-gated-only", "autonomous-enabled"},
	"SubstrateClass": {"container", "os-sandbox", "vm-microvm", "hosted-ephemeral-executor"},
	"HostInterop": {"none", "wsl2"},
	"Role": {"generator", "checker", "cross_vendor_checker", "ranker"},
	"PromotionState": {"unpromoted", "promoted"},
	"EscalationEvent": {"gate-failure", "verification-divergence", "admission-rejection", "demotion", "structural-plan-approval", "untrusted-provenance", "runner-needs-human", "runner-cap-exceeded"},
	"Severity": {"notice", "attention", "urgent"},
	"Disposition": {"audited-rejection", "human-gated", "autonomous-eligible"},
	"RuleSignalClass": {"tracker-vcs-event", "temporal", "agent-internal", "channel-feed", "*"},
	"RuleProvenance": {"human", "agent", "system", "*"},
	"RuleWorkClass": {"C1", "C2", "C3", "C4", "C5", "*"},
}

# Whether `v` is a value of kind `k`: a scalar type, an enumeration
# (an enumeration by its name), or the container of a record or map (`object`), a list
# (`array`), a list or one name (`names`), a `ref` (a path, or the value inline).
of_kind("string", v) if is_string(v)

of_kind("text", v) if {
	is_string(v)
	v != ""
}

of_kind("bool", v) if is_boolean(v)

of_kind("int0", v) if {
	is_number(v)
	v == floor(v)
	v >= 0
}

of_kind("int1", v) if {
	is_number(v)
	v == floor(v)
	v >= 1
}

of_kind(k, v) if v in enums[k]

of_kind("object", v) if is_object(v)

of_kind("array", v) if is_array(v)

of_kind("names", v) if of_kind("text", v)

of_kind("names", v) if {
	is_array(v)
	every n in v {
		of_kind("text", n)
	}
}

of_kind("ref", v) if of_kind("text", v)

of_kind("ref", v) if is_object(v)

# The records of the binding: per field, its kind and whether it is required.
records := {
	"Binding": {
		"schema_version": ["string", true], "executor_class": ["Executor", true],
		"dispatch_posture": ["Posture", false], "isolation_bindings": ["object", true],
		"merge_policy": ["object", true], "verification_blocking": ["object", true],
		"verification_topology": ["object", false], "promotion_state": ["object", false],
		"escalation_routes": ["object", true], "escalation_severity": ["object", false],
		"escalation_severity_routes": ["object", false], "escalation_ack": ["object", false],
		"admission": ["object", true],
	},
	"LevelBinding": {
		"substrate": ["text", true], "substrate_class": ["SubstrateClass", true],
		"host_interop": ["HostInterop", false], "component_reachable_hosts": ["array", false],
		"base_egress_allowlist": ["array", false], "probe_evidence": ["ref", true],
		"runtime_markers": ["object", false],
	},
	"VerificationBlocking": {"deterministic": ["object", true], "ai-review": ["object", true]},
	"Topology": {
		"min_checkers": ["int1", true], "min_model_checkers": ["int0", true],
		"cross_vendor_required": ["bool", true], "roles": ["array", true],
	},
	"Slot": {
		"name": ["text", true], "role": ["Role", true], "scanner_class": ["text", false],
		"distinct_model_from": ["names", false], "distinct_vendor_from": ["names", false],
		"min_context_tokens": ["int1", false], "requires_modality": ["array", false],
		"requires_feature": ["array", false],
	},
	"Promotion": {
		"state": ["PromotionState", true], "ratified_by_change": ["text", true],
		"evidence_window": ["text", true], "ratified_at": ["string", true],
	},
	"EscalationRoutes": {
		"gate-failure": ["text", true], "verification-divergence": ["text", true],
		"admission-rejection": ["text", true], "demotion": ["text", true],
		"structural-plan-approval": ["text", true], "untrusted-provenance": ["text", true],
		"runner-needs-human": ["text", false], "runner-cap-exceeded": ["text", false],
	},
	"SeverityLegs": {"channel": ["text", false], "push": ["text", false]},
	"EscalationAck": {"staleness_window": ["int1", false], "reescalation_cap": ["int1", false]},
	"Admission": {
		"classification": ["object", true], "rules": ["array", true],
		"autonomous_concurrency": ["int1", true], "items_per_run": ["int1", true],
	},
	"Classification": {
		"tracker-vcs-event": ["object", false], "temporal": ["object", false],
		"agent-internal": ["object", false], "channel-feed": ["object", false],
	},
	"TemporalClass": {
		"class": ["WorkClass", true], "source_surface": ["text", true],
		"run_link_prefix": ["text", true], "producer_identity": ["text", true],
	},
	"AdmissionRule": {
		"signal_class": ["RuleSignalClass", true], "provenance": ["RuleProvenance", true],
		"work_class": ["RuleWorkClass", true], "disposition": ["Disposition", true],
		"override_justification": ["text", false],
	},
}

# The required and the declared keys of each record, computed once.
required_keys[name] := {k | some k, spec in fields; spec[1]} if some name, fields in records

declared_keys[name] := object.keys(fields) if some name, fields in records

# The findings of the record `r` (of record `name`) at `path`; a key it does
# not declare is `unknown`'s finding.
schema_at(path, r, name, unknown) := ({finding("schema.missing_key", concat(".", [path, k]), "F") |
	some k in required_keys[name] - object.keys(r)
} | {finding(unknown, concat(".", [path, k]), "F") |
	some k in object.keys(r) - declared_keys[name]
}) | {finding("schema.type", concat(".", [path, k]), "F") |
	some k, v in r
	spec := records[name][k]
	not of_kind(spec[0], v)
}

# The findings of the map `m` at `path`, keyed by `keys` (null: any string),
# of values of kind `kind`; `complete`: every key of `keys` is bound.
map_at(path, m, keys, kind, complete) := {f |
	some k, _ in m
	keys != null
	not k in keys
	f := finding("schema.unknown_key", concat(".", [path, k]), "F")
} | {f |
	some k, v in m
	known_key(keys, k)
	not of_kind(kind, v)
	f := finding("schema.type", concat(".", [path, k]), "F")
} | {f |
	complete
	some k in keys
	not has(m, k)
	f := finding("schema.missing_key", concat(".", [path, k]), "F")
}

known_key(keys, _) if keys == null

known_key(keys, k) if k in keys

# The findings of the list `xs` at `path`, of items of kind `kind`.
list_at(path, xs, kind) := {finding("schema.type", sprintf("%s[%d]", [path, i]), "F") |
	some i, v in xs
	not of_kind(kind, v)
}

# A field of record `r` that holds a value of its container kind (`object`
# or `array`), to be judged below.
inside(r, k, kind) := r[k] if of_kind(kind, r[k])

findings contains f if {
	is_object(input)
	some f in schema_at_top
}

schema_at_top := {f |
	some k, spec in records.Binding
	spec[1]
	not has(input, k)
	f := finding("schema.missing_key", k, "F")
} | {f |
	some k, _ in input
	not records.Binding[k]
	f := finding("schema.unknown_key", k, "F")
} | {f |
	some k, v in input
	spec := records.Binding[k]
	not of_kind(spec[0], v)
	f := finding("schema.type", k, "F")
}

# isolation_bindings: surface -> level -> LevelBinding.
findings contains f if {
	surfaces := inside(input, "isolation_bindings", "object")
	some s, levels in surfaces
	some f in isolation_surface(s, levels)
}

isolation_surface(s, levels) := {finding("schema.type", sprintf("isolation_bindings.%s", [s]), "F")} if not is_object(levels)

isolation_surface(s, levels) := map_at(sprintf("isolation_bindings.%s", [s]), levels, enums.Level, "object", false) | {f |
	some l, e in levels
	l in enums.Level
	is_object(e)
	path := sprintf("isolation_bindings.%s.%s", [s, l])
	some f in level_binding(path, e)
} if is_object(levels)

level_binding(path, e) := (schema_at(path, e, "LevelBinding", "schema.unknown_key") | {f |
	some k in ["component_reachable_hosts", "base_egress_allowlist"]
	xs := inside(e, k, "array")
	some f in list_at(concat(".", [path, k]), xs, "text")
}) | {f |
	m := inside(e, "runtime_markers", "object")
	some f in map_at(concat(".", [path, "runtime_markers"]), m, null, "text", false)
}

findings contains f if {
	m := inside(input, "merge_policy", "object")
	some f in map_at("merge_policy", m, enums.WorkClass, "Merge", true)
}

findings contains f if {
	vb := inside(input, "verification_blocking", "object")
	some f in schema_at("verification_blocking", vb, "VerificationBlocking", "schema.unknown_key")
}

findings contains f if {
	vb := inside(input, "verification_blocking", "object")
	some layer in ["deterministic", "ai-review"]
	m := inside(vb, layer, "object")
	some f in map_at(sprintf("verification_blocking.%s", [layer]), m, enums.WorkClass, "Force", true)
}

findings contains f if {
	m := inside(input, "verification_topology", "object")
	some f in map_at("verification_topology", m, enums.WorkClass, "object", false)
}

findings contains f if {
	some c, t in topology
	some f in schema_at(sprintf("verification_topology.%s", [c]), t, "Topology", "schema.unknown_key")
}

# A role's keys are the Slot record's: an undeclared one is
# topology.unknown_predicate (above); its values are judged here.
findings contains f if {
	some c, roles in roles_of
	some f in list_at(sprintf("verification_topology.%s.roles", [c]), roles, "object")
}

findings contains f if {
	some c, roles in roles_of
	some i, s in roles
	is_object(s)
	path := sprintf("verification_topology.%s.roles[%d]", [c, i])
	some f in schema_at(path, s, "Slot", "topology.unknown_predicate")
	f.rule != "topology.unknown_predicate"
}

findings contains f if {
	some c, roles in roles_of
	some i, s in roles
	is_object(s)
	some k in ["requires_modality", "requires_feature"]
	xs := inside(s, k, "array")
	some f in list_at(sprintf("verification_topology.%s.roles[%d].%s", [c, i, k]), xs, "text")
}

findings contains f if {
	m := inside(input, "promotion_state", "object")
	some f in map_at("promotion_state", m, null, "object", false)
}

findings contains f if {
	m := inside(input, "promotion_state", "object")
	some cell, p in m
	is_object(p)
	some f in schema_at(sprintf("promotion_state.%s", [cell]), p, "Promotion", "schema.unknown_key")
}

findings contains f if {
	r := inside(input, "escalation_routes", "object")
	some f in schema_at("escalation_routes", r, "EscalationRoutes", "schema.unknown_key")
}

findings contains f if {
	m := inside(input, "escalation_severity", "object")
	some f in map_at("escalation_severity", m, enums.EscalationEvent, "Severity", false)
}

findings contains f if {
	m := inside(input, "escalation_severity_routes", "object")
	some f in map_at("escalation_severity_routes", m, enums.Severity, "object", false)
}

findings contains f if {
	m := inside(input, "escalation_severity_routes", "object")
	some sev, legs in m
	sev in enums.Severity
	is_object(legs)
	some f in schema_at(sprintf("escalation_severity_routes.%s", [sev]), legs, "SeverityLegs", "schema.unknown_key")
}

findings contains f if {
	a := inside(input, "escalation_ack", "object")
	some f in schema_at("escalation_ack", a, "EscalationAck", "schema.unknown_key")
}

findings contains f if {
	a := inside(input, "admission", "object")
	some f in schema_at("admission", a, "Admission", "schema.unknown_key")
}

findings contains f if {
	c := inside(input.admission, "classification", "object")
	some f in schema_at("admission.classification", c, "Classification", "schema.unknown_key")
}

classification_values := {"tracker-vcs-event": "WorkClass", "temporal": "object", "agent-internal": "WorkClass", "channel-feed": "WorkClass"}

findings contains f if {
	c := inside(input.admission, "classification", "object")
	some k, kind in classification_values
	m := inside(c, k, "object")
	some f in map_at(sprintf("admission.classification.%s", [k]), m, null, kind, false)
}

findings contains f if {
	m := inside(input.admission.classification, "temporal", "object")
	some k, t in m
	is_object(t)
	some f in schema_at(sprintf("admission.classification.temporal.%s", [k]), t, "TemporalClass", "schema.unknown_key")
}

findings contains f if {
	rules := inside(input.admission, "rules", "array")
	some f in list_at("admission.rules", rules, "object")
}

findings contains f if {
	rules := inside(input.admission, "rules", "array")
	some i, r in rules
	is_object(r)
	some f in schema_at(sprintf("admission.rules[%d]", [i]), r, "AdmissionRule", "schema.unknown_key")
}

# ---- merge.unheard_checkers and topology.capability_label (no verdict but
# NOT APPLICABLE on the upstream-shaped corpus: compared, never exercised there)

# merge.unheard_checkers: an `auto` class's model checkers are heard by its ai-review layer.
findings contains finding("merge.unheard_checkers", sprintf("merge_policy.%s", [c]), "F") if {
	some c in auto_class
	roles := roles_of[c]
	count([s |
		some s in roles
		is_checker(s)
		not present_text(s, "scanner_class")
		present_text(s, "name")
	]) > 0
	input.verification_blocking["ai-review"][c] == "not-required"
}

capability_label(x) if {
	is_string(x)
	regex.match(`(?i)^(frontier|flagship|daily[-_ ]driver)$`, x)
}

# The predicate tokens of a role; a predicate that is not a list is the schema's finding, read as none.
tokens(s) := [x | some k in ["requires_feature", "requires_modality"]; is_array(s[k]); some x in s[k]]

# topology.capability_label: no capability label as a role's name, scanner class or token.
findings contains finding("topology.capability_label", sprintf("verification_topology.%s[%s]", [c, s.name]), "F") if {
	some c, roles in roles_of
	some s in roles
	labelled(s)
}

labelled(s) if capability_label(s.name)

labelled(s) if {
	is_string(s.scanner_class)
	capability_label(s.scanner_class)
}

labelled(s) if {
	some x in tokens(s)
	is_string(x)
	capability_label(x)
}
