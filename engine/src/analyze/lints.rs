//! Lints: warnings with codes about rules that hold for the wrong reason.
//! (`never-applies` needs the solver and is found in `search.rs`.)
//!
//! - `vacuous-every`: `every x in xs` over document things (records) that
//!   may be empty, in a rule that does not bound the size of `xs` (no
//!   `empty(xs)`, `count(xs)`, `entries(xs)`, `some _ in xs`, and no `for`
//!   over `xs`): with no entry it holds, for no reason.
//! - `entries-count`: `entries(xs)` in an order comparison (`>=`, `<`, ...),
//!   or over records that declare an identity: that is counting things, and
//!   `entries` counts duplicates; `count` counts distinct identities.
//! - `unnormalised-compare`: a string field that some rule normalises
//!   (`lower`, `trim_suffix`) is compared raw (`==`, `!=`, `in`) elsewhere:
//!   the policy itself says its values need normalising before comparison.

use std::collections::{BTreeMap, BTreeSet};

use crate::diagnostic::{PolicyDiagnostic, Severity};
use crate::hir::*;

/// A type as far as the lints follow it, with the field a string came from.
#[derive(Clone, Debug, PartialEq)]
enum T {
    Rec(RecordId),
    Str(Option<(RecordId, usize)>),
    List(Box<T>),
    Map(Box<T>, Box<T>),
    Other,
}

struct Cx<'p> {
    policy: &'p Policy,
    env: Vec<T>,
    /// What a `let` slot holds, to see through it.
    lets: BTreeMap<Slot, Expr>,
}

fn of_ty(ty: &Ty, site: Option<(RecordId, usize)>) -> T {
    match ty {
        Ty::Record(r) => T::Rec(*r),
        Ty::Str | Ty::Id => T::Str(site),
        Ty::List(t) => T::List(Box::new(of_ty(t, site))),
        Ty::Map(k, v) => T::Map(Box::new(of_ty(k, site)), Box::new(of_ty(v, site))),
        _ => T::Other,
    }
}

impl Cx<'_> {
    fn set(&mut self, slot: Slot, t: T) {
        if let Some(s) = self.env.get_mut(slot as usize) {
            *s = t;
        }
    }

    fn bind(&mut self, pattern: &PatternDef, domain: &T) {
        let (a, b) = match (domain, pattern) {
            (T::List(e), PatternDef::Entry(..)) => (T::Other, (**e).clone()),
            (T::List(e), _) => ((**e).clone(), T::Other),
            (T::Map(k, v), _) => ((**k).clone(), (**v).clone()),
            _ => (T::Other, T::Other),
        };
        match *pattern {
            PatternDef::One(x) => self.set(x, a),
            PatternDef::Entry(x, y) | PatternDef::Pair(x, y) => {
                self.set(x, a);
                self.set(y, b);
            }
        }
    }

    fn ty(&mut self, e: &Expr) -> T {
        match &e.kind {
            ExprKind::Doc(k) => T::Rec(self.policy.documents[*k as usize].record),
            ExprKind::Docs(k) => T::List(Box::new(T::Rec(self.policy.documents[*k as usize].record))),
            ExprKind::Var(s) => self.env.get(*s as usize).cloned().unwrap_or(T::Other),
            ExprKind::Field(b, i) => match self.ty(b) {
                T::Rec(r) => of_ty(&self.policy.records[r as usize].fields[*i].ty, Some((r, *i))),
                _ => T::Other,
            },
            ExprKind::MapGet(b, _) => match self.ty(b) {
                T::Map(_, v) => *v,
                _ => T::Other,
            },
            ExprKind::ListGet(b, _) => match self.ty(b) {
                T::List(v) => *v,
                _ => T::Other,
            },
            ExprKind::Distinct(x) | ExprKind::Coalesce(x, _) | ExprKind::Concat(x, _) => self.ty(x),
            ExprKind::Split(x, _) => T::List(Box::new(self.ty(x))),
            ExprKind::Lower(_) | ExprKind::TrimSuffix(..) | ExprKind::Trim(_) | ExprKind::Url(..) => T::Str(None),
            ExprKind::Let { slot, value, body } => {
                let v = self.ty(value);
                self.set(*slot, v);
                self.lets.insert(*slot, (**value).clone());
                self.ty(body)
            }
            ExprKind::Comprehension { value, pattern, domain, .. } => {
                let d = self.ty(domain);
                self.bind(pattern, &d);
                T::List(Box::new(self.ty(value)))
            }
            ExprKind::Lit(v) if matches!(v.kind, crate::value::ValKind::Str(_)) => T::Str(None),
            _ => T::Other,
        }
    }
}

/// Every sub-expression of a rule, in order, with the `for` bindings made
/// before it; `visit` sees each with the context.
fn walk(cx: &mut Cx<'_>, e: &Expr, visit: &mut dyn FnMut(&mut Cx<'_>, &Expr)) {
    visit(cx, e);
    match &e.kind {
        ExprKind::Let { slot, value, body } => {
            walk(cx, value, visit);
            let v = cx.ty(value);
            cx.set(*slot, v);
            cx.lets.insert(*slot, (**value).clone());
            walk(cx, body, visit);
        }
        ExprKind::Quant { pattern, domain, body, .. }
        | ExprKind::Comprehension { pattern, domain, value: body, .. } => {
            walk(cx, domain, visit);
            let d = cx.ty(domain);
            cx.bind(pattern, &d);
            if let ExprKind::Comprehension { filter: Some(f), .. } = &e.kind {
                walk(cx, f, visit);
            }
            walk(cx, body, visit);
        }
        ExprKind::CountBy { slot, domain, key } => {
            walk(cx, domain, visit);
            let d = cx.ty(domain);
            cx.bind(&PatternDef::One(*slot), &d);
            walk(cx, key, visit);
        }
        _ => {
            for c in children(e) {
                walk(cx, c, visit);
            }
        }
    }
}

fn children(e: &Expr) -> Vec<&Expr> {
    use ExprKind::*;
    match &e.kind {
        Field(a, _)
        | Column(a, _)
        | MatrixRow(_, a)
        | Not(a)
        | Present(a)
        | Valid(a)
        | Count(a)
        | Empty(a)
        | Pairs(a)
        | Distinct(a)
        | Entries(a)
        | Lower(a)
        | Trim(a)
        | ParseInt(a)
        | Timestamp(a)
        | Matches(a, _)
        | Reason(a)
        | BoundTo(a, _)
        | Holds(_, a)
        | Failure(_, a) => vec![a],
        MapGet(a, b)
        | ListGet(a, b)
        | And(a, b)
        | Or(a, b)
        | Compare(_, a, b)
        | Tighter(a, b)
        | In(a, b)
        | Coalesce(a, b)
        | Concat(a, b)
        | Add(a, b)
        | Sub(a, b)
        | Mul(a, b)
        | Max(a, b)
        | Min(a, b)
        | Split(a, b)
        | TrimSuffix(a, b) => vec![a, b],
        List(items) | Builtin(_, items) => items.iter().collect(),
        _ => vec![],
    }
}

/// The rule's clauses, walked with their `for` bindings.
fn each_expr(policy: &Policy, rule: &RuleDef, visit: &mut dyn FnMut(&mut Cx<'_>, &Expr)) {
    let mut cx = Cx { policy, env: vec![T::Other; rule.slots as usize], lets: BTreeMap::new() };
    for c in rule.clauses.iter() {
        match c {
            ClauseDef::For { pattern, domain, filter, .. } => {
                walk(&mut cx, domain, visit);
                let d = cx.ty(domain);
                cx.bind(pattern, &d);
                if let Some(f) = filter {
                    walk(&mut cx, f, visit);
                }
            }
            ClauseDef::Let { slot, value, .. } => {
                walk(&mut cx, value, visit);
                let v = cx.ty(value);
                cx.set(*slot, v);
                cx.lets.insert(*slot, value.clone());
            }
            ClauseDef::When { guard, .. } => walk(&mut cx, guard, visit),
            ClauseDef::Require { check, .. } => walk(&mut cx, check, visit),
        }
    }
}

/// The expression a `let` or function argument stands for, through variables.
fn resolve(cx: &Cx<'_>, e: &Expr) -> Expr {
    let mut e = e;
    for _ in 0..16 {
        match &e.kind {
            ExprKind::Var(s) => match cx.lets.get(s) {
                Some(v) => e = v,
                None => break,
            },
            ExprKind::Let { body, .. } => e = body,
            _ => break,
        }
    }
    e.clone()
}

fn warning(code: &'static str, rule: &RuleDef, message: String, help: String) -> PolicyDiagnostic {
    let mut d = PolicyDiagnostic {
        code,
        severity: Severity::Warning,
        message,
        loc: rule.loc,
        labels: Vec::new(),
        help: Some(help),
    };
    d.labels.push((rule.loc, format!("in rule `{}`", rule.id)));
    d
}

pub fn lints(policy: &Policy) -> Vec<PolicyDiagnostic> {
    let mut out = Vec::new();
    for rule in &policy.rules {
        vacuous(policy, rule, &mut out);
        entries_count(policy, rule, &mut out);
    }
    unnormalised(policy, &mut out);
    out
}

fn vacuous(policy: &Policy, rule: &RuleDef, out: &mut Vec<PolicyDiagnostic>) {
    // The collections the rule bounds: emptiness, counts, `some`, or a `for` over them.
    let mut bounded: BTreeSet<String> = BTreeSet::new();
    let mut quantified: Vec<String> = Vec::new();
    for c in rule.clauses.iter() {
        if let ClauseDef::For { domain, .. } = c {
            bounded.insert(domain.text.to_string());
        }
    }
    each_expr(policy, rule, &mut |cx, e| match &e.kind {
        ExprKind::Empty(x) | ExprKind::Count(x) | ExprKind::Entries(x) => {
            bounded.insert(x.text.to_string());
        }
        ExprKind::Quant { every: false, domain, .. } | ExprKind::CountBy { domain, .. } => {
            bounded.insert(domain.text.to_string());
        }
        ExprKind::Quant { every: true, domain, .. } => {
            let d = resolve(cx, domain);
            let literal = matches!(d.kind, ExprKind::List(ref items) if !items.is_empty())
                || matches!(d.kind, ExprKind::Domain(_));
            let things = matches!(cx.ty(domain), T::List(ref t) if matches!(**t, T::Rec(_)));
            if things && !literal {
                quantified.push(domain.text.to_string());
            }
        }
        _ => {}
    });
    for q in quantified {
        if bounded.contains(&q) {
            continue;
        }
        out.push(warning(
            "vacuous-every",
            rule,
            format!("`every` over `{q}` in `{}` holds vacuously when `{q}` is empty", rule.id),
            format!(
                "bound its size in the rule (`not empty({q})` or `count({q}) >= N`), or say why an empty `{q}` passes"
            ),
        ));
    }
}

fn entries_count(policy: &Policy, rule: &RuleDef, out: &mut Vec<PolicyDiagnostic>) {
    let mut found: Vec<String> = Vec::new();
    each_expr(policy, rule, &mut |cx, e| {
        let ExprKind::Compare(cmp, a, b) = &e.kind else { return };
        for side in [a, b] {
            let side = resolve(cx, side);
            let ExprKind::Entries(x) = &side.kind else { continue };
            let positional = matches!(resolve(cx, x).kind, ExprKind::Split(..));
            let x = x.clone();
            let identity = matches!(cx.ty(&x), T::List(ref t)
                if matches!(**t, T::Rec(r) if policy.records[r as usize].identity.is_some()));
            let ordering = !matches!(cmp, Cmp::Eq | Cmp::Ne);
            if identity || (ordering && !positional) {
                found.push(x.text.to_string());
            }
        }
    });
    for x in found {
        out.push(warning(
            "entries-count",
            rule,
            format!("`entries({x})` in `{}` counts entries, duplicates included", rule.id),
            format!("to count distinct things use `count({x})` (or `count(x in {x} by x.KEY)`); `entries` is for positional data"),
        ));
    }
}

fn unnormalised(policy: &Policy, out: &mut Vec<PolicyDiagnostic>) {
    // The string fields some rule normalises, and by which rule.
    let mut normalised: BTreeMap<(RecordId, usize), String> = BTreeMap::new();
    for rule in &policy.rules {
        each_expr(policy, rule, &mut |cx, e| {
            if let ExprKind::Lower(x) | ExprKind::TrimSuffix(x, _) | ExprKind::Trim(x) = &e.kind {
                let x = resolve(cx, x);
                if let T::Str(Some(site)) = cx.ty(&x) {
                    normalised.entry(site).or_insert_with(|| rule.id.clone());
                }
            }
        });
    }
    for rule in &policy.rules {
        let mut found: Vec<(String, (RecordId, usize))> = Vec::new();
        each_expr(policy, rule, &mut |cx, e| {
            let sides: Vec<&Expr> = match &e.kind {
                ExprKind::Compare(Cmp::Eq | Cmp::Ne, a, b) => vec![a, b],
                ExprKind::In(a, b) => vec![a, b],
                _ => return,
            };
            // A value compared with its own normal form (`url(p) == p`,
            // `trim_suffix(p, "/") == p`) tests that it is canonical: that
            // is the point, not an identity compared raw.
            let normal_of = |x: &Expr| match &x.kind {
                ExprKind::Lower(y) | ExprKind::TrimSuffix(y, _) | ExprKind::Trim(y) | ExprKind::Url(_, y) => {
                    Some(y.text.clone())
                }
                _ => None,
            };
            if let [a, b] = sides.as_slice()
                && matches!(e.kind, ExprKind::Compare(..))
                && (normal_of(a).as_ref() == Some(&b.text) || normal_of(b).as_ref() == Some(&a.text))
            {
                return;
            }
            // Comparing with the empty string tests emptiness, not identity.
            let empty = |x: &Expr| matches!(&x.kind, ExprKind::Lit(v) if matches!(&v.kind, crate::value::ValKind::Str(s) if s.is_empty()));
            if sides.iter().any(|x| empty(x)) {
                return;
            }
            for s in sides {
                let r = resolve(cx, s);
                let site = match cx.ty(&r) {
                    T::Str(Some(site)) => Some(site),
                    T::List(t) => match *t {
                        T::Str(Some(site)) => Some(site),
                        _ => None,
                    },
                    _ => None,
                };
                if let Some(site) = site
                    && normalised.contains_key(&site)
                {
                    found.push((s.text.to_string(), site));
                }
            }
        });
        for (text, (r, i)) in found {
            let def = &policy.records[r as usize];
            let by = &normalised[&(r, i)];
            out.push(warning(
                "unnormalised-compare",
                rule,
                format!("`{text}` (`{}.{}`) is compared without normalisation in `{}`", def.name, def.fields[i].name, rule.id),
                format!(
                    "`{by}` normalises `{}.{}` (`lower`, `trim_suffix`) before comparing it; compare normalised values here too",
                    def.name, def.fields[i].name
                ),
            ));
        }
    }
}
