# The guardrail binding rules of spec sections 1-6 (binding-v1.md), in Rego,
# as a peer for grail's benchmarks. Same rule ids, same subjects, same
# outcomes as policies/guardrails/*.grail for a JSON binding:
#
#   data.guardrails.findings = every FAIL and UNKNOWN, as
#   {"rule": id, "subject": what was judged, "outcome": "fail" | "unknown"}
#
# The semantics that make this more than a list of `deny` rules:
# - counts count distinct identities (slots by name, scanners by class);
# - effective = max(floor, binding); absent takes the matrix default;
# - a value of the wrong type is INVALID: the schema reports it, and any rule
#   that needs it is UNKNOWN (three-valued logic, "T" / "F" / "U" below),
#   never a pass and never a made-up fail; a missing collection makes a rule
#   NOT APPLICABLE (nothing is reported), an invalid one UNKNOWN.
#
# Not translated: schema.syntax and schema.duplicate_key (Rego receives
# parsed JSON: a syntax error never reaches it, and the JSON reader has
# already kept one of two duplicate keys), and the rules of sections 7-10
# (isolation, probes, admission, envelopes, histories, layers); their
# top-level keys are accepted, their contents not checked.
package guardrails

import rego.v1

# ------------------------------------------------------------ section 1, 2

classes := ["C1", "C2", "C3", "C4", "C5"]

class_set := {c | some c in classes}

force_rank := {"blocking": 0, "advisory": 1, "off": 2}

merge_rank := {"human": 0, "auto": 1}

executors := {"self-operated", "vendor-hosted"}

role_names := {"generator", "checker", "cross_vendor_checker", "ranker"}

checker_roles := {"checker", "cross_vendor_checker"}

modalities := {"text", "image", "audio", "video"}

matrix := {
	"C1": {"merge": "human", "merge_ceiling": "auto", "vblock": "blocking", "vblock_floor": "advisory", "review": "advisory", "min_checkers": 1, "min_model_checkers": 0, "cross_vendor": false, "review_gates_auto": false},
	"C2": {"merge": "human", "merge_ceiling": "auto", "vblock": "blocking", "vblock_floor": "advisory", "review": "advisory", "min_checkers": 1, "min_model_checkers": 0, "cross_vendor": false, "review_gates_auto": false},
	"C3": {"merge": "human", "merge_ceiling": "auto", "vblock": "blocking", "vblock_floor": "blocking", "review": "blocking", "min_checkers": 2, "min_model_checkers": 1, "cross_vendor": false, "review_gates_auto": true},
	"C4": {"merge": "human", "merge_ceiling": "human", "vblock": "blocking", "vblock_floor": "blocking", "review": "blocking", "min_checkers": 3, "min_model_checkers": 2, "cross_vendor": true, "review_gates_auto": false},
	"C5": {"merge": "human", "merge_ceiling": "human", "vblock": "blocking", "vblock_floor": "blocking", "review": "blocking", "min_checkers": 3, "min_model_checkers": 2, "cross_vendor": true, "review_gates_auto": false},
}

# ------------------------------------------------------------ section 3, 4: the schema

forbidden := "override_justification"

top_keys := {
	"schema_version", "executor_class", "merge_policy", "verification_blocking", "security_review",
	"escalation_routes", "verification_topology",
	# sections 7-10: accepted, not translated
	"layer", "lenses", "advisory_lanes", "isolation", "triggers", "admission",
}

topology_keys := {"min_checkers", "min_model_checkers", "cross_vendor_required", "roles"}

slot_keys := {
	"name", "role", "scanner_class", "distinct_model_from", "distinct_vendor_from", "not_weaker_than",
	"min_context_tokens", "requires_modality", "requires_feature",
}

relations := ["distinct_model_from", "distinct_vendor_from", "not_weaker_than"]

# ------------------------------------------------------------ helpers

has(o, k) if {
	is_object(o)
	_ = o[k]
}

is_int(x) if {
	is_number(x)
	x == floor(x)
}

int_at_least(x, m) if {
	is_int(x)
	x >= m
}

finding(rule, subject, "F") := {"rule": rule, "subject": subject, "outcome": "fail"}

finding(rule, subject, "U") := {"rule": rule, "subject": subject, "outcome": "unknown"}

# Kleene logic over "T", "F", "U".
not3("T") := "F"

not3("F") := "T"

not3("U") := "U"

and3(a, b) := "F" if {
	"F" in {a, b}
} else := "T" if {
	a == "T"
	b == "T"
} else := "U"

or3(a, b) := "T" if {
	"T" in {a, b}
} else := "F" if {
	a == "F"
	b == "F"
} else := "U"

truth(true) := "T"

truth(false) := "F"

# Every of a list of truths: F if one is F, else U if one is U, else T.
every3(ts) := "F" if {
	"F" in ts
} else := "U" if {
	"U" in ts
} else := "T"

# `x in xs` where any element may be invalid ("U" when nothing matched and
# something could not be compared). `xs` is a relation state (below).
in3(x, xs) := "U" if {
	xs.state != "list"
} else := "U" if {
	not is_string(x)
} else := "T" if {
	x in xs.list
} else := "U" if {
	some y in xs.list
	not is_string(y)
} else := "F"

# ------------------------------------------------------------ the document read through the schema

# A slot's name when it has one (its identity); a slot without one has no identity.
named(s) if {
	is_object(s)
	is_string(s.name)
}

role_ok(s) if {
	is_object(s)
	s.role in role_names
}

role_is(s, r) := "U" if {
	not role_ok(s)
} else := truth(s.role == r)

role_in(s, rs) := "U" if {
	not role_ok(s)
} else := truth(s.role in rs)

scanner3(s) := "T" if {
	is_object(s)
	is_string(s.scanner_class)
} else := "F"

# A relation list: absent is [], a list of anything is a list (wrong
# elements are invalid), anything else is invalid.
relation(s, f) := {"state": "invalid"} if {
	not is_object(s)
} else := {"state": "list", "list": []} if {
	not has(s, f)
} else := {"state": "list", "list": s[f]} if {
	is_array(s[f])
} else := {"state": "invalid"}

# Every name a slot's relations point at.
targets(s) := {"state": "list", "list": array.concat(array.concat(a.list, b.list), c.list)} if {
	a := relation(s, "distinct_model_from")
	b := relation(s, "distinct_vendor_from")
	c := relation(s, "not_weaker_than")
	a.state == "list"
	b.state == "list"
	c.state == "list"
} else := {"state": "invalid"}

# t.roles: "missing" (not applicable), "invalid" (unknown), or a list.
roles_state(t) := "invalid" if {
	not is_object(t)
} else := "missing" if {
	not has(t, "roles")
} else := "list" if {
	is_array(t.roles)
} else := "invalid"

# distinct(t.roles): the first slot of every name, in order.
distinct_slots(roles) := [s |
	some i, s in roles
	first[s.name] == i
] if {
	first := {n: min([j | some j, x in roles; x.name == n]) | some o in roles; n := o.name}
}

# Per class, computed once per evaluation (a rule is cached; a function call
# is not): the distinct slots, or why there are none: "missing", "invalid",
# or "unknown" (a slot without an identity).
class_slots[c] := {"state": roles_state(t)} if {
	some c, t in topology
	roles_state(t) != "list"
}

class_slots[c] := {"state": "unknown"} if {
	some c, t in topology
	roles_state(t) == "list"
	some s in t.roles
	not named(s)
}

class_slots[c] := {"state": "list", "list": distinct_slots(t.roles)} if {
	some c, t in topology
	roles_state(t) == "list"
	every s in t.roles {
		named(s)
	}
}

# Whether a slot is of a kind, three-valued: an invalid role is unknown.
keep(s, "model") := "F" if scanner3(s) == "T" else := "U" if not role_ok(s) else := truth(s.role in checker_roles)

keep(s, "deterministic") := "F" if scanner3(s) == "F" else := "U" if not role_ok(s) else := truth(s.role == "checker")

keep(s, "generator") := "U" if not role_ok(s) else := truth(s.role == "generator")

# The distinct slots of a kind: "unknown" as soon as one slot's kind is.
slots_of(c, kind) := {"state": class_slots[c].state} if {
	class_slots[c].state != "list"
} else := {"state": "unknown"} if {
	some s in class_slots[c].list
	keep(s, kind) == "U"
} else := {"state": "list", "list": [s | some s in class_slots[c].list; keep(s, kind) == "T"]}

models[c] := slots_of(c, "model") if some c, _ in topology

gens[c] := slots_of(c, "generator") if some c, _ in topology

deterministic[c] := slots_of(c, "deterministic") if some c, _ in topology

cross_vendor[c] := cross_vendor3(c, t) if some c, t in topology

slot_names[c] := [n | some o in t.roles; n := slot_name(o)] if {
	some c, t in topology
	roles_state(t) == "list"
}

# The effective minimum: max(binding, floor), the floor when absent, unknown when invalid.
effective_min(c, t, f, least) := {"ok": true, "v": matrix[c][f]} if {
	not has(t, f)
} else := {"ok": true, "v": max([t[f], matrix[c][f]])} if {
	int_at_least(t[f], least)
} else := {"ok": false}

# cross_vendor_required(c, t) = t.cross_vendor_required or the floor.
cross_vendor3(c, t) := or3(own, truth(matrix[c].cross_vendor)) if {
	own := cross_vendor_own(c, t)
}

cross_vendor_own(c, t) := "U" if {
	not is_object(t)
} else := truth(matrix[c].cross_vendor) if {
	not has(t, "cross_vendor_required")
} else := truth(t.cross_vendor_required) if {
	is_boolean(t.cross_vendor_required)
} else := "U"

# model_distinct(a, b) = b.name in a.distinct_model_from or b.name in a.distinct_vendor_from
model_distinct(a, b) := or3(in3(b.name, relation(a, "distinct_model_from")), in3(b.name, relation(a, "distinct_vendor_from")))

# A map of class -> value with the matrix default for absent classes:
# the value, or "U" when the map or the value is invalid.
class_value(field, c, values, column) := "U" if {
	has(input, field)
	not is_object(input[field])
} else := matrix[c][column] if {
	not has(input[field], c)
} else := input[field][c] if {
	has(values, input[field][c])
} else := "U"

# ------------------------------------------------------------ subjects

# A document path as grail prints it: keys joined with ".", list indices in [].
path_string(p) := concat("", [seg |
	some i, k in p
	seg := segment(i, k)
])

segment(_, k) := sprintf("[%d]", [k]) if is_number(k)

segment(0, k) := k if is_string(k)

segment(i, k) := sprintf(".%s", [k]) if {
	is_string(k)
	i > 0
}

topology_subject(c) := sprintf("verification_topology.%s", [c])

# A slot as a subject: its name, `absent` without one, its index when it is not a mapping.
slot_label(s, _) := s.name if named(s)

slot_label(s, _) := "absent" if {
	is_object(s)
	not has(s, "name")
}

slot_label(s, _) := "invalid" if {
	is_object(s)
	has(s, "name")
	not is_string(s.name)
}

slot_label(s, i) := sprintf("%d", [i]) if not is_object(s)

slot_subject(c, s, i) := sprintf("verification_topology.%s[%s]", [c, slot_label(s, i)])

pair_subject(c, a, b) := sprintf("verification_topology.%s[%s, %s]", [c, a.name, b.name])

# ------------------------------------------------------------ structural rules

# floor.no_override: an override_justification key anywhere.
findings contains finding("floor.no_override", path_string(path), "F") if {
	walk(input, [path, _])
	count(path) > 0
	path[count(path) - 1] == forbidden
}

# schema.unknown_key: top level, class keys of class maps, topology keys.
findings contains finding("schema.unknown_key", k, "F") if {
	some k, _ in input
	not k in top_keys
	k != forbidden
}

class_maps := ["merge_policy", "verification_blocking", "security_review", "verification_topology"]

findings contains finding("schema.unknown_key", sprintf("%s.%s", [m, k]), "F") if {
	some m in class_maps
	is_object(input[m])
	some k, _ in input[m]
	not k in class_set
	k != forbidden
}

findings contains finding("schema.unknown_key", sprintf("verification_topology.%s.%s", [c, k]), "F") if {
	some c, t in topology
	is_object(t)
	some k, _ in t
	not k in topology_keys
	k != forbidden
}

# topology.unknown_predicate: an unknown key on a role entry.
findings contains finding("topology.unknown_predicate", sprintf("verification_topology.%s.roles[%d].%s", [c, i, k]), "F") if {
	some c, t in topology
	roles_state(t) == "list"
	some i, s in t.roles
	is_object(s)
	some k, _ in s
	not k in slot_keys
	k != forbidden
}

# schema.type: values of the wrong type or outside their vocabulary.
findings contains finding("schema.type", "schema_version", "F") if {
	has(input, "schema_version")
	not is_string(input.schema_version)
}

findings contains finding("schema.type", "executor_class", "F") if {
	has(input, "executor_class")
	not input.executor_class in executors
}

class_map_values := {"merge_policy": merge_rank, "verification_blocking": force_rank, "security_review": force_rank}

findings contains finding("schema.type", m, "F") if {
	some m, _ in class_map_values
	has(input, m)
	not is_object(input[m])
}

findings contains finding("schema.type", sprintf("%s.%s", [m, c]), "F") if {
	some m, values in class_map_values
	is_object(input[m])
	some c, v in input[m]
	c in class_set
	not is_string(v)
}

findings contains finding("schema.type", sprintf("%s.%s", [m, c]), "F") if {
	some m, values in class_map_values
	is_object(input[m])
	some c, v in input[m]
	c in class_set
	is_string(v)
	not has(values, v)
}

findings contains finding("schema.type", "escalation_routes", "F") if {
	has(input, "escalation_routes")
	not is_object(input.escalation_routes)
}

findings contains finding("schema.type", sprintf("escalation_routes.%s", [k]), "F") if {
	is_object(input.escalation_routes)
	some k, v in input.escalation_routes
	k != forbidden
	not is_string(v)
}

findings contains finding("schema.type", "verification_topology", "F") if {
	has(input, "verification_topology")
	not is_object(input.verification_topology)
}

# The topologies of the classes the binding declares (the raw values).
topology[c] := t if {
	is_object(input.verification_topology)
	some c, t in input.verification_topology
	c in class_set
}

findings contains finding("schema.type", topology_subject(c), "F") if {
	some c, t in topology
	not is_object(t)
}

topology_ints := {"min_checkers": 1, "min_model_checkers": 0}

findings contains finding("schema.type", sprintf("verification_topology.%s.%s", [c, f]), "F") if {
	some c, t in topology
	some f, least in topology_ints
	has(t, f)
	not int_at_least(t[f], least)
}

findings contains finding("schema.type", sprintf("verification_topology.%s.cross_vendor_required", [c]), "F") if {
	some c, t in topology
	has(t, "cross_vendor_required")
	not is_boolean(t.cross_vendor_required)
}

findings contains finding("schema.type", sprintf("verification_topology.%s.roles", [c]), "F") if {
	some c, t in topology
	roles_state(t) == "invalid"
	is_object(t)
}

slot_path(c, i, f) := sprintf("verification_topology.%s.roles[%d].%s", [c, i, f])

findings contains finding("schema.type", sprintf("verification_topology.%s.roles[%d]", [c, i]), "F") if {
	some c, t in topology
	roles_state(t) == "list"
	some i, s in t.roles
	not is_object(s)
}

# Per slot: the field, and whether a value is of its type.
findings contains finding("schema.type", slot_path(c, i, f), "F") if {
	some c, t in topology
	roles_state(t) == "list"
	some i, s in t.roles
	is_object(s)
	some f in ["name", "role"]
	not slot_field_ok(s, f)
}

slot_field_ok(s, "name") if is_string(s.name)

slot_field_ok(s, "role") if s.role in role_names

findings contains finding("schema.type", slot_path(c, i, "scanner_class"), "F") if {
	some c, t in topology
	roles_state(t) == "list"
	some i, s in t.roles
	has(s, "scanner_class")
	not is_string(s.scanner_class)
}

findings contains finding("schema.type", slot_path(c, i, "min_context_tokens"), "F") if {
	some c, t in topology
	roles_state(t) == "list"
	some i, s in t.roles
	has(s, "min_context_tokens")
	not int_at_least(s.min_context_tokens, 1)
}

slot_lists := {
	"distinct_model_from": "string", "distinct_vendor_from": "string", "not_weaker_than": "string",
	"requires_feature": "string", "requires_modality": "modality",
}

findings contains finding("schema.type", slot_path(c, i, f), "F") if {
	some c, t in topology
	roles_state(t) == "list"
	some i, s in t.roles
	some f, _ in slot_lists
	has(s, f)
	not is_array(s[f])
}

findings contains finding("schema.type", sprintf("%s[%d]", [slot_path(c, i, f), j]), "F") if {
	some c, t in topology
	roles_state(t) == "list"
	some i, s in t.roles
	some f, kind in slot_lists
	is_array(s[f])
	some j, x in s[f]
	not element_ok(x, kind)
}

element_ok(x, "string") if is_string(x)

element_ok(x, "modality") if x in modalities

# Floors and ceilings (tighten-only), on values of the right type.
findings contains finding("merge.ceiling", sprintf("merge_policy.%s", [c]), "F") if {
	is_object(input.merge_policy)
	some c, v in input.merge_policy
	c in class_set
	has(merge_rank, v)
	merge_rank[v] > merge_rank[matrix[c].merge_ceiling]
}

findings contains finding("floor.verification_blocking", sprintf("verification_blocking.%s", [c]), "F") if {
	is_object(input.verification_blocking)
	some c, v in input.verification_blocking
	c in class_set
	has(force_rank, v)
	force_rank[v] > force_rank[matrix[c].vblock_floor]
}

topology_floors := {"min_checkers": {"rule": "floor.min_checkers", "least": 1}, "min_model_checkers": {"rule": "floor.min_model_checkers", "least": 0}}

findings contains finding(bound.rule, sprintf("verification_topology.%s.%s", [c, f]), "F") if {
	some c, t in topology
	some f, bound in topology_floors
	int_at_least(t[f], bound.least)
	t[f] < matrix[c][f]
}

findings contains finding("floor.cross_vendor_required", sprintf("verification_topology.%s.cross_vendor_required", [c]), "F") if {
	some c, t in topology
	t.cross_vendor_required == false
	matrix[c].cross_vendor == true
}

# topology.duplicate_slot: a name declared again (every later occurrence).
findings contains finding("topology.duplicate_slot", sprintf("verification_topology.%s.roles[%s]", [c, s.name]), "F") if {
	some c, t in topology
	roles_state(t) == "list"
	some i, s in t.roles
	named(s)
	some j, o in t.roles
	j < i
	named(o)
	o.name == s.name
}

# ------------------------------------------------------------ schema.version, escalation

findings contains finding("schema.version", "binding.json", "F") if {
	not input.schema_version == "1.0"
}

findings contains finding("escalation.required_route", "binding", "F") if {
	not has(input.escalation_routes, "verification-divergence")
}

# ------------------------------------------------------------ topology rules

topology_rules := [
	"topology.checker_count", "topology.model_checker_count", "topology.undeclared_role",
	"topology.deterministic_relation", "topology.generator_independence", "topology.pairwise_distinct",
	"topology.cross_vendor_population", "topology.cross_vendor_generator", "topology.cross_vendor_pairwise",
	"topology.capability_label",
]

# An invalid verification_topology: every rule over it is unknown.
findings contains finding(rule, "binding", "U") if {
	has(input, "verification_topology")
	not is_object(input.verification_topology)
	some rule in topology_rules
}

# topology.checker_count: distinct scanner classes + distinct model slots >= effective min_checkers.
findings contains finding("topology.checker_count", topology_subject(c), k) if {
	some c, t in topology
	roles_state(t) == "list"
	k := checker_count(models[c], deterministic[c], effective_min(c, t, "min_checkers", 1))
	k != "T"
}

checker_count(m, d, need) := "U" if {
	not all_known([m, d], need)
} else := truth(count({s.scanner_class | some s in d.list}) + count(m.list) >= need.v)

all_known(lists, need) if {
	every l in lists {
		l.state == "list"
	}
	need.ok
}

# topology.model_checker_count
findings contains finding("topology.model_checker_count", topology_subject(c), k) if {
	some c, t in topology
	roles_state(t) == "list"
	k := model_checker_count(models[c], effective_min(c, t, "min_model_checkers", 0))
	k != "T"
}

model_checker_count(m, need) := "U" if {
	not all_known([m], need)
} else := truth(count(m.list) >= need.v)

# `for s in t.roles`: unknown when roles is invalid (or the topology is).
findings contains finding(rule, topology_subject(c), "U") if {
	some c, t in topology
	roles_state(t) == "invalid"
	some rule in ["topology.undeclared_role", "topology.deterministic_relation", "topology.capability_label"]
}

# topology.undeclared_role: every relation target is another declared slot.
findings contains finding("topology.undeclared_role", slot_subject(c, s, i), k) if {
	some c, t in topology
	roles_state(t) == "list"
	some i, s in t.roles
	k := undeclared_role(s, slot_names[c])
	k != "T"
}

slot_name(o) := o.name if named(o) else := null

undeclared_role(s, names) := "U" if {
	targets(s).state != "list"
} else := every3([and3(differs(n, s), in3(n, {"state": "list", "list": names})) | some n in targets(s).list])

differs(n, s) := truth(n != s.name) if {
	is_string(n)
	named(s)
} else := "U"

# topology.capability_label: no slot's name, scanner class or required
# feature is a capability label (case-blind; `-` and `_` read as a space).
findings contains finding("topology.capability_label", slot_subject(c, s, i), k) if {
	some c, t in topology
	roles_state(t) == "list"
	some i, s in t.roles
	k := and3(not3(label3(s, "name")), and3(not3(scanner_label(s)), not3(feature_label(s))))
	k != "T"
}

capability_label(x) := "U" if {
	not is_string(x)
} else := truth(regex.match(`(?i)^(frontier|flagship|daily[-_ ]driver)$`, x))

# A slot's field as a label: unknown when the slot is not a mapping or lacks it.
label3(s, f) := "U" if {
	not is_object(s)
} else := "U" if {
	not has(s, f)
} else := capability_label(s[f])

# `present(s.scanner_class) and capability_label(s.scanner_class)`; a value
# of the wrong type is not `present` in grail (the schema reports it).
scanner_label(s) := "U" if {
	not is_object(s)
} else := "F" if {
	not is_string(s.scanner_class)
} else := capability_label(s.scanner_class)

# `some f in (s.requires_feature ?? []): capability_label(f)`; a value that
# is not a list (a type error the schema reports) reads as grail reads it, `[]`.
feature_label(s) := "U" if {
	not is_object(s)
} else := "F" if {
	not has(s, "requires_feature")
} else := "F" if {
	not is_array(s.requires_feature)
} else := some3([capability_label(f) | some f in s.requires_feature])

# Some of a list of truths: T if one is T, else U if one is U, else F.
some3(ts) := "T" if {
	"T" in ts
} else := "U" if {
	"U" in ts
} else := "F"

# topology.deterministic_relation
findings contains finding("topology.deterministic_relation", slot_subject(c, s, i), k) if {
	some c, t in topology
	roles_state(t) == "list"
	some i, s in t.roles
	k := deterministic_relation(s)
	k != "T"
}

deterministic_relation(s) := and3(
	or3(not3(scanner3(s)), role_is(s, "checker")),
	not3(and3(keep(s, "deterministic"), not3(empty3(targets(s))))),
)

empty3(l) := "U" if l.state != "list" else := truth(count(l.list) == 0)

# `for m in model_slots(t)` and `for (a, b) in pairs(model_slots(t))`: unknown
# when the slots cannot be established.
model_domain_unknown(c) if models[c].state in {"invalid", "unknown"}

findings contains finding(rule, topology_subject(c), "U") if {
	some c, t in topology
	model_domain_unknown(c)
	some rule in ["topology.generator_independence", "topology.pairwise_distinct"]
}

# topology.generator_independence
findings contains finding("topology.generator_independence", sprintf("verification_topology.%s[%s]", [c, m.name]), k) if {
	some c, t in topology
	ms := models[c]
	ms.state == "list"
	some m in ms.list
	k := independent_of_generators(m, gens[c])
	k != "T"
}

independent_of_generators(m, gens) := "U" if {
	gens.state != "list"
} else := and3(truth(count(gens.list) > 0), every3([model_distinct(m, g) | some g in gens.list]))

# topology.pairwise_distinct
findings contains finding("topology.pairwise_distinct", pair_subject(c, a, b), k) if {
	some c, t in topology
	ms := models[c]
	ms.state == "list"
	some i, a in ms.list
	some j, b in ms.list
	i < j
	k := or3(model_distinct(a, b), model_distinct(b, a))
	k != "T"
}

# The cross-vendor rules: `when cross_vendor_required(c, t)` first.
cross_vendor_rules := ["topology.cross_vendor_population", "topology.cross_vendor_generator", "topology.cross_vendor_pairwise"]

findings contains finding(rule, topology_subject(c), "U") if {
	some c, t in topology
	cross_vendor[c] == "U"
	some rule in cross_vendor_rules
}

findings contains finding("topology.cross_vendor_population", topology_subject(c), k) if {
	some c, t in topology
	cross_vendor[c] == "T"
	roles_state(t) == "list"
	ms := models[c]
	k := population(ms)
	k != "T"
}

population(ms) := "U" if ms.state != "list" else := truth(count(ms.list) >= 2)

findings contains finding(rule, topology_subject(c), "U") if {
	some c, t in topology
	cross_vendor[c] == "T"
	model_domain_unknown(c)
	some rule in ["topology.cross_vendor_generator", "topology.cross_vendor_pairwise"]
}

findings contains finding("topology.cross_vendor_generator", sprintf("verification_topology.%s[%s]", [c, m.name]), k) if {
	some c, t in topology
	cross_vendor[c] == "T"
	ms := models[c]
	ms.state == "list"
	some m in ms.list
	k := cross_vendor_generator(m, gens[c])
	k != "T"
}

cross_vendor_generator(m, gens) := "U" if {
	gens.state != "list"
} else := and3(
	truth(count(gens.list) > 0),
	or3(role_is(m, "cross_vendor_checker"), every3([in3(g.name, relation(m, "distinct_vendor_from")) | some g in gens.list])),
)

findings contains finding("topology.cross_vendor_pairwise", pair_subject(c, a, b), k) if {
	some c, t in topology
	cross_vendor[c] == "T"
	ms := models[c]
	ms.state == "list"
	some i, a in ms.list
	some j, b in ms.list
	i < j
	k := or3(in3(b.name, relation(a, "distinct_vendor_from")), in3(a.name, relation(b, "distinct_vendor_from")))
	k != "T"
}

# ------------------------------------------------------------ merge gates

merge_rules := ["merge.auto_requires_blocking", "merge.auto_requires_review", "merge.executor_cap"]

# An invalid merge_policy: every gate is unknown.
findings contains finding(rule, "binding", "U") if {
	has(input, "merge_policy")
	not is_object(input.merge_policy)
	some rule in merge_rules
}

# The classes the binding sets (the others default to `human`: not applicable).
merge_value[c] := v if {
	is_object(input.merge_policy)
	some c, v in input.merge_policy
	c in class_set
}

# `when m == "auto"` on an invalid value: unknown.
findings contains finding(rule, sprintf("merge_policy.%s", [c]), "U") if {
	some c, v in merge_value
	not has(merge_rank, v)
	some rule in merge_rules
}

auto_classes contains c if merge_value[c] == "auto"

findings contains finding("merge.auto_requires_blocking", sprintf("merge_policy.%s", [c]), k) if {
	some c in auto_classes
	k := equals3(class_value("verification_blocking", c, force_rank, "vblock"), "blocking")
	k != "T"
}

findings contains finding("merge.auto_requires_review", sprintf("merge_policy.%s", [c]), k) if {
	some c in auto_classes
	matrix[c].review_gates_auto
	k := equals3(class_value("security_review", c, force_rank, "review"), "blocking")
	k != "T"
}

equals3(v, want) := "U" if v == "U" else := truth(v == want)

findings contains finding("merge.executor_cap", sprintf("merge_policy.%s", [c]), "F") if {
	some c in auto_classes
	not input.executor_class == "self-operated"
}
