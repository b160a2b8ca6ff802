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

/// The formula builder and the solver it writes to.
#[derive(Default)]
pub struct Builder {
    solver: BasicSolver,
    vm: BasicVarManager,
    ands: HashMap<Vec<Lit>, Lit>,
    /// Clauses added, for statistics.
    pub clauses: usize,
    /// Solver calls made.
    pub solves: usize,
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
        self.declare(l, batsat::lbool::UNDEF, false);
        l
    }

    /// Creates the solver's variable for `l` (and any before it it has not seen).
    fn declare(&mut self, l: Lit, polarity: batsat::lbool, decision: bool) {
        use batsat::SolverInterface;
        let s = self.solver.batsat_mut();
        while s.num_vars() < l.vidx32() {
            s.new_var_default();
        }
        if s.num_vars() == l.vidx32() {
            s.new_var(polarity, decision);
        }
    }

    /// A fresh literal for a choice about a document; the solver tries it
    /// false first, so models are small unless something needs more.
    pub fn atom(&mut self) -> Lit {
        let l = self.vm.new_lit();
        self.declare(l, batsat::lbool::FALSE, true);
        l
    }

    /// A fresh, unconstrained literal the solver decides (an over-approximation).
    pub fn fresh_b(&mut self) -> B {
        let l = self.vm.new_lit();
        self.declare(l, batsat::lbool::UNDEF, true);
        B::L(l)
    }

    pub fn vars(&self) -> u32 {
        self.vm.n_used()
    }

    fn add(&mut self, lits: Vec<Lit>) {
        self.clauses += 1;
        // INVARIANT: the batsat backend never fails to add a clause.
        let _ = Solve::add_clause(&mut self.solver, Clause::from_iter(lits));
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
        if let Some(v) = self.vm.max_var() {
            let _ = self.solver.reserve(v);
        }
        self.solves += 1;
        match self.solver.solve_assumps(&lits) {
            Ok(SolverResult::Sat) => Answer::Sat,
            _ => {
                let core = self.solver.core().unwrap_or_default();
                // The core holds negated assumptions; give back the assumptions.
                let mut given: Vec<Lit> = Vec::new();
                // Both polarities of a variable may be assumed (one hard, one soft): give back each.
                for c in core {
                    given.extend(lits.iter().filter(|a| a.var() == c.var()));
                }
                given.sort_unstable();
                given.dedup();
                Answer::Unsat(given)
            }
        }
    }

    /// The value of a node in the last satisfying assignment.
    pub fn value(&self, x: B) -> bool {
        match x {
            B::T => true,
            B::F => false,
            B::L(l) => matches!(self.solver.lit_val(l), Ok(TernaryVal::True)),
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
            self.b.clauses += 1;
            let _ = Solve::add_clause(&mut self.b.solver, cl);
        }
        Ok(())
    }
}
