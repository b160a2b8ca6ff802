//! The structured form of lowered expressions, for the JSON form of a policy
//! (`docs/ir.md`, "Expression trees").
//!
//! Lowered expressions name fields and columns by position; the tree names
//! them, so the walk infers each expression's type as it goes (variables take
//! the element type of the domain that binds them). Variables are slots:
//! numbers a rule's or question's binders (`for`, `let`, quantifiers,
//! comprehensions, expanded function arguments) assign in source order.

use serde_json::{Value, json};

use crate::hir::{Cmp, Expr, ExprKind, PatternDef, Policy, Slot, Ty};
use crate::value::ValKind;

/// Expression trees of one rule or question: its slots' types as they are bound.
pub struct Trees<'p> {
    policy: &'p Policy,
    env: Vec<Option<Ty>>,
}

impl<'p> Trees<'p> {
    pub fn new(policy: &'p Policy, slots: u32) -> Self {
        Trees { policy, env: vec![None; slots as usize] }
    }

    /// The tree of an expression and its type, where it could be inferred.
    pub fn tree(&mut self, e: &Expr) -> (Value, Option<Ty>) {
        self.walk(e)
    }

    /// Binds a pattern's slots to the element types of a domain.
    pub fn bind(&mut self, pattern: &PatternDef, domain: Option<&Ty>) {
        let (a, b) = match domain {
            Some(Ty::List(t)) => (Some(Ty::Int), Some((**t).clone())),
            Some(Ty::Map(k, v)) => (Some((**k).clone()), Some((**v).clone())),
            Some(Ty::Domain(e)) => (Some(Ty::Enum(*e)), None),
            Some(Ty::Pairs(t)) => (Some((**t).clone()), Some((**t).clone())),
            _ => (None, None),
        };
        match *pattern {
            // One name: a list's element, a map's key, a variant, a pair's first.
            PatternDef::One(s) => {
                let one = match domain {
                    Some(Ty::List(_)) => b,
                    _ => a,
                };
                self.set(s, one);
            }
            PatternDef::Entry(x, y) | PatternDef::Pair(x, y) => {
                self.set(x, a);
                self.set(y, b);
            }
        }
    }

    /// Gives a slot a type (a `let`).
    pub fn set(&mut self, slot: Slot, ty: Option<Ty>) {
        if let Some(s) = self.env.get_mut(slot as usize) {
            *s = ty;
        }
    }

    /// The slots a pattern binds.
    pub fn binds(pattern: &PatternDef) -> Value {
        match *pattern {
            PatternDef::One(a) => json!([a]),
            PatternDef::Entry(a, b) | PatternDef::Pair(a, b) => json!([a, b]),
        }
    }

    fn op(&mut self, op: &str, args: &[&Expr]) -> (Value, Vec<Option<Ty>>) {
        let (trees, tys): (Vec<Value>, Vec<Option<Ty>>) = args.iter().map(|a| self.walk(a)).unzip();
        (json!({"op": op, "args": trees}), tys)
    }

    fn record_of(&self, ty: Option<&Ty>) -> Option<&'p crate::hir::RecordDef> {
        match ty {
            Some(Ty::Record(r)) => self.policy.records.get(*r as usize),
            _ => None,
        }
    }

    fn walk(&mut self, e: &Expr) -> (Value, Option<Ty>) {
        let policy = self.policy;
        let name_of_enum = |id: u32| policy.enums.get(id as usize).map(|d| d.name.clone());
        let doc_record = |k: u32| policy.documents.get(k as usize).map(|d| Ty::Record(d.record));
        match &e.kind {
            ExprKind::Lit(v) => {
                let ty = match &v.kind {
                    ValKind::Bool(_) => Some(Ty::Bool),
                    ValKind::Int(_) => Some(Ty::Int),
                    ValKind::Str(_) => Some(Ty::Str),
                    ValKind::Enum(id, _) => Some(Ty::Enum(*id)),
                    _ => None,
                };
                (json!({"op": "literal", "value": super::literal(policy, v)}), ty)
            }
            ExprKind::Var(s) => (json!({"op": "var", "slot": s}), self.env.get(*s as usize).cloned().flatten()),
            ExprKind::Doc(k) => (
                json!({"op": "document", "kind": policy.documents.get(*k as usize).map(|d| d.name.clone())}),
                doc_record(*k),
            ),
            ExprKind::Docs(k) => (
                json!({"op": "documents", "kind": policy.documents.get(*k as usize).map(|d| d.name.clone())}),
                doc_record(*k).map(|t| Ty::List(Box::new(t))),
            ),
            ExprKind::Matrix(m) => (
                json!({"op": "matrix", "name": policy.matrices.get(*m as usize).map(|d| d.name.clone())}),
                Some(Ty::Matrix(*m)),
            ),
            ExprKind::Domain(id) => (json!({"op": "variants", "enum": name_of_enum(*id)}), Some(Ty::Domain(*id))),
            ExprKind::Field(base, i) => {
                let (b, ty) = self.walk(base);
                let field = self.record_of(ty.as_ref()).and_then(|r| r.fields.get(*i));
                (json!({"op": "field", "of": b, "name": field.map(|f| f.name.clone())}), field.map(|f| f.ty.clone()))
            }
            ExprKind::Column(base, i) => {
                let (b, ty) = self.walk(base);
                let column = match ty {
                    Some(Ty::Row(m)) => policy.matrices.get(m as usize).and_then(|d| d.columns.get(*i)),
                    _ => None,
                };
                (json!({"op": "column", "of": b, "name": column.map(|c| c.name.clone())}), column.map(|c| c.ty.clone()))
            }
            ExprKind::MapGet(map, key) => {
                let (m, ty) = self.walk(map);
                let (k, _) = self.walk(key);
                let value = match ty {
                    Some(Ty::Map(_, v)) => Some(*v),
                    _ => None,
                };
                (json!({"op": "get", "of": m, "key": k}), value)
            }
            ExprKind::ListGet(list, index) => {
                let (l, ty) = self.walk(list);
                let (i, _) = self.walk(index);
                let item = match ty {
                    Some(Ty::List(t)) => Some(*t),
                    _ => None,
                };
                (json!({"op": "at", "of": l, "index": i}), item)
            }
            ExprKind::MatrixRow(m, key) => {
                let (k, _) = self.walk(key);
                let name = policy.matrices.get(*m as usize).map(|d| d.name.clone());
                (json!({"op": "row", "matrix": name, "key": k}), Some(Ty::Row(*m)))
            }
            ExprKind::Not(a) => (self.op("not", &[a]).0, Some(Ty::Bool)),
            ExprKind::And(a, b) => (self.op("and", &[a, b]).0, Some(Ty::Bool)),
            ExprKind::Or(a, b) => (self.op("or", &[a, b]).0, Some(Ty::Bool)),
            ExprKind::Compare(c, a, b) => {
                let op = match c {
                    Cmp::Eq => "==",
                    Cmp::Ne => "!=",
                    Cmp::Lt => "<",
                    Cmp::Le => "<=",
                    Cmp::Gt => ">",
                    Cmp::Ge => ">=",
                };
                (self.op(op, &[a, b]).0, Some(Ty::Bool))
            }
            ExprKind::Tighter(a, b) => (self.op("tighter_than", &[a, b]).0, Some(Ty::Bool)),
            ExprKind::In(a, b) => (self.op("in", &[a, b]).0, Some(Ty::Bool)),
            ExprKind::Coalesce(a, b) => {
                let (v, tys) = self.op("??", &[a, b]);
                (v, tys.into_iter().flatten().next())
            }
            ExprKind::Concat(a, b) => {
                let (v, tys) = self.op("++", &[a, b]);
                (v, tys.into_iter().flatten().next())
            }
            ExprKind::Add(a, b) | ExprKind::Sub(a, b) | ExprKind::Mul(a, b) => {
                let symbol = match e.kind {
                    ExprKind::Add(..) => "+",
                    ExprKind::Sub(..) => "-",
                    _ => "*",
                };
                let (v, tys) = self.op(symbol, &[a, b]);
                let ty = match (tys.first().cloned().flatten(), tys.get(1).cloned().flatten()) {
                    (Some(Ty::Time), Some(Ty::Time)) => Ty::Duration,
                    (Some(Ty::Time), _) | (_, Some(Ty::Time)) => Ty::Time,
                    (Some(Ty::Duration), _) | (_, Some(Ty::Duration)) => Ty::Duration,
                    _ => Ty::Int,
                };
                (v, Some(ty))
            }
            ExprKind::Present(a) => (self.op("present", &[a]).0, Some(Ty::Bool)),
            ExprKind::Valid(a) => (self.op("valid", &[a]).0, Some(Ty::Bool)),
            ExprKind::Count(a) => (self.op("count", &[a]).0, Some(Ty::Int)),
            ExprKind::CountBy { slot, domain, key } => {
                let (d, ty) = self.walk(domain);
                self.bind(&PatternDef::One(*slot), ty.as_ref());
                let (k, _) = self.walk(key);
                (json!({"op": "count_by", "bind": [slot], "in": d, "key": k}), Some(Ty::Int))
            }
            ExprKind::Empty(a) => (self.op("empty", &[a]).0, Some(Ty::Bool)),
            ExprKind::Max(a, b) => {
                let (v, tys) = self.op("max", &[a, b]);
                (v, tys.into_iter().flatten().next())
            }
            ExprKind::Min(a, b) => {
                let (v, tys) = self.op("min", &[a, b]);
                (v, tys.into_iter().flatten().next())
            }
            ExprKind::Pairs(a) => {
                let (v, tys) = self.op("pairs", &[a]);
                let item = match tys.into_iter().next().flatten() {
                    Some(Ty::List(t)) => Some(Ty::Pairs(t)),
                    _ => None,
                };
                (v, item)
            }
            ExprKind::Distinct(a) => {
                let (v, tys) = self.op("distinct", &[a]);
                (v, tys.into_iter().next().flatten())
            }
            ExprKind::Entries(a) => (self.op("entries", &[a]).0, Some(Ty::Int)),
            ExprKind::Lower(a) => (self.op("lower", &[a]).0, Some(Ty::Str)),
            ExprKind::Split(a, b) => (self.op("split", &[a, b]).0, Some(Ty::List(Box::new(Ty::Str)))),
            ExprKind::TrimSuffix(a, b) => (self.op("trim_suffix", &[a, b]).0, Some(Ty::Str)),
            ExprKind::Trim(a) => (self.op("trim", &[a]).0, Some(Ty::Str)),
            ExprKind::Url(part, a) => (self.op(part.name(), &[a]).0, Some(Ty::Str)),
            ExprKind::ParseInt(a) => (self.op("int", &[a]).0, Some(Ty::Int)),
            ExprKind::Timestamp(a) => (self.op("timestamp", &[a]).0, Some(Ty::Time)),
            ExprKind::Now => (json!({"op": "now", "args": []}), Some(Ty::Time)),
            ExprKind::Param(name) => {
                (json!({"op": "param", "name": name, "args": []}), Some(Ty::List(Box::new(Ty::Str))))
            }
            ExprKind::Fold { op, list, durations } => {
                let name = match op {
                    crate::hir::FoldOp::Sum => "sum",
                    crate::hir::FoldOp::Min => "min",
                    crate::hir::FoldOp::Max => "max",
                };
                (self.op(name, &[list]).0, Some(if *durations { Ty::Duration } else { Ty::Int }))
            }
            ExprKind::DurationOf(unit, a) => {
                let (n, _) = self.walk(a);
                (json!({"op": "duration", "args": [n], "unit_nanoseconds": unit}), Some(Ty::Duration))
            }
            ExprKind::Matches(a, regex) => {
                let (s, _) = self.walk(a);
                (json!({"op": "matches", "args": [s], "pattern": regex.as_str()}), Some(Ty::Bool))
            }
            ExprKind::Reason(a) => (self.op("reason", &[a]).0, Some(Ty::Str)),
            ExprKind::Builtin(b, args) => {
                let args: Vec<&Expr> = args.iter().collect();
                let (v, tys) = self.op(b.name(), &args);
                let ty = match b {
                    crate::hir::Builtin::Flatten => match tys.into_iter().next().flatten() {
                        Some(Ty::List(inner)) => Some(*inner),
                        _ => None,
                    },
                    _ => Some(b.result()),
                };
                (v, ty)
            }
            ExprKind::BoundTo(a, layer) => {
                let node = self.op("bound_to", &[a]).0;
                let _ = layer;
                (node, Some(Ty::Bool))
            }
            ExprKind::Holds(rules, a) => {
                let (x, _) = self.walk(a);
                (json!({"op": "holds", "rules": rules, "args": [x]}), Some(Ty::Bool))
            }
            ExprKind::Failure(rules, a) => {
                let (x, _) = self.walk(a);
                (json!({"op": "failure", "rules": rules, "args": [x]}), Some(Ty::Str))
            }
            ExprKind::List(items) => {
                let items: Vec<&Expr> = items.iter().collect();
                let (v, tys) = self.op("list", &items);
                (v, tys.into_iter().flatten().next().map(|t| Ty::List(Box::new(t))))
            }
            ExprKind::Quant { every, pattern, domain, body } => {
                let (d, ty) = self.walk(domain);
                self.bind(pattern, ty.as_ref());
                let (b, _) = self.walk(body);
                let op = if *every { "every" } else { "some" };
                (json!({"op": op, "bind": Self::binds(pattern), "in": d, "body": b}), Some(Ty::Bool))
            }
            ExprKind::Comprehension { value, pattern, domain, filter } => {
                let (d, ty) = self.walk(domain);
                self.bind(pattern, ty.as_ref());
                let f = filter.as_ref().map(|f| self.walk(f).0);
                let (v, vty) = self.walk(value);
                let tree = json!({"op": "comprehension", "bind": Self::binds(pattern), "in": d, "if": f, "value": v});
                (tree, vty.map(|t| Ty::List(Box::new(t))))
            }
            ExprKind::Let { slot, value, body } => {
                let (v, ty) = self.walk(value);
                self.set(*slot, ty);
                let (b, bty) = self.walk(body);
                (json!({"op": "let", "bind": [slot], "value": v, "body": b}), bty)
            }
        }
    }
}
