//! Propositional formulas over solver literals: constants are folded, AND
//! gates are hash-consed and Tseitin-encoded into the solver as they are
//! built, and counts go through rustsat's totalizer.

use std::collections::HashMap;

use rustsat::encodings::card::{BoundBoth, BoundLower, BoundUpper, Totalizer};
use rustsat::instances::{BasicVarManager, ManageVars};
use rustsat::solvers::{Solve, SolveIncremental, SolverResult};
use rustsat::types::{Clause, Lit, TernaryVal};
use rustsat_batsat::BasicSolver;

/// A formula node: a constant, or a solver literal (possibly a gate).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum B {
    T,
    F,
    L(Lit),
}

impl B {
    pub fn negate(self) -> B {
        match self {
            B::T => B::F,
            B::F => B::T,
            B::L(l) => B::L(!l),
        }
    }
    pub fn constant(b: bool) -> B {
        if b { B::T } else { B::F }
    }
}

/// The formula builder and the solvers it writes to: one per part (a
/// connected component of the clauses), see [`Parts`].
#[derive(Default)]
pub struct Builder {
    vm: BasicVarManager,
    ands: HashMap<Vec<Lit>, Lit>,
    parts: Parts,
    /// Clauses added, for statistics.
    pub clauses: usize,
    /// Solver calls made.
    pub solves: usize,
}

/// A builder's formula without its solvers: see [`Builder::fork`].
pub struct Formula {
    vm: BasicVarManager,
    ands: HashMap<Vec<Lit>, Lit>,
    kinds: Vec<(batsat::lbool, bool)>,
    parent: Vec<u32>,
    all: Vec<Vec<Lit>>,
    clauses: usize,
}

impl From<Formula> for Builder {
    fn from(f: Formula) -> Builder {
        let n = f.kinds.len();
        Builder {
            vm: f.vm,
            ands: f.ands,
            parts: Parts {
                kinds: f.kinds,
                parent: f.parent,
                all: f.all,
                placed: 0,
                place: vec![None; n],
                parts: Vec::new(),
                free: vec![false; n],
                empty: false,
            },
            clauses: f.clauses,
            solves: 0,
        }
    }
}

/// What a solver call answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    Sat,
    /// Unsatisfiable; the assumptions in the core (a subset of those given).
    Unsat(Vec<Lit>),
}

impl Builder {
    /// A fresh literal for a gate: defined by its inputs, so the solver
    /// never decides it (propagation sets it once its inputs are set).
    pub fn fresh(&mut self) -> Lit {
        let l = self.vm.new_lit();
        self.parts.declare(l, batsat::lbool::UNDEF, false);
        l
    }

    /// A fresh literal for a choice about a document; the solver tries it
    /// false first, so models are small unless something needs more.
    pub fn atom(&mut self) -> Lit {
        let l = self.vm.new_lit();
        self.parts.declare(l, batsat::lbool::FALSE, true);
        l
    }

    /// A fresh, unconstrained literal the solver decides (an over-approximation).
    pub fn fresh_b(&mut self) -> B {
        let l = self.vm.new_lit();
        self.parts.declare(l, batsat::lbool::UNDEF, true);
        B::L(l)
    }

    pub fn vars(&self) -> u32 {
        self.vm.n_used()
    }

    /// The formula without its solvers (a solver stays on its thread): a
    /// builder made from it (`Builder::from`) holds what a builder that
    /// added the same literals and clauses in the same order holds before
    /// its first call, so it answers every question as that builder would.
    /// Cheaper than building the formula again.
    pub fn fork(&self) -> Formula {
        Formula {
            vm: self.vm.clone(),
            ands: self.ands.clone(),
            kinds: self.parts.kinds.clone(),
            parent: self.parts.parent.clone(),
            all: self.parts.all.clone(),
            clauses: self.clauses,
        }
    }

    fn add(&mut self, lits: Vec<Lit>) {
        self.clauses += 1;
        self.parts.add(lits);
    }

    /// Adds a hard clause over formula nodes.
    pub fn clause(&mut self, xs: &[B]) {
        let mut lits = Vec::with_capacity(xs.len());
        for x in xs {
            match x {
                B::T => return,
                B::F => {}
                B::L(l) => lits.push(*l),
            }
        }
        self.add(lits);
    }

    pub fn assert(&mut self, x: B) {
        self.clause(&[x]);
    }

    pub fn implies(&mut self, a: B, b: B) {
        self.clause(&[a.negate(), b]);
    }

    pub fn and(&mut self, xs: impl IntoIterator<Item = B>) -> B {
        let mut lits: Vec<Lit> = Vec::new();
        for x in xs {
            match x {
                B::T => {}
                B::F => return B::F,
                B::L(l) => lits.push(l),
            }
        }
        lits.sort_unstable();
        lits.dedup();
        for w in lits.windows(2) {
            if w[0].var() == w[1].var() {
                return B::F; // x and not x
            }
        }
        match lits.len() {
            0 => B::T,
            1 => B::L(lits[0]),
            _ => {
                if let Some(&y) = self.ands.get(&lits) {
                    return B::L(y);
                }
                let y = self.fresh();
                for &l in &lits {
                    self.add(vec![!y, l]);
                }
                let mut long: Vec<Lit> = lits.iter().map(|l| !*l).collect();
                long.push(y);
                self.add(long);
                self.ands.insert(lits, y);
                B::L(y)
            }
        }
    }

    pub fn or(&mut self, xs: impl IntoIterator<Item = B>) -> B {
        let negated: Vec<B> = xs.into_iter().map(B::negate).collect();
        self.and(negated).negate()
    }

    pub fn and2(&mut self, a: B, b: B) -> B {
        self.and([a, b])
    }

    pub fn or2(&mut self, a: B, b: B) -> B {
        self.or([a, b])
    }

    /// `a` and `b` have the same value.
    pub fn iff(&mut self, a: B, b: B) -> B {
        let both = self.and2(a, b);
        let neither = self.and2(a.negate(), b.negate());
        self.or2(both, neither)
    }

    /// `c ? a : b`.
    pub fn ite(&mut self, c: B, a: B, b: B) -> B {
        let x = self.and2(c, a);
        let y = self.and2(c.negate(), b);
        self.or2(x, y)
    }

    /// At most one of `xs` holds (pairwise; the sets are small).
    pub fn at_most_one(&mut self, xs: &[B]) {
        let live: Vec<B> = xs.iter().copied().filter(|x| *x != B::F).collect();
        for i in 0..live.len() {
            for j in i + 1..live.len() {
                self.clause(&[live[i].negate(), live[j].negate()]);
            }
        }
    }

    /// `ge[k]` holds exactly when at least `k` of `xs` hold, for `k` in
    /// `0..=xs.len()` (`ge[0]` is true), through a totalizer encoded both ways.
    pub fn count(&mut self, xs: &[B]) -> Vec<B> {
        let sure = xs.iter().filter(|x| **x == B::T).count();
        let lits: Vec<Lit> = xs.iter().filter_map(|x| if let B::L(l) = x { Some(*l) } else { None }).collect();
        let mut ge = vec![B::T; sure + 1];
        if lits.len() == 1 {
            ge.push(B::L(lits[0]));
        } else if !lits.is_empty() {
            let n = lits.len();
            let mut tot = Totalizer::from(lits);
            let mut vm = std::mem::take(&mut self.vm);
            // INVARIANT: encoding into the solver never runs out of memory here.
            let _ = tot.encode_both(0..=n, &mut TotCollect { b: self }, &mut vm);
            self.vm = vm;
            for k in 1..=n {
                let lb = tot.enforce_lb(k).unwrap_or_default();
                let mut parts = Vec::new();
                for l in lb {
                    parts.push(B::L(l));
                }
                let x = self.and(parts);
                ge.push(x);
            }
        }
        ge.push(B::F);
        ge
    }

    /// A totalizer for "at most k of `xs`": returns the literal that enforces
    /// the bound for each `k` in `0..xs.len()` (index `k`).
    pub fn at_most(&mut self, xs: &[Lit], up_to: usize) -> Vec<B> {
        let n = xs.len();
        let mut out_lits = Vec::new();
        if n == 0 {
            return vec![B::T; up_to + 1];
        }
        let mut tot = Totalizer::from(xs.to_vec());
        let mut vm = std::mem::take(&mut self.vm);
        let _ = tot.encode_ub(0..=up_to.min(n), &mut TotCollect { b: self }, &mut vm);
        self.vm = vm;
        for k in 0..=up_to {
            match tot.enforce_ub(k) {
                Ok(lits) => {
                    let parts: Vec<B> = lits.into_iter().map(B::L).collect();
                    let x = self.and(parts);
                    out_lits.push(x);
                }
                Err(_) => out_lits.push(B::T),
            }
        }
        out_lits
    }

    /// Solves under assumptions (constants are dropped or make it trivially unsat).
    pub fn solve(&mut self, assumptions: &[B]) -> Answer {
        let mut lits = Vec::new();
        for a in assumptions {
            match a {
                B::T => {}
                B::F => return Answer::Unsat(Vec::new()),
                B::L(l) => lits.push(*l),
            }
        }
        self.solves += 1;
        self.parts.solve(&lits)
    }

    /// The value of a node in the last satisfying assignment.
    pub fn value(&self, x: B) -> bool {
        match x {
            B::T => true,
            B::F => false,
            B::L(l) => self.parts.value(l),
        }
    }
}

/// The formula's clauses in parts: the connected components of the graph in
/// which two variables that share a clause are linked. Each part has its own
/// solver over its own variables (numbered from 0 within it), so a question
/// propagates and assigns only the parts it concerns; a part whose model
/// already satisfies the assumptions it is given is not solved again, and
/// the models of parts that share no variable make a model of the whole.
#[derive(Default)]
struct Parts {
    /// Each variable's polarity and whether the solver decides it.
    kinds: Vec<(batsat::lbool, bool)>,
    /// Union-find over variables (the parent of each; a root is its own).
    parent: Vec<u32>,
    /// Every clause, in the order added.
    all: Vec<Vec<Lit>>,
    /// How many of `all` are in a part's solver.
    placed: usize,
    /// Where each variable lives: its part and its number there.
    place: Vec<Option<(u32, u32)>>,
    parts: Vec<Part>,
    /// The value each variable outside every part was last assumed to have.
    free: Vec<bool>,
    /// Whether the empty clause was added (nothing satisfies the formula).
    empty: bool,
}

struct Part {
    solver: BasicSolver,
    /// The union-find root of its variables; `None` once merged into another.
    root: Option<u32>,
    /// Whether the solver holds a model of every clause of the part.
    model: bool,
}

impl Parts {
    /// Gives `l` its polarity and decision flag; a variable made by another
    /// (a totalizer's, through the variable manager) is one the solver decides.
    fn declare(&mut self, l: Lit, polarity: batsat::lbool, decision: bool) {
        let v = l.vidx();
        while self.kinds.len() <= v {
            let next = self.kinds.len() as u32;
            self.kinds.push((batsat::lbool::UNDEF, true));
            self.parent.push(next);
            self.place.push(None);
            self.free.push(false);
        }
        self.kinds[v] = (polarity, decision);
    }

    fn find(&mut self, v: u32) -> u32 {
        let mut root = v;
        while self.parent[root as usize] != root {
            root = self.parent[root as usize];
        }
        let mut at = v;
        while self.parent[at as usize] != root {
            let next = self.parent[at as usize];
            self.parent[at as usize] = root;
            at = next;
        }
        root
    }

    fn add(&mut self, lits: Vec<Lit>) {
        for l in &lits {
            // A literal the builder did not create (a totalizer's): an
            // upper-bound totalizer does not define its outputs, so the solver decides them.
            if l.vidx() >= self.kinds.len() {
                self.declare(*l, batsat::lbool::UNDEF, true);
            }
        }
        if let Some((first, rest)) = lits.split_first() {
            for l in rest {
                let (a, b) = (self.find(first.vidx32()), self.find(l.vidx32()));
                if a != b {
                    self.parent[a as usize] = b;
                }
            }
        }
        self.all.push(lits);
    }

    /// Puts every clause added since the last call into a part: into the
    /// part of its variables, or, when it links parts or has none, into a
    /// part rebuilt from every clause of its component.
    fn sync(&mut self) {
        if self.placed == self.all.len() {
            return;
        }
        // Parts that a new clause linked to another share a root: retire them.
        let mut by_root: HashMap<u32, usize> = HashMap::new();
        let mut retired = false;
        for i in 0..self.parts.len() {
            let Some(old) = self.parts[i].root else { continue };
            let root = self.find(old);
            self.parts[i].root = Some(root);
            if let Some(j) = by_root.insert(root, i) {
                for k in [i, j] {
                    self.parts[k] = Part { solver: BasicSolver::default(), root: None, model: false };
                }
                retired = true;
            }
        }
        by_root.retain(|_, i| self.parts[*i].root.is_some());
        if retired {
            for p in self.place.iter_mut() {
                if let Some((part, _)) = *p
                    && self.parts[part as usize].root.is_none()
                {
                    *p = None;
                }
            }
        }
        // The new clauses go to their part; those of a component without one are gathered.
        let from = if retired { 0 } else { self.placed };
        let mut fresh: Vec<(u32, usize)> = Vec::new();
        for c in from..self.all.len() {
            let Some(first) = self.all[c].first() else {
                self.empty = true;
                continue;
            };
            let root = self.find(first.vidx32());
            match by_root.get(&root) {
                Some(p) if c >= self.placed => self.load(*p, c),
                Some(_) => {}
                None => fresh.push((root, c)),
            }
        }
        fresh.sort_unstable();
        let mut i = 0;
        while i < fresh.len() {
            let root = fresh[i].0;
            self.parts.push(Part { solver: BasicSolver::default(), root: Some(root), model: false });
            let p = self.parts.len() - 1;
            while i < fresh.len() && fresh[i].0 == root {
                self.load(p, fresh[i].1);
                i += 1;
            }
        }
        self.placed = self.all.len();
    }

    /// Adds clause `c` to part `p`, giving its new variables their numbers there.
    fn load(&mut self, p: usize, c: usize) {
        let mut local = Vec::with_capacity(self.all[c].len());
        for l in &self.all[c] {
            let v = l.vidx();
            let at = match self.place[v] {
                Some((_, at)) => at,
                None => {
                    use batsat::SolverInterface;
                    let (polarity, decision) = self.kinds[v];
                    let at = self.parts[p].solver.batsat_mut().new_var(polarity, decision).idx();
                    self.place[v] = Some((p as u32, at));
                    at
                }
            };
            local.push(if l.is_neg() { !Lit::positive(at) } else { Lit::positive(at) });
        }
        let part = &mut self.parts[p];
        part.model = false;
        // INVARIANT: the batsat backend never fails to add a clause.
        let _ = Solve::add_clause(&mut part.solver, Clause::from_iter(local));
    }

    fn solve(&mut self, lits: &[Lit]) -> Answer {
        self.sync();
        if self.empty {
            return Answer::Unsat(Vec::new());
        }
        let mut asked: Vec<Vec<(Lit, Lit)>> = vec![Vec::new(); self.parts.len()];
        for l in lits {
            match self.place[l.vidx()] {
                Some((p, at)) => {
                    let local = if l.is_neg() { !Lit::positive(at) } else { Lit::positive(at) };
                    asked[p as usize].push((*l, local));
                }
                None => self.free[l.vidx()] = l.is_pos(),
            }
        }
        // A variable outside every part assumed both ways.
        for l in lits {
            if self.place[l.vidx()].is_none() && lits.contains(&!*l) {
                let mut core = vec![*l, !*l];
                core.sort_unstable();
                return Answer::Unsat(core);
            }
        }
        for (p, asked) in asked.iter().enumerate() {
            let part = &mut self.parts[p];
            if part.root.is_none() {
                continue;
            }
            let holds = |part: &Part, local: Lit| matches!(part.solver.lit_val(local), Ok(TernaryVal::True));
            if part.model && asked.iter().all(|(_, local)| holds(part, *local)) {
                continue;
            }
            let local: Vec<Lit> = asked.iter().map(|(_, local)| *local).collect();
            match part.solver.solve_assumps(&local) {
                Ok(SolverResult::Sat) => part.model = true,
                _ => {
                    part.model = false;
                    let core = part.solver.core().unwrap_or_default();
                    // The core holds negated assumptions; give back the assumptions.
                    let mut given: Vec<Lit> = Vec::new();
                    // Both polarities of a variable may be assumed (one hard, one soft): give back each.
                    for c in core {
                        given.extend(asked.iter().filter(|(_, local)| local.var() == c.var()).map(|(l, _)| *l));
                    }
                    given.sort_unstable();
                    given.dedup();
                    return Answer::Unsat(given);
                }
            }
        }
        Answer::Sat
    }

    fn value(&self, l: Lit) -> bool {
        let v = l.vidx();
        match self.place.get(v).copied().flatten() {
            Some((p, at)) => {
                let part = &self.parts[p as usize];
                let local = if l.is_neg() { !Lit::positive(at) } else { Lit::positive(at) };
                part.model && matches!(part.solver.lit_val(local), Ok(TernaryVal::True))
            }
            None => self.free.get(v).is_some_and(|b| *b == l.is_pos()),
        }
    }
}

/// Lets a totalizer write its clauses into the builder.
struct TotCollect<'a> {
    b: &'a mut Builder,
}

impl rustsat::encodings::CollectClauses for TotCollect<'_> {
    fn n_clauses(&self) -> usize {
        self.b.clauses
    }

    fn extend_clauses<T>(&mut self, cl_iter: T) -> Result<(), rustsat::OutOfMemory>
    where
        T: IntoIterator<Item = Clause>,
    {
        for cl in cl_iter {
            self.b.add(cl.iter().copied().collect());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two atoms in one clause, two in another: two parts.
    fn two_parts() -> (Builder, [Lit; 4]) {
        let mut b = Builder::default();
        let xs = [b.atom(), b.atom(), b.atom(), b.atom()];
        b.clause(&[B::L(xs[0]), B::L(xs[1])]);
        b.clause(&[B::L(xs[2]), B::L(xs[3])]);
        (b, xs)
    }

    #[test]
    fn the_models_of_separate_parts_make_a_model_of_the_whole() {
        let (mut b, [a, c, d, e]) = two_parts();
        assert_eq!(b.solve(&[B::L(!a)]), Answer::Sat);
        assert!(b.value(B::L(c)), "the first clause holds");
        assert!(b.value(B::L(d)) || b.value(B::L(e)), "the second clause holds");
        // A question about the second part only: the first keeps its model, which still satisfies it.
        assert_eq!(b.solve(&[B::L(!a), B::L(!d)]), Answer::Sat);
        assert!(!b.value(B::L(a)) && b.value(B::L(c)) && !b.value(B::L(d)) && b.value(B::L(e)));
        assert_eq!(b.parts.parts.iter().filter(|p| p.root.is_some()).count(), 2);
    }

    #[test]
    fn a_clause_that_links_two_parts_merges_them_and_binds_both() {
        let (mut b, [a, _, d, e]) = two_parts();
        assert_eq!(b.solve(&[B::L(a), B::L(d)]), Answer::Sat);
        // a implies not d, across the parts: the model held so far no longer satisfies it.
        b.clause(&[B::L(!a), B::L(!d)]);
        assert!(matches!(b.solve(&[B::L(a), B::L(d)]), Answer::Unsat(_)));
        assert_eq!(b.solve(&[B::L(a)]), Answer::Sat);
        assert!(b.value(B::L(a)) && !b.value(B::L(d)) && b.value(B::L(e)));
        assert_eq!(b.parts.parts.iter().filter(|p| p.root.is_some()).count(), 1);
    }

    #[test]
    fn an_unsatisfiable_part_answers_with_the_assumptions_it_was_given() {
        let (mut b, [a, c, d, e]) = two_parts();
        match b.solve(&[B::L(!a), B::L(!c), B::L(!d)]) {
            Answer::Unsat(mut core) => {
                let mut want = vec![!a, !c];
                want.sort_unstable();
                core.sort_unstable();
                assert_eq!(core, want);
            }
            Answer::Sat => panic!("a or c must hold"),
        }
        // Both polarities of one variable outside every part.
        let free = b.atom();
        assert!(matches!(b.solve(&[B::L(free), B::L(!free), B::L(e)]), Answer::Unsat(core) if core.len() == 2));
        assert_eq!(b.solve(&[B::L(free)]), Answer::Sat);
        assert!(b.value(B::L(free)) && !b.value(B::L(!free)));
    }

    #[test]
    fn the_empty_clause_makes_every_question_unsatisfiable() {
        let (mut b, [a, ..]) = two_parts();
        assert_eq!(b.solve(&[B::L(a)]), Answer::Sat);
        b.assert(B::F);
        assert_eq!(b.solve(&[]), Answer::Unsat(Vec::new()));
    }

    #[test]
    fn a_fork_answers_as_the_formula_built_anew() {
        // Built twice, the same way: one asked questions, then forked; the
        // fork gives the models the other gave, call for call.
        let build = || {
            let mut b = Builder::default();
            let xs: Vec<B> = (0..6).map(|_| B::L(b.atom())).collect();
            b.clause(&[xs[0], xs[1], xs[2]]);
            b.clause(&[xs[2].negate(), xs[3]]);
            let ge = b.count(&xs[3..]);
            b.implies(xs[0], ge[2]);
            (b, xs)
        };
        let (mut fresh, xs) = build();
        let (mut asked, _) = build();
        let questions: [&[B]; 4] =
            [&[], &[xs[1].negate(), xs[2].negate()], &[xs[3].negate()], &[xs[0], xs[4].negate()]];
        let _ = asked.solve(questions[1]);
        let _ = asked.solve(questions[3]);
        let mut fork = Builder::from(asked.fork());
        assert_eq!(fork.solves, 0);
        assert!(fork.parts.parts.is_empty(), "no solver built yet");
        for q in questions {
            assert_eq!(fork.solve(q), fresh.solve(q));
            let models = |b: &Builder| xs.iter().map(|x| b.value(*x)).collect::<Vec<_>>();
            assert_eq!(models(&fork), models(&fresh), "{q:?}");
        }
        assert_eq!((fork.vars(), fork.clauses), (fresh.vars(), fresh.clauses));
    }

    #[test]
    fn counts_over_several_parts_are_exact() {
        // A totalizer over atoms of separate parts links them; "at least 2 of 3" with one forced off.
        let mut b = Builder::default();
        let xs: Vec<B> = (0..3).map(|_| B::L(b.atom())).collect();
        let ge = b.count(&xs);
        assert_eq!(b.solve(&[ge[2], xs[0].negate()]), Answer::Sat);
        assert!(b.value(xs[1]) && b.value(xs[2]) && !b.value(xs[0]));
        assert!(matches!(b.solve(&[ge[3], xs[0].negate()]), Answer::Unsat(_)));
    }
}
