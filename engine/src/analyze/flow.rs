//! Which string literals each string-valued place of a document can meet.
//!
//! A small abstract interpretation of the rules: every two string-valued
//! places compared with each other (`==`, `in`, a map key, `??`, `++`, a list
//! literal) are united into one class. A string field then ranges over the
//! literals of its class and a few fresh names: enough to make every
//! comparison the policy writes go either way, and far fewer atoms than every
//! literal of the policy. Also collects the integers the policy mentions and
//! a sample string for each regular expression.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::hir::*;
use crate::value::ValKind;

/// A string-valued place of a document: a field's values, or a map field's keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Site {
    pub record: RecordId,
    pub field: usize,
    pub key: bool,
}

#[derive(Clone, Debug, PartialEq)]
enum Abs {
    Str(usize),
    Rec(RecordId),
    List(Box<Abs>),
    Map(Box<Abs>, Box<Abs>),
    Pairs(Box<Abs>),
    Other,
}

/// What the flow analysis found.
#[derive(Debug, Default)]
pub struct Flow {
    /// The literals each site can be compared with, in order.
    pub pools: BTreeMap<Site, Vec<Arc<str>>>,
    /// Every integer literal of the rules and every integer matrix cell.
    pub ints: BTreeSet<i64>,
    /// The fields some rule reads (`record`, `field`).
    pub read: BTreeSet<(RecordId, usize)>,
}

struct Cx<'p> {
    policy: &'p Policy,
    parent: Vec<usize>,
    /// Every literal occurrence, a class of its own: a literal joins the
    /// class it is compared with, without joining two classes that meet it.
    literals: Vec<(Arc<str>, usize)>,
    sites: BTreeMap<Site, usize>,
    /// Regular expressions applied to each class.
    regexes: Vec<(usize, String)>,
    /// Separators each class is split by.
    splits: Vec<(usize, String)>,
    env: Vec<Abs>,
    ints: BTreeSet<i64>,
    read: BTreeSet<(RecordId, usize)>,
}

pub fn analyse(policy: &Policy) -> Flow {
    let mut cx = Cx {
        policy,
        parent: Vec::new(),
        literals: Vec::new(),
        sites: BTreeMap::new(),
        regexes: Vec::new(),
        splits: Vec::new(),
        env: Vec::new(),
        ints: BTreeSet::new(),
        read: BTreeSet::new(),
    };
    for m in &policy.matrices {
        for row in &m.cells {
            for cell in row {
                if let ValKind::Int(i) = cell.kind {
                    cx.ints.insert(i);
                }
            }
        }
    }
    // A selector's value is a literal the selector field must hold.
    for d in &policy.documents {
        for t in d.selector.tests() {
            if let KeyCondDef::Equals(value) = &t.test
                && let Some(f) = policy.records[d.record as usize].field(&t.key)
            {
                let a = cx.site(Site { record: d.record, field: f, key: false });
                let b = cx.literal(value);
                cx.union(a, b);
            }
        }
    }
    for rule in &policy.rules {
        cx.env = vec![Abs::Other; rule.slots as usize];
        for clause in rule.clauses.iter() {
            match clause {
                ClauseDef::For { pattern, domain, filter, .. } => {
                    let d = cx.eval(domain);
                    cx.bind(pattern, &d);
                    if let Some(f) = filter {
                        cx.eval(f);
                    }
                }
                ClauseDef::When { guard, .. } => {
                    cx.eval(guard);
                }
                ClauseDef::Let { slot, value, .. } => {
                    let v = cx.eval(value);
                    cx.set(*slot, v);
                }
                ClauseDef::Require { check, .. } => {
                    cx.eval(check);
                }
            }
        }
    }
    let mut by_root: BTreeMap<usize, BTreeSet<Arc<str>>> = BTreeMap::new();
    let literals: Vec<(Arc<str>, usize)> = cx.literals.clone();
    for (s, c) in literals {
        let r = cx.find(c);
        by_root.entry(r).or_default().insert(s);
    }
    for (class, re) in cx.regexes.clone() {
        if let Some(sample) = sample(&re) {
            let r = cx.find(class);
            by_root.entry(r).or_default().insert(sample.into());
        }
    }
    // A string that is split needs strings with several parts to choose from.
    for (class, sep) in cx.splits.clone() {
        let r = cx.find(class);
        let names = ["alpha", "beta", "gamma"];
        for n in 2..=names.len() {
            by_root.entry(r).or_default().insert(names[..n].join(&sep).into());
        }
    }
    let mut pools = BTreeMap::new();
    let sites: Vec<(Site, usize)> = cx.sites.iter().map(|(s, c)| (*s, *c)).collect();
    for (site, c) in sites {
        let r = cx.find(c);
        pools.insert(site, by_root.get(&r).map(|s| s.iter().cloned().collect()).unwrap_or_default());
    }
    Flow { pools, ints: cx.ints, read: cx.read }
}

impl Cx<'_> {
    fn class(&mut self) -> usize {
        self.parent.push(self.parent.len());
        self.parent.len() - 1
    }

    fn find(&mut self, mut c: usize) -> usize {
        while self.parent[c] != c {
            self.parent[c] = self.parent[self.parent[c]];
            c = self.parent[c];
        }
        c
    }

    fn union(&mut self, a: usize, b: usize) {
        let (a, b) = (self.find(a), self.find(b));
        if a != b {
            self.parent[a] = b;
        }
    }

    fn literal(&mut self, s: &str) -> usize {
        let c = self.class();
        self.literals.push((s.into(), c));
        c
    }

    fn site(&mut self, s: Site) -> usize {
        if let Some(c) = self.sites.get(&s) {
            return *c;
        }
        let c = self.class();
        self.sites.insert(s, c);
        c
    }

    fn set(&mut self, slot: Slot, v: Abs) {
        if let Some(s) = self.env.get_mut(slot as usize) {
            *s = v;
        }
    }

    /// The abstract value of a field of type `ty` at `record.field`.
    fn of_type(&mut self, ty: &Ty, record: RecordId, field: usize) -> Abs {
        match ty {
            Ty::Str | Ty::Id => Abs::Str(self.site(Site { record, field, key: false })),
            Ty::Record(r) => Abs::Rec(*r),
            Ty::List(t) => Abs::List(Box::new(self.of_type(t, record, field))),
            Ty::Map(k, v) => {
                let key = match **k {
                    Ty::Str | Ty::Id => Abs::Str(self.site(Site { record, field, key: true })),
                    _ => Abs::Other,
                };
                Abs::Map(Box::new(key), Box::new(self.of_type(v, record, field)))
            }
            _ => Abs::Other,
        }
    }

    fn unify(&mut self, a: &Abs, b: &Abs) {
        match (a, b) {
            (Abs::Str(x), Abs::Str(y)) => self.union(*x, *y),
            (Abs::List(x), Abs::List(y)) | (Abs::Pairs(x), Abs::Pairs(y)) => self.unify(x, y),
            (Abs::Map(k, v), Abs::Map(l, w)) => {
                self.unify(k, l);
                self.unify(v, w);
            }
            _ => {}
        }
    }

    fn bind(&mut self, pattern: &PatternDef, domain: &Abs) {
        let (first, second) = match (domain, pattern) {
            (Abs::List(e), PatternDef::Entry(..)) => (Abs::Other, (**e).clone()),
            (Abs::List(e), _) => ((**e).clone(), Abs::Other),
            (Abs::Map(k, v), _) => ((**k).clone(), (**v).clone()),
            (Abs::Pairs(e), _) => ((**e).clone(), (**e).clone()),
            _ => (Abs::Other, Abs::Other),
        };
        match *pattern {
            PatternDef::One(a) => self.set(a, first),
            PatternDef::Entry(a, b) | PatternDef::Pair(a, b) => {
                self.set(a, first);
                self.set(b, second);
            }
        }
    }

    fn eval(&mut self, e: &Expr) -> Abs {
        match &e.kind {
            ExprKind::Lit(v) => match &v.kind {
                ValKind::Str(s) => Abs::Str(self.literal(s)),
                ValKind::Int(i) => {
                    self.ints.insert(*i);
                    Abs::Other
                }
                _ => Abs::Other,
            },
            ExprKind::Var(s) => self.env.get(*s as usize).cloned().unwrap_or(Abs::Other),
            ExprKind::Doc(k) => Abs::Rec(self.policy.documents[*k as usize].record),
            ExprKind::Docs(k) => Abs::List(Box::new(Abs::Rec(self.policy.documents[*k as usize].record))),
            ExprKind::Matrix(_) | ExprKind::Domain(_) | ExprKind::Now | ExprKind::Param(_) => Abs::Other,
            ExprKind::Field(base, i) => match self.eval(base) {
                Abs::Rec(r) => {
                    self.read.insert((r, *i));
                    let ty = self.policy.records[r as usize].fields[*i].ty.clone();
                    self.of_type(&ty, r, *i)
                }
                _ => Abs::Other,
            },
            ExprKind::Column(row, i) => {
                let ExprKind::MatrixRow(m, key) = &row.kind else {
                    self.eval(row);
                    return Abs::Other;
                };
                self.eval(key);
                let def = &self.policy.matrices[*m as usize];
                let cells: Vec<Arc<str>> = def
                    .cells
                    .iter()
                    .filter_map(|r| match &r.get(*i)?.kind {
                        ValKind::Str(s) => Some(s.clone()),
                        _ => None,
                    })
                    .collect();
                if cells.is_empty() {
                    return Abs::Other;
                }
                let c = self.class();
                for s in cells {
                    let l = self.literal(&s);
                    self.union(c, l);
                }
                Abs::Str(c)
            }
            ExprKind::MatrixRow(_, key) => {
                self.eval(key);
                Abs::Other
            }
            ExprKind::MapGet(base, key) => {
                let b = self.eval(base);
                let k = self.eval(key);
                match b {
                    Abs::Map(kt, v) => {
                        self.unify(&kt, &k);
                        *v
                    }
                    _ => Abs::Other,
                }
            }
            ExprKind::ListGet(list, index) => {
                self.eval(index);
                match self.eval(list) {
                    Abs::List(e) => *e,
                    _ => Abs::Other,
                }
            }
            ExprKind::Not(x)
            | ExprKind::Present(x)
            | ExprKind::Valid(x)
            | ExprKind::Empty(x)
            | ExprKind::Entries(x) => {
                self.eval(x);
                Abs::Other
            }
            ExprKind::ParseInt(x) | ExprKind::Timestamp(x) => {
                // Strings that read as what the rule wants, and one that does not.
                if let Abs::Str(c) = self.eval(x) {
                    let samples: &[&str] = if matches!(e.kind, ExprKind::ParseInt(_)) {
                        &["0", "1"]
                    } else {
                        &["2024-01-01T00:00:00Z", "2024-01-02T00:00:00Z", "2024-01-05T00:00:00Z"]
                    };
                    for s in samples {
                        let l = self.literal(s);
                        self.union(c, l);
                    }
                }
                Abs::Other
            }
            ExprKind::Count(x)
            | ExprKind::Reason(x)
            | ExprKind::DurationOf(_, x)
            | ExprKind::Fold { list: x, .. }
            | ExprKind::BoundTo(x, _) => {
                self.eval(x);
                Abs::Other
            }
            ExprKind::Holds(_, x) | ExprKind::Failure(_, x) => {
                self.eval(x);
                Abs::Other
            }
            ExprKind::Builtin(Builtin::Flatten, args) if args.len() == 1 => match self.eval(&args[0]) {
                Abs::List(inner) => match *inner {
                    Abs::List(e) => Abs::List(e),
                    _ => Abs::Other,
                },
                _ => Abs::Other,
            },
            ExprKind::Builtin(_, args) => {
                for a in args {
                    self.eval(a);
                }
                Abs::Other
            }
            ExprKind::And(a, b) | ExprKind::Or(a, b) | ExprKind::Tighter(a, b) => {
                self.eval(a);
                self.eval(b);
                Abs::Other
            }
            ExprKind::Add(a, b) | ExprKind::Sub(a, b) | ExprKind::Mul(a, b) => {
                self.eval(a);
                self.eval(b);
                Abs::Other
            }
            ExprKind::Compare(_, a, b) => {
                let (x, y) = (self.eval(a), self.eval(b));
                self.unify(&x, &y);
                Abs::Other
            }
            ExprKind::In(x, coll) => {
                let v = self.eval(x);
                match self.eval(coll) {
                    Abs::List(e) => self.unify(&v, &e),
                    Abs::Map(k, _) => self.unify(&v, &k),
                    _ => {}
                }
                Abs::Other
            }
            ExprKind::Coalesce(a, b) | ExprKind::Concat(a, b) | ExprKind::Max(a, b) | ExprKind::Min(a, b) => {
                let (x, y) = (self.eval(a), self.eval(b));
                self.unify(&x, &y);
                x
            }
            ExprKind::CountBy { slot, domain, key } => {
                let d = self.eval(domain);
                self.bind(&PatternDef::One(*slot), &d);
                self.eval(key);
                Abs::Other
            }
            ExprKind::Pairs(x) => match self.eval(x) {
                Abs::List(e) => Abs::Pairs(e),
                _ => Abs::Other,
            },
            ExprKind::Distinct(x) | ExprKind::Lower(x) | ExprKind::Trim(x) => self.eval(x),
            ExprKind::Url(_, x) => {
                self.eval(x);
                Abs::Other
            }
            ExprKind::TrimSuffix(x, s) => {
                self.eval(s);
                self.eval(x)
            }
            ExprKind::Split(x, s) => {
                self.eval(s);
                let v = self.eval(x);
                if let (Abs::Str(c), ExprKind::Lit(sep)) = (&v, &s.kind)
                    && let ValKind::Str(sep) = &sep.kind
                    && !sep.is_empty()
                {
                    self.splits.push((*c, sep.to_string()));
                }
                Abs::List(Box::new(v))
            }
            ExprKind::Matches(x, re) => {
                if let Abs::Str(c) = self.eval(x) {
                    self.regexes.push((c, re.as_str().to_string()));
                }
                Abs::Other
            }
            ExprKind::List(items) => {
                let vals: Vec<Abs> = items.iter().map(|i| self.eval(i)).collect();
                for w in vals.windows(2) {
                    self.unify(&w[0], &w[1]);
                }
                Abs::List(Box::new(vals.into_iter().next().unwrap_or(Abs::Other)))
            }
            ExprKind::Quant { pattern, domain, body, .. } => {
                let d = self.eval(domain);
                self.bind(pattern, &d);
                self.eval(body);
                Abs::Other
            }
            ExprKind::Comprehension { value, pattern, domain, filter } => {
                let d = self.eval(domain);
                self.bind(pattern, &d);
                if let Some(f) = filter {
                    self.eval(f);
                }
                Abs::List(Box::new(self.eval(value)))
            }
            ExprKind::Let { slot, value, body } => {
                let v = self.eval(value);
                self.set(*slot, v);
                self.eval(body)
            }
        }
    }
}

/// A short string the regular expression matches, if one is easily made.
pub fn sample(pattern: &str) -> Option<String> {
    use regex_syntax::hir::{Class, Hir, HirKind};
    fn pick(c: &Class) -> Option<char> {
        const NICE: &str = "abcxyz0123456789-.";
        match c {
            Class::Unicode(u) => {
                let inside = |ch: char| u.ranges().iter().any(|r| r.start() <= ch && ch <= r.end());
                NICE.chars().find(|ch| inside(*ch)).or_else(|| u.ranges().first().map(|r| r.start()))
            }
            Class::Bytes(b) => {
                let inside = |ch: u8| b.ranges().iter().any(|r| r.start() <= ch && ch <= r.end());
                NICE.bytes().find(|ch| inside(*ch)).or_else(|| b.ranges().first().map(|r| r.start())).map(char::from)
            }
        }
    }
    fn walk(h: &Hir, out: &mut String) -> Option<()> {
        match h.kind() {
            HirKind::Empty | HirKind::Look(_) => {}
            HirKind::Literal(l) => out.push_str(std::str::from_utf8(&l.0).ok()?),
            HirKind::Class(c) => out.push(pick(c)?),
            HirKind::Repetition(r) => {
                for _ in 0..r.min {
                    walk(&r.sub, out)?;
                }
            }
            HirKind::Capture(c) => walk(&c.sub, out)?,
            HirKind::Concat(items) => {
                for i in items {
                    walk(i, out)?;
                }
            }
            HirKind::Alternation(items) => walk(items.first()?, out)?,
        }
        Some(())
    }
    let hir = regex_syntax::Parser::new().parse(pattern).ok()?;
    let mut out = String::new();
    walk(&hir, &mut out)?;
    let re = regex::Regex::new(pattern).ok()?;
    re.is_match(&out).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::sample;

    #[test]
    fn samples_match_their_pattern() {
        assert_eq!(sample("^https://[^/?#\\s]+([/?#]\\S*)?$").as_deref(), Some("https://a"));
        let t = sample("^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$").unwrap_or_default();
        assert!(t.starts_with("00-aaaa") && t.ends_with("-00"), "{t}");
        assert_eq!(sample("^file:").as_deref(), Some("file:"));
    }
}
