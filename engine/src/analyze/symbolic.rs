//! Symbolic evaluation of lowered rules over the bounded deployment, in the
//! three-valued logic of `eval.rs`, which it mirrors construct by construct:
//! every boolean is an is-true and an is-false formula (unknown is neither),
//! every value a presence formula, and every collection knows whether its
//! absence is "missing" (a `for` over it does not apply) or unknown, and
//! every value whether its absence is decided (known absent: comparisons
//! with it are decided, and as a collection it is empty).

use std::collections::{BTreeMap, BTreeSet};

use super::formula::{B, Builder};
use super::model::{DocModel, identity};
use super::sym::{Atom, Kind, Sym, mux, mux_absent, same, scalar};
use crate::hir::*;

/// What a rule can do, as formulas over the deployment.
#[derive(Clone, Debug)]
pub struct RuleSym {
    /// Some subject gets the rule's declared violation (FAIL, or its declared UNKNOWN).
    pub fire: B,
    /// Some subject gets FAIL or UNKNOWN.
    pub bad: B,
    /// Some subject passes.
    pub pass: B,
    /// Some subject reaches `require` (every guard held).
    pub reach: B,
    /// Constructs encoded by a fresh, unconstrained variable (over-approximated).
    pub approximate: BTreeSet<String>,
    /// Constructs computed on each string of the pool (exact within the bounds).
    pub pooled: BTreeSet<String>,
}

#[derive(Default)]
struct Outs {
    fire: Vec<B>,
    bad: Vec<B>,
    pass: Vec<B>,
    reach: Vec<B>,
}

pub struct Ev<'a> {
    b: &'a mut Builder,
    policy: &'a Policy,
    docs: &'a [DocModel],
    env: Vec<Sym>,
    approximate: BTreeSet<String>,
    pooled: BTreeSet<String>,
}

impl<'a> Ev<'a> {
    pub fn new(b: &'a mut Builder, policy: &'a Policy, docs: &'a [DocModel]) -> Self {
        Ev { b, policy, docs, env: Vec::new(), approximate: BTreeSet::new(), pooled: BTreeSet::new() }
    }

    pub fn rule(&mut self, rule: &RuleDef) -> RuleSym {
        self.approximate.clear();
        self.pooled.clear();
        self.env = vec![Sym::unknown(); rule.slots as usize];
        let mut out = Outs::default();
        if let Some(&judged) = rule.reads.first() {
            // Another kind the rule reads and the deployment lacks is missing evidence (see `Doc`).
            let pc = self.docs[judged as usize].present;
            self.clauses(rule, 0, pc, B::F, &mut out);
        }
        out.bad.extend(out.fire.iter().copied());
        RuleSym {
            fire: self.b.or(out.fire),
            bad: self.b.or(out.bad),
            pass: self.b.or(out.pass),
            reach: self.b.or(out.reach),
            approximate: std::mem::take(&mut self.approximate),
            pooled: std::mem::take(&mut self.pooled),
        }
    }

    /// The outcomes of `rule` from clause `i` on, where `pc` holds; where
    /// `reported` holds (a `when ... else report` guard was false on the
    /// way), a FAIL or UNKNOWN is NOT APPLICABLE: it neither fires nor is bad.
    fn clauses(&mut self, rule: &RuleDef, i: usize, pc: B, reported: B, out: &mut Outs) {
        if pc == B::F {
            return;
        }
        let Some(clause) = rule.clauses.get(i) else { return };
        match clause {
            ClauseDef::For { pattern, domain, filter, .. } => {
                let d = self.eval(domain);
                // Missing or absent is not applicable; present but unreadable is missing evidence.
                let unknown =
                    self.b.and([pc, d.present.negate(), d.missing.negate(), d.decided.negate(), reported.negate()]);
                out.bad.push(unknown);
                let Some(elements) = self.elements(&d, pattern) else { return };
                let pcd = self.b.and2(pc, d.present);
                for (p, values) in elements {
                    self.bind(pattern, values);
                    let included = match filter {
                        Some(f) => {
                            let (t, fl) = self.eval(f).tf();
                            let unsure = self.b.and([pcd, p, t.negate(), fl.negate(), reported.negate()]);
                            out.bad.push(unsure);
                            self.b.and2(p, t)
                        }
                        None => p,
                    };
                    let next = self.b.and2(pcd, included);
                    self.clauses(rule, i + 1, next, reported, out);
                }
            }
            ClauseDef::Let { slot, value, .. } => {
                let v = self.eval(value);
                self.set(*slot, v);
                self.clauses(rule, i + 1, pc, reported, out);
            }
            ClauseDef::When { guard, report, .. } => {
                let (t, f) = self.eval(guard).tf();
                let unsure = self.b.and([pc, t.negate(), f.negate(), reported.negate()]);
                out.bad.push(unsure);
                let next = self.b.and2(pc, t);
                self.clauses(rule, i + 1, next, reported, out);
                if *report {
                    // A false guard that reports: the rule judges on, and what it finds is reported.
                    let next = self.b.and2(pc, f);
                    self.clauses(rule, i + 1, next, B::T, out);
                }
            }
            ClauseDef::Require { check, .. } => {
                let (t, f) = self.eval(check).tf();
                let pass = self.b.and2(pc, t);
                let fire = self.b.and([pc, f, reported.negate()]);
                let unsure = self.b.and([pc, t.negate(), f.negate(), reported.negate()]);
                out.pass.push(pass);
                out.fire.push(fire);
                out.reach.push(pc);
                out.bad.push(unsure);
            }
        }
    }

    fn set(&mut self, slot: Slot, v: Sym) {
        if let Some(s) = self.env.get_mut(slot as usize) {
            *s = v;
        }
    }

    fn bind(&mut self, pattern: &PatternDef, values: Vec<Sym>) {
        let mut values = values.into_iter();
        match *pattern {
            PatternDef::One(a) => {
                let v = values.next().unwrap_or_else(Sym::unknown);
                self.set(a, v);
            }
            PatternDef::Entry(a, b) | PatternDef::Pair(a, b) => {
                let x = values.next().unwrap_or_else(Sym::unknown);
                let y = values.next().unwrap_or_else(Sym::unknown);
                self.set(a, x);
                self.set(b, y);
            }
        }
    }

    /// The position of each entry of a list among the entries that are there.
    fn positions(&mut self, entries: &[(B, Sym)], dense: bool) -> Vec<Sym> {
        let mut out = Vec::new();
        for j in 0..entries.len() {
            if dense {
                out.push(Sym::atom(Atom::Int(j as i64)));
                continue;
            }
            let before: Vec<B> = entries[..j].iter().map(|(p, _)| *p).collect();
            let n = self.int_of_count(&before, B::T);
            out.push(n);
        }
        out
    }

    /// The elements a pattern binds over a domain, each with its presence.
    fn elements(&mut self, d: &Sym, pattern: &PatternDef) -> Option<Vec<(B, Vec<Sym>)>> {
        Some(match (&d.kind, pattern) {
            (Kind::List { entries, dense }, PatternDef::Entry(..)) => {
                let pos = self.positions(entries, *dense);
                entries.iter().zip(pos).map(|((p, v), i)| (*p, vec![i, v.clone()])).collect()
            }
            (Kind::List { entries, .. }, _) => entries.iter().map(|(p, v)| (*p, vec![v.clone()])).collect(),
            (Kind::Map(entries), PatternDef::Entry(..)) => {
                entries.iter().map(|(p, k, v)| (*p, vec![k.clone(), v.clone()])).collect()
            }
            (Kind::Map(entries), _) => entries.iter().map(|(p, k, _)| (*p, vec![k.clone()])).collect(),
            (Kind::Domain(e), _) => {
                let n = self.policy.enums[*e as usize].variants.len() as u32;
                (0..n).map(|v| (B::T, vec![Sym::atom(Atom::Enum(*e, v))])).collect()
            }
            (Kind::Pairs(pairs), _) => pairs.iter().map(|(p, a, b)| (*p, vec![a.clone(), b.clone()])).collect(),
            _ => return None,
        })
    }

    /// An integer that is the number of `xs` that hold, there when `present` holds.
    fn int_of_count(&mut self, xs: &[B], present: B) -> Sym {
        let ge = self.b.count(xs);
        let mut alts = Vec::new();
        for k in 0..ge.len() - 1 {
            let exactly = self.b.and([present, ge[k], ge[k + 1].negate()]);
            alts.push((Atom::Int(k as i64), exactly));
        }
        scalar(self.b, alts, B::F)
    }

    /// Which entries `distinct` keeps, and whether every identity is known.
    fn distinct(&mut self, entries: &[(B, Sym)]) -> (Vec<B>, B) {
        let ids: Vec<Option<Sym>> = entries.iter().map(|(_, v)| identity(self.policy, v)).collect();
        let mut known = Vec::new();
        let mut kept = Vec::new();
        for (j, (p, _)) in entries.iter().enumerate() {
            let Some(id) = &ids[j] else {
                known.push(p.negate());
                kept.push(B::F);
                continue;
            };
            known.push(self.b.or2(p.negate(), id.present));
            let mut parts = vec![*p];
            for (i, (q, _)) in entries[..j].iter().enumerate() {
                if let Some(other) = &ids[i] {
                    let eq = same(self.b, id, other);
                    let dup = self.b.and2(*q, eq);
                    parts.push(dup.negate());
                }
            }
            kept.push(self.b.and(parts));
        }
        let known = self.b.and(known);
        (kept, known)
    }

    fn approx(&mut self, what: &str) -> Sym {
        self.approximate.insert(what.to_string());
        let t = self.b.fresh_b();
        let f = self.b.fresh_b();
        self.b.clause(&[t.negate(), f.negate()]);
        Sym::truth(self.b, t, f)
    }

    /// What is read through a value that is not of the shape read: absent
    /// as the value is when it is not there, else unknown (as `eval`).
    fn below(&mut self, parent: &Sym) -> Sym {
        let (missing, decided) = parent.lack(self.b);
        Sym::absent(missing, decided)
    }

    /// Absent in, absent out: a result that is unknown when an operand is
    /// unknown, else known absent when one is; its missing and decided formulas.
    fn absent_in_out(&mut self, xs: &[&Sym]) -> (B, B) {
        let mut missing = Vec::new();
        let mut earlier_known = Vec::new();
        let mut any_decided = Vec::new();
        for x in xs {
            // Unknown: neither there nor known absent.
            let unknown = self.b.and2(x.present.negate(), x.decided.negate());
            let mut first = vec![unknown, x.missing];
            first.extend(earlier_known.iter().copied());
            missing.push(self.b.and(first));
            earlier_known.push(unknown.negate());
            any_decided.push(x.decided);
        }
        let all_known = self.b.and(earlier_known);
        let some_decided = self.b.or(any_decided);
        let decided = self.b.and2(all_known, some_decided);
        missing.push(decided);
        (self.b.or(missing), decided)
    }

    /// Order comparison of two scalars: is-true and is-false for `keep`.
    fn ordered(&mut self, x: &Sym, y: &Sym, keep: impl Fn(std::cmp::Ordering) -> bool) -> (B, B) {
        let mut t = Vec::new();
        let mut f = Vec::new();
        for (a, la) in x.alts() {
            for (c, lc) in y.alts() {
                if let Some(o) = a.order(c) {
                    let both = self.b.and2(*la, *lc);
                    if keep(o) { t.push(both) } else { f.push(both) }
                }
            }
        }
        (self.b.or(t), self.b.or(f))
    }

    /// A string operation computed on each string the value may be.
    /// `op` gives `Some(Some(v))` for a value, `Some(None)` for a known
    /// absence (a URL without a host), `None` for missing evidence (a string
    /// that is no integer), as `eval` reads each.
    fn per_string(&mut self, x: &Sym, what: &str, op: impl Fn(&str) -> Option<Option<Atom>>) -> Sym {
        self.pooled.insert(what.to_string());
        let mut alts = Vec::new();
        let (mut missing, mut decided) = (Vec::new(), Vec::new());
        for (a, l) in x.alts() {
            if let Atom::Str(s) = a {
                match op(s) {
                    Some(Some(r)) => alts.push((r, *l)),
                    Some(None) => {
                        missing.push(*l);
                        decided.push(*l);
                    }
                    None => missing.push(*l),
                }
            }
        }
        let (m, d) = x.lack(self.b);
        missing.push(m);
        decided.push(d);
        let (missing, decided) = (self.b.or(missing), self.b.or(decided));
        Sym { decided, ..scalar(self.b, alts, missing) }
    }

    fn constant_str(&self, x: &Sym) -> Option<String> {
        match x.alts() {
            [(Atom::Str(s), B::T)] => Some(s.to_string()),
            _ => None,
        }
    }

    pub fn eval(&mut self, e: &Expr) -> Sym {
        match &e.kind {
            ExprKind::Lit(v) => Sym::of_val(v),
            ExprKind::Var(s) => self.env.get(*s as usize).cloned().unwrap_or_else(Sym::unknown),
            ExprKind::Doc(k) => {
                // Judged without that document: what the rule needs of it is missing.
                let d = &self.docs[*k as usize];
                Sym { present: d.present, missing: d.present.negate(), decided: B::F, kind: d.sym.kind.clone() }
            }
            ExprKind::Docs(k) => {
                // No document of the kind: every document of it is missing evidence (as `eval` reads it).
                let d = &self.docs[*k as usize];
                let doc = Sym { present: d.present, missing: B::F, decided: B::F, kind: d.sym.kind.clone() };
                let list = Kind::List { entries: vec![(d.present, doc)], dense: true };
                Sym { present: d.present, missing: d.present.negate(), decided: B::F, kind: list }
            }
            ExprKind::Matrix(_) => Sym::with(B::T, Kind::Opaque),
            ExprKind::Domain(en) => Sym::with(B::T, Kind::Domain(*en)),
            ExprKind::Field(base, i) => {
                let b = self.eval(base);
                match &b.kind {
                    Kind::Record(_, fields) => {
                        let f = fields.get(*i).cloned().unwrap_or_else(Sym::unknown);
                        let present = self.b.and2(b.present, f.present);
                        let here = self.b.and2(b.present, f.missing);
                        let above = self.b.and2(b.present.negate(), b.missing);
                        let missing = self.b.or2(here, above);
                        let here = self.b.and2(b.present, f.decided);
                        let above = self.b.and2(b.present.negate(), b.decided);
                        let decided = self.b.or2(here, above);
                        Sym { present, missing, decided, kind: f.kind }
                    }
                    _ => self.below(&b),
                }
            }
            ExprKind::Column(row, i) => {
                let r = self.eval(row);
                match &r.kind {
                    Kind::Row(m, variants) => {
                        let def = &self.policy.matrices[*m as usize];
                        let mut alts = Vec::new();
                        for (v, l) in variants {
                            if let Some(a) =
                                def.cells.get(*v as usize).and_then(|c| c.get(*i)).and_then(super::model::atom_of)
                            {
                                alts.push((a, *l));
                            }
                        }
                        // A row of an absent key is absent, and so is its cell (as `eval`).
                        let (missing, decided) = r.lack(self.b);
                        Sym { decided, ..scalar(self.b, alts, missing) }
                    }
                    _ => self.below(&r),
                }
            }
            ExprKind::MatrixRow(m, key) => {
                let k = self.eval(key);
                let variants: Vec<(u32, B)> = k
                    .alts()
                    .iter()
                    .filter_map(|(a, l)| if let Atom::Enum(_, v) = a { Some((*v, *l)) } else { None })
                    .collect();
                let present = self.b.or(variants.iter().map(|(_, l)| *l).collect::<Vec<_>>());
                let (missing, decided) = k.lack(self.b);
                Sym { present, missing, decided, kind: Kind::Row(*m, variants) }
            }
            ExprKind::MapGet(base, key) => {
                let b = self.eval(base);
                let k = self.eval(key);
                let Kind::Map(entries) = &b.kind else { return self.below(&b) };
                let mut cases = Vec::new();
                let mut earlier = Vec::new();
                for (p, ek, v) in entries {
                    let eq = same(self.b, ek, &k);
                    let hit = self.b.and2(*p, eq);
                    let mut first = vec![hit];
                    first.extend(earlier.iter().map(|x: &B| x.negate()));
                    let first = self.b.and(first);
                    earlier.push(hit);
                    cases.push((first, v.clone()));
                }
                let found = self.b.or(earlier);
                // Not found under a key that is there: known absent. Under a
                // key that is not: as the key is. In a map that is not: as the map is.
                let here = self.b.and([b.present, found.negate(), k.present]);
                let (key_missing, key_decided) = k.lack(self.b);
                let (map_missing, map_decided) = b.lack(self.b);
                let key_missing = self.b.and2(b.present, key_missing);
                let key_decided = self.b.and2(b.present, key_decided);
                let missing = self.b.or([here, key_missing, map_missing]);
                let decided = self.b.or([here, key_decided, map_decided]);
                mux_absent(self.b, &cases, missing, decided)
            }
            ExprKind::ListGet(list, index) => {
                let l = self.eval(list);
                let i = self.eval(index);
                let Kind::List { entries, dense } = &l.kind else { return self.below(&l) };
                let pos = self.positions(entries, *dense);
                let mut cases = Vec::new();
                let mut hits = Vec::new();
                for ((p, v), at) in entries.iter().zip(pos) {
                    let eq = same(self.b, &at, &i);
                    let hit = self.b.and2(*p, eq);
                    hits.push(hit);
                    cases.push((hit, v.clone()));
                }
                let found = self.b.or(hits);
                // Past the end of a list that is there: known absent; else
                // absent in, absent out (as `eval`).
                let here = self.b.and([l.present, i.present, found.negate()]);
                let (m, d) = self.absent_in_out(&[&l, &i]);
                let missing = self.b.or2(here, m);
                let decided = self.b.or2(here, d);
                mux_absent(self.b, &cases, missing, decided)
            }
            ExprKind::Not(x) => {
                let (t, f) = self.eval(x).tf();
                Sym::truth(self.b, f, t)
            }
            ExprKind::And(a, c) => {
                let (at, af) = self.eval(a).tf();
                let (ct, cf) = self.eval(c).tf();
                let t = self.b.and2(at, ct);
                let f = self.b.or2(af, cf);
                Sym::truth(self.b, t, f)
            }
            ExprKind::Or(a, c) => {
                let (at, af) = self.eval(a).tf();
                let (ct, cf) = self.eval(c).tf();
                let t = self.b.or2(at, ct);
                let f = self.b.and2(af, cf);
                Sym::truth(self.b, t, f)
            }
            ExprKind::Compare(cmp, a, c) => {
                let (x, y) = (self.eval(a), self.eval(c));
                match cmp {
                    Cmp::Eq | Cmp::Ne => {
                        let scalars = matches!(x.kind, Kind::Scalar(_) | Kind::Opaque)
                            && matches!(y.kind, Kind::Scalar(_) | Kind::Opaque);
                        if !scalars {
                            return self.approx("equality of records or lists");
                        }
                        let eq = same(self.b, &x, &y);
                        // A known absence equals nothing.
                        let ne = self.b.and([x.present, y.present, eq.negate()]);
                        let ne = self.b.or([ne, x.decided, y.decided]);
                        if *cmp == Cmp::Eq { Sym::truth(self.b, eq, ne) } else { Sym::truth(self.b, ne, eq) }
                    }
                    _ => {
                        let keep = *cmp;
                        let (t, f) = self.ordered(&x, &y, move |o| match keep {
                            Cmp::Lt => o.is_lt(),
                            Cmp::Le => o.is_le(),
                            Cmp::Gt => o.is_gt(),
                            _ => o.is_ge(),
                        });
                        // A known absence is neither less nor more than anything.
                        let f = self.b.or([f, x.decided, y.decided]);
                        Sym::truth(self.b, t, f)
                    }
                }
            }
            ExprKind::Tighter(a, c) => {
                let (x, y) = (self.eval(a), self.eval(c));
                let (t, f) = self.ordered(&x, &y, |o| o.is_lt());
                let f = self.b.or([f, x.decided, y.decided]);
                Sym::truth(self.b, t, f)
            }
            ExprKind::In(x, coll) => {
                let v = self.eval(x);
                let c = self.eval(coll);
                let items: Vec<(B, Sym)> = match &c.kind {
                    Kind::List { entries, .. } => entries.clone(),
                    Kind::Map(entries) => entries.iter().map(|(p, k, _)| (*p, k.clone())).collect(),
                    Kind::Domain(en) => {
                        let t = self.b.or(v
                            .alts()
                            .iter()
                            .filter(|(a, _)| matches!(a, Atom::Enum(f, _) if f == en))
                            .map(|(_, l)| *l)
                            .collect::<Vec<_>>());
                        return Sym::truth(self.b, t, v.decided);
                    }
                    _ => {
                        // An absence is in nothing; an absent collection holds nothing.
                        let f = self.b.and2(c.decided, v.present);
                        let f = self.b.or2(f, v.decided);
                        return Sym::truth(self.b, B::F, f);
                    }
                };
                if items.iter().any(|(_, i)| !matches!(i.kind, Kind::Scalar(_) | Kind::Opaque)) {
                    return self.approx("membership of records or lists");
                }
                let mut hits = Vec::new();
                let mut unsure = Vec::new();
                for (p, item) in &items {
                    let eq = same(self.b, item, &v);
                    hits.push(self.b.and2(*p, eq));
                    let both = self.b.and2(item.present, v.present);
                    unsure.push(self.b.and2(*p, both.negate()));
                }
                let hit = self.b.or(hits);
                let t = self.b.and2(c.present, hit);
                let unsure = self.b.or(unsure);
                let f = self.b.and([c.present, v.present, hit.negate(), unsure.negate()]);
                // An absence is in nothing; an absent collection holds nothing.
                let none = self.b.and2(c.decided, v.present);
                let f = self.b.or([f, none, v.decided]);
                let t = self.b.and2(t, v.decided.negate());
                Sym::truth(self.b, t, f)
            }
            ExprKind::Coalesce(a, c) => {
                let x = self.eval(a);
                if x.present == B::T {
                    return x;
                }
                let y = self.eval(c);
                let p = x.present;
                mux(self.b, &[(p, x), (p.negate(), y)], B::F)
            }
            ExprKind::Concat(a, c) => {
                let (x, y) = (self.eval(a), self.eval(c));
                // An absent list holds nothing (as `eval`).
                let there = |b: &mut Builder, s: &Sym| b.or2(s.present, s.decided);
                let none = Kind::List { entries: Vec::new(), dense: true };
                let xk = if matches!(x.kind, Kind::List { .. }) { &x.kind } else { &none };
                let yk = if matches!(y.kind, Kind::List { .. }) { &y.kind } else { &none };
                match (xk, yk) {
                    (Kind::List { entries: p, dense: dp }, Kind::List { entries: q, dense: dq }) => {
                        let (xp, yp) = (there(self.b, &x), there(self.b, &y));
                        let present = self.b.and2(xp, yp);
                        let dense = *dp && *dq && p.iter().all(|(l, _)| *l == B::T);
                        let mut entries = Vec::new();
                        for (l, v) in p.iter().chain(q.iter()) {
                            entries.push((self.b.and2(present, *l), v.clone()));
                        }
                        Sym::with(present, Kind::List { entries, dense })
                    }
                    _ => Sym::unknown(),
                }
            }
            ExprKind::Add(a, c) | ExprKind::Sub(a, c) | ExprKind::Mul(a, c) => {
                let (x, y) = (self.eval(a), self.eval(c));
                let (missing, decided) = self.absent_in_out(&[&x, &y]);
                let mut alts = Vec::new();
                for (p, lp) in x.alts() {
                    for (q, lq) in y.alts() {
                        // The evaluator's own arithmetic, on each pair of alternatives.
                        if let Some(r) = Atom::of(&crate::eval::arithmetic(&e.kind, &p.to_val(), &q.to_val())) {
                            let both = self.b.and2(*lp, *lq);
                            alts.push((r, both));
                        }
                    }
                }
                Sym { decided, ..scalar(self.b, alts, missing) }
            }
            // The model's documents are well-typed: a value there is of its type.
            ExprKind::Present(x) | ExprKind::Valid(x) => {
                let v = self.eval(x);
                Sym::truth(self.b, v.present, v.present.negate())
            }
            ExprKind::Count(x) => {
                let c = self.eval(x);
                let missing = self.b.and2(c.present.negate(), c.missing);
                // An absent collection counts 0 (its entries are not there).
                let there = self.b.or2(c.present, c.decided);
                let missing = self.b.and2(missing, c.decided.negate());
                match &c.kind {
                    Kind::List { entries, .. } => {
                        let (kept, known) = self.distinct(entries);
                        let present = self.b.and2(c.present, known);
                        let present = self.b.or2(present, c.decided);
                        Sym { missing, ..self.int_of_count(&kept, present) }
                    }
                    Kind::Map(entries) => {
                        let ps: Vec<B> = entries.iter().map(|(p, _, _)| *p).collect();
                        Sym { missing, ..self.int_of_count(&ps, there) }
                    }
                    Kind::Domain(en) => Sym::atom(Atom::Int(self.policy.enums[*en as usize].variants.len() as i64)),
                    _ => mux(self.b, &[(c.decided, Sym::atom(Atom::Int(0)))], missing),
                }
            }
            ExprKind::CountBy { slot, domain, key } => {
                let d = self.eval(domain);
                let Kind::List { entries, .. } = &d.kind else {
                    return mux(self.b, &[(d.decided, Sym::atom(Atom::Int(0)))], B::F);
                };
                let mut known = Vec::new();
                let mut used: BTreeMap<Atom, Vec<B>> = BTreeMap::new();
                for (p, v) in entries.clone() {
                    self.set(*slot, v);
                    let k = self.eval(key);
                    let ok = matches!(k.kind, Kind::Scalar(_));
                    let k_present = if ok { k.present } else { B::F };
                    known.push(self.b.or2(p.negate(), k_present));
                    for (a, l) in k.alts() {
                        let u = self.b.and2(p, *l);
                        used.entry(a.clone()).or_default().push(u);
                    }
                }
                let mut flags = Vec::new();
                for (_, us) in used {
                    flags.push(self.b.or(us));
                }
                let there = self.b.or2(d.present, d.decided);
                known.push(there);
                let present = self.b.and(known);
                self.int_of_count(&flags, present)
            }
            ExprKind::Empty(x) => {
                let c = self.eval(x);
                let ps: Vec<B> = match &c.kind {
                    Kind::List { entries, .. } => entries.iter().map(|(p, _)| *p).collect(),
                    Kind::Map(entries) => entries.iter().map(|(p, _, _)| *p).collect(),
                    _ if c.decided != B::F => Vec::new(),
                    _ => return c,
                };
                let any = self.b.or(ps);
                // An absent collection is empty.
                let there = self.b.or2(c.present, c.decided);
                let t = self.b.and2(there, any.negate());
                let f = self.b.and2(c.present, any);
                let missing = self.b.and2(c.present.negate(), c.missing);
                Sym { missing, ..Sym::truth(self.b, t, f) }
            }
            ExprKind::Max(a, c) | ExprKind::Min(a, c) => {
                let (x, y) = (self.eval(a), self.eval(c));
                let (missing, decided) = self.absent_in_out(&[&x, &y]);
                let is_max = matches!(e.kind, ExprKind::Max(..));
                let mut alts = Vec::new();
                for (p, lp) in x.alts() {
                    for (q, lq) in y.alts() {
                        if let Some(o) = p.order(q) {
                            let take_x = if is_max { o.is_ge() } else { o.is_le() };
                            let both = self.b.and2(*lp, *lq);
                            alts.push((if take_x { p.clone() } else { q.clone() }, both));
                        }
                    }
                }
                Sym { decided, ..scalar(self.b, alts, missing) }
            }
            ExprKind::Pairs(x) => {
                let c = self.eval(x);
                let Kind::List { entries, .. } = &c.kind else { return c };
                let (kept, known) = self.distinct(entries);
                let present = self.b.and2(c.present, known);
                // The pairs of an absent list: none.
                let present = self.b.or2(present, c.decided);
                let missing = self.b.and([c.present.negate(), c.missing, c.decided.negate()]);
                let mut pairs = Vec::new();
                for i in 0..entries.len() {
                    for j in i + 1..entries.len() {
                        let p = self.b.and([present, kept[i], kept[j]]);
                        if p != B::F {
                            pairs.push((p, entries[i].1.clone(), entries[j].1.clone()));
                        }
                    }
                }
                Sym { present, missing, decided: B::F, kind: Kind::Pairs(pairs) }
            }
            ExprKind::Distinct(x) => {
                let c = self.eval(x);
                let Kind::List { entries, .. } = &c.kind else { return c };
                let (kept, known) = self.distinct(entries);
                let present = self.b.and2(c.present, known);
                let (missing, decided) = c.lack(self.b);
                let mut out = Vec::new();
                for (k, (_, v)) in kept.iter().zip(entries) {
                    let p = self.b.and2(present, *k);
                    out.push((p, v.clone()));
                }
                Sym { present, missing, decided, kind: Kind::List { entries: out, dense: false } }
            }
            ExprKind::Entries(x) => {
                let c = self.eval(x);
                let Kind::List { entries, .. } = &c.kind else {
                    return mux(self.b, &[(c.decided, Sym::atom(Atom::Int(0)))], c.missing);
                };
                let ps: Vec<B> = entries.iter().map(|(p, _)| *p).collect();
                let missing = self.b.and([c.present.negate(), c.missing, c.decided.negate()]);
                // An absent list has no entries.
                let there = self.b.or2(c.present, c.decided);
                Sym { missing, ..self.int_of_count(&ps, there) }
            }
            ExprKind::Split(s, sep) => {
                let v = self.eval(s);
                let p = self.eval(sep);
                let Some(sep) = self.constant_str(&p).filter(|s| !s.is_empty()) else {
                    self.approximate.insert("`split` by a computed separator".into());
                    return Sym::unknown();
                };
                self.pooled.insert("split".into());
                let parts: Vec<(Vec<&str>, B)> = v
                    .alts()
                    .iter()
                    .filter_map(
                        |(a, l)| if let Atom::Str(s) = a { Some((s.split(sep.as_str()).collect(), *l)) } else { None },
                    )
                    .collect();
                let n = parts.iter().map(|(p, _)| p.len()).max().unwrap_or(0);
                let mut entries = Vec::new();
                for j in 0..n {
                    let mut ps = Vec::new();
                    let mut alts = Vec::new();
                    for (ss, l) in &parts {
                        if let Some(part) = ss.get(j) {
                            ps.push(*l);
                            alts.push((Atom::Str((*part).into()), *l));
                        }
                    }
                    let p = self.b.or(ps);
                    entries.push((p, scalar(self.b, alts, B::F)));
                }
                let present = self.b.or(parts.iter().map(|(_, l)| *l).collect::<Vec<_>>());
                let (missing, decided) = v.lack(self.b);
                Sym { present, missing, decided, kind: Kind::List { entries, dense: true } }
            }
            ExprKind::TrimSuffix(s, suffix) => {
                let v = self.eval(s);
                let p = self.eval(suffix);
                let Some(suffix) = self.constant_str(&p) else {
                    return self.approx("`trim_suffix` by a computed suffix");
                };
                self.per_string(&v, "trim_suffix", |s| {
                    Some(Some(Atom::Str(s.strip_suffix(suffix.as_str()).unwrap_or(s).into())))
                })
            }
            ExprKind::Lower(x) => {
                let v = self.eval(x);
                self.per_string(&v, "lower", |s| Some(Some(Atom::Str(s.to_lowercase().into()))))
            }
            ExprKind::Trim(x) => {
                let v = self.eval(x);
                self.per_string(&v, "trim", |s| Some(Some(Atom::Str(s.trim().into()))))
            }
            ExprKind::Url(part, x) => {
                let v = self.eval(x);
                let part = *part;
                self.per_string(&v, part.name(), |s| {
                    crate::url::url_part(s, part).ok().map(|u| u.map(|u| Atom::Str(u.into())))
                })
            }
            ExprKind::ParseInt(x) => {
                let v = self.eval(x);
                self.per_string(&v, "int", |s| s.parse::<i64>().ok().map(|i| Some(Atom::Int(i))))
            }
            ExprKind::Timestamp(x) => {
                let v = self.eval(x);
                self.per_string(&v, "timestamp", |s| crate::time::rfc3339_nanos(s).map(|t| Some(Atom::Time(t))))
            }
            ExprKind::Fold { op, list, .. } => {
                self.eval(list);
                let name = match op {
                    FoldOp::Sum => "sum",
                    FoldOp::Min => "min",
                    FoldOp::Max => "max",
                };
                self.approx(&format!("`{name}` over a list (not encoded: its result is unconstrained)"))
            }
            ExprKind::Now => {
                self.approx("`now()` (the time of the check is an input of the check, not of the document)")
            }
            ExprKind::Param(name) => {
                self.approx(&format!("`param(\"{name}\")` (a parameter of the invocation, not of the document)"))
            }
            ExprKind::DurationOf(unit, x) => {
                let v = self.eval(x);
                let alts: Vec<(Atom, B)> = v
                    .alts()
                    .iter()
                    .filter_map(|(a, l)| match a {
                        Atom::Int(n) => Some((Atom::Duration(i128::from(*n) * i128::from(*unit)), *l)),
                        _ => None,
                    })
                    .collect();
                let (missing, decided) = v.lack(self.b);
                Sym { missing, decided, ..scalar(self.b, alts, B::F) }
            }
            ExprKind::Matches(x, re) => {
                let v = self.eval(x);
                self.pooled.insert("matches".into());
                let mut t = Vec::new();
                let mut f = Vec::new();
                for (a, l) in v.alts() {
                    // A pattern that no longer compiles decides neither way: unknown.
                    if let Atom::Str(s) = a {
                        match re.is_match(s) {
                            Some(true) => t.push(*l),
                            Some(false) => f.push(*l),
                            None => {}
                        }
                    }
                }
                // An absent string matches nothing.
                f.push(v.decided);
                let (t, f) = (self.b.or(t), self.b.or(f));
                Sym::truth(self.b, t, f)
            }
            ExprKind::BoundTo(x, _) => {
                self.eval(x);
                self.approx("`bound_to` (it reads how the invocation bound the documents)")
            }
            ExprKind::Reason(x) => {
                self.eval(x);
                self.approximate.insert("`reason`".into());
                Sym::atom(Atom::Str("?".into()))
            }
            ExprKind::Holds(_, x) => {
                self.eval(x);
                self.approx("`holds` (it reads the findings of other rules)")
            }
            ExprKind::Failure(_, x) => {
                self.eval(x);
                self.approximate.insert("`failure`".into());
                Sym::atom(Atom::Str("?".into()))
            }
            ExprKind::Builtin(Builtin::Flatten, args) if args.len() == 1 => {
                // The entries of every list in order; an entry that is not there makes the whole not there (as `eval`).
                let x = self.eval(&args[0]);
                let Kind::List { entries, .. } = &x.kind else {
                    return self.approx("`flatten` of a list it cannot follow");
                };
                let mut present = x.present;
                let (mut missing, decided) = x.lack(self.b);
                let mut out = Vec::new();
                for (p, inner) in entries {
                    let Kind::List { entries: items, .. } = &inner.kind else {
                        return self.approx("`flatten` of entries it cannot follow");
                    };
                    // An absent entry holds nothing; an unknown one makes the whole unknown.
                    let ok = self.b.or([p.negate(), inner.present, inner.decided]);
                    present = self.b.and2(present, ok);
                    let gone = self.b.and([*p, inner.present.negate(), inner.decided.negate(), inner.missing]);
                    missing = self.b.or2(missing, gone);
                    for (q, v) in items {
                        out.push((self.b.and2(*p, *q), v.clone()));
                    }
                }
                let entries = out.into_iter().map(|(l, v)| (self.b.and2(present, l), v)).collect();
                Sym { present, missing, decided, kind: Kind::List { entries, dense: false } }
            }
            ExprKind::Builtin(b, args) => {
                for a in args {
                    self.eval(a);
                }
                self.approx(&format!("`{}` (not encoded: its result is unconstrained)", b.name()))
            }
            ExprKind::List(items) => {
                let entries = items.iter().map(|i| (B::T, self.eval(i))).collect();
                Sym::with(B::T, Kind::List { entries, dense: true })
            }
            ExprKind::Quant { every, pattern, domain, body } => {
                let d = self.eval(domain);
                let missing = self.b.and2(d.present.negate(), d.missing);
                // Over an absent collection as over an empty one.
                let Some(elements) = self.elements(&d, pattern) else {
                    let (t, f) = if *every { (d.decided, B::F) } else { (B::F, d.decided) };
                    return Sym::truth(self.b, t, f);
                };
                let mut ts = Vec::new();
                let mut fs = Vec::new();
                for (p, values) in elements {
                    self.bind(pattern, values);
                    let (t, f) = self.eval(body).tf();
                    if *every {
                        ts.push(self.b.or2(p.negate(), t));
                        fs.push(self.b.and2(p, f));
                    } else {
                        ts.push(self.b.and2(p, t));
                        fs.push(self.b.or2(p.negate(), f));
                    }
                }
                let (t, f) = if *every { (self.b.and(ts), self.b.or(fs)) } else { (self.b.or(ts), self.b.and(fs)) };
                let t = self.b.and2(d.present, t);
                let f = self.b.and2(d.present, f);
                let (t, f) = if *every { (self.b.or2(t, d.decided), f) } else { (t, self.b.or2(f, d.decided)) };
                Sym { missing, ..Sym::truth(self.b, t, f) }
            }
            ExprKind::Comprehension { value, pattern, domain, filter } => {
                let d = self.eval(domain);
                let missing = self.b.and2(d.present.negate(), d.missing);
                let dense = filter.is_none() && matches!(d.kind, Kind::List { dense: true, .. });
                let Some(elements) = self.elements(&d, pattern) else {
                    // Over an absent collection: `[]`.
                    let none = Sym::with(B::T, Kind::List { entries: Vec::new(), dense: true });
                    return mux(self.b, &[(d.decided, none)], missing);
                };
                let mut unsure = Vec::new();
                let mut raw = Vec::new();
                for (p, values) in elements {
                    self.bind(pattern, values);
                    let keep = match filter {
                        Some(f) => {
                            let (t, fl) = self.eval(f).tf();
                            unsure.push(self.b.and([p, t.negate(), fl.negate()]));
                            self.b.and2(p, t)
                        }
                        None => p,
                    };
                    let v = self.eval(value);
                    raw.push((keep, v));
                }
                let unsure = self.b.or(unsure);
                let present = self.b.and2(d.present, unsure.negate());
                // Over an absent collection: `[]` (its elements are not there).
                let present = self.b.or2(present, d.decided);
                let missing = self.b.and2(missing, d.decided.negate());
                let mut entries = Vec::new();
                for (k, v) in raw {
                    entries.push((self.b.and2(present, k), v));
                }
                Sym { present, missing, decided: B::F, kind: Kind::List { entries, dense } }
            }
            ExprKind::Let { slot, value, body } => {
                let v = self.eval(value);
                self.set(*slot, v);
                self.eval(body)
            }
        }
    }
}
