//! JSON Schema (draft 2020-12) for each document kind a policy declares, so
//! that an editor without the grail server completes keys and flags unknown
//! ones.
//!
//! The schema says what the document's shape is: types, variants, required
//! keys, no unknown key, the keys of a map keyed by an enumeration. What needs
//! the policy's rules (floors and ceilings, identities, layers, files named by
//! `ref`) is left to `grail check`; bounds and matrix defaults are written in
//! descriptions.

use serde_json::{Map, Value, json};

use crate::hir::{DefaultDef, DocumentDef, FieldDef, Policy, RecordId, SelectorDef, Ty};

pub const DRAFT: &str = "https://json-schema.org/draft/2020-12/schema";

/// One schema per document kind, in declaration order: `(kind name, schema)`.
pub fn json_schemas(policy: &Policy) -> Vec<(String, Value)> {
    policy.documents.iter().map(|d| (d.name.clone(), document(policy, d))).collect()
}

struct Defs<'p> {
    policy: &'p Policy,
    defs: Map<String, Value>,
}

fn document(policy: &Policy, d: &DocumentDef) -> Value {
    let mut cx = Defs { policy, defs: Map::new() };
    let Value::Object(body) = cx.record_body(d.record) else { unreachable!("a record is an object schema") };
    let mut out = Map::new();
    out.insert("$schema".into(), json!(DRAFT));
    out.insert("title".into(), json!(d.name));
    let mut description = d.docs.join(" ");
    if let SelectorDef::Markdown { marker, .. } = &d.selector {
        description.push_str(&format!(" (The fenced JSON block after the line `{marker}` of a Markdown file.)"));
    }
    if !description.trim().is_empty() {
        out.insert("description".into(), json!(description.trim()));
    }
    for (k, v) in body {
        if k != "description" {
            out.insert(k, v);
        }
    }
    // The selector: a document of this kind has this key with this value.
    for t in d.selector.tests() {
        let (key, crate::hir::KeyCondDef::Equals(value)) = (&t.key, &t.test) else { continue };
        let Some(Value::Object(props)) = out.get_mut("properties") else { continue };
        let p = props.entry(key.clone()).or_insert_with(|| json!({"type": "string"}));
        if let Value::Object(p) = p {
            p.insert("const".into(), json!(value));
        }
        if let Some(Value::Array(req)) = out.get_mut("required")
            && !req.iter().any(|r| r == key)
        {
            req.push(json!(key));
        }
    }
    if !cx.defs.is_empty() {
        out.insert("$defs".into(), Value::Object(cx.defs));
    }
    Value::Object(out)
}

impl Defs<'_> {
    fn record_ref(&mut self, r: RecordId) -> Value {
        let Some(def) = self.policy.records.get(r as usize) else { return json!({}) };
        if !self.defs.contains_key(&def.name) {
            // Reserve the name first: records may refer to each other.
            self.defs.insert(def.name.clone(), Value::Null);
            let body = self.record_body(r);
            self.defs.insert(def.name.clone(), body);
        }
        json!({"$ref": format!("#/$defs/{}", def.name)})
    }

    fn record_body(&mut self, r: RecordId) -> Value {
        let policy = self.policy;
        let Some(def) = policy.records.get(r as usize) else { return json!({}) };
        let mut properties = Map::new();
        let mut required = Vec::new();
        for f in &def.fields {
            properties.insert(f.name.clone(), self.field(f));
            if !f.optional {
                required.push(json!(f.name));
            }
        }
        let mut out = Map::new();
        out.insert("type".into(), json!("object"));
        if !def.docs.is_empty() {
            out.insert("description".into(), json!(def.docs.join(" ")));
        }
        out.insert("properties".into(), Value::Object(properties));
        out.insert("required".into(), Value::Array(required));
        out.insert("additionalProperties".into(), json!(false));
        Value::Object(out)
    }

    fn field(&mut self, f: &FieldDef) -> Value {
        let policy = self.policy;
        let mut schema = self.ty(&f.ty, f.int_min);
        if f.nonempty {
            not_empty(&mut schema);
        }
        if f.complete
            && let (Ty::Map(k, _), Value::Object(map)) = (&f.ty, &mut schema)
            && let Ty::Enum(e) = &**k
        {
            let variants = policy.enums.get(*e as usize).map(|d| d.variants.clone()).unwrap_or_default();
            map.insert("required".into(), json!(variants));
        }
        if f.one
            && let Some(item) = schema.get("items").cloned()
        {
            schema = json!({"anyOf": [schema, item]});
        }
        if f.is_ref {
            schema = json!({"anyOf": [schema, {
                "type": "string",
                "description": "a path to a JSON or YAML file, relative to this document's folder"
            }]});
        }
        if f.nullable {
            schema = json!({"anyOf": [schema, {"type": "null"}]});
        }
        let Value::Object(mut out) = schema else { return schema };
        let mut notes: Vec<String> = f.docs.clone();
        match &f.default {
            Some(DefaultDef::Value(v)) => {
                out.insert("default".into(), super::literal(policy, v));
            }
            Some(DefaultDef::Empty(_)) => {
                out.insert("default".into(), json!({}));
            }
            Some(DefaultDef::Column { matrix, column, .. }) => {
                let m = &policy.matrices[*matrix as usize];
                let col = m.columns.get(*column).map_or("", |c| c.name.as_str());
                // A map keyed by the matrix's enumeration: each key's default is its row's cell.
                let keyed = matches!(&f.ty, Ty::Map(k, _) if **k == Ty::Enum(m.key_enum));
                if keyed && let Some(Value::Object(props)) = out.get_mut("properties") {
                    let variants = &policy.enums[m.key_enum as usize].variants;
                    for (i, variant) in variants.iter().enumerate() {
                        if let (Some(Value::Object(p)), Some(cell)) =
                            (props.get_mut(variant), m.cells.get(i).and_then(|r| r.get(*column)))
                        {
                            p.insert("default".into(), super::literal(policy, cell));
                        }
                    }
                } else {
                    let key = policy.enums.get(m.key_enum as usize).map_or("", |e| e.name.as_str());
                    notes.push(format!("Default: `{}.{col}` of the enclosing `{key}`.", m.name));
                }
            }
            None => {}
        }
        for b in &f.bounds {
            let m = &policy.matrices[b.matrix as usize];
            let col = m.columns.get(b.column).map_or("", |c| c.name.as_str());
            let kind = match b.kind {
                grail_lang::ast::BoundKind::Floor => "floor",
                grail_lang::ast::BoundKind::Ceiling => "ceiling",
            };
            notes.push(format!("Tighten-only: {kind} `{}.{col}` (rule `{}`).", m.name, b.rule));
        }
        if !notes.is_empty() {
            out.insert("description".into(), json!(notes.join(" ")));
        }
        Value::Object(out)
    }

    fn ty(&mut self, t: &Ty, int_min: Option<i64>) -> Value {
        let policy = self.policy;
        match t {
            Ty::Bool => json!({"type": "boolean"}),
            Ty::Int => match int_min {
                Some(min) => json!({"type": "integer", "minimum": min}),
                None => json!({"type": "integer"}),
            },
            Ty::Str => json!({"type": "string"}),
            // Not the type of a field: documents write instants as strings.
            Ty::Time => json!({"type": "string", "format": "date-time"}),
            Ty::Duration | Ty::Net => json!({}),
            Ty::Id => {
                json!({"type": "string", "pattern": "^[^\\s\\u0000-\\u001f\\u007f-\\u009f\\u200b-\\u200f\\u2060-\\u2064\\ufeff]+$"})
            }
            Ty::Enum(e) => {
                let Some(def) = policy.enums.get(*e as usize) else { return json!({}) };
                if !self.defs.contains_key(&def.name) {
                    let mut body = Map::new();
                    if !def.docs.is_empty() {
                        body.insert("description".into(), json!(def.docs.join(" ")));
                    }
                    body.insert("enum".into(), json!(def.variants));
                    self.defs.insert(def.name.clone(), Value::Object(body));
                }
                json!({"$ref": format!("#/$defs/{}", def.name)})
            }
            Ty::Record(r) => self.record_ref(*r),
            Ty::List(item) => json!({"type": "array", "items": self.ty(item, int_min)}),
            Ty::Map(k, v) => {
                let value = self.ty(v, int_min);
                match &**k {
                    Ty::Enum(e) => {
                        let variants = policy.enums.get(*e as usize).map(|d| d.variants.clone()).unwrap_or_default();
                        let props: Map<String, Value> = variants.into_iter().map(|n| (n, value.clone())).collect();
                        json!({"type": "object", "properties": props, "additionalProperties": false})
                    }
                    _ => json!({"type": "object", "additionalProperties": value}),
                }
            }
            Ty::Matrix(_) | Ty::Row(_) | Ty::Domain(_) | Ty::Pairs(_) | Ty::Error => json!({}),
        }
    }
}

/// `text`: every string of the schema (not those behind a `$ref`) is not empty.
fn not_empty(v: &mut Value) {
    let Value::Object(map) = v else { return };
    if map.get("type") == Some(&json!("string")) && !map.contains_key("pattern") {
        map.insert("minLength".into(), json!(1));
    }
    for key in ["items", "additionalProperties"] {
        if let Some(inner) = map.get_mut(key) {
            not_empty(inner);
        }
    }
    if let Some(Value::Object(props)) = map.get_mut("properties") {
        props.values_mut().for_each(not_empty);
    }
}
