//! Diagnostics are data: what the engine found, independent of how it is shown.
//! Renderers (human, JSON, editor) live at the edge.

use grail_lang::ast::Span;

use crate::hir::Loc;

/// A problem in a policy: it does not parse, resolve or type check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicyDiagnostic {
    /// A stable code, e.g. `unknown-name`; see docs/language.md.
    pub code: &'static str,
    pub severity: Severity,
    pub message: String,
    pub loc: Loc,
    /// More spans, each with a label.
    pub labels: Vec<(Loc, String)>,
    pub help: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Warning,
    Error,
}

impl PolicyDiagnostic {
    pub fn error(code: &'static str, loc: Loc, message: impl Into<String>) -> Self {
        PolicyDiagnostic {
            code,
            severity: Severity::Error,
            message: message.into(),
            loc,
            labels: Vec::new(),
            help: None,
        }
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    pub fn with_label(mut self, loc: Loc, label: impl Into<String>) -> Self {
        self.labels.push((loc, label.into()));
        self
    }
}

/// The outcome of one rule for one subject.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Outcome {
    Pass,
    NotApplicable,
    Unknown,
    Fail,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::NotApplicable => "not_applicable",
            Outcome::Unknown => "unknown",
            Outcome::Fail => "fail",
        }
    }
}

/// One outcome of one rule for one subject of a deployment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub rule: String,
    pub outcome: Outcome,
    /// What the rule judged, e.g. `verification_topology.C4`.
    pub subject: String,
    /// Why it failed, why it is unknown, or why it does not apply.
    pub message: String,
    /// The document (its index in the deployment) and span the finding points at.
    pub location: Option<(u32, Span)>,
    /// Where the rule is declared in the policy.
    pub policy: Option<Loc>,
    /// Further document locations, each with a label.
    pub labels: Vec<(u32, Span, String)>,
    /// Where the values the subject was bound to are: the chain of `for`
    /// bindings, outermost first (for `holds`).
    pub bound: Vec<(u32, Span)>,
    /// How the outcome was derived, clause by clause (only when explaining).
    pub trace: Vec<Step>,
    /// Where the finding is in its document's keys (see [`crate::keypath`]).
    pub place: Place,
}

/// What places a finding in its document's keys, and the key paths once
/// they are computed (see [`crate::keypath`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Place {
    /// Where the key path starts when it is not at `location`: the map
    /// that would hold an entry the policy's defaults fill (a finding with
    /// no location), the nearest node above a collection a `for` found
    /// absent (a finding located at what the rule judged).
    pub anchor: Option<(u32, Span)>,
    /// Keys below `location` that the finding is about and the document
    /// does not hold, as a path suffix (`.name`, `[3]`): a required key left
    /// out, an absent value a rule points at. Empty when the finding is at
    /// `location` itself.
    pub below: Box<str>,
    /// Whether entries of a list of records that declare an identity are
    /// named by it (`slots["b"]`: findings of rules) rather than by position
    /// (`slots[1]`: structural findings).
    pub by_identity: bool,
    /// A FAIL or UNKNOWN that a `when ... else report` clause reports as
    /// NOT APPLICABLE: the message it would have had (for `holds` and
    /// `failure`, which still see it).
    pub reported: Option<Box<str>>,
    /// The key paths, computed when the findings of a check are finished,
    /// for every finding that is not a PASS.
    pub paths: Option<Box<KeyPaths>>,
}

impl Place {
    /// The place of a finding about a whole document of the kind whose
    /// binder is `binder`, placed nowhere in it.
    pub fn about(binder: &str) -> Place {
        let paths = KeyPaths { path: binder.to_string(), attachment_path: None, related: Vec::new() };
        Place { paths: Some(Box::new(paths)), ..Place::default() }
    }
}

/// The key paths of a finding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyPaths {
    /// Where the finding is: in the document, or, for a finding inside a
    /// file a `ref` field names, the entry that names the file.
    pub path: String,
    /// For a finding inside an attached file: where in that file.
    pub attachment_path: Option<String>,
    /// The paths of the finding's further locations (its labels), in order.
    pub related: Vec<String>,
}

/// One clause of a rule on the way to a finding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// The clause as written, e.g. `when m == "auto"`.
    pub clause: String,
    /// What it gave: the values bound, or the truth of a guard or requirement.
    pub result: String,
    /// The values it read from documents and the policy.
    pub reads: Vec<Read>,
}

/// A value a clause read, and where it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Read {
    pub expr: String,
    pub value: String,
    pub from: Provenance,
}

/// Where a value came from, for explanations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Provenance {
    /// A document of the deployment, at a span.
    Document(u32, Span),
    /// The policy: a matrix cell or a declared default.
    Policy(Loc),
    /// Computed by the rule.
    Computed,
    /// Not there; says what is missing.
    Missing(String),
}

/// Counts per outcome.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    pub pass: usize,
    pub fail: usize,
    pub unknown: usize,
    pub not_applicable: usize,
}

impl Summary {
    pub fn of(findings: &[Finding]) -> Summary {
        let mut s = Summary::default();
        for f in findings {
            match f.outcome {
                Outcome::Pass => s.pass += 1,
                Outcome::Fail => s.fail += 1,
                Outcome::Unknown => s.unknown += 1,
                Outcome::NotApplicable => s.not_applicable += 1,
            }
        }
        s
    }

    /// The worst outcome present.
    pub fn verdict(&self) -> Outcome {
        if self.fail > 0 {
            Outcome::Fail
        } else if self.unknown > 0 {
            Outcome::Unknown
        } else {
            Outcome::Pass
        }
    }
}
