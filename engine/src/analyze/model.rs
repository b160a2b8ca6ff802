//! The bounded symbolic deployment: at most one document per kind, each
//! field a presence bit and a value over a finite domain, defaults filled in
//! as `conform` fills them, and the schema's tighten-only bounds, `unique`
//! lists and integer minimums as violation literals. The same tree decodes a
//! satisfying assignment into document text.

use std::collections::BTreeSet;
use std::sync::Arc;

use grail_lang::ast::BoundKind;
use rustsat::types::Lit;

use super::flow::{Flow, Site};
use super::formula::{B, Builder};
use super::sym::{Atom, Kind, Sym, mux, same};
use crate::hir::*;
use crate::value::ValKind;

/// How large a document the analysis considers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    /// Entries of a list at the top of a field (slots of a topology, events).
    pub list: usize,
    /// Entries of a list inside a list entry (a slot's relations).
    pub inner_list: usize,
    /// Entries of a map keyed by a string (routes, surfaces).
    pub map: usize,
    /// Fresh names a string field may take besides the literals it is compared with.
    pub fresh: usize,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds { list: 4, inner_list: 2, map: 2, fresh: 4 }
    }
}

/// Names a string may take that no rule mentions.
pub const FRESH: [&str; 6] = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"];

/// A document as the solver chooses it, for decoding.
#[derive(Clone, Debug)]
pub enum Node {
    Scalar { present: B, alts: Vec<(Atom, B)> },
    Record { present: B, fields: Vec<(String, Node)> },
    List { present: B, entries: Vec<Node> },
    Map { present: B, entries: Vec<(Node, Node)> },
}

impl Node {
    fn absent() -> Node {
        Node::Scalar { present: B::F, alts: Vec::new() }
    }
}

/// What a schema check is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckKind {
    Floor,
    Ceiling,
    Unique,
}

/// A schema check that judges values: a floor, a ceiling or `unique`; it
/// fires when one of `fires` holds.
#[derive(Clone, Debug)]
pub struct SchemaCheck {
    pub rule: String,
    pub loc: Loc,
    pub kind: CheckKind,
    /// The field it bounds, for messages.
    pub field: String,
    pub fires: Vec<B>,
    /// The subjects it checks and passes (a value set and tight enough, a list without duplicates).
    pub passes: Vec<B>,
}

/// A type constraint the analysis can relax to explain a core: `int >= N`.
#[derive(Clone, Debug)]
pub struct TypeGate {
    pub what: String,
    pub loc: Loc,
    pub gate: Lit,
}

#[derive(Clone, Debug)]
pub struct DocModel {
    pub kind: DocKindId,
    pub present: B,
    pub node: Node,
    pub sym: Sym,
}

#[derive(Clone, Debug)]
pub struct Model {
    pub docs: Vec<DocModel>,
    pub checks: Vec<SchemaCheck>,
    pub types: Vec<TypeGate>,
    /// Every choice the solver makes about the documents, for twin distance.
    pub atoms: Vec<Lit>,
}

struct Mk<'a> {
    b: &'a mut Builder,
    policy: &'a Policy,
    flow: &'a Flow,
    bounds: Bounds,
    keys: Vec<(EnumId, u32)>,
    /// How many lists the value being built is inside.
    in_list: usize,
    checks: Vec<SchemaCheck>,
    types: Vec<TypeGate>,
    atoms: Vec<Lit>,
    ints: BTreeSet<i64>,
}

pub fn build(b: &mut Builder, policy: &Policy, flow: &Flow, bounds: Bounds) -> Model {
    let mut ints: BTreeSet<i64> = BTreeSet::new();
    for i in &flow.ints {
        ints.extend([i - 1, *i, i + 1]);
    }
    ints.extend(0..=bounds.list as i64 + 1);
    let mut mk = Mk {
        b,
        policy,
        flow,
        bounds,
        keys: Vec::new(),
        in_list: 0,
        checks: Vec::new(),
        types: Vec::new(),
        atoms: Vec::new(),
        ints,
    };
    // Every schema check that judges values has an entry, fired or not.
    for r in &policy.records {
        for f in &r.fields {
            for bd in &f.bounds {
                let kind = if bd.kind == BoundKind::Floor { CheckKind::Floor } else { CheckKind::Ceiling };
                mk.check(&bd.rule, bd.loc, kind, &f.name);
            }
            if let Some(u) = &f.unique {
                mk.check(&u.rule, u.loc, CheckKind::Unique, &f.name);
            }
        }
    }
    let mut docs = Vec::new();
    for (k, d) in policy.documents.iter().enumerate() {
        let present = mk.choice();
        let layer_key = policy.layers.iter().find(|l| l.document as usize == k).and_then(|l| l.claim.clone());
        let (node, sym) = mk.record(d.record, present, layer_key.as_deref(), Some(&d.selector));
        docs.push(DocModel { kind: k as DocKindId, present, node, sym });
    }
    Model { docs, checks: mk.checks, types: mk.types, atoms: mk.atoms }
}

impl Mk<'_> {
    fn check(&mut self, rule: &str, loc: Loc, kind: CheckKind, field: &str) -> usize {
        if let Some(i) = self.checks.iter().position(|c| c.rule == rule) {
            return i;
        }
        self.checks.push(SchemaCheck {
            rule: rule.into(),
            loc,
            kind,
            field: field.into(),
            fires: Vec::new(),
            passes: Vec::new(),
        });
        self.checks.len() - 1
    }

    /// A fresh choice of the solver, recorded as a document atom.
    fn choice(&mut self) -> B {
        let l = self.b.atom();
        self.atoms.push(l);
        B::L(l)
    }

    /// A presence bit under `parent`.
    fn presence(&mut self, parent: B) -> B {
        if parent == B::F {
            return B::F;
        }
        let p = self.choice();
        self.b.implies(p, parent);
        p
    }

    /// A scalar over `atoms`, there exactly when `present` holds.
    fn scalar(&mut self, atoms: Vec<Atom>, present: B) -> (Node, Sym) {
        if present == B::F || atoms.is_empty() {
            return (Node::absent(), Sym::absent(B::T, B::T));
        }
        let alts: Vec<(Atom, B)> = if atoms.len() == 1 {
            vec![(atoms[0].clone(), present)]
        } else {
            let lits: Vec<B> = atoms.iter().map(|_| self.choice()).collect();
            self.b.at_most_one(&lits);
            for l in &lits {
                self.b.implies(*l, present);
            }
            let mut c = vec![present.negate()];
            c.extend(lits.iter().copied());
            self.b.clause(&c);
            atoms.into_iter().zip(lits).collect()
        };
        let node = Node::Scalar { present, alts: alts.clone() };
        (node, Sym { present, missing: present.negate(), decided: present.negate(), kind: Kind::Scalar(alts) })
    }

    fn pool(&self, site: Site) -> Vec<Atom> {
        let mut out: Vec<Atom> =
            self.flow.pools.get(&site).map(|p| p.iter().map(|s| Atom::Str(s.clone())).collect()).unwrap_or_default();
        for f in FRESH.iter().take(self.bounds.fresh) {
            let a = Atom::Str(Arc::from(*f));
            if !out.contains(&a) {
                out.push(a);
            }
        }
        out
    }

    /// A record or map read as written empty: a record's fields take their
    /// defaults (a column default has no key here, so it is absent), a map has no entry.
    fn empty(&self, ty: &Ty) -> Sym {
        match ty {
            Ty::Record(r) => {
                let fields = &self.policy.records[*r as usize].fields;
                let syms = fields
                    .iter()
                    .map(|f| match &f.default {
                        Some(d @ (DefaultDef::Value(_) | DefaultDef::Empty(_))) => self.default(d, &f.ty),
                        // Optional without a default: known absent; else missing evidence (as `conform`).
                        d => Sym::absent(B::T, B::constant(d.is_none() && f.optional)),
                    })
                    .collect();
                Sym::with(B::T, Kind::Record(*r, syms))
            }
            Ty::Map(..) => Sym::with(B::T, Kind::Map(Vec::new())),
            _ => Sym::absent(B::T, B::F),
        }
    }

    fn cell(&self, matrix: MatrixId, column: usize) -> Option<Sym> {
        let m = &self.policy.matrices[matrix as usize];
        let (_, v) = self.keys.iter().rev().find(|(e, _)| *e == m.key_enum)?;
        m.cells.get(*v as usize)?.get(column).map(Sym::of_val)
    }

    fn default(&self, d: &DefaultDef, ty: &Ty) -> Sym {
        match d {
            DefaultDef::Value(v) => Sym::of_val(v),
            DefaultDef::Empty(_) => self.empty(ty),
            DefaultDef::Column { matrix, column, .. } => self.cell(*matrix, *column).unwrap_or(Sym::absent(B::T, B::F)),
        }
    }

    fn record(
        &mut self,
        r: RecordId,
        present: B,
        layer_key: Option<&str>,
        selector: Option<&SelectorDef>,
    ) -> (Node, Sym) {
        let def = &self.policy.records[r as usize];
        let mut nodes = Vec::new();
        let mut syms = Vec::new();
        for (i, f) in def.fields.iter().enumerate() {
            let fixed = selector.and_then(|s| s.value_of(&f.name)).map(str::to_string);
            // A key the selector tests for is there, or left out, in every document of the kind.
            let required = selector.is_some_and(|s| s.requires(&f.name));
            let forbidden = selector.is_some_and(|s| s.forbids(&f.name));
            let read = self.flow.read.contains(&(r, i))
                || !f.bounds.is_empty()
                || f.unique.is_some()
                || def.identity == Some(i)
                || fixed.is_some()
                || required;
            if layer_key == Some(f.name.as_str()) || (f.optional && !read) || forbidden {
                // Nothing reads it: the document leaves it out.
                let sym = match &f.default {
                    Some(d) if !matches!(f.ty, Ty::Map(..)) => self.default(d, &f.ty),
                    // Left out: known absent when optional, missing evidence when required.
                    _ => Sym::absent(B::T, B::constant(f.optional)),
                };
                nodes.push((f.name.clone(), Node::absent()));
                syms.push(sym);
                continue;
            }
            let p = if f.optional && !required { self.presence(present) } else { present };
            let (node, raw) = if let Some(v) = &fixed {
                self.scalar(vec![Atom::Str(v.as_str().into())], p)
            } else {
                self.value(&f.ty, f, r, i, p, 0, !read)
            };
            let raw = if matches!(f.ty, Ty::Map(..)) { raw } else { self.bounded(f, p, raw) };
            let sym = self.effective(f, p, present, raw);
            nodes.push((f.name.clone(), node));
            syms.push(sym);
        }
        (Node::Record { present, fields: nodes }, Sym::with(present, Kind::Record(r, syms)))
    }

    /// What rules read for a field: the document's value, or its default.
    fn effective(&mut self, f: &FieldDef, set: B, parent: B, raw: Sym) -> Sym {
        let Some(d) = &f.default else { return raw };
        match (&f.ty, raw.kind) {
            (Ty::Map(..), Kind::Map(entries)) => {
                // Every key is there: the document's value, or (in `value`) its default,
                // even when the document leaves the whole map out.
                let key_enum = matches!(&f.ty, Ty::Map(k, _) if matches!(**k, Ty::Enum(_)));
                let entries = entries.into_iter().map(|(p, k, v)| (if key_enum { parent } else { p }, k, v)).collect();
                Sym::with(parent, Kind::Map(entries))
            }
            (_, kind) => {
                let raw = Sym { kind, ..raw };
                let def = self.default(d, &f.ty);
                let def = Sym { present: self.b.and2(parent, def.present), ..def };
                mux(self.b, &[(set, raw), (set.negate(), def)], B::F)
            }
        }
    }

    /// A value of type `ty` for field `f` of record `r`, there when `present` holds.
    #[allow(clippy::too_many_arguments)]
    fn value(
        &mut self,
        ty: &Ty,
        f: &FieldDef,
        r: RecordId,
        i: usize,
        present: B,
        depth: usize,
        narrow: bool,
    ) -> (Node, Sym) {
        if present == B::F {
            return (Node::absent(), Sym::absent(B::T, B::T));
        }
        let narrowed = |mut v: Vec<Atom>| {
            if narrow {
                v.truncate(1);
            }
            v
        };
        match ty {
            Ty::Bool => self.scalar(narrowed(vec![Atom::Bool(true), Atom::Bool(false)]), present),
            Ty::Int => {
                let min = f.int_min;
                let atoms: Vec<Atom> = if narrow {
                    vec![Atom::Int(min.unwrap_or(0))]
                } else {
                    self.ints
                        .iter()
                        .filter(|x| min.is_none_or(|m| **x >= m - 1))
                        .chain(min.iter())
                        .copied()
                        .collect::<BTreeSet<i64>>()
                        .into_iter()
                        .map(Atom::Int)
                        .collect()
                };
                let (node, sym) = self.scalar(atoms, present);
                if let Some(m) = min {
                    let below = sym.is(&Atom::Int(m - 1));
                    if below != B::F {
                        let gate = self.type_gate(r, i, m);
                        self.b.clause(&[B::L(gate).negate(), below.negate()]);
                    }
                }
                (node, sym)
            }
            Ty::Str | Ty::Id => {
                let pool = self.pool(Site { record: r, field: i, key: false });
                let mut pool = narrowed(if *ty == Ty::Id { identifiers(pool) } else { pool });
                if f.nonempty {
                    // `text`: never the empty string.
                    pool.retain(|a| !matches!(a, Atom::Str(s) if s.is_empty()));
                }
                self.scalar(pool, present)
            }
            Ty::Enum(e) => {
                let n = self.policy.enums[*e as usize].variants.len() as u32;
                self.scalar(narrowed((0..n).map(|v| Atom::Enum(*e, v)).collect()), present)
            }
            Ty::Record(rr) => {
                // A record the document leaves out is a known absence, as a list or a map is.
                let (node, sym) = self.record(*rr, present, None, None);
                (node, Sym { missing: present.negate(), decided: present.negate(), ..sym })
            }
            Ty::List(t) => {
                let n = if narrow {
                    0
                } else if depth == 0 && self.in_list == 0 {
                    self.bounds.list
                } else {
                    self.bounds.inner_list
                };
                self.in_list += 1;
                let mut nodes = Vec::new();
                let mut entries = Vec::new();
                let mut prev = present;
                for _ in 0..n {
                    let p = self.presence(prev);
                    let (node, sym) = self.value(t, f, r, i, p, depth + 1, narrow);
                    nodes.push(node);
                    entries.push((p, sym));
                    prev = p;
                }
                self.in_list -= 1;
                if let Some(u) = &f.unique {
                    let c = self.check(&u.rule, u.loc, CheckKind::Unique, &f.name);
                    let before = self.checks[c].fires.len();
                    for a in 0..entries.len() {
                        for z in a + 1..entries.len() {
                            let (x, y) = (identity(self.policy, &entries[a].1), identity(self.policy, &entries[z].1));
                            if let (Some(x), Some(y)) = (x, y) {
                                let eq = same(self.b, &x, &y);
                                let both = self.b.and([entries[a].0, entries[z].0, eq]);
                                self.checks[c].fires.push(both);
                            }
                        }
                    }
                    let dups: Vec<B> = self.checks[c].fires[before..].to_vec();
                    let any = self.b.or(dups);
                    let clean = self.b.and2(present, any.negate());
                    self.checks[c].passes.push(clean);
                }
                (
                    Node::List { present, entries: nodes },
                    Sym {
                        present,
                        missing: present.negate(),
                        decided: present.negate(),
                        kind: Kind::List { entries, dense: true },
                    },
                )
            }
            Ty::Map(k, v) => match &**k {
                Ty::Enum(e) => {
                    let n = self.policy.enums[*e as usize].variants.len() as u32;
                    let mut nodes = Vec::new();
                    let mut entries = Vec::new();
                    for x in 0..n {
                        // A `complete` map has every key wherever it is there.
                        let p = if f.complete { present } else { self.presence(present) };
                        self.keys.push((*e, x));
                        let (vn, vs) = self.value(v, f, r, i, p, depth, narrow);
                        let key = Atom::Enum(*e, x);
                        let vs = self.bounded(f, p, vs);
                        let (entry, value) = match &f.default {
                            Some(d) => {
                                let def = self.default(d, v);
                                (present, mux(self.b, &[(p, vs), (p.negate(), def)], B::F))
                            }
                            None => (p, vs),
                        };
                        self.keys.pop();
                        nodes.push((Node::Scalar { present: p, alts: vec![(key.clone(), p)] }, vn));
                        entries.push((entry, Sym::atom(key), value));
                    }
                    (
                        Node::Map { present, entries: nodes },
                        Sym { present, missing: present.negate(), decided: present.negate(), kind: Kind::Map(entries) },
                    )
                }
                _ => {
                    let n = if narrow { 0 } else { self.bounds.map };
                    let pool = self.pool(Site { record: r, field: i, key: true });
                    let pool = if **k == Ty::Id { identifiers(pool) } else { pool };
                    let mut nodes = Vec::new();
                    let mut entries: Vec<(B, Sym, Sym)> = Vec::new();
                    let mut prev = present;
                    for _ in 0..n {
                        let p = self.presence(prev);
                        let (kn, ks) = self.scalar(pool.clone(), p);
                        for (q, other, _) in &entries {
                            let eq = same(self.b, &ks, other);
                            self.b.clause(&[p.negate(), q.negate(), eq.negate()]);
                        }
                        let (vn, vs) = self.value(v, f, r, i, p, depth, narrow);
                        let vs = self.bounded(f, p, vs);
                        nodes.push((kn, vn));
                        entries.push((p, ks, vs));
                        prev = p;
                    }
                    (
                        Node::Map { present, entries: nodes },
                        Sym { present, missing: present.negate(), decided: present.negate(), kind: Kind::Map(entries) },
                    )
                }
            },
            _ => (Node::absent(), Sym::absent(B::T, B::F)),
        }
    }

    /// Records the bounds of `f` on a value the document sets (when `set`).
    fn bounded(&mut self, f: &FieldDef, set: B, v: Sym) -> Sym {
        for bd in &f.bounds {
            let Some(cell) = self.cell(bd.matrix, bd.column) else { continue };
            let Some((bound, _)) = cell.alts().first().cloned() else { continue };
            let mut looser = Vec::new();
            for (a, l) in v.alts() {
                if tight_enough(a, &bound, bd.kind) == Some(false) {
                    looser.push(*l);
                }
            }
            let looser = self.b.or(looser);
            let fires = self.b.and2(set, looser);
            let known = self.b.and2(set, v.present);
            let passes = self.b.and2(known, looser.negate());
            let kind = if bd.kind == BoundKind::Floor { CheckKind::Floor } else { CheckKind::Ceiling };
            let c = self.check(&bd.rule, bd.loc, kind, &f.name);
            self.checks[c].fires.push(fires);
            self.checks[c].passes.push(passes);
        }
        v
    }

    fn type_gate(&mut self, r: RecordId, i: usize, min: i64) -> Lit {
        let def = &self.policy.records[r as usize];
        let what = format!("`{}.{}` is an integer of at least {min}", def.name, def.fields[i].name);
        if let Some(t) = self.types.iter().find(|t| t.what == what) {
            return t.gate;
        }
        let gate = self.b.fresh();
        self.types.push(TypeGate { what, loc: def.fields[i].loc, gate });
        gate
    }
}

/// Whether `v` is at `bound` or tighter (`conform::tight_enough` on atoms).
fn tight_enough(v: &Atom, bound: &Atom, kind: BoundKind) -> Option<bool> {
    match (v, bound) {
        (Atom::Enum(e, a), Atom::Enum(f, b)) if e == f => Some(a <= b),
        (Atom::Int(a), Atom::Int(b)) => Some(if kind == BoundKind::Floor { a >= b } else { a <= b }),
        (Atom::Bool(a), Atom::Bool(b)) => Some(if kind == BoundKind::Floor { a >= b } else { a <= b }),
        _ => None,
    }
}

/// The identity of a value: a scalar itself, a record its identity field.
pub fn identity(policy: &Policy, v: &Sym) -> Option<Sym> {
    match &v.kind {
        Kind::Scalar(_) => Some(v.clone()),
        Kind::Record(r, fields) => {
            let id = policy.records.get(*r as usize)?.identity?;
            fields.get(id).cloned()
        }
        _ => None,
    }
}

/// A decoded document: what a YAML or JSON text says.
#[derive(Clone, Debug, PartialEq)]
pub enum Out {
    Bool(bool),
    Int(i64),
    Str(String),
    Map(Vec<(String, Out)>),
    List(Vec<Out>),
}

/// The document a node holds under the solver's last model, if it is there.
pub fn decode(policy: &Policy, b: &Builder, node: &Node) -> Option<Out> {
    match node {
        Node::Scalar { present, alts } => {
            if !b.value(*present) {
                return None;
            }
            let (a, _) = alts.iter().find(|(_, l)| b.value(*l))?;
            Some(match a {
                Atom::Bool(x) => Out::Bool(*x),
                Atom::Int(x) => Out::Int(*x),
                Atom::Str(s) => Out::Str(s.to_string()),
                Atom::Enum(e, v) => Out::Str(policy.variant_name(*e, *v).to_string()),
                // No field holds one (documents write instants as strings); written as text.
                Atom::Time(t) => Out::Str(crate::time::show_instant(*t)),
                Atom::Duration(d) => Out::Str(crate::time::show_duration(*d)),
            })
        }
        Node::Record { present, fields } => {
            if !b.value(*present) {
                return None;
            }
            Some(Out::Map(fields.iter().filter_map(|(k, n)| Some((k.clone(), decode(policy, b, n)?))).collect()))
        }
        Node::List { present, entries } => {
            if !b.value(*present) {
                return None;
            }
            Some(Out::List(entries.iter().filter_map(|n| decode(policy, b, n)).collect()))
        }
        Node::Map { present, entries } => {
            if !b.value(*present) {
                return None;
            }
            let mut out = Vec::new();
            for (k, v) in entries {
                let Some(key) = decode(policy, b, k) else { continue };
                let key = match key {
                    Out::Str(s) => s,
                    Out::Int(i) => i.to_string(),
                    Out::Bool(x) => x.to_string(),
                    _ => continue,
                };
                // A map entry whose value has nothing to say is still written.
                out.push((key, decode(policy, b, v).unwrap_or(Out::Map(Vec::new()))));
            }
            Some(Out::Map(out))
        }
    }
}

fn plain(s: &str) -> bool {
    let reserved = ["true", "false", "null", "yes", "no", "on", "off", "y", "n", "~"];
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && !reserved.contains(&s.to_ascii_lowercase().as_str())
}

fn scalar_text(s: &str) -> String {
    if plain(s) { s.to_string() } else { serde_json::to_string(s).unwrap_or_default() }
}

fn flow_text(o: &Out) -> String {
    match o {
        Out::Bool(x) => x.to_string(),
        Out::Int(x) => x.to_string(),
        Out::Str(s) => scalar_text(s),
        Out::Map(entries) => {
            let parts: Vec<String> =
                entries.iter().map(|(k, v)| format!("{}: {}", scalar_text(k), flow_text(v))).collect();
            format!("{{{}}}", parts.join(", "))
        }
        Out::List(items) => {
            let parts: Vec<String> = items.iter().map(flow_text).collect();
            format!("[{}]", parts.join(", "))
        }
    }
}

/// YAML text: mappings in block style, one line per list entry of mappings,
/// lists of scalars and small mappings in flow style.
pub fn yaml(o: &Out) -> String {
    yaml_flow_at(o, None)
}

/// The two twins of a fixture pair as YAML, as few lines apart as their
/// difference allows: when the usual layout spreads it over several lines,
/// the smallest part of the document that holds every difference is written
/// on one line (flow style) in both, so a change inside one mapping is one
/// line of the pair (what `grail test` asks of twins).
pub fn yaml_twins(a: &Out, b: &Out) -> (String, String) {
    let (ya, yb) = (yaml(a), yaml(b));
    if crate::testing::differing_lines(&ya, &yb) <= 1 {
        return (ya, yb);
    }
    let mut path = Vec::new();
    deepest_difference(a, b, &mut path);
    (yaml_flow_at(a, Some(&path)), yaml_flow_at(b, Some(&path)))
}

/// The keys down to the smallest mapping entry that holds every difference
/// between `a` and `b` (empty: the whole document).
fn deepest_difference(a: &Out, b: &Out, path: &mut Vec<String>) {
    let (Out::Map(x), Out::Map(y)) = (a, b) else { return };
    fn get<'a>(m: &'a [(String, Out)], k: &str) -> Option<&'a Out> {
        m.iter().find(|(key, _)| key == k).map(|(_, v)| v)
    }
    let mut keys: Vec<&str> = x.iter().map(|(k, _)| k.as_str()).collect();
    keys.extend(y.iter().map(|(k, _)| k.as_str()).filter(|k| get(x, k).is_none()));
    let differing: Vec<&str> = keys.into_iter().filter(|k| get(x, k) != get(y, k)).collect();
    if let [k] = differing.as_slice()
        && let (Some(va), Some(vb)) = (get(x, k), get(y, k))
    {
        path.push(k.to_string());
        deepest_difference(va, vb, path);
    }
}

/// YAML text with the entry at `flow_at` (a path of keys) written on one line.
fn yaml_flow_at(o: &Out, flow_at: Option<&[String]>) -> String {
    fn block(o: &Out, indent: usize, s: &mut String, path: &mut Vec<String>, flow_at: Option<&[String]>) {
        let pad = " ".repeat(indent);
        let Out::Map(entries) = o else { return };
        for (k, v) in entries {
            let key = scalar_text(k);
            path.push(k.clone());
            let flow = flow_at == Some(path.as_slice());
            match v {
                _ if flow => s.push_str(&format!("{pad}{key}: {}\n", flow_text(v))),
                Out::Map(inner)
                    if !inner.is_empty() && inner.iter().any(|(_, x)| matches!(x, Out::Map(_) | Out::List(_))) =>
                {
                    s.push_str(&format!("{pad}{key}:\n"));
                    block(v, indent + 2, s, path, flow_at);
                }
                Out::List(items) if items.iter().any(|i| matches!(i, Out::Map(_))) => {
                    s.push_str(&format!("{pad}{key}:\n"));
                    for i in items {
                        s.push_str(&format!("{pad}  - {}\n", flow_text(i)));
                    }
                }
                _ => s.push_str(&format!("{pad}{key}: {}\n", flow_text(v))),
            }
            path.pop();
        }
    }
    let mut s = String::new();
    match o {
        Out::Map(e) if !e.is_empty() && flow_at != Some(&[]) => block(o, 0, &mut s, &mut Vec::new(), flow_at),
        _ => s.push_str(&flow_text(o)),
    }
    if !s.ends_with('\n') {
        s.push('\n');
    }
    s
}

pub fn json(o: &Out) -> serde_json::Value {
    use serde_json::Value;
    match o {
        Out::Bool(x) => Value::Bool(*x),
        Out::Int(x) => Value::from(*x),
        Out::Str(s) => Value::String(s.clone()),
        Out::Map(entries) => Value::Object(entries.iter().map(|(k, v)| (k.clone(), json(v))).collect()),
        Out::List(items) => Value::Array(items.iter().map(json).collect()),
    }
}

/// A value of a policy as an atom, for tests and messages.
pub fn atom_of(v: &crate::value::Val) -> Option<Atom> {
    match &v.kind {
        ValKind::Bool(x) => Some(Atom::Bool(*x)),
        ValKind::Int(x) => Some(Atom::Int(*x)),
        ValKind::Str(x) | ValKind::Id(x) => Some(Atom::Str(x.clone())),
        ValKind::Enum(e, x) => Some(Atom::Enum(*e, *x)),
        _ => None,
    }
}

/// The strings of a pool that a field of type `id` can hold: identifiers,
/// one spelling per identity (the checker reads `A` and `a` as one).
fn identifiers(pool: Vec<Atom>) -> Vec<Atom> {
    let mut out: Vec<Atom> = Vec::new();
    for a in pool {
        let Atom::Str(s) = &a else {
            out.push(a);
            continue;
        };
        let twin = out.iter().any(|b| matches!(b, Atom::Str(t) if crate::value::same_identifier(s, t)));
        if crate::hir::is_identifier(s) && !twin {
            out.push(a);
        }
    }
    out
}
