//! Symbolic values: what a value of the evaluator is, as formulas over the
//! bounded document. A scalar is a set of alternatives, each guarded by a
//! formula (at most one holds; none holds when the value is absent).

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::sync::Arc;

use super::formula::{B, Builder};
use crate::hir::{EnumId, MatrixId, RecordId};
use crate::value::{Absence, Origin, Val, ValKind};

/// The entries of a list: presence and value.
type Entries = Vec<(B, Sym)>;
/// The entries of a map or pairs: presence, key (or first), value (or second).
type KeyedEntries = Vec<(B, Sym, Sym)>;

/// A concrete scalar a symbolic scalar may take.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Atom {
    Bool(bool),
    Int(i64),
    Str(Arc<str>),
    Enum(EnumId, u32),
    /// An instant, in nanoseconds since the epoch.
    Time(i128),
    /// A duration, in nanoseconds.
    Duration(i128),
}

impl Atom {
    /// The atom as a value of the evaluator.
    pub fn to_val(&self) -> Val {
        Val::computed(match self {
            Atom::Bool(x) => ValKind::Bool(*x),
            Atom::Int(x) => ValKind::Int(*x),
            Atom::Str(x) => ValKind::Str(x.clone()),
            Atom::Enum(e, x) => ValKind::Enum(*e, *x),
            Atom::Time(x) => ValKind::Time((*x).into()),
            Atom::Duration(x) => ValKind::Duration((*x).into()),
        })
    }

    /// A scalar value of the evaluator as an atom.
    pub fn of(v: &Val) -> Option<Atom> {
        Some(match &v.kind {
            ValKind::Bool(x) => Atom::Bool(*x),
            ValKind::Int(x) => Atom::Int(*x),
            ValKind::Str(x) => Atom::Str(x.clone()),
            ValKind::Enum(e, x) => Atom::Enum(*e, *x),
            ValKind::Time(x) => Atom::Time(x.get()),
            ValKind::Duration(x) => Atom::Duration(x.get()),
            _ => return None,
        })
    }

    /// Order of two atoms of one ordered kind, as `eval::order` defines it.
    pub fn order(&self, other: &Atom) -> Option<Ordering> {
        match (self, other) {
            (Atom::Int(a), Atom::Int(b)) => Some(a.cmp(b)),
            (Atom::Time(a), Atom::Time(b)) | (Atom::Duration(a), Atom::Duration(b)) => Some(a.cmp(b)),
            (Atom::Enum(e, a), Atom::Enum(f, b)) if e == f => Some(a.cmp(b)),
            _ => None,
        }
    }
}

/// A symbolic value: when it is there, whether its absence is "missing"
/// (a `for` over it does not apply, as opposed to unknown), whether it is
/// decided (known absent: comparisons with it are decided, as a collection
/// it is empty; decided implies missing), and what it is.
#[derive(Clone, Debug)]
pub struct Sym {
    pub present: B,
    pub missing: B,
    pub decided: B,
    pub kind: Kind,
}

#[derive(Clone, Debug)]
pub enum Kind {
    Scalar(Vec<(Atom, B)>),
    Record(RecordId, Vec<Sym>),
    /// Entries with their presence; `dense` when entry `i` is at index `i`.
    List {
        entries: Vec<(B, Sym)>,
        dense: bool,
    },
    /// Entries `(present, key, value)`.
    Map(Vec<(B, Sym, Sym)>),
    /// A matrix row, its key a variant of the matrix's enumeration.
    Row(MatrixId, Vec<(u32, B)>),
    Domain(EnumId),
    Pairs(Vec<(B, Sym, Sym)>),
    /// A value of no shape the analysis follows.
    Opaque,
}

impl Sym {
    /// Not there: missing when `missing` holds, known absent when `decided` does.
    pub fn absent(missing: B, decided: B) -> Sym {
        Sym { present: B::F, missing, decided, kind: Kind::Opaque }
    }

    pub fn unknown() -> Sym {
        Sym::absent(B::F, B::F)
    }

    pub fn atom(a: Atom) -> Sym {
        Sym { present: B::T, missing: B::F, decided: B::F, kind: Kind::Scalar(vec![(a, B::T)]) }
    }

    pub fn with(present: B, kind: Kind) -> Sym {
        Sym { present, missing: B::F, decided: B::F, kind }
    }

    /// A three-valued boolean from its is-true and is-false formulas.
    pub fn truth(b: &mut Builder, t: B, f: B) -> Sym {
        let present = b.or2(t, f);
        let alts = vec![(Atom::Bool(true), t), (Atom::Bool(false), f)];
        Sym { present, missing: B::F, decided: B::F, kind: Kind::Scalar(alts) }
    }

    /// Absent in the way `self` is, when it is not there: its missing and
    /// decided formulas, each under `¬present`.
    pub fn lack(&self, b: &mut Builder) -> (B, B) {
        let gone = self.present.negate();
        (b.and2(gone, self.missing), b.and2(gone, self.decided))
    }

    /// A value of the policy (a literal, a matrix cell, a default).
    pub fn of_val(v: &Val) -> Sym {
        let atom = match &v.kind {
            ValKind::Bool(x) => Some(Atom::Bool(*x)),
            ValKind::Int(x) => Some(Atom::Int(*x)),
            ValKind::Str(x) | ValKind::Id(x) => Some(Atom::Str(x.clone())),
            ValKind::Enum(e, x) => Some(Atom::Enum(*e, *x)),
            ValKind::Time(x) => Some(Atom::Time(x.get())),
            ValKind::Duration(x) => Some(Atom::Duration(x.get())),
            _ => None,
        };
        if let Some(a) = atom {
            return Sym::atom(a);
        }
        match &v.kind {
            ValKind::List(items) => Sym::with(
                B::T,
                Kind::List { entries: items.iter().map(|i| (B::T, Sym::of_val(i))).collect(), dense: true },
            ),
            ValKind::Absent(why) => Sym::absent(
                B::constant(matches!(v.origin, Origin::Missing(_)) || *why == Absence::Known),
                B::constant(*why == Absence::Known),
            ),
            ValKind::Domain(e) => Sym::with(B::T, Kind::Domain(*e)),
            _ => Sym::with(B::T, Kind::Opaque),
        }
    }

    pub fn alts(&self) -> &[(Atom, B)] {
        match &self.kind {
            Kind::Scalar(a) => a,
            _ => &[],
        }
    }

    /// The formula that the scalar is `a`.
    pub fn is(&self, a: &Atom) -> B {
        self.alts().iter().find(|(x, _)| x == a).map_or(B::F, |(_, l)| *l)
    }

    /// Is-true and is-false of a value read as a truth (`Val::as_truth`).
    pub fn tf(&self) -> (B, B) {
        (self.is(&Atom::Bool(true)), self.is(&Atom::Bool(false)))
    }
}

/// A scalar from alternatives that may repeat an atom; presence is their disjunction.
pub fn scalar(b: &mut Builder, alts: Vec<(Atom, B)>, missing: B) -> Sym {
    let mut by: BTreeMap<Atom, Vec<B>> = BTreeMap::new();
    for (a, l) in alts {
        if l != B::F {
            by.entry(a).or_default().push(l);
        }
    }
    let mut out = Vec::new();
    for (a, ls) in by {
        let l = b.or(ls);
        if l != B::F {
            out.push((a, l));
        }
    }
    let present = b.or(out.iter().map(|(_, l)| *l).collect::<Vec<_>>());
    Sym { present, missing, decided: B::F, kind: Kind::Scalar(out) }
}

/// Scalar equality (`Val::same` on scalars): both present and the same atom.
pub fn same(b: &mut Builder, x: &Sym, y: &Sym) -> B {
    let mut ors = Vec::new();
    for (a, l) in x.alts() {
        let m = y.is(a);
        if m != B::F {
            ors.push(b.and2(*l, m));
        }
    }
    b.or(ors)
}

/// The value of the first case whose condition holds. The conditions must
/// exclude each other; when none holds the value is absent, missing when
/// `otherwise_missing` holds (see [`mux_absent`]).
pub fn mux(b: &mut Builder, cases: &[(B, Sym)], otherwise_missing: B) -> Sym {
    mux_absent(b, cases, otherwise_missing, B::F)
}

/// [`mux`], the value known absent when none holds and `otherwise_decided` does.
pub fn mux_absent(b: &mut Builder, cases: &[(B, Sym)], otherwise_missing: B, otherwise_decided: B) -> Sym {
    let cases: Vec<&(B, Sym)> = cases.iter().filter(|(c, _)| *c != B::F).collect();
    let mut present = Vec::new();
    let mut missing = vec![otherwise_missing];
    let mut decided = vec![otherwise_decided];
    for (c, v) in &cases {
        present.push(b.and2(*c, v.present));
        missing.push(b.and2(*c, v.missing));
        decided.push(b.and2(*c, v.decided));
    }
    let present = b.or(present);
    let missing = b.or(missing);
    let decided = b.or(decided);
    let shape = cases.iter().map(|(_, v)| &v.kind).find(|k| !matches!(k, Kind::Opaque));
    let kind = match shape {
        None => Kind::Opaque,
        Some(Kind::Scalar(_)) => {
            let mut alts = Vec::new();
            for (c, v) in &cases {
                for (a, l) in v.alts() {
                    alts.push((a.clone(), b.and2(*c, *l)));
                }
            }
            return Sym { present, missing, decided, ..scalar(b, alts, B::F) };
        }
        Some(Kind::Record(r, fields)) => {
            let r = *r;
            let n = fields.len();
            let mut out = Vec::with_capacity(n);
            for i in 0..n {
                let sub: Vec<(B, Sym)> = cases
                    .iter()
                    .map(|(c, v)| match &v.kind {
                        Kind::Record(_, f) => (*c, f.get(i).cloned().unwrap_or_else(Sym::unknown)),
                        _ => (*c, Sym::unknown()),
                    })
                    .collect();
                out.push(mux(b, &sub, B::F));
            }
            Kind::Record(r, out)
        }
        Some(Kind::List { .. }) => {
            let lists: Vec<(B, &Entries, bool)> = cases
                .iter()
                .filter_map(|(c, v)| match &v.kind {
                    Kind::List { entries, dense } => Some((*c, entries, *dense)),
                    _ => None,
                })
                .collect();
            let n = lists.iter().map(|(_, e, _)| e.len()).max().unwrap_or(0);
            let dense = lists.iter().all(|(_, _, d)| *d);
            let mut entries = Vec::new();
            for j in 0..n {
                let mut ps = Vec::new();
                let mut vals = Vec::new();
                for (c, es, _) in &lists {
                    if let Some((p, v)) = es.get(j) {
                        ps.push(b.and2(*c, *p));
                        vals.push((*c, v.clone()));
                    }
                }
                let p = b.or(ps);
                entries.push((p, mux(b, &vals, B::F)));
            }
            Kind::List { entries, dense }
        }
        Some(Kind::Map(_)) | Some(Kind::Pairs(_)) => {
            let is_pairs = matches!(shape, Some(Kind::Pairs(_)));
            let maps: Vec<(B, &KeyedEntries)> = cases
                .iter()
                .filter_map(|(c, v)| match &v.kind {
                    Kind::Map(e) | Kind::Pairs(e) => Some((*c, e)),
                    _ => None,
                })
                .collect();
            let n = maps.iter().map(|(_, e)| e.len()).max().unwrap_or(0);
            let mut entries = Vec::new();
            for j in 0..n {
                let mut ps = Vec::new();
                let mut keys = Vec::new();
                let mut vals = Vec::new();
                for (c, es) in &maps {
                    if let Some((p, k, v)) = es.get(j) {
                        ps.push(b.and2(*c, *p));
                        keys.push((*c, k.clone()));
                        vals.push((*c, v.clone()));
                    }
                }
                let p = b.or(ps);
                entries.push((p, mux(b, &keys, B::F), mux(b, &vals, B::F)));
            }
            if is_pairs { Kind::Pairs(entries) } else { Kind::Map(entries) }
        }
        Some(Kind::Row(m, _)) => {
            let m = *m;
            let mut alts: BTreeMap<u32, Vec<B>> = BTreeMap::new();
            for (c, v) in &cases {
                if let Kind::Row(_, vs) = &v.kind {
                    for (x, l) in vs {
                        alts.entry(*x).or_default().push(b.and2(*c, *l));
                    }
                }
            }
            let mut out = Vec::new();
            for (x, ls) in alts {
                out.push((x, b.or(ls)));
            }
            Kind::Row(m, out)
        }
        Some(k) => k.clone(),
    };
    Sym { present, missing, decided, kind }
}
