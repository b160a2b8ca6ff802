//! The lowered policy as versioned JSON (`docs/ir.md`): what other tools read
//! instead of parsing grail.
//!
//! Only meaning goes in: names, types, defaults, bounds, rule ids, and
//! expressions as the printer writes them (normalised, so reformatting the
//! source changes nothing). No span, file index or slot number appears.

use grail_lang::ast::{BoundKind, EnumOrder, RequestSide};
use serde_json::{Value, json};

use super::tree::Trees;

use crate::hir::{
    CHECK_DESCRIPTIONS, Checks, ClauseDef, DefaultDef, DocumentDef, EnumDef, Expr, FieldDef, KeyCondDef, KeyTestDef,
    LayersDef, MatrixDef, Policy, QuestionDef, RecordDef, RuleDef, SelectorDef, TableDef, Template, TemplatePart, Ty,
};

/// The version of the format; it grows when a change would mislead a reader of the previous one.
pub const FORMAT_VERSION: u32 = 1;

/// The lowered policy as JSON; `name` is the policy's name (its folder).
pub fn ir(policy: &Policy, name: &str) -> Value {
    let mut out = serde_json::Map::new();
    out.insert("format_version".into(), json!(FORMAT_VERSION));
    out.insert("policy".into(), json!(name));
    out.insert("enums".into(), policy.enums.iter().map(enumeration).collect());
    out.insert("matrices".into(), policy.matrices.iter().map(|m| matrix(policy, m)).collect());
    out.insert("records".into(), policy.records.iter().map(|r| record(policy, r)).collect());
    out.insert("documents".into(), policy.documents.iter().map(|d| document(policy, d)).collect());
    out.insert("layers".into(), policy.layers.iter().map(|l| layers(policy, l)).collect());
    out.insert("rules".into(), policy.rules.iter().map(|r| rule(policy, r)).collect());
    out.insert("questions".into(), policy.questions.iter().map(|q| question(policy, q)).collect());
    out.insert("tables".into(), policy.tables.iter().map(|t| table(policy, t)).collect());
    Value::Object(out)
}

fn enumeration(e: &EnumDef) -> Value {
    let order = match e.order {
        EnumOrder::None => "none",
        EnumOrder::Ordered => "ordered",
        EnumOrder::TightestFirst => "tightest_first",
    };
    json!({"name": e.name, "order": order, "variants": e.variants, "docs": e.docs})
}

fn matrix(policy: &Policy, m: &MatrixDef) -> Value {
    let key = policy.enums.get(m.key_enum as usize);
    let variants = key.map(|k| k.variants.as_slice()).unwrap_or_default();
    let mut rows = serde_json::Map::new();
    for (v, variant) in variants.iter().enumerate() {
        let mut cells = serde_json::Map::new();
        for (c, col) in m.columns.iter().enumerate() {
            let cell = m.cells.get(v).and_then(|r| r.get(c)).map_or(Value::Null, |x| super::literal(policy, x));
            cells.insert(col.name.clone(), cell);
        }
        rows.insert(variant.clone(), Value::Object(cells));
    }
    let columns: Vec<Value> = m.columns.iter().map(|c| json!({"name": c.name, "type": ty(policy, &c.ty)})).collect();
    json!({"name": m.name, "key": key.map(|k| k.name.clone()), "columns": columns, "rows": rows, "docs": m.docs})
}

fn record(policy: &Policy, r: &RecordDef) -> Value {
    let fields: Vec<Value> = r.fields.iter().map(|f| field(policy, f)).collect();
    json!({
        "name": r.name,
        "identity": r.identity.and_then(|i| r.fields.get(i)).map(|f| f.name.clone()),
        "checks": checks(&r.checks),
        "fields": fields,
        "docs": r.docs,
    })
}

fn document(policy: &Policy, d: &DocumentDef) -> Value {
    let test = |t: &KeyTestDef| match &t.test {
        KeyCondDef::Absent => json!({"absent": t.key}),
        KeyCondDef::Present => json!({"present": t.key}),
        KeyCondDef::Equals(v) => json!({"equals": {"key": t.key, "value": v}}),
    };
    let selector = match &d.selector {
        SelectorDef::Keys(tests) if tests.len() == 1 => test(&tests[0]),
        SelectorDef::Keys(tests) => json!({"all": tests.iter().map(test).collect::<Vec<_>>()}),
        SelectorDef::Markdown { marker, rule } => json!({"markdown": {"marker": marker, "rule": rule.rule}}),
        SelectorDef::Given { name } => json!({"given": name}),
    };
    let forbids: Vec<Value> = d.forbids.iter().map(|f| json!({"key": f.key, "rule": f.rule})).collect();
    json!({
        "name": d.name,
        "binder": d.binder,
        "all_binder": d.all_binder,
        "lines_into": d.lines_into,
        "list_into": d.list_into,
        "unreadable_missing": d.unreadable_missing,
        "selector": selector,
        "record": policy.records.get(d.record as usize).map(|r| r.name.clone()),
        "checks": checks(&d.checks),
        "forbids": forbids,
        "at_most_one": d.at_most_one.is_some(),
        "docs": d.docs,
    })
}

fn layers(policy: &Policy, l: &LayersDef) -> Value {
    let only: Vec<Value> = l.only.iter().map(|(f, i)| json!({"field": f, "layer": l.layers.get(*i)})).collect();
    json!({
        "document": doc_name(policy, l.document),
        "claimed_by": l.claim,
        "standalone": l.standalone,
        "separate": l.separate,
        "trusted_from": l.trusted.as_ref().map(|(i, c)| json!({"layer": l.layers.get(*i), "rule": c.rule})),
        "layers": l.layers,
        "only": only,
        "free": l.free,
        "checks": checks(&l.checks),
    })
}

fn rule(policy: &Policy, r: &RuleDef) -> Value {
    let reads: Vec<Value> = r.reads.iter().map(|k| doc_name(policy, *k)).collect();
    let mut trees = Trees::new(policy, r.slots);
    let clauses: Vec<Value> = r.clauses.iter().map(|c| clause(&mut trees, c)).collect();
    let at = r.at.as_ref().map(|e| expr(&mut trees, e));
    json!({"id": r.id, "reads": reads, "clauses": clauses, "at": at, "docs": r.docs})
}

fn table(policy: &Policy, t: &TableDef) -> Value {
    let reads: Vec<Value> = t.reads.iter().map(|k| doc_name(policy, *k)).collect();
    let mut trees = Trees::new(policy, t.slots);
    let body = &*t.body;
    let clauses: Vec<Value> = body.clauses.iter().map(|c| clause(&mut trees, c)).collect();
    let row = json!({"name": body.row.name, "value": expr(&mut trees, &body.row.value)});
    let columns: Vec<Value> =
        body.columns.iter().map(|c| json!({"name": c.name, "value": expr(&mut trees, &c.value)})).collect();
    let detail = body.detail.as_ref().map(|e| expr(&mut trees, e));
    json!({"id": t.id, "reads": reads, "clauses": clauses, "row": row, "columns": columns, "detail": detail, "docs": t.docs})
}

fn question(policy: &Policy, q: &QuestionDef) -> Value {
    let reads: Vec<Value> = q.reads.iter().map(|k| doc_name(policy, *k)).collect();
    let mut trees = Trees::new(policy, q.slots);
    let variables: Vec<Value> = q
        .body
        .vars
        .iter()
        .map(|v| {
            let side = match v.side {
                RequestSide::Principal => "principal",
                RequestSide::Resource => "resource",
            };
            let (tree, ty) = trees.tree(&v.domain);
            trees.bind(&v.pattern, ty.as_ref());
            json!({
                "names": v.names,
                "bind": Trees::binds(&v.pattern),
                "in": {"text": v.domain.text, "tree": tree},
                "side": side,
                "attribute": v.attribute,
            })
        })
        .collect();
    let allow = expr(&mut trees, &q.body.allow);
    json!({
        "id": q.id,
        "action": q.action,
        "reads": reads,
        "variables": variables,
        "allow": allow,
        "docs": q.docs,
    })
}

fn doc_name(policy: &Policy, k: u32) -> Value {
    policy.documents.get(k as usize).map_or(Value::Null, |d| json!(d.name))
}

fn checks(c: &Checks) -> Value {
    let map: serde_json::Map<String, Value> = c
        .iter()
        .zip(CHECK_DESCRIPTIONS)
        .filter_map(|(c, (name, _))| c.as_ref().map(|c| (name.to_string(), json!(c.rule))))
        .collect();
    Value::Object(map)
}

fn field(policy: &Policy, f: &FieldDef) -> Value {
    let default = f.default.as_ref().map(|d| match d {
        DefaultDef::Column { matrix, column, .. } => {
            let m = &policy.matrices[*matrix as usize];
            json!({"column": {"matrix": m.name, "column": m.columns.get(*column).map(|c| c.name.clone())}})
        }
        DefaultDef::Value(v) => json!({"value": super::literal(policy, v)}),
        DefaultDef::Empty(_) => json!({"value": {}}),
    });
    let bounds: Vec<Value> = f
        .bounds
        .iter()
        .map(|b| {
            let m = &policy.matrices[b.matrix as usize];
            let kind = match b.kind {
                BoundKind::Floor => "floor",
                BoundKind::Ceiling => "ceiling",
            };
            json!({"kind": kind, "matrix": m.name, "column": m.columns.get(b.column).map(|c| c.name.clone()), "rule": b.rule})
        })
        .collect();
    json!({
        "name": f.name,
        "type": ty(policy, &f.ty),
        "optional": f.optional,
        "ref": f.is_ref,
        "nullable": f.nullable,
        "min": f.int_min,
        "default": default,
        "bounds": bounds,
        "unique": f.unique.as_ref().map(|u| u.rule.clone()),
        "invalid": f.invalid.as_ref().map(|c| c.rule.clone()),
        "growth": f.growth.map(|g| match g {
            grail_lang::ast::Growth::Grows => "grows",
            grail_lang::ast::Growth::Shrinks => "shrinks",
        }),
        "docs": f.docs,
    })
}

/// A type: `{"type": "bool" | "int" | "string"}`, `{"type": "enum", "name": ...}`,
/// `{"type": "record", "name": ...}`, `{"type": "list", "item": T}`, `{"type": "map", "key": K, "value": V}`.
pub fn ty(policy: &Policy, t: &Ty) -> Value {
    match t {
        Ty::Bool => json!({"type": "bool"}),
        Ty::Int => json!({"type": "int"}),
        Ty::Str => json!({"type": "string"}),
        Ty::Time => json!({"type": "time"}),
        Ty::Duration => json!({"type": "duration"}),
        Ty::Net => json!({"type": "network"}),
        Ty::Id => json!({"type": "id"}),
        Ty::Enum(e) => json!({"type": "enum", "name": policy.enums.get(*e as usize).map(|d| d.name.clone())}),
        Ty::Record(r) => json!({"type": "record", "name": policy.records.get(*r as usize).map(|d| d.name.clone())}),
        Ty::List(item) => json!({"type": "list", "item": ty(policy, item)}),
        Ty::Map(k, v) => json!({"type": "map", "key": ty(policy, k), "value": ty(policy, v)}),
        // Not the type of a field or a column; written for completeness.
        Ty::Matrix(_) | Ty::Row(_) | Ty::Domain(_) | Ty::Pairs(_) | Ty::Error => json!({"type": "other"}),
    }
}

/// An expression: its text as the printer writes it, and its tree.
fn expr(trees: &mut Trees<'_>, e: &Expr) -> Value {
    json!({"text": e.text, "tree": trees.tree(e).0})
}

fn clause(trees: &mut Trees<'_>, c: &ClauseDef) -> Value {
    match c {
        ClauseDef::For { pattern, names, domain, filter, .. } => {
            let (tree, ty) = trees.tree(domain);
            trees.bind(pattern, ty.as_ref());
            let filter = filter.as_ref().map(|f| expr(trees, f));
            json!({
                "clause": "for",
                "names": names,
                "bind": Trees::binds(pattern),
                "in": {"text": domain.text, "tree": tree},
                "if": filter,
            })
        }
        ClauseDef::When { guard, reason, report } => {
            json!({"clause": "when", "guard": expr(trees, guard), "else": reason.as_ref().map(template), "report": report})
        }
        ClauseDef::Let { slot, name, value } => {
            let (tree, ty) = trees.tree(value);
            trees.set(*slot, ty);
            json!({"clause": "let", "name": name, "bind": [slot], "value": {"text": value.text, "tree": tree}})
        }
        ClauseDef::Require { check, fail, message, .. } => json!({
            "clause": "require",
            "check": expr(trees, check),
            "else": if *fail { "fail" } else { "unknown" },
            "message": template(message),
        }),
    }
}

/// A message as grail writes it, without the quotes: text, and `{expr}` holes.
fn template(t: &Template) -> Value {
    let mut out = String::new();
    for part in &t.parts {
        match part {
            TemplatePart::Text(s) => {
                for c in s.chars() {
                    match c {
                        '"' | '\\' | '{' | '}' => {
                            out.push('\\');
                            out.push(c);
                        }
                        '\n' => out.push_str("\\n"),
                        '\t' => out.push_str("\\t"),
                        c => out.push(c),
                    }
                }
            }
            TemplatePart::Hole(e) => {
                out.push('{');
                out.push_str(&e.text);
                out.push('}');
            }
        }
    }
    json!(out)
}
