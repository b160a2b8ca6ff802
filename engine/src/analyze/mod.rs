//! `grail analyze`: principle 6 of the design. A rule set must be
//! satisfiable and every rule must be able to fire.
//!
//! The policy is total over finite domains once documents are bounded, so
//! the questions are decided by a SAT solver over a bounded symbolic
//! deployment (see ARCHITECTURE.md, "Analysis"): a witness per subject, the
//! smallest conflicting set when there is none, whether each rule can fire,
//! a minimal fixture pair per rule, and lints. Every document the solver
//! proposes is decoded and confirmed by the real checker.

pub mod flow;
pub mod formula;
pub mod lints;
pub mod model;
mod search;
pub mod sym;
pub mod symbolic;

use crate::diagnostic::PolicyDiagnostic;
use crate::hir::{Loc, Policy};

pub use model::Bounds;
pub use search::{ATTACHED, Differential, Disagreement, differential};

/// One document of a deployment the analysis made: a file name and its text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DocText {
    pub path: String,
    pub text: String,
    /// The layer of trust the analysis binds it to (a kind whose layers are
    /// separate is checked at its most trusted layer), as `--layer NAME=FILE`.
    pub layer: Option<String>,
    /// The name the analysis gives it under, for a kind selected by the name
    /// a file is given under (`given "evidence"`), as `--evidence FILE` does.
    pub given: Option<String>,
}

/// What took part in a conflict or prevents a rule from firing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MemberKind {
    Rule,
    Floor,
    Ceiling,
    Unique,
    Type,
}

impl MemberKind {
    pub fn as_str(self) -> &'static str {
        match self {
            MemberKind::Rule => "rule",
            MemberKind::Floor => "floor",
            MemberKind::Ceiling => "ceiling",
            MemberKind::Unique => "unique",
            MemberKind::Type => "type",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    /// A rule id, or what a type says (`Topology.min_checkers is an integer of at least 1`).
    pub id: String,
    pub kind: MemberKind,
    pub loc: Loc,
    /// What the checker says about a document that satisfies every other member.
    pub note: String,
}

/// A subject: a document kind, or one key (a work class) of the maps rules iterate over.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Subject {
    pub name: String,
    /// A satisfying deployment, when there is one.
    pub witness: Option<Vec<DocText>>,
    /// Why the checker does not confirm the witness, if it does not.
    pub problem: Option<String>,
    /// The rules that apply (and pass) in the witness.
    pub applies: Vec<String>,
    /// The conflict (index into `Analysis::conflicts`) when there is no witness.
    pub conflict: Option<usize>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conflict {
    pub subjects: Vec<String>,
    pub members: Vec<Member>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    /// A document fires it (confirmed by the checker).
    Fires,
    /// No document within the bounds fires it; the members say why.
    Dead(Vec<Member>),
    /// Not shown to fire within the bounds, but the rule uses constructs
    /// whose domain is the string pool or approximated; not a verdict.
    NotShown(Vec<Member>),
    /// The solver found a document, but the checker does not confirm it.
    Unconfirmed(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fixture {
    pub fail: Vec<DocText>,
    pub pass: Vec<DocText>,
    /// The files each twin names by `ref` that are not documents of it: the
    /// analysis reads each as `{}` (`ATTACHED`), never its content.
    pub attached: (Vec<String>, Vec<String>),
    /// Document atoms (presence bits, chosen values) in which the twins differ.
    pub distance: usize,
    /// Why the checker does not confirm the pair, if it does not.
    pub problem: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleReport {
    pub id: String,
    pub loc: Loc,
    pub kind: MemberKind,
    pub status: Status,
    /// Constructs encoded by an unconstrained variable.
    pub approximate: Vec<String>,
    /// Constructs computed over the string pool.
    pub pooled: Vec<String>,
    /// Other rules that fail whenever this one fires.
    pub fires_with: Vec<String>,
    pub fixture: Option<Fixture>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub variables: u32,
    pub clauses: usize,
    pub solves: usize,
}

/// Everything `grail analyze` found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Analysis {
    pub bounds: Bounds,
    pub subjects: Vec<Subject>,
    pub conflicts: Vec<Conflict>,
    pub rules: Vec<RuleReport>,
    /// Structural checks, judged on a document's text: not analysed.
    pub structural: Vec<(String, Loc)>,
    /// Warnings (lints), and an error per conflict and dead rule.
    pub diagnostics: Vec<PolicyDiagnostic>,
    pub stats: Stats,
}

impl Analysis {
    /// Whether a conflict or a dead rule was found (exit status 1).
    pub fn failed(&self) -> bool {
        !self.conflicts.is_empty() || self.rules.iter().any(|r| matches!(r.status, Status::Dead(_)))
    }
}

/// Analyses a compiled policy (one without errors) within `bounds`.
pub fn analyze(policy: &Policy, bounds: Bounds) -> Analysis {
    let mut analysis = search::run(policy, bounds);
    let mut lints = lints::lints(policy);
    lints.append(&mut analysis.diagnostics);
    analysis.diagnostics = lints;
    analysis
}
